#!/usr/bin/env bash
# The study across scale: does tying, or a pretrained word2vec table, still pay as the GPT grows?
# The GPT of results/converged/gpt/ (context 64, batch 32, dropout 0.2, cosine schedule over up
# to 12 epochs, early stopping with patience 2 on the first 50,000 validation tokens, one
# thread) at four sizes, heads of 32 dimensions each:
#   d64   2 layers  2 heads   body ~0.10M parameters
#   d128  2 layers  4 heads   body ~0.40M
#   d192  3 layers  6 heads   body ~1.3M
#   d256  4 layers  8 heads   body ~3.2M   (32x the smallest)
# Every arm with --table-decay none, so that no vocabulary matrix decays in any arm and tying is
# compared with the untied GPT under one policy (results/converged/gpt_table_decay_none/).
# Parts:
#   lr     the learning-rate search: at each size, learned and learned-tied, seed 1, at three
#          rates or more (the size's grid below; a rate is added beyond an end of the grid
#          when that end's learned run is the best so far: d64's 5e-4, d128's 2.5e-4), into
#          lr/<size>_lr<rate>/. The rate whose two runs
#          have the lower mean validation perplexity is the size's rate for the sweep
#          (results/scaling/README.md lists the search and the choice).
#   sweep  each size at its chosen rate, into gpt_<size>/: learned, learned-tied and
#          finetune-pretrained (each seed its own word2vec at that width) at every size,
#          frozen-pretrained and frozen-random at the smallest and the largest; 5 seeds.
#          A size whose rate is not chosen yet is skipped, saying so.
#   control  frozen-random's longer budget: its d64 runs ended at the 12-epoch cap on their best
#          epoch, so its row is an upper bound on a converged one; here seeds 1-3 of it at d64
#          with up to 24 epochs (the cosine over 24), into control/d64_frozen-random_24ep/.
#          Not in the declared trend family: it says how far the cap overstates the floor.
#   data   the data sweep at the smallest and the largest size (d64, d256), each at its chosen
#          rate, into data_<size>/: learned, learned-tied and finetune-pretrained (each seed its
#          own word2vec, trained on the share) on 12.5% and 50% of the training split, 5
#          seeds (with the whole split, three points over 8x the data; 25% was dropped before
#          any run, the plan being far over the issue's 60 CPU-hours); a share f trains for 12 / f epochs at most and waits 2 / f epochs for an
#          improvement (--share-patience tokens): as many tokens as a run on the whole split,
#          whose point is gpt_<size>/ (the same settings). trends_data.json declares its tests.
# Resumable: finished runs are skipped, the one in progress resumes from its checkpoint. Run one
# invocation per core: each takes the next folder no other invocation holds (.lock). Each run
# records its OpenBLAS kernel; resume a folder under the kernel it started with
# (OPENBLAS_CORETYPE; results/scaling/README.md says which).
#   scripts/scaling.sh [--bin DIR] [--out DIR] [--threads N] [--seeds N] [--dry-run]
#                      [--parts lr,sweep,data,control] [--sizes d64,d128,d192,d256]
set -euo pipefail
# One block, read whole before it runs: editing this file while a study runs cannot change
# what the running invocation does next.
{
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/scaling
threads=1
seeds=5
parts=lr,sweep
sizes=d64,d128,d192,d256
dry_run=()
own_option() {
  case "$1" in
    --dry-run) dry_run=(--dry-run) taken=1 ;;
    --seeds) need_value "$@" && seeds=$2 taken=2 ;;
    --parts) need_value "$@" && parts=$2 taken=2 ;;
    --sizes) need_value "$@" && sizes=$2 taken=2 ;;
  esac
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"

# size -> "d_model layers heads"
declare -A shape=([d64]="64 2 2" [d128]="128 2 4" [d192]="192 3 6" [d256]="256 4 8")
# size -> the learning rates searched
declare -A grid=([d64]="5e-4 1e-3 2e-3 4e-3" [d128]="2.5e-4 5e-4 1e-3 2e-3" [d192]="5e-4 1e-3 2e-3"
                 [d256]="2.5e-4 5e-4 1e-3")
# size -> the rate the search chose (filled in as each size's search lands; the search's table
# is in results/scaling/README.md)
declare -A chosen=([d64]=1e-3 [d128]=5e-4)
IFS=, read -ra size_list <<< "$sizes"
for size in "${size_list[@]}"; do
  [ -n "${shape[$size]:-}" ] || { echo "scaling.sh: --sizes: unknown size '$size' (use d64, d128, d192, d256)" >&2; exit 2; }
done
for part in ${parts//,/ }; do
  case "$part" in lr | sweep | data | control) ;; *) echo "scaling.sh: --parts: unknown part '$part' (use lr, sweep, data, control)" >&2; exit 2 ;; esac
done
wanted() { [[ ,$parts, == *,$1,* ]]; }

base=(--model gpt --context 64 --batch 32 --warmup 100 --dropout 0.2 --schedule cosine
        --patience 2 --valid-limit 50000 --threads "$threads" --models gpt --table-decay none)
common=("${base[@]}" --epochs 12)
gpt_of() {
  local d layers heads
  read -r d layers heads <<< "${shape[$1]}"
  echo --d-model "$d" --layers "$layers" --heads "$heads"
}

if wanted lr; then
  for size in "${size_list[@]}"; do
    for rate in ${grid[$size]}; do
      # shellcheck disable=SC2046
      train_into "$out/lr/${size}_lr$rate" "$bin/exp_embeddings" $(gpt_of "$size") "${common[@]}" --lr "$rate" \
        --modes learned,learned-tied --seeds 1
    done
  done
fi
if wanted sweep; then
  for size in "${size_list[@]}"; do
    if [ -z "${chosen[$size]:-}" ]; then
      echo "scaling.sh: $size: no learning rate chosen yet (run --parts lr first): skipped" >&2
      continue
    fi
    modes=learned,learned-tied,finetune-pretrained
    if [ "$size" = d64 ] || [ "$size" = d256 ]; then modes+=,frozen-pretrained,frozen-random; fi
    # shellcheck disable=SC2046
    train_into "$out/gpt_$size" "$bin/exp_embeddings" $(gpt_of "$size") "${common[@]}" --lr "${chosen[$size]}" \
      --modes "$modes" --w2v-seeds per-run --seeds "$seeds"
  done
fi
if wanted data; then
  for size in "${size_list[@]}"; do
    [ "$size" = d64 ] || [ "$size" = d256 ] || continue
    if [ -z "${chosen[$size]:-}" ]; then
      echo "scaling.sh: $size: no learning rate chosen yet (run --parts lr first): skipped" >&2
      continue
    fi
    # shellcheck disable=SC2046
    train_into "$out/data_$size" "$bin/exp_data_size" $(gpt_of "$size") "${common[@]}" --lr "${chosen[$size]}" \
      --fractions 0.125,0.5 --max-epochs 96 --share-patience tokens \
      --modes learned,learned-tied,finetune-pretrained --w2v-seeds per-run --seeds "$seeds"
  done
fi
if wanted control && [[ ,$sizes, == *,d64,* ]]; then
  # shellcheck disable=SC2046
  train_into "$out/control/d64_frozen-random_24ep" "$bin/exp_embeddings" $(gpt_of d64) "${base[@]}" \
    --epochs 24 --lr "${chosen[d64]}" --modes frozen-random --seeds 3
fi
exit
}
