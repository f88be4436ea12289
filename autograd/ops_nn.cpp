// Neural-network ops, fused: each is one pass forward and one pass backward over contiguous
// memory instead of a chain of element-wise ops with a temporary per step.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "autograd/blas.hpp"
#include "autograd/ops.hpp"
#include "autograd/parallel.hpp"
#include "autograd/simd_kernels.hpp"
#include "autograd/strided.hpp"
#include "autograd/tape.hpp"

namespace tg {

namespace {

// Softmax or log-softmax along one axis of an [outer, extent, inner] view.
Tensor softmax_impl(const Tensor& x, int axis, bool log_space) {
  const char* op = log_space ? "log_softmax" : "softmax";
  const Shape shape = x.shape();
  const detail::AxisSplit s =
      detail::split_at(shape, detail::normalize_axis(axis, shape.size(), op));
  Tensor out = Tensor::empty(shape);
  const float* src = x.data();
  float* dst = out.data();
  if (s.inner == 1) {  // the usual case, a contiguous last axis: vectorised row kernels
    for (size_t o = 0; o < s.outer; ++o) {
      const float* row = src + o * s.extent;
      float* y = dst + o * s.extent;
      const float lse = detail::row_logsumexp(row, s.extent);
      if (log_space)
        for (size_t k = 0; k < s.extent; ++k) y[k] = row[k] - lse;
      else
        detail::row_exp_shifted(row, lse, y, s.extent);
    }
  } else
    for (size_t o = 0; o < s.outer; ++o)
      for (size_t i = 0; i < s.inner; ++i) {
        const size_t base = o * s.extent * s.inner + i;
        float top = -std::numeric_limits<float>::infinity();
        for (size_t k = 0; k < s.extent; ++k) top = std::max(top, src[base + k * s.inner]);
        double total = 0.0;
        for (size_t k = 0; k < s.extent; ++k) total += std::exp(src[base + k * s.inner] - top);
        const float log_total = static_cast<float>(std::log(total));
        for (size_t k = 0; k < s.extent; ++k) {
          const float shifted = src[base + k * s.inner] - top - log_total;
          dst[base + k * s.inner] = log_space ? shifted : std::exp(shifted);
        }
      }
  if (!needs_grad({&x})) return out;
  record(op, {x}, out, [x, out, s, log_space]() mutable {
    const float* g = out.grad().data();
    const float* y = out.data();
    float* gx = x.grad_data();
    if (s.inner == 1 && log_space) {
      for (size_t o = 0; o < s.outer; ++o) {
        const size_t base = o * s.extent;
        double total = 0.0;
        for (size_t k = 0; k < s.extent; ++k) total += g[base + k];
        for (size_t k = 0; k < s.extent; ++k) gx[base + k] += g[base + k];
        detail::row_add_scaled_exp(y + base, 0.0f, -static_cast<float>(total), gx + base, s.extent);
      }
      return;
    }
    for (size_t o = 0; o < s.outer; ++o)
      for (size_t i = 0; i < s.inner; ++i) {
        const size_t base = o * s.extent * s.inner + i;
        double dot = 0.0;  // softmax: sum(g * y); log-softmax: sum(g)
        for (size_t k = 0; k < s.extent; ++k) {
          const size_t j = base + k * s.inner;
          dot += log_space ? g[j] : g[j] * y[j];
        }
        const float d = static_cast<float>(dot);
        for (size_t k = 0; k < s.extent; ++k) {
          const size_t j = base + k * s.inner;
          gx[j] += log_space ? g[j] - std::exp(y[j]) * d : y[j] * (g[j] - d);
        }
      }
  });
  return out;
}

void check_ids(const char* op, const Ids& ids, size_t vocab, std::optional<int> ignored) {
  for (size_t i = 0; i < ids.values.size(); ++i) {
    const int32_t id = ids.values[i];
    if ((id < 0 || static_cast<size_t>(id) >= vocab) && id != ignored)
      throw std::out_of_range(std::string(op) + ": id " + std::to_string(id) + " at position " +
                              std::to_string(i) + " is outside [0, " + std::to_string(vocab) + ")");
  }
}

}  // namespace

Tensor softmax(const Tensor& x, int axis) {
  return softmax_impl(x, axis, false);
}
Tensor log_softmax(const Tensor& x, int axis) {
  return softmax_impl(x, axis, true);
}

namespace {

// Layer norm's row sums run in double, column by column: order-dependent, so a row's sum is
// one chain of adds, each waiting for the one before. kNormRows rows are summed side by side
// (their chains overlap); every row still adds its terms in the same order as alone.
constexpr size_t kNormRows = 4;

// Mean and 1 / std of the N rows starting at x.
template <size_t N>
void norm_stats(const float* x, size_t width, float eps, float* mean, float* rstd) {
  double m[N] = {}, v[N] = {};
  for (size_t j = 0; j < width; ++j)
    for (size_t k = 0; k < N; ++k) m[k] += x[k * width + j];
  for (size_t k = 0; k < N; ++k) m[k] /= static_cast<double>(width);
  for (size_t j = 0; j < width; ++j)
    for (size_t k = 0; k < N; ++k) v[k] += (x[k * width + j] - m[k]) * (x[k * width + j] - m[k]);
  for (size_t k = 0; k < N; ++k) {
    mean[k] = static_cast<float>(m[k]);
    rstd[k] = static_cast<float>(1.0 / std::sqrt(v[k] / static_cast<double>(width) + eps));
  }
}

// The input gradient of the N rows starting at x (and g, gx), added to gx: with
// norm = (x - mean) * rstd and dnorm = g * w,
// gx += rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)).
template <size_t N>
void norm_backward(const float* x, const float* g, const float* w, const float* mean,
                   const float* rstd, size_t width, float* gx) {
  double mean_dnorm[N] = {}, mean_dnorm_norm[N] = {};
  for (size_t j = 0; j < width; ++j)
    for (size_t k = 0; k < N; ++k) {
      const float dnorm = g[k * width + j] * w[j];
      mean_dnorm[k] += dnorm;
      mean_dnorm_norm[k] += dnorm * ((x[k * width + j] - mean[k]) * rstd[k]);
    }
  for (size_t k = 0; k < N; ++k) {
    const float a = static_cast<float>(mean_dnorm[k] / width);
    const float c = static_cast<float>(mean_dnorm_norm[k] / width);
    const float m = mean[k], s = rstd[k];  // locals: gx's stores cannot change them
    const float* __restrict xk = x + k * width;
    const float* __restrict gk = g + k * width;
    float* __restrict gxk = gx + k * width;
    for (size_t j = 0; j < width; ++j) gxk[j] += s * (gk[j] * w[j] - a - (xk[j] - m) * s * c);
  }
}

// One row's output: (x - mean) * rstd * w + b.
inline void norm_row(const float* __restrict x, float mean, float rstd, const float* w,
                     const float* b, size_t width, float* __restrict y) {
  for (size_t j = 0; j < width; ++j) y[j] = (x[j] - mean) * rstd * w[j] + b[j];
}

// The weight and bias gradients of columns [first, last) (either may be null), each a sum over
// the rows in row order, whatever the thread count.
void norm_param_grads(const float* x, const float* g, const float* mean, const float* rstd,
                      size_t rows, size_t width, size_t first, size_t last, float* __restrict gw,
                      float* __restrict gb) {
  for (size_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * width;
    const float* __restrict gr = g + r * width;
    const float m = mean[r], s = rstd[r];
    if (gw)
      for (size_t j = first; j < last; ++j) gw[j] += gr[j] * ((xr[j] - m) * s);
    if (gb)
      for (size_t j = first; j < last; ++j) gb[j] += gr[j];
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  const Shape shape = x.shape();
  if (shape.empty()) throw std::invalid_argument("layer_norm: input must have rank >= 1");
  const size_t width = shape.back(), rows = x.numel() / std::max<size_t>(width, 1);
  if (weight.shape() != Shape{width} || bias.shape() != Shape{width})
    throw std::invalid_argument("layer_norm: weight " + to_string(weight.shape()) + " and bias " +
                                to_string(bias.shape()) + " must both be [" +
                                std::to_string(width) + "] for input " + to_string(shape));
  Tensor out = Tensor::empty(shape);
  std::vector<float> mean(rows), rstd(rows);
  const float *src = x.data(), *w = weight.data(), *b = bias.data();
  float* dst = out.data();
  detail::parallel_for(rows, 16, [&](size_t first, size_t last) {
    size_t r = first;
    for (; r + kNormRows <= last; r += kNormRows)
      norm_stats<kNormRows>(src + r * width, width, eps, &mean[r], &rstd[r]);
    for (; r < last; ++r) norm_stats<1>(src + r * width, width, eps, &mean[r], &rstd[r]);
    for (r = first; r < last; ++r)
      norm_row(src + r * width, mean[r], rstd[r], w, b, width, dst + r * width);
  });
  if (!needs_grad({&x, &weight, &bias})) return out;
  record("layer_norm", {x, weight, bias}, out,
         [x, weight, bias = bias.without_data(), out = out.without_data(), rows, width,
          mean = std::move(mean), rstd = std::move(rstd)]() mutable {
           const float *g = out.grad().data(), *src = x.data(), *w = weight.data();
           float* gx = x.requires_grad() ? x.grad_data() : nullptr;
           float* gw = weight.requires_grad() ? weight.grad_data() : nullptr;
           float* gb = bias.requires_grad() ? bias.grad_data() : nullptr;
           // Input gradient by rows; weight and bias gradients, sums over rows, by columns,
           // so each column is summed in the same order whatever the thread count.
           if (gx)
             detail::parallel_for(rows, 16, [&](size_t first, size_t last) {
               size_t r = first;
               for (; r + kNormRows <= last; r += kNormRows)
                 norm_backward<kNormRows>(src + r * width, g + r * width, w, &mean[r], &rstd[r],
                                          width, gx + r * width);
               for (; r < last; ++r)
                 norm_backward<1>(src + r * width, g + r * width, w, &mean[r], &rstd[r], width,
                                  gx + r * width);
             });
           if (gw || gb)
             detail::parallel_for(width, 16, [&](size_t first, size_t last) {
               norm_param_grads(src, g, mean.data(), rstd.data(), rows, width, first, last, gw, gb);
             });
         });
  return out;
}

Tensor embedding(const Tensor& weight, const Ids& ids, bool sparse_grad) {
  if (weight.dim() != 2)
    throw std::invalid_argument("embedding: weight must be [vocab, dim], got " +
                                to_string(weight.shape()));
  const size_t vocab = weight.size(0), width = weight.size(1);
  check_ids("embedding", ids, vocab, std::nullopt);
  Shape out_shape = ids.shape;
  out_shape.push_back(width);
  Tensor out = Tensor::empty(out_shape);
  for (size_t i = 0; i < ids.numel(); ++i)
    std::copy_n(weight.data() + static_cast<size_t>(ids.values[i]) * width, width,
                out.data() + i * width);
  if (!needs_grad({&weight})) return out;
  record("embedding", {weight}, out,
         [weight = weight.without_data(), out = out.without_data(), ids, width,
          sparse_grad]() mutable {
           const float* g = out.grad().data();
           if (!sparse_grad) {  // scatter-add: duplicate ids sum
             float* gw = weight.grad_data();
             for (size_t i = 0; i < ids.numel(); ++i) {
               float* row = gw + static_cast<size_t>(ids.values[i]) * width;
               for (size_t j = 0; j < width; ++j) row[j] += g[i * width + j];
             }
             return;
           }
           // Sparse: merge this lookup's rows into the (sorted, unique) rows already there.
           SparseGrad& sg = weight.sparse_grad_mut();
           std::map<int32_t, std::vector<float>> rows;
           for (size_t r = 0; r < sg.rows.size(); ++r)
             rows[sg.rows[r]].assign(sg.values.data() + r * width,
                                     sg.values.data() + (r + 1) * width);
           for (size_t i = 0; i < ids.numel(); ++i) {
             auto& row = rows[ids.values[i]];
             if (row.empty()) row.assign(width, 0.0f);
             for (size_t j = 0; j < width; ++j) row[j] += g[i * width + j];
           }
           sg.rows.clear();
           sg.values = Array::from_shape({rows.size(), width});
           size_t r = 0;
           for (auto& [id, values] : rows) {
             sg.rows.push_back(id);
             std::copy(values.begin(), values.end(), sg.values.data() + r++ * width);
           }
         });
  return out;
}

Tensor dropout(const Tensor& x, float p, bool training, Generator& gen) {
  if (!(p >= 0.0f && p <= 1.0f))
    throw std::invalid_argument("dropout: probability " + std::to_string(p) + " is not in [0, 1]");
  if (!training || p == 0.0f) return x;
  const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  std::vector<float> scale(x.numel());
  for (auto& s : scale) s = gen.uniform() < p ? 0.0f : keep_scale;
  Tensor out = Tensor::empty(x.shape());
  for (size_t i = 0; i < scale.size(); ++i) out.data()[i] = x.data()[i] * scale[i];
  if (!needs_grad({&x})) return out;
  record("dropout", {x}, out,
         [x = x.without_data(), out = out.without_data(), scale = std::move(scale)]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           for (size_t i = 0; i < scale.size(); ++i) gx[i] += g[i] * scale[i];
         });
  return out;
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& c_prev) {
  if (gates.dim() != 2 || c_prev.dim() != 2 || gates.size(0) != c_prev.size(0) ||
      gates.size(1) != 4 * c_prev.size(1))
    throw std::invalid_argument("lstm_cell: gates must be [B, 4H] for a cell state [B, H], got " +
                                to_string(gates.shape()) + " and " + to_string(c_prev.shape()));
  const size_t rows = c_prev.size(0), hidden = c_prev.size(1);
  Tensor c = Tensor::empty({rows, hidden}), h = Tensor::empty({rows, hidden});
  // The activations, kept for backward: per row i, f, g, o (4H) then tanh(c) (H).
  auto act = std::make_shared<std::vector<float>>(rows * 5 * hidden);
  const auto logistic = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  detail::parallel_for(rows, 1, [&](size_t first, size_t last) {
    for (size_t r = first; r < last; ++r) {
      const float* a = gates.data() + r * 4 * hidden;
      const float* cp = c_prev.data() + r * hidden;
      float* s = act->data() + r * 5 * hidden;
      float *cr = c.data() + r * hidden, *hr = h.data() + r * hidden;
      for (size_t j = 0; j < hidden; ++j) {
        const float i = logistic(a[j]), f = logistic(a[hidden + j]),
                    g = std::tanh(a[2 * hidden + j]), o = logistic(a[3 * hidden + j]);
        cr[j] = f * cp[j] + i * g;
        const float tc = std::tanh(cr[j]);
        hr[j] = o * tc;
        s[j] = i, s[hidden + j] = f, s[2 * hidden + j] = g, s[3 * hidden + j] = o;
        s[4 * hidden + j] = tc;
      }
    }
  });
  if (!needs_grad({&gates, &c_prev})) return {h, c};
  // c = f c_prev + i g: to the input, forget and cell gates and to c_prev. Recorded first, so
  // that its backward runs after h's has added h's share to c's gradient.
  record("lstm_cell_c", {gates, c_prev}, c,
         [gates = gates.without_data(), c_prev, c = c.without_data(), act, rows, hidden]() mutable {
           const float* dc = c.grad().data();
           float* da = gates.requires_grad() ? gates.grad_data() : nullptr;
           float* dcp = c_prev.requires_grad() ? c_prev.grad_data() : nullptr;
           detail::parallel_for(rows, 1, [&](size_t first, size_t last) {
             for (size_t r = first; r < last; ++r) {
               const float *s = act->data() + r * 5 * hidden, *cp = c_prev.data() + r * hidden,
                           *d = dc + r * hidden;
               if (da) {
                 float* a = da + r * 4 * hidden;
                 for (size_t j = 0; j < hidden; ++j) {
                   const float i = s[j], f = s[hidden + j], g = s[2 * hidden + j];
                   a[j] += d[j] * g * i * (1.0f - i);
                   a[hidden + j] += d[j] * cp[j] * f * (1.0f - f);
                   a[2 * hidden + j] += d[j] * i * (1.0f - g * g);
                 }
               }
               if (dcp)
                 for (size_t j = 0; j < hidden; ++j) dcp[r * hidden + j] += d[j] * s[hidden + j];
             }
           });
         });
  // h = o tanh(c): to the output gate and to c.
  record("lstm_cell_h", {gates, c}, h,
         [gates = gates.without_data(), c = c.without_data(), h = h.without_data(), act, rows,
          hidden]() mutable {
           const float* dh = h.grad().data();
           float* da = gates.requires_grad() ? gates.grad_data() : nullptr;
           float* dc = c.grad_data();
           detail::parallel_for(rows, 1, [&](size_t first, size_t last) {
             for (size_t r = first; r < last; ++r) {
               const float *s = act->data() + r * 5 * hidden, *d = dh + r * hidden;
               for (size_t j = 0; j < hidden; ++j) {
                 const float o = s[3 * hidden + j], tc = s[4 * hidden + j];
                 if (da) da[r * 4 * hidden + 3 * hidden + j] += d[j] * tc * o * (1.0f - o);
                 dc[r * hidden + j] += d[j] * o * (1.0f - tc * tc);
               }
             }
           });
         });
  return {h, c};
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, float value) {
  const Shape shape = x.shape();
  if (detail::broadcast_shapes(shape, mask.shape(), "masked_fill") != shape)
    throw std::invalid_argument("masked_fill: mask " + to_string(mask.shape()) +
                                " must broadcast to the input's shape " + to_string(shape));
  if (mask.requires_grad())
    throw std::invalid_argument(
        "masked_fill: the mask is not differentiable; it must not require a gradient");
  const detail::Strides sm = detail::broadcast_strides(mask.shape(), shape);
  std::vector<bool> keep(x.numel());
  const float* m = mask.data();
  detail::for_each_strided<1>(shape, {&sm}, [&](size_t i, size_t o) { keep[i] = m[o] == 0.0f; });
  Tensor out = Tensor::empty(shape);
  for (size_t i = 0; i < keep.size(); ++i) out.data()[i] = keep[i] ? x.data()[i] : value;
  if (!needs_grad({&x})) return out;
  record("masked_fill", {x}, out,
         [x = x.without_data(), out = out.without_data(), keep = std::move(keep)]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           for (size_t i = 0; i < keep.size(); ++i)
             if (keep[i]) gx[i] += g[i];
         });
  return out;
}

Tensor causal_mask(const Tensor& x, float value) {
  if (x.dim() < 2)
    throw std::invalid_argument("causal_mask: input needs rank >= 2 ([..., T, S]), got " +
                                to_string(x.shape()));
  const size_t t = x.size(-2), s = x.size(-1), mats = x.numel() / std::max<size_t>(t * s, 1);
  if (s < t)
    throw std::invalid_argument("causal_mask: more queries (" + std::to_string(t) +
                                ") than keys (" + std::to_string(s) + ")");
  const size_t shift = s - t;
  Tensor out = Tensor::empty(x.shape());
  for (size_t m = 0; m < mats; ++m)
    for (size_t i = 0; i < t; ++i)
      for (size_t j = 0; j < s; ++j) {
        const size_t k = (m * t + i) * s + j;
        out.data()[k] = j > i + shift ? value : x.data()[k];
      }
  if (!needs_grad({&x})) return out;
  record("causal_mask", {x}, out,
         [x = x.without_data(), out = out.without_data(), t, s, mats, shift]() mutable {
           const float* g = out.grad().data();
           float* gx = x.grad_data();
           for (size_t m = 0; m < mats; ++m)
             for (size_t i = 0; i < t; ++i)
               for (size_t j = 0; j <= std::min(i + shift, s - 1); ++j)
                 gx[(m * t + i) * s + j] += g[(m * t + i) * s + j];
         });
  return out;
}

Tensor cross_entropy(const Tensor& logits, const Ids& targets, int ignore_index) {
  const Shape shape = logits.shape();
  if (shape.empty())
    throw std::invalid_argument("cross_entropy: logits must have rank >= 1 ([..., V])");
  const Shape expected(shape.begin(), shape.end() - 1);
  if (targets.shape != expected)
    throw std::invalid_argument("cross_entropy: targets " + to_string(targets.shape) +
                                " must have the logits' shape without the last dimension, " +
                                to_string(expected) + " for logits " + to_string(shape));
  const size_t vocab = shape.back(), rows = targets.numel();
  check_ids("cross_entropy", targets, vocab, ignore_index);
  // Forward keeps only each row's log-sum-exp; backward rebuilds softmax from the logits,
  // which saves a [rows, V] buffer (the largest activation of a language model).
  std::vector<float> lse(rows);
  double total = 0.0;
  size_t count = 0;
  const float* x = logits.data();
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * vocab;
    lse[r] = detail::row_logsumexp(row, vocab);
    if (targets.values[r] == ignore_index) continue;
    total += lse[r] - row[targets.values[r]];
    ++count;
  }
  Tensor out = Tensor::scalar(static_cast<float>(total / static_cast<double>(count)));
  if (!needs_grad({&logits})) return out;
  record("cross_entropy", {logits}, out,
         [logits, out = out.without_data(), targets, ignore_index, vocab, count,
          lse = std::move(lse)]() mutable {
           const float scale = out.grad().data()[0] / static_cast<float>(count);
           const float* x = logits.data();
           float* gx = logits.grad_data();
           for (size_t r = 0; r < lse.size(); ++r) {
             const int32_t target = targets.values[r];
             if (target == ignore_index) continue;
             detail::row_add_scaled_exp(x + r * vocab, lse[r], scale, gx + r * vocab, vocab);
             gx[r * vocab + static_cast<size_t>(target)] -= scale;
           }
         });
  return out;
}

namespace {

// The fused head's problem: logits = x W^T (+ b) over [rows, vocab], never stored whole, and the
// mean cross-entropy over the rows whose target is not ignored. The gradients are those for an
// upstream 1 (the loss is a scalar), computed while each chunk's logits are at hand and scaled
// by the upstream in backward.
struct LinearCrossEntropy {
  const float* x;
  detail::Operand weight;  // [vocab, width]; in bf16 mode rounded once for every chunk
  const float* bias;       // null without one
  const std::vector<int32_t>& targets;
  int ignore_index;
  size_t rows, width, vocab, chunk;
  float inv_count;                    // 1 / the rows that count
  bool grad, grad_x, grad_w, grad_b;  // which gradients to make (grad: any)
  float* dx;                          // [rows, width] or null
  std::vector<float>& row_loss;       // [rows]
};

// One row of logits in place: its loss, and, for the gradient, d loss / d logits = (softmax -
// one_hot) / count = (e - sum one_hot) / (sum count) with e = exp(logits - max). The row keeps
// e - sum one_hot; the factor 1 / (sum count), returned in `scale`, is applied to the small
// operands of the products (the input rows, the input gradient rows), not to the
// vocabulary-wide row. An ignored row becomes zeros, with scale 0.
void softmax_gradient_row(const LinearCrossEntropy& p, float* row, int32_t target, float& loss,
                          float& scale) {
  scale = 0.0f;
  if (target == p.ignore_index) {
    if (p.grad) std::fill(row, row + p.vocab, 0.0f);
    return;
  }
  if (!p.grad) {
    loss = detail::row_logsumexp(row, p.vocab) - row[target];
    return;
  }
  const float target_logit = row[target];
  const float max = detail::row_max(row, p.vocab);
  const float sum = detail::row_exp_shifted(row, max, row, p.vocab);
  loss = max + std::log(sum) - target_logit;
  row[target] -= sum;
  scale = p.inv_count / sum;
}

// Rows [first, first + n): their logits into `logits`, their losses, their input gradient rows
// (dx) and bias gradient (added into db), and what their weight gradient is made of: the
// gradient logits (in bf16 mode rounded into `g16`; in fp32 mode left in `logits`) and the
// input rows scaled per row (`x_scaled`).
void linear_cross_entropy_chunk(const LinearCrossEntropy& p, size_t first, size_t n, float* logits,
                                uint16_t* g16, float* x_scaled, float* row_scale, float* db) {
  const size_t width = p.width, vocab = p.vocab;
  const float* xs = p.x + first * width;
  if (p.bias)
    for (size_t r = 0; r < n; ++r) std::copy_n(p.bias, vocab, logits + r * vocab);
  detail::gemm(false, true, n, vocab, width, 1.0f, detail::Operand{xs, width}, p.weight,
               p.bias ? 1.0f : 0.0f, logits, vocab);
  detail::parallel_for(n, 4, [&](size_t r_begin, size_t r_end) {
    for (size_t r = r_begin; r < r_end; ++r)
      softmax_gradient_row(p, logits + r * vocab, p.targets[first + r], p.row_loss[first + r],
                           row_scale[r]);
  });
  if (!p.grad) return;
  // Both gradient products read these logits: rounded once in bf16 mode.
  const detail::Operand g = detail::pack_operand(logits, n, vocab, vocab, g16);
  if (p.grad_x) {
    float* dxs = p.dx + first * width;
    detail::gemm(false, false, n, width, vocab, 1.0f, g, p.weight, 0.0f, dxs, width);
    for (size_t r = 0; r < n; ++r)
      for (size_t j = 0; j < width; ++j) dxs[r * width + j] *= row_scale[r];
  }
  if (p.grad_w)
    for (size_t r = 0; r < n; ++r)
      for (size_t j = 0; j < width; ++j) x_scaled[r * width + j] = xs[r * width + j] * row_scale[r];
  if (p.grad_b)
    detail::parallel_for(vocab, 256, [&](size_t j_begin, size_t j_end) {
      for (size_t r = 0; r < n; ++r)
        for (size_t j = j_begin; j < j_end; ++j) db[j] += logits[r * vocab + j] * row_scale[r];
    });
}

// bf16 mode: how many gradient logits (bf16) a thread keeps for one weight-gradient product.
constexpr size_t kWeightGradientElems = size_t{1} << 25;

// A slab's working memory, allocated by the thread that calls the op: glibc serves another
// thread from an arena of its own, whose heaps (64 MiB) cannot keep GPT-2-sized buffers, so
// there they would be mapped afresh and faulted in at every step (the calling thread's heap
// keeps freed blocks for reuse: autograd/tensor.cpp).
//
// The weight gradient dw = G^T X_scaled is one product per group of rows: in fp32 mode a group
// is a chunk (its logits are G); in bf16 mode the rounded G of several chunks is kept, up to
// kWeightGradientElems, so that each product reads and writes dw (vocab x width fp32: 154 MB
// for GPT-2's table) for many rows rather than for a chunk's few.
struct SlabBuffers {
  SlabBuffers(const LinearCrossEntropy& p, size_t rows)
      : chunk_rows(std::min(p.chunk, rows)),
        keep_rounded(p.grad && p.weight.bf16 != nullptr),
        group_rows(keep_rounded ? std::clamp(kWeightGradientElems / p.vocab, chunk_rows, rows)
                                : chunk_rows),
        logits(std::make_unique_for_overwrite<float[]>(chunk_rows * p.vocab)),
        g16(keep_rounded ? std::make_unique_for_overwrite<uint16_t[]>(group_rows * p.vocab)
                         : nullptr),
        x_scaled(p.grad_w ? group_rows * p.width : 0),
        row_scale(chunk_rows) {}
  size_t chunk_rows;
  bool keep_rounded;  // bf16 mode: G kept rounded for the group's weight-gradient product
  size_t group_rows;
  std::unique_ptr<float[]> logits;  // one chunk's
  std::unique_ptr<uint16_t[]> g16;  // the group's rounded gradient logits
  std::vector<float> x_scaled, row_scale;
};

// A slab of rows [begin, end), chunk by chunk, with its own buffers and its own weight and bias
// gradients (dw, db: written, not added to).
void linear_cross_entropy_slab(const LinearCrossEntropy& p, size_t begin, size_t end,
                               SlabBuffers& b, float* dw, float* db) {
  size_t group = begin;
  bool first_product = true;
  for (size_t first = begin; first < end; first += p.chunk) {
    const size_t n = std::min(p.chunk, end - first), row = first - group;
    linear_cross_entropy_chunk(
        p, first, n, b.logits.get(), b.keep_rounded ? b.g16.get() + row * p.vocab : nullptr,
        b.x_scaled.data() + (p.grad_w ? row * p.width : 0), b.row_scale.data(), db);
    const size_t next = first + n;
    if (next < end && next + std::min(p.chunk, end - next) - group <= b.group_rows) continue;
    if (p.grad_w) {
      const detail::Operand g = b.keep_rounded ? detail::Operand{nullptr, p.vocab, b.g16.get()}
                                               : detail::Operand{b.logits.get(), p.vocab};
      detail::gemm(true, false, p.vocab, p.width, next - group, 1.0f, g,
                   detail::Operand{b.x_scaled.data(), p.width}, first_product ? 0.0f : 1.0f, dw,
                   p.width);
    }
    first_product = false;
    group = next;
  }
}

// Each slab's weight and bias gradients: slab 0 writes the result's own buffers, the others
// their own, added into slab 0's in slab order whatever the threads. The weight gradients need
// no zeroing: each slab's first product writes them (beta 0).
class SlabGradients {
 public:
  SlabGradients(size_t slabs, size_t weight_size, size_t bias_size)
      : weight_size_(weight_size),
        dw_(weight_size ? std::make_unique_for_overwrite<float[]>(weight_size) : nullptr),
        db_(bias_size),
        slab_dw_(weight_size ? slabs - 1 : 0),
        slab_db_(bias_size ? slabs - 1 : 0, std::vector<float>(bias_size)) {
    // Here, on the calling thread, for the reason SlabBuffers gives.
    for (auto& part : slab_dw_) part = std::make_unique_for_overwrite<float[]>(weight_size);
  }
  float* weight(size_t slab) {
    return !dw_ || slab == 0 ? dw_.get() : slab_dw_[slab - 1].get();  // null: no gradient
  }
  float* bias(size_t slab) {
    if (db_.empty()) return nullptr;
    return slab == 0 ? db_.data() : slab_db_[slab - 1].data();
  }
  void sum() {
    detail::parallel_for(slab_dw_.empty() ? 0 : weight_size_, 4096, [&](size_t begin, size_t end) {
      for (const auto& part : slab_dw_)
        for (size_t i = begin; i < end; ++i) dw_[i] += part[i];
    });
    for (const auto& part : slab_db_)
      for (size_t j = 0; j < db_.size(); ++j) db_[j] += part[j];
  }
  std::unique_ptr<float[]> take_weight() { return std::move(dw_); }
  std::vector<float> take_bias() { return std::move(db_); }

 private:
  size_t weight_size_;
  std::unique_ptr<float[]> dw_;
  std::vector<float> db_;
  std::vector<std::unique_ptr<float[]>> slab_dw_;
  std::vector<std::vector<float>> slab_db_;
};

// How the fused head splits its rows over the threads: into slabs, each run by one thread with
// single-threaded products, and a slab into chunks (the logits a thread holds at once).
struct RowSplit {
  size_t slabs, chunk;
};

RowSplit split_rows(size_t rows, size_t vocab, size_t width, bool bf16) {
  if (!bf16 || vocab * width < size_t{1} << 24) {
    // A slab per thread, its weight and bias gradients summed in slab order at the end:
    // splitting every product over the threads instead makes them wait on each other at every
    // product and packs the weight once per thread. 16 MiB of logits per thread: larger chunks
    // pack the weight and pass over its gradient fewer times (the sizes tried:
    // benchmarks/HISTORY.md). In bf16 mode the rows are spread evenly over a slab's chunks:
    // each oneDNN product reads the whole weight, so a chunk of a few rows left over costs
    // nearly what a full one does.
    const size_t slabs = std::clamp<size_t>(rows / 16, 1, detail::parallel_width());
    size_t chunk = std::max<size_t>((size_t{1} << 22) / std::max<size_t>(vocab, 1), 16);
    if (bf16) {
      const size_t slab_rows = (rows + slabs - 1) / slabs;
      const size_t chunks = std::max<size_t>((slab_rows + chunk - 1) / chunk, 1);
      chunk = std::max<size_t>((slab_rows + chunks - 1) / chunks, 1);
    }
    return {slabs, chunk};
  }
  // bf16 with a weight of 2^24 values or more (GPT-2's 50,257 x 768), which no cache holds: one
  // slab whose products each run over all the threads, which then stream the weight from
  // memory once between them rather than once each; 64 MiB of logits per chunk, the rows spread
  // evenly in multiples of 64 (GPT-2's shape, 1,024 rows: chunks of 256 rows measured fastest,
  // 128, 147, 192 and 342 slower: benchmarks/HISTORY.md).
  const size_t max_rows = std::max<size_t>((size_t{1} << 24) / vocab, 64);
  const size_t chunks = std::max<size_t>((rows + max_rows - 1) / max_rows, 1);
  return {1, std::max<size_t>(((rows + chunks - 1) / chunks + 63) / 64 * 64, 1)};
}

}  // namespace

Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Ids& targets, int ignore_index) {
  const Shape sx = x.shape(), sw = weight.shape();
  if (sx.empty() || sw.size() != 2 || sw[1] != sx.back())
    throw std::invalid_argument("linear_cross_entropy: input " + to_string(sx) +
                                " does not fit weight " + to_string(sw) + " (expected weight [V, " +
                                (sx.empty() ? std::string("?") : std::to_string(sx.back())) + "])");
  const size_t width = sw[1], vocab = sw[0];
  if (bias.defined() && bias.shape() != Shape{vocab})
    throw std::invalid_argument("linear_cross_entropy: bias " + to_string(bias.shape()) +
                                " should be [" + std::to_string(vocab) + "]");
  const Shape expected(sx.begin(), sx.end() - 1);
  if (targets.shape != expected)
    throw std::invalid_argument("linear_cross_entropy: targets " + to_string(targets.shape) +
                                " must have the input's shape without the last dimension, " +
                                to_string(expected));
  check_ids("linear_cross_entropy", targets, vocab, ignore_index);
  const size_t rows = targets.numel();
  size_t count = 0;
  for (int32_t target : targets.values) count += target != ignore_index;
  const bool grad = needs_grad({&x, &weight, &bias});
  const bool grad_x = grad && x.requires_grad(), grad_w = grad && weight.requires_grad();
  const bool grad_b = grad && bias.defined() && bias.requires_grad();

  const RowSplit split = split_rows(rows, vocab, width, precision() == Precision::bf16);
  const size_t slabs = split.slabs, chunk = split.chunk;  // captured below: no structured binding
  std::vector<float> dx(grad_x ? rows * width : 0), row_loss(rows, 0.0f);
  SlabGradients slab_grads(slabs, grad_w ? vocab * width : 0, grad_b ? vocab : 0);
  std::vector<uint16_t> weight16;
  const LinearCrossEntropy problem{
      .x = x.data(),
      .weight = detail::pack_operand(weight.data(), vocab, width, width, weight16),
      .bias = bias.defined() ? bias.data() : nullptr,
      .targets = targets.values,
      .ignore_index = ignore_index,
      .rows = rows,
      .width = width,
      .vocab = vocab,
      .chunk = chunk,
      .inv_count = 1.0f / static_cast<float>(count),
      .grad = grad,
      .grad_x = grad_x,
      .grad_w = grad_w,
      .grad_b = grad_b,
      .dx = grad_x ? dx.data() : nullptr,
      .row_loss = row_loss};
  std::vector<SlabBuffers> buffers;
  buffers.reserve(slabs);
  for (size_t slab = 0; slab < slabs; ++slab)
    buffers.emplace_back(problem, rows * (slab + 1) / slabs - rows * slab / slabs);
  detail::parallel_for(slabs, 1, [&](size_t slab_begin, size_t slab_end) {
    for (size_t slab = slab_begin; slab < slab_end; ++slab)
      linear_cross_entropy_slab(problem, rows * slab / slabs, rows * (slab + 1) / slabs,
                                buffers[slab], slab_grads.weight(slab), slab_grads.bias(slab));
  });
  slab_grads.sum();
  double total = 0.0;
  for (size_t r = 0; r < rows; ++r)  // in row order, whatever the thread count
    if (targets.values[r] != ignore_index) total += row_loss[r];
  Tensor out = Tensor::scalar(static_cast<float>(total / static_cast<double>(count)));
  if (!grad) return out;
  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  record("linear_cross_entropy", std::move(inputs), out,
         [x = x.without_data(), weight = weight.without_data(), bias = bias.without_data(),
          out = out.without_data(), dx = std::move(dx),
          dw = std::shared_ptr<float[]>(slab_grads.take_weight()),
          db = slab_grads.take_bias()]() mutable {
           const float g = out.grad().data()[0];
           if (!dx.empty()) x.add_to_grad(dx.data(), g);
           if (dw) weight.add_to_grad(dw.get(), g);
           if (!db.empty()) bias.add_to_grad(db.data(), g);
         });
  return out;
}

}  // namespace tg
