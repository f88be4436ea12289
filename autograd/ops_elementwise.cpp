// Element-wise ops. Binary ops broadcast like NumPy; their backward sums the output gradient
// over the broadcast dimensions, which falls out of walking the output with the inputs'
// broadcast strides and adding into each input's gradient at its offset.
#include <cmath>

#include "autograd/ops.hpp"
#include "autograd/parallel.hpp"
#include "autograd/simd_kernels.hpp"
#include "autograd/strided.hpp"
#include "autograd/tape.hpp"

namespace tg {

namespace {

using detail::for_each_strided;
using detail::Strides;

// Below this many elements a loop stays on one thread: waking the others costs more.
constexpr size_t kElementGrain = 16384;

// forward(x, y) -> z; grad_a(g, x, y, z) and grad_b(g, x, y, z) are the contributions of
// output gradient g to each input.
template <class Fwd, class GradA, class GradB>
Tensor binary_op(const char* op, const Tensor& a, const Tensor& b, Fwd forward, GradA grad_a,
                 GradB grad_b) {
  const Shape shape = detail::broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape);
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  const bool same = a.shape() == b.shape();
  const Strides sa = detail::broadcast_strides(a.shape(), shape);
  const Strides sb = detail::broadcast_strides(b.shape(), shape);
  if (same) {
    detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
      for (size_t i = first; i < last; ++i) z[i] = forward(x[i], y[i]);
    });
  } else {
    for_each_strided<2>(shape, {&sa, &sb},
                        [&](size_t i, size_t ia, size_t ib) { z[i] = forward(x[ia], y[ib]); });
  }
  if (!needs_grad({&a, &b})) return out;
  record(op, {a, b}, out, [a, b, out, sa, sb, shape, grad_a, grad_b]() mutable {
    const float* g = out.grad().data();
    const float* x = a.data();
    const float* y = b.data();
    const float* z = out.data();
    if (a.shape() == shape &&
        b.shape() == shape) {  // no broadcasting (a residual sum): flat and parallel
      float* ga = a.requires_grad() ? a.grad_data() : nullptr;
      float* gb = b.requires_grad() ? b.grad_data() : nullptr;
      detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
        for (size_t i = first; i < last; ++i) {
          if (ga) ga[i] += grad_a(g[i], x[i], y[i], z[i]);
          if (gb) gb[i] += grad_b(g[i], x[i], y[i], z[i]);
        }
      });
      return;
    }
    if (a.requires_grad()) {
      float* ga = a.grad_data();
      for_each_strided<2>(shape, {&sa, &sb}, [&](size_t i, size_t ia, size_t ib) {
        ga[ia] += grad_a(g[i], x[ia], y[ib], z[i]);
      });
    }
    if (b.requires_grad()) {
      float* gb = b.grad_data();
      for_each_strided<2>(shape, {&sa, &sb}, [&](size_t i, size_t ia, size_t ib) {
        gb[ib] += grad_b(g[i], x[ia], y[ib], z[i]);
      });
    }
  });
  return out;
}

// forward(x) -> y; derivative(x, y) = dy/dx.
template <class Fwd, class Deriv>
Tensor unary_op(const char* op, const Tensor& in, Fwd forward, Deriv derivative) {
  Tensor out = Tensor::empty(in.shape());
  const float* x = in.data();
  float* y = out.data();
  detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) y[i] = forward(x[i]);
  });
  if (!needs_grad({&in})) return out;
  record(op, {in}, out, [in, out, derivative]() mutable {
    const float* g = out.grad().data();
    const float* x = in.data();
    const float* y = out.data();
    float* gx = in.grad_data();
    detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
      for (size_t i = first; i < last; ++i) gx[i] += g[i] * derivative(x[i], y[i]);
    });
  });
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return binary_op(
      "add", a, b, [](float x, float y) { return x + y; },
      [](float g, float, float, float) { return g; },
      [](float g, float, float, float) { return g; });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary_op(
      "sub", a, b, [](float x, float y) { return x - y; },
      [](float g, float, float, float) { return g; },
      [](float g, float, float, float) { return -g; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary_op(
      "mul", a, b, [](float x, float y) { return x * y; },
      [](float g, float, float y, float) { return g * y; },
      [](float g, float x, float, float) { return g * x; });
}

Tensor div(const Tensor& a, const Tensor& b) {
  return binary_op(
      "div", a, b, [](float x, float y) { return x / y; },
      [](float g, float, float y, float) { return g / y; },
      [](float g, float, float y, float z) { return -g * z / y; });
}

Tensor neg(const Tensor& x) {
  return unary_op(
      "neg", x, [](float v) { return -v; }, [](float, float) { return -1.0f; });
}

Tensor add_scalar(const Tensor& x, float s) {
  return unary_op(
      "add_scalar", x, [s](float v) { return v + s; }, [](float, float) { return 1.0f; });
}

Tensor mul_scalar(const Tensor& x, float s) {
  return unary_op(
      "mul_scalar", x, [s](float v) { return v * s; }, [s](float, float) { return s; });
}

Tensor pow(const Tensor& x, float p) {
  return unary_op(
      "pow", x, [p](float v) { return std::pow(v, p); },
      [p](float v, float) { return p * std::pow(v, p - 1.0f); });
}

Tensor exp(const Tensor& x) {
  return unary_op(
      "exp", x, [](float v) { return std::exp(v); }, [](float, float y) { return y; });
}

Tensor log(const Tensor& x) {
  return unary_op(
      "log", x, [](float v) { return std::log(v); }, [](float v, float) { return 1.0f / v; });
}

Tensor sqrt(const Tensor& x) {
  return unary_op(
      "sqrt", x, [](float v) { return std::sqrt(v); }, [](float, float y) { return 0.5f / y; });
}

Tensor tanh(const Tensor& x) {
  return unary_op(
      "tanh", x, [](float v) { return std::tanh(v); }, [](float, float y) { return 1.0f - y * y; });
}

Tensor sigmoid(const Tensor& x) {
  return unary_op(
      "sigmoid", x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
      [](float, float y) { return y * (1.0f - y); });
}

Tensor relu(const Tensor& x) {
  return unary_op(
      "relu", x, [](float v) { return v > 0.0f ? v : 0.0f; },
      [](float v, float) { return v > 0.0f ? 1.0f : 0.0f; });
}

Tensor gelu(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
    detail::gelu_forward(x.data() + first, out.data() + first, last - first);
  });
  if (!needs_grad({&x})) return out;
  record("gelu", {x}, out, [x, out]() mutable {
    const float *src = x.data(), *g = out.grad().data();
    float* gx = x.grad_data();
    detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
      detail::gelu_backward(src + first, g + first, gx + first, last - first);
    });
  });
  return out;
}

}  // namespace tg
