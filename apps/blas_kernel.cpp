// build/bin/blas_kernel: prints the OpenBLAS kernel that suits this CPU (SkylakeX, Haswell),
// or nothing when none does, for scripts that set OPENBLAS_CORETYPE for other programs
// (PyTorch, bench_micro): scripts/blas_env.sh. --loaded prints the kernel OpenBLAS picked
// for this very process instead.
#include <cstdio>
#include <cstring>

#include "apps/startup.hpp"
#include "autograd/parallel.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--loaded") == 0) {
    std::printf("%s\n", tg::blas_kernel());
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: blas_kernel [--loaded]\n");
    return 2;
  }
  if (const char* kernel = tg::apps::kernel_for_this_cpu()) std::printf("%s\n", kernel);
  return 0;
}
