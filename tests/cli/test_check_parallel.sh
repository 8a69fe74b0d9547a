#!/usr/bin/env bash
# `mlasim check -j N` prints and reports exactly what a serial run does; `--shard I/N` and the
# gtest variables split the sorted scenarios so the shards cover each once; bad values exit 2.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$root"
unset GTEST_SHARD_INDEX GTEST_TOTAL_SHARDS GTEST_SHARD_STATUS_FILE
mask_times() { sed -E 's/ time="[0-9]+\.[0-9]{3}"/ time="T"/g' "$1"; }  # JUnit holds seconds
same_as_serial() {  # same_as_serial NAME PREFIX: PREFIX.{txt,json,xml,rc} equal serial.*
  cmp -s "$scratch/serial.txt" "$scratch/$2.txt" || { echo "FAIL $1: stdout differs"; diff "$scratch/serial.txt" "$scratch/$2.txt" | head -5; fail=1; }
  cmp -s "$scratch/serial.json" "$scratch/$2.json" || { echo "FAIL $1: --json differs"; fail=1; }
  cmp -s <(mask_times "$scratch/serial.xml") <(mask_times "$scratch/$2.xml") || { echo "FAIL $1: --junit differs"; fail=1; }
  [[ $(cat "$scratch/$2.rc") == $(cat "$scratch/serial.rc") ]] || { echo "FAIL $1: exit $(cat "$scratch/$2.rc")"; fail=1; }
}
run_check() {  # run_check PREFIX ARGS...: stdout, reports and exit code under $scratch/PREFIX.*
  local prefix=$1
  shift
  "$mlasim" check "$@" --json "$scratch/$prefix.json" --junit "$scratch/$prefix.xml" >"$scratch/$prefix.txt" 2>/dev/null
  echo $? >"$scratch/$prefix.rc"
}

# -j: passing, failing (several lines each) and malformed scenarios, in the serial order.
sed 's/c: 224}, total_num_scheduled_tokens: 1024, new/c: 225}, total_num_scheduled_tokens: 1024, new/' \
  scenarios/scheduler/chunked_prefill_threshold_budget.yaml >"$scratch/edited.yaml"
mixed=(scenarios tests/data/bad "$scratch/edited.yaml")
run_check serial "${mixed[@]}" --dry-run
n_yaml=$(find scenarios -name '*.yaml' | wc -l)
[[ $(grep -c '^PASS ' "$scratch/serial.txt") -eq $n_yaml ]] || { echo "FAIL serial run: not $n_yaml PASS lines"; fail=1; }
grep -q '^FAIL edited ' "$scratch/serial.txt" || { echo "FAIL serial run: no FAIL line"; fail=1; }
grep -q '^ERROR ' "$scratch/serial.txt" || { echo "FAIL serial run: no ERROR line"; fail=1; }
grep -q ' time="[0-9]*\.[0-9]*"' "$scratch/serial.xml" || { echo "FAIL the JUnit report has no time= to mask"; fail=1; }
for j in "-j 4" "--jobs 3" "-j 0" "-j 64"; do
  run_check parallel "${mixed[@]}" --dry-run $j
  same_as_serial "check $j" parallel
done
# With the model: concurrent replays give the same logits verdicts (the short model scenarios; the
# long-prompt and v3-attn ones run as their own scenario tests).
model=(scenarios/model/bf16_cache.yaml scenarios/model/q_lora.yaml scenarios/model/tensor_parallel_2.yaml)
run_check serial "${model[@]}"
[[ $(cat "$scratch/serial.rc") -eq 0 ]] || { echo "FAIL check ${model[*]} exited $(cat "$scratch/serial.rc")"; fail=1; }
run_check parallel "${model[@]}" -j 3
same_as_serial "check ${model[*]} -j 3" parallel

# --shard I/3: shard I prints the serial lines I, I+3, ... and the shards together list each once.
"$mlasim" check scenarios --dry-run >"$scratch/all.txt"
grep '^PASS ' "$scratch/all.txt" | cut -d' ' -f2 >"$scratch/all_names.txt"
: >"$scratch/union.txt"
for i in 0 1 2; do
  check "--shard $i/3" 0 "$mlasim" check scenarios --dry-run --shard $i/3 -j 2
  contains "--shard $i/3" "$(awk -v i=$i 'NR % 3 == (i + 1) % 3' "$scratch/all_names.txt" | wc -l) passed, 0 failed (shard $i/3 of $n_yaml scenarios)"
  grep '^PASS ' <<<"$out" | cut -d' ' -f2 >"$scratch/shard$i.txt"
  awk -v i=$i 'NR % 3 == (i + 1) % 3' "$scratch/all_names.txt" | cmp -s - "$scratch/shard$i.txt" ||
    { echo "FAIL --shard $i/3 does not run scenarios $i, $((i + 3)), ..."; fail=1; }
  cat "$scratch/shard$i.txt" >>"$scratch/union.txt"
done
[[ -z $(sort "$scratch/union.txt" | uniq -d) ]] || { echo "FAIL shards repeat: $(sort "$scratch/union.txt" | uniq -d)"; fail=1; }
cmp -s <(sort "$scratch/union.txt") <(sort "$scratch/all_names.txt") || { echo "FAIL the shards do not cover the suite"; fail=1; }
[[ $(wc -l <"$scratch/union.txt") -eq $n_yaml ]] || { echo "FAIL the shards ran $(wc -l <"$scratch/union.txt") scenarios"; fail=1; }

# The gtest variables: the same shard as --shard, which wins over them; the status file is created.
"$mlasim" check scenarios --dry-run --shard 1/3 >"$scratch/flag.txt"
GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=3 GTEST_SHARD_STATUS_FILE="$scratch/status" "$mlasim" check scenarios --dry-run >"$scratch/env.txt"
cmp -s "$scratch/flag.txt" "$scratch/env.txt" || { echo "FAIL GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=3 differs from --shard 1/3"; fail=1; }
[[ -e "$scratch/status" ]] || { echo "FAIL GTEST_SHARD_STATUS_FILE was not created"; fail=1; }
GTEST_SHARD_INDEX=0 GTEST_TOTAL_SHARDS=2 "$mlasim" check scenarios --dry-run --shard 1/3 >"$scratch/both.txt"
cmp -s "$scratch/flag.txt" "$scratch/both.txt" || { echo "FAIL --shard 1/3 does not win over the gtest variables"; fail=1; }

# More shards than scenarios: an empty shard passes and still writes its reports.
check "empty shard" 0 "$mlasim" check scenarios/seed/lone_one_token_prompt.yaml --dry-run --shard 3/5 \
  --json "$scratch/empty.json" --junit "$scratch/empty.xml"
contains "empty shard" "0 passed, 0 failed (shard 3/5 of 1 scenario)"
grep -q '"passed": 0' "$scratch/empty.json" || { echo "FAIL empty shard: no --json report"; fail=1; }
grep -q 'tests="0"' "$scratch/empty.xml" || { echo "FAIL empty shard: no --junit report"; fail=1; }

# Bad values: exit 2, a message naming the flag or variable, nothing run or written.
bad() {  # bad NAME NEEDLE ARGS...
  local name=$1 needle=$2
  shift 2
  check "$name" 2 "$@" --json "$scratch/bad.json"
  contains "$name" "$needle"
  if grep -q '^PASS ' <<<"$out"; then echo "FAIL $name: ran scenarios"; fail=1; fi
  [[ ! -e "$scratch/bad.json" ]] || { echo "FAIL $name: wrote a report"; fail=1; rm -f "$scratch/bad.json"; }
}
ck=("$mlasim" check scenarios --dry-run)
bad "-j -1" '--jobs: "-1" is not a whole number >= 0' "${ck[@]}" -j -1
bad "--jobs abc" '--jobs: "abc" is not a whole number >= 0' "${ck[@]}" --jobs abc
bad "--shard 3/3" '--shard: "3/3": the shard index 3 is not below the shard count 3' "${ck[@]}" --shard 3/3
bad "--shard 1/0" '--shard: "1/0": the shard count N is 0' "${ck[@]}" --shard 1/0
bad "--shard 1" '--shard: "1" is not I/N' "${ck[@]}" --shard 1
bad "only GTEST_SHARD_INDEX" 'GTEST_TOTAL_SHARDS: not set, but GTEST_SHARD_INDEX is ("1")' env GTEST_SHARD_INDEX=1 "${ck[@]}"
bad "only GTEST_TOTAL_SHARDS" 'GTEST_SHARD_INDEX: not set, but GTEST_TOTAL_SHARDS is ("3")' env GTEST_TOTAL_SHARDS=3 "${ck[@]}"
bad "GTEST_TOTAL_SHARDS=x" 'GTEST_TOTAL_SHARDS: "x" is not a whole number >= 1' env GTEST_SHARD_INDEX=0 GTEST_TOTAL_SHARDS=x "${ck[@]}"
bad "GTEST_SHARD_INDEX past the count" 'GTEST_SHARD_INDEX: "3" is not below GTEST_TOTAL_SHARDS ("3")' \
  env GTEST_SHARD_INDEX=3 GTEST_TOTAL_SHARDS=3 "${ck[@]}"
bad "unwritable GTEST_SHARD_STATUS_FILE" 'cannot create GTEST_SHARD_STATUS_FILE' \
  env GTEST_SHARD_STATUS_FILE="$scratch/no/such/dir/status" "${ck[@]}"

[[ $fail -eq 0 ]] && echo "ok: check -j matches a serial run; shards cover the scenarios once; bad values exit 2"
exit $fail
