#!/usr/bin/env bash
# Traces vLLM 0.33 accepts but its scheduler cannot run: the replay goes as vLLM's does up to the
# step where vLLM fails and stops there, exit 4, its outputs published with "stopped" (the step
# and vLLM's line); `check` reports the scenario as one vLLM cannot run; fuzz finds nothing in it.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
cut="$root/tests/data/vllm_cannot_run/padded_admission_cut.yaml"
stall="$root/tests/data/vllm_cannot_run/padded_admission_over_budget.yaml"

check "cut: exit 4" 4 "$mlasim" run "$cut" --dry-run --json "$scratch/cut.json" --jsonl "$scratch/cut.jsonl" \
  --resolved "$scratch/cut.resolved"
contains "cut: the steps before it" "step    1: num_mqa=4 num_mha=0 total_toks=4"
contains "cut: the message" "padded_admission_cut.yaml: vLLM cannot run this trace: step 2: request b: vLLM 0.33's scheduler raises AssertionError"
contains "cut: vLLM's line" "\`assert num_new_tokens == 1 + self.num_spec_tokens\` (~1579) fails"
not_contains "cut: no step 2" "step    2:"
grep -qF '"stopped": {' "$scratch/cut.json" || { echo "FAIL cut: json lacks stopped"; fail=1; }
grep -qF '"step": 2,' "$scratch/cut.json" || { echo "FAIL cut: json stopped step"; fail=1; }
[[ $(grep -c '"type": "step"' "$scratch/cut.jsonl") -eq 2 ]] || { echo "FAIL cut: jsonl steps"; fail=1; }
tail -1 "$scratch/cut.jsonl" | grep -qF '{"type": "stopped", "step": 2, "reason": "request b: ' || { echo "FAIL cut: jsonl stopped line"; fail=1; }
# b arrived for the failing step: the resolved trace lists it, admitted at step 2.
grep -qF '"id": "b", "arrival_step": 2, "admitted_step": 2,' "$scratch/cut.resolved" || { echo "FAIL cut: resolved b"; fail=1; }
ls "$scratch" | grep -q '\.tmp\.' && { echo "FAIL cut: a temporary file was left"; fail=1; }

check "stall: exit 4" 4 "$mlasim" run "$stall" --dry-run --table summary --json "$scratch/stall.json" --jsonl "$scratch/stall.jsonl"
contains "stall: the message" "vLLM cannot run this trace: step 1019: no progress for 1000 steps"
grep -qF '"step": 1019,' "$scratch/stall.json" || { echo "FAIL stall: json stopped step"; fail=1; }

# A stopped run lists every request that arrived, with its state at the stop: in the cut, a is
# running with 8 of its 9 tokens computed and b, admitted before vLLM's assertion, running with 0;
# in the stall, a finished and b waits.
requests_at_stop() {
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(' '.join(f\"{r['id']}:{r['status']}:{len(r['token_ids'])}:{r.get('num_computed_tokens', '-')}\" for r in d['requests']))" "$1"
}
[[ $(requests_at_stop "$scratch/cut.json") == "a:running:9:8 b:running:1:0" ]] ||
  { echo "FAIL cut: requests at the stop: $(requests_at_stop "$scratch/cut.json")"; fail=1; }
[[ $(requests_at_stop "$scratch/stall.json") == "a:finished_length_capped:19:- b:waiting:17:0" ]] ||
  { echo "FAIL stall: requests at the stop: $(requests_at_stop "$scratch/stall.json")"; fail=1; }
[[ $(grep -c '"type": "request"' "$scratch/cut.jsonl") -eq 2 ]] || { echo "FAIL cut: jsonl request lines"; fail=1; }
grep -qF '"id": "b", "status": "running", "num_prompt_tokens": 1, "token_ids": [7], "num_preemptions": 0, "stop_reason": null, "num_computed_tokens": 0, "arrival_ns": 40146216, "first_token_ns": -1, "finish_ns": -1}' "$scratch/cut.jsonl" ||
  { echo "FAIL cut: jsonl b at the stop"; fail=1; }
# A complete run has no num_computed_tokens.
check "complete run" 0 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --table none --json "$scratch/ok.json"
grep -q num_computed_tokens "$scratch/ok.json" && { echo "FAIL complete run: json has num_computed_tokens"; fail=1; }

# golden update and run --compare-profile stop as run does: exit 4, the scenario, the step, vLLM's line.
check "golden update: exit 4" 4 "$mlasim" golden update "$cut" --golden-dir "$scratch/golden"
contains "golden update: the message" "padded_admission_cut.yaml: vLLM cannot run this trace: step 2: request b: vLLM 0.33's scheduler raises AssertionError"
contains "golden update: vLLM's line" "(~1579) fails"
contains "golden update: nothing written" "mlasim golden update: no golden was updated"
[[ ! -e "$scratch/golden" ]] || { echo "FAIL golden update wrote $(ls -A "$scratch/golden")"; fail=1; }
check "compare-profile: exit 4" 4 "$mlasim" run "$cut" --compare-profile vllm-0.12
contains "compare-profile: the message" "padded_admission_cut.yaml: vLLM cannot run this trace (profile vllm-0.33): step 2: request b: vLLM 0.33's scheduler raises AssertionError"
check "compare-profile of the stall: exit 4" 4 "$mlasim" run "$stall" --compare-profile strict
contains "compare-profile of the stall: the message" "padded_admission_over_budget.yaml: vLLM cannot run this trace (profile vllm-0.33): step 1019: no progress for 1000 steps"

# vLLM 0.8.5's KV cache manager miscounts the cached blocks of a request whose drafts were cut and
# its block pool raises two steps later: the vllm-2025-early replay stops there; vllm-0.11 runs it.
early="$root/tests/data/vllm_cannot_run/vllm_0_8_cache_count.yaml"
check "0.8 cache count: exit 4" 4 "$mlasim" run "$early" --dry-run
contains "0.8 cache count: the message" "vLLM cannot run this trace: step 3: request r0: vLLM 0.8's KV cache manager raises AssertionError at block_pool.py:120"
contains "0.8 cache count: the steps before it" "step    2: num_mqa=1 num_mha=0 total_toks=1"
check "0.8 cache count as vllm-0.11: runs" 0 "$mlasim" run "$early" --dry-run --set engine.profile=vllm-0.11
# The same miscount through a preempted request's kept drafts.
resumed="$root/tests/data/vllm_cannot_run/vllm_0_8_resumed_drafts.yaml"
check "0.8 resumed drafts: exit 4" 4 "$mlasim" run "$resumed" --dry-run
contains "0.8 resumed drafts: the message" "vLLM cannot run this trace: step 11: request r6: vLLM 0.8's KV cache manager raises AssertionError at block_pool.py:120"

check "check: bad input" 2 "$mlasim" check "$cut" --dry-run
contains "check: the message" "vLLM cannot run this trace: step 2: request b"
# The fuzzer draws thresholds below 1 + k: a run that stops where vLLM does is no finding (17 of
# these 200 traces stop).
check "fuzz: no finding" 0 "$mlasim" fuzz --set scheduler.long_prefill_token_threshold=2 \
  --set scheduler.num_speculative_tokens=3 --property step_invariants --runs 200 --seed 1 -o "$scratch/found"
[[ $fail -eq 0 ]] && echo "all vLLM-cannot-run checks passed"
exit $fail
