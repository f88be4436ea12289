#!/usr/bin/env bash
# A study that is killed and invoked again gives the numbers of one uninterrupted invocation:
# finished runs are skipped (their JSON is kept), the run in progress resumes from its
# per-epoch checkpoint, word2vec's vectors are reused.
#   tests/study_resume.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
bin=$1 toy=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
flags=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
       --epochs 16 --models gpt --modes learned,finetune-pretrained --seeds 2 --w2v-iter 1)
suite=study_resume
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Waits up to 30 s for a file: a toy run lasts milliseconds, so the polling is fine-grained.
wait_for() { for _ in $(seq 6000); do [ -f "$1" ] && return; sleep 0.005; done; }

"$bin/exp_embeddings" "${flags[@]}" --out "$work/whole" >/dev/null 2>"$work/whole.err" || die "uninterrupted study failed"
# Seed-major: every mode's seed 1 before any seed 2, so that a stopped study has whole seeds.
order=$(grep -o '^\[gpt [a-z-]* seed [0-9]\] valid ppl' "$work/whole.err" | sed 's/^\[gpt //; s/\] valid ppl//' | paste -sd,)
[ "$order" = "learned seed 1,finetune-pretrained seed 1,learned seed 2,finetune-pretrained seed 2" ] ||
  die "the runs were not trained seed by seed: $order"

# Killed (SIGKILL: nothing gets to clean up) once the third run (learned, seed 2) has
# checkpointed an epoch; the runs have enough epochs that the checkpoint is there long enough
# to be seen.
"$bin/exp_embeddings" "${flags[@]}" --out "$work/parts" >/dev/null 2>"$work/parts1.err" &
pid=$!
wait_for "$work/parts/gpt_learned_seed2.ckpt"
kill -KILL $pid
wait $pid 2>/dev/null
[ -f "$work/parts/gpt_learned_seed1.json" ] || die "the first run had not finished before the kill"
[ ! -f "$work/parts/gpt_learned_seed2.json" ] || die "the kill came too late: the second run had finished"

# --dry-run says what invoking the study again would do, and does nothing: no file changes.
before=$(ls -l --time-style=full-iso "$work/parts")
"$bin/exp_embeddings" "${flags[@]}" --out "$work/parts" --dry-run >"$work/dry.out" 2>"$work/dry.err" ||
  die "the dry run failed: $(tail -1 "$work/dry.err")"
grep -q "^4 runs in $work/parts: 2 done, 1 to resume, 1 to start$" "$work/dry.out" ||
  die "the dry run counted otherwise: $(head -1 "$work/dry.out")"
dry=$(sed 's/  */ /g' "$work/dry.out" | sed -n 2,5p | paste -sd,)
[ "$dry" = " gpt learned seed 1 done: test ppl $(grep -o '"test_ppl": [0-9.]*' "$work/parts/gpt_learned_seed1.json" |
  awk '{printf "%.1f", $2}'), best epoch $(grep -o '"best_epoch": [0-9]*' "$work/parts/gpt_learned_seed1.json" | awk '{print $2}'), gpt finetune-pretrained seed 1 done: test ppl $(
  grep -o '"test_ppl": [0-9.]*' "$work/parts/gpt_finetune-pretrained_seed1.json" | awk '{printf "%.1f", $2}'), best epoch $(
  grep -o '"best_epoch": [0-9]*' "$work/parts/gpt_finetune-pretrained_seed1.json" | awk '{print $2}'), gpt learned seed 2 resumes from gpt_learned_seed2.ckpt, gpt finetune-pretrained seed 2 to train" ] ||
  die "the dry run listed: $dry"
# And what the two runs not done would cost at the two finished runs' mean CPU time.
cpu() { grep -o '"cpu_s": [0-9.]*' "$work/parts/gpt_$1_seed1.json" | awk '{print $2}'; }
estimate=$(awk -v a="$(cpu learned)" -v b="$(cpu finetune-pretrained)" \
  'BEGIN { m = (a + b) / 2; if (2 * m < 60 && m < 60) printf "about %.1fs of CPU time for the 2 not done (the finished runs'"'"' mean, %.1fs a run)", 2 * m, m }')
[ -n "$estimate" ] || die "the toy runs took a minute or more of CPU time: the check below expects seconds"
[ "$(sed -n 6p "$work/dry.out" | sed 's/^ *//')" = "$estimate" ] ||
  die "the dry run estimated: $(sed -n 6p "$work/dry.out") (expected: $estimate)"
[ "$(ls -l --time-style=full-iso "$work/parts")" = "$before" ] || die "the dry run changed the study's folder"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/dry-new" --dry-run >/dev/null 2>&1 || die "a dry run of a new study failed"
[ ! -e "$work/dry-new" ] || die "a dry run created the study's folder"

"$bin/exp_embeddings" "${flags[@]}" --out "$work/parts" >/dev/null 2>"$work/parts2.err" || die "resumed study failed: $(tail -3 "$work/parts2.err")"
grep -q "gpt learned seed 1\] done, skipped" "$work/parts2.err" || die "the finished run was not skipped"
# Vectors are trained when a run that needs them trains: seed 1's (its pretrained run had
# finished) not again, seed 2's now (the killed invocation had not reached its pretrained run).
[ "$(grep -c "^\[word2vec .*done in" "$work/parts2.err")" = 1 ] ||
  die "the resumed study trained $(grep -c "^\[word2vec .*done in" "$work/parts2.err") word2vec files, not 1 (seed 2's)"
grep -q "\[gpt learned seed 2\] resumed from .*gpt_learned_seed2.ckpt at step [1-9]" "$work/parts2.err" ||
  die "the run in progress did not resume from its checkpoint"

for run in gpt_learned_seed1 gpt_learned_seed2 gpt_finetune-pretrained_seed1 gpt_finetune-pretrained_seed2; do
  "$bin/compare_run" "$work/whole/$run.json" "$work/parts/$run.json" || die "$run differs from the uninterrupted study"
done
[ -z "$(ls "$work/parts"/*.ckpt 2>/dev/null)" ] || die "checkpoints of finished runs were left behind"
# A stop during a run's final evaluation leaves its JSON finished and its checkpoint not yet
# deleted: the next invocation skips the run and deletes the checkpoint (never read: a stand-in).
cp "$work/parts/gpt_learned_seed1.json" "$work/parts/gpt_learned_seed1.ckpt"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/parts" --dry-run 2>/dev/null | grep -q "gpt learned seed 1 *done" ||
  die "the dry run did not call a finished run with a leftover checkpoint done"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/parts" >/dev/null 2>"$work/parts3.err" ||
  die "the study with a leftover checkpoint failed: $(tail -1 "$work/parts3.err")"
grep -q "gpt learned seed 1\] done, skipped" "$work/parts3.err" || die "the finished run with a leftover checkpoint was not skipped"
[ ! -e "$work/parts/gpt_learned_seed1.ckpt" ] || die "the checkpoint left beside a finished run was kept"
# A study resumed with more seeds lists every finished run in its summary from the start, not
# only those its loop has passed again: here the first new run cannot even start (its results
# path is a folder), after all four finished runs of the folder are in the summary.
more=("${flags[@]}")
more[${#more[@]}-3]=3  # --seeds 3
mkdir "$work/whole/gpt_learned_seed3.json"
if "$bin/exp_embeddings" "${more[@]}" --out "$work/whole" >/dev/null 2>"$work/more.err"; then
  die "a run whose results path is a folder trained"
fi
[ "$(grep -c '"best_epoch":' "$work/whole/summary.json")" = 4 ] ||
  die "the summary lost finished runs when a new seed started: $(grep -c '"best_epoch":' "$work/whole/summary.json") runs"
rmdir "$work/whole/gpt_learned_seed3.json"

# A study trained in parts: seed 2 alone in another folder (--seed 2 --seeds 1) names its files
# (runs and vectors) as the whole study does, so that moving them beside seed 1's completes the
# study: every run is skipped, none trained again, and each equals the whole study's.
seed1=("${flags[@]}")
seed1[${#seed1[@]}-3]=1  # --seeds 1
"$bin/exp_embeddings" "${seed1[@]}" --out "$work/in_parts" >/dev/null 2>"$work/in_parts1.err" ||
  die "seed 1 of the study in parts failed: $(tail -1 "$work/in_parts1.err")"
"$bin/exp_embeddings" "${seed1[@]}" --seed 2 --out "$work/seed2" >/dev/null 2>"$work/in_parts2.err" ||
  die "seed 2 of the study in parts failed: $(tail -1 "$work/in_parts2.err")"
[ -f "$work/seed2/word2vec_d16_seed2.bin" ] || die "seed 2's vectors are not named by their seed: $(ls "$work/seed2")"
# The vectors themselves stay behind: a finished run does not need them, and none is trained.
mv "$work/seed2"/gpt_*_seed2.json "$work/seed2"/word2vec_d16_seed2.bin.json "$work/in_parts/"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/in_parts" >/dev/null 2>"$work/joined.err" ||
  die "the study joined from its parts failed: $(tail -1 "$work/joined.err")"
[ "$(grep -c "done, skipped" "$work/joined.err")" = 4 ] || die "the joined study trained runs again: $(grep -c "done, skipped" "$work/joined.err") of 4 skipped"
! grep -q "^\[word2vec" "$work/joined.err" || die "the joined study, all of whose runs had finished, trained word2vec"
grep -q '"word2vec_by_seed"' "$work/in_parts/summary.json" && grep -q '"2": {' "$work/in_parts/summary.json" ||
  die "the joined study's summary lacks seed 2's word2vec log"
for run in gpt_learned_seed2 gpt_finetune-pretrained_seed2; do
  "$bin/compare_run" "$work/whole/$run.json" "$work/in_parts/$run.json" || die "$run trained apart differs from the whole study's"
done

# The life cycle's measurements (rows touched, drift, neighbours) survive a kill too: its hooks'
# state rides in the checkpoint.
life=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
      --epochs 16 --probes cat,dog --w2v-iter 1)
"$bin/exp_lifecycle" "${life[@]}" --out "$work/life_whole" >/dev/null 2>"$work/life_whole.err" ||
  die "uninterrupted life cycle failed: $(tail -1 "$work/life_whole.err")"
"$bin/exp_lifecycle" "${life[@]}" --out "$work/life_parts" >/dev/null 2>"$work/life1.err" &
pid=$!
wait_for "$work/life_parts/gpt_learned.ckpt"
kill -KILL $pid
wait $pid 2>/dev/null
[ ! -f "$work/life_parts/gpt_learned.json" ] || die "the kill came too late: the life cycle's first run had finished"
"$bin/exp_lifecycle" "${life[@]}" --out "$work/life_parts" >/dev/null 2>"$work/life2.err" ||
  die "resumed life cycle failed: $(tail -1 "$work/life2.err")"
grep -q "\[gpt learned\] resumed from" "$work/life2.err" || die "the life cycle did not resume from its checkpoint"
runs_of() { sed -n '/^  "runs": \[/,/^  \],\{0,1\}$/p' "$1"; }
[ -n "$(runs_of "$work/life_whole/summary.json")" ] || die "no runs in the life cycle's summary"
[ "$(runs_of "$work/life_whole/summary.json")" = "$(runs_of "$work/life_parts/summary.json")" ] ||
  die "the resumed life cycle's measurements differ from the uninterrupted one's"

# A finished run made without the life cycle's hooks (an older exp_lifecycle) is trained
# again, to the same numbers, not reused without its measurements.
sed -i 's/"lifecycle":/"made_before":/' "$work/life_parts/gpt_learned.json"
"$bin/exp_lifecycle" "${life[@]}" --out "$work/life_parts" >/dev/null 2>"$work/life3.err" ||
  die "life cycle over an older run failed: $(tail -1 "$work/life3.err")"
grep -q '\[gpt learned\] .* has no "lifecycle" (made without this program.s hooks): training again' "$work/life3.err" ||
  die "the older run was not trained again: $(grep 'gpt learned' "$work/life3.err" | head -1)"
grep -q '\[gpt learned-tied\] done, skipped' "$work/life3.err" || die "the complete run was not reused"
[ "$(runs_of "$work/life_whole/summary.json")" = "$(runs_of "$work/life_parts/summary.json")" ] ||
  die "the life cycle trained again differs"

# Evaluating more often changes no number: the finished runs are reused.
"$bin/exp_embeddings" "${flags[@]}" --eval-every 3 --out "$work/parts" >/dev/null 2>"$work/evals.err" ||
  die "the study with --eval-every failed: $(tail -1 "$work/evals.err")"
[ "$(grep -c "done, skipped" "$work/evals.err")" = 4 ] || die "--eval-every did not reuse the 4 finished runs"
# The same folder with other settings is refused, not silently mixed.
if "$bin/exp_embeddings" "${flags[@]}" --lr 5e-3 --out "$work/parts" >/dev/null 2>"$work/other.err"; then
  die "a study with another --lr reused the finished runs"
fi
grep -q "holds a finished run with other settings" "$work/other.err" || die "no clear message: $(tail -1 "$work/other.err")"
grep -Eq "^  lr: [0-9.e-]+ there, [0-9.e-]+ here$" "$work/other.err" || die "the message does not name --lr: $(cat "$work/other.err")"
# A study folder moved (or cloned elsewhere) keeps its finished runs, those on its pretrained
# vectors included (their recorded path is the old folder's).
mv "$work/parts" "$work/moved"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/moved" >/dev/null 2>"$work/moved.err" ||
  die "the moved study failed: $(tail -3 "$work/moved.err")"
[ "$(grep -c "done, skipped" "$work/moved.err")" = 4 ] || die "the moved study did not reuse its 4 finished runs"
# So does one whose corpus file moved with it (named by its file, checked by its tokens); the
# same file name with other tokens is refused.
mkdir -p "$work/elsewhere"
cp "$toy" "$work/elsewhere/$(basename "$toy")"
there=("${flags[@]}")
there[1]="$work/elsewhere/$(basename "$toy")"
"$bin/exp_embeddings" "${there[@]}" --out "$work/moved" >/dev/null 2>"$work/corpus_moved.err" ||
  die "the study with its corpus moved failed: $(tail -3 "$work/corpus_moved.err")"
[ "$(grep -c "done, skipped" "$work/corpus_moved.err")" = 4 ] || die "the moved corpus did not reuse the 4 finished runs"
echo "the cat sat on the mat again and again" >>"$work/elsewhere/$(basename "$toy")"
if "$bin/exp_embeddings" "${there[@]}" --out "$work/moved" >/dev/null 2>"$work/corpus_changed.err"; then
  die "a study on other tokens reused the finished runs"
fi
grep -q "^  the data (corpus, split and vocabulary): fingerprint [0-9a-f]* there, [0-9a-f]* here$" "$work/corpus_changed.err" ||
  die "the refusal does not name the data: $(cat "$work/corpus_changed.err")"
# A finished run whose perplexity was damaged or edited does not count as finished.
for value in -5 '"abc"' 1e999; do
  cp -r "$work/whole" "$work/edited"
  sed -i -E "s/\"test_ppl\": [^,]*/\"test_ppl\": $value/" "$work/edited/gpt_learned_seed1.json"
  if "$bin/exp_embeddings" "${flags[@]}" --out "$work/edited" >/dev/null 2>"$work/edited.err"; then
    die "a run file with test_ppl $value counted as finished"
  fi
  grep -Eq "gpt_learned_seed1.json: (test_ppl is .*, not a perplexity|field 'test_ppl' is .*, not a number|not valid JSON)" "$work/edited.err" ||
    die "no clear message for test_ppl $value: $(tail -1 "$work/edited.err")"
  rm -rf "$work/edited"
done
# The study records its own files by name, relative to its folder, so that the folder can move.
grep -q '"file": "gpt_learned_seed1.json"' "$work/whole/summary.json" ||
  die "the summary names its run files by a path: $(grep -m1 '"file"' "$work/whole/summary.json")"
grep -q '"vectors": "word2vec_d16.bin"' "$work/whole/gpt_finetune-pretrained_seed1.json" ||
  die "the run file names its vectors by a path: $(grep -m1 '"vectors"' "$work/whole/gpt_finetune-pretrained_seed1.json")"
# Cached vectors are checked by their hash: another file of the same dimension put in their place
# (here the second seed's) is refused, naming both hashes; a log without a hash (an older
# study) trains them again, to the same vectors, and the finished runs stay valid.
# A run trained again (its file deleted) reuses the vectors the others saw, and equals its first
# training.
cp -r "$work/whole" "$work/reused"
rm "$work/reused/gpt_finetune-pretrained_seed1.json"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/reused" >/dev/null 2>"$work/reused.err" ||
  die "the study with a deleted run failed: $(tail -1 "$work/reused.err")"
grep -q "reusing .*word2vec_d16.bin" "$work/reused.err" || die "word2vec was trained again"
"$bin/compare_run" "$work/whole/gpt_finetune-pretrained_seed1.json" "$work/reused/gpt_finetune-pretrained_seed1.json" ||
  die "the run trained again on reused vectors differs"
cp -r "$work/whole" "$work/swapped"
rm "$work/swapped/gpt_finetune-pretrained_seed1.json"  # a run that needs the vectors
cp "$work/swapped/word2vec_d16_seed2.bin" "$work/swapped/word2vec_d16.bin"
if "$bin/exp_embeddings" "${flags[@]}" --out "$work/swapped" >/dev/null 2>"$work/swapped.err"; then
  die "a study reused vectors replaced by others"
fi
grep -q "word2vec_d16.bin: not the vectors this study trained (FNV-1a [0-9a-f]*; .* records [0-9a-f]*)" "$work/swapped.err" ||
  die "no clear message for replaced vectors: $(tail -1 "$work/swapped.err")"
sed -i '/"fnv1a"/d' "$work/swapped/word2vec_d16.bin.json"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/swapped" >/dev/null 2>"$work/unhashed.err" ||
  die "the study over a log without a hash failed: $(tail -1 "$work/unhashed.err")"
grep -q "records no hash of .*word2vec_d16.bin: training it again" "$work/unhashed.err" ||
  die "vectors without a hash were not trained again"
[ "$(grep -c "done, skipped" "$work/unhashed.err")" = 3 ] || die "the vectors trained again did not keep the 3 finished runs"
cmp -s "$work/swapped/word2vec_d16.bin" "$work/whole/word2vec_d16.bin" || die "the vectors trained again differ"
# One --results or --checkpoint for a whole study would be overwritten by each run: refused.
for flag in --results --checkpoint --resume; do
  touch "$work/given"
  if "$bin/exp_embeddings" "${flags[@]}" "$flag" "$work/given" --out "$work/given_out" >/dev/null 2>"$work/given.err"; then
    die "a study took $flag"
  fi
  grep -q "^exp_embeddings: error: $flag: exp_embeddings writes each run's results and checkpoint into --out" "$work/given.err" ||
    die "no clear message for $flag: $(tail -1 "$work/given.err")"
done
# --token-nll names a folder: each run's losses in a file of its own.
"$bin/exp_embeddings" "${flags[@]}" --steps 2 --token-nll "$work/losses" --out "$work/with_losses" >/dev/null 2>"$work/losses.err" ||
  die "the study with --token-nll failed: $(tail -1 "$work/losses.err")"
for run in gpt_learned_seed1 gpt_learned_seed2 gpt_finetune-pretrained_seed1 gpt_finetune-pretrained_seed2; do
  grep -q '"test"' "$work/losses/$run.json" 2>/dev/null || die "no per-token losses of $run in the --token-nll folder"
done
# Words that are not UTF-8 (a Latin-1 corpus, a probe typed in one) are written as U+FFFD in the
# JSON files, not refused after training.
latin1=$work/latin1.txt
cp "$toy" "$latin1"
for _ in 1 2 3; do printf 'the caf\xe9 sat on the mat . the dog saw the caf\xe9 .\n' >>"$latin1"; done
latin_life=("${life[@]}")
latin_life[1]=$latin1
latin_life[${#latin_life[@]}-3]=$'cat,caf\xe9'  # --probes
"$bin/exp_lifecycle" "${latin_life[@]}" --steps 2 --modes learned --out "$work/latin1" >/dev/null 2>"$work/latin1.err" ||
  die "the life cycle of a corpus that is not UTF-8 failed: $(tail -1 "$work/latin1.err")"
grep -q $'"word": "caf\xef\xbf\xbd"' "$work/latin1/summary.json" || die "the probe that is not UTF-8 is not in the summary"
# A BPE of one's own moves with its study: a study whose BPE folder is elsewhere under the same
# name (a clone) keeps its finished runs (checked by the data's fingerprint), and a checkpoint
# resumes wherever its BPE's files now are (checked by their hash); another BPE is refused,
# naming both hashes and both folders.
mkdir -p "$work/clone_a"
"$bin/tokenize" train --input "$toy" --vocab-size 300 --output "$work/clone_a/bpe/" 2>/dev/null || die "tokenize train failed"
tiny_bpe=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2)
study_bpe=("${tiny_bpe[@]}" --epochs 1 --models gpt --modes learned --seeds 1)
"$bin/exp_embeddings" "${study_bpe[@]}" --tokenizer "$work/clone_a/bpe/" --out "$work/bpe_study" >/dev/null 2>"$work/bpe.err" ||
  die "the study in a BPE failed: $(tail -1 "$work/bpe.err")"
mv "$work/clone_a" "$work/clone_b"
"$bin/exp_embeddings" "${study_bpe[@]}" --tokenizer "$work/clone_b/bpe" --out "$work/bpe_study" >/dev/null 2>"$work/bpe_moved.err" ||
  die "the study with its BPE moved failed: $(tail -3 "$work/bpe_moved.err")"
grep -q "done, skipped" "$work/bpe_moved.err" || die "the moved BPE did not reuse the finished run"
"$bin/train_lm" "${tiny_bpe[@]}" --tokenizer "$work/clone_b/bpe" --steps 2 --checkpoint "$work/bpe.ckpt" >/dev/null 2>"$work/bpe_ckpt.err" ||
  die "train_lm in a BPE failed: $(tail -1 "$work/bpe_ckpt.err")"
mv "$work/clone_b/bpe" "$work/renamed_bpe"
"$bin/train_lm" "${tiny_bpe[@]}" --tokenizer "$work/renamed_bpe" --steps 3 --resume "$work/bpe.ckpt" >/dev/null 2>"$work/bpe_resume.err" ||
  die "the checkpoint did not resume with its BPE moved: $(tail -3 "$work/bpe_resume.err")"
grep -q "resumed from $work/bpe.ckpt at step 2" "$work/bpe_resume.err" || die "no resume: $(tail -3 "$work/bpe_resume.err")"
"$bin/tokenize" train --input "$toy" --vocab-size 280 --output "$work/bpe_other" 2>/dev/null || die "tokenize train failed"
if "$bin/train_lm" "${tiny_bpe[@]}" --tokenizer "$work/bpe_other" --steps 3 --resume "$work/bpe.ckpt" >/dev/null 2>"$work/bpe_other.err"; then
  die "a checkpoint resumed in another BPE"
fi
grep -Eq "^  tokenizer hash: [0-9a-f]+ in the checkpoint, [0-9a-f]+ in this run" "$work/bpe_other.err" ||
  die "the refusal does not name both hashes: $(cat "$work/bpe_other.err")"
grep -q "^  tokenizer: \"$work/clone_b/bpe\" in the checkpoint, \"$work/bpe_other\" in this run" "$work/bpe_other.err" ||
  die "the refusal does not name both tokenizers: $(cat "$work/bpe_other.err")"
echo "study_resume: the resumed study equals the uninterrupted one (4 runs and the life cycle, bit for bit)"
