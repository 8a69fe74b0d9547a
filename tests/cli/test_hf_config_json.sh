#!/usr/bin/env bash
# A model's config.json as `mlasim deploy` and `mlasim run` (model.hf_config) read it: strict JSON as
# vLLM's json.loads reads it (exit 2 naming file:line:col and key for what is not JSON), a key written
# twice keeps its last value with a note, a wrong JSON type for a key vLLM reads is exit 2, a FIFO is
# refused without blocking, and max_model_len is vLLM's, derived from the config (--max-model-len).
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
make_scratch
v3=$root/scenarios/hf_configs/deepseek-v3.json
cfg=$scratch/cfg.json

# A small DeepSeek-V3-style config with max_position_embeddings 2048 and no RoPE scaling.
small() {  # small [EXTRA_MEMBER_LINE]: writes $cfg
  {
    echo '{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",'
    [[ $# -gt 0 ]] && echo "$1"
    echo ' "vocab_size": 1000, "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,'
    echo ' "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,'
    echo ' "q_lora_rank": null, "intermediate_size": 512, "max_position_embeddings": 2048, "eos_token_id": 1}'
  } >"$cfg"
}
deploy_refused() {  # deploy_refused NAME MESSAGE: deploy of $cfg is exit 2 with MESSAGE, nothing written
  check "$1" 2 "$mlasim" deploy --hf-config "$cfg" --json "$scratch/out.json" -o "$scratch/out.yaml"
  contains "$1" "$2"
  [[ -e $scratch/out.json || -e $scratch/out.yaml ]] && { echo "FAIL $1: an output was written"; fail=1; }
}

# The small config deploys; max_model_len is the config's 2048 (deploy's own 4096 is gone).
small
check "small config" 0 "$mlasim" deploy --hf-config "$cfg"
contains "small config" "max_model_len: 2048 (derived as vLLM does from the config: max_position_embeddings=2048)"
check "deepseek-v3: yarn" 0 "$mlasim" deploy --hf-config "$v3"
contains "deepseek-v3: yarn" "max_model_len: 163840 (derived as vLLM does from the config: max_position_embeddings=163840)"
check "--max-model-len shorter" 0 "$mlasim" deploy --hf-config "$cfg" --max-model-len 1024 --json "$scratch/len.json"
contains "--max-model-len shorter" "max_model_len: 1024 (--max-model-len)"
grep -q '"max_model_len": 1024' "$scratch/len.json" || { echo "FAIL --json lacks max_model_len 1024"; fail=1; }
rm -f "$scratch/len.json"
check "--max-model-len longer" 2 "$mlasim" deploy --hf-config "$cfg" --max-model-len 4096 --json "$scratch/len.json"
contains "--max-model-len longer" "mlasim deploy: error: --max-model-len: vLLM 0.33 refuses it: User-specified max_model_len (4096) is greater than the derived max_model_len (max_position_embeddings=2048.0 or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error."
contains "--max-model-len longer" "hint: give --max-model-len 2048 or less"
[[ -e $scratch/len.json ]] && { echo "FAIL --max-model-len longer wrote --json"; fail=1; }
check "VLLM_ALLOW_LONG_MAX_MODEL_LEN" 0 env VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "$mlasim" deploy --hf-config "$cfg" --max-model-len 4096
contains "VLLM_ALLOW_LONG_MAX_MODEL_LEN" "warning: --max-model-len: User-specified max_model_len (4096) is greater than the derived"
contains "VLLM_ALLOW_LONG_MAX_MODEL_LEN" "max_model_len: 4096 (--max-model-len)"
check "--max-model-len 1" 2 "$mlasim" deploy --hf-config "$cfg" --max-model-len 1
contains "--max-model-len 1" "--max-model-len: Value 1 not in range 2 to 16777216"
check "--max-model-len 3" 2 "$mlasim" deploy --hf-config "$cfg" --max-model-len 3
contains "--max-model-len 3" "mlasim deploy: error: --max-model-len: the misrouting report's probes do not fit: prompt of 5 tokens does not fit max_model_len 3"
small ' "model_max_length": 8192,'
check "model_max_length" 0 "$mlasim" deploy --hf-config "$cfg"
contains "model_max_length" "max_model_len: 8192 (derived as vLLM does from the config: model_max_length=8192)"

# What is not JSON: exit 2 at the file, line and column (CR-only and CRLF line ends are JSON).
tr '\n' '\r' <"$v3" >"$cfg"
check "CR-only line ends" 0 "$mlasim" deploy --hf-config "$cfg"
sed 's/$/\r/' "$v3" >"$cfg"
check "CRLF line ends" 0 "$mlasim" deploy --hf-config "$cfg"
sed 's/"vocab_size": 129280/"vocab_size": 129280,/' "$v3" >"$cfg"
deploy_refused "trailing comma" "$cfg:67:1: error: JSON syntax error: a trailing comma before '}'"
sed '1a\  // a comment' "$v3" >"$cfg"
deploy_refused "comment" "$cfg:2:3: error: JSON syntax error: a comment"
sed 's/"hidden_act"/hidden_act/' "$v3" >"$cfg"
deploy_refused "unquoted key" "$cfg:16:3: error: JSON syntax error: an object key without quotes"
sed "s/\"silu\"/'silu'/" "$v3" >"$cfg"
deploy_refused "single quotes" "$cfg:16:17: error: hidden_act: JSON syntax error: a string in single quotes"
{ printf '\xef\xbb\xbf'; cat "$v3"; } >"$cfg"
deploy_refused "BOM" "$cfg:1:1: error: JSON syntax error: the text starts with a UTF-8 byte-order mark (EF BB BF)"
contains "BOM" "Unexpected UTF-8 BOM"
printf '\xff\xfe{\x00}\x00' >"$cfg"
deploy_refused "UTF-16" "$cfg:1:1: error: JSON syntax error: the text is UTF-16 or UTF-32, not UTF-8"
{ cat "$v3"; echo '{}'; } >"$cfg"
deploy_refused "second document" "$cfg:68:1: error: JSON syntax error: text after the JSON value (found '{')"
{ cat "$v3"; echo 'x'; } >"$cfg"
deploy_refused "text after the object" "$cfg:68:1: error: JSON syntax error: text after the JSON value (found 'x')"
printf 'architectures: [DeepseekV3ForCausalLM]\nmodel_type: deepseek_v3\n' >"$cfg"
deploy_refused "block YAML" "$cfg:1:1: error: JSON syntax error: expected a value, found 'a'"
sed 's/"vocab_size": 129280/"vocab_size": 0129280/' "$v3" >"$cfg"
deploy_refused "leading zero" "$cfg:66:17: error: vocab_size: JSON syntax error: a number must not have leading zeros"
sed 's/"e4m3"/"e4\\q3"/' "$v3" >"$cfg"
deploy_refused "bad escape" "$cfg:39:15: error: quantization_config.fmt: JSON syntax error: unknown escape \\q"

# A key written twice: the last value, as Python's json (vLLM's reader) takes it, with a note.
sed '4a\  "architectures": ["LlamaForCausalLM"],' "$v3" >"$cfg"
deploy_refused "duplicate architectures" "$cfg:5:21: error: architectures[0]: architecture LlamaForCausalLM does not use MLA"
contains "duplicate architectures" "\`architectures\` is written twice (line 2 and line 5): the last value is read"
contains "duplicate architectures" "note: $cfg:5:3: architectures: written twice (first at line 2, column 3); the last value is read, as vLLM's json.loads reads it"
sed '4a\  "torch_dtype": "float16",' "$v3" >"$cfg"
check "duplicate torch_dtype" 0 "$mlasim" deploy --hf-config "$cfg"
contains "duplicate torch_dtype" "note: $cfg:63:3: torch_dtype: written twice (first at line 5, column 3)"

# A wrong JSON type for a key vLLM reads: exit 2 naming it.
sed 's/"torch_dtype": "bfloat16"/"torch_dtype": 42/' "$v3" >"$cfg"
deploy_refused "torch_dtype 42" "$cfg:62:18: error: torch_dtype: expected a string, got a number (42)"
small ' "rope_scaling": ["yarn"],'
deploy_refused "rope_scaling a list" "$cfg:2:18: error: rope_scaling: expected an object, got a list"
small ' "quantization_config": "fp8",'
deploy_refused "quantization_config a string" "$cfg:2:25: error: quantization_config: expected an object, got a string"
small ' "rms_norm_eps": NaN,'
deploy_refused "NaN" "$cfg:2:18: error: rms_norm_eps: expected a finite number, got NaN"
small ' "rope_scaling": {"type": "yarn", "factor": 4, "beta_fast": 0, "beta_slow": 1},'
deploy_refused "beta_fast 0" "$cfg:2:61: error: rope_scaling.beta_fast: must be > 0: vLLM's YaRN divides by it"
small ' "rope_scaling": {"type": "yarn", "factor": 4, "beta_fast": 32, "beta_slow": -1},'
deploy_refused "beta_slow -1" "$cfg:2:78: error: rope_scaling.beta_slow: must be >= 0 (got -1)"
sed 's/"factor": 40,/"factor": 2147483647,/' "$v3" >"$cfg"
check "a YaRN factor leaves the length" 0 "$mlasim" deploy --hf-config "$cfg"
contains "a YaRN factor leaves the length" "max_model_len: 163840 (derived as vLLM does from the config: max_position_embeddings=163840)"
small ' "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "factor": 2147483647},'
deploy_refused "a derived max_model_len past 2^24" "mlasim deploy: error: --max-model-len: the max_model_len vLLM derives from the config (4398046509056.0, from max_position_embeddings and its RoPE scaling factor) is more than mlasim simulates (16777216)"
check "the same with --max-model-len" 0 "$mlasim" deploy --hf-config "$cfg" --max-model-len 2048
small ' "unread": NaN, "also_unread": -Infinity,'
check "NaN where vLLM does not read" 0 "$mlasim" deploy --hf-config "$cfg"

# A FIFO is not read (it would block): exit 2 at once.
mkfifo "$scratch/fifo.json"
check "FIFO" 2 timeout 20 "$mlasim" deploy --hf-config "$scratch/fifo.json"
contains "FIFO" "$scratch/fifo.json: error: model config is a FIFO, not a regular file"

# `run` reads model.hf_config the same way.
small
cat >"$scratch/s.yaml" <<'YAML'
version: 1
model: {hf_config: cfg.json, num_layers: 1, vocab_size: 256, intermediate_size: 64}
requests:
  - {id: a, prompt_len: 4, max_tokens: 2}
YAML
check "run: small config" 0 "$mlasim" run "$scratch/s.yaml" --dry-run
small ' "torch_dtype": 42,'
check "run: torch_dtype 42" 2 "$mlasim" run "$scratch/s.yaml" --dry-run
contains "run: torch_dtype 42" "$cfg:2:17: error: model.hf_config: torch_dtype: expected a string, got a number (42)"
small ' "vocab_size": 5,'
check "run: duplicate key" 0 "$mlasim" run "$scratch/s.yaml" --dry-run
contains "run: duplicate key" "note: $cfg:3:2: vocab_size: written twice (first at line 2, column 2)"
{ printf '\xef\xbb\xbf'; small; cat "$cfg"; } >"$scratch/bom.json" && mv "$scratch/bom.json" "$cfg"
check "run: BOM" 2 "$mlasim" run "$scratch/s.yaml" --dry-run
contains "run: BOM" "$cfg:1:1: error: model.hf_config: JSON syntax error: the text starts with a UTF-8 byte-order mark"
small
check "run --json onto the config" 2 "$mlasim" run "$scratch/s.yaml" --dry-run --json "$cfg"
contains "run --json onto the config" "--json names the model's config (model.hf_config)"
exit $fail
