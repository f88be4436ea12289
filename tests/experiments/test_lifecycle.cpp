// The life cycle's under-trained token search (Land and Bartolo 2024) and its ROC AUC.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "autograd/random.hpp"
#include "experiments/lifecycle_probe.hpp"

using namespace tg;

namespace {

// 400 rows of width 16: 380 "trained" rows at random, 20 "unused" ones sharing a direction
// (what the softmax's push does to rows that never occur), and in every row a large component
// along another direction that varies from row to row (the kind of shared component that the
// first principal component removes).
struct PlantedTable {
  static constexpr size_t rows = 400, width = 16, unused = 20;
  Tensor table;
  std::vector<bool> is_unused = std::vector<bool>(rows, false);
  PlantedTable() {
    Generator gen(7);
    std::vector<float> v(rows * width);
    for (size_t r = 0; r < rows; ++r) {
      is_unused[r] = r % (rows / unused) == 0;
      const float loud = 20.0f * gen.normal();
      for (size_t j = 0; j < width; ++j) {
        const float noise = is_unused[r] ? 0.3f * gen.normal() : gen.normal();
        v[r * width + j] = noise + (j == 0 ? loud : 0.0f) + (is_unused[r] && j == 1 ? 3.0f : 0.0f);
      }
    }
    table = Tensor::from_vector({rows, width}, v);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(experiments_lifecycle)

BOOST_AUTO_TEST_CASE(roc_auc_counts_ordered_pairs_and_halves_ties) {
  using experiments::roc_auc;
  BOOST_TEST(roc_auc({1, 2, 3, 4}, {false, false, true, true}) == 1.0);
  BOOST_TEST(roc_auc({1, 2, 3, 4}, {true, true, false, false}) == 0.0);
  BOOST_TEST(roc_auc({0.1, 0.4, 0.35, 0.8}, {false, false, true, true}) == 0.75);
  BOOST_TEST(roc_auc({5, 5, 5, 5}, {false, true, false, true}) == 0.5);
  BOOST_TEST(std::isnan(roc_auc({1, 2}, {false, false})));
  BOOST_CHECK_THROW(roc_auc({1, 2}, {true}), std::invalid_argument);
}

// Half the unused rows as the reference: the other half score above every trained row.
BOOST_AUTO_TEST_CASE(indicator_finds_unused_rows_from_a_reference_of_others) {
  const PlantedTable t;
  std::vector<int32_t> reference;
  std::vector<bool> held_out(PlantedTable::rows, false);
  size_t k = 0;
  for (size_t r = 0; r < PlantedTable::rows; ++r)
    if (t.is_unused[r] && k++ % 2 == 0) reference.push_back(static_cast<int32_t>(r));
  const std::vector<double> score = experiments::undertrained_indicator(t.table, reference);
  std::vector<double> others;
  std::vector<bool> positive;
  for (size_t r = 0; r < PlantedTable::rows; ++r) {
    if (std::find(reference.begin(), reference.end(), static_cast<int32_t>(r)) != reference.end())
      continue;
    others.push_back(score[r]);
    positive.push_back(t.is_unused[r]);
  }
  BOOST_TEST(experiments::roc_auc(others, positive) == 1.0);
  // The loud shared component is what hides them without the principal component removed:
  // plain cosine to the reference's mean row ranks them far worse.
  std::vector<double> plain;
  const size_t w = PlantedTable::width;
  std::vector<double> mean(w, 0.0);
  for (int32_t id : reference)
    for (size_t j = 0; j < w; ++j) mean[j] += t.table.data()[static_cast<size_t>(id) * w + j];
  for (size_t r = 0; r < PlantedTable::rows; ++r) {
    if (std::find(reference.begin(), reference.end(), static_cast<int32_t>(r)) != reference.end())
      continue;
    double dot = 0, a = 0, b = 0;
    for (size_t j = 0; j < w; ++j) {
      const double x = t.table.data()[r * w + j];
      dot += x * mean[j], a += x * x, b += mean[j] * mean[j];
    }
    plain.push_back(dot / std::sqrt(a * b));
  }
  BOOST_TEST(experiments::roc_auc(plain, positive) < 0.9);
}

BOOST_AUTO_TEST_CASE(indicator_refuses_bad_input) {
  const PlantedTable t;
  BOOST_CHECK_THROW(experiments::undertrained_indicator(t.table, {}), std::invalid_argument);
  BOOST_CHECK_THROW(experiments::undertrained_indicator(t.table, {400}), std::invalid_argument);
  BOOST_CHECK_THROW(experiments::undertrained_indicator(Tensor::zeros({4}), {0}),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
