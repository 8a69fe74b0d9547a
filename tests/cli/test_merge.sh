#!/usr/bin/env bash
# `mlasim merge`: the reports of 1, 3 and 7 shards of `check` (JSON, JUnit), `fuzz` (JSON, with
# and without a violation) and `matrix` (JSON) joined are byte-identical to one unsharded run's
# (JUnit's times masked); `--shard auto` from Slurm's and a Kubernetes Job's variables gives the same shards;
# shards that do not make one campaign exit 2 with nothing written.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
cd "$root"
unset GTEST_SHARD_INDEX GTEST_TOTAL_SHARDS GTEST_SHARD_STATUS_FILE SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX
mask_times() { sed -E 's/ time="[0-9]+\.[0-9]{3}"/ time="T"/g' "$1"; }
same() {  # same NAME A B
  if cmp -s "$2" "$3"; then merged=$((merged + 1)); else echo "FAIL $1: $3 differs from $2"; diff "$2" "$3" | head -5; fail=1; fi
}
merged=0

"$mlasim" check scenarios --dry-run --json "$scratch/all.json" --junit "$scratch/all.xml" >/dev/null
fuzz_found=(fuzz --seed 3 --runs 300 --vary all --set engine.profile=vllm-current --set engine.attention_backend=flashinfer-mla)
fuzz_clean=(fuzz --seed 5 --runs 700 --set engine.profile=strict)
"$mlasim" "${fuzz_found[@]}" -o "$scratch/found" --json "$scratch/found.json" >/dev/null
"$mlasim" "${fuzz_clean[@]}" --json "$scratch/clean.json" >/dev/null
"$mlasim" matrix --runs 20 --seed 5 --json "$scratch/matrix.json" >/dev/null
grep -q '"run": ' "$scratch/found.json" || { echo "FAIL the fuzz campaign found no violation to merge"; fail=1; }
grep -q '"violation": null' "$scratch/clean.json" || { echo "FAIL the strict campaign found a violation"; fail=1; }
for n in 1 3 7; do
  for ((i = 0; i < n; i++)); do
    "$mlasim" check scenarios --dry-run --shard "$i/$n" --json "$scratch/c$i.json" --junit "$scratch/c$i.xml" >/dev/null
    "$mlasim" "${fuzz_found[@]}" -o "$scratch/found" --shard "$i/$n" --json "$scratch/f$i.json" >/dev/null
    "$mlasim" "${fuzz_clean[@]}" --shard "$i/$n" --json "$scratch/k$i.json" >/dev/null
    "$mlasim" matrix --runs 20 --seed 5 --shard "$i/$n" --json "$scratch/x$i.json" >/dev/null
  done
  ls=$(seq 0 $((n - 1)))
  check "merge $n check JSON" 0 "$mlasim" merge $(for i in $ls; do echo "$scratch/c$i.json"; done) -o "$scratch/m.json"
  same "$n shards' check JSON" "$scratch/all.json" "$scratch/m.json"
  # In any order: the reports are sorted back into one run's.
  check "merge $n check JUnit" 0 "$mlasim" merge $(for i in $ls; do echo "$scratch/c$i.xml"; done | sort -r) -o "$scratch/m.xml"
  same "$n shards' check JUnit" <(mask_times "$scratch/all.xml") <(mask_times "$scratch/m.xml")
  check "merge $n fuzz reports" 0 "$mlasim" merge $(for i in $ls; do echo "$scratch/f$i.json"; done) -o "$scratch/mf.json"
  same "$n shards' fuzz report (a violation)" "$scratch/found.json" "$scratch/mf.json"
  check "merge $n clean fuzz reports" 0 "$mlasim" merge $(for i in $ls; do echo "$scratch/k$i.json"; done) -o "$scratch/mk.json"
  same "$n shards' fuzz report (none)" "$scratch/clean.json" "$scratch/mk.json"
  check "merge $n matrix reports" 0 "$mlasim" merge $(for i in $ls; do echo "$scratch/x$i.json"; done | sort -r) -o "$scratch/mx.json"
  same "$n shards' matrix" "$scratch/matrix.json" "$scratch/mx.json"
done
[[ $merged -eq 15 ]] || { echo "FAIL $merged of 15 merges compared equal"; fail=1; }

# --shard auto: a Slurm array (--array=1-3) and a Kubernetes Indexed Job name the same shards.
for i in 0 1 2; do
  SLURM_ARRAY_TASK_ID=$((i + 1)) SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
    "$mlasim" check scenarios --dry-run --shard auto --json "$scratch/s$i.json" >/dev/null
  JOB_COMPLETION_INDEX=$i MLASIM_TOTAL_SHARDS=3 "$mlasim" "${fuzz_clean[@]}" --shard auto --json "$scratch/j$i.json" >/dev/null
done
check "merge Slurm shards" 0 "$mlasim" merge "$scratch"/s{0,1,2}.json -o "$scratch/ms.json"
cmp -s "$scratch/all.json" "$scratch/ms.json" || { echo "FAIL Slurm shards' merge differs"; fail=1; }
check "merge Kubernetes shards" 0 "$mlasim" merge "$scratch"/j{0,1,2}.json -o "$scratch/mj.json"
cmp -s "$scratch/clean.json" "$scratch/mj.json" || { echo "FAIL Kubernetes shards' merge differs"; fail=1; }
check "--shard auto without a shard" 2 "$mlasim" check scenarios --dry-run --shard auto
contains "--shard auto without a shard" "--shard auto: no shard in the environment"

# Shards that are not one campaign: exit 2, nothing written.
for i in 0 1 2; do "$mlasim" check scenarios --dry-run --shard "$i/3" --json "$scratch/c$i.json" >/dev/null; done
bad() {  # bad NAME NEEDLE REPORTS...
  local name=$1 needle=$2
  shift 2
  check "$name" 2 "$mlasim" merge "$@" -o "$scratch/bad.json"
  contains "$name" "$needle"
  [[ ! -e $scratch/bad.json ]] || { echo "FAIL $name: wrote the output"; fail=1; rm -f "$scratch/bad.json"; }
}
bad "a missing shard" "shard 2/3 is missing" "$scratch/c0.json" "$scratch/c1.json"
bad "a shard twice" "shard 1/3 again" "$scratch/c0.json" "$scratch/c1.json" "$scratch/c1.json" "$scratch/c2.json"
bad "an unsharded report" "not a shard's report" "$scratch/all.json"
bad "two kinds" "a check-junit report among check-json reports" "$scratch/c0.json" "$scratch/c1.xml"
bad "another campaign's shard" "shard 1/7 of" "$scratch/f0.json" "$scratch/k1.json"
sed 's/"num_checks": [0-9]*/"num_checks": "x"/' "$scratch/c1.json" >"$scratch/edited.json"
bad "an edited report" "edited.json:" "$scratch/c0.json" "$scratch/edited.json" "$scratch/c2.json"
contains "an edited report" "scenarios[0].num_checks: expected an integer, got a string"
head -c 200 "$scratch/c1.xml" >"$scratch/cut.xml"
bad "a cut JUnit report" "does not end with a newline" "$scratch/c0.xml" "$scratch/cut.xml"
bad "not a report" "not a report mlasim merges" scenarios/seed/lone_one_token_prompt.yaml
"$mlasim" matrix --runs 20 --seed 6 --shard 1/3 --json "$scratch/y1.json" >/dev/null
"$mlasim" matrix --runs 20 --seed 5 --shard 0/3 --json "$scratch/y0.json" >/dev/null
"$mlasim" matrix --runs 20 --seed 5 --shard 2/3 --json "$scratch/y2.json" >/dev/null
bad "another matrix's shard" "seed: differs from" "$scratch/y0.json" "$scratch/y1.json" "$scratch/y2.json"
# A shard stopped (--time) before the runs below another's violation cannot be merged.
sed 's/"runs": [0-9]*/"runs": 0/' "$scratch/f1.json" >"$scratch/f1-cut.json"
"$mlasim" "${fuzz_found[@]}" -o "$scratch/found" --shard 0/2 --json "$scratch/h0.json" >/dev/null
"$mlasim" "${fuzz_found[@]}" -o "$scratch/found" --shard 1/2 --json "$scratch/h1.json" >/dev/null
low=$(grep -h '"run": ' "$scratch"/h{0,1}.json | sort -t: -k2 -n | head -1 | tr -dc 0-9)
if [[ $low -gt 0 ]]; then
  other=$(grep -L "\"run\": $low," "$scratch"/h{0,1}.json | head -1)
  sed -E 's/"runs": [0-9]+/"runs": 0/' "$other" >"$scratch/h-cut.json"
  bad "a shard short of the lowest run" "not all" $(grep -l "\"run\": $low," "$scratch"/h{0,1}.json) "$scratch/h-cut.json"
fi
exit $fail
