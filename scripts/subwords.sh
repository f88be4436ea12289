#!/usr/bin/env bash
# Words against subwords, fairly: the GPT of results/converged/gpt/ (d128, 2 layers, 4 heads,
# batch 32, dropout 0.2, cosine, patience 2) reading Brown in subword tokens, with what each
# tokenization asks for rather than the word model's settings:
#   - a context of as many words as the word model's 64: 64 x the tokens per word of the
#     training split (bpe8k 1,006,866 / 800,000 = 1.259: 81 tokens; gpt2 882,017 / 800,000 =
#     1.103: 71), and validation on as many words (50,000 words: 62,900 and 55,100 tokens);
#   - an epoch cap of 24 (every Brown-BPE run of converged/ ended at the 12-epoch cap);
#   - a learning rate chosen on validation by a search, as scripts/scaling.sh does.
# Parts:
#   lr     at each tokenization, learned and learned-tied at seed 1 for each rate of the grid,
#          into subwords/lr/<tokenizer>_lr<rate>/; the rate whose two runs have the lower mean
#          validation perplexity per word becomes the tokenization's (`chosen` below;
#          results/subwords/README.md lists the search);
#   sweep  learned and learned-tied at the chosen rate, 5 seeds, into subwords/<tokenizer>/.
# results/subwords/comparisons.json declares the tests before the first run: per-word test
# perplexity of each arm in words (converged/gpt/) against the same arm in each tokenization,
# seed by seed, Holm over the four.
# Resumable and shared like scripts/scaling.sh: one invocation per core, each takes the next
# folder no other invocation holds (.lock).
#   scripts/subwords.sh [--bin DIR] [--out DIR] [--threads N] [--seeds N] [--dry-run]
#                       [--parts lr,sweep] [--tokenizers bpe8k,gpt2]
set -euo pipefail
# One block, read whole before it runs: editing this file while a study runs cannot change
# what the running invocation does next.
{
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/subwords
threads=1
seeds=5
parts=lr,sweep
tokenizers=bpe8k,gpt2
dry_run=()
own_option() {
  case "$1" in
    --dry-run) dry_run=(--dry-run) taken=1 ;;
    --seeds) need_value "$@" && seeds=$2 taken=2 ;;
    --parts) need_value "$@" && parts=$2 taken=2 ;;
    --tokenizers) need_value "$@" && tokenizers=$2 taken=2 ;;
  esac
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"

# tokenizer -> its --tokenizer value, its context and its validation tokens
declare -A vocabulary=([bpe8k]="$here/results/converged/gpt_bpe8k/bpe8k" [gpt2]=gpt2)
declare -A context=([bpe8k]=81 [gpt2]=71) valid=([bpe8k]=62900 [gpt2]=55100)
declare -A grid=([bpe8k]="5e-4 1e-3 2e-3" [gpt2]="5e-4 1e-3 2e-3")
# tokenizer -> the rate the search chose (filled in as each search lands)
declare -A chosen=()
IFS=, read -ra tokenizer_list <<< "$tokenizers"
for t in "${tokenizer_list[@]}"; do
  [ -n "${vocabulary[$t]:-}" ] || { echo "subwords.sh: --tokenizers: unknown '$t' (use bpe8k, gpt2)" >&2; exit 2; }
done
for part in ${parts//,/ }; do
  case "$part" in lr | sweep) ;; *) echo "subwords.sh: --parts: unknown part '$part' (use lr, sweep)" >&2; exit 2 ;; esac
done
wanted() { [[ ,$parts, == *,$1,* ]]; }

common=(--model gpt --d-model 128 --layers 2 --heads 4 --batch 32 --warmup 100 --dropout 0.2 --schedule cosine
        --epochs 24 --patience 2 --threads "$threads" --models gpt --modes learned,learned-tied)

if wanted lr; then
  for t in "${tokenizer_list[@]}"; do
    reading=(--tokenizer "${vocabulary[$t]}" --context "${context[$t]}" --valid-limit "${valid[$t]}")
    for rate in ${grid[$t]}; do
      train_into "$out/lr/${t}_lr$rate" "$bin/exp_embeddings" "${reading[@]}" "${common[@]}" --lr "$rate" --seeds 1
    done
  done
fi
if wanted sweep; then
  for t in "${tokenizer_list[@]}"; do
    if [ -z "${chosen[$t]:-}" ]; then
      echo "subwords.sh: $t: no learning rate chosen yet (run --parts lr first): skipped" >&2
      continue
    fi
    reading=(--tokenizer "${vocabulary[$t]}" --context "${context[$t]}" --valid-limit "${valid[$t]}")
    train_into "$out/$t" "$bin/exp_embeddings" "${reading[@]}" "${common[@]}" --lr "${chosen[$t]}" --seeds "$seeds"
  done
fi
exit
}
