#include "experiments/significance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/random.hpp"

namespace tg::experiments {

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
  out.low = quantile(0.025);
  out.high = quantile(0.975);
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

namespace {

// The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
// Lentz), on the side where it converges fast.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(1 - x, b, a);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x)) /
                       a;
  constexpr double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator = 1;
    if (i > 0)
      numerator = i % 2 == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                             : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + numerator * d;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = 1 + numerator / c;
    if (std::fabs(c) < tiny) c = tiny;
    const double step = c * d;
    f *= step;
    if (std::fabs(1 - step) < 1e-14) break;
  }
  return front * (f - 1);
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  if (!(df > 0)) return 1;
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

double student_t_critical(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0))
    throw std::invalid_argument("student_t_critical: p must be in (0, 1) and df positive");
  // P(|T| >= t) falls from 1 at t = 0 to 0: bisect on it.
  double low = 0, high = 1;
  while (student_t_two_sided_p(high, df) > p) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = (low + high) / 2;
    (student_t_two_sided_p(mid, df) > p ? low : high) = mid;
  }
  return (low + high) / 2;
}

TInterval t_interval(std::span<const double> values, double alpha) {
  const Spread s = spread_of(values);
  TInterval out{s.n, s.mean, s.mean, s.mean};
  if (s.n < 2) return out;
  const double half = student_t_critical(alpha, static_cast<double>(s.n - 1)) * s.sd /
                      std::sqrt(static_cast<double>(s.n));
  out.low = s.mean - half;
  out.high = s.mean + half;
  return out;
}

Equivalence equivalence(const TInterval& interval, double margin) {
  if (interval.n < 2) return Equivalence::not_decided;
  if (interval.low >= -margin && interval.high <= margin) return Equivalence::within;
  if (interval.low > margin || interval.high < -margin) return Equivalence::outside;
  return Equivalence::not_decided;
}

TTest paired_t_test(std::span<const double> differences) {
  TTest out;
  const Spread s = spread_of(differences);
  if (s.n < 2) return out;
  out.df = static_cast<double>(s.n - 1);
  if (s.sd == 0) {
    out.t = s.mean == 0 ? 0 : std::copysign(INFINITY, s.mean);
    out.p = s.mean == 0 ? 1 : 0;
    return out;
  }
  out.t = s.mean / (s.sd / std::sqrt(static_cast<double>(s.n)));
  out.p = student_t_two_sided_p(out.t, out.df);
  return out;
}

TTest welch_t_test(std::span<const double> a, std::span<const double> b) {
  TTest out;
  const Spread x = spread_of(a), y = spread_of(b);
  if (x.n < 2 || y.n < 2) return out;
  // Each mean's squared standard error.
  const double ex = x.sd * x.sd / static_cast<double>(x.n),
               ey = y.sd * y.sd / static_cast<double>(y.n);
  const double difference = x.mean - y.mean;
  if (ex + ey == 0) {
    out.t = difference == 0 ? 0 : std::copysign(INFINITY, difference);
    out.p = difference == 0 ? 1 : 0;
    out.df = static_cast<double>(x.n + y.n - 2);
    return out;
  }
  out.t = difference / std::sqrt(ex + ey);
  out.df = (ex + ey) * (ex + ey) /
           (ex * ex / static_cast<double>(x.n - 1) + ey * ey / static_cast<double>(y.n - 1));
  out.p = student_t_two_sided_p(out.t, out.df);
  return out;
}

TInterval welch_interval(std::span<const double> a, std::span<const double> b, double alpha) {
  const Spread x = spread_of(a), y = spread_of(b);
  const double difference = x.mean - y.mean;
  TInterval out{std::min(x.n, y.n), difference, difference, difference};
  const TTest test = welch_t_test(a, b);
  if (test.df <= 0 || !std::isfinite(test.t) || test.t == 0) return out;
  // The standard error the test divided by, at its Welch-Satterthwaite degrees of freedom.
  const double half = std::abs(difference / test.t) * student_t_critical(alpha, test.df);
  out.low = difference - half;
  out.high = difference + half;
  return out;
}

std::vector<double> holm_adjust(std::span<const double> p_values) {
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t i, size_t j) { return p_values[i] < p_values[j]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p_values[order[k]]));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

SeedBlockInterval hierarchical_bootstrap(const std::vector<BlockLosses>& a,
                                         const std::vector<BlockLosses>& b, size_t resamples,
                                         size_t run_length, uint64_t seed) {
  const size_t seeds = a.size();
  if (seeds == 0 || b.size() != seeds)
    throw std::invalid_argument("hierarchical bootstrap: " + std::to_string(seeds) + " and " +
                                std::to_string(b.size()) + " runs; pair them by seed");
  const size_t blocks = a[0].nll_sums.size();
  for (size_t s = 0; s < seeds; ++s)
    if (blocks == 0 || a[s].nll_sums.size() != blocks || b[s].nll_sums.size() != blocks ||
        a[s].tokens != a[0].tokens || b[s].tokens != a[0].tokens)
      throw std::invalid_argument("hierarchical bootstrap: the runs' test blocks differ");
  if (resamples < 100) throw std::invalid_argument("hierarchical bootstrap: too few resamples");
  SeedBlockInterval out;
  out.run_length = run_length > 0
                       ? std::min(run_length, blocks)
                       : std::max<size_t>(1, static_cast<size_t>(std::lround(std::cbrt(blocks))));
  std::vector<size_t> pick(blocks);
  for (size_t k = 0; k < blocks; ++k) pick[k] = k;
  const auto difference = [&](size_t s) {
    return perplexity(a[s].nll_sums, a[s].tokens, pick) -
           perplexity(b[s].nll_sums, b[s].tokens, pick);
  };
  for (size_t s = 0; s < seeds; ++s) out.mean += difference(s) / static_cast<double>(seeds);
  Generator gen(seed);
  const auto draw = [&gen](size_t n) {
    return std::min(n - 1, static_cast<size_t>(gen.uniform_double() * static_cast<double>(n)));
  };
  const size_t starts = blocks - out.run_length + 1;
  std::vector<double> statistics(resamples);
  for (double& statistic : statistics) {
    statistic = 0;
    for (size_t i = 0; i < seeds; ++i) {
      const size_t s = draw(seeds);
      for (size_t k = 0; k < blocks; k += out.run_length) {
        const size_t start = draw(starts);
        for (size_t j = 0; j < out.run_length && k + j < blocks; ++j) pick[k + j] = start + j;
      }
      statistic += difference(s) / static_cast<double>(seeds);
    }
  }
  std::sort(statistics.begin(), statistics.end());
  const auto quantile = [&](double q) {
    return statistics[static_cast<size_t>(q * static_cast<double>(resamples - 1) + 0.5)];
  };
  out.low = quantile(0.025);
  out.high = quantile(0.975);
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
  out.min = *low;
  out.max = *high;
  return out;
}

}  // namespace tg::experiments
