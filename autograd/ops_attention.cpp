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
  const size_t b_n = qkv.size(0), t = qkv.size(1), c3 = qkv.size(2), c = c3 / 3, h_n = heads,
               d = c / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const bool drop = training && dropout_p > 0.0f;
  const float keep_scale = 1.0f / (1.0f - dropout_p);
  const bool grad = needs_grad({&qkv});
  const size_t tt = t * t;

  // Per row of every head: the softmax's maximum and 1 / sum, for backward.
  auto stats = std::make_shared<std::vector<float>>(grad ? 2 * b_n * h_n * t : 0);
  // Dropout as composed ops draws one uniform per entry of [B, H, T, T], masked ones included;
  // the same draws in the same order keep both paths' masks identical. Drawn before the heads
  // run in parallel, so the mask does not depend on the thread count.
  auto keep = std::make_shared<KeepBits>();
  if (drop) {
    keep->words.assign((b_n * h_n * tt + 63) / 64, 0);
    for (size_t i = 0, n = b_n * h_n * tt; i < n; ++i)
      if (!(gen.uniform() < dropout_p)) keep->words[i >> 6] |= uint64_t{1} << (i & 63);
  }
  Tensor out = Tensor::empty({b_n, t, c});
  const float* x = qkv.data();
  // Heads are independent: each block of threads takes whole heads, and the products inside
  // run single-threaded (they are small: [rows, d] by [d, T]).
  detail::parallel_for(b_n * h_n, 1, [&](size_t first, size_t last) {
    std::vector<float> strip(std::min(t, kRows) * t), dropped(drop ? strip.size() : 0),
        scratch_stats(grad ? 0 : 2 * t);
    for (size_t bh = first; bh < last; ++bh) {
      const size_t b = bh / h_n, h = bh % h_n;
      const float* q = x + b * t * c3 + h * d;
      float* head_stats = grad ? stats->data() + 2 * bh * t : scratch_stats.data();
      for (size_t i0 = 0; i0 < t; i0 += kRows) {
        const size_t rows = std::min(kRows, t - i0), width = i0 + rows;
        float* s = strip.data();
        gemm(false, true, rows, width, d, scale, q + i0 * c3, c3, q + c, c3, 0.0f, s, width);
        causal_softmax_strip(s, rows, width, i0, head_stats + i0, head_stats + t + i0);
        const float* a = s;
        if (drop) {
          apply_keep(s, dropped.data(), rows, width, i0, t, *keep, bh * tt, keep_scale);
          a = dropped.data();
        }
        gemm(false, false, rows, d, width, 1.0f, a, width, q + 2 * c, c3, 0.0f,
             out.data() + (b * t + i0) * c + h * d, c);
      }
    }
  });
  if (!grad) return out;

  record("causal_attention", {qkv}, out,
         [qkv, out, stats, keep, b_n, t, c, h_n, d, scale, drop, keep_scale]() mutable {
           const size_t c3 = 3 * c, tt = t * t;
           const float* x = qkv.data();
           const float* g = out.grad().data();
           float* gx = qkv.grad_data();
           // Each head writes only its own columns of dQ, dK and dV: heads run in parallel.
           detail::parallel_for(b_n * h_n, 1, [&](size_t first, size_t last) {
             const size_t strip_size = std::min(t, kRows) * t;
             std::vector<float> p(strip_size), da(strip_size), dropped(drop ? strip_size : 0);
             for (size_t bh = first; bh < last; ++bh) {
               const size_t b = bh / h_n, h = bh % h_n;
               const float* q = x + b * t * c3 + h * d;
               const float* head_stats = stats->data() + 2 * bh * t;
               float* gq = gx + b * t * c3 + h * d;
               for (size_t i0 = 0; i0 < t; i0 += kRows) {
                 const size_t rows = std::min(kRows, t - i0), width = i0 + rows;
                 const float* qi = q + i0 * c3;
                 const float* gy = g + (b * t + i0) * c + h * d;
                 gemm(false, true, rows, width, d, scale, qi, c3, q + c, c3, 0.0f, p.data(), width);
                 recompute_weights(p.data(), rows, width, i0, head_stats + i0, head_stats + t + i0);
                 const float* a = p.data();
                 if (drop) {
                   apply_keep(p.data(), dropped.data(), rows, width, i0, t, *keep, bh * tt,
                              keep_scale);
                   a = dropped.data();
                 }
                 gemm(false, true, rows, width, d, 1.0f, gy, c, q + 2 * c, c3, 0.0f, da.data(),
                      width);  // dA = dY V^T
                 gemm(true, false, width, d, rows, 1.0f, a, width, gy, c, 1.0f, gq + 2 * c,
                      c3);  // dV += A^T dY
                 // Through dropout, then softmax: dS = P * (dP - sum_j P dP), on the visible keys.
                 for (size_t r = 0; r < rows; ++r) {
                   float* row = da.data() + r * width;
                   const float* prow = p.data() + r * width;
                   const size_t n = i0 + r + 1;
                   if (drop)
                     for (size_t j = 0; j < n; ++j)
                       row[j] = keep->get(bh * tt + (i0 + r) * t + j) ? row[j] * keep_scale : 0.0f;
                   double dot = 0.0;
                   for (size_t j = 0; j < n; ++j) dot += static_cast<double>(prow[j]) * row[j];
                   for (size_t j = 0; j < n; ++j)
                     row[j] = prow[j] * (row[j] - static_cast<float>(dot));
                   std::fill(row + n, row + width, 0.0f);
                 }
                 gemm(false, false, rows, d, width, scale, da.data(), width, q + c, c3, 1.0f,
                      gq + i0 * c3, c3);  // dQ += dS K
                 gemm(true, false, width, d, rows, scale, da.data(), width, qi, c3, 1.0f, gq + c,
                      c3);  // dK += dS^T Q
               }
             }
           });
         });
  return out;
}

}  // namespace tg
