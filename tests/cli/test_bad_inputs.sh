#!/usr/bin/env bash
# Every malformed scenario in tests/data/bad/: `mlasim run` exits 2, prints exactly the expected
# message and hint (expected.tsv), and writes nothing.
set -u
mlasim=$1
bad_dir=$2
fail=0
count=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
while IFS=$'\t' read -r file message hint; do
  [[ $file == \#* || -z $file ]] && continue
  count=$((count + 1))
  out_dir="$scratch/$file"
  mkdir -p "$out_dir"
  (cd "$bad_dir" && "$mlasim" run "$file" --json "$out_dir/run.json" --logits-dir "$out_dir/logits") \
    >"$scratch/stdout" 2>"$scratch/stderr"
  rc=$?
  if [[ $rc -ne 2 ]]; then echo "FAIL $file: exit $rc, expected 2"; fail=1; fi
  want=$(printf '%s%s\n  hint: %s' "$file" "$message" "$hint")
  got=$(cat "$scratch/stderr")
  if [[ "$got" != "$want" ]]; then
    echo "FAIL $file: message differs"; echo "  expected: $want"; echo "  got:      $got"; fail=1
  fi
  if [[ -s "$scratch/stdout" ]]; then echo "FAIL $file: wrote to stdout"; fail=1; fi
  if [[ -n "$(ls -A "$out_dir")" ]]; then echo "FAIL $file: wrote $(ls -A "$out_dir")"; fail=1; fi
done <"$bad_dir/expected.tsv"
n_files=$(ls "$bad_dir"/*.yaml | wc -l)
if [[ $count -ne $n_files ]]; then echo "FAIL expected.tsv lists $count files, the folder has $n_files"; fail=1; fi
[[ $count -ge 15 ]] || { echo "FAIL only $count bad scenarios"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $count malformed scenarios rejected with exit 2 and nothing written"
exit $fail
