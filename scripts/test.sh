#!/usr/bin/env bash
# The test command (CI runs exactly this):
#   1. installs missing Debian packages;
#   2. checks the C++ formatting (clang-format, .clang-format), builds with warnings as errors
#      and runs the whole suite through CTest, then the README's main command end to end on the
#      toy corpus (scripts/reproduce.sh --smoke);
#   3. builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite there
#      (any sanitizer report fails its test);
#   4. fuzzes every file reader for FUZZ_SECONDS each (default 15) with libFuzzer.
# TAPEGRAD_QUICK_TEST=1 skips steps 3 and 4 (for a fast local loop).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
quick=${TAPEGRAD_QUICK_TEST:-0}
if [ "$quick" = 1 ]; then scripts/setup.sh build data; else scripts/setup.sh build data fuzz; fi

# Formatting: any file clang-format would change fails the run, with the diff shown.
format_log=$(mktemp)
if ! git ls-files -z '*.cpp' '*.hpp' | xargs -0 clang-format --dry-run --Werror 2>"$format_log"; then
  head -40 "$format_log" >&2
  rm -f "$format_log"
  echo "test.sh: C++ files are not formatted: run  git ls-files '*.cpp' '*.hpp' | xargs clang-format -i" >&2
  exit 1
fi
rm -f "$format_log"

# The tokenizer's reference (tiktoken, from the npm registry): its parity tests skip, saying so,
# where it cannot be installed.
scripts/fetch_tiktoken.sh || echo "test.sh: tiktoken could not be installed: the tokenizer's parity tests will be skipped" >&2

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== the main command, end to end on the toy corpus ==" >&2
bash scripts/reproduce.sh --smoke >build/smoke.log 2>&1 || {
  tail -30 build/smoke.log >&2
  echo "test.sh: scripts/reproduce.sh --smoke failed (log: build/smoke.log)" >&2
  exit 1
}
tail -6 build/smoke.log
[ "$quick" = 1 ] && exit 0

echo "== the same suite under AddressSanitizer + UndefinedBehaviorSanitizer ==" >&2
# -O1 as the sanitizers' documentation recommends: fast to build, still fast enough to run.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DTAPEGRAD_WERROR=ON \
  -DTAPEGRAD_SANITIZE=ON -DTAPEGRAD_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j"$jobs"

echo "== fuzzing the file readers ==" >&2
bash scripts/fuzz.sh "${FUZZ_SECONDS:-15}"
