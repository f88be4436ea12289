// GPT and NPLM (tied and untied) against PyTorch: logits, loss, every parameter gradient and
// ten AdamW steps; finite-difference checks of the whole models.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "autograd/op_cases.hpp"
#include "nn/model_cases.hpp"
#include "optim/optimizer.hpp"

using namespace tg;
using namespace tg::testing;

namespace {
const std::vector<std::string> kModels = {"gpt_untied", "gpt_tied", "nplm_direct", "nplm_tied"};

}  // namespace

BOOST_AUTO_TEST_SUITE(nn_models)

BOOST_DATA_TEST_CASE(model_matches_pytorch, boost::unit_test::data::make(kModels), name) {
  auto model = golden_model(name);
  const TensorFile& g = golden_models();
  const Ids ids = g.id_array(name + "/ids"), targets = g.id_array(name + "/targets");
  const Tensor logits = model->logits(ids);
  check_close(name + " logits", logits.array(), g.tensor(name + "/logits").array(), 1e-5, 1e-4);
  const Tensor loss = cross_entropy(logits, targets);
  check_close(name + " loss", loss.array(), g.tensor(name + "/loss").array(), 1e-6, 1e-5);
  backward(loss);
  for (const auto& [pname, p] : model->named_parameters())
    check_close(name + " grad " + pname, p.dense_grad(), g.tensor(name + "/grad/" + pname).array(),
                1e-5, 1e-3);
}

BOOST_DATA_TEST_CASE(ten_adamw_steps_match_pytorch, boost::unit_test::data::make(kModels), name) {
  auto model = golden_model(name);
  const TensorFile& g = golden_models();
  const Ids ids = g.id_array(name + "/ids"), targets = g.id_array(name + "/targets");
  optim::Adam opt(optim::decay_groups(*model, 0.1f), {.lr = 1e-2f}, /*decoupled=*/true);
  const Tensor& want = g.tensor(name + "/adamw_losses");
  for (size_t step = 0; step < 10; ++step) {
    opt.zero_grad();
    const Tensor loss = model->loss(ids, targets);
    backward(loss);
    opt.step();
    BOOST_TEST_MESSAGE(name << " step " << step << ": loss " << loss.item() << " (PyTorch "
                            << want.data()[step] << ")");
    BOOST_TEST(loss.item() == want.data()[step], boost::test_tools::tolerance(2e-5f));
  }
}

BOOST_DATA_TEST_CASE(model_gradient_matches_finite_differences,
                     boost::unit_test::data::make(kModels), name) {
  auto model = golden_model(name);
  const TensorFile& g = golden_models();
  const Ids ids = g.id_array(name + "/ids"), targets = g.id_array(name + "/targets");
  const auto params = model->parameters();
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>&) { return model->loss(ids, targets); }, params);
  BOOST_TEST_MESSAGE(name << ": " << r.report);
  BOOST_TEST(r.ok, name << ": " << r.report);
}

BOOST_AUTO_TEST_SUITE_END()
