#!/usr/bin/env bash
# What vLLM 0.33 does with a KV cache too small for a request's worst case: it refuses only at
# start-up, a pool whose usable blocks cannot hold max_model_len (kv_cache_planning.py, exit 2 with
# vLLM's words); otherwise it runs the trace, and a request its pool can never hold (profiles
# without that check) stops the replay where vLLM makes no progress (exit 4, naming the request).
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
d="$root/tests/data/kv_fit"

# steps FILE: "number of steps; step:finished ids; ..." from a run JSON.
steps() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fin = ";".join(f"{s['step']}:{','.join(s['finished'])}" for s in d["steps"] if s["finished"])
pre = [f"{s['step']}:{','.join(s['preempted'])}" for s in d["steps"] if s["preempted"]]
pre = ";".join(pre) if len(pre) <= 3 else f"{len(pre)} times from {pre[0]} to {pre[-1]}"
req = ";".join(f"{r['id']}:{r['status']}:{len(r['token_ids'])}:{r.get('num_computed_tokens', '-')}" for r in d["requests"])
print(f"{len(d['steps'])} finished {fin} preempted {pre} requests {req}" + (f" stopped {d['stopped']['step']}" if "stopped" in d else ""))
PY
}
expect_steps() {  # expect_steps NAME JSON WANT
  local got
  got=$(steps "$2")
  [[ $got == "$3" ]] || { echo "FAIL $1: $got, expected $3"; fail=1; }
}

# prompt + max_tokens + 2k past the pool, but vLLM needs at most nct + 1 + k slots (no lookahead for
# n-gram), below max_model_len: all three run to the end.
check "drafts end at max_tokens" 0 "$mlasim" run "$d/drafts_end_at_max_tokens.yaml" --dry-run --table none --json "$scratch/a.json"
expect_steps "drafts end at max_tokens" "$scratch/a.json" "40 finished 39:a preempted  requests a:finished_length_capped:60:-"
check "drafts capped at max_model_len" 0 "$mlasim" run "$d/drafts_capped_at_max_model_len.yaml" --dry-run --table none --json "$scratch/b.json"
expect_steps "drafts capped at max_model_len" "$scratch/b.json" "24 finished 23:a preempted  requests a:finished_length_capped:64:-"
python3 -c "
import json, sys
d = json.load(open('$scratch/b.json'))
q = [s['num_scheduled_tokens']['a'] for s in d['steps'][-4:]]
sys.exit(0 if q == [4, 3, 2, 1] else 'drafts capped: last steps scheduled %s, expected [4, 3, 2, 1]' % q)" || fail=1
check "preempted then resumed" 0 "$mlasim" run "$d/preempted_then_resumed.yaml" --dry-run --table none --json "$scratch/c.json"
expect_steps "preempted then resumed" "$scratch/c.json" \
  "15 finished 7:a;14:b preempted 1:b requests a:finished_length_capped:50:-;b:finished_length_capped:50:-"

# A pool below max_model_len: vLLM 0.33's start-up refusal, in its words.
check "pool below max_model_len" 2 "$mlasim" run "$d/pool_below_max_model_len.yaml" --dry-run
contains "pool below max_model_len" "pool_below_max_model_len.yaml:6:65: error: scheduler.num_gpu_blocks: vLLM 0.33 refuses to start (vllm/v1/core/kv_cache_planning.py:1551-1559, :78-87): \"To serve at least one request with the model's max seq len (128), (8 blocks of 16 tokens) KV cache is needed, which is larger than the available KV cache memory (4 usable blocks: num_gpu_blocks 5 less the null block). Based on the available memory, the estimated maximum model length is 64."
not_contains "pool below max_model_len" "KV blocks but only"
# The fix the message names: max_model_len 64 runs it (as drafts_end_at_max_tokens.yaml).
check "pool below max_model_len, max_model_len 64" 0 "$mlasim" run "$d/pool_below_max_model_len.yaml" --dry-run \
  --set scheduler.max_model_len=64 --table none --json "$scratch/d.json"
expect_steps "pool below max_model_len, max_model_len 64" "$scratch/d.json" "40 finished 39:a preempted  requests a:finished_length_capped:60:-"
# vLLM 0.16's profile refuses no pool: the same trace runs.
check "pool below max_model_len as vllm-3region" 0 "$mlasim" run "$d/pool_below_max_model_len.yaml" --dry-run \
  --set engine.profile=vllm-3region --set engine.model_runner=v1 --table none --json "$scratch/e.json"
expect_steps "pool below max_model_len as vllm-3region" "$scratch/e.json" "40 finished 39:a preempted  requests a:finished_length_capped:60:-"
# An unset num_gpu_blocks is the smallest pool vLLM 0.33 starts with when 8192 is less: 10241 of 16
# for max_model_len 163840.
check "default pool" 0 "$mlasim" run "$root/tests/data/vllm_cannot_run/padded_admission_over_budget.yaml" --dry-run \
  --set scheduler.max_num_batched_tokens=4 --table none --resolved "$scratch/f.resolved"
grep -qF '"max_model_len": 163840,' "$scratch/f.resolved" && grep -qF '"block_size": 16, "num_gpu_blocks": 10241,' "$scratch/f.resolved" ||
  { echo "FAIL default pool: $(head -c 600 "$scratch/f.resolved")"; fail=1; }

# Requests the pool can never hold (vLLM 0.16's rules): the replay stops where vLLM makes no progress.
check "never fits" 4 "$mlasim" run "$d/never_fits.yaml" --dry-run --table none --json "$scratch/g.json"
contains "never fits" "never_fits.yaml: vLLM cannot run this trace: step 1007: request a: no progress for 1000 steps: its 65 tokens need 5 KV blocks of 16 to be computed, and only 4 are usable (num_gpu_blocks - 1, the null block): vLLM's KVCacheManager.allocate_slots can never allocate them (vllm/v1/core/kv_cache_manager.py:550-588"
# Preempted every fifth step from step 8 (4 chunks of 16 fill the pool); steps 8 to 1007 make no progress.
expect_steps "never fits" "$scratch/g.json" "1008 finished  preempted 200 times from 8:a to 1003:a requests a:running:65:64 stopped 1007"
check "never fits, waiting" 4 "$mlasim" run "$d/never_fits_waits.yaml" --dry-run --table none --json "$scratch/h.json"
contains "never fits, waiting" "never_fits_waits.yaml: vLLM cannot run this trace: step 1004: request a: no progress for 1000 steps: its 65 tokens need 5 KV blocks"
expect_steps "never fits, waiting" "$scratch/h.json" "1005 finished  preempted 5:a requests a:preempted:65:0;b:waiting:4:0 stopped 1004"
[[ $fail -eq 0 ]] && echo "all KV-fit checks passed"
exit $fail
