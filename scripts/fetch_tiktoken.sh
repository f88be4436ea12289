#!/usr/bin/env bash
# Installs the reference encoder the tokenizer's tests and benchmark compare with: the npm
# package tiktoken (OpenAI's Rust encoder compiled to WebAssembly, run by node) into
# DATA_DIR/npm/node_modules (DATA_DIR as for fetch_gpt2.sh). Tests skip, saying so, without it.
#   scripts/fetch_tiktoken.sh [DATA_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${1:-${TAPEGRAD_DATA:-$here/data/cache}}
prefix=$data_dir/npm
version=1.0.22
if [ -f "$prefix/node_modules/tiktoken/package.json" ] &&
   grep -q "\"version\": \"$version\"" "$prefix/node_modules/tiktoken/package.json"; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fetch_tiktoken.sh: npm is not installed (run scripts/setup.sh data)" >&2
  exit 1
fi
mkdir -p "$prefix"
echo "installing the reference encoder (npm package tiktoken@$version) into $prefix" >&2
if ! npm install --prefix "$prefix" --no-save --no-audit --no-fund --silent "tiktoken@$version"; then
  echo "fetch_tiktoken.sh: npm could not install tiktoken@$version (offline?)" >&2
  exit 1
fi
