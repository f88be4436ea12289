// Threads for the ops' own loops (row passes, element-wise kernels, attention heads).
//
// They share one pool with BLAS: when the build links the OpenMP flavour of OpenBLAS
// (Debian's libopenblas0-openmp; CMake option TAPEGRAD_OPENMP), a product and a row pass
// run on the same OpenMP threads, one after the other. Two pools on the same cores (OpenMP
// workers next to OpenBLAS's pthreads) spin against each other (benchmarks/HISTORY.md), so a
// build without the OpenMP OpenBLAS runs these loops on
// the calling thread.
//
// Work is cut into one contiguous block per thread, the same blocks for the same size and
// thread count, so results are reproducible for a given thread count (see parallel_for).
#pragma once

#include <algorithm>
#include <cstddef>

#if defined(TAPEGRAD_OPENMP)
#include <omp.h>
#endif

namespace tg {

// Threads for BLAS and for the ops (like torch.set_num_threads). n >= 1.
void set_num_threads(int n);
int num_threads();
// "openmp" when BLAS and the ops share OpenMP threads, "pthreads" when the ops stay on one
// thread next to OpenBLAS's own pool (or "serial": one-thread OpenBLAS).
const char* threading_backend();
// The sgemm kernel OpenBLAS chose ("SkylakeX", "Haswell", "Prescott", ...).
const char* blas_kernel();
// OpenBLAS's own description of its build ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ...").
const char* blas_build();

namespace detail {

// How many blocks parallel_for would run side by side here: the thread count, or 1 inside a
// parallel region and in builds whose loops stay serial. For ops that give each thread its
// own scratch buffers.
inline size_t parallel_width() {
#if defined(TAPEGRAD_OPENMP)
  return omp_in_parallel() ? 1 : static_cast<size_t>(std::max(omp_get_max_threads(), 1));
#else
  return 1;
#endif
}

// body(begin, end) over [0, n) in one block per thread; inline when there is one thread,
// when already inside a parallel region, or when n < 2 * grain (too little work to share).
// Blocks never overlap: a body may write its own range without locks. Sums across the range
// belong in the caller, in a fixed order (split the other axis instead, as layer_norm's
// weight gradient does), so that they do not depend on the thread count.
template <class Body>
void parallel_for(size_t n, size_t grain, Body&& body) {
#if defined(TAPEGRAD_OPENMP)
  const size_t threads = static_cast<size_t>(omp_get_max_threads());
  if (threads > 1 && n >= 2 * std::max<size_t>(grain, 1) && !omp_in_parallel()) {
    const size_t blocks = std::min(threads, n / std::max<size_t>(grain, 1));
#pragma omp parallel for schedule(static, 1) num_threads(blocks)
    for (size_t b = 0; b < blocks; ++b) body(n * b / blocks, n * (b + 1) / blocks);
    return;
  }
#else
  (void)grain;
#endif
  body(size_t{0}, n);
}

}  // namespace detail
}  // namespace tg
