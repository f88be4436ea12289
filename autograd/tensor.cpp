#include "autograd/tensor.hpp"

#include "autograd/parallel.hpp"
#include "base/machine.hpp"

#include <malloc.h>

#include <atomic>
#include <new>
#include <sstream>
#include <stdexcept>

namespace tg {

namespace {
std::atomic<long> g_live_impls{0};

// glibc serves blocks above 128 KiB with mmap and unmaps them on free, so every training step
// would fault its activations in afresh (the cost: benchmarks/HISTORY.md). Keeping
// freed blocks in the heap lets the next step reuse them: a caching allocator for free.
void keep_freed_memory_for_reuse() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
}

// std::bad_alloc that says what was asked for: a program's error line names the size instead
// of a bare "std::bad_alloc".
class TensorAllocationFailed : public std::bad_alloc {
 public:
  explicit TensorAllocationFailed(const Shape& shape)
      : text_("out of memory: a tensor of shape " + to_string(shape) + " (" +
              base::bytes_text(4.0 * static_cast<double>(numel(shape))) + ", " +
              base::bytes_text(static_cast<double>(base::physical_memory())) +
              " installed) could not be allocated") {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

Array make_array(const Shape& shape) {
  keep_freed_memory_for_reuse();
  try {
    return Array::from_shape(std::vector<size_t>(shape.begin(), shape.end()));
  } catch (const std::bad_alloc&) {
    throw TensorAllocationFailed(shape);
  }
}
}  // namespace

size_t numel(const Shape& shape) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

TensorImpl::TensorImpl() {
  ++g_live_impls;
}
TensorImpl::~TensorImpl() {
  --g_live_impls;
}
long TensorImpl::live_count() {
  return g_live_impls.load();
}

Tensor::Tensor(Array data, bool requires_grad, std::string name)
    : impl_(std::make_shared<TensorImpl>()) {
  impl_->data = std::move(data);
  impl_->requires_grad = requires_grad;
  impl_->name = std::move(name);
  hold();
}

Tensor::Tensor(const Tensor& other) : impl_(other.impl_), holds_data_(other.holds_data_) {
  hold();
}
Tensor::Tensor(Tensor&& other) noexcept
    : impl_(std::move(other.impl_)), holds_data_(other.holds_data_) {}
Tensor& Tensor::operator=(const Tensor& other) {
  if (this == &other) return *this;
  Tensor copy(other);
  return *this = std::move(copy);
}
Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this == &other) return *this;
  release();
  impl_ = std::move(other.impl_);
  holds_data_ = other.holds_data_;
  return *this;
}
Tensor::~Tensor() {
  release();
}

void Tensor::hold() {
  if (impl_ && holds_data_) impl_->data_holders.fetch_add(1, std::memory_order_relaxed);
}

void Tensor::release() {
  if (!impl_ || !holds_data_) return;
  if (impl_->data_holders.fetch_sub(1, std::memory_order_acq_rel) == 1 && impl_.use_count() > 1) {
    // Only handles without data remain: they need the shape (to size a gradient), not the
    // values.
    const auto& s = impl_->data.shape();
    impl_->released_shape = Shape(s.begin(), s.end());
    impl_->data = Array();
  }
  impl_.reset();
}

Tensor Tensor::without_data() const {
  Tensor t;
  t.impl_ = impl_;
  t.holds_data_ = false;
  return t;
}

bool Tensor::values_alive() const {
  return !checked().released_shape.has_value();
}

Tensor Tensor::empty(const Shape& shape) {
  return Tensor(make_array(shape));
}

Tensor Tensor::zeros(const Shape& shape, bool requires_grad) {
  return full(shape, 0.0f, requires_grad);
}

Tensor Tensor::full(const Shape& shape, float value, bool requires_grad) {
  Tensor t(make_array(shape), requires_grad);
  std::fill(t.data(), t.data() + t.numel(), value);
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values,
                           bool requires_grad) {
  if (values.size() != tg::numel(shape))
    throw std::invalid_argument("Tensor::from_vector: shape " + to_string(shape) + " holds " +
                                std::to_string(tg::numel(shape)) + " values but " +
                                std::to_string(values.size()) + " were given");
  Tensor t(make_array(shape), requires_grad);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::scalar(float value, bool requires_grad) {
  return full({}, value, requires_grad);
}

TensorImpl& Tensor::checked() const {
  if (!impl_) throw std::logic_error("use of an undefined Tensor");
  return *impl_;
}

TensorImpl& Tensor::checked_data() const {
  auto& t = checked();
  if (!holds_data_)
    throw std::logic_error("the values of tensor '" + t.name + "' of shape " + to_string(shape()) +
                           " were read through a handle from without_data(); an op's backward "
                           "that reads them must keep a handle with data");
  return t;
}

Shape Tensor::shape() const {
  const auto& t = checked();
  if (t.released_shape) return *t.released_shape;
  const auto& s = t.data.shape();
  return Shape(s.begin(), s.end());
}
size_t Tensor::dim() const {
  const auto& t = checked();
  return t.released_shape ? t.released_shape->size() : t.data.dimension();
}
size_t Tensor::size(int axis) const {
  const int rank = static_cast<int>(dim());
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw std::out_of_range("Tensor::size: axis " + std::to_string(axis) +
                            " is out of range for shape " + to_string(shape()));
  const auto& t = checked();
  return t.released_shape ? (*t.released_shape)[static_cast<size_t>(a)]
                          : t.data.shape()[static_cast<size_t>(a)];
}
size_t Tensor::numel() const {
  const auto& t = checked();
  return t.released_shape ? tg::numel(*t.released_shape) : t.data.size();
}
float* Tensor::data() {
  return checked_data().data.data();
}
const float* Tensor::data() const {
  return checked_data().data.data();
}
Array& Tensor::array() {
  return checked_data().data;
}
const Array& Tensor::array() const {
  return checked_data().data;
}

float Tensor::item() const {
  if (numel() != 1)
    throw std::invalid_argument("Tensor::item: tensor of shape " + to_string(shape()) + " has " +
                                std::to_string(numel()) + " values, not 1");
  return data()[0];
}

bool Tensor::requires_grad() const {
  return checked().requires_grad;
}
Tensor& Tensor::set_requires_grad(bool value) {
  checked().requires_grad = value;
  return *this;
}
const std::string& Tensor::name() const {
  return checked().name;
}
Tensor& Tensor::set_name(std::string name) {
  checked().name = std::move(name);
  return *this;
}

bool Tensor::has_grad() const {
  return has_dense_grad() || checked().sparse_grad != nullptr;
}
bool Tensor::has_dense_grad() const {
  return checked().grad.has_value();
}

const Array& Tensor::grad() const {
  const auto& t = checked();
  if (!t.grad)
    throw std::logic_error("tensor '" + t.name + "' of shape " + to_string(shape()) +
                           " has no dense gradient (backward has not reached it)");
  return *t.grad;
}

float* Tensor::grad_data() const {
  auto& t = checked();
  if (!t.grad) {
    t.grad = Array::from_shape(shape());
    float* g = t.grad->data();
    detail::parallel_for(t.grad->size(), 1 << 16,
                         [g](size_t first, size_t last) { std::fill(g + first, g + last, 0.0f); });
  }
  return t.grad->data();
}

Tensor::GradTarget Tensor::grad_target() const {
  auto& t = checked();
  if (t.grad) return {t.grad->data(), 1.0f};
  t.grad = Array::from_shape(shape());
  return {t.grad->data(), 0.0f};
}

void Tensor::add_to_grad(const float* values, float scale) const {
  auto& t = checked();
  const bool fresh = !t.grad;
  if (fresh) t.grad = Array::from_shape(shape());
  float* g = t.grad->data();
  detail::parallel_for(t.grad->size(), 1 << 14, [&](size_t first, size_t last) {
    if (fresh)
      for (size_t i = first; i < last; ++i) g[i] = scale * values[i];
    else
      for (size_t i = first; i < last; ++i) g[i] += scale * values[i];
  });
}

const SparseGrad* Tensor::sparse_grad() const {
  return checked().sparse_grad.get();
}

SparseGrad& Tensor::sparse_grad_mut() const {
  auto& t = checked();
  if (!t.sparse_grad) t.sparse_grad = std::make_unique<SparseGrad>();
  return *t.sparse_grad;
}

Array Tensor::dense_grad() const {
  const auto& t = checked();
  Array out = Array::from_shape(shape());
  if (t.grad)
    std::copy(t.grad->begin(), t.grad->end(), out.begin());
  else
    std::fill(out.begin(), out.end(), 0.0f);
  if (t.sparse_grad && !t.sparse_grad->rows.empty()) {
    const size_t width = numel() / shape()[0];
    const float* src = t.sparse_grad->values.data();
    for (size_t r = 0; r < t.sparse_grad->rows.size(); ++r) {
      float* dst = out.data() + static_cast<size_t>(t.sparse_grad->rows[r]) * width;
      for (size_t j = 0; j < width; ++j) dst[j] += src[r * width + j];
    }
  }
  return out;
}

void Tensor::zero_grad() {
  auto& t = checked();
  t.grad.reset();
  t.sparse_grad.reset();
}

Tensor Tensor::clone() const {
  Tensor copy(Array(checked_data().data));
  copy.impl_->name = impl_->name;
  return copy;
}

Ids::Ids(Shape shape_, std::vector<int32_t> values_)
    : shape(std::move(shape_)), values(std::move(values_)) {
  if (values.size() != tg::numel(shape))
    throw std::invalid_argument("Ids: shape " + to_string(shape) + " holds " +
                                std::to_string(tg::numel(shape)) + " ids but " +
                                std::to_string(values.size()) + " were given");
}

}  // namespace tg
