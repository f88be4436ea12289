# Sourced by the study scripts (converged.sh, paper_nplm.sh): the options they share.
# The caller sets the defaults of bin, out and threads, and defines own_option, which is given
# the remaining arguments and sets `taken` to how many of them it used (0: not its option;
# an option with a value calls `need_value "$@"` first).
#   parse_study_options "$@"
need_value() {
  if [ $# -lt 2 ]; then
    echo "$(basename "$0"): $1 needs a value" >&2
    exit 2
  fi
}

parse_study_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --bin | --out | --threads)
        need_value "$@"
        case "$1" in
          --bin) bin=$2 ;;
          --out) out=$2 ;;
          --threads) threads=$2 ;;
        esac
        shift 2
        ;;
      *)
        taken=0
        own_option "$@"
        if [ "$taken" -eq 0 ]; then
          echo "$(basename "$0"): unknown argument '$1'" >&2
          exit 2
        fi
        shift "$taken"
        ;;
    esac
  done
}
