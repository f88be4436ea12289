# Sourced by the run scripts (not by the tests): picks OpenBLAS's kernel by CPU features when
# the user has not. Debian's OpenBLAS 0.3.21 falls back to its slowest (Prescott) sgemm on CPUs
# whose model it does not know, which virtual machines often report: measured here 33 GFLOP/s
# instead of 107 (SkylakeX kernel) on one core. Set OPENBLAS_CORETYPE yourself to override.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -r /proc/cpuinfo ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  case " $flags " in
    *" avx512f "*" avx512bw "*|*" avx512bw "*" avx512f "*) export OPENBLAS_CORETYPE=SkylakeX ;;
    *" avx2 "*) export OPENBLAS_CORETYPE=Haswell ;;
  esac
fi
