// Bad arguments throw exceptions whose messages name the op and the offending shapes/values.
#include <boost/test/unit_test.hpp>

#include "autograd/autograd.hpp"

using namespace tg;

namespace {
// Runs f, requires an exception of type E whose message contains every fragment.
template <class E, class F>
void expect_error(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const char* fragment : fragments)
      BOOST_TEST(what.find(fragment) != std::string::npos,
                 "message \"" << what << "\" lacks \"" << fragment << "\"");
    return;
  }
  BOOST_FAIL("expected an exception mentioning " << *fragments.begin());
}
Tensor z(const Shape& s) {
  return Tensor::zeros(s);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(autograd_errors)

BOOST_AUTO_TEST_CASE(shape_errors_name_op_and_shapes) {
  using IA = std::invalid_argument;
  expect_error<IA>([] { add(z({2, 3}), z({4})); }, {"add", "[2, 3]", "[4]"});
  expect_error<IA>([] { mul(z({2, 3}), z({3, 2})); }, {"mul", "[2, 3]", "[3, 2]"});
  expect_error<IA>([] { matmul(z({2, 3}), z({4, 5})); }, {"matmul", "[2, 3]", "[4, 5]"});
  expect_error<IA>([] { matmul(z({3}), z({3, 2})); }, {"matmul", "rank"});
  expect_error<IA>([] { matmul(z({2, 2, 3}), z({3, 3, 4})); }, {"matmul", "[2]", "[3]"});
  expect_error<IA>([] { linear(z({2, 3}), z({5, 4})); }, {"linear", "[2, 3]", "[5, 4]"});
  expect_error<IA>([] { linear(z({2, 4}), z({5, 4}), z({4})); }, {"linear", "bias", "[4]"});
  expect_error<IA>([] { reshape(z({2, 3}), {4, 2}); }, {"reshape", "[2, 3]", "[4, 2]"});
  expect_error<IA>([] { permute(z({2, 3}), {0, 0}); }, {"permute", "repeated"});
  expect_error<IA>([] { concat({z({2, 3}), z({3, 3})}, 1); }, {"concat", "[3, 3]"});
  expect_error<IA>([] { layer_norm(z({2, 4}), z({3}), z({4})); }, {"layer_norm", "[3]", "[2, 4]"});
  expect_error<IA>([] { masked_fill(z({2, 3}), z({3, 3}), 0.0f); }, {"masked_fill", "[3, 3]"});
  expect_error<IA>([] { causal_mask(z({4})); }, {"causal_mask", "[4]"});
  expect_error<IA>([] { causal_mask(z({4, 2})); }, {"causal_mask", "queries"});
  expect_error<IA>([] { embedding(z({4}), Ids({1}, {0})); }, {"embedding", "[4]"});
  expect_error<IA>(
      [] {
        cross_entropy(z({2, 5}), Ids({3}, {0, 1, 2}));
      },
      {"cross_entropy", "[3]", "[2, 5]"});
  Generator gen;
  expect_error<IA>([&] { dropout(z({2}), 1.5f, true, gen); }, {"dropout", "1.5"});
}

BOOST_AUTO_TEST_CASE(range_errors_name_value_and_bound) {
  using OOR = std::out_of_range;
  expect_error<OOR>(
      [] {
        embedding(z({10, 4}), Ids({3}, {1, 10, 2}));
      },
      {"embedding", "id 10", "position 1", "[0, 10)"});
  expect_error<OOR>([] { embedding(z({10, 4}), Ids({1}, {-1})); }, {"embedding", "id -1"});
  expect_error<OOR>(
      [] {
        cross_entropy(z({2, 5}), Ids({2}, {0, 7}));
      },
      {"cross_entropy", "id 7", "[0, 5)"});
  expect_error<OOR>([] { narrow(z({3, 4}), 1, 2, 3); }, {"narrow", "[2, 5)", "[3, 4]"});
  expect_error<OOR>([] { sum(z({3, 4}), {2}); }, {"sum", "axis 2"});
  expect_error<OOR>([] { softmax(z({3, 4}), -3); }, {"softmax", "axis -3"});
  expect_error<OOR>([] { transpose(z({3, 4}), 0, 5); }, {"transpose", "axis 5"});
}

BOOST_AUTO_TEST_CASE(backward_misuse) {
  Tensor x = Tensor::scalar(1.0f, true);
  Tensor y = x * 2.0f;
  expect_error<std::invalid_argument>([&] { backward(y, Tensor::zeros({2})); },
                                      {"backward", "[2]"});
  tape().clear();
  Tensor constant = Tensor::scalar(3.0f);
  expect_error<std::logic_error>([&] { backward(constant); }, {"backward", "retain_graph"});
}

BOOST_AUTO_TEST_SUITE_END()
