// Causal multi-head attention as one op. Composed from permute, matmul, causal_mask, softmax
// and dropout it makes a copy per step (q, k, v and the output permuted, scores, masked scores,
// weights, dropped weights: seven [B, H, T, T] or [B, T, C] temporaries per layer). Here each
// head reads q, k and v in place from the fused projection (strided BLAS calls) and writes its
// output straight into [B, T, C].
//
// Memory linear in the context, in the style of FlashAttention: a head is processed a block of
// query rows at a time. A block of rows i0..i1 sees only keys 0..i1, so its scores are a
// [rows, i1] strip whose softmax is exact in one pass; backward keeps no [T, T] weights, only
// each row's maximum and normaliser, and recomputes the strip from q and k (the same products,
// so the same weights bit for bit). With dropout the mask is kept as one bit per weight,
// drawn in the order of the composed ops.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "autograd/blas.hpp"
#include "autograd/ops.hpp"
#include "autograd/parallel.hpp"
#include "autograd/simd_kernels.hpp"
#include "autograd/tape.hpp"

namespace tg {

using detail::gemm;

namespace {

// Query rows per strip: the strip's scores are kRows x T floats per thread.
constexpr size_t kRows = 64;

// Dropout's keep mask, one bit per attention weight of [B, H, T, T].
struct KeepBits {
  std::vector<uint64_t> words;
  bool get(size_t i) const { return (words[i >> 6] >> (i & 63)) & 1u; }
};

// Row i (global index row0 + r) of a strip of `width` scores may see keys 0..i: softmax over
// those, zeros after. Records the row's maximum and 1 / sum for backward.
void causal_softmax_strip(float* s, size_t rows, size_t width, size_t row0, float* row_max,
                          float* row_inv) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = s + r * width;
    const size_t n = row0 + r + 1;
    const float top = detail::row_max(row, n);
    const float inv = 1.0f / detail::row_exp_shifted(row, top, row, n);
    for (size_t j = 0; j < n; ++j) row[j] *= inv;
    std::fill(row + n, row + width, 0.0f);
    row_max[r] = top;
    row_inv[r] = inv;
  }
}

// The weights again from the scores, with the statistics forward recorded.
void recompute_weights(float* s, size_t rows, size_t width, size_t row0, const float* row_max,
                       const float* row_inv) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = s + r * width;
    const size_t n = row0 + r + 1;
    detail::row_exp_shifted(row, row_max[r], row, n);
    for (size_t j = 0; j < n; ++j) row[j] *= row_inv[r];
    std::fill(row + n, row + width, 0.0f);
  }
}

// a = p with dropped weights zeroed and kept ones scaled; bit (row0 + r) * t + j of the head.
void apply_keep(const float* p, float* a, size_t rows, size_t width, size_t row0, size_t t,
                const KeepBits& keep, size_t head_offset, float keep_scale) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < width; ++j) {
      const size_t bit = head_offset + (row0 + r) * t + j;
      a[r * width + j] = keep.get(bit) ? p[r * width + j] * keep_scale : 0.0f;
    }
}

// The sizes of one call: batch, context, width, heads, head width; the scores' scale and
// dropout.
struct Attention {
  size_t b_n, t, c, h_n, d;
  float scale;  // 1 / sqrt(d)
  bool drop;
  float keep_scale;  // 1 / (1 - p)
  size_t c3() const { return 3 * c; }
  size_t tt() const { return t * t; }
};

// A head's Q, K and V ([T, d] each, rows c3 apart) as product operands. Every strip reads K
// and V from row 0, so in bf16 mode they are rounded once per head, not once per strip (the
// same bits: a packed operand is the rounding the product would do). The thread's buffers.
struct HeadOperands {
  HeadOperands(const float* q_head, const Attention& at)
      : q(detail::pack_operand(q_head, at.t, at.d, at.c3(), buffers()[0])),
        k(detail::pack_operand(q_head + at.c, at.t, at.d, at.c3(), buffers()[1])),
        v(detail::pack_operand(q_head + 2 * at.c, at.t, at.d, at.c3(), buffers()[2])),
        d(at.d) {}
  // Q's rows from i0 on.
  detail::Operand q_rows(size_t i0) const {
    return {q.f32 + i0 * q.ld, q.ld, q.bf16 ? q.bf16 + i0 * d : nullptr};
  }
  static std::array<std::vector<uint16_t>, 3>& buffers() {
    thread_local std::array<std::vector<uint16_t>, 3> rounded;
    return rounded;
  }
  detail::Operand q, k, v;
  size_t d;
};

// Dropout as composed ops draws one uniform per entry of [B, H, T, T], masked ones included;
// the same draws in the same order keep both paths' masks identical. Drawn before the heads
// run in parallel, so the mask does not depend on the thread count.
void draw_keep_bits(const Attention& at, float dropout_p, Generator& gen, KeepBits& keep) {
  const size_t n = at.b_n * at.h_n * at.tt();
  keep.words.assign((n + 63) / 64, 0);
  for (size_t i = 0; i < n; ++i)
    if (!(gen.uniform() < dropout_p)) keep.words[i >> 6] |= uint64_t{1} << (i & 63);
}

// Head bh (batch b, head h) forward, a strip of query rows at a time: Y = dropout(softmax(Q K^T
// scale, causal)) V, written into its columns of `out`; each row's softmax statistics into
// head_stats (maxima, then 1 / sums). `strip` and `dropped` are the thread's buffers.
void attention_forward_head(const Attention& at, const float* x, size_t bh, float* head_stats,
                            const KeepBits& keep, float* strip, float* dropped, float* out) {
  const size_t b = bh / at.h_n, h = bh % at.h_n, t = at.t, c = at.c, c3 = at.c3(), d = at.d;
  const float* q = x + b * t * c3 + h * d;
  const HeadOperands head(q, at);
  for (size_t i0 = 0; i0 < t; i0 += kRows) {
    const size_t rows = std::min(kRows, t - i0), width = i0 + rows;
    gemm(false, true, rows, width, d, at.scale, head.q_rows(i0), head.k, 0.0f, strip, width);
    causal_softmax_strip(strip, rows, width, i0, head_stats + i0, head_stats + t + i0);
    const float* a = strip;
    if (at.drop) {
      apply_keep(strip, dropped, rows, width, i0, t, keep, bh * at.tt(), at.keep_scale);
      a = dropped;
    }
    gemm(false, false, rows, d, width, 1.0f, detail::Operand{a, width}, head.v, 0.0f,
         out + (b * t + i0) * c + h * d, c);
  }
}

// da holds dA = dY V^T of a strip; it becomes dS, the gradient of the scores: back through
// dropout, then softmax, dS = P * (dP - sum_j P dP), on the visible keys.
void softmax_backward_strip(const Attention& at, float* da, const float* p, size_t rows,
                            size_t width, size_t i0, const KeepBits& keep, size_t bh) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = da + r * width;
    const float* prow = p + r * width;
    const size_t n = i0 + r + 1;
    if (at.drop)
      for (size_t j = 0; j < n; ++j)
        row[j] = keep.get(bh * at.tt() + (i0 + r) * at.t + j) ? row[j] * at.keep_scale : 0.0f;
    double dot = 0.0;
    for (size_t j = 0; j < n; ++j) dot += static_cast<double>(prow[j]) * row[j];
    for (size_t j = 0; j < n; ++j) row[j] = prow[j] * (row[j] - static_cast<float>(dot));
    std::fill(row + n, row + width, 0.0f);
  }
}

// Head bh backward, strip by strip: the weights recomputed from Q and K with forward's
// statistics, then dV, dQ and dK added into the head's own columns of gx (heads never share a
// column, so they run in parallel). p, da and dropped are the thread's strip buffers.
void attention_backward_head(const Attention& at, const float* x, const float* g, float* gx,
                             size_t bh, const float* head_stats, const KeepBits& keep, float* p,
                             float* da, float* dropped) {
  const size_t b = bh / at.h_n, h = bh % at.h_n, t = at.t, c = at.c, c3 = at.c3(), d = at.d;
  const float* q = x + b * t * c3 + h * d;
  float* gq = gx + b * t * c3 + h * d;
  const HeadOperands head(q, at);
  thread_local std::vector<uint16_t> gy16, ds16;
  for (size_t i0 = 0; i0 < t; i0 += kRows) {
    const size_t rows = std::min(kRows, t - i0), width = i0 + rows;
    const detail::Operand qi = head.q_rows(i0);
    const detail::Operand gy = detail::pack_operand(g + (b * t + i0) * c + h * d, rows, d, c, gy16);
    gemm(false, true, rows, width, d, at.scale, qi, head.k, 0.0f, p, width);
    recompute_weights(p, rows, width, i0, head_stats + i0, head_stats + t + i0);
    const float* a = p;
    if (at.drop) {
      apply_keep(p, dropped, rows, width, i0, t, keep, bh * at.tt(), at.keep_scale);
      a = dropped;
    }
    gemm(false, true, rows, width, d, 1.0f, gy, head.v, 0.0f, da, width);  // dA = dY V^T
    gemm(true, false, width, d, rows, 1.0f, detail::Operand{a, width}, gy, 1.0f, gq + 2 * c,
         c3);  // dV += A^T dY
    softmax_backward_strip(at, da, p, rows, width, i0, keep, bh);
    const detail::Operand ds = detail::pack_operand(da, rows, width, width, ds16);  // both read it
    gemm(false, false, rows, d, width, at.scale, ds, head.k, 1.0f, gq + i0 * c3,
         c3);                                                               // dQ += dS K
    gemm(true, false, width, d, rows, at.scale, ds, qi, 1.0f, gq + c, c3);  // dK += dS^T Q
  }
}

}  // namespace

Tensor causal_attention(const Tensor& qkv, size_t heads, float dropout_p, bool training,
                        Generator& gen) {
  if (qkv.dim() != 3 || heads == 0 || qkv.size(2) % (3 * heads) != 0)
    throw std::invalid_argument("causal_attention: qkv " + to_string(qkv.shape()) +
                                " should be [B, T, 3C] with C divisible by " +
                                std::to_string(heads) + " heads");
  if (!(dropout_p >= 0.0f && dropout_p < 1.0f))
    throw std::invalid_argument("causal_attention: dropout probability " +
                                std::to_string(dropout_p) + " is not in [0, 1)");
  const size_t c = qkv.size(2) / 3;
  const Attention at{qkv.size(0),
                     qkv.size(1),
                     c,
                     heads,
                     c / heads,
                     1.0f / std::sqrt(static_cast<float>(c / heads)),
                     training && dropout_p > 0.0f,
                     1.0f / (1.0f - dropout_p)};
  const bool grad = needs_grad({&qkv});
  const size_t heads_total = at.b_n * at.h_n, strip_size = std::min(at.t, kRows) * at.t;
  // Per row of every head: the softmax's maximum and 1 / sum, for backward.
  auto stats = std::make_shared<std::vector<float>>(grad ? 2 * heads_total * at.t : 0);
  auto keep = std::make_shared<KeepBits>();
  if (at.drop) draw_keep_bits(at, dropout_p, gen, *keep);
  Tensor out = Tensor::empty({at.b_n, at.t, at.c});
  // Heads are independent: each block of threads takes whole heads, and the products inside
  // run single-threaded (they are small: [rows, d] by [d, T]).
  detail::parallel_for(heads_total, 1, [&](size_t first, size_t last) {
    std::vector<float> strip(strip_size), dropped(at.drop ? strip_size : 0),
        scratch_stats(grad ? 0 : 2 * at.t);
    for (size_t bh = first; bh < last; ++bh)
      attention_forward_head(at, qkv.data(), bh,
                             grad ? stats->data() + 2 * bh * at.t : scratch_stats.data(), *keep,
                             strip.data(), dropped.data(), out.data());
  });
  if (!grad) return out;
  record("causal_attention", {qkv}, out,
         [qkv, out = out.without_data(), stats, keep, at, heads_total, strip_size]() mutable {
           // Taken once, before the threads: grad_data allocates the buffer on first use.
           const float* x = qkv.data();
           const float* g = out.grad().data();
           float* gx = qkv.grad_data();
           detail::parallel_for(heads_total, 1, [&](size_t first, size_t last) {
             std::vector<float> p(strip_size), da(strip_size), dropped(at.drop ? strip_size : 0);
             for (size_t bh = first; bh < last; ++bh)
               attention_backward_head(at, x, g, gx, bh, stats->data() + 2 * bh * at.t, *keep,
                                       p.data(), da.data(), dropped.data());
           });
         });
  return out;
}

namespace {

// Rotates every (even, odd) column pair of q and k by +angle (forward) or -angle (backward,
// the transpose of a rotation), position by position; v is copied (forward) or its gradient
// added (backward) by the caller.
void rotate_qk(const float* in, float* out, size_t b_n, size_t t, size_t c, size_t heads,
               float base, float sign) {
  const size_t d = c / heads, c3 = 3 * c;
  std::vector<float> inv_freq(d / 2);
  for (size_t i = 0; i < d / 2; ++i)
    inv_freq[i] = std::pow(base, -2.0f * static_cast<float>(i) / static_cast<float>(d));
  detail::parallel_for(b_n * t, 16, [&](size_t first, size_t last) {
    for (size_t bt = first; bt < last; ++bt) {
      const float pos = static_cast<float>(bt % t);
      for (size_t part = 0; part < 2; ++part)  // q, then k
        for (size_t h = 0; h < heads; ++h) {
          const size_t offset = bt * c3 + part * c + h * d;
          for (size_t i = 0; i < d / 2; ++i) {
            const float angle = pos * inv_freq[i];
            const float cos = std::cos(angle), sin = sign * std::sin(angle);
            const float x0 = in[offset + 2 * i], x1 = in[offset + 2 * i + 1];
            out[offset + 2 * i] = x0 * cos - x1 * sin;
            out[offset + 2 * i + 1] = x0 * sin + x1 * cos;
          }
        }
    }
  });
}

}  // namespace

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t heads,
                        float dropout_p, bool training, Generator& gen) {
  if (q.shape() != k.shape() || q.shape() != v.shape())
    throw std::invalid_argument("causal_attention: q " + to_string(q.shape()) + ", k " +
                                to_string(k.shape()) + " and v " + to_string(v.shape()) +
                                " should share one shape [B, T, C]");
  return causal_attention(concat({q, k, v}, 2), heads, dropout_p, training, gen);
}

Tensor rotary_qk(const Tensor& qkv, size_t heads, float base) {
  if (qkv.dim() != 3 || heads == 0 || qkv.size(2) % (3 * heads) != 0 ||
      (qkv.size(2) / 3 / heads) % 2 != 0)
    throw std::invalid_argument("rotary_qk: qkv " + to_string(qkv.shape()) +
                                " should be [B, T, 3C] with C divisible by " +
                                std::to_string(heads) + " heads of even width");
  if (!(base > 1.0f))
    throw std::invalid_argument("rotary_qk: base " + std::to_string(base) + " must exceed 1");
  const size_t b_n = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  Tensor out = Tensor::empty(qkv.shape());
  // v unchanged; q and k rotated.
  for (size_t bt = 0; bt < b_n * t; ++bt)
    std::copy_n(qkv.data() + bt * 3 * c + 2 * c, c, out.data() + bt * 3 * c + 2 * c);
  rotate_qk(qkv.data(), out.data(), b_n, t, c, heads, base, 1.0f);
  if (!needs_grad({&qkv})) return out;
  record("rotary_qk", {qkv}, out,
         [qkv = qkv.without_data(), out = out.without_data(), b_n, t, c, heads, base]() mutable {
           // The gradient of a rotation is the rotation back: rotate dq and dk by -angle.
           const float* g = out.grad().data();
           std::vector<float> back(qkv.numel());
           for (size_t bt = 0; bt < b_n * t; ++bt)
             std::copy_n(g + bt * 3 * c + 2 * c, c, back.data() + bt * 3 * c + 2 * c);
           rotate_qk(g, back.data(), b_n, t, c, heads, base, -1.0f);
           qkv.add_to_grad(back.data(), 1.0f);
         });
  return out;
}

}  // namespace tg
