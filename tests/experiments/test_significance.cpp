// The paired block bootstrap: exact differences, intervals that shrink with a consistent
// advantage and cover zero for two models that differ only by noise.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "autograd/random.hpp"
#include "experiments/significance.hpp"

using namespace tg;
using namespace tg::experiments;

namespace {
// A model's test blocks: `blocks` blocks of 1,000 tokens with mean loss `loss` per token plus
// per-block noise of standard deviation `noise` (per token).
BlockLosses model(size_t blocks, double loss, double noise, Generator& gen) {
  BlockLosses m;
  for (size_t k = 0; k < blocks; ++k) {
    m.nll_sums.push_back(1000.0 * (loss + noise * gen.normal()));
    m.tokens.push_back(1000.0);
  }
  return m;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(experiments_significance)

BOOST_AUTO_TEST_CASE(a_constant_shift_is_exact_and_certain) {
  Generator gen(3);
  const BlockLosses b = model(160, 5.6, 0.2, gen);
  BlockLosses a = b;
  for (double& s : a.nll_sums) s -= 1000.0 * 0.01;  // 0.01 nats better on every token
  const PerplexityDifference d = paired_block_bootstrap(a, b, 2000, 7);
  double loss = 0;
  for (double s : b.nll_sums) loss += s;
  const double ppl_b = std::exp(loss / 160000.0);
  BOOST_TEST(d.difference == ppl_b * (std::exp(-0.01) - 1.0), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(d.low <= d.difference);
  BOOST_TEST(d.high >= d.difference);
  BOOST_TEST(d.high < 0.0);  // a is better in every resample
  BOOST_TEST(d.share_below_zero == 1.0);
}

BOOST_AUTO_TEST_CASE(models_that_differ_by_noise_have_intervals_around_zero) {
  Generator gen(5);
  size_t covered = 0;
  const size_t trials = 40;
  for (size_t t = 0; t < trials; ++t) {
    const BlockLosses a = model(160, 5.6, 0.2, gen), b = model(160, 5.6, 0.2, gen);
    const PerplexityDifference d = paired_block_bootstrap(a, b, 1000, t + 1);
    BOOST_TEST(d.low < d.high);
    covered += d.low <= 0.0 && 0.0 <= d.high;
  }
  // A 95% interval: about 38 of 40; fewer than 34 would mean the intervals are too narrow.
  BOOST_TEST(covered >= 34u, covered << " of " << trials << " intervals cover zero");
}

BOOST_AUTO_TEST_CASE(same_seed_same_interval_and_bad_inputs) {
  Generator gen(9);
  const BlockLosses a = model(50, 5.0, 0.3, gen), b = model(50, 5.1, 0.3, gen);
  const PerplexityDifference x = paired_block_bootstrap(a, b, 500, 4),
                             y = paired_block_bootstrap(a, b, 500, 4);
  BOOST_TEST(x.low == y.low);
  BOOST_TEST(x.high == y.high);
  BlockLosses shorter = b;
  shorter.nll_sums.pop_back();
  shorter.tokens.pop_back();
  BOOST_CHECK_THROW(paired_block_bootstrap(a, shorter), std::invalid_argument);
  BOOST_CHECK_THROW(paired_block_bootstrap(a, b, 10), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(averaging_runs_block_by_block) {
  const BlockLosses m =
      average_blocks({{1000.0, 2000.0, 300.0}, {3000.0, 4000.0, 500.0}}, 1000, 2500);
  BOOST_TEST(m.nll_sums == std::vector<double>({2000.0, 3000.0, 400.0}),
             boost::test_tools::per_element());
  BOOST_TEST(m.tokens == std::vector<double>({1000.0, 1000.0, 500.0}),
             boost::test_tools::per_element());
  BOOST_CHECK_THROW(average_blocks({{1.0, 2.0}}, 1000, 2500), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(spread_over_seeds_is_the_sample_standard_deviation) {
  const std::vector<double> three{250.0, 254.0, 258.0};
  const Spread s = spread_of(three);
  BOOST_TEST(s.n == 3u);
  BOOST_TEST(s.mean == 254.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.sd == 4.0, boost::test_tools::tolerance(1e-12));  // sqrt((16 + 0 + 16) / 2)
  BOOST_TEST(s.min == 250.0);
  BOOST_TEST(s.max == 258.0);
  const std::vector<double> one{271.7};
  const Spread single = spread_of(one);
  BOOST_TEST(single.mean == 271.7);
  BOOST_TEST(single.sd == 0.0);  // one seed: no spread, not a division by zero
  BOOST_TEST(spread_of({}).n == 0u);
}

// Student's t against reference values (scipy.stats.t.sf(t, df) * 2).
BOOST_AUTO_TEST_CASE(student_t_p_values_match_the_tables) {
  const auto close = boost::test_tools::tolerance(1e-6);
  BOOST_TEST(student_t_two_sided_p(4.302652729749464, 2) == 0.05, close);
  BOOST_TEST(student_t_two_sided_p(2.0, 10) == 0.07338803477074075, close);
  BOOST_TEST(student_t_two_sided_p(1.0, 1) == 0.5, close);
  BOOST_TEST(student_t_two_sided_p(-12.706204736174707, 1) == 0.05, close);
  BOOST_TEST(student_t_two_sided_p(0.0, 4) == 1.0, close);
  // Closed forms: df 1, 1 - 2 atan(t) / pi; df 2, 1 - t / sqrt(t^2 + 2).
  BOOST_TEST(student_t_two_sided_p(100.0, 1) == 1 - 2 * std::atan(100.0) / M_PI, close);
  BOOST_TEST(student_t_two_sided_p(30.0, 2) == 1 - 30 / std::sqrt(902.0), close);
}

// Three seeds that agree in sign but not in size are not a decision at 5% (the report's GPT
// fine-tuned row: -7.0, -3.6, -1.8, p 0.11); consistent ones are.
// Welch's test against scipy.stats.ttest_ind(a, b, equal_var=False).
BOOST_AUTO_TEST_CASE(welch_t_test_of_two_unpaired_samples) {
  const std::vector<double> d256 = {-0.012, -0.020, -0.009},
                            d128 = {-0.031, -0.027, -0.035, -0.029, -0.033};
  const TTest shrinks = welch_t_test(d256, d128);
  BOOST_TEST(shrinks.t == 4.849025002849631, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(shrinks.p == 0.02018239762447441, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(shrinks.df == 2.763556577160172, boost::test_tools::tolerance(1e-9));
  const TTest overlap = welch_t_test(std::vector<double>{1, 2, 3, 4},
                                     std::vector<double>{1.5, 2.5, 3.5, 4.5, 5.5, 10});
  BOOST_TEST(overlap.t == -1.502104420315274, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(overlap.p == 0.1754444735721775, boost::test_tools::tolerance(1e-6));
  // Nothing to test with one value; no spread at all decides by the means alone.
  BOOST_TEST(welch_t_test(std::vector<double>{1}, d128).p == 1.0);
  BOOST_TEST(welch_t_test(std::vector<double>{1, 1}, std::vector<double>{2, 2}).p == 0.0);
  BOOST_TEST(welch_t_test(std::vector<double>{1, 1}, std::vector<double>{1, 1}).p == 1.0);
}

// The interval beside it, against scipy: mean difference -+ t.ppf(0.975, df) * standard error.
BOOST_AUTO_TEST_CASE(welch_interval_of_two_unpaired_samples) {
  const std::vector<double> d256 = {-0.012, -0.020, -0.009},
                            d128 = {-0.031, -0.027, -0.035, -0.029, -0.033};
  const TInterval interval = welch_interval(d256, d128);
  BOOST_TEST(interval.n == 3u);
  BOOST_TEST(interval.mean == 0.017333333333333333, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(interval.low == 0.005386416032123281, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(interval.high == 0.029280250634543384, boost::test_tools::tolerance(1e-6));
  // One value a side: the difference alone.
  const TInterval one = welch_interval(std::vector<double>{2}, d128);
  BOOST_TEST(one.low == one.high);
  BOOST_TEST(one.mean == 2 - spread_of(d128).mean, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(paired_t_test_over_seeds) {
  const std::vector<double> noisy{-7.0, -3.6, -1.8};
  const TTest t = paired_t_test(noisy);
  BOOST_TEST(t.df == 2.0);
  BOOST_TEST(t.t == -2.71107, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(t.p == 1 - std::fabs(t.t) / std::sqrt(t.t * t.t + 2),
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(t.p == 0.1134, boost::test_tools::tolerance(1e-3));
  const std::vector<double> steady{-15.1, -14.6, -15.0};
  BOOST_TEST(paired_t_test(steady).p < 0.001);
  BOOST_TEST(paired_t_test(std::vector<double>{-5.0}).p == 1.0);  // one seed: nothing to test
  BOOST_TEST(paired_t_test(std::vector<double>{2.0, 2.0}).p == 0.0);
}

BOOST_AUTO_TEST_CASE(t_intervals_and_equivalence) {
  // Tables: t(0.975, 2) = 4.303, t(0.975, 4) = 2.776, t(0.95, 2) = 2.920.
  BOOST_TEST(experiments::student_t_critical(0.05, 2) == 4.3027,
             boost::test_tools::tolerance(1e-4));
  BOOST_TEST(experiments::student_t_critical(0.05, 4) == 2.7764,
             boost::test_tools::tolerance(1e-4));
  BOOST_TEST(experiments::student_t_critical(0.10, 2) == 2.9200,
             boost::test_tools::tolerance(1e-4));
  const std::vector<double> d = {0.001, 0.003, 0.002};  // mean 0.002, sd 0.001
  const experiments::TInterval i = experiments::t_interval(d, 0.10);
  BOOST_TEST(i.mean == 0.002, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(i.high - i.mean == 2.9200 * 0.001 / std::sqrt(3.0),
             boost::test_tools::tolerance(1e-4));
  // Within 1%: the interval [0.0003, 0.0037] is inside; within 0.3% it is not decided; a
  // clear 5% shift is outside; one seed decides nothing.
  BOOST_TEST((experiments::equivalence(i, 0.01) == experiments::Equivalence::within));
  BOOST_TEST((experiments::equivalence(i, 0.003) == experiments::Equivalence::not_decided));
  const std::vector<double> far = {0.049, 0.051, 0.050};
  BOOST_TEST((experiments::equivalence(experiments::t_interval(far, 0.10), 0.01) ==
              experiments::Equivalence::outside));
  const std::vector<double> noisy = {-0.03, 0.03, 0.0};  // mean 0 but too noisy to say
  BOOST_TEST((experiments::equivalence(experiments::t_interval(noisy, 0.10), 0.01) ==
              experiments::Equivalence::not_decided));
  const std::vector<double> one = {0.0};
  BOOST_TEST((experiments::equivalence(experiments::t_interval(one), 0.01) ==
              experiments::Equivalence::not_decided));
  BOOST_CHECK_THROW(experiments::student_t_critical(0.0, 2), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(holm_steps_down_and_keeps_the_order) {
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adjusted = holm_adjust(p);
  const std::vector<double> want{0.03, 0.06, 0.06, 0.02};
  for (size_t i = 0; i < p.size(); ++i)
    BOOST_TEST(adjusted[i] == want[i], boost::test_tools::tolerance(1e-12));
  BOOST_TEST(holm_adjust(std::vector<double>{0.9, 0.8})[0] == 1.0);  // capped at 1
}

// Seeds and blocks resampled together: a constant shift is exact; a difference that one seed
// has and another reverses is not told apart from zero, though each seed's test sample alone
// would call it.
BOOST_AUTO_TEST_CASE(hierarchical_bootstrap_counts_seed_noise) {
  Generator gen(5);
  std::vector<BlockLosses> a, b;
  for (int s = 0; s < 3; ++s) {
    b.push_back(model(161, 5.6, 0.2, gen));
    a.push_back(b.back());
    for (double& x : a.back().nll_sums) x -= 1000.0 * 0.02;  // 2% lower loss per token
  }
  const SeedBlockInterval shift = hierarchical_bootstrap(a, b, 1000);
  BOOST_TEST(shift.run_length == 5u);  // the cube root of 161
  BOOST_TEST(shift.high < 0);
  BOOST_TEST(shift.low <= shift.mean);
  BOOST_TEST(shift.mean <= shift.high);
  // Seed 2 reverses the advantage: the seeds disagree.
  for (double& x : a[1].nll_sums) x += 1000.0 * 0.05;
  const SeedBlockInterval mixed = hierarchical_bootstrap(a, b, 1000);
  BOOST_TEST(mixed.low < 0);
  BOOST_TEST(mixed.high > 0);
  BOOST_TEST(paired_block_bootstrap(a[0], b[0]).high < 0);  // seed 1's test sample alone
  BOOST_CHECK_THROW(hierarchical_bootstrap(a, {b[0]}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
