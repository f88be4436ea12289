#!/usr/bin/env bash
# The embedding modes at convergence, in four parts (and two more, run only on request):
#   gpt        the five modes for the GPT of section 1b, trained with a cosine schedule over up
#              to 12 epochs and early stopping on validation (patience 2), so that every run
#              stops because validation stopped improving, not because the budget ran out;
#   data-size  the same GPT on 5% and 25% of the training split (each share trains for
#              12 / share epochs at most, so every run may see as many tokens as a full one,
#              and waits patience / share epochs for an improvement, as many tokens as a full
#              run waits;
#              word2vec trained on the share, and on the full split for the -full rows); the
#              100% column is the gpt part's runs;
#   lifecycle  the life cycle of the learned tables (exp_lifecycle: rows touched, drift by
#              frequency, neighbours, WordSim) of the gpt part's learned and learned-tied runs,
#              seed 1, trained again with its measurements;
#   nplm       the NPLM (n = 5, 96 features and hidden units, so that its output matrix can be
#              tied to the features) with the optimisation of scripts/paper_nplm.sh (Adam, the
#              paper's L2 1e-4, up to 40 epochs, patience 2), validated every 1,000 steps as well
#              (an epoch is 1,563 steps), so that the curves show convergence within epochs;
#   bf16       the gpt part's learned and learned-tied runs with --precision bf16 (seeds 1-3;
#              --seeds 5 adds the two that decide the tied row), against whose fp32 runs the
#              report tests bf16's cost in perplexity; needs a CPU with native bf16
#              (AVX512_BF16 or AMX), so only --parts bf16 runs it;
#   lstm       the five modes for a two-layer LSTM language model of the GPT's width (d_model
#              and hidden 128, so that it can be tied; context 64 as the truncated
#              backpropagation length; the gpt part's optimisation but learning rate 1e-2 and up
#              to 20 epochs, seeds 1-3, each seed its own word2vec): do the conclusions hold
#              for a recurrent model? Only on request.
#   lazy-adam  the gpt part's learned runs with --optimizer lazy-adam (seeds 1-3): what a step
#              that moves only the batch's rows costs or gains against AdamW, whose momentum
#              moves every row ever seen; and its life cycle (seed 1, learned): rare-row drift;
#   d256       tying at a second width: the GPT at d_model 256, learned and learned-tied, both
#              with --table-decay none (one decay policy, as section 1c), seeds 1-3;
#   gpt2       the five modes for the gpt part's GPT reading GPT-2's 50,257 byte-level BPE
#              tokens (--tokenizer gpt2; word2vec trained on the same tokens), seeds 1-3;
#   bpe8k      learned and learned-tied in a byte-level BPE of 8,192 tokens trained on Brown's
#              training split (tokenize train, into bpe8k/), seeds 1-3; then learned with
#              --table-decay none into gpt_bpe8k_table_decay_none/, tying's partner under one
#              decay policy (section 1c);
#   gpt2-decay-none  the gpt2 part's learned with --table-decay none (seeds 1-3), into
#              gpt2_table_decay_none/: tying's partner under one decay policy (section 1c);
#   lifecycle-gpt2  the life cycle of the gpt2 part's learned and learned-tied tables (seed 1):
#              which of the 50,257 rows ever get a gradient, what happens to the others, and
#              the under-trained tokens found from the tables alone.
#   same-text  the data-size part's -full rows with a table that saw the same text as word2vec's
#              -full vectors but was learned end to end: the learned GPT of the gpt part
#              (seed 1) trained again on the whole split with --export-vectors (its best
#              epoch's table, into lm_table/), then exp_data_size with that table as
#              --full-vectors, learned and the two -full kinds, on 5% and 25% (seeds 1-3), into
#              data_size_lm_table/: does the -full rows' gain come from word2vec or from the
#              text it saw?
#   bands      the gpt part's learned and learned-tied seeds 2-4 trained again into gpt_bands/
#              (they predate the recording of test_bands), so that the frequency-band table
#              pairs each mode with learned over seeds 2-5; same seed and thread count, so their
#              test perplexities equal the originals' up to the order of the sums (another CPU's
#              SIMD kernels, a later build): the report uses a rerun's bands only within 0.1%.
#              The last seven run only on request.
# Seeds 1 to 5 for the gpt and nplm parts, each seed's pretrained runs from word2vec trained with
# that seed (--w2v-seeds per-run); seeds 1 to 3 for the others. Seed-major (all runs of a seed before the next seed). --seeds N
# gives every part N seeds. Resumable: finished runs
# are skipped, the run in progress resumes from its per-epoch checkpoint. Each run's JSON
# carries its test loss in blocks of 1,000 tokens for the paired block bootstrap in REPORT.md.
# --parts runs some of them, in the order above. Two invocations (one per core) can share a
# part but the life cycle: each skips the runs the other has claimed (RUN.lock).
# --dry-run lists each part's runs and what an invocation would do with each (done, resume from
# its checkpoint, train, and which process is training it now), training nothing.
#   scripts/converged.sh [--bin DIR] [--out DIR] [--threads N] [--seeds N] [--dry-run]
#                        [--parts gpt,data-size,lifecycle,nplm,bf16,lstm,lazy-adam,d256,gpt2,
#                                 bpe8k,gpt2-decay-none,lifecycle-gpt2,bands,same-text]
set -euo pipefail
# The rest is one block, which bash reads whole before running it: editing this file while
# a study runs (for hours) cannot change what the running invocation does next.
{
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
out=$here/results/converged
threads=1
seeds=
parts=gpt,data-size,lifecycle,nplm
dry_run=()
own_option() {
  case "$1" in
    --dry-run) dry_run=(--dry-run) taken=1 ;;
    --seeds) need_value "$@" && seeds=$2 taken=2 ;;
    --parts) need_value "$@" && parts=$2 taken=2 ;;
  esac
}
source "$here/scripts/study_options.sh"
parse_study_options "$@"
IFS=, read -ra part_list <<< "$parts"
for part in "${part_list[@]}"; do
  case "$part" in
    gpt | data-size | lifecycle | nplm | bf16 | lstm | lazy-adam | d256 | gpt2 | bpe8k | gpt2-decay-none | \
      lifecycle-gpt2 | bands | same-text) ;;
    *)
      echo "converged.sh: --parts: unknown part '$part' (use gpt, data-size, lifecycle, nplm, bf16, lstm," \
        "lazy-adam, d256, gpt2, bpe8k, gpt2-decay-none, lifecycle-gpt2, bands, same-text)" >&2
      exit 2
      ;;
  esac
done
wanted() { [[ ,$parts, == *,$1,* ]]; }
# A dry run lists what each part would train and takes no lock: it trains nothing.
study_folder() { [ ${#dry_run[@]} -gt 0 ] || lock_study_folder "$1"; }
# The GPT of every gpt* part but its width (d256 sets its own: a flag is given once).
gpt_lm=(--model gpt --layers 2 --heads 4 --context 64 --batch 32 --lr 1e-3 --warmup 100 --dropout 0.2
        --schedule cosine --epochs 12 --patience 2 --valid-limit 50000 --threads "$threads")
gpt_at=("${gpt_lm[@]}" --models gpt)
gpt=(--d-model 128 "${gpt_at[@]}")
data_size=(--fractions 0.05,0.25 --max-epochs 240 --share-patience tokens
           --modes learned,learned-tied,frozen-pretrained,finetune-pretrained,frozen-pretrained-full,finetune-pretrained-full)
# The LSTM at the GPT's learning rate (1e-3) was still improving after 12 epochs (results/converged/
# lstm_lr1e-3/); at 1e-2 it passes that run's epoch-12 validation by epoch 4, so 1e-2, 20 epochs.
lstm=(--model lstm --d-model 128 --hidden 128 --layers 2 --context 64 --batch 32 --lr 1e-2 --warmup 100
      --dropout 0.2 --schedule cosine --epochs 20 --patience 2 --valid-limit 50000 --threads "$threads"
      --models lstm)
nplm=(--model nplm --d-model 96 --ngram 5 --context 32 --batch 16 --dropout 0 --optimizer adam --lr 1e-3
      --weight-decay 1e-4 --schedule inverse --lr-decay 1e-4 --warmup 200 --epochs 40 --patience 2
      --valid-limit 50000 --eval-every 1000 --threads "$threads" --models nplm)
# The experiment programs train seed-major themselves (every run of seed 1, then seed 2, ...).
if wanted gpt; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --w2v-seeds per-run --seeds "${seeds:-5}" --out "$out/gpt"
fi
if wanted data-size; then
  "$bin/exp_data_size" "${dry_run[@]}" "${gpt[@]}" "${data_size[@]}" --seeds "${seeds:-3}" --out "$out/data_size"
fi
if wanted lifecycle; then
  study_folder "$out/lifecycle"
  "$bin/exp_lifecycle" "${dry_run[@]}" "${gpt[@]}" --out "$out/lifecycle"
fi
if wanted nplm; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${nplm[@]}" --w2v-seeds per-run --seeds "${seeds:-5}" --out "$out/nplm"
fi
if wanted bf16; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --modes learned,learned-tied --precision bf16 --seeds "${seeds:-3}" \
    --out "$out/gpt_bf16"
fi
if wanted lstm; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${lstm[@]}" --w2v-seeds per-run --seeds "${seeds:-3}" --out "$out/lstm"
fi
if wanted lazy-adam; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --modes learned --optimizer lazy-adam --seeds "${seeds:-3}" \
    --out "$out/gpt_lazy_adam"
  study_folder "$out/lifecycle_lazy_adam"
  "$bin/exp_lifecycle" "${dry_run[@]}" "${gpt[@]}" --modes learned --optimizer lazy-adam --out "$out/lifecycle_lazy_adam"
fi
if wanted d256; then
  "$bin/exp_embeddings" "${dry_run[@]}" --d-model 256 "${gpt_at[@]}" --modes learned,learned-tied --table-decay none \
    --seeds "${seeds:-3}" --out "$out/gpt_d256"
fi
if wanted gpt2; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --tokenizer gpt2 --w2v-seeds per-run --seeds "${seeds:-3}" \
    --out "$out/gpt2"
fi
if wanted bpe8k; then
  # The vocabulary is trained once (deterministic), before the first run needs it.
  vocab=$out/gpt_bpe8k/bpe8k
  if [ ! -f "$vocab/encoder.json" ] && [ ${#dry_run[@]} -eq 0 ]; then
    "$bin/tokenize" train --corpus brown-train --vocab-size 8192 --output "$vocab"
  fi
  if [ -f "$vocab/encoder.json" ]; then
    "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --tokenizer "$vocab" \
      --modes learned,learned-tied --seeds "${seeds:-3}" --out "$out/gpt_bpe8k"
    "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --tokenizer "$vocab" \
      --modes learned --table-decay none --seeds "${seeds:-3}" --out "$out/gpt_bpe8k_table_decay_none"
  else
    echo "$out/gpt_bpe8k, $out/gpt_bpe8k_table_decay_none: every run to train (after the vocabulary, $vocab)"
  fi
fi
if wanted gpt2-decay-none; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --tokenizer gpt2 --modes learned --table-decay none \
    --seeds "${seeds:-3}" --out "$out/gpt2_table_decay_none"
fi
if wanted lifecycle-gpt2; then
  study_folder "$out/lifecycle_gpt2"
  "$bin/exp_lifecycle" "${dry_run[@]}" "${gpt[@]}" --tokenizer gpt2 --out "$out/lifecycle_gpt2"
fi
if wanted bands; then
  "$bin/exp_embeddings" "${dry_run[@]}" "${gpt[@]}" --modes learned,learned-tied --seed 2 --seeds 3 --out "$out/gpt_bands"
fi
if wanted same-text; then
  # The table is trained once (resumable from its checkpoint), before the first run reads it.
  table=$out/lm_table/gpt_learned_seed1.vec
  if [ ! -s "$table" ] && [ ${#dry_run[@]} -eq 0 ]; then
    study_folder "$out/lm_table"
    checkpoint=$out/lm_table/gpt_learned_seed1.ckpt resume=()
    [ -f "$checkpoint" ] && resume=(--resume "$checkpoint")
    "$bin/train_lm" --d-model 128 "${gpt_lm[@]}" --seed 1 --export-vectors "$table" \
      --results "$out/lm_table/gpt_learned_seed1.json" --checkpoint "$checkpoint" "${resume[@]}"
  fi
  if [ -s "$table" ]; then
    "$bin/exp_data_size" "${dry_run[@]}" "${gpt[@]}" --fractions 0.05,0.25 --max-epochs 240 --share-patience tokens \
      --modes learned,frozen-pretrained-full,finetune-pretrained-full --full-vectors "$table" \
      --seeds "${seeds:-3}" --out "$out/data_size_lm_table"
  else
    echo "$out/data_size_lm_table: every run to train (after the table, $table)"
  fi
fi
exit
}
