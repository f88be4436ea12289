#!/usr/bin/env bash
# Which rows of the input table does a step change? The converged study's GPT (learned, untied,
# seed 1) for one epoch under each optimizer, with exp_lifecycle counting per step the rows with
# a non-zero gradient and the rows whose values changed (bitwise): SGD changes only the rows of
# the batch's tokens, weight decay on the table changes every row, Adam's momentum keeps moving
# every row that ever had a gradient, LazyAdam updates only the batch's rows.
#   scripts/lifecycle_optimizers.sh [--bin DIR] [--out DIR] [--threads N]
# Results: one folder per optimizer under --out (default results/lifecycle_optimizers).
set -euo pipefail
# The rest is one block, which bash reads whole before running it: editing this file while
# a study runs (for hours) cannot change what the running invocation does next.
{
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/lifecycle_optimizers
threads=1
own_option() { :; }
source "$here/scripts/study_options.sh"
parse_study_options "$@"
gpt=(--model gpt --d-model 128 --layers 2 --heads 4 --context 64 --batch 32 --warmup 100 --dropout 0.2
     --schedule cosine --epochs 1 --valid-limit 50000 --threads "$threads" --modes learned)
# name, then the optimizer's flags
runs=("sgd|--optimizer sgd --lr 0.1 --weight-decay 0"
      "sgd-decay|--optimizer sgd --lr 0.1 --weight-decay 1e-4"
      "adam|--optimizer adam --lr 1e-3 --weight-decay 0"
      "adamw|--optimizer adamw --lr 1e-3 --weight-decay 0.1"
      "adamw-table-decay|--optimizer adamw --lr 1e-3 --weight-decay 0.1 --table-decay all"
      "lazy-adam|--optimizer lazy-adam --lr 1e-3 --weight-decay 0.1")
for run in "${runs[@]}"; do
  name=${run%%|*}
  read -ra flags <<< "${run#*|}"
  lock_study_folder "$out/$name"
  "$bin/exp_lifecycle" "${gpt[@]}" "${flags[@]}" --out "$out/$name"
done
exit
}
