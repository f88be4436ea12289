// Finite-difference gradient checks for every op (on inputs drawn from each case's specs,
// which include broadcasting, non-last axes and repeated ids: no PyTorch needed), dropout,
// the composite block, and proof that the checker catches a wrong backward.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "autograd/op_cases.hpp"

using namespace tg;
using namespace tg::testing;

BOOST_AUTO_TEST_SUITE(autograd_gradcheck)

BOOST_DATA_TEST_CASE(op_gradient_matches_finite_differences,
                     boost::unit_test::data::make(op_case_names()), name) {
  const OpCase& c = op_case(name);
  CaseData data = make_inputs(c);
  const auto& f = c.f;
  const Ids ids = data.ids;
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return f(in, ids); }, data.inputs);
  BOOST_TEST_MESSAGE(name << ": " << r.report);
  BOOST_TEST(r.ok, name << ": " << r.report);
}

BOOST_AUTO_TEST_CASE(dropout_gradient_with_fixed_mask) {
  Generator init(7);
  Tensor x = randn({4, 6}, init, 1.0f, true);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) {
        Generator gen(99);  // the same mask on every evaluation
        return dropout(in[0], 0.3f, /*training=*/true, gen);
      },
      {x});
  BOOST_TEST(r.ok, r.report);
}

BOOST_AUTO_TEST_CASE(attention_block_gradient) {
  const TensorFile& g = golden_block();
  auto params = block_params(g);
  std::vector<std::string> names;
  std::vector<Tensor> inputs;
  for (auto& [n, t] : params) {
    names.push_back(n);
    inputs.push_back(t);
  }
  const Ids ids = g.id_array("ids"), targets = g.id_array("targets");
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        std::map<std::string, Tensor> p;
        for (size_t i = 0; i < names.size(); ++i) p[names[i]] = in[i];
        return block_loss(p, ids, targets);
      },
      inputs);
  BOOST_TEST_MESSAGE("block: " << r.report);
  BOOST_TEST(r.ok, r.report);
}

// A checker that cannot fail proves nothing: feed it an op whose backward is off by 10%.
BOOST_AUTO_TEST_CASE(checker_rejects_a_wrong_backward) {
  auto wrong_square = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor out = Tensor::empty(x.shape());
    for (size_t i = 0; i < x.numel(); ++i) out.data()[i] = x.data()[i] * x.data()[i];
    if (needs_grad({&x}))
      record("wrong_square", {x}, out, [x, out]() {
        for (size_t i = 0; i < x.numel(); ++i)
          x.grad_data()[i] += out.grad().data()[i] * 2.2f * x.data()[i];
      });
    return out;
  };
  Generator gen(3);
  Tensor x = randn({5}, gen, 1.0f, true);
  const GradcheckResult r = gradcheck(wrong_square, {x});
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.report.find("gradient mismatch") != std::string::npos);
}

// The same wrong backward on inputs of standard deviation 0.05 (where the correct RMSNorm below
// passes): the step that follows the input's scale still tells 10% off from right.
BOOST_AUTO_TEST_CASE(checker_rejects_a_wrong_backward_on_small_inputs) {
  auto wrong_scale = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor out = Tensor::empty(x.shape());
    for (size_t i = 0; i < x.numel(); ++i) out.data()[i] = 3.0f * x.data()[i] * x.data()[i];
    if (needs_grad({&x}))
      record("wrong_scale", {x}, out, [x, out]() {
        for (size_t i = 0; i < x.numel(); ++i)
          x.grad_data()[i] += out.grad().data()[i] * 6.6f * x.data()[i];  // 6 is right
      });
    return out;
  };
  Generator gen(3);
  Tensor x = randn({4, 16}, gen, 0.05f, true);
  const GradcheckResult r = gradcheck(wrong_scale, {x});
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.report.find("gradient mismatch") != std::string::npos);
}

// RMSNorm composed from ops, on inputs of standard deviation 0.05: a correct gradient that the
// old absolute step (1e-2 for every |x| below 1) rejected; the step now follows the input's
// scale.
BOOST_AUTO_TEST_CASE(a_correct_op_on_small_inputs_passes) {
  Generator gen(11);
  Tensor x = randn({4, 16}, gen, 0.05f, true), w = randn({16}, gen, 1.0f, true);
  const auto rms_norm = [](const std::vector<Tensor>& in) {
    const Tensor ms = mean(mul(in[0], in[0]), {-1}, true);
    return mul(div(in[0], sqrt(add_scalar(ms, 1e-6f))), in[1]);
  };
  const GradcheckResult r = gradcheck(rms_norm, {x, w});
  BOOST_TEST(r.ok, r.report);
}

// The inputs are perturbed in place and restored: a check leaves them as they were.
BOOST_AUTO_TEST_CASE(gradcheck_restores_its_inputs) {
  Generator gen(5);
  Tensor x = randn({3, 4}, gen, 1.0f, true);
  const std::vector<float> before(x.data(), x.data() + x.numel());
  (void)gradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]); }, {x});
  BOOST_TEST(std::vector<float>(x.data(), x.data() + x.numel()) == before,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
