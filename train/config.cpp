#include "train/config.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "train/models.hpp"

namespace tg::train {

using nlohmann::json;

json TrainConfig::to_json() const {
  const ModelConfig& m = model;
  json j = {{"model", m.name},
            {"d_model", m.d_model},
            {"layers", m.layers},
            {"heads", m.heads},
            {"context", m.context},
            {"ngram", m.ngram},
            {"hidden", m.hidden},
            {"direct", m.direct},
            {"embedding", to_string(m.embedding)},
            {"vectors", m.vectors},
            {"tied", m.tied},
            {"dropout", m.dropout},
            {"optimizer", base::name_of(kOptimizerNames, optimizer)},
            {"lr", lr},
            {"weight_decay", weight_decay},
            {"table_decay", base::name_of(optim::kTableDecayNames, table_decay)},
            {"momentum", momentum},
            {"clip", clip},
            {"schedule", base::name_of(optim::kScheduleNames, schedule)},
            {"warmup", warmup},
            {"min_lr_ratio", min_lr_ratio},
            {"lr_decay", lr_decay},
            {"epochs", epochs},
            {"steps", steps},
            {"batch", batch},
            {"patience", patience},
            {"eval_every", eval_every},
            {"valid_limit", valid_limit},
            {"seed", seed},
            {"threads", threads},
            {"comm_overlap", comm_overlap},
            {"bucket_mb", bucket_mb},
            {"corpus", data.corpus_file.empty() ? data.corpus : data.corpus_file},
            {"split", data.split},
            {"min_count", data.min_count},
            {"vocab_counts", base::name_of(text::kVocabCountsNames, data.vocab_counts)},
            {"train_fraction", data.train_fraction}};
  if (!m.options.empty()) j["model_options"] = m.options;
  return j;
}

void TrainConfig::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!has_model(model.name)) bad("--model: " + unknown_model_message(model.name));
  if (nn::is_pretrained(model.embedding) && model.vectors.empty())
    bad("--embedding " + to_string(model.embedding) + " needs --vectors FILE");
  if (!nn::is_pretrained(model.embedding) && !model.vectors.empty())
    bad("--vectors is only used with the pretrained embedding modes");
  if (batch == 0 || model.context == 0) bad("--batch and --context must be positive");
  if (epochs == 0 && steps <= 0) bad("give --epochs or --steps");
  if (!(model.dropout >= 0.0f && model.dropout < 1.0f)) bad("--dropout must be in [0, 1)");
  if (!(lr > 0.0f)) bad("--lr must be positive");
  if (threads == 0) bad("--threads must be positive");
  if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0 && threads > cores)
    bad("--threads " + std::to_string(threads) + " is more than the " + std::to_string(cores) +
        " cores of this machine: the threads would wait on each other and training would crawl");
  if (!(bucket_mb > 0.0f)) bad("--bucket-mb must be positive");
  if (batch < static_cast<size_t>(distributed::size()))
    bad("--batch " + std::to_string(batch) + " is smaller than the number of MPI ranks (" +
        std::to_string(distributed::size()) + "): every rank needs at least one row of each batch");
}

void TrainConfig::check_files() const {
  const base::FileFlag outputs[] = {
      {"--results", results}, {"--checkpoint", checkpoint}, {"--token-nll", token_nll}};
  const base::FileFlag inputs[] = {
      {"--corpus-file", data.corpus_file}, {"--vectors", model.vectors}, {"--resume", resume}};
  const std::pair<std::string, std::string> resumed_in_place[] = {{"--checkpoint", "--resume"}};
  base::check_outputs(outputs, inputs, resumed_in_place);
}

std::string config_differences(const json& a, const json& b, std::string_view a_name,
                               std::string_view b_name, std::span<const char* const> keys) {
  // Keys added after runs were recorded, with the setting those runs had: a file without the
  // key was trained with it.
  static const std::pair<const char*, json> kAddedLater[] = {{"table_decay", "output"}};
  const auto side = [](const json& config, const std::string& key) {
    if (config.is_object() && config.contains(key))
      // Replacing invalid UTF-8 (a path's bytes, say): a message must not throw.
      return config.at(key).dump(-1, ' ', false, json::error_handler_t::replace);
    for (const auto& [added, value] : kAddedLater)
      if (key == added && config.is_object()) return value.dump();
    return std::string("none");
  };
  std::vector<std::string> compared(keys.begin(), keys.end());
  if (keys.empty())
    for (const json* config : {&a, &b})
      if (config->is_object())
        for (const auto& [key, value] : config->items())
          if (std::find(compared.begin(), compared.end(), key) == compared.end())
            compared.push_back(key);
  std::string out;
  for (const std::string& key : compared)
    if (const std::string there = side(a, key), here = side(b, key); there != here)
      out += "\n  " + key + ": " + there + " " + std::string(a_name) + ", " + here + " " +
             std::string(b_name);
  return out;
}

std::string data_difference(std::string_view a, std::string_view b, std::string_view a_name,
                            std::string_view b_name) {
  if (a.empty() || a == b) return "";
  return "\n  the data (corpus, split and vocabulary): fingerprint " + std::string(a) + " " +
         std::string(a_name) + ", " + std::string(b) + " " + std::string(b_name);
}

}  // namespace tg::train
