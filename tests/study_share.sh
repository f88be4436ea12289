#!/usr/bin/env bash
# Several processes share a study's folder: each trains the runs it claims (RUN.lock), skips
# those another process holds, and the numbers are those of one process alone.
#   tests/study_share.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
bin=$1 toy=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
flags=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
       --epochs 4 --models gpt --modes learned,finetune-pretrained --seeds 2 --w2v-iter 1)
runs=(gpt_learned_seed1 gpt_learned_seed2 gpt_finetune-pretrained_seed1 gpt_finetune-pretrained_seed2)
suite=study_share
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trained() { cat "$@" | grep -c "\] valid ppl"; }

"$bin/exp_embeddings" "${flags[@]}" --out "$work/alone" >/dev/null 2>"$work/alone.err" || die "the study alone failed"

# A run held by another process is skipped, not trained twice; the holder finishes it later.
mkdir -p "$work/held"
flock "$work/held/gpt_learned_seed2.lock" "$bin/exp_embeddings" "${flags[@]}" --out "$work/held" \
  >/dev/null 2>"$work/held1.err" || die "the study beside a held run failed: $(tail -1 "$work/held1.err")"
grep -q "\[gpt learned seed 2\] another process is training it (it holds .*gpt_learned_seed2.lock), skipped" \
  "$work/held1.err" || die "the held run was not skipped: $(grep 'learned seed 2' "$work/held1.err")"
[ "$(trained "$work/held1.err")" = 3 ] || die "the first process trained $(trained "$work/held1.err") runs, not 3"
# Its table lacks that row, and it says so, naming the run and who trains it.
grep -Eq "^1 run of this study another process was training is missing from the table above" "$work/held1.err" &&
  grep -Eq "^  gpt learned seed 2 \(pid [0-9]+ is training it\)$" "$work/held1.err" ||
  die "the missing row was not named: $(tail -3 "$work/held1.err")"
# A dry run names the process that holds a run (flock(1) here), and takes no lock itself.
flock "$work/held/gpt_learned_seed2.lock" bash -c 'echo $PPID; exec "$@"' _ "$bin/exp_embeddings" "${flags[@]}" \
  --out "$work/held" --dry-run >"$work/dry.out" 2>"$work/dry.err" || die "the dry run failed: $(tail -1 "$work/dry.err")"
holder=$(head -1 "$work/dry.out")
grep -Eq "^  gpt learned seed 2 +to train \(being trained by process $holder\)$" "$work/dry.out" ||
  die "the dry run did not name the holder ($holder): $(grep 'learned seed 2' "$work/dry.out")"
grep -Eq "^  gpt learned seed 1 +done: " "$work/dry.out" || die "the dry run: $(cat "$work/dry.out")"
"$bin/exp_embeddings" "${flags[@]}" --out "$work/held" >/dev/null 2>"$work/held2.err" ||
  die "the second process failed: $(tail -1 "$work/held2.err")"
[ "$(trained "$work/held2.err")" = 1 ] || die "the second process trained $(trained "$work/held2.err") runs, not 1"
for run in "${runs[@]}"; do
  "$bin/compare_run" "$work/alone/$run.json" "$work/held/$run.json" || die "$run differs from the study alone"
done

# Two processes at once: every run trained by exactly one of them, and the summary of the
# last to finish lists all four.
"$bin/exp_embeddings" "${flags[@]}" --out "$work/both" >/dev/null 2>"$work/both1.err" &
first=$!
"$bin/exp_embeddings" "${flags[@]}" --out "$work/both" >/dev/null 2>"$work/both2.err" &
second=$!
wait $first || die "the first of two processes failed: $(tail -1 "$work/both1.err")"
wait $second || die "the second of two processes failed: $(tail -1 "$work/both2.err")"
for run in "${runs[@]}"; do
  IFS=_ read -r model mode seed <<< "$run"  # gpt_learned_seed1 -> "[gpt learned seed 1]"
  n=$(cat "$work/both1.err" "$work/both2.err" | grep -c "^\[$model $mode seed ${seed#seed}\] valid ppl")
  [ "$n" = 1 ] || die "$run was trained $n times by the two processes"
  "$bin/compare_run" "$work/alone/$run.json" "$work/both/$run.json" || die "$run differs from the study alone"
done
[ "$(grep -c '"best_epoch":' "$work/both/summary.json")" = 4 ] ||
  die "the summary lists $(grep -c '"best_epoch":' "$work/both/summary.json") runs, not 4"
[ -z "$(ls "$work/both"/gpt_*.lock "$work/held"/gpt_*.lock 2>/dev/null)" ] ||
  die "finished runs left their lock files: $(ls "$work/both"/gpt_*.lock "$work/held"/gpt_*.lock 2>/dev/null)"

# A second study with other settings on a folder whose run another process trains is refused,
# naming the difference, instead of skipping that run and writing an empty summary.
slow=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
      --models gpt --modes learned --seeds 1)
"$bin/exp_embeddings" "${slow[@]}" --epochs 2000 --out "$work/other" >/dev/null 2>"$work/other1.err" &
holder=$!
for _ in $(seq 200); do [ -s "$work/other/gpt_learned_seed1.lock" ] && break; sleep 0.05; done
[ -s "$work/other/gpt_learned_seed1.lock" ] || die "the first study never claimed its run"
if "$bin/exp_embeddings" "${slow[@]}" --epochs 2000 --lr 0.05 --out "$work/other" >/dev/null 2>"$work/other2.err"; then
  die "a study with another learning rate was accepted on a folder another process trains"
fi
kill "$holder"
wait "$holder"
grep -q "another process (pid $holder) is training this run with other settings" "$work/other2.err" ||
  die "the refusal does not say why: $(tail -2 "$work/other2.err")"
grep -q "lr" "$work/other2.err" || die "the refusal does not name the setting: $(tail -2 "$work/other2.err")"
echo "study_share: 4 runs, each trained once by one of two processes, equal to the study alone"
