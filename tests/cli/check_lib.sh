# Helpers of the CLI tests (sourced): check runs a command and compares its exit code, contains
# (not_contains) looks for a string in its output. Each sets fail=1 on a mismatch.
fail=0
check() {  # check NAME EXPECTED_RC COMMAND... ; output in $out
  local name=$1 want=$2
  shift 2
  out=$("$@" 2>&1)
  local rc=$?
  if [[ $rc -ne $want ]]; then echo "FAIL $name: exit $rc, expected $want"; echo "$out" | head -5; fail=1; fi
}
contains() {  # contains NAME NEEDLE
  if ! grep -qF -- "$2" <<<"$out"; then echo "FAIL $1: output lacks '$2'"; echo "$out" | head -5; fail=1; fi
}
not_contains() {  # not_contains NAME NEEDLE
  if grep -qF -- "$2" <<<"$out"; then echo "FAIL $1: output has '$2'"; echo "$out" | head -5; fail=1; fi
}
make_scratch() {  # make_scratch ; a temporary folder in $scratch, removed at exit
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
}
