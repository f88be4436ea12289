// Is a difference in test perplexity between two models larger than the noise of the test
// sample? The paired block bootstrap (Koehn 2004; Efron & Tibshirani 1993): resample the test
// split's blocks of consecutive tokens with replacement, the same blocks for both models, and
// recompute the difference. Blocks, not tokens, because neighbouring tokens are not independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tg::experiments {

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

// Differences between two models over training seeds, the noise a reviewer counts first: a
// retrained model differs from itself by more than the test sample says.

// Student's paired t-test of differences d (one per seed, both models trained with that
// seed): t = mean / (sd / sqrt(n)), n - 1 degrees of freedom, two-sided p. Fewer than two
// values, or no spread, give p = 1 (and 0 when every difference is the same non-zero value).
struct TTest {
  double t = 0, p = 1;
  double df = 0;  // degrees of freedom (fractional for Welch's test)
};
TTest paired_t_test(std::span<const double> differences);
// Welch's two-sample t-test of mean(a) - mean(b), variances not assumed equal (for samples that
// are not paired: the per-seed effects of two model sizes): t = (mean a - mean b) /
// sqrt(var a / n_a + var b / n_b), Welch-Satterthwaite degrees of freedom, two-sided p.
// Either sample with fewer than two values gives p = 1; no spread in either, p = 0 when the
// means differ and 1 when they do not.
TTest welch_t_test(std::span<const double> a, std::span<const double> b);
// P(|T| >= |t|) for Student's t with df degrees of freedom.
double student_t_two_sided_p(double t, double df);

// The two-sided (1 - alpha) Student t interval of the mean of `values` (n - 1 degrees of
// freedom); fewer than two values give the mean alone (low == high == mean, n as given).
struct TInterval {
  size_t n = 0;
  double mean = 0, low = 0, high = 0;
};
TInterval t_interval(std::span<const double> values, double alpha = 0.05);
// The two-sided (1 - alpha) Welch interval of mean(a) - mean(b), at welch_t_test's degrees of
// freedom (n is the smaller sample's size); either sample with fewer than two values gives the
// difference alone (low == high == mean).
TInterval welch_interval(std::span<const double> a, std::span<const double> b, double alpha = 0.05);
// Student's t quantile: the t with P(|T| >= t) = p for df degrees of freedom (0 < p < 1).
double student_t_critical(double p, double df);

// Equivalence within a margin (two one-sided tests, TOST): the (1 - 2 alpha) t interval of the
// per-seed differences wholly inside [-margin, margin] is "within", wholly outside it
// "outside", and anything else "not decided"; one seed decides nothing.
enum class Equivalence { within, outside, not_decided };
Equivalence equivalence(const TInterval& interval, double margin);

// Holm's step-down correction of m p-values for the family-wise error rate: adjusted p of the
// k-th smallest is max over j <= k of min(1, (m - j + 1) p_(j)), in the input order.
std::vector<double> holm_adjust(std::span<const double> p_values);

// The two sources of noise at once: resample seeds with replacement, then for each seed drawn
// its test blocks as a moving-block bootstrap (runs of `run_length` adjacent blocks, since
// neighbouring blocks are correlated; 0: the cube root of the block count), the same blocks for
// both models; the statistic is the mean over the drawn seeds of ppl(a) - ppl(b). a[s] and b[s]
// are one seed's two runs.
struct SeedBlockInterval {
  double mean = 0;           // the mean per-seed difference on the whole test split
  double low = 0, high = 0;  // central 95% of the resampled statistics
  size_t run_length = 0;
};
SeedBlockInterval hierarchical_bootstrap(const std::vector<BlockLosses>& a,
                                         const std::vector<BlockLosses>& b, size_t resamples = 4000,
                                         size_t run_length = 0, uint64_t seed = 1);

// A metric over seeds: its mean and sample standard deviation (n - 1; 0 for one value), and
// its range. All zero for no values.
struct Spread {
  size_t n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
};
Spread spread_of(std::span<const double> values);

}  // namespace tg::experiments
