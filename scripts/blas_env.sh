# Sourced by the run scripts after the build: sets OPENBLAS_CORETYPE, unless the user has,
# for the programs that do not pick OpenBLAS's kernel themselves (PyTorch). The kernel comes
# from build/bin/blas_kernel, the project's one table of CPU features to kernels
# (apps/startup.cpp); the project's own programs apply the same table at start.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -x build/bin/blas_kernel ]; then
  kernel=$(build/bin/blas_kernel)
  [ -n "$kernel" ] && export OPENBLAS_CORETYPE=$kernel
  unset kernel
fi
