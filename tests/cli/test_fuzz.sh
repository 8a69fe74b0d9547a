#!/usr/bin/env bash
# mlasim fuzz and shrink as a user runs them: help, bad flags, a finding written, loaded and failing
# `mlasim check` for its stated reason, the same output for the same seed.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

check "fuzz --help" 0 "$mlasim" fuzz --help
for needle in no_fresh_prefill_on_decode_path step_invariants same_logits_as_strict "prompts    1 (20%), 2, T, T+1" \
              "num_gpu_blocks: 40% barely enough" "Example" "mlasim fuzz --set"; do
  contains "fuzz --help explains" "$needle"
done
check "shrink --help" 0 "$mlasim" shrink --help
contains "shrink --help" "mlasim shrink scenarios/seed/one_token_prompt_behind_decode.yaml"

check "fuzz --runs 0" 2 "$mlasim" fuzz --runs 0
check "fuzz --runs x" 2 "$mlasim" fuzz --runs x
check "fuzz --time -1" 2 "$mlasim" fuzz --time -1
check "fuzz unknown flag" 2 "$mlasim" fuzz --no-such-flag
check "fuzz --property" 2 "$mlasim" fuzz --property nope
contains "fuzz --property" '--property: unknown property "nope"'
check "fuzz --vary" 2 "$mlasim" fuzz --vary nope
contains "fuzz --vary" '--vary: unknown knob "nope"'
check "fuzz model property without --model" 2 "$mlasim" fuzz --property same_logits_as_strict
contains "fuzz model property without --model" "needs --model"
check "fuzz --inject without --model" 2 "$mlasim" fuzz --inject kv_norm_dropped
check "fuzz bad --set" 2 "$mlasim" fuzz --set engine.profile=nope
check "fuzz missing base" 2 "$mlasim" fuzz /nonexistent.yaml
check "shrink without --property" 2 "$mlasim" shrink "$root/scenarios/seed/lone_one_token_prompt.yaml"
check "shrink bad property" 2 "$mlasim" shrink "$root/scenarios/seed/lone_one_token_prompt.yaml" --property nope

# Under vllm-current with FlashInfer-MLA: found, shrunk to a lone 1-token prompt, written.
check "fuzz finds" 1 "$mlasim" fuzz --seed 3 --runs 300 --set engine.profile=vllm-current \
  --set engine.attention_backend=flashinfer-mla -o "$scratch/found"
first=$out
contains "fuzz finds" "no_fresh_prefill_on_decode_path violated"
contains "fuzz finds" "to 1 request: P=1 max_tokens=1"
files=("$scratch"/found/*.yaml)
if [[ ${#files[@]} -ne 1 || ! -f ${files[0]} ]]; then echo "FAIL fuzz wrote ${#files[@]} files"; fail=1; fi
if ls -a "$scratch/found" | grep -q '\.tmp'; then echo "FAIL fuzz left a temporary file"; fail=1; fi
check "fuzz same seed, same output" 1 "$mlasim" fuzz --seed 3 --runs 300 --set engine.profile=vllm-current \
  --set engine.attention_backend=flashinfer-mla -o "$scratch/found"
[[ "$out" == "$first" ]] || { echo "FAIL fuzz output differs for the same seed"; fail=1; }
check "finding loads" 0 "$mlasim" run "${files[0]}" --dry-run --table none --set expect.invariants=[]
check "finding fails check" 1 "$mlasim" check "${files[0]}" --dry-run --golden-dir "$scratch/golden"
contains "finding fails check" "invariant no_fresh_prefill_on_decode_path at step 0"

# Under strict: none in a fixed budget, nothing written.
check "fuzz strict" 0 "$mlasim" fuzz --runs 2000 --set engine.profile=strict --vary all -o "$scratch/none"
contains "fuzz strict" "no violation in 2000 runs"
[[ ! -e "$scratch/none" ]] || { echo "FAIL fuzz wrote output without a violation"; fail=1; }

# With the model: the misrouting changes the logits only with a decode-path fault injected.
check "fuzz --model" 0 "$mlasim" fuzz --model --runs 5 --max-requests 2 --set engine.attention_backend=flashinfer-mla \
  --property same_logits_as_strict
check "fuzz --model --inject" 1 "$mlasim" fuzz --model --runs 5 --max-requests 2 \
  --set engine.attention_backend=flashinfer-mla --inject decode_skips_cache_write_for_fresh_rows \
  --property same_logits_as_strict -o "$scratch/model"
contains "fuzz --model --inject" "same_logits_as_strict violated"
contains "fuzz --model --inject" "to 1 request: P=1 max_tokens=1"
grep -qF -- "--model --inject decode_skips_cache_write_for_fresh_rows" "$scratch"/model/*.yaml ||
  { echo "FAIL the finding's comment lacks the fault it needs"; fail=1; }

check "fuzz --time alone" 0 "$mlasim" fuzz --time 0.5 --set engine.profile=strict
contains "fuzz --time alone" "no violation in "
if grep -qF "no violation in 1000 runs" <<<"$out"; then echo "FAIL fuzz --time stopped at the default --runs"; fail=1; fi

# shrink: a failing seed scenario to its minimal form; a passing one has nothing to shrink.
check "shrink" 1 "$mlasim" shrink "$root/scenarios/seed/one_token_prompt_behind_decode.yaml" \
  --property no_fresh_prefill_on_decode_path -o "$scratch/min.yaml"
contains "shrink" "to 1 request: P=1 max_tokens=1"
check "shrunk fails check" 1 "$mlasim" check "$scratch/min.yaml" --dry-run --golden-dir "$scratch/golden"
contains "shrunk fails check" "FAIL one_token_prompt_behind_decode_min"
contains "shrunk fails check" "invariant no_fresh_prefill_on_decode_path at step 0"
check "shrink passing" 0 "$mlasim" shrink "$root/scenarios/seed/lone_one_token_prompt_strict.yaml" \
  --property no_fresh_prefill_on_decode_path -o "$scratch/none.yaml"
contains "shrink passing" "nothing to shrink"
[[ ! -e "$scratch/none.yaml" ]] || { echo "FAIL shrink wrote a passing scenario"; fail=1; }

# matrix: help, bad flags, the table and its Markdown and JSON files.
# matches_golden_split: goldens recorded for a seed, checked by a later run; a changed golden is
# found at its run and written as the trace plus its golden, which `mlasim check` then fails.
check "fuzz golden property without --golden-dir" 2 "$mlasim" fuzz --property matches_golden_split
contains "fuzz golden property without --golden-dir" "needs --golden-dir DIR"
check "fuzz --golden-dir without the property" 2 "$mlasim" fuzz --golden-dir "$scratch/g"
check "fuzz --record-golden with --property" 2 "$mlasim" fuzz --record-golden "$scratch/g" --property step_invariants
check "shrink matches_golden_split" 2 "$mlasim" shrink "$root/scenarios/seed/lone_one_token_prompt.yaml" \
  --property matches_golden_split
contains "shrink matches_golden_split" "cannot be shrunk: a smaller trace has no golden"
check "fuzz --record-golden" 0 "$mlasim" fuzz --seed 3 --runs 40 --record-golden "$scratch/g"
contains "fuzz --record-golden" "recorded 40 split goldens in $scratch/g"
check "fuzz matches_golden_split" 0 "$mlasim" fuzz --seed 3 --runs 40 --property matches_golden_split --golden-dir "$scratch/g"
contains "fuzz matches_golden_split" "no violation in 40 runs"
sed -i 's/^step 1 | decode /step 1 | decode 9/' "$scratch/g/fuzz_3_12/split.txt"
check "fuzz matches_golden_split changed" 1 "$mlasim" fuzz --seed 3 --runs 40 --property matches_golden_split \
  --golden-dir "$scratch/g" -o "$scratch/gf"
contains "fuzz matches_golden_split changed" "run 12 (fuzz_3_12, "
contains "fuzz matches_golden_split changed" "$scratch/g/fuzz_3_12/split.txt:7: split differs from the golden"
contains "fuzz matches_golden_split changed" "wrote $scratch/gf/golden/fuzz_3_12/split.txt"
check "the golden finding fails check" 1 "$mlasim" check "$scratch/gf/fuzz_3_12.yaml" --golden-dir "$scratch/gf/golden"
contains "the golden finding fails check" "$scratch/gf/golden/fuzz_3_12/split.txt:7: split differs from the golden"
not_contains "the golden finding fails check" "fingerprint differs"

# --emit: the traces themselves, checking nothing; each loads and replays (tools/conformance reads them).
check "fuzz --emit" 0 "$mlasim" fuzz --emit "$scratch/emit" --runs 20 --seed 5 --vary all
contains "fuzz --emit" "wrote 20 traces in $scratch/emit"
[[ $(ls "$scratch/emit" | wc -l) == 20 ]] || { echo "FAIL fuzz --emit: 20 files"; fail=1; }
grep -qF "# drawn by mlasim fuzz --seed 5 --vary all, run 7" "$scratch/emit/fuzz_5_7.yaml" ||
  { echo "FAIL fuzz --emit: the comment names seed, flags and run"; fail=1; }
for f in "$scratch"/emit/*.yaml; do
  "$mlasim" run "$f" --dry-run --table none >/dev/null 2>&1 || { echo "FAIL emitted trace $f does not replay"; fail=1; }
done
grep -lqE "policy: priority" "$scratch"/emit/*.yaml || { echo "FAIL fuzz --vary all draws the priority policy"; fail=1; }
grep -lqE "stop_token_ids|ignore_eos" "$scratch"/emit/*.yaml || { echo "FAIL fuzz --vary all draws stops"; fail=1; }
check "fuzz --emit with --property" 2 "$mlasim" fuzz --emit "$scratch/e2" --property step_invariants
contains "fuzz --emit with --property" "--emit writes --runs traces and checks nothing"
# shrink --candidates: every one-edit-smaller trace, in the shrinker's order, as loadable files.
check "shrink --candidates" 0 "$mlasim" shrink "$root/scenarios/seed/one_token_prompt_behind_decode.yaml" --candidates "$scratch/cand"
n=$(ls "$scratch/cand" | wc -l)
contains "shrink --candidates" "$n candidates in $scratch/cand"
[[ $n -ge 3 ]] || { echo "FAIL shrink --candidates: $n candidates"; fail=1; }
for f in "$scratch"/cand/*.yaml; do
  "$mlasim" run "$f" --dry-run --table none >/dev/null 2>&1 || { echo "FAIL candidate $f does not replay"; fail=1; }
done
check "shrink with neither" 2 "$mlasim" shrink "$root/scenarios/seed/one_token_prompt_behind_decode.yaml"
contains "shrink with neither" "give --property NAME (shrink) or --candidates DIR"

# --seed is a whole number 0..2^64-1 and --time finite seconds in (0, a year]: nothing wraps,
# saturates or means "no limit" by accident, and the message is one short line.
for seed in -1 18446744073709551616 1e23 " 5"; do
  check "fuzz --seed '$seed'" 2 "$mlasim" fuzz --seed "$seed" --runs 1
  contains "fuzz --seed '$seed'" "--seed: want a whole number 0..18446744073709551615, got \"$seed\""
done
check "matrix --seed -1" 2 "$mlasim" matrix --seed -1
for t in nan 0 -3 inf 1e300; do
  check "fuzz --time $t" 2 "$mlasim" fuzz --time "$t" --runs 1
  contains "fuzz --time $t" "--time: want seconds > 0 and at most 31536000, got \"$t\""
  [[ ${#out} -lt 200 ]] || { echo "FAIL fuzz --time $t: a ${#out}-character message"; fail=1; }
done
check "matrix --help" 0 "$mlasim" matrix --help
contains "matrix --help" "mlasim matrix --runs 1000"
check "matrix --runs 0" 2 "$mlasim" matrix --runs 0
check "matrix --inject without --model" 2 "$mlasim" matrix --inject kv_norm_dropped
check "matrix --json in a missing folder" 2 "$mlasim" matrix --json /nonexistent/m.json
check "matrix" 0 "$mlasim" matrix --runs 50 --json "$scratch/m.json" --markdown "$scratch/m.md"
contains "matrix" "vllm-0.33        flashinfer-mla  0 on      1 request: P=1 max_tokens=1"
contains "matrix" "strict           flashmla        3 off     none found in 50 runs"
grep -qF "| vllm-0.33 | flashinfer-mla | 0 | on | 1 request: P=1 max_tokens=1 |" "$scratch/m.md" ||
  { echo "FAIL matrix --markdown lacks the flashinfer-mla row"; fail=1; }
grep -qF '"runs_per_cell": 50' "$scratch/m.json" || { echo "FAIL matrix --json lacks runs_per_cell"; fail=1; }

# releases: help, bad flags, the table and its Markdown and JSON files.
check "releases --help" 0 "$mlasim" releases --help
contains "releases --help" "mlasim releases --json releases.json"
check "releases --json in a missing folder" 2 "$mlasim" releases --json /nonexistent/r.json
check "releases unknown flag" 2 "$mlasim" releases --runs 5
check "releases" 0 "$mlasim" releases --json "$scratch/r.json" --markdown "$scratch/r.md"
contains "releases" "  flashinfer-mla     1  decode* 1/0"
contains "releases" "vLLM 0.8.x (\`vllm-2025-early\`, model runner v1)"
grep -qF "|  | cutlass-mla | 1 | decode* 1/0 | prefill 0/5 | decode* 2/0 | prefill 0/2 | prefill 0/4 |" "$scratch/r.md" ||
  { echo "FAIL releases --markdown lacks the cutlass-mla row"; fail=1; }
[[ $(grep -o '"backend"' "$scratch/r.json" | wc -l) -eq 26 ]] || { echo "FAIL releases --json: not 26 cells"; fail=1; }

# Threads and shards: the same output for any -j; the shards' lowest violating run is one run's.
# Goldens of seed 3 recorded, then two edited: run 150 (even) and run 201 (odd) violate.
check "fuzz --record-golden for shards" 0 "$mlasim" fuzz --seed 3 --runs 300 --record-golden "$scratch/rg"
echo "0 | garbage" >>"$scratch/rg/fuzz_3_150/split.txt"
echo "0 | garbage" >>"$scratch/rg/fuzz_3_201/split.txt"
golden_fuzz=("$mlasim" fuzz --seed 3 --runs 300 --property matches_golden_split --golden-dir "$scratch/rg")
check "fuzz -j 1" 1 "${golden_fuzz[@]}" -j 1
serial=$out
contains "fuzz -j 1" "run 150 (fuzz_3_150"
check "fuzz -j 4" 1 "${golden_fuzz[@]}" -j 4
[[ "$out" == "$serial" ]] || { echo "FAIL fuzz -j 4: the output differs from -j 1"; fail=1; }
check "fuzz --shard 0/2" 1 "${golden_fuzz[@]}" --shard 0/2
contains "fuzz --shard 0/2" "run 150 (fuzz_3_150"
check "fuzz --shard 1/2" 1 "${golden_fuzz[@]}" --shard 1/2 -j 2
contains "fuzz --shard 1/2" "run 201 (fuzz_3_201"
check "fuzz --shard 2/3" 0 "${golden_fuzz[@]}" --shard 2/3
contains "fuzz --shard 2/3" "no violation in 100 runs (shard 2/3 of 300 runs)"
check "fuzz --shard 1/3, 1000 runs" 0 "$mlasim" fuzz --seed 1 --runs 1000 --set engine.profile=strict --vary all \
  --shard 1/3 -j 2
contains "fuzz --shard 1/3, 1000 runs" "no violation in 333 runs (shard 1/3 of 1000 runs)"
check "fuzz --shard 3/3" 2 "$mlasim" fuzz --shard 3/3
check "fuzz -j -1" 2 "$mlasim" fuzz -j -1
check "matrix -j 1" 0 "$mlasim" matrix --runs 40 --seed 4 -j 1
serial=$out
check "matrix -j 3" 0 "$mlasim" matrix --runs 40 --seed 4 -j 3
[[ "$out" == "$serial" ]] || { echo "FAIL matrix -j 3: the table differs from -j 1"; fail=1; }

# README.md shows both matrices as the tool prints them.
bash "$root/tools/readme-matrix" --check "$mlasim" || fail=1
exit $fail
