// Testing ops and layers (including your own): a finite-difference gradient check, and an
// element-wise comparison with reference values (e.g. PyTorch's, read with load_safetensors).
//
// It forms the scalar L = sum(f(inputs) * W) with a fixed random W, gets dL/dx from
// backward(), and compares every element with the central difference
// (L(x + h) - L(x - h)) / 2h. L is accumulated in double so that the only float error is
// the op's own. The inputs are perturbed in place, one element at a time, and restored: so a
// model's loss can be checked against its parameters by passing the parameter tensors
// themselves (f reads them through the model, not through its argument).
//
// h is step x max(|x|, the input's RMS): relative to each element and, for elements near
// zero, to the tensor's own scale (an absolute floor of 1 was too coarse for inputs of std
// 0.05). Tensors are float32, so the finite difference is only as good as the rounding of f's
// output allows (PyTorch's gradcheck works in float64): an element is compared at h and at
// h / 10, and passes if either agrees; when neither does and the two numeric estimates
// disagree with each other, the report says the numeric side is unreliable there and to try
// another `step`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg {

struct GradcheckOptions {
  float step = 1e-2f;  // h relative to max(|x|, RMS of the input): truncation against rounding
  double atol = 1e-3;
  double rtol = 1e-2;
  uint64_t seed = 1234;  // for the projection W
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0.0;
  std::string report;  // the worst mismatch, or a summary
};

// f must be deterministic (re-seed any generator inside it). Only inputs that require a
// gradient are checked.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

// Element-wise |got - want| <= atol + rtol * |want|, with the largest difference and the
// first failing element; -inf == -inf counts as equal, NaN never does.
struct Comparison {
  bool ok;
  double max_abs_diff;
  std::string where;
};
Comparison compare(const Array& got, const Array& want, double atol, double rtol);

}  // namespace tg
