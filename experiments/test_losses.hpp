// What the study keeps of a run's per-token test losses (train::TrainHooks::after_test): the
// loss in blocks of consecutive tokens, for the paired block bootstrap (significance.hpp), and
// by the target's frequency band, for where a table gains or loses (the report's band tables).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/lm_data.hpp"
#include "train/trainer.hpp"

namespace tg::experiments {

// The tokens of one bootstrap block of the test split.
inline constexpr size_t kTestBlockTokens = 1000;

// A token's frequency band by its training-split count: "<unk>" (id `unk`, the vocabulary's
// Vocabulary::unk(); -1 for a BPE, which has none), "unseen", "rare (1-9)", "middle (10-99)",
// "frequent (100+)". What the life cycle's drift and the test loss by band group rows by.
const char* frequency_band(int32_t id, size_t train_count, int32_t unk);

// The test split's loss in blocks of kTestBlockTokens consecutive tokens (the paired block
// bootstrap's unit, significance.hpp) and by the target's frequency band, as a study's run file
// holds them ("test_blocks", "test_bands"; train::RunRecord keeps them among its extra fields).
struct TestBlocks {
  size_t tokens = 0, count = 0;  // tokens per block; tokens in the split
  std::vector<double> nll_sums;
};
struct BandLoss {
  size_t tokens = 0;
  double nll_sum = 0;
};
struct TestLosses {
  std::optional<TestBlocks> blocks;
  std::map<std::string, BandLoss> bands;  // empty for a run that recorded none

  // A run's, read back: throws std::invalid_argument naming `where` (its file) and the field
  // for a value of the wrong kind.
  static TestLosses of_run(const nlohmann::json& run, const std::string& where);
};

// Adds "test_blocks" ({tokens, count, nll_sums}) and "test_bands" ({band: {tokens, nll_sum}})
// to a run's results from its test split's per-token losses (nats, in the split's order).
void add_test_losses(const text::LMData& data, std::span<const double> test_nll,
                     nlohmann::json& results);

// `hooks` with add_test_losses after whatever after_test they had: every study run's hooks.
train::TrainHooks with_test_losses(train::TrainHooks hooks, const text::LMData& data);

}  // namespace tg::experiments
