// The engine enums a scenario names and the backend selection reads (names: config/scenario_enums.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mlasim {

enum class EngineProfile { kVllm2025Early, kVllm011, kVllm012, kVllm3Region, kVllm033, kStrict, kSglang };
// vLLM 0.33.0's MLA backends (v1/attention/backends/registry.py AttentionBackendEnum); the first
// six are dense backends every profile knows, the rest vLLM 0.33's sparse and newer ones
// (config/mla_backends.h holds each one's facts).
enum class AttentionBackendKind {
  kFlashMla, kFlashAttnMla, kFlashInferMla, kCutlassMla, kTritonMla, kRocmAiterMla,
  kTokenspeedMla, kRocmAiterTritonMla,
  kFlashMlaSparse, kFlashInferMlaSparse, kFlashInferMlaSparseSm90, kFlashInferMlaSparseSm120,
  kFlashAttnMlaSparse, kFlashAttnMlaSparseFa4, kRocmAiterMlaSparse,
  // DeepSeek-V4's own sparse MLA backends, which its attention class names
  // (vllm/models/deepseek_v4/sparse_mla.py ~292, nvidia/flashinfer_sparse.py ~104).
  kFlashMlaSparseDsv4, kFlashInferMlaSparseDsv4,
};
enum class QueryLenSupport { kSingle, kUniform, kVarlen };
// vLLM's model runner (VLLM_USE_V2_MODEL_RUNNER): V1 keeps a persistent batch and reorders it
// (docs/spec/scheduler.md §8, routing.md §1); V2 (vLLM 0.33's default on CUDA with Triton,
// config/vllm.py ~731-767) sorts each step's rows afresh (routing.md §1, "Model runner V2").
enum class ModelRunner { kV1, kV2 };
// Which sparse-MLA prefill rows take dense MHA (docs/spec/routing.md §4): vLLM 0.33's rule (those
// whose longest sequence fits index_topk, _use_dense_mha_prefill, sparse_mla_attention.py
// ~136-144); none (attention_config.sparse_mla_force_mqa, config/attention.py ~135); or, as a
// build without that bound would, every prefill row, attending to every causal position.
enum class SparseMlaPrefill { kVllm, kForceMqa, kDenseMha };

const char* to_string(EngineProfile p);
const char* to_string(AttentionBackendKind b);
const char* to_string(QueryLenSupport s);
const char* to_string(ModelRunner r);
std::optional<EngineProfile> parse_engine_profile(const std::string& s);
std::optional<AttentionBackendKind> parse_attention_backend(const std::string& s);
std::vector<std::string> attention_backend_names();
std::optional<QueryLenSupport> parse_query_len_support(const std::string& s);
std::optional<ModelRunner> parse_model_runner(const std::string& s);
const char* to_string(SparseMlaPrefill p);
std::optional<SparseMlaPrefill> parse_sparse_mla_prefill(const std::string& s);

}  // namespace mlasim
