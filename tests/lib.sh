# What the shell test suites share. Source it after setting `suite` (the name they print).
#   Counting suites (every case runs): set `case` before each, then `check`, `ok` or `fail`;
#   `finish` prints the counts and fails if any case did.
#   Scenario suites (each step needs the one before): `die MESSAGE` stops at the first failure.
failures=0 passed=0 case=""
fail() { echo "FAIL $case: $*" >&2; failures=$((failures + 1)); }
ok() { passed=$((passed + 1)); }
# check STATUS WANT_STATUS STDERR_FILE REGEX: the exit status, then the message.
check() {
  local status=$1 want=$2 err=$3 regex=$4
  if [ "$status" != "$want" ]; then fail "exit status $status, want $want: $(tail -3 "$err")"; return 1; fi
  if ! grep -Eq -- "$regex" "$err"; then fail "message does not match '$regex': $(tail -3 "$err")"; return 1; fi
  ok
}
finish() {
  echo "$suite: $passed passed, $failures failed"
  [ "$failures" = 0 ]
}
die() {
  echo "$suite: $*" >&2
  exit 1
}
