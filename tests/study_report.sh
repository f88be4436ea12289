#!/usr/bin/env bash
# A study of one's own renders: exp_embeddings --out R/any_name writes its study.json before its
# first run, report --results R renders that folder with its seed-level verdicts, and report
# --csv lists its runs. Then the study's own errors: a run file that is not a run is refused,
# and a stopped study says how to continue.
#   tests/study_report.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
bin=$1 toy=$2 work=$3
suite=study_report
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rm -rf "$work"
mkdir -p "$work"
flags=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
       --epochs 2 --models gpt --modes learned,learned-tied --seeds 3)
"$bin/exp_embeddings" "${flags[@]}" --out "$work/R/any_name" >/dev/null 2>"$work/study.err" ||
  die "the study failed: $(tail -1 "$work/study.err")"
grep -q '"reference": "learned"' "$work/R/any_name/study.json" || die "study.json names no reference"
grep -q '"mode": "learned-tied"' "$work/R/any_name/study.json" || die "study.json declares no comparison"
# A data-size sweep under a name of its own renders too (its summary has no parameter count).
"$bin/exp_data_size" --corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 \
  --batch 8 --warmup 2 --epochs 1 --modes learned --fractions 0.5 --out "$work/R/my_sweep" >/dev/null 2>&1 ||
  die "the data-size sweep failed"
"$bin/report" --results "$work/R" --no-plots 2>"$work/report.err" || die "report failed: $(tail -1 "$work/report.err")"
md=$work/R/REPORT.md
grep -q '^`my_sweep/`: gpt, d_model 16' "$md" || die "REPORT.md has no section for my_sweep/"
grep -q '^`any_name/`: gpt, d_model 16' "$md" || die "REPORT.md has no section for any_name/"
grep -Eq '^  - gpt, learned-tied: [-0-9.]+ \(95% t interval [-0-9.]+ to [-0-9.]+; 3 seeds, p [<0-9.]+, Holm [<0-9.]+\): (better|worse|not decided)' "$md" ||
  die "REPORT.md has no verdict for learned-tied: $(grep -n 'learned-tied' "$md" | head -3)"
grep -q "Holm over this study's family (the 1 comparison its study.json declared" "$md" ||
  die "the verdicts do not name their family"
[ -z "$(find "$work/R" -name '*.lock')" ] || die "lock files left after the study: $(find "$work/R" -name '*.lock')"
"$bin/report" --results "$work/R" --csv "$work/runs.csv" 2>"$work/csv.err" || die "report --csv failed"
[ "$(grep -c '^"any_name","gpt",' "$work/runs.csv")" = 6 ] || die "runs.csv lists $(grep -c '^"any_name"' "$work/runs.csv") runs, not 6"
# --csv replaces its file: never a run file, nor a device.
run_file=$work/R/any_name/gpt_learned_seed1.json
before=$(cat "$run_file")
"$bin/report" --results "$work/R" --csv "$run_file" 2>"$work/csv_json.err" && die "report --csv over a run file succeeded"
grep -q "give a file name ending in .csv" "$work/csv_json.err" || die "report --csv over a run file: $(cat "$work/csv_json.err")"
[ "$(cat "$run_file")" = "$before" ] || die "report --csv changed the run file"
mkdir -p "$work/folder.csv"
"$bin/report" --results "$work/R" --csv "$work/folder.csv" 2>"$work/csv_dir.err" && die "report --csv onto a folder succeeded"
grep -q "folder.csv" "$work/csv_dir.err" || die "report --csv onto a folder: $(cat "$work/csv_dir.err")"
# A run file replaced by something that is not a run (here []) is refused, not trained over.
mkdir -p "$work/replaced"
echo '[]' >"$work/replaced/gpt_learned_seed1.json"
if "$bin/exp_embeddings" "${flags[@]}" --out "$work/replaced" >/dev/null 2>"$work/replaced.err"; then
  die "a run file holding [] was trained over"
fi
grep -q "gpt_learned_seed1.json: not a run file (a JSON object)" "$work/replaced.err" ||
  die "the refusal does not say why: $(tail -1 "$work/replaced.err")"
[ "$(cat "$work/replaced/gpt_learned_seed1.json")" = "[]" ] || die "the refused file was replaced"
# A study stopped by SIGTERM says how to continue it: the same command again, not --resume.
slow=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2
      --epochs 2000 --models gpt --modes learned --seeds 1)
"$bin/exp_embeddings" "${slow[@]}" --out "$work/stopped" >/dev/null 2>"$work/stopped.err" &
pid=$!
for _ in $(seq 600); do [ -f "$work/stopped/gpt_learned_seed1.ckpt" ] && break; sleep 0.05; done
kill -TERM $pid
wait $pid
status=$?
[ "$status" = 143 ] || die "the stopped study exited $status, not 143"
grep -q "run the same command again to continue" "$work/stopped.err" ||
  die "the stopped study does not say how to continue: $(tail -1 "$work/stopped.err")"
grep -q -- "--resume" "$work/stopped.err" && die "the stopped study points to --resume: $(tail -1 "$work/stopped.err")"
echo "study_report: any_name/ rendered with its verdict and its 6 runs in the CSV"
