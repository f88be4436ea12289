#!/usr/bin/env bash
# The five embedding modes at convergence: the GPT of section 1b trained with a cosine schedule
# over up to 12 epochs and early stopping on validation (patience 2), so that every run stops
# because validation stopped improving, not because the budget ran out; then the NPLM (n = 5,
# 96 features and hidden units, so that its output matrix can be tied to the features) with the
# optimisation of scripts/paper_nplm.sh (Adam, the paper's L2 1e-4, up to 40 epochs, patience 2).
# Seeds 1 to 3, seed-major (all modes of a seed before the next seed). Resumable: finished runs are skipped, the run in
# progress resumes from its per-epoch checkpoint. Each run's JSON carries its test loss in
# blocks of 1,000 tokens for the paired block bootstrap in REPORT.md.
# --models gpt or nplm runs one half (e.g. each on its own core).
#   scripts/converged.sh [--bin DIR] [--out DIR] [--threads N] [--seeds N] [--models gpt,nplm]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/converged
threads=1
seeds=3
models=gpt,nplm
own_option() {
  case "$1" in
    --seeds) need_value "$@" && seeds=$2 taken=2 ;;
    --models) need_value "$@" && models=$2 taken=2 ;;
  esac
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"
case "$models" in
  gpt | nplm | gpt,nplm | nplm,gpt) ;;
  *)
    echo "converged.sh: --models must be gpt, nplm or gpt,nplm, got '$models'" >&2
    exit 2
    ;;
esac
gpt=(--model gpt --d-model 128 --layers 2 --heads 4 --context 64 --batch 32 --lr 1e-3 --warmup 100 --dropout 0.2
     --schedule cosine --epochs 12 --patience 2 --valid-limit 50000 --threads "$threads" --models gpt)
nplm=(--model nplm --d-model 96 --ngram 5 --context 32 --batch 16 --dropout 0 --optimizer adam --lr 1e-3
      --weight-decay 1e-4 --schedule inverse --lr-decay 1e-4 --warmup 200 --epochs 40 --patience 2
      --valid-limit 50000 --threads "$threads" --models nplm)
# Seed-major: the study with --seeds s repeats the finished runs of seeds 1..s-1 (skipped).
if [[ ,$models, == *,gpt,* ]]; then
  lock_study_folder "$out/gpt"
  for s in $(seq 1 "$seeds"); do
    "$bin/exp_embeddings" "${gpt[@]}" --seeds "$s" --out "$out/gpt"
  done
fi
if [[ ,$models, == *,nplm,* ]]; then
  lock_study_folder "$out/nplm"
  for s in $(seq 1 "$seeds"); do
    "$bin/exp_embeddings" "${nplm[@]}" --seeds "$s" --out "$out/nplm"
  done
fi
