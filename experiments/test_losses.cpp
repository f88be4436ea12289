#include "experiments/test_losses.hpp"

#include <map>
#include <vector>

namespace tg::experiments {

using nlohmann::json;

const char* frequency_band(int32_t id, size_t train_count, int32_t unk) {
  if (id == unk) return "<unk>";
  if (train_count == 0) return "unseen";
  if (train_count < 10) return "rare (1-9)";
  if (train_count < 100) return "middle (10-99)";
  return "frequent (100+)";
}

void add_test_losses(const text::LMData& data, std::span<const double> test_nll, json& results) {
  std::vector<double> blocks((test_nll.size() + kTestBlockTokens - 1) / kTestBlockTokens, 0.0);
  for (size_t i = 0; i < test_nll.size(); ++i) blocks[i / kTestBlockTokens] += test_nll[i];
  results["test_blocks"] = {
      {"tokens", kTestBlockTokens}, {"count", test_nll.size()}, {"nll_sums", blocks}};
  // The test loss by how often each target occurs in the training split: where a table's rows
  // were trained often, rarely or never.
  const std::vector<size_t> count = text::train_counts(data);
  std::map<std::string, std::pair<size_t, double>> bands;
  for (size_t i = 0; i < test_nll.size(); ++i) {
    const int32_t id = data.stream[data.test.begin + i];
    auto& [tokens, nll_sum] =
        bands[frequency_band(id, count[static_cast<size_t>(id)], data.vocab.unk())];
    ++tokens;
    nll_sum += test_nll[i];
  }
  json& out = results["test_bands"] = json::object();
  for (const auto& [band, loss] : bands)
    out[band] = {{"tokens", loss.first}, {"nll_sum", loss.second}};
}

train::TrainHooks with_test_losses(train::TrainHooks hooks, const text::LMData& data) {
  hooks.after_test = [&data, theirs = std::move(hooks.after_test)](std::span<const double> test_nll,
                                                                   json& results) {
    if (theirs) theirs(test_nll, results);
    add_test_losses(data, test_nll, results);
  };
  return hooks;
}

}  // namespace tg::experiments
