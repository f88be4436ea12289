#!/usr/bin/env bash
# The benchmark suite: micro-benchmarks (Google Benchmark) with the machine's sgemm peak,
# training throughput and peak memory against PyTorch, word2vec against gensim, GPT-2
# encoding against tiktoken. Installs
# what it needs, prints the tables, writes benchmarks/results/*.json and benchmarks/RESULTS.md.
# Also data-parallel scaling over 2 MPI ranks (benchmarks/mpi_scaling.py) when mpirun is there.
# With --scaling, also how cost grows with d_model and context up to GPT-2 small's shape
# (benchmarks/scaling.py; the longest part: about 40 minutes on 2 cores).
# Benchmarks measure; they never fail on a time.
#   scripts/bench.sh [--quick] [--scaling]   --quick: one repeat, fewer configurations
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=3
configs=gpt-tiny,gpt-tiny-tied,gpt-small,gpt-small-tied,nplm
scaling=0
for arg in "$@"; do
  case "$arg" in
    --quick) repeats=1; configs=gpt-tiny,nplm ;;
    --scaling) scaling=1 ;;
    *) echo "usage: scripts/bench.sh [--quick] [--scaling]" >&2; exit 2 ;;
  esac
done
scripts/setup.sh build data bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
source scripts/blas_env.sh  # after the build: it asks build/bin/blas_kernel
bash scripts/fetch_brown.sh
mkdir -p benchmarks/results
echo "OpenBLAS kernel: ${OPENBLAS_CORETYPE:-auto-detected}" >&2
build/bin/bench_micro --benchmark_repetitions="$repeats" --benchmark_report_aggregates_only=true \
  --benchmark_out=benchmarks/results/micro.json.tmp --benchmark_out_format=json
/usr/bin/python3 - <<'PY'
import json, os
p = "benchmarks/results/micro.json"
d = json.load(open(p + ".tmp"))
d["openblas_coretype"] = os.environ.get("OPENBLAS_CORETYPE", "auto")
json.dump(d, open(p + ".tmp", "w"), indent=2)
os.replace(p + ".tmp", p)
PY
/usr/bin/python3 benchmarks/train_vs_torch.py --repeats "$repeats" --configs "$configs"
# bf16 rows (on a CPU without native bf16 they say so instead of a number).
/usr/bin/python3 benchmarks/bf16_vs_torch.py --repeats "$repeats"
/usr/bin/python3 benchmarks/word2vec_vs_gensim.py --repeats "$repeats"
if command -v node >/dev/null && bash scripts/fetch_tiktoken.sh; then
  /usr/bin/python3 benchmarks/tokenizer_vs_tiktoken.py --repeats "$((repeats + 2))"
else
  echo "bench.sh: node or tiktoken missing: no tokenizer comparison" >&2
fi
if command -v mpirun >/dev/null && [ -x build/bin/bench_train ]; then
  (cd benchmarks && /usr/bin/python3 mpi_scaling.py --repeats "$repeats" \
    --configs "$([ "$repeats" = 1 ] && echo gpt-tiny || echo gpt-tiny,gpt-small)")
fi
if [ "$scaling" = 1 ]; then
  /usr/bin/python3 benchmarks/scaling.py --repeats "$repeats"
fi
/usr/bin/python3 benchmarks/render_results.py
