#!/usr/bin/env bash
# exp_data_size's word2vec per share: one file for every seed by default (the committed sweeps'
# layout), each seed its own with --w2v-seeds per-run, and the file each run read recorded in
# its configuration.
#   tests/data_size_vectors.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
bin=$1 toy=$2 work=$3
suite=data_size_vectors
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rm -rf "$work"
mkdir -p "$work"
flags=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
       --epochs 1 --max-epochs 2 --fractions 0.5 --models gpt --modes learned,finetune-pretrained --seeds 2
       --w2v-iter 1)
vectors_of() {  # the vectors file a run file's configuration names
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['config']['vectors'])" "$1"
}

"$bin/exp_data_size" "${flags[@]}" --out "$work/shared" >/dev/null 2>"$work/shared.err" ||
  die "the default sweep failed: $(tail -1 "$work/shared.err")"
[ -f "$work/shared/word2vec_f0.5.bin" ] || die "no word2vec_f0.5.bin: $(ls "$work/shared")"
ls "$work/shared" | grep -q "_seed2.bin$" && die "the default trained a second seed's vectors: $(ls "$work/shared")"
[ "$(vectors_of "$work/shared/gpt_finetune-pretrained_f0.5_seed2.json")" = word2vec_f0.5.bin ] ||
  die "seed 2 does not read the shared vectors: $(vectors_of "$work/shared/gpt_finetune-pretrained_f0.5_seed2.json")"

"$bin/exp_data_size" "${flags[@]}" --w2v-seeds per-run --out "$work/per_run" >/dev/null 2>"$work/per_run.err" ||
  die "the per-run sweep failed: $(tail -1 "$work/per_run.err")"
[ -f "$work/per_run/word2vec_f0.5_seed2.bin" ] || die "no word2vec_f0.5_seed2.bin: $(ls "$work/per_run")"
[ "$(vectors_of "$work/per_run/gpt_finetune-pretrained_f0.5_seed2.json")" = word2vec_f0.5_seed2.bin ] ||
  die "seed 2 does not read its own vectors"
[ "$(vectors_of "$work/per_run/gpt_finetune-pretrained_f0.5_seed1.json")" = word2vec_f0.5.bin ] ||
  die "seed 1 does not read the first seed's vectors"
grep -q '"word2vec_f0.5_seed2.bin"' "$work/per_run/summary.json" || die "the summary lacks seed 2's word2vec log"
# The two seeds' vectors differ (trained with other seeds), so seed 2's runs differ across the two.
cmp -s "$work/per_run/word2vec_f0.5.bin" "$work/per_run/word2vec_f0.5_seed2.bin" &&
  die "seed 2's vectors are seed 1's"
echo "$suite: passed"
