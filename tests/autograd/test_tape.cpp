// Tape behaviour: accumulation, skipping, no-grad, backward twice, and no leaks.
#include <boost/test/unit_test.hpp>
#include <fstream>

#include "autograd/autograd.hpp"
#include "autograd/blas.hpp"

using namespace tg;

namespace {
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(autograd_tape)

BOOST_AUTO_TEST_CASE(tensor_used_twice_gets_the_sum) {
  Tensor x = Tensor::from_vector({3}, {1.0f, -2.0f, 0.5f}, true);
  Tensor loss = sum(x * x + x);  // d/dx = 2x + 1
  backward(loss);
  const std::vector<float> want = {3.0f, -3.0f, 2.0f};
  for (size_t i = 0; i < 3; ++i) BOOST_TEST(x.grad().data()[i] == want[i]);
}

BOOST_AUTO_TEST_CASE(diamond_graph_accumulates_both_paths) {
  Tensor x = Tensor::scalar(2.0f, true);
  Tensor a = x * 3.0f;
  Tensor loss = a * a + exp(a) * 0.0f + a;  // d/dx = 3 (2a + 1) = 39
  backward(loss);
  BOOST_TEST(x.grad().data()[0] == 39.0f);
}

BOOST_AUTO_TEST_CASE(backward_keeps_only_the_values_it_reads) {
  Tensor x = Tensor::from_vector({2, 2}, {1.0f, -2.0f, 0.5f, 3.0f}, true);
  Tensor w = Tensor::from_vector({2, 2}, {0.5f, 1.0f, -1.0f, 2.0f}, true);
  Tensor sum_route, product_route, grad_route;
  Tensor loss;
  {
    Tensor s = x + w;                          // add reads no values: s is freed with this scope
    Tensor p = s * s;                          // mul reads its inputs: s * s keeps s...
    Tensor h = reshape(p, {1, 4});             // ...but reshape reads none of p's
    Tensor y = linear(h, reshape(w, {1, 4}));  // linear keeps its input for dW
    loss = sum(y);
    sum_route = s.without_data();
    product_route = p.without_data();
    grad_route = h.without_data();
  }
  BOOST_TEST(sum_route.values_alive());       // held by mul's backward
  BOOST_TEST(!product_route.values_alive());  // read by no backward
  BOOST_TEST(grad_route.values_alive());      // linear's weight gradient reads it
  backward(loss);
  // d/dx sum(w' (x + w)^2) = 2 w' (x + w), with w' = w as a row: the values were there.
  const std::vector<float> xs = {1.0f, -2.0f, 0.5f, 3.0f}, ws = {0.5f, 1.0f, -1.0f, 2.0f};
  for (size_t i = 0; i < 4; ++i) BOOST_TEST(x.grad().data()[i] == 2.0f * ws[i] * (xs[i] + ws[i]));
  BOOST_TEST(!sum_route.values_alive());  // the graph is freed
}

BOOST_AUTO_TEST_CASE(nodes_that_do_not_reach_the_root_are_skipped) {
  Tensor x = Tensor::from_vector({2}, {1.0f, 2.0f}, true);
  Tensor unused = exp(x);  // recorded, but not part of the loss
  Tensor loss = sum(x * 3.0f);
  BOOST_TEST(tape().size() == 3u);
  backward(loss);
  BOOST_TEST(x.grad().data()[0] == 3.0f);
  BOOST_TEST(x.grad().data()[1] == 3.0f);
  BOOST_TEST(!unused.has_grad());
  BOOST_TEST(tape().size() == 0u);  // freed
}

BOOST_AUTO_TEST_CASE(no_grad_records_nothing) {
  Tensor x = Tensor::from_vector({2}, {1.0f, 2.0f}, true);
  tape().clear();
  {
    NoGrad guard;
    Tensor y = exp(x) * 2.0f;
    BOOST_TEST(!y.requires_grad());
    BOOST_TEST(tape().size() == 0u);
  }
  Tensor y = exp(x);
  BOOST_TEST(y.requires_grad());
  BOOST_TEST(tape().size() == 1u);
  tape().clear();
}

BOOST_AUTO_TEST_CASE(ops_on_constants_record_nothing) {
  tape().clear();
  Tensor a = Tensor::full({2, 2}, 1.0f), b = Tensor::full({2, 2}, 2.0f);
  Tensor c = matmul(a, b) + a;
  BOOST_TEST(!c.requires_grad());
  BOOST_TEST(tape().size() == 0u);
}

BOOST_AUTO_TEST_CASE(backward_twice_throws_unless_retained) {
  Tensor x = Tensor::scalar(1.5f, true);
  Tensor loss = x * x;
  backward(loss);
  BOOST_TEST(x.grad().data()[0] == 3.0f);
  BOOST_CHECK_THROW(backward(loss), std::logic_error);

  x.zero_grad();
  Tensor again = x * x;
  backward(again, {.retain_graph = true});
  backward(again);  // same gradient added a second time, as in PyTorch
  BOOST_TEST(x.grad().data()[0] == 6.0f);
}

BOOST_AUTO_TEST_CASE(leaf_gradients_accumulate_until_zeroed) {
  Tensor x = Tensor::scalar(1.0f, true);
  backward(x * 4.0f);
  backward(x * 4.0f);
  BOOST_TEST(x.grad().data()[0] == 8.0f);
  x.zero_grad();
  BOOST_TEST(!x.has_grad());
  backward(x * 4.0f);
  BOOST_TEST(x.grad().data()[0] == 4.0f);
}

// Fused ops write their first contribution straight into a new gradient buffer and add
// later ones (Tensor::add_to_grad): two backward passes must give twice one pass.
BOOST_AUTO_TEST_CASE(fused_output_layer_gradients_accumulate_across_backward_calls) {
  Generator gen(11);
  Tensor x = randn({6, 8}, gen, 1.0f, true), w = randn({20, 8}, gen, 1.0f, true),
         b = randn({20}, gen, 1.0f, true);
  const Ids targets({6}, {0, 3, 19, 7, 7, 12});
  backward(linear_cross_entropy(x, w, b, targets));
  const Array once_w = w.grad(), once_x = x.grad(), once_b = b.grad();
  backward(linear_cross_entropy(x, w, b, targets));
  for (size_t i = 0; i < once_w.size(); ++i)
    BOOST_TEST(w.grad().data()[i] == 2.0f * once_w.data()[i]);
  for (size_t i = 0; i < once_x.size(); ++i)
    BOOST_TEST(x.grad().data()[i] == 2.0f * once_x.data()[i]);
  for (size_t i = 0; i < once_b.size(); ++i)
    BOOST_TEST(b.grad().data()[i] == 2.0f * once_b.data()[i]);
  BOOST_TEST(std::abs(once_b.data()[7]) > 0.0f);  // a target row: a non-trivial gradient
}

BOOST_AUTO_TEST_CASE(non_scalar_root_needs_explicit_gradient) {
  Tensor x = Tensor::from_vector({2}, {1.0f, 2.0f}, true);
  Tensor y = x * 2.0f;
  BOOST_CHECK_THROW(backward(y), std::invalid_argument);
  backward(y, Tensor::from_vector({2}, {1.0f, 10.0f}));
  BOOST_TEST(x.grad().data()[1] == 20.0f);
}

BOOST_AUTO_TEST_CASE(anomaly_mode_names_the_op) {
  set_detect_anomaly(true);
  Tensor x = Tensor::from_vector({2}, {1.0f, -1.0f}, true);
  try {
    log(x);
    BOOST_FAIL("log of a negative number passed anomaly detection");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("'log'") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("[2]") != std::string::npos, e.what());
  }
  set_detect_anomaly(false);
  tape().clear();
  BOOST_CHECK_NO_THROW(log(x));
  tape().clear();
}

// 1,000 training steps of a small model: the number of live tensors and the resident memory
// must not grow, i.e. the tape frees every graph and nothing keeps a graph alive.
BOOST_AUTO_TEST_CASE(memory_is_stable_over_1000_steps) {
  Generator gen(5);
  Tensor w = randn({16, 32}, gen, 0.1f, true), b = Tensor::zeros({16}, true);
  Tensor table = randn({50, 32}, gen, 0.1f, true);
  std::vector<int32_t> ids(64), targets(64);
  long live_after_first = -1, rss_after_warmup = -1;
  for (int step = 0; step < 1000; ++step) {
    for (size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<int32_t>(gen.below(50));
      targets[i] = static_cast<int32_t>(gen.below(16));
    }
    Tensor h = embedding(table, Ids({64}, ids), /*sparse_grad=*/true);
    Tensor loss = cross_entropy(linear(gelu(h), w, b), Ids({64}, targets));
    backward(loss);
    {
      NoGrad guard;
      for (Tensor* p : {&w, &b}) {
        for (size_t i = 0; i < p->numel(); ++i) p->data()[i] -= 0.1f * p->grad().data()[i];
        p->zero_grad();
      }
      table.zero_grad();
    }
    BOOST_REQUIRE(tape().size() == 0u);
    if (step == 0) live_after_first = TensorImpl::live_count();
    if (step == 99) rss_after_warmup = resident_kib();
    BOOST_REQUIRE(TensorImpl::live_count() == live_after_first);
  }
  const long growth = resident_kib() - rss_after_warmup;
  BOOST_TEST_MESSAGE("resident memory growth over 900 steps: " << growth << " KiB");
#ifndef __SANITIZE_ADDRESS__  // ASan's quarantine holds freed memory on purpose
  BOOST_TEST(growth < 4096);
#endif
}

// bench_train's accounting of the products: on, a [3, 4] x [4, 5] product and its two
// backward products count 3 calls of 2 x 3 x 4 x 5 FLOPs; off, nothing is counted.
BOOST_AUTO_TEST_CASE(gemm_counter_counts_products_only_when_on) {
  auto& counter = detail::gemm_counter;
  counter.flops = 0;
  counter.calls = 0;
  counter.nanoseconds = 0;
  Tensor a = Tensor::full({3, 4}, 1.0f, true), b = Tensor::full({4, 5}, 2.0f, true);
  counter.on = true;
  backward(sum(matmul(a, b)));
  counter.on = false;
  BOOST_TEST(counter.calls.load() == 3u);
  BOOST_TEST(counter.flops.load() == 3u * 2 * 3 * 4 * 5);
  matmul(a, b);
  BOOST_TEST(counter.calls.load() == 3u);
  tape().clear();
}

BOOST_AUTO_TEST_SUITE_END()
