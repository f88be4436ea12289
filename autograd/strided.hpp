// Internal helpers for ops: walking an output shape while tracking the matching offsets of
// several operands laid out with other strides (broadcast dims have stride 0, permuted dims
// have permuted strides, reduced dims of an output have stride 0 in the input's shape).
// One mechanism serves broadcasting, its reducing backward, permute and sum.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg::detail {

using Strides = std::vector<size_t>;

Strides contiguous_strides(const Shape& shape);

// NumPy broadcasting of two shapes; throws naming `op` and both shapes when they do not fit.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides that read `in` (right-aligned) at each index of `out`; 0 where `in` broadcasts.
Strides broadcast_strides(const Shape& in, const Shape& out);

// Normalises a possibly negative axis; throws naming `op` when it is out of range.
size_t normalize_axis(int axis, size_t rank, const char* op);

// A shape seen around one axis: `outer` rows before it, its `extent`, `inner` elements after.
struct AxisSplit {
  size_t outer = 1, extent = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, size_t axis);

// Calls f(out_index, offset_0, ..., offset_{K-1}) for every index of `shape` in row-major
// order, where offset_k advances by strides[k]. The innermost dimension is a plain loop.
template <size_t K, class F>
void for_each_strided(const Shape& shape, const std::array<const Strides*, K>& strides, F&& f) {
  const size_t rank = shape.size();
  const size_t total = numel(shape);
  if (total == 0) return;
  if (rank == 0) {
    std::array<size_t, K> zero{};
    std::apply([&](auto... o) { f(size_t{0}, o...); }, zero);
    return;
  }
  const size_t inner = shape[rank - 1];
  std::array<size_t, K> inner_stride;
  for (size_t k = 0; k < K; ++k) inner_stride[k] = (*strides[k])[rank - 1];
  std::vector<size_t> index(rank, 0);
  std::array<size_t, K> base{};
  for (size_t out = 0; out < total; out += inner) {
    std::array<size_t, K> off = base;
    for (size_t j = 0; j < inner; ++j) {
      std::apply([&](auto... o) { f(out + j, o...); }, off);
      for (size_t k = 0; k < K; ++k) off[k] += inner_stride[k];
    }
    // Advance the outer multi-index (dims rank-2 .. 0) like an odometer.
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < K; ++k) base[k] += (*strides[k])[d];
      if (++index[d] < shape[d]) break;
      for (size_t k = 0; k < K; ++k) base[k] -= (*strides[k])[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace tg::detail
