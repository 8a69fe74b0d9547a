// Reading a Hugging Face config.json of an MLA model as vLLM 0.33.0's ModelConfig reads it
// (transformers_utils/model_arch_config_convertor.py, model_executor/models/deepseek_v2.py), into
// the dimensions mlasim runs and the facts the backend selection needs.
//
// The file is read as vLLM reads it (transformers: open(..., encoding="utf-8") then Python's
// json.loads), with a strict RFC 8259 parser (base/json_document.h): UTF-8 without a byte-order
// mark (json.loads refuses one), one JSON object and nothing after it, no comments, trailing commas,
// single quotes or unquoted keys; line ends LF, CRLF or CR. Python's json also reads NaN, Infinity
// and -Infinity, and so does this reader; a key mlasim reads must hold a finite number. A key
// written twice keeps its last value, as json.loads does, with a note naming both places. A key
// vLLM reads that holds the wrong JSON type (torch_dtype 42, rope_scaling a list,
// quantization_config a string) is an error. Every error names the file, line, column and key.
// Differences from json.loads, each refused here where Python reads on: a \u escape of a lone
// surrogate, and arrays or objects nested deeper than 64 levels; no config.json holds either.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "base/status.h"

namespace mlasim {

// Architectures vLLM 0.33 serves with one MLA KV cache group that mlasim reads
// (model_executor/models/registry.py ~78-162, ~487): DeepseekV2ForCausalLM, DeepseekV3ForCausalLM
// (DeepSeek-V3/R1, Kimi-K2), DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM, AXK1ForCausalLM,
// Glm4MoeLiteForCausalLM (GLM-4.7-Flash), LongcatFlashForCausalLM and LongcatFlashNgramForCausalLM,
// KimiK25ForConditionalGeneration (Kimi-K2.5: its text_config). scenario/hf_families.h lists the
// model_types, with the families mlasim does not read and why.
std::vector<std::string> hf_mla_architectures();

// vLLM's max_model_len as it derives it from the text model's config when --max-model-len is not
// given (vllm/config/model.py ~2545-2640, _get_and_verify_max_len on hf_text_config): the smallest
// of max_position_embeddings (its config class's default when absent), n_positions, max_seq_len,
// seq_length, model_max_length, max_target_positions, max_sequence_length, max_seq_length, seq_len
// (model_max_length, when set, replaces it); then the RoPE factor of every type but su, longrope,
// llama3 and the YaRN variants (their max_position_embeddings is already scaled).
struct HfDerivedMaxLen {
  double derived = 2048;
  std::string key;                            // the key it came from
  std::string shown;                          // `derived` as vLLM's message prints it ("163840.0")
  std::optional<double> model_max_length;     // the config's model_max_length
  std::string model_max_length_shown = "None";
};

// What reading the config found besides the model.
struct HfConfigInfo {
  HfDerivedMaxLen max_len;
  // "FILE:LINE:COL: KEY: ..." for each key written twice (the last value is read).
  std::vector<std::string> notes;
};

// Fills `out` (every dimension, RoPE/YaRN, vocab, layers, index_topk, eos, torch_dtype,
// quantization, the text model's model_type, MLA modules per layer, MTP layers, the derived
// max_model_len) from the config at `path` (its text_config for Kimi-K2.5), and `info` when given
// (its notes even when the config is refused); on success the duplicate-key notes also go to
// out.hf_config_notes. Errors: not a regular file, unreadable, not UTF-8 or not JSON, a missing MLA
// key or one of the wrong type, an architecture that is not MLA or not known, a model_type mlasim
// does not read (scenario/hf_families.h: a drafter's or one without a config class, refused with
// transformers' message as vLLM refuses it; a hybrid; not MLA), and what vLLM 0.33 refuses when it
// loads the model (a DeepseekV32 config without index_topk).
Status read_hf_config(const std::string& path, ModelConfig& out, HfConfigInfo* info = nullptr);

}  // namespace mlasim
