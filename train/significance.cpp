#include "train/significance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/random.hpp"

namespace tg::train {

namespace {

double perplexity(const std::vector<double>& nll, const std::vector<double>& tokens,
                  const std::vector<size_t>& pick) {
  double loss = 0, count = 0;
  for (size_t k : pick) loss += nll[k], count += tokens[k];
  return std::exp(loss / count);
}

}  // namespace

PerplexityDifference paired_block_bootstrap(const BlockLosses& a, const BlockLosses& b,
                                            size_t resamples, uint64_t seed) {
  const size_t blocks = a.nll_sums.size();
  if (blocks == 0 || b.nll_sums.size() != blocks || a.tokens.size() != blocks ||
      b.tokens != a.tokens)
    throw std::invalid_argument("paired bootstrap: the two models' test blocks differ (" +
                                std::to_string(blocks) + " vs " +
                                std::to_string(b.nll_sums.size()) + ")");
  if (resamples < 100) throw std::invalid_argument("paired bootstrap: too few resamples");
  std::vector<size_t> pick(blocks);
  for (size_t k = 0; k < blocks; ++k) pick[k] = k;
  PerplexityDifference out;
  out.difference = perplexity(a.nll_sums, a.tokens, pick) - perplexity(b.nll_sums, b.tokens, pick);
  Generator gen(seed);
  std::vector<double> differences(resamples);
  size_t below = 0;
  for (double& d : differences) {
    for (size_t& k : pick)
      k = static_cast<size_t>(gen.uniform_double() * static_cast<double>(blocks));
    d = perplexity(a.nll_sums, a.tokens, pick) - perplexity(b.nll_sums, b.tokens, pick);
    below += d < 0;
  }
  std::sort(differences.begin(), differences.end());
  const auto quantile = [&](double q) {
    return differences[static_cast<size_t>(q * static_cast<double>(resamples - 1) + 0.5)];
  };
  out.low = quantile(0.025), out.high = quantile(0.975);
  out.share_below_zero = static_cast<double>(below) / static_cast<double>(resamples);
  return out;
}

BlockLosses average_blocks(const std::vector<std::vector<double>>& nll_sums_per_run, size_t block,
                           size_t count) {
  if (nll_sums_per_run.empty() || block == 0)
    throw std::invalid_argument("average_blocks: no runs");
  const size_t blocks = (count + block - 1) / block;
  BlockLosses out;
  out.nll_sums.assign(blocks, 0.0);
  for (const auto& run : nll_sums_per_run) {
    if (run.size() != blocks)
      throw std::invalid_argument("average_blocks: a run has " + std::to_string(run.size()) +
                                  " test blocks, not " + std::to_string(blocks));
    for (size_t k = 0; k < blocks; ++k) out.nll_sums[k] += run[k];
  }
  for (double& s : out.nll_sums) s /= static_cast<double>(nll_sums_per_run.size());
  for (size_t k = 0; k < blocks; ++k)
    out.tokens.push_back(static_cast<double>(std::min(block, count - k * block)));
  return out;
}

Spread spread_of(std::span<const double> values) {
  Spread out;
  out.n = values.size();
  if (values.empty()) return out;
  const double n = static_cast<double>(values.size());
  for (double v : values) out.mean += v;
  out.mean /= n;
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  out.sd = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  out.min = *low, out.max = *high;
  return out;
}

}  // namespace tg::train
