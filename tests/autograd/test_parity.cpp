// PyTorch parity: every op case and the composite block against golden values written by
// tests/reference/make_golden.py. Prints the max difference of every compared tensor.
#include <cmath>
#include <set>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "autograd/op_cases.hpp"

using namespace tg;
using namespace tg::testing;

BOOST_AUTO_TEST_SUITE(autograd_parity)

namespace {
std::set<std::string> golden_case_names() {
  std::set<std::string> golden;
  for (const auto& [key, _] : golden_ops().tensors) golden.insert(key.substr(0, key.find('/')));
  return golden;
}
}  // namespace

// A golden case without a C++ case is a renamed or deleted op. A C++ case without a golden
// one is a new op whose PyTorch reference has not been generated yet: its gradient is still
// checked (autograd_gradcheck); this test names it.
BOOST_AUTO_TEST_CASE(every_golden_case_has_a_cpp_case) {
  const auto names = op_case_names();
  const std::set<std::string> cpp(names.begin(), names.end());
  for (const auto& name : golden_case_names())
    BOOST_TEST(cpp.count(name) == 1u, "golden case " << name << " has no C++ case");
  for (const auto& name : names)
    if (!golden_case_names().count(name))
      BOOST_TEST_MESSAGE("op case "
                         << name << " has no PyTorch reference (tests/reference/make_golden.py)");
}

BOOST_DATA_TEST_CASE(op_matches_pytorch, boost::unit_test::data::make(op_case_names()), name) {
  const TensorFile& g = golden_ops();
  if (!golden_case_names().count(name)) return;  // reported above
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

// PyTorch has no dropout stream to compare against; the composed ops (each checked against
// PyTorch above) are the reference for the fused op's dropout: same draws, same masks.
// t = 6 is one strip of the row-blocked kernel; 64 exactly one; 65 and 150 several, the last
// one partial.
BOOST_DATA_TEST_CASE(fused_attention_equals_the_composed_ops_with_dropout,
                     boost::unit_test::data::make({6, 64, 65, 150}), rows) {
  const size_t b = 2, t = static_cast<size_t>(rows), c = 8, heads = 2, d = c / heads;
  Generator init(21);
  const Tensor qkv_fused = randn({b, t, 3 * c}, init, 1.0f, true);
  const Tensor qkv_composed = qkv_fused.clone().set_requires_grad(true);
  const Tensor upstream = randn({b, t, c}, init);

  Generator gen_fused(5), gen_composed(5);
  const Tensor y_fused = causal_attention(qkv_fused, heads, 0.3f, true, gen_fused);
  auto split = [&](size_t part) {
    const long bl = long(b), tl = long(t), hl = long(heads), dl = long(d);
    return permute(reshape(narrow(qkv_composed, 2, part * c, c), {bl, tl, hl, dl}), {0, 2, 1, 3});
  };
  const Tensor scores =
      matmul(split(0), transpose(split(1), -2, -1)) * (1.0f / std::sqrt(float(d)));
  const Tensor att = dropout(softmax(causal_mask(scores), -1), 0.3f, true, gen_composed);
  const Tensor y_composed =
      reshape(permute(matmul(att, split(2)), {0, 2, 1, 3}), {long(b), long(t), long(c)});

  check_close("output", y_fused.array(), y_composed.array(), 1e-6, 1e-5);
  backward(y_fused, upstream, {.retain_graph = true});  // one tape holds both graphs
  backward(y_composed, upstream);
  check_close("qkv gradient", qkv_fused.grad(), qkv_composed.grad(), 1e-6, 1e-5);
  BOOST_TEST(gen_fused.next_u64() == gen_composed.next_u64());  // the same number of draws
  size_t dropped = 0;  // and the masks really dropped something
  for (float x : att.array()) dropped += x == 0.0f;
  BOOST_TEST(dropped > b * heads * t * (t - 1) / 2);  // more zeros than the causal mask alone makes
}

BOOST_AUTO_TEST_SUITE_END()
