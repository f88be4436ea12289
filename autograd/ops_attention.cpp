// Causal multi-head attention as one op. Composed from permute, matmul, causal_mask, softmax
// and dropout it makes a copy per step (q, k, v and the output permuted, scores, masked scores,
// weights, dropped weights: seven [B, H, T, T] or [B, T, C] temporaries per layer). Here each
// head reads q, k and v in place from the fused projection (strided BLAS calls), the softmax
// runs in place on the scores, and the output is written straight into [B, T, C]. Backward
// keeps only the attention weights (and the dropout mask).
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

// Row i of a [T, T] score matrix may see keys 0..i: softmax over those, zeros after.
void causal_softmax_rows(float* s, size_t t) {
  for (size_t i = 0; i < t; ++i) {
    float* row = s + i * t;
    const size_t n = i + 1;
    const float inv = 1.0f / detail::row_exp_shifted(row, detail::row_max(row, n), row, n);
    for (size_t j = 0; j < n; ++j) row[j] *= inv;
    std::fill(row + n, row + t, 0.0f);
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

  // Attention weights of every head (kept for backward) or scratch for one head per block.
  auto weights = std::make_shared<std::vector<float>>(grad ? b_n * h_n * tt : 0);
  // Dropout as composed ops draws one uniform per entry of [B, H, T, T], masked ones included;
  // the same draws in the same order keep both paths' masks identical. Drawn before the heads
  // run in parallel, so the mask does not depend on the thread count.
  auto keep = std::make_shared<std::vector<uint8_t>>(drop ? b_n * h_n * tt : 0);
  for (auto& k : *keep) k = gen.uniform() < dropout_p ? 0 : 1;
  Tensor out = Tensor::empty({b_n, t, c});
  const float* x = qkv.data();
  // Heads are independent: each block of threads takes whole heads, and the products inside
  // run single-threaded (they are small: [T, d] by [d, T]).
  detail::parallel_for(b_n * h_n, 1, [&](size_t first, size_t last) {
    std::vector<float> scratch(grad ? 0 : tt), dropped(drop ? tt : 0);
    for (size_t bh = first; bh < last; ++bh) {
      const size_t b = bh / h_n, h = bh % h_n;
      const float* q = x + b * t * c3 + h * d;
      float* p = grad ? weights->data() + bh * tt : scratch.data();
      gemm(false, true, t, t, d, scale, q, c3, q + c, c3, 0.0f, p, t);
      causal_softmax_rows(p, t);
      const float* a = p;
      if (drop) {
        const uint8_t* m = keep->data() + bh * tt;
        for (size_t i = 0; i < tt; ++i) dropped[i] = m[i] ? p[i] * keep_scale : 0.0f;
        a = dropped.data();
      }
      gemm(false, false, t, d, t, 1.0f, a, t, q + 2 * c, c3, 0.0f, out.data() + b * t * c + h * d,
           c);
    }
  });
  if (!grad) return out;

  record("causal_attention", {qkv}, out,
         [qkv, out, weights, keep, b_n, t, c, h_n, d, scale, drop, keep_scale]() mutable {
           const size_t c3 = 3 * c, tt = t * t;
           const float* x = qkv.data();
           const float* g = out.grad().data();
           float* gx = qkv.grad_data();
           // Each head writes only its own columns of dQ, dK and dV: heads run in parallel.
           detail::parallel_for(b_n * h_n, 1, [&](size_t first, size_t last) {
             std::vector<float> da(tt), dropped(drop ? tt : 0);
             for (size_t bh = first; bh < last; ++bh) {
               const size_t b = bh / h_n, h = bh % h_n;
               const float* q = x + b * t * c3 + h * d;
               const float* gy = g + b * t * c + h * d;
               float* gq = gx + b * t * c3 + h * d;
               const float* p = weights->data() + bh * tt;
               const uint8_t* m = drop ? keep->data() + bh * tt : nullptr;
               const float* a = p;
               if (drop) {
                 for (size_t i = 0; i < tt; ++i) dropped[i] = m[i] ? p[i] * keep_scale : 0.0f;
                 a = dropped.data();
               }
               gemm(false, true, t, t, d, 1.0f, gy, c, q + 2 * c, c3, 0.0f, da.data(),
                    t);                                                              // dA = dY V^T
               gemm(true, false, t, d, t, 1.0f, a, t, gy, c, 1.0f, gq + 2 * c, c3);  // dV += A^T dY
               // Through dropout, then softmax: dS = P * (dP - sum_j P dP), on the visible keys.
               for (size_t i = 0; i < t; ++i) {
                 float* row = da.data() + i * t;
                 const float* prow = p + i * t;
                 if (drop)
                   for (size_t j = 0; j <= i; ++j)
                     row[j] = m[i * t + j] ? row[j] * keep_scale : 0.0f;
                 double dot = 0.0;
                 for (size_t j = 0; j <= i; ++j) dot += static_cast<double>(prow[j]) * row[j];
                 for (size_t j = 0; j <= i; ++j)
                   row[j] = prow[j] * (row[j] - static_cast<float>(dot));
                 std::fill(row + i + 1, row + t, 0.0f);
               }
               gemm(false, false, t, d, t, scale, da.data(), t, q + c, c3, 1.0f, gq,
                    c3);  // dQ += dS K
               gemm(true, false, t, d, t, scale, da.data(), t, q, c3, 1.0f, gq + c,
                    c3);  // dK += dS^T Q
             }
           });
         });
  return out;
}

}  // namespace tg
