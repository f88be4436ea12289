#include "experiments/test_losses.hpp"

#include <stdexcept>

#include "train/fields.hpp"

namespace tg::experiments {

using nlohmann::json;
namespace fields = train::fields;

namespace {

// One field table each: add_test_losses writes through them, TestLosses::of_run reads.
const std::vector<fields::Field<TestBlocks>>& block_fields() {
  static const std::vector<fields::Field<TestBlocks>> table = {
      fields::plain<TestBlocks>(
          "tokens", [](auto& b) -> auto& { return b.tokens; }),
      fields::plain<TestBlocks>(
          "count", [](auto& b) -> auto& { return b.count; }),
      {"nll_sums", [](const TestBlocks& b) { return json(b.nll_sums); },
       [](TestBlocks& b, const json& v) {
         if (!v.is_array()) throw fields::NotA("a list of numbers");
         b.nll_sums.clear();
         for (const json& x : v) b.nll_sums.push_back(fields::value_as<double>(x));
       }},
  };
  return table;
}

const std::vector<fields::Field<BandLoss>>& band_fields() {
  static const std::vector<fields::Field<BandLoss>> table = {
      fields::plain<BandLoss>(
          "tokens", [](auto& b) -> auto& { return b.tokens; }),
      fields::plain<BandLoss>(
          "nll_sum", [](auto& b) -> auto& { return b.nll_sum; }),
  };
  return table;
}

}  // namespace

TestLosses TestLosses::of_run(const json& run, const std::string& where) {
  TestLosses out;
  const std::string field = where + ": field ";
  if (const auto blocks = run.find("test_blocks"); blocks != run.end())
    fields::read<TestBlocks>(block_fields(), out.blocks.emplace(), *blocks,
                             field + "'test_blocks': ");
  if (const auto bands = run.find("test_bands"); bands != run.end()) {
    if (!bands->is_object()) throw std::invalid_argument(field + "'test_bands' is not an object");
    for (const auto& [band, loss] : bands->items())
      fields::read<BandLoss>(band_fields(), out.bands[band], loss,
                             field + "'test_bands': " + band + ": ");
  }
  return out;
}

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
  results["test_blocks"] = fields::write<TestBlocks>(
      block_fields(), {kTestBlockTokens, test_nll.size(), std::move(blocks)});
  // The test loss by how often each target occurs in the training split: where a table's rows
  // were trained often, rarely or never.
  const std::vector<size_t> count = text::train_counts(data);
  std::map<std::string, BandLoss> bands;
  for (size_t i = 0; i < test_nll.size(); ++i) {
    const int32_t id = data.stream[data.test.begin + i];
    BandLoss& band = bands[frequency_band(id, count[static_cast<size_t>(id)], data.vocab.unk())];
    ++band.tokens;
    band.nll_sum += test_nll[i];
  }
  json& out = results["test_bands"] = json::object();
  for (const auto& [band, loss] : bands) out[band] = fields::write<BandLoss>(band_fields(), loss);
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
