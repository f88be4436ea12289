#include "autograd/parallel.hpp"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
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

const char* blas_kernel() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

void select_blas_kernel(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::string(blas_kernel()) != "Prescott") return;
  __builtin_cpu_init();
  const char* kernel = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    kernel = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    kernel = "Haswell";
  if (!kernel) return;
  ::setenv("OPENBLAS_CORETYPE", kernel, 1);  // also stops a second exec
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernel already loaded
}

}  // namespace tg
