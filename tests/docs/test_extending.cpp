// docs/extending.md's example layer: gradient check, PyTorch parity, and training with it.
#include <boost/test/unit_test.hpp>

#include "autograd/op_cases.hpp"
#include "docs/examples/rms_norm.hpp"
#include "nn/linear.hpp"
#include "optim/optimizer.hpp"

using namespace tg;

BOOST_AUTO_TEST_SUITE(docs_extending)

BOOST_AUTO_TEST_CASE(rms_norm_gradient_check) {
  Generator gen(1);
  Tensor x = randn({3, 5}, gen, 1.0f, true), w = rand_uniform({5}, gen, 0.5f, 1.5f, true);
  const GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return example::rms_norm(in[0], in[1]); }, {x, w});
  BOOST_TEST(r.ok, r.report);
}

BOOST_AUTO_TEST_CASE(rms_norm_matches_pytorch) {
  const TensorFile g = load_safetensors(TAPEGRAD_GOLDEN_DIR "/extending.safetensors");
  Tensor x = g.tensor("rms_norm/x").clone().set_requires_grad(true), w = g.tensor("rms_norm/w").clone().set_requires_grad(true);
  const Tensor out = example::rms_norm(x, w);
  backward(out, g.tensor("rms_norm/upstream"));
  for (const auto& [name, got] : {std::pair{"out", out.array()}, std::pair{"grad_x", x.grad()}, std::pair{"grad_w", w.grad()}}) {
    const auto c = compare(got, g.tensor(std::string("rms_norm/") + name).array(), 1e-5, 1e-4);
    BOOST_TEST_MESSAGE(name << ": max |diff| = " << c.max_abs_diff);
    BOOST_TEST(c.ok, name << " differs at " << c.where);
  }
}

BOOST_AUTO_TEST_CASE(a_model_using_the_layer_trains) {
  struct Tiny : nn::Module {
    std::shared_ptr<example::RMSNorm> norm = register_module("norm", std::make_shared<example::RMSNorm>(8));
    std::shared_ptr<nn::Linear> head;
    explicit Tiny(Generator& gen) { head = register_module("head", std::make_shared<nn::Linear>(8, 3, gen)); }
  };
  Generator gen(2);
  Tiny model(gen);
  BOOST_TEST(model.parameter("norm.weight").numel() == 8u);
  const Tensor x = randn({16, 8}, gen);
  std::vector<int32_t> t(16);
  for (auto& v : t) v = static_cast<int32_t>(gen.below(3));
  optim::Adam opt(optim::single_group(model), {.lr = 0.05f}, true);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    Tensor loss = cross_entropy(model.head->forward(model.norm->forward(x)), Ids({16}, t));
    backward(loss);
    opt.step();
    (step == 0 ? first : last) = loss.item();
  }
  BOOST_TEST(last < 0.7f * first);
}

BOOST_AUTO_TEST_SUITE_END()
