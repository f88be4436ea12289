// What an ngram results file says of the model it counted (its "config" beside the data's
// keys): written by the ngram program and read by the report through this struct only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "text/ngram.hpp"

namespace tg::apps {

struct NgramConfig {
  text::NgramSmoothing smoothing = text::NgramSmoothing::kneser_ney;
  size_t order = 5;

  nlohmann::json to_json() const;  // {"smoothing": "kneser-ney", "order": 5}
  // From a results file's "config" (its other keys are the data's); throws naming a missing or
  // unknown value.
  static NgramConfig from_json(const nlohmann::json& config);
  std::string name() const;  // "kneser-ney 5-gram"
  // The results file's name in a folder of baselines: "kneser-ney_5.json".
  std::string file_name() const;
};

}  // namespace tg::apps
