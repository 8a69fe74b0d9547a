#!/usr/bin/env bash
# Runs a command and passes only when it exits with the given code: expect_exit.sh CODE CMD ARGS...
expected=$1
shift
"$@"
rc=$?
if [[ $rc -ne $expected ]]; then
  echo "expect_exit: '$*' exited $rc, expected $expected" >&2
  exit 1
fi
