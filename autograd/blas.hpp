// The one BLAS entry point of the ops: row-major sgemm on strided matrices (in bf16 mode,
// precision.hpp, the same product with bf16 inputs through oneDNN).
#pragma once

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "autograd/precision.hpp"

namespace tg::detail {

// Opt-in accounting of every product (bench_train): how much of a step is sgemm, and how fast
// sgemm runs on the model's own shapes. Times are summed over the calling threads, so they are
// a share of the step's wall time only when one thread calls at a time (one thread, or BLAS's
// own threads inside one call). Off: one relaxed load per product.
struct GemmCounter {
  std::atomic<bool> on{false};
  std::atomic<uint64_t> nanoseconds{0}, flops{0}, calls{0};
};
inline GemmCounter gemm_counter;

// C[m, n] = alpha op(A) op(B) + beta C; an operand's ld is its row length as stored, so a
// matrix can be a column block of a wider one (a head inside a fused QKV buffer). In bf16 mode
// an operand packed already (pack_operand) is not rounded again.
inline void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
                 const Operand& a, const Operand& b, float beta, float* c, size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum; BLAS rejects a zero leading dimension
    // beta 0 does not read C, as in BLAS: C may be a new buffer (Tensor::grad_target).
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  const bool counted = gemm_counter.on.load(std::memory_order_relaxed);
  const auto start =
      counted ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (precision() == Precision::bf16)
    gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, b, beta, c, ldc);
  else
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), alpha, a.f32, static_cast<int>(a.ld), b.f32,
                static_cast<int>(b.ld), beta, c, static_cast<int>(ldc));
  if (counted) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    gemm_counter.nanoseconds.fetch_add(static_cast<uint64_t>(ns.count()),
                                       std::memory_order_relaxed);
    gemm_counter.flops.fetch_add(2 * uint64_t{m} * n * k, std::memory_order_relaxed);
    gemm_counter.calls.fetch_add(1, std::memory_order_relaxed);
  }
}

inline void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
                 const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                 size_t ldc) {
  gemm(trans_a, trans_b, m, n, k, alpha, Operand{a, lda}, Operand{b, ldb}, beta, c, ldc);
}

}  // namespace tg::detail
