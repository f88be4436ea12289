// The one BLAS entry point of the ops: row-major sgemm on strided matrices.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstddef>

namespace tg::detail {

// C[m, n] = alpha op(A) op(B) + beta C; lda, ldb, ldc are the row lengths as stored, so a
// matrix can be a column block of a wider one (a head inside a fused QKV buffer).
inline void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
                 const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                 size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum; BLAS rejects a zero leading dimension
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] *= beta;
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

}  // namespace tg::detail
