#!/usr/bin/env bash
# A program started without OPENBLAS_CORETYPE must not run OpenBLAS's slowest kernel
# (Prescott, its fallback for CPU models it does not know) on a CPU that one of the fast
# kernels suits: it re-executes itself with that kernel (tg::apps::start_program). The
# expected kernel comes from the same table the programs use (build/bin/blas_kernel).
#   tests/blas_kernel.sh BIN_DIR corpus.txt workdir
set -euo pipefail
bin=$1 corpus=$2 work=$3
mkdir -p "$work"
env -u OPENBLAS_CORETYPE "$bin/train_lm" --corpus-file "$corpus" --min-count 2 --d-model 16 --layers 1 --heads 2 \
  --context 16 --batch 4 --steps 1 --results "$work/blas.json" >/dev/null 2>&1
used=$(grep -o '"blas": "[^"]*"' "$work/blas.json")
suits=$("$bin/blas_kernel")
loaded=$(env -u OPENBLAS_CORETYPE "$bin/blas_kernel" --loaded)
echo "this CPU suits: ${suits:-no fast kernel}; OpenBLAS alone loads: $loaded; train_lm used: $used"
if [ -n "$suits" ]; then
  case "$used" in
    *Prescott*) echo "the CPU suits $suits but train_lm ran OpenBLAS's Prescott kernel" >&2; exit 1 ;;
  esac
  # When OpenBLAS falls back on its own, the program must have switched to exactly that kernel.
  if [ "$loaded" = Prescott ] && [[ "$used" != *"$suits"* ]]; then
    echo "train_lm used $used, not $suits" >&2
    exit 1
  fi
fi
