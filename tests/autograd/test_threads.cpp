// The ops' own loops split work over threads (autograd/parallel.hpp) without changing a
// number: every sum runs in the same order whatever the thread count. Each case runs forward
// and backward at sizes above every parallel grain, once on 1 thread and once on 2, and
// compares values and gradients. Products inside the ops go through BLAS, whose own thread
// split may round differently, hence a tolerance for those; the row and element-wise ops
// must match exactly.
#include <boost/test/unit_test.hpp>

#include <functional>

#include "autograd/autograd.hpp"
#include "autograd/op_cases.hpp"
#include "needs_openmp.hpp"

using namespace tg;

namespace {

using Run = testing::ForwardBackward;

// The op at a thread count, from the same inputs every time.
Run run(int threads, const std::vector<Shape>& shapes,
        const std::function<Tensor(std::vector<Tensor>&)>& op) {
  set_num_threads(threads);
  return testing::forward_backward(shapes, op, 7, 1.0f);
}

void check_same(const Run& a, const Run& b, float tolerance) {
  auto close = [tolerance](const std::vector<float>& x, const std::vector<float>& y) {
    BOOST_REQUIRE_EQUAL(x.size(), y.size());
    float worst = 0.0f;
    for (size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::abs(x[i] - y[i]) / (1.0f + std::abs(x[i])));
    BOOST_TEST(worst <= tolerance, "largest relative difference " << worst << " > " << tolerance);
  };
  close(a.out, b.out);
  BOOST_REQUIRE_EQUAL(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) close(a.grads[i], b.grads[i]);
}

void same_on_1_and_2_threads(const std::vector<Shape>& shapes,
                             const std::function<Tensor(std::vector<Tensor>&)>& op,
                             float tolerance = 0.0f) {
  const Run one = run(1, shapes, op);
  const Run two = run(2, shapes, op);
  set_num_threads(1);
  check_same(one, two, tolerance);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(autograd_threads)

BOOST_AUTO_TEST_CASE(thread_count_is_set_and_reported) {
  set_num_threads(2);
  BOOST_TEST(num_threads() == 2);
  set_num_threads(1);
  BOOST_TEST(num_threads() == 1);
  BOOST_CHECK_THROW(set_num_threads(0), std::invalid_argument);
  const std::string backend = threading_backend();
  BOOST_TEST((backend == "openmp" || backend == "pthreads" || backend == "serial"), backend);
}

BOOST_AUTO_TEST_CASE(element_wise_ops_match_exactly,
                     *boost::unit_test::precondition(testing::needs_openmp)) {
  const Shape big{64, 600};  // 38,400 elements: above the element-wise grain
  same_on_1_and_2_threads({big, big}, [](auto& in) { return add(in[0], in[1]); });
  same_on_1_and_2_threads({big, big}, [](auto& in) { return mul(in[0], in[1]); });
  same_on_1_and_2_threads({big}, [](auto& in) { return gelu(in[0]); });
  same_on_1_and_2_threads({big}, [](auto& in) { return tanh(in[0]); });
}

BOOST_AUTO_TEST_CASE(row_ops_match_exactly,
                     *boost::unit_test::precondition(testing::needs_openmp)) {
  same_on_1_and_2_threads({{96, 80}, {80}, {80}},
                          [](auto& in) { return layer_norm(in[0], in[1], in[2]); });
  // 4 x 3 heads, T = 20, d = 8, dropout off and on.
  same_on_1_and_2_threads({{4, 20, 72}}, [](auto& in) {
    Generator g(3);
    return causal_attention(in[0], 3, 0.0f, true, g);
  });
  same_on_1_and_2_threads({{4, 20, 72}}, [](auto& in) {
    Generator g(3);
    return causal_attention(in[0], 3, 0.3f, true, g);
  });
}

BOOST_AUTO_TEST_CASE(ops_with_threaded_products_match_within_rounding) {
  same_on_1_and_2_threads(
      {{70, 48}, {300, 48}, {300}}, [](auto& in) { return linear(in[0], in[1], in[2]); }, 1e-5f);
  Ids targets{{70}, std::vector<int32_t>(70)};
  for (size_t i = 0; i < 70; ++i) targets.values[i] = static_cast<int32_t>((i * 37) % 300);
  same_on_1_and_2_threads(
      {{70, 48}, {300, 48}, {300}},
      [&](auto& in) { return linear_cross_entropy(in[0], in[1], in[2], targets); }, 1e-5f);
}

// Many rows over a wide vocabulary: linear_cross_entropy then works in several chunks per
// thread (59 rows of 70,000 logits), each thread on its own slab of rows with its own weight
// gradient; ignored rows included. It must equal linear followed by cross_entropy.
BOOST_AUTO_TEST_CASE(fused_output_layer_in_many_chunks_matches_the_unfused_ops) {
  const size_t rows = 150, vocab = 70000, width = 8;
  Ids targets{{rows}, std::vector<int32_t>(rows)};
  for (size_t i = 0; i < rows; ++i)
    targets.values[i] = i % 11 == 5 ? -100 : static_cast<int32_t>((i * 7919) % vocab);
  const std::vector<Shape> shapes{{rows, width}, {vocab, width}, {vocab}};
  const Run reference = run(1, shapes, [&](auto& in) {
    return cross_entropy(linear(in[0], in[1], in[2]), targets, -100);
  });
  for (int threads : {1, 2}) {
    BOOST_TEST_CONTEXT("threads " << threads) {
      check_same(
          reference,
          run(threads, shapes,
              [&](auto& in) { return linear_cross_entropy(in[0], in[1], in[2], targets, -100); }),
          1e-5f);
    }
  }
  set_num_threads(1);
}

// A frozen output weight (no weight gradient) on two threads: each slab has no weight-gradient
// buffer, and the input gradient is the one thread's.
BOOST_AUTO_TEST_CASE(fused_output_layer_with_a_frozen_weight,
                     *boost::unit_test::precondition(testing::needs_openmp)) {
  const size_t rows = 96, vocab = 40, width = 8;
  Ids targets{{rows}, std::vector<int32_t>(rows)};
  for (size_t i = 0; i < rows; ++i) targets.values[i] = static_cast<int32_t>((i * 7) % vocab);
  std::vector<float> grads[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Generator gen(4);
    Tensor x = randn({rows, width}, gen, 1.0f, true), w = randn({vocab, width}, gen, 1.0f, false);
    backward(linear_cross_entropy(x, w, Tensor(), targets));
    grads[threads - 1].assign(x.grad().data(), x.grad().data() + x.numel());
    BOOST_TEST(!w.has_grad());
  }
  set_num_threads(1);
  for (size_t i = 0; i < grads[0].size(); ++i)
    BOOST_TEST(grads[1][i] == grads[0][i], boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_SUITE_END()
