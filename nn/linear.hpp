// Linear: y = x W^T + b, with W stored [out, in] as in PyTorch. One fused op (one sgemm).
#pragma once

#include "nn/module.hpp"

namespace tg::nn {

// What a Linear has besides its sizes: Linear(in, out, gen, {.bias = false}).
struct LinearOptions {
  bool bias = true;
  // Tells init_gpt2 whether W projects into the residual stream (ParamRole::residual_weight)
  // or onto the vocabulary (ParamRole::unembedding).
  ParamRole role = ParamRole::weight;
};

class Linear : public Layer {
 public:
  // PyTorch's default initialisation: W and b uniform in +-1/sqrt(in).
  Linear(size_t in, size_t out, Generator& gen, LinearOptions options = {});
  Tensor forward(const Tensor& x) const override { return linear(x, weight_, bias_); }

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias

 private:
  Tensor weight_, bias_;
};

}  // namespace tg::nn
