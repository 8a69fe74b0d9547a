#!/usr/bin/env bash
# `mlasim run` at trace scale as a user meets it: --table modes, --jsonl, requests files and their
# errors (exit 2, file:line:col, no output file left), and --json/--jsonl written atomically.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
seed="$root/scenarios/seed/lone_one_token_prompt.yaml"
timed="$root/scenarios/scheduler/requests_file_timed_shared_prefix.yaml"

check "table auto" 0 "$mlasim" run "$seed" --dry-run
contains "table auto" "step    0: num_mqa=1 num_mha=0 total_toks=1"
contains "table auto" "steps; requests:"
check "table full is auto for a short run" 0 "$mlasim" run "$seed" --dry-run --table full
auto_out=$("$mlasim" run "$seed" --dry-run)
[[ "$out" == "$auto_out" ]] || { echo "FAIL table full differs from auto on a short run"; fail=1; }
check "table summary" 0 "$mlasim" run "$timed" --dry-run --table summary
contains "table summary" "requests: 3 from "
contains "table summary" "5 steps, 3 requests finished (0 stopped, 3 length-capped), 81 prompt tokens, 7 output tokens, 0 preemptions"
contains "table summary" "fresh prefills on the decode path: 1 (step 3 lone_one_token (q=1))"
contains "table summary" "scheduled tokens"
contains "table summary" "TTFT"
if grep -q "^step " <<<"$out"; then echo "FAIL table summary prints step lines"; fail=1; fi
check "table none" 0 "$mlasim" run "$timed" --dry-run --table none
contains "table none" "expect: all 15 checks hold"
[[ $(wc -l <<<"$out") -eq 1 ]] || { echo "FAIL table none prints more than the expect line"; echo "$out"; fail=1; }
check "bad --table" 2 "$mlasim" run "$seed" --table wide

# --jsonl: header, steps, requests; --json from the same run is the usual document.
check "jsonl" 0 "$mlasim" run "$timed" --dry-run --table none --jsonl "$scratch/run.jsonl" --json "$scratch/run.json"
[[ $(wc -l <"$scratch/run.jsonl") -eq 9 ]] || { echo "FAIL jsonl has $(wc -l <"$scratch/run.jsonl") lines, expected 1 + 5 + 3"; fail=1; }
head -1 "$scratch/run.jsonl" | grep -qF '{"type": "header", "format": "mlasim-run-jsonl", "version": 1, "scenario": "requests_file_timed_shared_prefix"}' \
  || { echo "FAIL jsonl header"; head -1 "$scratch/run.jsonl"; fail=1; }
sed -n 5p "$scratch/run.jsonl" | grep -qF '"step": 3,' || { echo "FAIL jsonl step line 4"; fail=1; }
sed -n 5p "$scratch/run.jsonl" | grep -qF '"time_ns": 5000000000,' || { echo "FAIL jsonl step 3 starts at 5 s"; fail=1; }
tail -1 "$scratch/run.jsonl" | grep -qF '"type": "request", "id": "lone_one_token"' || { echo "FAIL jsonl last request"; fail=1; }
grep -qF '"format": "mlasim-run"' "$scratch/run.json" || { echo "FAIL json document"; fail=1; }
ls "$scratch" | grep -q '\.tmp\.' && { echo "FAIL a temporary file was left"; fail=1; }

# A bad requests file: exit 2 naming file:line:col and key; no --json/--jsonl written.
printf '{"prompt_len": 4}\n{"prompt_len": 4, "max_tokens": 0}\n' >"$scratch/bad.jsonl"
printf 'version: 1\nrequests_file: bad.jsonl\n' >"$scratch/bad.yaml"
check "bad requests file" 2 "$mlasim" run "$scratch/bad.yaml" --dry-run --json "$scratch/bad.json" --jsonl "$scratch/bad.out.jsonl"
contains "bad requests file" "$scratch/bad.jsonl:2:33: error: requests_file[1].max_tokens: 0 is out of range"
[[ -e "$scratch/bad.json" || -e "$scratch/bad.out.jsonl" ]] && { echo "FAIL output written for a bad requests file"; fail=1; }
printf 'version: 1\nrequests_file: missing.jsonl\n' >"$scratch/missing.yaml"
check "missing requests file" 2 "$mlasim" run "$scratch/missing.yaml" --dry-run
contains "missing requests file" "$scratch/missing.yaml:2:16: error: requests_file: cannot read the requests file $scratch/missing.jsonl (no such file; check the path)"
# A requests file that is a FIFO or a pipe cannot be read twice: refused at its key, never a hang
# or a silent second read of nothing.
mkfifo "$scratch/fifo.jsonl"
printf 'version: 1\nrequests_file: fifo.jsonl\n' >"$scratch/fifo.yaml"
check "requests file a FIFO" 2 timeout 60 "$mlasim" run "$scratch/fifo.yaml" --dry-run
contains "requests file a FIFO" "fifo.yaml:2:16: error: requests_file: the requests file $scratch/fifo.jsonl is not a regular file"
printf 'version: 1\nrequests_file: /dev/stdin\n' >"$scratch/stdin.yaml"
out=$(printf '{"prompt_len":3,"max_tokens":2}\n' | "$mlasim" run "$scratch/stdin.yaml" --dry-run 2>&1)
rc=$?
[[ $rc -eq 2 ]] || { echo "FAIL requests file /dev/stdin: exit $rc, expected 2"; fail=1; }
contains "requests file /dev/stdin" "error: requests_file: the requests file /dev/stdin is not a regular file"
check "jsonl into a missing directory" 2 "$mlasim" run "$seed" --dry-run --jsonl /nonexistent-dir/x.jsonl

# The same requests inline and from a file give the same run JSON.
printf 'version: 1\nscheduler: {max_num_batched_tokens: 32, max_num_seqs: 4, max_model_len: 1008, num_gpu_blocks: 64}\nrequests:\n' >"$scratch/inline.yaml"
: >"$scratch/same.jsonl"
for i in 0 1 2 3 4 5; do
  printf '  - {id: r%d, arrival_step: %d, prompt_len: %d, max_tokens: %d}\n' $i $((i / 2)) $((3 + 7 * i)) $((2 + i)) >>"$scratch/inline.yaml"
  printf '{"arrival_step": %d, "prompt_len": %d, "max_tokens": %d}\n' $((i / 2)) $((3 + 7 * i)) $((2 + i)) >>"$scratch/same.jsonl"
done
printf 'version: 1\nname: inline\nscheduler: {max_num_batched_tokens: 32, max_num_seqs: 4, max_model_len: 1008, num_gpu_blocks: 64}\nrequests_file: same.jsonl\n' >"$scratch/file.yaml"
"$mlasim" run "$scratch/inline.yaml" --dry-run --json "$scratch/inline.json" >/dev/null
"$mlasim" run "$scratch/file.yaml" --dry-run --json "$scratch/file.json" >/dev/null
cmp -s "$scratch/inline.json" "$scratch/file.json" || { echo "FAIL inline and file requests differ"; fail=1; }

[[ $fail -eq 0 ]] && echo "all run streaming checks passed"
exit $fail
