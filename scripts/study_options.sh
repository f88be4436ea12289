# Sourced by the study scripts (converged.sh, paper_nplm.sh, scaling.sh, subwords.sh): the
# options they share.
# The caller sets the defaults of bin, out and threads, and defines own_option, which is given
# the remaining arguments and sets `taken` to how many of them it used (0: not its option;
# an option with a value calls `need_value "$@"` first).
#   parse_study_options "$@"
#   lock_study_folder DIR   (before training into DIR)
#   train_into DIR PROGRAM ARGS...   (a study of many folders: each one run unless held)
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

# Two studies training into the same folder at once would run the same runs and overwrite each
# other's checkpoints: the second is refused. The lock is held until the script exits or locks
# its next folder.
lock_study_folder() {
  mkdir -p "$1"
  if [ -n "${study_lock:-}" ]; then exec {study_lock}>&-; fi
  exec {study_lock}>"$1/.lock"
  if ! flock -n "$study_lock"; then
    echo "$(basename "$0"): another study is running in $1 (it holds $1/.lock)" >&2
    exit 1
  fi
}

# For the studies of many folders (scaling.sh, subwords.sh): trains PROGRAM ARGS into DIR, or
# with the caller's dry_run set only asks it for its --dry-run. A folder another invocation
# holds is passed over, so two invocations can share one list of folders, a core each.
train_into() {
  local folder=$1 program=$2
  shift 2
  if [ ${#dry_run[@]} -gt 0 ]; then
    "$program" --dry-run "$@" --out "$folder"
    return
  fi
  mkdir -p "$folder"
  local lock
  exec {lock}>"$folder/.lock"
  if ! flock -n "$lock"; then
    echo "$(basename "$0"): $folder: another invocation holds it, moving on" >&2
    exec {lock}>&-
    return
  fi
  "$program" "$@" --out "$folder"
  exec {lock}>&-
}
