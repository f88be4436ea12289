#include <boost/test/unit_test.hpp>

#include <limits>
#include <vector>

#include "autograd/autograd.hpp"
#include "autograd/blas.hpp"

using namespace tg;

BOOST_AUTO_TEST_SUITE(autograd_tensor)

BOOST_AUTO_TEST_CASE(construction_and_shape) {
  Tensor t = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(t.dim() == 2u);
  BOOST_TEST(t.numel() == 6u);
  BOOST_TEST(t.size(-1) == 3u);
  BOOST_TEST(t.array()(1, 2) == 6.0f);  // xtensor view of the same storage
  BOOST_CHECK_THROW(t.size(2), std::out_of_range);
  BOOST_CHECK_THROW(Tensor::from_vector({2, 2}, {1, 2, 3}), std::invalid_argument);
  BOOST_CHECK_THROW(t.item(), std::invalid_argument);
  BOOST_TEST(Tensor::scalar(4.0f).item() == 4.0f);
  BOOST_CHECK_THROW(Tensor().numel(), std::logic_error);
}

BOOST_AUTO_TEST_CASE(copies_share_storage_clone_does_not) {
  Tensor a = Tensor::zeros({3});
  Tensor shared = a;
  Tensor copy = a.clone();
  a.data()[0] = 7.0f;
  BOOST_TEST(shared.data()[0] == 7.0f);
  BOOST_TEST(copy.data()[0] == 0.0f);
}

BOOST_AUTO_TEST_CASE(a_handle_without_data_routes_gradients_but_keeps_no_values) {
  Tensor t = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}, true);
  Tensor route = t.without_data();
  Tensor route_copy = route;  // a copy of a handle without data is one too
  BOOST_TEST(!route.holds_data());
  BOOST_TEST(!route_copy.holds_data());
  BOOST_TEST(route.impl() == t.impl());
  BOOST_CHECK_THROW(route.data(), std::logic_error);
  BOOST_CHECK_THROW(route.item(), std::logic_error);
  BOOST_CHECK_THROW(route.clone(), std::logic_error);

  Tensor other_holder = t;
  t = Tensor();
  BOOST_TEST(route.values_alive());  // other_holder still has them
  BOOST_TEST(other_holder.data()[5] == 6.0f);
  other_holder = Tensor();
  BOOST_TEST(!route.values_alive());
  BOOST_TEST((route.shape() == Shape{2, 3}));
  BOOST_TEST(route.numel() == 6u);
  BOOST_TEST(route.dim() == 2u);
  BOOST_TEST(route.size(-1) == 3u);

  const std::vector<float> g = {1, 1, 1, 2, 2, 2};
  route.add_to_grad(g.data(), 0.5f);
  route_copy.add_to_grad(g.data(), 0.5f);
  BOOST_TEST(route.grad().size() == 6u);
  BOOST_TEST(route.grad().data()[3] == 2.0f);
  BOOST_TEST(route.dense_grad().data()[0] == 1.0f);
}

BOOST_AUTO_TEST_CASE(ids_validate_their_shape) {
  BOOST_CHECK_THROW(Ids({2, 2}, {1, 2, 3}), std::invalid_argument);
  BOOST_TEST(Ids({2, 2}, {1, 2, 3, 4}).numel() == 4u);
}

// grad_target: a product's first gradient overwrites a new buffer (beta 0, no zero fill), the
// next ones add to it (beta 1). Through linear: an input read by two Linears gets the sum of
// both gradients, as through two separate copies of it.
BOOST_AUTO_TEST_CASE(grad_target_overwrites_first_then_adds) {
  Tensor t = Tensor::zeros({3}, true);
  const auto first = t.grad_target();
  BOOST_TEST(first.beta == 0.0f);
  BOOST_TEST(t.has_dense_grad());
  std::fill(first.data, first.data + 3, 2.0f);
  const auto second = t.grad_target();
  BOOST_TEST(second.beta == 1.0f);
  BOOST_TEST(second.data == first.data);

  Generator gen(12);
  Tensor x = randn({5, 4}, gen, 1.0f, true), w1 = randn({3, 4}, gen, 0.5f, true),
         w2 = randn({6, 4}, gen, 0.5f, true);
  backward(sum(linear(x, w1)) + sum(linear(x, w2) * 2.0f));
  Tensor a = x.clone().set_requires_grad(true), b = x.clone().set_requires_grad(true);
  backward(sum(linear(a, w1.clone())) + sum(linear(b, w2.clone()) * 2.0f));
  for (size_t i = 0; i < x.numel(); ++i)
    BOOST_TEST(x.grad().data()[i] == a.grad().data()[i] + b.grad().data()[i],
               boost::test_tools::tolerance(1e-6f));
}

// The same through matmul: an operand read twice by one product (a @ a), and a broadcast one
// (one right-hand matrix for a batch of left ones), against separate copies of it.
BOOST_AUTO_TEST_CASE(matmul_gradient_of_an_operand_read_twice) {
  Generator gen(13);
  Tensor a = randn({4, 4}, gen, 1.0f, true);
  backward(sum(matmul(a, a) * 3.0f));
  Tensor l = a.clone().set_requires_grad(true), r = a.clone().set_requires_grad(true);
  backward(sum(matmul(l, r) * 3.0f));
  for (size_t i = 0; i < a.numel(); ++i)
    BOOST_TEST(a.grad().data()[i] == l.grad().data()[i] + r.grad().data()[i],
               boost::test_tools::tolerance(1e-5f));

  Tensor x = randn({3, 2, 4}, gen, 1.0f, true), w = randn({1, 4, 5}, gen, 1.0f, true);
  backward(sum(matmul(x, w)));
  Tensor w_sum = Tensor::zeros({4, 5});
  for (size_t b = 0; b < 3; ++b) {
    Tensor xb =
        Tensor::from_vector({2, 4}, std::vector<float>(x.data() + b * 8, x.data() + b * 8 + 8));
    Tensor wb = reshape(w, {4, 5}).clone().set_requires_grad(true);
    backward(sum(matmul(xb, wb)));
    for (size_t i = 0; i < 20; ++i) w_sum.data()[i] += wb.grad().data()[i];
  }
  for (size_t i = 0; i < 20; ++i)
    BOOST_TEST(w.grad().data()[i] == w_sum.data()[i], boost::test_tools::tolerance(1e-5f));
}

// An empty sum with beta 0 writes zeros without reading C, which may be a new buffer
// (grad_target): a NaN there must not survive, as NaN * 0 would.
BOOST_AUTO_TEST_CASE(empty_product_with_beta_zero_does_not_read_its_output) {
  std::vector<float> c(6, std::numeric_limits<float>::quiet_NaN());
  const float none = 0;
  detail::gemm(false, false, 2, 3, 0, 1.0f, &none, 1, &none, 3, 0.0f, c.data(), 3);
  for (float v : c) BOOST_TEST(v == 0.0f);
  Tensor a = Tensor::zeros({3, 2}, true), b = Tensor::zeros({2, 0}, true);
  backward(sum(matmul(a, b)));
  for (size_t i = 0; i < a.numel(); ++i) BOOST_TEST(a.grad().data()[i] == 0.0f);
}

// A tied matrix used as an embedding (sparse) and as an output projection (dense) gets one
// gradient: the sum of both uses.
BOOST_AUTO_TEST_CASE(tied_weight_gets_sum_of_both_uses) {
  Generator gen(11);
  Tensor w = randn({7, 4}, gen, 0.5f, true);
  const Ids ids({5}, {1, 3, 3, 0, 6}), targets({5}, {2, 2, 5, 1, 0});
  backward(cross_entropy(linear(embedding(w, ids, true), w), targets));
  const Array tied = w.dense_grad();
  BOOST_TEST(w.sparse_grad() != nullptr);

  // The two uses separately, through two independent copies of the same values.
  Tensor as_input = w.clone().set_requires_grad(true),
         as_output = w.clone().set_requires_grad(true);
  backward(cross_entropy(linear(embedding(as_input, ids), as_output), targets));
  for (size_t i = 0; i < tied.size(); ++i)
    BOOST_TEST(tied.data()[i] == as_input.grad().data()[i] + as_output.grad().data()[i],
               boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(generator_is_deterministic_and_resumable) {
  Generator a(42), b(42);
  for (int i = 0; i < 100; ++i) BOOST_TEST(a.next_u64() == b.next_u64());
  a.normal();
  const auto state = a.state();
  const float next = a.normal();
  Generator c;
  c.set_state(state);
  BOOST_TEST(c.normal() == next);
  BOOST_CHECK_THROW(a.below(0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(randn_has_the_requested_moments) {
  Generator gen(1);
  Tensor t = randn({20000}, gen, 2.0f);
  double m = 0, v = 0;
  for (size_t i = 0; i < t.numel(); ++i) m += t.data()[i];
  m /= t.numel();
  for (size_t i = 0; i < t.numel(); ++i) v += (t.data()[i] - m) * (t.data()[i] - m);
  v /= t.numel();
  BOOST_TEST(std::fabs(m) < 0.05);
  BOOST_TEST(std::fabs(std::sqrt(v) - 2.0) < 0.05);
}

BOOST_AUTO_TEST_CASE(dropout_statistics_and_identity_in_eval) {
  Generator gen(8);
  Tensor x = Tensor::full({10000}, 1.0f);
  Tensor y = dropout(x, 0.25f, true, gen);
  size_t zeros = 0;
  for (size_t i = 0; i < y.numel(); ++i) {
    if (y.data()[i] == 0.0f)
      ++zeros;
    else
      BOOST_REQUIRE_CLOSE(y.data()[i], 1.0f / 0.75f, 1e-4);
  }
  BOOST_TEST(std::fabs(zeros / 10000.0 - 0.25) < 0.02);
  Tensor e = dropout(x, 0.25f, false, gen);
  BOOST_TEST(e.impl() == x.impl());
  Generator g1(5), g2(5);
  Tensor m1 = dropout(x, 0.5f, true, g1), m2 = dropout(x, 0.5f, true, g2);
  BOOST_TEST(std::equal(m1.data(), m1.data() + m1.numel(), m2.data()));
}

BOOST_AUTO_TEST_CASE(cross_entropy_all_ignored_is_nan_like_pytorch) {
  Tensor logits = Tensor::zeros({2, 3}, true);
  Tensor loss = cross_entropy(logits, Ids({2}, {-100, -100}));
  BOOST_TEST(std::isnan(loss.item()));
  tape().clear();
}

BOOST_AUTO_TEST_SUITE_END()
