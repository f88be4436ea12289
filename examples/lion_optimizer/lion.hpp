// An optimizer written outside the library and selected by name in the library's programs
// (docs/extending.md walks through this file): Lion, "Symbolic Discovery of Optimization
// Algorithms" (Chen et al. 2023). Per parameter, with one moment m:
//   c = beta1 m + (1 - beta1) g            the update's direction is sign(c)
//   p = p (1 - lr wd) - lr sign(c)         decoupled weight decay, as AdamW
//   m = beta2 m + (1 - beta2) g            the moment is tracked with the slower beta2
// Every step moves every parameter by exactly lr (times the sign), so Lion wants a learning
// rate 3-10x smaller than AdamW's and a weight decay as much larger.
#pragma once

#include <memory>

#include "train/optimizers.hpp"

// BEGIN DOC EXAMPLE
namespace lion {

using namespace tg;

class Lion : public optim::Optimizer {
 public:
  Lion(std::vector<optim::ParamGroup> groups, float lr, float beta1, float beta2)
      : Optimizer(std::move(groups), lr), beta1_(beta1), beta2_(beta2) {}

  void step() override {
    NoGrad no_grad;
    ++steps_;
    for (auto& group : groups_)
      for (auto& p : group.params) {
        if (!p.tensor.has_grad()) continue;        // frozen, or not used this step
        const Array grad = p.tensor.dense_grad();  // a sparse table's rows, scattered
        const float* g = grad.data();
        float* m = slot("exp_avg", p).data();  // zeros at first; saved in checkpoints
        float* w = p.tensor.data();
        const float decay = 1.0f - lr_ * group.weight_decay;
        for (size_t i = 0; i < p.tensor.numel(); ++i) {
          const float c = beta1_ * m[i] + (1.0f - beta1_) * g[i];
          w[i] = w[i] * decay - lr_ * static_cast<float>((c > 0.0f) - (c < 0.0f));
          m[i] = beta2_ * m[i] + (1.0f - beta2_) * g[i];
        }
      }
  }
  const char* name() const override { return "lion"; }
  // The state a checkpoint holds for it: one moment per parameter.
  std::vector<std::string> state_kinds() const override { return {"exp_avg"}; }

 private:
  float beta1_, beta2_;
};

// "--optimizer lion" in every program of the main that calls this, with
// --optimizer-option beta1=0.9 --optimizer-option beta2=0.99 (the paper's defaults).
inline void register_lion() {
  train::register_optimizer(
      "lion",
      [](const train::OptimizerSpec& s) {
        // Matrices decay, biases and norms do not, the vocabulary's tables as --table-decay.
        return std::make_unique<Lion>(train::decay_groups(s), s.config.lr,
                                      train::optimizer_option(s, "beta1", 0.9f),
                                      train::optimizer_option(s, "beta2", 0.99f));
      },
      "Chen et al. 2023: sign of an interpolated momentum");
}

}  // namespace lion
// END DOC EXAMPLE
