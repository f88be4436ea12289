#!/usr/bin/env bash
# The main job: installs what is missing, builds, fetches the Brown corpus, trains word2vec
# and the language models, and prints the comparison table.
#   scripts/reproduce.sh          quick profile (one seed, small GPT, five embedding modes, a
#                                 short data-size sweep): about 20 minutes on 2 cores,
#                                 results in results/quick/
#   scripts/reproduce.sh --full   everything (3 seeds, GPT and NPLM, full sweeps, life cycle),
#                                 results in results/
set -euo pipefail
cd "$(dirname "$0")/.."
profile=quick
case "${1:-}" in
  "") ;;
  --full) profile=full ;;
  *) echo "usage: scripts/reproduce.sh [--full]" >&2; exit 2 ;;
esac

scripts/setup.sh build data report
source scripts/blas_env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
bash scripts/fetch_brown.sh
threads=$(nproc)
echo "OpenBLAS kernel: ${OPENBLAS_CORETYPE:-auto-detected}, threads: $threads" >&2
start=$(date +%s)

if [ "$profile" = quick ]; then
  out=results/quick
  gpt=(--model gpt --d-model 64 --layers 2 --heads 4 --context 64 --batch 32 --lr 2e-3 --warmup 40
       --dropout 0.1 --valid-limit 50000 --threads "$threads")
  build/bin/exp_embeddings "${gpt[@]}" --epochs 1 --models gpt --seeds 1 --out "$out/embeddings"
  build/bin/exp_data_size "${gpt[@]}" --epochs 1 --max-epochs 3 --fractions 0.05,0.25 \
    --modes learned,frozen-pretrained --models gpt --seeds 1 --out "$out/data_size"
  build/bin/exp_lifecycle "${gpt[@]}" --epochs 2 --train-fraction 0.25 --out "$out/lifecycle"
else
  out=results
  # Sized from measured costs on 2 cores (SkylakeX kernel): GPT d128 ~150 s per epoch, NPLM d96
  # ~90 s, ~25 s to evaluate the full splits; estimated total about 2.9 hours.
  gpt=(--model gpt --d-model 128 --layers 2 --heads 4 --context 64 --batch 32 --lr 1e-3 --warmup 100
       --dropout 0.2 --valid-limit 50000 --patience 1 --threads "$threads")
  nplm=(--model nplm --d-model 96 --ngram 5 --context 64 --batch 32 --lr 1e-3 --warmup 100
        --dropout 0.2 --valid-limit 50000 --patience 1 --threads "$threads")
  build/bin/exp_embeddings "${gpt[@]}" --epochs 2 --models gpt --seeds 3 --out "$out/embeddings_gpt"
  build/bin/exp_embeddings "${nplm[@]}" --epochs 2 --models nplm --seeds 3 --out "$out/embeddings_nplm"
  build/bin/exp_data_size "${gpt[@]}" --epochs 1 --max-epochs 6 --fractions 0.05,0.25,1 --models gpt --seeds 1 \
    --out "$out/data_size"
  build/bin/exp_lifecycle "${gpt[@]}" --epochs 2 --out "$out/lifecycle"
  python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
parts = [json.load(open(os.path.join(out, p, "summary.json"))) for p in ("embeddings_gpt", "embeddings_nplm")]
merged = dict(parts[0])
merged["runs"] = parts[0]["runs"] + parts[1]["runs"]
merged["rows"] = parts[0]["rows"] + parts[1]["rows"]
merged["data"] = parts[0]["data"]
os.makedirs(os.path.join(out, "embeddings"), exist_ok=True)
tmp = os.path.join(out, "embeddings", "summary.json.tmp")
json.dump(merged, open(tmp, "w"), indent=2)
os.replace(tmp, os.path.join(out, "embeddings", "summary.json"))
PY
fi

build/bin/report --results "$out"
end=$(date +%s)
echo
echo "== $profile profile finished in $(( (end - start) / 60 )) min; report: $out/REPORT.md =="
echo
sed -n '/^## 1\./,/^## Reference/p' "$out/REPORT.md" | grep '^|'
