// Shape and movement ops. Tensors are always contiguous, so these copy; their backward
// moves the gradient back through the inverse index map.
#include <algorithm>
#include <numeric>

#include "autograd/ops.hpp"
#include "autograd/strided.hpp"
#include "autograd/tape.hpp"

namespace tg {

using detail::AxisSplit;
using detail::split_at;

Tensor reshape(const Tensor& x, const std::vector<long>& shape) {
  Shape out_shape(shape.size());
  size_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw std::invalid_argument("reshape: invalid target dimension " + std::to_string(shape[i]) +
                                  " (only one -1 is allowed)");
    } else {
      out_shape[i] = static_cast<size_t>(shape[i]);
      known *= out_shape[i];
    }
  }
  if (inferred >= 0) out_shape[static_cast<size_t>(inferred)] = known ? x.numel() / known : 0;
  if (numel(out_shape) != x.numel())
    throw std::invalid_argument("reshape: cannot view " + to_string(x.shape()) + " (" +
                                std::to_string(x.numel()) + " elements) as " +
                                to_string(out_shape));
  Tensor out = Tensor::empty(out_shape);
  std::copy(x.data(), x.data() + x.numel(), out.data());
  if (!needs_grad({&x})) return out;
  record("reshape", {x}, out, [x = x.without_data(), out = out.without_data()]() mutable {
    const float* g = out.grad().data();
    float* gx = x.grad_data();
    for (size_t i = 0, n = x.numel(); i < n; ++i) gx[i] += g[i];
  });
  return out;
}

Tensor permute(const Tensor& x, const std::vector<int>& dims) {
  const Shape in_shape = x.shape();
  const size_t rank = in_shape.size();
  if (dims.size() != rank)
    throw std::invalid_argument("permute: " + std::to_string(dims.size()) +
                                " dims given for a tensor of shape " + to_string(in_shape));
  std::vector<bool> seen(rank, false);
  const detail::Strides own = detail::contiguous_strides(in_shape);
  Shape out_shape(rank);
  detail::Strides read(rank);  // stride in x of each output dimension
  for (size_t i = 0; i < rank; ++i) {
    const size_t d = detail::normalize_axis(dims[i], rank, "permute");
    if (seen[d])
      throw std::invalid_argument("permute: dimension " + std::to_string(d) + " repeated");
    seen[d] = true;
    out_shape[i] = in_shape[d];
    read[i] = own[d];
  }
  Tensor out = Tensor::empty(out_shape);
  const float* src = x.data();
  float* dst = out.data();
  detail::for_each_strided<1>(out_shape, {&read}, [&](size_t i, size_t o) { dst[i] = src[o]; });
  if (!needs_grad({&x})) return out;
  record("permute", {x}, out,
         [x = x.without_data(), out = out.without_data(), out_shape, read]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           detail::for_each_strided<1>(out_shape, {&read},
                                       [&](size_t i, size_t o) { gx[o] += g[i]; });
         });
  return out;
}

Tensor transpose(const Tensor& x, int dim0, int dim1) {
  const size_t rank = x.dim();
  std::vector<int> dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[detail::normalize_axis(dim0, rank, "transpose")],
            dims[detail::normalize_axis(dim1, rank, "transpose")]);
  return permute(x, dims);
}

namespace {

// Handles that route the parts' gradients without keeping their values (concat and stack's
// backward only copies gradient slices).
std::vector<Tensor> gradient_routes(const std::vector<Tensor>& xs) {
  std::vector<Tensor> routes;
  routes.reserve(xs.size());
  for (const auto& t : xs) routes.push_back(t.without_data());
  return routes;
}

// Elements [start, start + length) along `axis`, stored in the shape `out_shape` (narrow's, or
// unbind's with the axis removed): one copy, one tape node.
Tensor take_range(const char* op, const Tensor& x, size_t axis, size_t start, size_t length,
                  const Shape& out_shape) {
  const AxisSplit s = split_at(x.shape(), axis);
  Tensor out = Tensor::empty(out_shape);
  const size_t block = length * s.inner, in_row = s.extent * s.inner;
  for (size_t o = 0; o < s.outer; ++o)
    std::copy_n(x.data() + o * in_row + start * s.inner, block, out.data() + o * block);
  if (!needs_grad({&x})) return out;
  record(op, {x}, out,
         [x = x.without_data(), out = out.without_data(), s, start, block, in_row]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           for (size_t o = 0; o < s.outer; ++o)
             for (size_t j = 0; j < block; ++j)
               gx[o * in_row + start * s.inner + j] += g[o * block + j];
         });
  return out;
}

}  // namespace

Tensor narrow(const Tensor& x, int dim, size_t start, size_t length) {
  const Shape in_shape = x.shape();
  const size_t axis = detail::normalize_axis(dim, in_shape.size(), "narrow");
  if (start > in_shape[axis] || length > in_shape[axis] - start)
    throw std::out_of_range("narrow: range [" + std::to_string(start) + ", " +
                            std::to_string(start + length) + ") exceeds dimension " +
                            std::to_string(axis) + " of shape " + to_string(in_shape));
  Shape out_shape = in_shape;
  out_shape[axis] = length;
  return take_range("narrow", x, axis, start, length, out_shape);
}

std::vector<Tensor> chunk(const Tensor& x, size_t chunks, int dim) {
  const size_t axis = detail::normalize_axis(dim, x.dim(), "chunk");
  if (chunks == 0) throw std::invalid_argument("chunk: chunks must be positive");
  const size_t extent = x.shape()[axis], piece = (extent + chunks - 1) / chunks;
  std::vector<Tensor> pieces;
  for (size_t start = 0; start < extent; start += piece)
    pieces.push_back(narrow(x, static_cast<int>(axis), start, std::min(piece, extent - start)));
  return pieces;
}

std::vector<Tensor> unbind(const Tensor& x, int dim) {
  const size_t axis = detail::normalize_axis(dim, x.dim(), "unbind");
  Shape out_shape = x.shape();
  out_shape.erase(out_shape.begin() + static_cast<long>(axis));
  std::vector<Tensor> slices;
  for (size_t i = 0; i < x.shape()[axis]; ++i)
    slices.push_back(take_range("unbind", x, axis, i, 1, out_shape));
  return slices;
}

Tensor concat(const std::vector<Tensor>& xs, int dim) {
  if (xs.empty()) throw std::invalid_argument("concat: no tensors given");
  const Shape first = xs[0].shape();
  const size_t axis = detail::normalize_axis(dim, first.size(), "concat");
  Shape out_shape = first;
  out_shape[axis] = 0;
  for (const auto& t : xs) {
    Shape s = t.shape();
    const size_t extent = s.size() == first.size() ? s[axis] : 0;
    if (s.size() == first.size()) s[axis] = first[axis];
    if (s != first)
      throw std::invalid_argument("concat: shape " + to_string(t.shape()) + " does not match " +
                                  to_string(first) + " outside dimension " + std::to_string(axis));
    out_shape[axis] += extent;
  }
  const AxisSplit whole = split_at(out_shape, axis);
  Tensor out = Tensor::empty(out_shape);
  const size_t out_row = whole.extent * whole.inner;
  size_t offset = 0;  // elements into each output row where the current input starts
  std::vector<size_t> offsets;
  for (const auto& t : xs) {
    const size_t block = t.size(static_cast<int>(axis)) * whole.inner;
    for (size_t o = 0; o < whole.outer; ++o)
      std::copy_n(t.data() + o * block, block, out.data() + o * out_row + offset);
    offsets.push_back(offset);
    offset += block;
  }
  bool any = false;
  for (const auto& t : xs) any = any || needs_grad({&t});
  if (!any) return out;
  record("concat", xs, out,
         [xs = gradient_routes(xs), out = out.without_data(), offsets, whole, out_row,
          axis]() mutable {
           const float* g = out.grad().data();
           for (size_t i = 0; i < xs.size(); ++i) {
             if (!xs[i].requires_grad()) continue;
             const size_t block = xs[i].size(static_cast<int>(axis)) * whole.inner;
             float* gx = xs[i].grad_data();
             for (size_t o = 0; o < whole.outer; ++o)
               for (size_t j = 0; j < block; ++j)
                 gx[o * block + j] += g[o * out_row + offsets[i] + j];
           }
         });
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int dim) {
  if (xs.empty()) throw std::invalid_argument("stack: no tensors given");
  const Shape first = xs[0].shape();
  for (const auto& t : xs)
    if (t.shape() != first)
      throw std::invalid_argument("stack: shape " + to_string(t.shape()) + " does not match " +
                                  to_string(first) + " (every tensor must have one shape)");
  const size_t axis = detail::normalize_axis(dim, first.size() + 1, "stack");
  Shape out_shape = first;
  out_shape.insert(out_shape.begin() + static_cast<long>(axis), xs.size());
  // Each input is [outer, inner] around the new axis; output row o holds input i at i * inner.
  const AxisSplit s = split_at(out_shape, axis);
  Tensor out = Tensor::empty(out_shape);
  const size_t out_row = s.extent * s.inner;
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t o = 0; o < s.outer; ++o)
      std::copy_n(xs[i].data() + o * s.inner, s.inner, out.data() + o * out_row + i * s.inner);
  bool any = false;
  for (const auto& t : xs) any = any || needs_grad({&t});
  if (!any) return out;
  record("stack", xs, out,
         [xs = gradient_routes(xs), out = out.without_data(), s, out_row]() mutable {
           const float* g = out.grad().data();
           for (size_t i = 0; i < xs.size(); ++i) {
             if (!xs[i].requires_grad()) continue;
             float* gx = xs[i].grad_data();
             for (size_t o = 0; o < s.outer; ++o)
               for (size_t j = 0; j < s.inner; ++j)
                 gx[o * s.inner + j] += g[o * out_row + i * s.inner + j];
           }
         });
  return out;
}

}  // namespace tg
