#!/usr/bin/env bash
# `mlasim deploy` as a user meets it: the report's chain from the shipped configs (sparse GLM-5 on
# H200; its GGUF-converted dense form on B200 and H200), vLLM's refusals (exit 2, nothing written),
# --json's keys, and a `-o` scenario that `golden update`, `check` and `run --explain` take as is.
set -u
mlasim=$1
root=$2
configs=$root/scenarios/hf_configs
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

check "help lists deploy" 0 "$mlasim" --help
contains "help lists deploy" "deploy"
check "help deploy" 0 "$mlasim" deploy --help
contains "help deploy" "Example: mlasim deploy --hf-config"

check "glm-5 on h200" 0 "$mlasim" deploy --hf-config "$configs/glm-5.json" --gpu h200 --tp 8
contains "glm-5 on h200" "sparse: yes: index_topk = 2048"
contains "glm-5 on h200" "  FLASH_ATTN_MLA: invalid: sparse not supported"
contains "glm-5 on h200" "backend: FLASH_ATTN_MLA_SPARSE"
contains "glm-5 on h200" "reorder_batch_threshold 256"
contains "glm-5 on h200" "block size: 64 (auto"
contains "glm-5 on h200" "model runner: v2"
contains "glm-5 on h200" "lone 5-token prompt                  step 1: q=5 nct=0 → decode path (MQA, absorbed), a fresh prefill on the decode path  num_mqa=5 num_mha=0"

check "gguf dense on b200" 0 "$mlasim" deploy --hf-config "$configs/glm-5-gguf-as-deepseek-v3.json" --gpu b200 --tp 8
contains "gguf dense on b200" "sparse: no"
contains "gguf dense on b200" "backend: FLASHINFER_MLA"
contains "gguf dense on b200" "lone 1-token prompt                  step 0: q=1 nct=0 → decode path (MQA, absorbed), a fresh prefill on the decode path  num_mqa=1 num_mha=0"
contains "gguf dense on b200" "lone 5-token prompt                  step 1: q=5 nct=0 → prefill path (MHA)  num_mqa=0 num_mha=5"
check "gguf dense on h200" 0 "$mlasim" deploy --hf-config "$configs/glm-5-gguf-as-deepseek-v3.json" --gpu h200 --tp 8
contains "gguf dense on h200" "backend: FLASH_ATTN_MLA (flashattn_mla.py"
contains "gguf dense on h200" "num_mqa=5 num_mha=0"

# vLLM's refusals: exit 2 with vLLM's reason, and no output written.
check "v3.2 without index_topk" 2 "$mlasim" deploy --hf-config "$root/tests/data/hf_configs/deepseek-v3.2-no-index-topk.json" \
  --gpu h200 --json "$scratch/refused.json" -o "$scratch/refused.yaml"
contains "v3.2 without index_topk" "\`assert is_v32\`"
check "glm-5 without index_topk" 0 "$mlasim" deploy --hf-config "$root/tests/data/hf_configs/glm-5-no-index-topk.json" --gpu b200
contains "glm-5 without index_topk" "sparse: yes: index_topk = 2048"  # GlmMoeDsaConfig's default
check "glm-4.7-flash on tp 8" 2 "$mlasim" deploy --hf-config "$configs/glm4-moe-lite-defaults.json" --gpu h200 --tp 8
contains "glm-4.7-flash on tp 8" "mlasim deploy: error: --tp: vLLM 0.33 refuses it: Total number of attention heads (20) must be divisible by tensor parallel size (8)."
check "kimi-k2.5 mtp" 2 "$mlasim" deploy --hf-config "$root/tests/data/hf_configs/kimi-k25-mtp.json" --spec-tokens 1
contains "kimi-k2.5 mtp" "mlasim deploy: error: --spec-tokens: vLLM 0.33 refuses it: Unsupported speculative method: 'mtp'"
check "glm-4.7-flash mtp" 0 "$mlasim" deploy --hf-config "$root/tests/data/hf_configs/glm4-moe-lite-mtp.json" --spec-tokens 1
contains "glm-4.7-flash mtp" "speculative: MTP, k = 1, drafted by Glm4MoeLiteMTPModel (model_type glm4_moe_lite_mtp"
check "longcat-flash" 0 "$mlasim" deploy --hf-config "$configs/longcat-flash-defaults.json" --gpu b200 --tp 8
contains "longcat-flash" "LongcatFlashForCausalLM, model_type longcat_flash; MLA (head_size 576 = kv_lora_rank 512 + qk_rope_head_dim 64), 2 MLA modules per decoder layer"
check "kimi-k2.5" 0 "$mlasim" deploy --hf-config "$configs/kimi-k25-defaults.json" --gpu h200 --tp 8
contains "kimi-k2.5" "KimiK25ForConditionalGeneration, model_type kimi_k25 (text_config: deepseek_v3)"
contains "kimi-k2.5" "max_model_len: 4096 (derived as vLLM does from the config: max_position_embeddings=4096)"
check "sparse on a100" 2 "$mlasim" deploy --hf-config "$configs/glm-5.json" --gpu a100 --tp 8 --json "$scratch/refused.json"
contains "sparse on a100" "No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576"
check "explicit backend refused" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --gpu h200 --attention-backend cutlass-mla
contains "explicit backend refused" "Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: ['compute capability not supported']"
[[ -e "$scratch/refused.json" || -e "$scratch/refused.yaml" ]] && { echo "FAIL refusals wrote an output"; fail=1; }
check "block size precludes flashmla" 0 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --gpu h200 --kv-cache-dtype fp8 --block-size 16
contains "block size precludes flashmla" "warning: --block-size 16 precluded higher-priority backend(s) FLASHMLA. Using TRITON_MLA instead"
check "unknown gpu" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --gpu h300
check "tp out of range" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --tp 9
check "missing config" 2 "$mlasim" deploy --hf-config "$scratch/none.json"
contains "missing config" "cannot read model config"
check "json dir missing" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --json "$scratch/no/dir.json"

# --json holds the chain as data.
check "json" 0 "$mlasim" deploy --hf-config "$configs/kimi-k2.json" --gpu b200 --kv-cache-dtype fp8 --tp 8 --spec-tokens 2 \
  --json "$scratch/kimi.json"
for key in architecture use_mla sparse candidates backend block_size kernel_block_size reorder_threshold \
  query_len_support model_runner probes; do
  grep -q "\"$key\":" "$scratch/kimi.json" || { echo "FAIL json: no key $key"; fail=1; }
done
grep -q '"backend": "FLASHINFER_MLA"' "$scratch/kimi.json" || { echo "FAIL json: backend"; fail=1; }
grep -q '"reorder_threshold": 3' "$scratch/kimi.json" || { echo "FAIL json: threshold 1 + k"; fail=1; }
grep -q '"name": "short fresh prompt (1 + k tokens)"' "$scratch/kimi.json" || { echo "FAIL json: the k > 0 probe"; fail=1; }

# -o: a scenario the other commands take as it is, its probes as expectations.
mkdir "$scratch/mine"
check "deploy -o" 0 "$mlasim" deploy --hf-config "$configs/glm-5-gguf-as-deepseek-v3.json" --gpu b200 --tp 8 -o "$scratch/mine/b200.yaml"
contains "deploy -o" "wrote $scratch/mine/b200.yaml"
grep -q "num_mqa_tokens: 0, num_mha_tokens: 5" "$scratch/mine/b200.yaml" || { echo "FAIL -o: no probe expectation"; fail=1; }
check "golden update of -o" 0 "$mlasim" golden update "$scratch/mine/b200.yaml" --golden-dir "$scratch/golden"
check "check of -o" 0 "$mlasim" check "$scratch/mine/b200.yaml" --golden-dir "$scratch/golden"
contains "check of -o" "1 passed, 0 failed"
check "run --explain" 0 "$mlasim" run "$root/scenarios/deploy/glm5_dsa_h200_tp8.yaml" --dry-run --explain
contains "run --explain" "deployment chain (vLLM 0.33.0):"
contains "run --explain" "model: "
contains "run --explain" "sparse: yes: index_topk = 2048"
contains "run --explain" "  FLASHMLA_SPARSE: valid"
contains "run --explain" "backend: FLASH_ATTN_MLA_SPARSE"
contains "run --explain" "block size: 64"
contains "run --explain" "model runner: v2"
check "check --explain" 0 "$mlasim" check "$root/scenarios/deploy/glm5_gguf_as_deepseek_v3_b200_tp8.yaml" \
  --golden-dir "$root/golden" --dry-run --explain
contains "check --explain" "PASS glm5_gguf_as_deepseek_v3_b200_tp8"
contains "check --explain" "    sparse: no"
contains "check --explain" "    backend: FLASHINFER_MLA"
contains "check --explain" "    paths: rows with q <= 1 at the front of the batch are decodes"
# Outputs onto inputs or onto each other: exit 2 before anything is written.
cp "$configs/deepseek-v3.json" "$scratch/cfg.json"
ln -s cfg.json "$scratch/link.json"
printf 'old\n' >"$scratch/x.json"
unchanged() {  # unchanged NAME FILE...: each FILE as it was
  local f
  shift
  for f in "$@"; do
    case $f in
      */cfg.json) cmp -s "$f" "$configs/deepseek-v3.json" || { echo "FAIL $name: $f was replaced"; fail=1; } ;;
      *) [[ $(cat "$f") == old ]] || { echo "FAIL $name: $f was replaced"; fail=1; } ;;
    esac
  done
}
for flag in -o --json; do
  name="deploy $flag over the config"
  check "$name" 2 "$mlasim" deploy --hf-config "$scratch/cfg.json" $flag "$scratch/cfg.json"
  contains "$name" "$scratch/cfg.json: error: $flag names the model's config (--hf-config), which this command reads"
  unchanged "$name" "$scratch/cfg.json"
  name="deploy $flag over the config through a link"
  check "$name" 2 "$mlasim" deploy --hf-config "$scratch/link.json" $flag "$scratch/cfg.json"
  contains "$name" "$flag names the model's config (--hf-config)"
  check "$name" 2 "$mlasim" deploy --hf-config "$scratch/cfg.json" $flag "$scratch/link.json"
  contains "$name" "$flag names the model's config (--hf-config)"
  unchanged "$name" "$scratch/cfg.json"
  [[ -L $scratch/link.json ]] || { echo "FAIL $name: the link was replaced"; fail=1; }
done
name="deploy --json X -o X"
check "$name" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --json "$scratch/x.json" -o "$scratch/x.json"
contains "$name" "$scratch/x.json: error: --json and -o name the same file: one output would replace the other"
unchanged "$name" "$scratch/x.json"
name="releases --json R --markdown R"
check "$name" 2 "$mlasim" releases --json "$scratch/x.json" --markdown "$scratch/x.json"
contains "$name" "--json and --markdown name the same file"
unchanged "$name" "$scratch/x.json"
name="matrix --json X --markdown X"
check "$name" 2 "$mlasim" matrix --runs 1 --json "$scratch/x.json" --markdown "$scratch/x.json"
contains "$name" "--json and --markdown name the same file"
unchanged "$name" "$scratch/x.json"
for flag in -o --json; do
  check "deploy $flag ''" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" $flag ''
  contains "deploy $flag ''" "$flag: an empty value: give one, or leave the option out"
done
check "releases --json ''" 2 "$mlasim" releases --json ''
contains "releases --json ''" "--json: an empty value: give one, or leave the option out"

# --json and -o are one output set: a -o that cannot be written (a read-only file system) is exit 3
# and leaves the --json file as it was.
mnt="$scratch/ro"
mkdir -p "$mnt"
if mount -t tmpfs -o ro,size=64k tmpfs "$mnt" 2>/dev/null; then
  name="deploy -o read-only"
  check "$name" 3 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --json "$scratch/x.json" -o "$mnt/d.yaml"
  contains "$name" "Read-only file system"
  unchanged "$name" "$scratch/x.json"
  ls -A "$scratch" | grep -q '\.tmp\.' && { echo "FAIL $name: a temporary was left: $(ls -A "$scratch")"; fail=1; }
  umount "$mnt"
else
  echo "note: cannot mount a read-only tmpfs here (not root, or no CAP_SYS_ADMIN): the read-only -o case is not run"
fi
# Both written together when both can be.
check "deploy --json and -o" 0 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --json "$scratch/x.json" -o "$scratch/d.yaml"
grep -q '"format": "mlasim-deploy"' "$scratch/x.json" || { echo "FAIL --json not written"; fail=1; }
grep -q 'num_mqa_tokens' "$scratch/d.yaml" || { echo "FAIL -o not written"; fail=1; }

# Messages name flags, never the scenario deploy evaluates in memory.
check "tp 3" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --tp 3
contains "tp 3" "mlasim deploy: error: --tp: vLLM 0.33 refuses it: Total number of attention heads (128) must be divisible by tensor parallel size (3)."
contains "tp 3" "pick a divisor of the config's num_attention_heads"
not_contains "tp 3" "<mlasim deploy>"
check "block size 7" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --block-size 7
contains "block size 7" "mlasim deploy: error: vLLM 0.33 refuses this deployment: No valid attention backend found"
contains "block size 7" "hint: choose another --attention-backend, --gpu, --kv-cache-dtype or --block-size"
not_contains "block size 7" ".yaml"
check "explicit backend refused: flags" 2 "$mlasim" deploy --hf-config "$configs/deepseek-v3.json" --gpu h200 --attention-backend cutlass-mla
contains "explicit backend refused: flags" "mlasim deploy: error: --attention-backend: vLLM 0.33 refuses this deployment"
exit $fail
