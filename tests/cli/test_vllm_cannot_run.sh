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

check "stall: exit 4" 4 "$mlasim" run "$stall" --dry-run --table summary --json "$scratch/stall.json"
contains "stall: the message" "vLLM cannot run this trace: step 1019: no progress for 1000 steps"
grep -qF '"step": 1019,' "$scratch/stall.json" || { echo "FAIL stall: json stopped step"; fail=1; }

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
