// micrograd's demo in tapegrad: a two-layer MLP learns to tell two interleaved half-moons
// apart, with the autograd API alone (tensors, ops, a Module, Adam).
#include <cmath>
#include <cstdio>
#include <vector>

#include "nn/linear.hpp"
#include "optim/optimizer.hpp"

using namespace tg;

// Two half-moons with noise: class 0 above, class 1 below and shifted.
void make_moons(size_t n, Generator& gen, std::vector<float>& points,
                std::vector<int32_t>& labels) {
  for (size_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % 2);
    const float angle = static_cast<float>(M_PI) * gen.uniform();
    const float x = label == 0 ? std::cos(angle) : 1.0f - std::cos(angle);
    const float y = label == 0 ? std::sin(angle) : 0.5f - std::sin(angle);
    points.push_back(x + 0.1f * gen.normal());
    points.push_back(y + 0.1f * gen.normal());
    labels.push_back(label);
  }
}

struct MLP : nn::Module {
  std::shared_ptr<nn::Linear> l1, l2, l3;
  explicit MLP(Generator& gen) {
    l1 = register_module("l1", std::make_shared<nn::Linear>(2, 16, gen));
    l2 = register_module("l2", std::make_shared<nn::Linear>(16, 16, gen));
    l3 = register_module("l3", std::make_shared<nn::Linear>(16, 2, gen));
  }
  Tensor forward(const Tensor& x) const {
    return l3->forward(tanh(l2->forward(tanh(l1->forward(x)))));
  }
};

int main() {
  Generator gen(42);
  std::vector<float> points;
  std::vector<int32_t> labels;
  const size_t n = 200;
  make_moons(n, gen, points, labels);
  const Tensor x = Tensor::from_vector({n, 2}, points);
  const Ids y({n}, labels);

  MLP model(gen);
  optim::Adam opt(optim::single_group(model), {.lr = 0.05f}, /*decoupled=*/false);
  std::printf("%zu parameters\n", model.num_parameters());
  float loss_value = 0.0f;
  for (int step = 1; step <= 300; ++step) {
    opt.zero_grad();
    const Tensor loss = cross_entropy(model.forward(x), y);
    backward(loss);
    opt.step();
    loss_value = loss.item();
    if (step == 1 || step % 100 == 0) std::printf("step %3d  loss %.4f\n", step, loss_value);
  }

  NoGrad no_grad;
  const Tensor logits = model.forward(x);
  size_t correct = 0;
  for (size_t i = 0; i < n; ++i) {
    const int predicted = logits.data()[2 * i + 1] > logits.data()[2 * i] ? 1 : 0;
    correct += predicted == labels[i];
  }
  std::printf("accuracy %.3f\n", static_cast<double>(correct) / n);
  return 0;
}
