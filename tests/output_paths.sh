#!/usr/bin/env bash
# Outputs that would destroy an input, another output or a device are refused before anything
# is read; a rewritten file keeps its permissions.
#   tests/output_paths.sh BIN_DIR TOY_CORPUS WORK_DIR
set -uo pipefail
suite=output_paths
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$1 toy=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
# refused STATUS STDERR REGEX FILE...: exit 1, the message, and each FILE unchanged (as
# copied before into FILE.orig).
refused() {
  local status=$1 err=$2 regex=$3
  shift 3
  if [ "$status" != 1 ]; then fail "exit status $status, want 1: $(tail -2 "$err")"; return; fi
  if ! grep -Eq -- "$regex" "$err"; then fail "message does not match '$regex': $(tail -2 "$err")"; return; fi
  for f in "$@"; do cmp -s "$f" "$f.orig" || { fail "$f changed"; return; }; done
  ok
}
fresh() { cp "$toy" corpus.txt && cp corpus.txt corpus.txt.orig; }
base_flags=(--min-count 2 --d-model 16 --layers 1 --heads 2 --context 16 --batch 8 --warmup 2)
tiny=("${base_flags[@]}" --steps 2)

for flag in --results --checkpoint --token-nll; do
  case="train_lm $flag is the corpus"
  fresh
  "$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" $flag corpus.txt >/dev/null 2>err
  refused $? err "$flag corpus.txt is the same file as --corpus-file corpus.txt: the output would replace the input" corpus.txt
done

case="train_lm --results is a symlink to the corpus"
fresh
ln -sf corpus.txt link.json
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results link.json >/dev/null 2>err
refused $? err "--results link.json is the same file as --corpus-file corpus.txt" corpus.txt

case="train_lm --results is a hard link to the corpus"
fresh
ln -f corpus.txt hard.json
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results hard.json >/dev/null 2>err
refused $? err "--results hard.json is the same file as --corpus-file corpus.txt" corpus.txt

case="train_lm: two outputs are one file"
fresh
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results x.json --checkpoint ./x.json >/dev/null 2>err
refused $? err "--results x.json is the same file as --checkpoint ./x.json: one output would overwrite the other"
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results y.json --token-nll y.json >/dev/null 2>err
refused $? err "--results y.json is the same file as --token-nll y.json"

case="train_lm --results in a folder where no file can be made"
# /proc passes a permission check for root, yet takes no new files: refused before training.
fresh
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results /proc/run.json >out 2>err
refused $? err "--results /proc/run.json: cannot create a file in /proc: " corpus.txt
grep -q "step" out && fail "it trained before refusing: $(tail -1 out)"

case="train_lm --results is the --vectors file"
fresh
printf '2 3\ncat 1 2 3\ndog 3 2 1\n' > v.txt && cp v.txt v.txt.orig
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --embedding frozen-pretrained --vectors v.txt \
  --results v.txt >/dev/null 2>err
refused $? err "--results v.txt is the same file as --vectors v.txt" v.txt

case="ngram --results is the corpus or the --mix-with file"
fresh
"$bin/ngram" --corpus-file corpus.txt --min-count 2 --order 3 --results corpus.txt >/dev/null 2>err
refused $? err "--results corpus.txt is the same file as --corpus-file corpus.txt" corpus.txt
echo '{}' > n.json && cp n.json n.json.orig
"$bin/ngram" --corpus-file corpus.txt --min-count 2 --order 3 --mix-with n.json --results n.json >/dev/null 2>err
refused $? err "--results n.json is the same file as --mix-with n.json" n.json

case="word2vec --output is its input"
fresh
"$bin/word2vec" train --input corpus.txt --output corpus.txt --size 8 --iter 1 >/dev/null 2>err
refused $? err "--output corpus.txt is the same file as --input corpus.txt" corpus.txt

case="tokenize --output is its input"
fresh
for command in encode decode; do
  "$bin/tokenize" $command --tokenizer gpt2 --input corpus.txt --output corpus.txt >/dev/null 2>err
  refused $? err "--output corpus.txt is the same file as --input corpus.txt" corpus.txt
done
"$bin/tokenize" train --input corpus.txt --vocab-size 300 --output . >/dev/null 2>err || fail "$(tail -1 err)"
cp encoder.json encoder.json.orig && cp vocab.bpe vocab.bpe.orig
"$bin/tokenize" train --input vocab.bpe --vocab-size 300 --output . >/dev/null 2>err
refused $? err "--output ./vocab.bpe is the same file as --input vocab.bpe" vocab.bpe encoder.json
"$bin/tokenize" train --input corpus.txt --output corpus.txt >/dev/null 2>err
refused $? err "--output corpus.txt: not a folder" corpus.txt

case="tokenize train makes its --output folder only when the vocabulary is ready"
fresh
"$bin/tokenize" train --input missing.txt --vocab-size 300 --output new/bpe >/dev/null 2>err
refused $? err "missing.txt" corpus.txt
[ ! -e new ] || fail "a refused run left the folder new/ behind"
"$bin/tokenize" train --input corpus.txt --vocab-size 300 --output corpus.txt/bpe >/dev/null 2>err
refused $? err "--output corpus.txt/bpe: corpus.txt is not a folder" corpus.txt
"$bin/tokenize" train --input corpus.txt --vocab-size 300 --output new/bpe >/dev/null 2>err || fail "$(tail -1 err)"
[ -s new/bpe/encoder.json ] && [ -s new/bpe/vocab.bpe ] && ok || fail "new/bpe lacks its two files"

case="an output that is a file of the --tokenizer is refused, in every program that reads one"
fresh
"$bin/tokenize" encode --tokenizer . --input corpus.txt --output vocab.bpe >/dev/null 2>err
refused $? err "--output vocab.bpe is the same file as --tokenizer ./vocab.bpe" vocab.bpe
"$bin/tokenize" encode --tokenizer encoder.json --input corpus.txt --output encoder.json >/dev/null 2>err
refused $? err "--output encoder.json is the same file as --tokenizer encoder.json" encoder.json
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --tokenizer . --results vocab.bpe >/dev/null 2>err
refused $? err "--results vocab.bpe is the same file as --tokenizer ./vocab.bpe" vocab.bpe
"$bin/ngram" --corpus-file corpus.txt --order 3 --tokenizer . --results encoder.json >/dev/null 2>err
refused $? err "--results encoder.json is the same file as --tokenizer ./encoder.json" encoder.json
"$bin/word2vec" train --input corpus.txt --tokenizer . --output vocab.bpe --size 8 --iter 1 >/dev/null 2>err
refused $? err "--output vocab.bpe is the same file as --tokenizer ./vocab.bpe" vocab.bpe

case="an output that is a device or a pipe is refused, not replaced"
fresh
for dev in /dev/null /dev/stdout; do
  "$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results $dev >/dev/null 2>err
  refused $? err "--results $dev: is a (character device|pipe|socket|regular)"
done
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
ln -sf /dev/null devlink.json
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --checkpoint devlink.json >/dev/null 2>err
refused $? err "--checkpoint devlink.json: is a character device"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
mkfifo fifo.json
"$bin/ngram" --corpus-file corpus.txt --min-count 2 --order 3 --results fifo.json >/dev/null 2>err
refused $? err "--results fifo.json: is a pipe"

case="--checkpoint may be the file --resume reads"
fresh
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --checkpoint c.ckpt >/dev/null 2>err || fail "$(tail -1 err)"
"$bin/train_lm" --corpus-file corpus.txt "${base_flags[@]}" --steps 4 --resume c.ckpt --checkpoint c.ckpt \
  >/dev/null 2>err && passed=$((passed + 1)) || fail "resume in place refused: $(tail -1 err)"

case="a rewritten results file keeps its permissions"
fresh
echo '{}' > private.json && chmod 600 private.json
"$bin/train_lm" --corpus-file corpus.txt "${tiny[@]}" --results private.json >/dev/null 2>err || fail "$(tail -1 err)"
mode=$(stat -c %a private.json)
[ "$mode" = 600 ] && grep -q valid_ppl private.json && passed=$((passed + 1)) || fail "mode $mode after the rewrite"

finish
