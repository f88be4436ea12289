// GradientSync under `mpirun -np 2` (CTest runs it so): averaged dense gradients, merged
// row-sparse gradients, the dense fallback, a rank without rows, and overlapped buckets
// giving the same bits as reducing after backward.
#include <boost/test/unit_test.hpp>

#include "autograd/autograd.hpp"
#include "distributed/distributed.hpp"

using namespace tg;

namespace {

struct StartMPI {
  StartMPI() { distributed::init(); }
};
BOOST_TEST_GLOBAL_FIXTURE(StartMPI);

// loss = sum(table[ids]) + sum(w * c): the table's gradient counts each id, w's is c.
Tensor toy_loss(const Tensor& table, const Tensor& w, const std::vector<int32_t>& ids, float c) {
  const Tensor rows = embedding(table, Ids({ids.size()}, ids), true);
  return sum(rows) + sum(w * c);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(distributed_suite)

BOOST_AUTO_TEST_CASE(runs_with_two_ranks) {
  BOOST_REQUIRE(distributed::built_with_mpi());
  BOOST_REQUIRE_MESSAGE(distributed::size() == 2, "run this suite with mpirun -np 2 (CTest does)");
  const auto [begin, end] = distributed::shard(7);
  BOOST_TEST(end - begin == (distributed::rank() == 0 ? 3u : 4u));
  BOOST_TEST(distributed::sum(static_cast<double>(distributed::rank() + 1)) == 3.0);
}

BOOST_AUTO_TEST_CASE(sparse_rows_are_merged_and_dense_gradients_averaged) {
  Tensor table = Tensor::zeros({10, 3}, true), w = Tensor::zeros({4}, true);
  distributed::GradientSync sync({table, w});
  // Rank 0 looks up rows 0 and 5, rank 1 rows 1, 5, 5; both hold half of the batch.
  const bool first = distributed::rank() == 0;
  const std::vector<int32_t> ids =
      first ? std::vector<int32_t>{0, 5} : std::vector<int32_t>{1, 5, 5};
  for (int step = 0; step < 2; ++step) {  // the first step plans the buckets, the second overlaps
    table.zero_grad();
    w.zero_grad();
    sync.backward(toy_loss(table, w, ids, first ? 2.0f : 4.0f), 0.5);
    BOOST_REQUIRE(table.sparse_grad() != nullptr);
    BOOST_TEST(!table.has_dense_grad());
    const SparseGrad& g = *table.sparse_grad();
    BOOST_TEST((g.rows == std::vector<int32_t>{0, 1, 5}));
    const std::vector<float> expected{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.5f, 1.5f, 1.5f};
    BOOST_TEST(std::vector<float>(g.values.begin(), g.values.end()) == expected,
               boost::test_tools::per_element());
    for (float x : w.grad()) BOOST_TEST(x == 3.0f);  // (2 + 4) / 2
  }
  BOOST_TEST(sync.stats().sparse_exchanges == 2u);
  BOOST_TEST(sync.stats().dense_fallbacks == 0u);
}

BOOST_AUTO_TEST_CASE(many_rows_are_reduced_densely_but_stay_row_sparse) {
  Tensor table = Tensor::zeros({4, 2}, true), w = Tensor::zeros({3}, true);
  distributed::GradientSync sync({table, w});
  // 5 looked-up rows in all: their lists would cost more than the 4-row table, so the table is
  // reduced densely; row 3, which no rank looked up, must still have no gradient.
  const std::vector<int32_t> ids =
      distributed::rank() == 0 ? std::vector<int32_t>{0, 1, 2} : std::vector<int32_t>{0, 1};
  sync.backward(toy_loss(table, w, ids, 1.0f), 0.5);
  BOOST_TEST(sync.stats().dense_fallbacks == 1u);
  BOOST_TEST(!table.has_dense_grad());
  BOOST_REQUIRE(table.sparse_grad() != nullptr);
  BOOST_TEST((table.sparse_grad()->rows == std::vector<int32_t>{0, 1, 2}));
  const std::vector<float> expected{1.0f, 1.0f, 1.0f, 1.0f, 0.5f, 0.5f};
  BOOST_TEST(std::vector<float>(table.sparse_grad()->values.begin(),
                                table.sparse_grad()->values.end()) == expected,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_rank_without_rows_contributes_zeros) {
  Tensor table = Tensor::zeros({10, 3}, true), w = Tensor::zeros({4}, true);
  distributed::GradientSync sync({table, w});
  for (int step = 0; step < 2; ++step) {
    table.zero_grad();
    w.zero_grad();
    if (distributed::rank() == 0)
      sync.backward(toy_loss(table, w, {7}, 5.0f), 1.0);
    else
      sync.contribute_nothing();
    BOOST_REQUIRE(table.sparse_grad() != nullptr);
    BOOST_TEST((table.sparse_grad()->rows == std::vector<int32_t>{7}));
    for (float x : w.grad()) BOOST_TEST(x == 5.0f);
  }
}

BOOST_AUTO_TEST_CASE(overlapped_buckets_match_reducing_after_backward) {
  // A small MLP with many parameters in tiny buckets, so that reductions start mid-backward.
  Generator gen(11 + static_cast<uint64_t>(distributed::rank()));  // different data on each rank
  const Tensor x = randn({5, 6}, gen);
  std::vector<std::vector<float>> results[2];
  for (int overlap = 0; overlap < 2; ++overlap) {
    Generator init(3);
    std::vector<Tensor> params;
    for (int layer = 0; layer < 4; ++layer)
      params.push_back(randn({6, 6}, init, 0.3f, true)),
          params.push_back(randn({6}, init, 0.1f, true));
    distributed::GradientSync sync(params, {.bucket_bytes = 64, .overlap = overlap == 1});
    for (int step = 0; step < 3; ++step) {
      for (Tensor& p : params) p.zero_grad();
      Tensor h = x;
      for (size_t l = 0; l < params.size(); l += 2) h = tanh(linear(h, params[l], params[l + 1]));
      sync.backward(sum(h * h), distributed::rank() == 0 ? 0.25 : 0.75);
    }
    for (const Tensor& p : params) results[overlap].emplace_back(p.grad().begin(), p.grad().end());
  }
  for (size_t i = 0; i < results[0].size(); ++i)
    BOOST_TEST(results[0][i] == results[1][i], boost::test_tools::per_element());
  // And every rank holds the same averaged gradient.
  for (auto& g : results[1]) {
    std::vector<float> rank0 = g;
    distributed::broadcast(rank0.data(), rank0.size());
    BOOST_TEST(g == rank0, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()
