#!/usr/bin/env bash
# Bengio et al. (2003), Table 1 (Brown): the MLP rows without the trigram mixture, trained to
# convergence (early stopping on the whole validation split). Resumable: each finished row
# writes OUT/<row>_seed<S>.json and is skipped when invoked again; the row in progress
# checkpoints every CKPT_EVERY steps into OUT/ckpt/ and resumes from there. Each row's
# per-token losses go to OUT/tokens/ (not committed: about 7 MB), and its mixture with the
# deleted-interpolation trigram to OUT/mixture_<row>_seed<S>.json.
#   scripts/paper_nplm.sh [--bin DIR] [--out DIR] [--threads N] [--seed S] [ROW...]
# Rows (n, hidden h, features m, direct connections; the paper's test perplexity):
#   mlp9 5,100,30,no (276)  mlp1 5,50,60,yes (268)  mlp5 5,50,30,yes (279)
#   mlp7 3,50,30,yes (293)  mlp3 5,0,60,yes (310; h=0 is not built: see docs)
set -euo pipefail
# The rest is one block, which bash reads whole before running it: editing this file while
# a study runs (for hours) cannot change what the running invocation does next.
{
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/paper_nplm
threads=1
seed=1
rows=()
own_option() {
  case "$1" in
    --seed) need_value "$@" && seed=$2 taken=2 ;;
    mlp1 | mlp5 | mlp7 | mlp9) rows+=("$1") taken=1 ;;
  esac
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"
[ ${#rows[@]} -eq 0 ] && rows=(mlp9 mlp1 mlp5 mlp7)
lock_study_folder "$out"
mkdir -p "$out/ckpt" "$out/tokens"

# Optimisation (ours; the paper used plain SGD with batch 1 and L2 1e-4): Adam with the
# paper's L2 1e-4 on every parameter, 16 windows x 32 predictions per step (1,562 steps per
# epoch), lr 1e-3 / (1 + 1e-4 t), no dropout (explore/README.md: AdamW and dropout were worse).
common=(--model nplm --dropout 0 --optimizer adam --lr 1e-3 --weight-decay 1e-4 --schedule inverse --lr-decay 1e-4
        --warmup 200 --batch 16 --context 32 --epochs 40 --patience 2 --threads "$threads" --seed "$seed")
ckpt_every=500
for row in "${rows[@]}"; do
  case "$row" in
    mlp1) arch=(--ngram 5 --hidden 50 --d-model 60 --direct) ;;
    mlp5) arch=(--ngram 5 --hidden 50 --d-model 30 --direct) ;;
    mlp7) arch=(--ngram 3 --hidden 50 --d-model 30 --direct) ;;
    mlp9) arch=(--ngram 5 --hidden 100 --d-model 30) ;;
  esac
  result=$out/${row}_seed$seed.json
  ckpt=$out/ckpt/${row}_seed$seed.ckpt
  tokens=$out/tokens/${row}_seed$seed.json
  # A stopped run leaves partial results (marked "interrupted"): not done.
  if [ -f "$result" ] && ! grep -q '"interrupted"' "$result"; then
    echo "$row seed $seed: done ($result), skipped" >&2
  else
    resume=()
    if [ -f "$ckpt" ]; then
      echo "$row seed $seed: resuming from $ckpt" >&2
      resume=(--resume "$ckpt")
    fi
    "$bin/train_lm" "${common[@]}" "${arch[@]}" "${resume[@]}" --checkpoint "$ckpt" \
      --checkpoint-every "$ckpt_every" --results "$result" --token-nll "$tokens"
  fi
  # The paper's mixture rows: the NPLM interpolated with the deleted-interpolation trigram.
  mixture=$out/mixture_${row}_seed$seed.json
  if [ ! -f "$mixture" ] && [ -f "$tokens" ]; then
    "$bin/ngram" --smoothing jelinek-mercer --order 3 --mix-with "$tokens" --results "$mixture"
  fi
done
exit
}
