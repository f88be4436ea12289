#!/usr/bin/env bash
# A hostile user's pass over the programs: about 90 cases of damaged, hostile or absurd input
# (results folders carrying gnuplot, shell and Markdown text; sizes that would not fit in
# memory; two studies on one folder; incomplete BPE vocabularies; damaged checkpoints; bf16
# where oneDNN cannot; outputs on one MPI rank; signals in the final evaluation; bad flags).
# Each case states what is expected (fail: a clear error and a non-zero exit; ok: exit 0; any:
# either) and is checked for: no death by a signal, no hang (120 s), no raw exception text, no
# command run from the input (a marker file). Not part of ctest (it needs mpirun and takes a
# few minutes); the cases it found are each under a test of their own in tests/.
#   scripts/hostile_pass.sh [BIN_DIR]      (default build/bin; prints one line per case)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$here/build/bin}" && pwd) || exit 2; T=$here/tests/fixtures/toy_corpus.txt
[ -x "$B/train_lm" ] || { echo "hostile_pass.sh: no train_lm in $B (build first)" >&2; exit 2; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; cd "$W" || exit 1
M=$W/PWNED; pass=0; fail=0; out=$W/out.txt
small=(--corpus-file "$T" --min-count 2 --d-model 16 --layers 1 --heads 2 --context 8 --batch 4)
check() {  # name expect rc
  local name=$1 expect=$2 rc=$3 why=""
  [ -f "$out" ] || why="no output captured (the scratch folder is gone)"
  [ -e "$M" ] && why="code ran (marker exists)" && rm -f "$M"
  [ "$rc" -ge 124 ] && why="${why} rc=$rc (signal or timeout)"
  grep -qE "terminate called|std::bad_alloc$|^bad_alloc|Segmentation|what\(\):  |basic_string|json\.exception" "$out" && why="$why raw exception: $(grep -m1 -E 'terminate|bad_alloc|what|json' "$out")"
  if [ "$expect" = fail ] && [ "$rc" -eq 0 ]; then why="$why exit 0 where an error was expected"; fi
  if [ "$expect" = ok ] && [ "$rc" -ne 0 ]; then why="$why exit $rc where success was expected: $(tail -c 300 "$out")"; fi
  if [ -z "$why" ]; then pass=$((pass+1)); printf 'fine  %-48s %s\n' "$name" "$(grep -v '^\[' "$out" | tail -n1 | cut -c1-110)";
  else fail=$((fail+1)); printf 'NOT   %-48s %s\n' "$name" "$why"; fi
}
run() {  # name expect cmd...
  local name=$1 expect=$2; shift 2
  rm -f "$out"; timeout 120 "$@" >"$out" 2>&1; check "$name" "$expect" $?
}
runenv() { local name=$1 expect=$2 envs=$3; shift 3; rm -f "$out"; timeout 120 env "$envs" "$@" >"$out" 2>&1; check "$name" "$expect" $?; }

# ---- A. a results folder is untrusted
$B/train_lm "${small[@]}" --steps 2 --results $W/base.json >/dev/null 2>&1 || echo "base run failed"
mkres() {  # folder jq-like python edit
  local folder=$1 edit=$2
  mkdir -p "$folder"
  python3 - "$W/base.json" "$folder/run.json" "$edit" <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); exec(sys.argv[3]); json.dump(r,open(sys.argv[2],'w'))
PY
}
gp="x' ; system('touch $M') ; y='"
sh='$(touch '$M')`touch '$M'`'
md=$'a|b\n# H1\n<script>alert(1)</script>[x](javascript:alert(1))'
for field in model embedding optimizer tokenizer corpus; do
  rm -rf $W/r1; mkdir -p $W/r1/converged/gpt
  mkres $W/r1/converged/gpt "r['config']['$field']=\"\"\"$gp\"\"\""
  run "report: config.$field gnuplot injection (converged/gpt)" any $B/report --results $W/r1
done
rm -rf $W/r2; mkdir -p "$W/r2/st\"udy'; system('touch $M'); x='"
run "report: hostile folder name (gnuplot)" any $B/report --results $W/r2
rm -rf $W/r3; $B/exp_embeddings "${small[@]}" --steps 2 --models gpt --modes learned,learned-tied --seeds 2 --out $W/r3/mystudy >/dev/null 2>&1
python3 - $W/r3/mystudy <<PY
import json,glob,sys
for f in glob.glob(sys.argv[1]+'/*.json'):
    r=json.load(open(f))
    if 'config' in r: r['config']['model']="""$gp"""; r.setdefault('provenance',{})['command']=["""$sh""","""$md"""]
    json.dump(r,open(f,'w'))
PY
run "report: study folder run files with gnuplot+shell+md" any $B/report --results $W/r3
grep -c "<script>" $W/r3/REPORT.md 2>/dev/null | sed 's/^/   <script> lines in REPORT.md: /'
python3 - $W/r3/mystudy <<PY
import json,sys
p=sys.argv[1]+'/study.json'; s=json.load(open(p)); s['axes']['modes']=["""$gp""","""$md"""]; s['reference']="""$gp"""
json.dump(s,open(p,'w'))
PY
run "report: study.json modes/reference hostile" any $B/report --results $W/r3
python3 - $W/r3/mystudy <<PY
import json,sys
p=sys.argv[1]+'/summary.json'; s=json.load(open(p)); s['rows']=[{"model":"""$gp""","mode":"""$md""","test_ppl":"NaN"}]
json.dump(s,open(p,'w'))
PY
run "report: summary.json rows hostile" any $B/report --results $W/r3
mkdir -p $W/r4/converged/gpt; mkres $W/r4/converged/gpt "r['test_bands']={\"\"\"$gp\"\"\":1.0}"
run "report: hostile band names" any $B/report --results $W/r4
mkdir -p $W/r5/converged/gpt; mkres $W/r5/converged/gpt "r['test_ppl']=1e308*10"
run "report: test_ppl Infinity literal" any $B/report --results $W/r5
mkdir -p $W/r6/converged/gpt; mkres $W/r6/converged/gpt "r['steps']=\"\"\"$gp\"\"\""
run "report: steps a string" fail $B/report --results $W/r6
mkdir -p $W/r7/any; printf '[' > $W/r7/any/run.json; printf '{"schema":1,"axes":"x"}' > $W/r7/any/study.json
run "report: truncated JSON + bad study axes" fail $B/report --results $W/r7
mkdir -p "$W/r8/nl"$'\n'"name"; cp -r $W/r3/mystudy/* "$W/r8/nl"$'\n'"name/" 2>/dev/null
run "report: folder name with newline" any $B/report --results $W/r8
run "report: --csv into missing folder" fail $B/report --results $W/r3 --csv $W/nope/x.csv
run "report: --results is a file" fail $B/report --results $T
ln -sf /etc/passwd $W/r3/mystudy/evil.json
run "report: symlinked /etc/passwd as run file" any $B/report --results $W/r3
rm -f $W/r3/mystudy/evil.json
run "compare_run: hostile model names" any $B/compare_run $W/r3/mystudy/gpt_learned_seed1.json $W/base.json

# ---- B. memory before allocation
for args in "--model lstm --layers 100000000" "--model gru --hidden 100000000" "--model gpt --d-model 1000000 --heads 2" \
            "--model nplm --hidden 100000000" "--model gpt --layers 1000000" "--model gpt --context 100000000" \
            "--model gpt --batch 100000000" "--model lstm --d-model 4000000" "--model nplm --ngram 1000000" \
            "--model gru --layers 3000 --hidden 3000"; do
  # shellcheck disable=SC2086
  run "train_lm memory: $args" fail $B/train_lm --corpus-file $T --min-count 2 --steps 1 $args
done
run "exp_embeddings memory: --d-model 2000000" fail $B/exp_embeddings "${small[@]}" --steps 1 --models gpt --modes learned --d-model 2000000 --out $W/mem
run "word2vec memory: --dim 100000000" fail $B/word2vec --corpus-file $T --dim 100000000 --out $W/w.vec

# ---- C. two studies on one folder
$B/exp_embeddings "${small[@]}" --steps 400 --models gpt --modes learned --seeds 1 --out $W/shared >/dev/null 2>&1 & p1=$!
sleep 4
run "second study, other settings, same folder" fail $B/exp_embeddings "${small[@]}" --steps 400 --lr 0.5 --models gpt --modes learned --seeds 1 --out $W/shared
kill -TERM $p1 2>/dev/null; wait $p1 2>/dev/null
echo '[]' > $W/shared/gpt_learned_seed1.json 2>/dev/null
run "study: run file replaced by []" fail $B/exp_embeddings "${small[@]}" --steps 400 --models gpt --modes learned --seeds 1 --out $W/shared

# ---- D. vocabularies
$B/tokenize train --input $T --output $W/bpe --vocab-size 300 >/dev/null 2>&1
cp -r $W/bpe $W/bpe_cut; head -n 5 $W/bpe/vocab.bpe > $W/bpe_cut/vocab.bpe
printf '1 2 3\n' > $W/ids.txt
run "bpe: merges cut to 4" fail $B/tokenize encode --tokenizer $W/bpe_cut --input $T
cp -r $W/bpe $W/bpe_empty; : > $W/bpe_empty/vocab.bpe
run "bpe: empty merges" fail $B/train_lm "${small[@]}" --steps 1 --tokenizer $W/bpe_empty
cp -r $W/bpe $W/bpe_dup; python3 -c "
import sys;l=open('$W/bpe/vocab.bpe').read().splitlines();l.append(l[-1]);open('$W/bpe_dup/vocab.bpe','w').write('\n'.join(l)+'\n')"
run "bpe: duplicated last merge" fail $B/tokenize encode --tokenizer $W/bpe_dup --input $T
cp -r $W/bpe $W/bpe_enc; python3 -c "
import json;e=json.load(open('$W/bpe/encoder.json'));k=[k for k in e if len(k)==1][5];del e[k];json.dump(e,open('$W/bpe_enc/encoder.json','w'))"
run "bpe: encoder missing a byte token" fail $B/tokenize encode --tokenizer $W/bpe_enc --input $T
cp -r $W/bpe $W/bpe_ids; python3 -c "
import json;e=json.load(open('$W/bpe/encoder.json'));k=list(e)[3];e[k]=10**12;json.dump(e,open('$W/bpe_ids/encoder.json','w'))"
run "bpe: encoder id 1e12" fail $B/tokenize encode --tokenizer $W/bpe_ids --input $T
echo '[1,2]' > $W/bpe_list.json
run "bpe: encoder.json a list" fail $B/tokenize encode --tokenizer $W/bpe_list.json --input $T
printf -- '-0 +5 7\n' > $W/signed.txt
run "decode: -0 +5" fail $B/tokenize decode --tokenizer $W/bpe --input $W/signed.txt
printf '5\0006\n' > $W/nul.txt
run "decode: NUL byte in ids" fail $B/tokenize decode --tokenizer $W/bpe --input $W/nul.txt
printf '99999999999999999999\n' > $W/big.txt
run "decode: id overflow" fail $B/tokenize decode --tokenizer $W/bpe --input $W/big.txt
run "tokenize train --end-of-text a" fail $B/tokenize train --input $T --output $W/bpe_eot --vocab-size 300 --end-of-text a
run "tokenize train into /dev/full-like path" fail $B/tokenize train --input $T --output /proc/nope --vocab-size 300

# ---- E. checkpoints
$B/train_lm "${small[@]}" --steps 3 --checkpoint $W/c.ckpt --results $W/c.json >/dev/null 2>&1
dmg() {  # name python-edit-of-bytes
  python3 - $W/c.ckpt $W/d.ckpt "$2" <<'PY'
import sys,struct,json
b=bytearray(open(sys.argv[1],'rb').read()); n=struct.unpack('<Q',b[:8])[0]; h=json.loads(b[8:8+n])
exec(sys.argv[3]); open(sys.argv[2],'wb').write(b)
PY
  run "checkpoint: $1" fail $B/train_lm "${small[@]}" --steps 6 --resume $W/d.ckpt --results $W/d.json
}
dmg "flipped byte in data" "b[-100]^=1"
dmg "junk appended" "b+=b'junk'"
dmg "truncated by 1 byte" "b=b[:-1]"
dmg "header length huge" "b[:8]=struct.pack('<Q',2**40)"
dmg "header not JSON" "b[8]=ord('x')"
dmg "one float x1000" "
k=[k for k in h if k!='__metadata__'][0]; s=h[k]['data_offsets'][0]+8+n; v=struct.unpack('<f',b[s:s+4])[0]; b[s:s+4]=struct.pack('<f',v*1000)"
python3 - $W/c.ckpt $W/d.ckpt <<'PY'
import sys,struct,json
b=open(sys.argv[1],'rb').read(); n=struct.unpack('<Q',b[:8])[0]; h=json.loads(b[8:8+n]); data=b[8+n:]
keep={k:v for k,v in h.items() if not k.startswith('optim.exp_avg.')}
# re-lay the data of the tensors kept, so the file is well-formed
out=bytearray(); nh={}
for k,v in keep.items():
    if k=='__metadata__': nh[k]=v; continue
    s,e=v['data_offsets']; nv=dict(v); nv['data_offsets']=[len(out),len(out)+e-s]; out+=data[s:e]; nh[k]=nv
hb=json.dumps(nh).encode(); open(sys.argv[2],'wb').write(struct.pack('<Q',len(hb))+hb+out)
print(sorted(k for k in h if k.startswith('optim'))[:4])
PY
run "checkpoint: first Adam moments deleted (well-formed)" fail $B/train_lm "${small[@]}" --steps 6 --resume $W/d.ckpt
run "checkpoint: resume with another d-model" fail $B/train_lm "${small[@]}" --d-model 32 --steps 6 --resume $W/c.ckpt
run "checkpoint: a results JSON as checkpoint" fail $B/train_lm "${small[@]}" --steps 6 --resume $W/c.json
: > $W/empty.ckpt
run "checkpoint: empty file" fail $B/train_lm "${small[@]}" --steps 6 --resume $W/empty.ckpt
run "checkpoint: a directory" fail $B/train_lm "${small[@]}" --steps 6 --resume $W
run "checkpoint: resume other model (lstm)" fail $B/train_lm --corpus-file $T --min-count 2 --model lstm --d-model 16 --context 8 --batch 4 --steps 6 --resume $W/c.ckpt
run "checkpoint: ok resume" ok $B/train_lm "${small[@]}" --steps 6 --resume $W/c.ckpt --results $W/c2.json

# ---- F. precision
runenv "precision auto under AVX2 ISA: falls back" ok ONEDNN_MAX_CPU_ISA=AVX2 $B/train_lm "${small[@]}" --steps 1 --precision auto
grep -m1 -i "fp32\|bf16" $out | sed 's/^/   says: /'
runenv "precision bf16 under AVX2 ISA: refused" fail ONEDNN_MAX_CPU_ISA=AVX2 $B/train_lm "${small[@]}" --steps 1 --precision bf16
runenv "precision bf16 under bogus ISA value" any ONEDNN_MAX_CPU_ISA=';touch '$M $B/train_lm "${small[@]}" --steps 1 --precision bf16

# ---- G. MPI output agreement
run "mpi: --results on rank 1 only" fail mpirun --allow-run-as-root --oversubscribe -np 1 $B/train_lm "${small[@]}" --steps 1 : -np 1 $B/train_lm "${small[@]}" --steps 1 --results $W/mpi.json
run "mpi: --checkpoint on rank 1 only" fail mpirun --allow-run-as-root --oversubscribe -np 1 $B/train_lm "${small[@]}" --steps 1 : -np 1 $B/train_lm "${small[@]}" --steps 1 --checkpoint $W/mpi.ckpt
run "mpi: different --lr per rank" fail mpirun --allow-run-as-root --oversubscribe -np 1 $B/train_lm "${small[@]}" --steps 1 : -np 1 $B/train_lm "${small[@]}" --steps 1 --lr 0.5

# ---- H. deferral: two signals in the final evaluation
$B/train_lm --corpus-file $T --min-count 1 --d-model 16 --layers 1 --heads 2 --context 8 --batch 4 --steps 2 --results $W/h.json --checkpoint $W/h.ckpt >$out 2>&1 & hp=$!
sleep 0.8; kill -TERM $hp 2>/dev/null; sleep 0.1; kill -TERM $hp 2>/dev/null
for _ in $(seq 300); do kill -0 $hp 2>/dev/null || break; sleep 0.1; done
if kill -0 $hp 2>/dev/null; then
  kill -KILL $hp; wait $hp; fail=$((fail+1)); echo "NOT   deferral: still running 30 s after two SIGTERMs"
else
  wait $hp; pass=$((pass+1)); echo "fine  deferral: two SIGTERMs, exit $?"
fi

# ---- I. smaller items and flag variants
run "lstm --positions rotary" fail $B/train_lm --corpus-file $T --min-count 2 --model lstm --positions rotary --steps 1
run "gru --heads 4" fail $B/train_lm --corpus-file $T --min-count 2 --model gru --heads 4 --steps 1
run "--lr nan" fail $B/train_lm "${small[@]}" --steps 1 --lr nan
run "--lr -1" fail $B/train_lm "${small[@]}" --steps 1 --lr -1
run "--dropout 2" fail $B/train_lm "${small[@]}" --steps 1 --dropout 2
run "--split 0.9,0.9,0.1" fail $B/train_lm "${small[@]}" --steps 1 --split 0.9,0.9,0.1
run "--split 1,0,0" fail $B/train_lm "${small[@]}" --steps 1 --split 1,0,0
run "--threads 100000" fail $B/train_lm "${small[@]}" --steps 1 --threads 100000
run "--corpus-file a directory" fail $B/train_lm --corpus-file $W --steps 1
run "--corpus-file empty" fail $B/train_lm --corpus-file $W/empty.ckpt --steps 1
run "--results into a missing folder" fail $B/train_lm "${small[@]}" --steps 1 --results $W/none/x.json
run "--results /dev/full" fail $B/train_lm "${small[@]}" --steps 1 --results /dev/full
run "--vectors NaN values" fail $B/train_lm "${small[@]}" --steps 1 --embedding frozen-pretrained --vectors $here/tests/fixtures/vectors_corrupt.txt
printf '3 4\nthe nan 1 2 3\nof 1 2 3 4\nand 1 2 3 4\n' > $W/nanvec.txt
run "--vectors a nan literal" fail $B/train_lm "${small[@]}" --d-model 4 --heads 2 --steps 1 --embedding frozen-pretrained --vectors $W/nanvec.txt
printf '2 99999999999\n' > $W/hugevec.txt
run "--vectors huge width header" fail $B/train_lm "${small[@]}" --steps 1 --embedding frozen-pretrained --vectors $W/hugevec.txt
run "--model-option unknown model" fail $B/train_lm "${small[@]}" --steps 1 --model-option nosuch:x=1
run "--model-option bad key for gpt" fail $B/exp_embeddings "${small[@]}" --steps 1 --models gpt --modes learned --model-option gpt:zzz=1 --dry-run --out $W/mo
# Five at once on one checkpoint: one trains, four are refused with a message.
for i in 1 2 3 4 5; do ( $B/train_lm "${small[@]}" --steps 30000 --checkpoint $W/five.ckpt >$W/five$i.log 2>&1 ) & done; wait
refused=$(grep -l "another train_lm is writing it" $W/five*.log | wc -l)
if [ "$refused" -eq 4 ]; then pass=$((pass+1)); echo "fine  five train_lm on one checkpoint: 4 refused"; else fail=$((fail+1)); echo "NOT   five train_lm on one checkpoint: $refused refused"; fi
printf '{"valid": [NaN], "test": [1]}' > $W/nan_nll.json
run "ngram --mix-with NaN literal" fail $B/ngram --corpus-file $T --mix-with $W/nan_nll.json
run "ngram --mix-with empty file" fail $B/ngram --corpus-file $T --mix-with $W/empty.ckpt
run "word2vec --out into missing folder" fail $B/word2vec --corpus-file $T --out $W/none/v.bin
run "exp_embeddings --modes unknown" fail $B/exp_embeddings "${small[@]}" --steps 1 --models gpt --modes nosuch --out $W/u
run "exp_embeddings --out with newline" any $B/exp_embeddings "${small[@]}" --steps 1 --models gpt --modes learned --seeds 1 --out "$W/o"$'\n'"x"
run "exp_data_size --fractions 0" fail $B/exp_data_size "${small[@]}" --steps 1 --fractions 0 --out $W/ds
run "exp_data_size --fractions 1.5" fail $B/exp_data_size "${small[@]}" --steps 1 --fractions 1.5 --out $W/ds
echo; echo "fine $pass, not fine $fail"
[ "$fail" -eq 0 ]
