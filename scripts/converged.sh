#!/usr/bin/env bash
# The five embedding modes at convergence: the GPT of section 1b trained with a cosine schedule
# over up to 12 epochs and early stopping on validation (patience 2), so that every run stops
# because validation stopped improving, not because the budget ran out; then the NPLM (n = 5,
# 96 features and hidden units, so that its output matrix can be tied to the features) with the
# optimisation of scripts/paper_nplm.sh (Adam, the paper's L2 1e-4, up to 40 epochs, patience 2).
# Seeds 1 to 3, seed-major (all modes of a seed before the next seed). Resumable: finished runs are skipped, the run in
# progress resumes from its per-epoch checkpoint. Each run's JSON carries its test loss in
# blocks of 1,000 tokens for the paired block bootstrap in REPORT.md.
#   scripts/converged.sh [--bin DIR] [--out DIR] [--threads N] [--seeds N]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/converged
threads=1
seeds=3
own_option() {
  if [ "$1" = --seeds ]; then need_value "$@" && seeds=$2 taken=2; fi
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"
gpt=(--model gpt --d-model 128 --layers 2 --heads 4 --context 64 --batch 32 --lr 1e-3 --warmup 100 --dropout 0.2
     --schedule cosine --epochs 12 --patience 2 --valid-limit 50000 --threads "$threads" --models gpt)
nplm=(--model nplm --d-model 96 --ngram 5 --context 32 --batch 16 --dropout 0 --optimizer adam --lr 1e-3
      --weight-decay 1e-4 --schedule inverse --lr-decay 1e-4 --warmup 200 --epochs 40 --patience 2
      --valid-limit 50000 --threads "$threads" --models nplm)
# Seed-major: the study with --seeds s repeats the finished runs of seeds 1..s-1 (skipped).
for s in $(seq 1 "$seeds"); do
  "$bin/exp_embeddings" "${gpt[@]}" --seeds "$s" --out "$out/gpt"
done
for s in $(seq 1 "$seeds"); do
  "$bin/exp_embeddings" "${nplm[@]}" --seeds "$s" --out "$out/nplm"
done
