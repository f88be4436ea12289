// Tensor: a float32, contiguous, row-major array of any rank, with an optional gradient.
//
// A Tensor is a handle: copying it shares the storage (like a PyTorch tensor or a
// shared_ptr). Use clone() for an independent copy. Storage is an xt::xarray<float>, so
// xtensor expressions can read and write it through array().
//
// The values live as long as a handle that holds them; without_data() gives a handle that
// routes gradients (shape, grad, identity) but does not keep the values alive, the way
// flashlight's Variable::withoutData does. The tape keeps its nodes' inputs and outputs that
// way, and an op's backward holds with data only the tensors whose values it reads, so an
// activation no backward reads is freed as soon as the forward pass drops it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace tg {

using Shape = std::vector<size_t>;
using Array = xt::xarray<float>;  // row-major and contiguous by construction

size_t numel(const Shape& shape);
std::string to_string(const Shape& shape);

// The gradient of an embedding table that stays sparse: only the rows that were looked up,
// duplicates summed. values has shape [rows.size(), dim]; rows is sorted and unique.
struct SparseGrad {
  std::vector<int32_t> rows;
  Array values;
};

struct TensorImpl {
  Array data;
  std::optional<Array> grad;                // absent until a gradient arrives
  std::unique_ptr<SparseGrad> sparse_grad;  // only from sparse embedding lookups
  bool requires_grad = false;
  std::string name;
  // Handles that keep `data`; when the last goes, data is freed and its shape kept here.
  std::atomic<long> data_holders{0};
  std::optional<Shape> released_shape;

  TensorImpl();
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  // Number of TensorImpl objects alive in the process: lets tests prove the tape frees graphs.
  static long live_count();
};

class Tensor {
 public:
  Tensor() = default;  // undefined (null) tensor, e.g. an absent bias
  explicit Tensor(Array data, bool requires_grad = false, std::string name = "");
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  static Tensor empty(const Shape& shape);  // uninitialised values
  static Tensor zeros(const Shape& shape, bool requires_grad = false);
  static Tensor full(const Shape& shape, float value, bool requires_grad = false);
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values,
                            bool requires_grad = false);
  static Tensor scalar(float value, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  Shape shape() const;
  size_t dim() const;
  size_t size(int axis) const;  // negative axes count from the end
  size_t numel() const;
  float* data();
  const float* data() const;
  float item() const;  // the value of a one-element tensor
  Array& array();
  const Array& array() const;

  bool requires_grad() const;
  Tensor& set_requires_grad(bool value);
  const std::string& name() const;
  Tensor& set_name(std::string name);

  // Gradients. has_grad() is true once backward wrote a dense or a sparse gradient.
  bool has_grad() const;
  bool has_dense_grad() const;
  const Array& grad() const;  // the dense part; throws if there is none
  // Gradient accumulation goes through const handles: a Tensor is a handle, like shared_ptr.
  float* grad_data() const;  // dense gradient buffer, allocated as zeros on first use
  // The dense gradient buffer for a product that writes every element, C = A B + beta C: on
  // first use allocated without the zero fill, with beta 0 (overwrite); later beta 1 (add).
  struct GradTarget {
    float* data;
    float beta;
  };
  GradTarget grad_target() const;
  // grad += scale * values (numel() floats). The first contribution is written straight into
  // a new buffer: no zero fill, no second pass (the output layer's [V, C] gradient).
  void add_to_grad(const float* values, float scale) const;
  const SparseGrad* sparse_grad() const;
  SparseGrad& sparse_grad_mut() const;  // created empty on first use
  Array dense_grad() const;             // dense part plus sparse rows, as one dense array
  void zero_grad();                     // drops both parts (PyTorch's set_to_none)

  Tensor clone() const;  // deep copy of the values: a new leaf, no gradient, not on the tape

  // The same tensor (shape, gradient, identity) through a handle that does not keep its
  // values alive: reading them through it throws. For what an op's backward saves when it
  // needs a tensor's gradient but not its values.
  Tensor without_data() const;
  bool holds_data() const { return holds_data_; }
  // Whether the values still exist (some handle holding data is alive).
  bool values_alive() const;

  TensorImpl* impl() const { return impl_.get(); }

 private:
  TensorImpl& checked() const;
  TensorImpl& checked_data() const;  // also throws if this handle does not hold the values
  void hold();
  void release();
  std::shared_ptr<TensorImpl> impl_;
  bool holds_data_ = true;
};

// Integer token ids (PyTorch's LongTensor role). Never differentiable.
struct Ids {
  Shape shape;
  std::vector<int32_t> values;

  Ids() = default;
  Ids(Shape shape, std::vector<int32_t> values);  // throws if sizes disagree
  size_t numel() const { return values.size(); }
};

}  // namespace tg
