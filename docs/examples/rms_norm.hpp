// BEGIN README EXAMPLE
// RMSNorm (Zhang & Sennrich 2019), written outside the library: y = x / rms(x) * weight,
// rms(x) = sqrt(mean(x^2) + eps) over the last dimension.
#pragma once

#include <cmath>
#include <vector>

#include "autograd/autograd.hpp"
#include "nn/module.hpp"

namespace example {

using namespace tg;

// The op: forward, then (only if someone needs gradients) its backward on the tape.
inline Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps = 1e-6f) {
  const size_t width = x.size(-1), rows = x.numel() / width;
  if (weight.shape() != Shape{width})
    throw std::invalid_argument("rms_norm: weight " + to_string(weight.shape()) + " must be [" +
                                std::to_string(width) + "] for input " + to_string(x.shape()));
  Tensor out = Tensor::empty(x.shape());
  std::vector<float> inv_rms(rows);  // saved for backward
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * width;
    double squares = 0.0;
    for (size_t j = 0; j < width; ++j) squares += double(row[j]) * row[j];
    inv_rms[r] = 1.0f / std::sqrt(float(squares / width) + eps);
    for (size_t j = 0; j < width; ++j) out.data()[r * width + j] = row[j] * inv_rms[r] * weight.data()[j];
  }
  if (!needs_grad({&x, &weight})) return out;
  record("rms_norm", {x, weight}, out, [x, weight, out, rows, width, inv_rms]() {
    const float* g = out.grad().data();
    for (size_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * width;
      const float* grow = g + r * width;
      const float s = inv_rms[r];
      double dot = 0.0;  // sum_k g_k w_k x_k
      for (size_t k = 0; k < width; ++k) dot += double(grow[k]) * weight.data()[k] * row[k];
      if (x.requires_grad()) {
        float* gx = x.grad_data() + r * width;
        const float c = float(dot) * s * s * s / float(width);
        for (size_t j = 0; j < width; ++j) gx[j] += s * weight.data()[j] * grow[j] - c * row[j];
      }
      if (weight.requires_grad())
        for (size_t j = 0; j < width; ++j) weight.grad_data()[j] += grow[j] * row[j] * s;
    }
  });
  return out;
}

// The layer: owns its parameter, registered under a name so optimizers and checkpoints see it.
class RMSNorm : public nn::Module {
 public:
  explicit RMSNorm(size_t dim, float eps = 1e-6f)
      : weight_(register_parameter("weight", Tensor::full({dim}, 1.0f, true))), eps_(eps) {}
  Tensor forward(const Tensor& x) const { return rms_norm(x, weight_, eps_); }

 private:
  Tensor weight_;
  float eps_;
};

}  // namespace example
// END README EXAMPLE
