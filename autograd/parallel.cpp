#include "autograd/parallel.hpp"

#include <cblas.h>

#include <stdexcept>
#include <string>

namespace tg {

void set_num_threads(int n) {
  if (n < 1)
    throw std::invalid_argument("set_num_threads: need at least 1 thread, got " +
                                std::to_string(n));
  openblas_set_num_threads(n);
#if defined(TAPEGRAD_OPENMP)
  omp_set_num_threads(n);
#endif
}

int num_threads() {
  return openblas_get_num_threads();
}

const char* threading_backend() {
  switch (openblas_get_parallel()) {
    case 0:
      return "serial";
    case 1:
      return "pthreads";
    default:
      return "openmp";
  }
}

const char* blas_build() {
  return openblas_get_config();
}

const char* blas_kernel() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

}  // namespace tg
