// LayerNorm over the last dimension, with a learned scale (1) and shift (0).
#pragma once

#include "nn/module.hpp"

namespace tg::nn {

class LayerNorm : public Layer {
 public:
  explicit LayerNorm(size_t dim, float eps = 1e-5f)
      : weight_(register_parameter("weight", Tensor::full({dim}, 1.0f, true), ParamRole::norm)),
        bias_(register_parameter("bias", Tensor::zeros({dim}, true), ParamRole::norm)),
        eps_(eps) {}
  Tensor forward(const Tensor& x) const override { return layer_norm(x, weight_, bias_, eps_); }

 private:
  Tensor weight_, bias_;
  float eps_;
};

}  // namespace tg::nn
