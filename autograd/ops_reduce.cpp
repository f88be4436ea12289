// Reductions. sum walks the input with the output's strides in the input's shape (0 on the
// reduced axes), so the forward adds into the output and the backward broadcasts back with
// the same map.
#include <algorithm>

#include "autograd/ops.hpp"
#include "autograd/strided.hpp"
#include "autograd/tape.hpp"

namespace tg {

namespace {

struct Reduction {
  Shape keep_shape;  // input shape with reduced axes set to 1
  Shape out_shape;   // keep_shape, or without the reduced axes
  size_t count = 1;  // elements folded into each output
};

Reduction plan(const Shape& in, const std::vector<int>& axes, bool keepdim, const char* op) {
  std::vector<bool> reduce(in.size(), axes.empty());
  for (int a : axes) {
    const size_t d = detail::normalize_axis(a, in.size(), op);
    if (reduce[d])
      throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(a) + " repeated");
    reduce[d] = true;
  }
  Reduction r;
  for (size_t d = 0; d < in.size(); ++d) {
    r.keep_shape.push_back(reduce[d] ? 1 : in[d]);
    if (reduce[d]) r.count *= in[d];
    if (!reduce[d] || keepdim) r.out_shape.push_back(reduce[d] ? 1 : in[d]);
  }
  return r;
}

Tensor sum_scaled(const char* op, const Tensor& x, const std::vector<int>& axes, bool keepdim,
                  bool average) {
  const Shape in_shape = x.shape();
  const Reduction r = plan(in_shape, axes, keepdim, op);
  const float scale = average ? 1.0f / static_cast<float>(r.count) : 1.0f;
  const detail::Strides to_out = detail::broadcast_strides(r.keep_shape, in_shape);
  std::vector<double> acc(numel(r.out_shape), 0.0);  // double: long sums stay accurate
  const float* src = x.data();
  detail::for_each_strided<1>(in_shape, {&to_out}, [&](size_t i, size_t o) { acc[o] += src[i]; });
  Tensor out = Tensor::empty(r.out_shape);
  for (size_t i = 0; i < acc.size(); ++i) out.data()[i] = static_cast<float>(acc[i] * scale);
  if (!needs_grad({&x})) return out;
  record(op, {x}, out,
         [x = x.without_data(), out = out.without_data(), in_shape, to_out, scale]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           detail::for_each_strided<1>(in_shape, {&to_out},
                                       [&](size_t i, size_t o) { gx[i] += g[o] * scale; });
         });
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  return sum_scaled("sum", x, axes, keepdim, false);
}

Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  return sum_scaled("mean", x, axes, keepdim, true);
}

Tensor max(const Tensor& x, int axis, bool keepdim) {
  const Shape in_shape = x.shape();
  const size_t a = detail::normalize_axis(axis, in_shape.size(), "max");
  const detail::AxisSplit s = detail::split_at(in_shape, a);
  if (s.extent == 0)
    throw std::invalid_argument("max: axis " + std::to_string(axis) + " of shape " +
                                to_string(in_shape) + " is empty");
  Shape out_shape = in_shape;
  if (keepdim)
    out_shape[a] = 1;
  else
    out_shape.erase(out_shape.begin() + static_cast<long>(a));
  Tensor out = Tensor::empty(out_shape);
  std::vector<size_t> argmax(s.outer * s.inner);
  const float* src = x.data();
  for (size_t o = 0; o < s.outer; ++o)
    for (size_t i = 0; i < s.inner; ++i) {
      const float* base = src + o * s.extent * s.inner + i;
      size_t best = 0;
      for (size_t k = 1; k < s.extent; ++k)
        if (base[k * s.inner] > base[best * s.inner]) best = k;
      argmax[o * s.inner + i] = best;
      out.data()[o * s.inner + i] = base[best * s.inner];
    }
  if (!needs_grad({&x})) return out;
  record("max", {x}, out,
         [x = x.without_data(), out = out.without_data(), s, argmax = std::move(argmax)]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           for (size_t o = 0; o < s.outer; ++o)
             for (size_t i = 0; i < s.inner; ++i)
               gx[(o * s.extent + argmax[o * s.inner + i]) * s.inner + i] += g[o * s.inner + i];
         });
  return out;
}

}  // namespace tg
