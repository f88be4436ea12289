#!/usr/bin/env bash
# How far a step moves the rows of the input table (exp_lifecycle's "movement"): under SGD
# without decay and under LazyAdam only the batch's rows move (their share of the squared
# update is 1, every other row's update 0); under AdamW the momentum moves other rows too,
# by less than the batch's.
#   tests/lifecycle_movement.sh BIN_DIR TOY_CORPUS WORK_DIR
set -euo pipefail
bin=$1 toy=$2 work=$3
suite=lifecycle_movement
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rm -rf "$work"
flags=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8
       --epochs 1 --warmup 2 --modes learned --probes the)
for run in "sgd|--optimizer sgd --lr 0.1 --weight-decay 0" "lazy-adam|--optimizer lazy-adam --lr 3e-3" \
           "adamw|--optimizer adamw --lr 3e-3"; do
  read -ra optimizer <<< "${run#*|}"
  "$bin/exp_lifecycle" "${flags[@]}" "${optimizer[@]}" --out "$work/${run%%|*}" >/dev/null 2>&1 ||
    die "exp_lifecycle ${run%%|*} failed"
done
python3 - "$work" <<'PY' || die "the movement does not match the optimizers' rules"
import json, sys
def movement(name):
    return json.load(open(f"{sys.argv[1]}/{name}/gpt_learned.json"))["lifecycle"]["movement"]
for name in ("sgd", "lazy-adam"):
    m = movement(name)
    assert m["batch_share_of_squared_update_mean"] == 1.0 and m["other_row_relative_update_mean"] == 0.0, (name, m)
    assert m["batch_row_relative_update_mean"] > 0 and m["steps"] > 0, (name, m)
m = movement("adamw")
assert 0 < m["batch_share_of_squared_update_mean"] < 1, m
assert 0 < m["other_row_relative_update_mean"] < m["batch_row_relative_update_mean"], m
print(f"movement: sgd and lazy-adam move the batch's rows alone; adamw gives them "
      f"{100 * m['batch_share_of_squared_update_mean']:.1f}% of the squared update")
PY
