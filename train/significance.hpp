// Is a difference in test perplexity between two models larger than the noise of the test
// sample? The paired block bootstrap (Koehn 2004; Efron & Tibshirani 1993): resample the test
// split's blocks of consecutive tokens with replacement, the same blocks for both models, and
// recompute the difference. Blocks, not tokens, because neighbouring tokens are not independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tg::train {

struct BlockLosses {
  std::vector<double> nll_sums;  // per block: the summed negative log-likelihood (nats)
  std::vector<double> tokens;    // per block: how many tokens it holds
};

struct PerplexityDifference {
  double difference = 0;        // ppl(a) - ppl(b) on the whole test split
  double low = 0, high = 0;     // the central 95% of the bootstrap differences
  double share_below_zero = 0;  // fraction of resamples where a is better (ppl(a) < ppl(b))
};

// a and b must have the same blocks. Deterministic for a given seed.
PerplexityDifference paired_block_bootstrap(const BlockLosses& a, const BlockLosses& b,
                                            size_t resamples = 10000, uint64_t seed = 1);

// Blocks of `block` tokens from a run's results ("test_blocks": tokens, count, nll_sums),
// averaged over several runs (seeds) of one model: the seed-averaged model's losses.
BlockLosses average_blocks(const std::vector<std::vector<double>>& nll_sums_per_run, size_t block,
                           size_t count);

// A metric over seeds: its mean and sample standard deviation (n - 1; 0 for one value), and
// its range. All zero for no values.
struct Spread {
  size_t n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
};
Spread spread_of(std::span<const double> values);

}  // namespace tg::train
