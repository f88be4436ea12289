#!/usr/bin/env bash
# Kill -9 a training run at a random moment after its first checkpoint, resume it, and check
# that the resumed run ends with exactly the losses of an uninterrupted one (1 thread).
#   tests/kill_resume.sh path/to/train_lm corpus.txt workdir [more train_lm flags]
set -euo pipefail
train_lm=$1 corpus=$2 work=$3
shift 3
mkdir -p "$work"
rm -f "$work"/*.json "$work"/*.ckpt
args=(--corpus-file "$corpus" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 4
      --epochs 40 --warmup 5 --dropout 0.1 --threads 1 --seed 3 --checkpoint-every 5 "$@")
"$train_lm" "${args[@]}" --checkpoint "$work/whole.ckpt" --results "$work/whole.json" >/dev/null 2>&1

for attempt in 1 2 3; do
  rm -f "$work/killed.ckpt" "$work/resumed.json"
  "$train_lm" "${args[@]}" --checkpoint "$work/killed.ckpt" >/dev/null 2>&1 &
  pid=$!
  while [ ! -f "$work/killed.ckpt" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
  sleep "0.$((RANDOM % 40))"
  if ! kill -9 "$pid" 2>/dev/null; then
    wait "$pid" || true
    echo "attempt $attempt: the run finished before the kill; trying again" >&2
    continue
  fi
  wait "$pid" 2>/dev/null || true
  "$train_lm" "${args[@]}" --checkpoint "$work/killed.ckpt" --resume "$work/killed.ckpt" \
    --results "$work/resumed.json" >/dev/null 2>"$work/resume.log" || { cat "$work/resume.log" >&2; exit 1; }
  grep -o "resumed from .*" "$work/resume.log" >&2 || true
  python3 - "$work/whole.json" "$work/resumed.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("epoch", "step", "train_loss", "valid_loss")
ea = [[e[k] for k in keys] for e in a["epochs"]]
eb = [[e[k] for k in keys] for e in b["epochs"]]
if ea != eb or a["test_ppl"] != b["test_ppl"]:
    print("resumed run differs from the uninterrupted one:", ea, eb, a["test_ppl"], b["test_ppl"], file=sys.stderr)
    sys.exit(1)
print(f"killed and resumed: {len(eb)} epochs, test ppl {b['test_ppl']:.4f}, identical to the uninterrupted run")
PY
  exit 0
done
echo "could not kill the run mid-training in 3 attempts (machine too fast for this corpus?)" >&2
exit 1
