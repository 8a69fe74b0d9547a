#!/usr/bin/env bash
# `mlasim run --compare-set KEY=VALUE`: the scenario replayed a second time with the override, both
# splits side by side and the logits difference (fp64). The seed's chain on a prompt past
# index_topk (scenarios/deploy/glm5_dsa_past_index_topk.yaml): the figures the README quotes.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
past="$root/scenarios/deploy/glm5_dsa_past_index_topk.yaml"
gguf=(--compare-set model.hf_config=../hf_configs/glm-5-gguf-as-deepseek-v3.json --compare-set model.index_topk=null)

# The GGUF conversion that lost index_topk: the same path (FLASH_ATTN_MLA's T = 512 makes the
# prompt a decode, the sparse backend's top-k MQA takes it as a prefill), every row dense.
check "gguf chain" 0 "$mlasim" run "$past" "${gguf[@]}"
name="with model.hf_config=../hf_configs/glm-5-gguf-as-deepseek-v3.json, model.index_topk=null"
contains "gguf chain: split" "split: 1 of 3 steps route differently under as written and $name"
contains "gguf chain: sparse side" "num_mqa=280 num_mha=0  step 0 | decode 0/0 prefill 1/280 | past_topk:mqa[280,0]"
contains "gguf chain: dense side" "num_mqa=280 num_mha=0  step 0 | decode 1/280 prefill 0/0 | past_topk:mqa[280,0]"
contains "gguf chain: rows" "logits: 3 sampling rows compared"
contains "gguf chain: cost" "logits DIFFER (fp64 class): max abs 1.514e-01 at step 0 past_topk position 279 token 1097"
contains "gguf chain: cosine" "cos diff 6.785e-04"
contains "gguf chain: every element" "12288 of 12288 elements outside, 0 NaN/inf mismatches, 0 top-1 mismatches"
contains "gguf chain: first row" "first differing row: step 0 past_topk position 279"
contains "gguf chain: answer" "answer: the difference CHANGES the output"

# Dense MHA past index_topk: step 0 moves to the MHA path, attends to all 280 positions; the two
# decode steps stay on top-k MQA over the same cache, so only row 0 differs, and by exactly what
# the dense model's row 0 differs (dense attention either way).
check "dense mha past topk" 0 "$mlasim" run "$past" --compare-set engine.sparse_mla_prefill=dense_mha
contains "dense mha: split" "split: 1 of 3 steps route differently under as written and with engine.sparse_mla_prefill=dense_mha"
contains "dense mha: misrouted side" "num_mqa=0 num_mha=280  step 0 | decode 0/0 prefill 1/280 | past_topk:mha[280,0]"
contains "dense mha: cost" "logits DIFFER (fp64 class): max abs 1.514e-01 at step 0 past_topk position 279 token 1097"
contains "dense mha: one row" "4096 of 12288 elements outside, 0 NaN/inf mismatches, 0 top-1 mismatches"
contains "dense mha: first row" "first differing row: step 0 past_topk position 279"

# force_mqa (vLLM's attention_config.sparse_mla_force_mqa) within index_topk: the dense-MHA
# prefill moves to top-k MQA, which there selects every position: the same output.
within="$root/scenarios/deploy/glm5_dsa_prefill_within_index_topk.yaml"
check "force mqa within topk" 0 "$mlasim" run "$within" --compare-set engine.sparse_mla_prefill=force_mqa
contains "force mqa: split" "split: 1 of 2 steps route differently"
contains "force mqa: forced side" "num_mqa=280 num_mha=0  step 0 | decode 0/0 prefill 1/280 | fits_topk:mqa[280,0]"
contains "force mqa: same output" "answer: the difference does not change the output beyond the fp64 tolerance"

# Masked MHA (DeepSeek-V3.2 on B200, past index_topk): the MHA form with the top-k as a key mask
# gives top-k MQA's logits.
masked="$root/scenarios/deploy/deepseek_v32_b200_masked_mha.yaml"
check "masked mha vs top-k mqa" 0 "$mlasim" run "$masked" --compare-set engine.sparse_mla_prefill=force_mqa
contains "masked mha: split" "num_mqa=0 num_mha=600  step 0 | decode 0/0 prefill 1/600 | past_topk:mha[600,0]"
contains "masked mha: forced side" "num_mqa=600 num_mha=0  step 0 | decode 0/0 prefill 1/600 | past_topk:mqa[600,0]"
contains "masked mha: same output" "0 of 8192 elements outside, 0 NaN/inf mismatches, 0 top-1 mismatches"

# A schedule change: rows matched by (request, position), the output the same.
check "schedule change" 0 "$mlasim" run "$root/scenarios/model/q_lora.yaml" --compare-set scheduler.max_num_batched_tokens=8
contains "schedule change: split" "split: 5 of 5 steps route differently"
contains "schedule change: steps" "schedule: as written ran 5 steps, with scheduler.max_num_batched_tokens=8 ran 8"
contains "schedule change: rows" "logits: 7 sampling rows compared"
contains "schedule change: same output" "0 of 3584 elements outside, 0 NaN/inf mismatches, 0 top-1 mismatches"

# With --compare-profile: both on the second replay; --dry-run compares the splits alone.
check "set and profile, dry run" 0 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run \
  --compare-set scheduler.max_num_seqs=4 --compare-profile strict
contains "set and profile: name" "with scheduler.max_num_seqs=4, profile strict  num_mqa=0 num_mha=1  step 0"
not_contains "set and profile: no logits" "logits:"

# Refused: exit 2, the override named as written, nothing run.
check "null index_topk on GLM-5's class" 2 "$mlasim" run "$past" --compare-set model.index_topk=null
contains "null index_topk: where" "<--compare-set model.index_topk=null>:1:18: error: model.index_topk: GlmMoeDsaForCausalLM without index_topk"
check "unknown key" 2 "$mlasim" run "$past" --compare-set model.bogus=1
contains "unknown key: where" "<--compare-set model.bogus=1>:1:13: error: model.bogus: unknown key"
check "no '='" 2 "$mlasim" run "$past" --compare-set engine.gpu
check "bad enum" 2 "$mlasim" run "$past" --compare-set engine.sparse_mla_prefill=sometimes
contains "bad enum: values" "choose one of: vllm | force_mqa | dense_mha"
check "with --json" 2 "$mlasim" run "$past" --compare-set engine.sparse_mla_prefill=dense_mha --json "$scratch/x.json"
contains "with --json" "they write no --json, --jsonl, --logits-dir or --trace-out"
[[ -e $scratch/x.json ]] && { echo "FAIL a refused --compare-set wrote a file"; fail=1; }
exit $fail
