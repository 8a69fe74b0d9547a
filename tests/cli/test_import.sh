#!/usr/bin/env bash
# `mlasim import` as a user meets it: the samples import with exit 0 and a summary, --limit and
# --set work, and every bad input (tests/data/traces/bad/expected.tsv, unknown format, unreadable
# trace, missing output directory, bad options) exits 2 with its message and writes nothing.
set -u
mlasim=$1
root=$2
traces=$root/tests/data/traces
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
nothing_written() {  # nothing_written NAME: the scratch output folder is empty
  if [[ -n "$(ls -A "$scratch/out")" ]]; then echo "FAIL $1: wrote $(ls -A "$scratch/out")"; fail=1; fi
}
mkdir "$scratch/out"

check "help lists import" 0 "$mlasim" --help
contains "help lists import" "import"
check "help import" 0 "$mlasim" import --help
contains "help import" "Example: mlasim import azure"

check "azure sample" 0 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/a.yaml"
contains "azure sample" "imported 30 requests (2 skipped: 1 zero-output, 0 zero-prompt, 1 too long for max_model_len 163840) from $traces/azure_sample.csv -> $scratch/a.yaml + $scratch/a.jsonl"
contains "azure sample" "spread: arrivals over 11.997602 s, mean prompt 1541.7 tokens, mean output 196.5 tokens"
cmp -s "$scratch/a.jsonl" "$traces/expected/azure_sample.jsonl" || { echo "FAIL azure sample: a.jsonl differs"; fail=1; }
grep -qx "requests_file: a.jsonl" "$scratch/a.yaml" || { echo "FAIL azure sample: no requests_file line"; fail=1; }

check "burstgpt --limit" 0 "$mlasim" import burstgpt "$traces/burstgpt_sample.csv" -o "$scratch/b.yaml" --limit 10
contains "burstgpt --limit" "imported 10 requests (1 skipped: 1 zero-output"
contains "burstgpt --limit" "(stopped at --limit 10)"
[[ $(wc -l <"$scratch/b.jsonl") -eq 10 ]] || { echo "FAIL burstgpt --limit: $(wc -l <"$scratch/b.jsonl") lines"; fail=1; }

check "mooncake --set --model" 0 "$mlasim" import mooncake "$traces/mooncake_sample.jsonl" -o "$scratch/m.yaml" \
  --model tiny --set scheduler.max_num_batched_tokens=4096 --set scheduler.max_model_len=8192
contains "mooncake --set --model" "imported 13 requests (17 skipped: 0 zero-output, 0 zero-prompt, 17 too long for max_model_len 8192)"
grep -qx "  preset: tiny" "$scratch/m.yaml" || { echo "FAIL --model tiny not written"; fail=1; }
grep -qx "  max_num_batched_tokens: 4096" "$scratch/m.yaml" || { echo "FAIL --set not written"; fail=1; }
grep -q '"prompt_hash_ids": \[0, 1, 2, ' "$scratch/m.jsonl" || { echo "FAIL mooncake: no prompt_hash_ids"; fail=1; }
[[ $(ls "$scratch" | grep -c tmp) -eq 0 ]] || { echo "FAIL temporaries left: $(ls "$scratch")"; fail=1; }

# The imported scenarios load and replay: run streams each request file through the scheduler.
for name in a b m; do
  check "run $name.yaml" 0 "$mlasim" run "$scratch/$name.yaml" --dry-run --table summary
  contains "run $name.yaml" "requests: $(wc -l <"$scratch/$name.jsonl") from $scratch/$name.jsonl (arriving by arrival_time)"
done
contains "run m.yaml" "13 requests finished (0 stopped, 13 length-capped)"

# Bad traces: exit 2, exactly the expected message and hint on stderr, nothing on stdout or on disk.
count=0
while IFS=$'\t' read -r format file message hint; do
  [[ $format == \#* || -z $format ]] && continue
  count=$((count + 1))
  (cd "$traces/bad" && "$mlasim" import "$format" "$file" -o "$scratch/out/s.yaml") >"$scratch/stdout" 2>"$scratch/stderr"
  rc=$?
  [[ $rc -eq 2 ]] || { echo "FAIL $file: exit $rc, expected 2"; fail=1; }
  want=$(printf '%s%s\n  hint: %s' "$file" "$message" "$hint")
  got=$(cat "$scratch/stderr")
  [[ "$got" == "$want" ]] || { echo "FAIL $file: message differs"; echo "  expected: $want"; echo "  got:      $got"; fail=1; }
  [[ -s "$scratch/stdout" ]] && { echo "FAIL $file: wrote to stdout"; fail=1; }
  nothing_written "$file"
done <"$traces/bad/expected.tsv"
n_files=$(ls "$traces/bad" | grep -vc expected.tsv)
[[ $count -eq $n_files ]] || { echo "FAIL expected.tsv lists $count files, the folder has $n_files"; fail=1; }

check "unknown format" 2 "$mlasim" import sharegpt "$traces/azure_sample.csv" -o "$scratch/out/s.yaml"
contains "unknown format" 'mlasim import: error: FORMAT: unknown trace format "sharegpt"'
contains "unknown format" "hint: known formats: azure, burstgpt, mooncake"
nothing_written "unknown format"
check "unreadable trace" 2 "$mlasim" import azure "$scratch/none.csv" -o "$scratch/out/s.yaml"
contains "unreadable trace" "$scratch/none.csv: error: cannot read the trace: No such file or directory"
nothing_written "unreadable trace"
check "missing output directory" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/no/s.yaml"
contains "missing output directory" "error: -o: the directory $scratch/out/no does not exist"
nothing_written "missing output directory"
check "--limit 0" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/s.yaml" --limit 0
contains "--limit 0" "--limit: expected a number >= 1, found 0"
check "--limit abc" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/s.yaml" --limit abc
check "--model unknown" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/s.yaml" --model v4
contains "--model unknown" 'unknown model preset "v4"'
check "--set requests" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/s.yaml" --set requests_file=x.jsonl
contains "--set requests" "<--set requests_file=x.jsonl>:1:1: error: requests_file: the imported requests cannot be changed with --set"
check "--set malformed" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/s.yaml" --set scheduler.max_num_seqs
contains "--set malformed" "<--set scheduler.max_num_seqs>:1:1: error: expected key=value"
# A --set the scenario loader refuses is refused here, by its --set, and nothing is written.
check "--set block_size 0" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/v.yaml" --set scheduler.block_size=0
contains "--set block_size 0" "<--set scheduler.block_size=0>:1:22: error: scheduler.block_size: must be positive (got 0)"
check "--set unknown key" 2 "$mlasim" import azure "$traces/azure_sample.csv" -o "$scratch/out/v.yaml" --set nosuch.key=1
contains "--set unknown key" "<--set nosuch.key=1>:1:1: error: nosuch: unknown key"
[[ -e "$scratch/out/v.yaml" || -e "$scratch/out/v.jsonl" ]] && { echo "FAIL a refused --set wrote files"; fail=1; }
# A long header is cut in the message, not echoed whole.
head -c 1048576 /dev/zero | tr '\0' X >"$scratch/wide.csv"
printf '\n1,2,3\n' >>"$scratch/wide.csv"
check "a 1 MiB header" 2 "$mlasim" import azure "$scratch/wide.csv" -o "$scratch/out/w.yaml"
contains "a 1 MiB header" "XXXXXXXX... (1 MiB)\""
[[ ${#out} -lt 600 ]] || { echo "FAIL a 1 MiB header: a ${#out}-byte message"; fail=1; }
# A token count no request can have is refused at its line and column, not written for run to refuse.
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,2147483648\n' >"$scratch/huge.csv"
check "count 2^31" 2 "$mlasim" import azure "$scratch/huge.csv" -o "$scratch/out/h.yaml"
contains "count 2^31" "huge.csv:2:33: error: GeneratedTokens: count 2147483648 is more tokens than a request can have (at most 1073741824)"
# An over-long all-digit count is shown by its start and length, not echoed whole (8 MiB of digits).
{ printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,'; head -c 8388608 /dev/zero | tr '\0' 7; printf '\n'; } >"$scratch/digits.csv"
check "8 MiB of digits" 2 "$mlasim" import azure "$scratch/digits.csv" -o "$scratch/out/d.yaml"
contains "8 MiB of digits" "error: GeneratedTokens: count 7777777777777777777777777777777777777777... (8 MiB) is too large"
[[ ${#out} -lt 600 ]] || { echo "FAIL 8 MiB of digits: a ${#out}-byte message"; fail=1; }
check "no -o" 2 "$mlasim" import azure "$traces/azure_sample.csv"
nothing_written "bad options"

[[ $fail -eq 0 ]] && echo "ok: mlasim import, $count bad traces rejected with exit 2 and nothing written"
exit $fail
