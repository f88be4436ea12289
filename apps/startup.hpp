// What every program does first. Debian's OpenBLAS picks its kernel by CPU model when it is
// loaded and falls back to its slowest (Prescott) for models it does not know, as virtual
// CPUs often report (benchmarks/HISTORY.md). The choice is fixed at load time, so a program
// that finds the fallback on a CPU with AVX-512 or AVX2 runs itself again (exec: same
// arguments, same pid) with OPENBLAS_CORETYPE set. A user's own OPENBLAS_CORETYPE wins.
#pragma once

namespace tg::apps {

// The OpenBLAS kernel for this CPU's features ("SkylakeX", "Haswell"), or null when none of
// the fast kernels fits. The project's only table of CPU features to kernels: the scripts ask
// build/bin/blas_kernel, which prints it.
const char* kernel_for_this_cpu();

// Call first in main: may exec the program again with the kernel above.
void start_program(char** argv);

}  // namespace tg::apps
