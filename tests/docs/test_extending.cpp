// docs/extending.md's example (examples/swiglu_gpt/swiglu.hpp), checked as the page says:
// the op's and the layer's gradients against finite differences, the op against PyTorch,
// and the registered model through the library's Trainer. The example programs themselves
// are built and run by tests/examples.sh.
#include <boost/test/unit_test.hpp>

#include "examples/swiglu_gpt/swiglu.hpp"
#include "train/toy_data.hpp"
#include "train/trainer.hpp"

using namespace tg;

BOOST_AUTO_TEST_SUITE(docs_extending)

BOOST_AUTO_TEST_CASE(silu_gradient_check) {
  Generator gen(1);
  Tensor x = randn({4, 6}, gen, 2.0f, true);
  const GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return swiglu::silu(in[0]); }, {x});
  BOOST_TEST(r.ok, r.report);
}

BOOST_AUTO_TEST_CASE(silu_matches_pytorch) {
  const TensorFile g = load_safetensors(TAPEGRAD_GOLDEN_DIR "/extending.safetensors");
  Tensor x = g.tensor("silu/x").clone().set_requires_grad(true);
  const Tensor out = swiglu::silu(x);
  backward(out, g.tensor("silu/upstream"));
  for (const auto& [name, got] : {std::pair{"out", out.array()}, std::pair{"grad_x", x.grad()}}) {
    const Comparison c = compare(got, g.tensor(std::string("silu/") + name).array(), 1e-6, 1e-5);
    BOOST_TEST_MESSAGE(name << ": max |diff| = " << c.max_abs_diff);
    BOOST_TEST(c.ok, name << " differs at " << c.where);
  }
}

BOOST_AUTO_TEST_CASE(swiglu_layer_gradient_check) {
  Generator init(3);
  auto dropout_gen = std::make_shared<Generator>(4);
  const nn::BlockContext ctx{.d_model = 6,
                             .heads = 2,
                             .context = 8,
                             .index = 0,
                             .layers = 1,
                             .dropout = 0.0f,
                             .dropout_gen = dropout_gen,
                             .init = init};
  swiglu::SwiGLU layer(ctx, 8);
  Tensor x = randn({2, 3, 6}, init, 1.0f, true);
  std::vector<Tensor> inputs = {x};
  for (const Tensor& p : layer.parameters()) inputs.push_back(p);
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>&) { return layer.forward(x); }, inputs);
  BOOST_TEST(r.ok, r.report);
}

BOOST_AUTO_TEST_CASE(swiglu_gpt_trains_through_the_registry) {
  swiglu::register_swiglu_gpt();
  train::TrainConfig c;
  c.model.name = "swiglu-gpt";
  c.model.d_model = 24, c.model.layers = 1, c.model.heads = 2, c.model.context = 16,
  c.model.dropout = 0.0f;
  c.model.options["hidden"] = "40";
  c.batch = 8;
  c.epochs = 2;
  c.warmup = 2;
  c.lr = 3e-3f;
  c.quiet = true;
  train::Trainer trainer(c, testing::toy_data());
  BOOST_TEST(trainer.model().parameter("blocks.0.mlp.w1.weight").shape() == (Shape{40, 24}));
  const auto r = trainer.run();
  const auto& epochs = r.json["epochs"];
  BOOST_TEST(epochs.back()["train_loss"].get<double>() <
             epochs.front()["train_loss"].get<double>());
}

BOOST_AUTO_TEST_SUITE_END()
