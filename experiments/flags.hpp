// Flags every experiment binary adds on top of the training flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "apps/flags.hpp"
#include "apps/validators.hpp"
#include "text/word2vec.hpp"

namespace tg::experiments {

// Which word2vec vectors the pretrained modes of each seed start from.
enum class VectorSeeds {
  per_run,  // vectors trained with the run's own seed: pretraining noise is in the spread
  shared,   // one file for every seed, trained with the first
};
inline constexpr base::NameTable<VectorSeeds, 2> kVectorSeedsNames{
    {{VectorSeeds::per_run, "per-run"}, {VectorSeeds::shared, "shared"}}};

struct CommonFlags {
  std::string models = "gpt";
  size_t seeds = 1;
  std::string out;
  text::Word2VecOptions w2v;  // size follows --d-model
  int w2v_cbow = 0;
  VectorSeeds w2v_seeds = VectorSeeds::per_run;
};

inline void add_common_flags(CLI::App& app, CommonFlags& f, const std::string& default_out) {
  f.out = default_out;
  f.w2v.cbow = false;
  f.w2v.min_count = 1;  // every word the LM keeps gets a vector if it occurs in the subset
  app.add_option("--models", f.models, "comma-separated: gpt, nplm")->capture_default_str();
  app.add_option("--seeds", f.seeds, "runs per row, seeds 1..N, trained seed by seed")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--out", f.out, "folder for the JSON results")->capture_default_str();
  app.add_option("--w2v-window", f.w2v.window, "word2vec window")->capture_default_str();
  app.add_option("--w2v-negative", f.w2v.negative, "word2vec negatives")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--w2v-iter", f.w2v.iter, "word2vec epochs")->capture_default_str();
  app.add_option("--w2v-sample", f.w2v.sample, "word2vec sub-sampling")->capture_default_str();
  app.add_option("--w2v-cbow", f.w2v_cbow, "word2vec: 1 = CBOW, 0 = skip-gram")
      ->capture_default_str()
      ->check(apps::number_in(0, 1, false, true));
  apps::add_enum_option(app, "--w2v-seeds", f.w2v_seeds, kVectorSeedsNames,
                        "per-run: each seed's pretrained runs start from word2vec trained with "
                        "that seed; shared: one file, trained with the first seed");
}

}  // namespace tg::experiments
