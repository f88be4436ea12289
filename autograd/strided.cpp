#include "autograd/strided.hpp"

namespace tg::detail {

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  size_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const size_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument(std::string(op) + ": shapes " + to_string(a) + " and " +
                                  to_string(b) + " cannot be broadcast together (dimension " +
                                  std::to_string(i) + ": " + std::to_string(da) + " vs " +
                                  std::to_string(db) + ")");
    out[i] = std::max(da, db);
  }
  return out;
}

Strides broadcast_strides(const Shape& in, const Shape& out) {
  const Strides own = contiguous_strides(in);
  Strides strides(out.size(), 0);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) strides[lead + i] = in[i] == 1 ? 0 : own[i];
  return strides;
}

size_t normalize_axis(int axis, size_t rank, const char* op) {
  const long r = static_cast<long>(rank);
  const long a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw std::out_of_range(std::string(op) + ": axis " + std::to_string(axis) +
                            " is out of range for a tensor of rank " + std::to_string(rank));
  return static_cast<size_t>(a);
}

AxisSplit split_at(const Shape& shape, size_t axis) {
  AxisSplit r;
  for (size_t d = 0; d < axis; ++d) r.outer *= shape[d];
  r.extent = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) r.inner *= shape[d];
  return r;
}

}  // namespace tg::detail
