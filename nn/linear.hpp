// Linear: y = x W^T + b, with W stored [out, in] as in PyTorch. One fused op (one sgemm).
#pragma once

#include "nn/module.hpp"

namespace tg::nn {

class Linear : public Layer {
 public:
  // PyTorch's default initialisation: W and b uniform in +-1/sqrt(in). `role` tells
  // init_gpt2 whether W projects into the residual stream (ParamRole::residual_weight).
  Linear(size_t in, size_t out, Generator& gen, bool bias = true,
         ParamRole role = ParamRole::weight);
  Tensor forward(const Tensor& x) const override { return linear(x, weight_, bias_); }

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias

 private:
  Tensor weight_, bias_;
};

}  // namespace tg::nn
