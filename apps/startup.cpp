#include "apps/startup.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "autograd/parallel.hpp"
#include "base/build_info.hpp"

namespace tg::apps {

const char* kernel_for_this_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

void start_program(char** argv) {
  base::record_command_line(argv);  // for the run files' provenance
  if (std::getenv("OPENBLAS_CORETYPE") || std::string(blas_kernel()) != "Prescott") return;
  const char* kernel = kernel_for_this_cpu();
  if (!kernel) return;
  ::setenv("OPENBLAS_CORETYPE", kernel, 1);  // also stops a second exec
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernel already loaded
}

}  // namespace tg::apps
