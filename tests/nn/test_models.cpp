// GPT, NPLM, LSTM and GRU language models (tied and untied) against PyTorch: logits, loss, every
// parameter gradient and ten AdamW steps; finite-difference checks of the whole models.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>

#include "autograd/gradcheck.hpp"
#include "autograd/op_cases.hpp"
#include "nn/gpt.hpp"
#include "nn/model_cases.hpp"
#include "optim/optimizer.hpp"

using namespace tg;
using namespace tg::testing;

namespace {
const std::vector<std::string> kModels = {"gpt_untied", "gpt_tied",    "nplm_direct",
                                          "nplm_tied",  "lstm_untied", "gru_tied"};

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

// Position choices: a learned table (GPT-2's), rotary queries and keys, or none. Without a
// table the model has context x d_model fewer parameters and no "wpe"; every choice trains
// (its loss is finite and its gradient checks out).
BOOST_AUTO_TEST_CASE(gpt_positions_learned_rotary_or_none) {
  nn::GPTConfig config{
      .vocab = 11, .context = 6, .d_model = 8, .layers = 1, .heads = 2, .seed = 3, .parts = {}};
  const Ids ids({2, 6}, {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1});
  const Ids targets({2, 6}, {2, 3, 4, 5, 6, 7, 5, 4, 3, 2, 1, 0});
  std::map<nn::Positions, size_t> params;
  std::map<nn::Positions, float> losses;
  for (nn::Positions p : {nn::Positions::learned, nn::Positions::rotary, nn::Positions::none}) {
    config.positions = p;
    nn::GPT model(config);
    params[p] = model.num_parameters();
    bool has_wpe = false;
    for (const auto& [name, t] : model.named_parameters())
      has_wpe = has_wpe || name == "wpe.weight";
    BOOST_TEST(has_wpe == (p == nn::Positions::learned));
    losses[p] = model.loss(ids, targets).item();
    BOOST_TEST(std::isfinite(losses[p]));
    // The loss is one float32 number (about 2.4, rounded to 2.4e-7): at the default step its
    // central difference on the weights of std 0.02 is only good to about 2e-3, the
    // tolerance's size (a CPU's summation order decides which side it falls). Twice the step
    // halves that; five times brings in truncation error on the LayerNorm gains (near 1).
    GradcheckOptions options;
    options.step = 2e-2f;
    const GradcheckResult r =
        gradcheck([&](const std::vector<Tensor>&) { return model.loss(ids, targets); },
                  model.parameters(), options);
    BOOST_TEST(r.ok, base::name_of(nn::kPositionsNames, p) << ": " << r.report);
  }
  BOOST_TEST(params[nn::Positions::learned] - params[nn::Positions::rotary] == 6u * 8u);
  BOOST_TEST(params[nn::Positions::rotary] == params[nn::Positions::none]);
  // Rotary changes the attention, so the loss, though the parameters are the same draws.
  BOOST_TEST(losses[nn::Positions::rotary] != losses[nn::Positions::none]);
}

// Rotary embeddings make attention scores depend on the distance between positions only:
// q at m and k at n score the same as q at m + s and k at n + s.
BOOST_AUTO_TEST_CASE(rotary_scores_depend_on_the_distance_only) {
  Generator gen(8);
  const Tensor one = randn({1, 1, 12}, gen, 1.0f);  // q, k, v of one head of width 4
  // A sequence of 6 positions holding the same q and k at every position.
  std::vector<float> values;
  for (int t = 0; t < 6; ++t) values.insert(values.end(), one.data(), one.data() + 12);
  const Tensor qkv = Tensor::from_vector({1, 6, 12}, values);
  const Tensor r = rotary_qk(qkv, 1);
  const auto score = [&](int m, int n) {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += double(r.data()[m * 12 + i]) * r.data()[n * 12 + 4 + i];
    return s;
  };
  BOOST_TEST(score(3, 1) == score(5, 3), boost::test_tools::tolerance(1e-5));
  BOOST_TEST(score(2, 2) == score(0, 0), boost::test_tools::tolerance(1e-5));
  // Position 0 is not rotated, and v never is.
  for (int i = 0; i < 12; ++i) BOOST_TEST(r.data()[i] == qkv.data()[i]);
  for (int i = 8; i < 12; ++i) BOOST_TEST(r.data()[5 * 12 + i] == qkv.data()[5 * 12 + i]);
}

BOOST_AUTO_TEST_SUITE_END()
