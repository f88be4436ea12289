#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each on its seed corpus
# for SECONDS (default 60). A crash, sanitizer report, leak or hang fails the script and leaves
# the input under build-fuzz/findings/; add it to tests/fuzz/corpus/ and fix the reader.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/setup.sh build fuzz
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAPEGRAD_FUZZ=ON \
  -DTAPEGRAD_BUILD_TESTS=OFF >/dev/null
targets=(safetensors vectors_text vectors_binary vocab corpus bpe)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/findings
fuzz_one() {  # target: runs it for $seconds on its seed corpus, its log in build-fuzz/
  local t=$1 work=build-fuzz/corpus/$1
  mkdir -p "$work"
  cp tests/fuzz/corpus/"$t"/* "$work"/
  build-fuzz/bin/fuzz_"$t" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/findings/"$t"- -print_final_stats=1 2>build-fuzz/"$t".log
}
# One target per core at a time: each libFuzzer process is single-threaded.
cores=$(nproc)
failed=()
for ((i = 0; i < ${#targets[@]}; i += cores)); do
  batch=("${targets[@]:i:cores}")
  pids=()
  for t in "${batch[@]}"; do
    echo "fuzzing $t for ${seconds}s" >&2
    fuzz_one "$t" &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    t=${batch[k]}
    if wait "${pids[k]}"; then
      grep -E "stat::number_of_executed_units" build-fuzz/"$t".log >&2 || true
    else
      tail -40 build-fuzz/"$t".log >&2
      failed+=("$t")
    fi
  done
done
if ((${#failed[@]})); then
  echo "fuzzing found a problem in: ${failed[*]} (inputs in build-fuzz/findings/)" >&2
  exit 1
fi
echo "fuzzing: no crash, leak or hang in ${#targets[@]} targets x ${seconds}s" >&2
