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

// Which values an op's gradient formula reads: its first input (x), its second (y), its output
// (z). Backward keeps only those alive; the formula gets 0 for the others.
enum Reads : unsigned { kNone = 0, kX = 1, kY = 2, kZ = 4 };

template <unsigned kReads>
Tensor kept_if(unsigned flag, const Tensor& t) {
  return (kReads & flag) ? t : t.without_data();
}
template <unsigned kReads>
const float* values_if(unsigned flag, const Tensor& t) {
  return (kReads & flag) ? t.data() : nullptr;
}
// The value at p[i] where p was kept, else 0 (p is null and the formula ignores it).
inline float at(const float* p, size_t i) {
  return p ? p[i] : 0.0f;
}

// forward(x, y) -> z; grad_a(g, x, y, z) and grad_b(g, x, y, z) are the contributions of
// output gradient g to each input; kReads says which of x, y and z they read.
template <unsigned kReads, class Fwd, class GradA, class GradB>
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
  record(op, {a, b}, out,
         [a = kept_if<kReads>(kX, a), b = kept_if<kReads>(kY, b), out = kept_if<kReads>(kZ, out),
          sa, sb, shape, grad_a, grad_b]() mutable {
           const float* g = out.grad().data();
           const float* x = values_if<kReads>(kX, a);
           const float* y = values_if<kReads>(kY, b);
           const float* z = values_if<kReads>(kZ, out);
           if (a.shape() == shape &&
               b.shape() == shape) {  // no broadcasting (a residual sum): flat and parallel
             float* ga = a.requires_grad() ? a.grad_data() : nullptr;
             float* gb = b.requires_grad() ? b.grad_data() : nullptr;
             detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
               for (size_t i = first; i < last; ++i) {
                 if (ga) ga[i] += grad_a(g[i], at(x, i), at(y, i), at(z, i));
                 if (gb) gb[i] += grad_b(g[i], at(x, i), at(y, i), at(z, i));
               }
             });
             return;
           }
           if (a.requires_grad()) {
             float* ga = a.grad_data();
             for_each_strided<2>(shape, {&sa, &sb}, [&](size_t i, size_t ia, size_t ib) {
               ga[ia] += grad_a(g[i], at(x, ia), at(y, ib), at(z, i));
             });
           }
           if (b.requires_grad()) {
             float* gb = b.grad_data();
             for_each_strided<2>(shape, {&sa, &sb}, [&](size_t i, size_t ia, size_t ib) {
               gb[ib] += grad_b(g[i], at(x, ia), at(y, ib), at(z, i));
             });
           }
         });
  return out;
}

// forward(x) -> y; derivative(x, y) = dy/dx, reading x if kReads has kX and y if kZ.
template <unsigned kReads, class Fwd, class Deriv>
Tensor unary_op(const char* op, const Tensor& in, Fwd forward, Deriv derivative) {
  Tensor out = Tensor::empty(in.shape());
  const float* x = in.data();
  float* y = out.data();
  detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) y[i] = forward(x[i]);
  });
  if (!needs_grad({&in})) return out;
  record(op, {in}, out,
         [in = kept_if<kReads>(kX, in), out = kept_if<kReads>(kZ, out), derivative]() mutable {
           const float* g = out.grad().data();
           const float* x = values_if<kReads>(kX, in);
           const float* y = values_if<kReads>(kZ, out);
           float* gx = in.grad_data();
           detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
             for (size_t i = first; i < last; ++i) gx[i] += g[i] * derivative(at(x, i), at(y, i));
           });
         });
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return binary_op<kNone>(
      "add", a, b, [](float x, float y) { return x + y; },
      [](float g, float, float, float) { return g; },
      [](float g, float, float, float) { return g; });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary_op<kNone>(
      "sub", a, b, [](float x, float y) { return x - y; },
      [](float g, float, float, float) { return g; },
      [](float g, float, float, float) { return -g; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary_op<kX | kY>(
      "mul", a, b, [](float x, float y) { return x * y; },
      [](float g, float, float y, float) { return g * y; },
      [](float g, float x, float, float) { return g * x; });
}

Tensor div(const Tensor& a, const Tensor& b) {
  return binary_op<kY | kZ>(
      "div", a, b, [](float x, float y) { return x / y; },
      [](float g, float, float y, float) { return g / y; },
      [](float g, float, float y, float z) { return -g * z / y; });
}

Tensor neg(const Tensor& x) {
  return unary_op<kNone>(
      "neg", x, [](float v) { return -v; }, [](float, float) { return -1.0f; });
}

Tensor add_scalar(const Tensor& x, float s) {
  return unary_op<kNone>(
      "add_scalar", x, [s](float v) { return v + s; }, [](float, float) { return 1.0f; });
}

Tensor mul_scalar(const Tensor& x, float s) {
  return unary_op<kNone>(
      "mul_scalar", x, [s](float v) { return v * s; }, [s](float, float) { return s; });
}

Tensor pow(const Tensor& x, float p) {
  return unary_op<kX>(
      "pow", x, [p](float v) { return std::pow(v, p); },
      [p](float v, float) { return p * std::pow(v, p - 1.0f); });
}

Tensor exp(const Tensor& x) {
  return unary_op<kZ>(
      "exp", x, [](float v) { return std::exp(v); }, [](float, float y) { return y; });
}

Tensor log(const Tensor& x) {
  return unary_op<kX>(
      "log", x, [](float v) { return std::log(v); }, [](float v, float) { return 1.0f / v; });
}

Tensor sqrt(const Tensor& x) {
  return unary_op<kZ>(
      "sqrt", x, [](float v) { return std::sqrt(v); }, [](float, float y) { return 0.5f / y; });
}

Tensor tanh(const Tensor& x) {
  return unary_op<kZ>(
      "tanh", x, [](float v) { return std::tanh(v); }, [](float, float y) { return 1.0f - y * y; });
}

Tensor sigmoid(const Tensor& x) {
  return unary_op<kZ>(
      "sigmoid", x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
      [](float, float y) { return y * (1.0f - y); });
}

Tensor relu(const Tensor& x) {
  return unary_op<kX>(
      "relu", x, [](float v) { return v > 0.0f ? v : 0.0f; },
      [](float v, float) { return v > 0.0f ? 1.0f : 0.0f; });
}

Tensor gelu(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
    detail::gelu_forward(x.data() + first, out.data() + first, last - first);
  });
  if (!needs_grad({&x})) return out;
  record("gelu", {x}, out, [x, out = out.without_data()]() mutable {
    const float *src = x.data(), *g = out.grad().data();
    float* gx = x.grad_data();
    detail::parallel_for(out.numel(), kElementGrain, [&](size_t first, size_t last) {
      detail::gelu_backward(src + first, g + first, gx + first, last - first);
    });
  });
  return out;
}

}  // namespace tg
