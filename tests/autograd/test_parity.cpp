// PyTorch parity: every op case and the composite block against golden values written by
// tests/reference/make_golden.py. Prints the max difference of every compared tensor.
#include <set>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "autograd/op_cases.hpp"

using namespace tg;
using namespace tg::testing;

BOOST_AUTO_TEST_SUITE(autograd_parity)

BOOST_AUTO_TEST_CASE(every_golden_case_has_a_cpp_case_and_back) {
  std::set<std::string> golden;
  for (const auto& [key, _] : golden_ops().tensors) golden.insert(key.substr(0, key.find('/')));
  const auto names = op_case_names();
  BOOST_TEST(golden == std::set<std::string>(names.begin(), names.end()));
}

BOOST_DATA_TEST_CASE(op_matches_pytorch, boost::unit_test::data::make(op_case_names()), name) {
  const TensorFile& g = golden_ops();
  CaseData data = load_case(g, name);
  const Tensor out = op_case(name).f(data.inputs, data.ids);
  check_close(name + " output", out.array(), g.tensor(name + "/out").array(), 1e-5, 1e-4);
  backward(out, g.tensor(name + "/upstream"));
  for (size_t i = 0; i < data.inputs.size(); ++i) {
    if (!data.differentiable[i]) continue;
    check_close(name + " grad" + std::to_string(i), data.inputs[i].dense_grad(),
          g.tensor(name + "/grad" + std::to_string(i)).array(), 1e-5, 1e-4);
  }
}

BOOST_AUTO_TEST_CASE(sparse_embedding_grad_holds_only_touched_rows) {
  CaseData data = load_case(golden_ops(), "embedding_sparse");
  const Tensor out = embedding(data.inputs[0], data.ids, /*sparse_grad=*/true);
  backward(out, golden_ops().tensor("embedding_sparse/upstream"));
  const SparseGrad* sg = data.inputs[0].sparse_grad();
  BOOST_REQUIRE(sg != nullptr);
  BOOST_TEST(!data.inputs[0].has_dense_grad());  // nothing dense was allocated
  std::set<int32_t> touched(data.ids.values.begin(), data.ids.values.end());
  BOOST_TEST(sg->rows == std::vector<int32_t>(touched.begin(), touched.end()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(attention_block_matches_pytorch) {
  const TensorFile& g = golden_block();
  auto params = block_params(g);
  const Tensor loss = block_loss(params, g.id_array("ids"), g.id_array("targets"));
  check_close("block loss", loss.array(), g.tensor("loss").array(), 1e-5, 1e-5);
  backward(loss);
  for (const auto& [name, p] : params)
    check_close("block grad " + name, p.dense_grad(), g.tensor("grad/" + name).array(), 1e-5, 1e-3);
}

BOOST_AUTO_TEST_SUITE_END()
