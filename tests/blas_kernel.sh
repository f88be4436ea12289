#!/usr/bin/env bash
# A program started without OPENBLAS_CORETYPE must not run OpenBLAS's slowest kernel
# (Prescott, its fallback for CPU models it does not know) on a CPU with AVX2 or AVX-512:
# it re-executes itself with the right kernel (tg::select_blas_kernel).
#   tests/blas_kernel.sh path/to/train_lm corpus.txt workdir
set -euo pipefail
train_lm=$1 corpus=$2 work=$3
mkdir -p "$work"
env -u OPENBLAS_CORETYPE "$train_lm" --corpus-file "$corpus" --min-count 2 --d-model 16 --layers 1 --heads 2 \
  --context 16 --batch 4 --steps 1 --results "$work/blas.json" >/dev/null 2>&1
blas=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["blas"])' "$work/blas.json")
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
echo "train_lm used: $blas"
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
# The same features tg::select_blas_kernel asks for (SkylakeX: avx512f+avx512bw, Haswell: avx2+fma).
if { has avx512f && has avx512bw; } || { has avx2 && has fma; }; then
  case "$blas" in
    *Prescott*) echo "the CPU has AVX2/AVX-512 but OpenBLAS ran its Prescott kernel" >&2; exit 1 ;;
  esac
fi
