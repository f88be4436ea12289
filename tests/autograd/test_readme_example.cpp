// The README's example, compiled and run so that it cannot rot. tests/check_snippets.cmake
// checks that the README shows exactly the lines between the markers.
#include <boost/test/unit_test.hpp>

#include <xtensor/xio.hpp>  // operator<< for xt::xarray

#include "autograd/autograd.hpp"

BOOST_AUTO_TEST_SUITE(readme_example)

BOOST_AUTO_TEST_CASE(tiny_graph) {
  // BEGIN README EXAMPLE
  using namespace tg;
  Generator gen(42);
  Tensor w = randn({3, 2}, gen, 0.5f, /*requires_grad=*/true);  // [out, in]
  Tensor b = Tensor::zeros({3}, /*requires_grad=*/true);
  Tensor x = Tensor::from_vector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});  // a batch of 4
  Ids targets({4}, {0, 2, 1, 2});

  Tensor loss = cross_entropy(tanh(linear(x, w, b)), targets);  // records 3 nodes
  backward(loss);  // w.grad() and b.grad() now hold d(loss)/dw and d(loss)/db
  std::cout << "loss " << loss.item() << ", dloss/db " << b.grad() << "\n";
  // END README EXAMPLE
  BOOST_TEST(w.has_grad());
  BOOST_TEST(std::isfinite(loss.item()));
  BOOST_TEST(tape().size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
