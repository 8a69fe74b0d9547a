// Names of the scenario enums, as they appear in YAML and in reports.
#include <array>
#include <utility>

#include "config/scenario.h"

namespace mlasim {
namespace {

template <typename E, std::size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [value, name] : table)
    if (value == e) return name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_of(const std::array<std::pair<E, const char*>, N>& table, const std::string& s) {
  for (const auto& [value, name] : table)
    if (s == name) return value;
  return std::nullopt;
}

constexpr std::array<std::pair<SchedulingPolicy, const char*>, 2> kPolicies{{
    {SchedulingPolicy::kFcfs, "fcfs"}, {SchedulingPolicy::kPriority, "priority"}}};
constexpr std::array<std::pair<SpeculativeMethod, const char*>, 2> kSpecMethods{{
    {SpeculativeMethod::kMtp, "mtp"}, {SpeculativeMethod::kNgram, "ngram"}}};
constexpr std::array<std::pair<EngineProfile, const char*>, 7> kProfiles{{
    {EngineProfile::kVllm2025Early, "vllm-2025-early"},
    {EngineProfile::kVllm011, "vllm-0.11"},
    {EngineProfile::kVllm012, "vllm-0.12"},
    {EngineProfile::kVllm3Region, "vllm-3region"},
    {EngineProfile::kVllm033, "vllm-0.33"},
    {EngineProfile::kStrict, "strict"},
    {EngineProfile::kSglang, "sglang"}}};
constexpr std::array<std::pair<AttentionBackendKind, const char*>, 17> kBackends{{
    {AttentionBackendKind::kFlashMla, "flashmla"},
    {AttentionBackendKind::kFlashAttnMla, "flashattn-mla"},
    {AttentionBackendKind::kFlashInferMla, "flashinfer-mla"},
    {AttentionBackendKind::kCutlassMla, "cutlass-mla"},
    {AttentionBackendKind::kTritonMla, "triton-mla"},
    {AttentionBackendKind::kRocmAiterMla, "rocm-aiter-mla"},
    {AttentionBackendKind::kTokenspeedMla, "tokenspeed-mla"},
    {AttentionBackendKind::kRocmAiterTritonMla, "rocm-aiter-triton-mla"},
    {AttentionBackendKind::kFlashMlaSparse, "flashmla-sparse"},
    {AttentionBackendKind::kFlashInferMlaSparse, "flashinfer-mla-sparse"},
    {AttentionBackendKind::kFlashInferMlaSparseSm90, "flashinfer-mla-sparse-sm90"},
    {AttentionBackendKind::kFlashInferMlaSparseSm120, "flashinfer-mla-sparse-sm120"},
    {AttentionBackendKind::kFlashAttnMlaSparse, "flashattn-mla-sparse"},
    {AttentionBackendKind::kFlashAttnMlaSparseFa4, "flashattn-mla-sparse-fa4"},
    {AttentionBackendKind::kRocmAiterMlaSparse, "rocm-aiter-mla-sparse"},
    {AttentionBackendKind::kFlashMlaSparseDsv4, "flashmla-sparse-dsv4"},
    {AttentionBackendKind::kFlashInferMlaSparseDsv4, "flashinfer-mla-sparse-dsv4"}}};
constexpr std::array<std::pair<QueryLenSupport, const char*>, 3> kSupports{{
    {QueryLenSupport::kSingle, "single"}, {QueryLenSupport::kUniform, "uniform"}, {QueryLenSupport::kVarlen, "varlen"}}};
constexpr std::array<std::pair<ModelRunner, const char*>, 2> kRunners{{
    {ModelRunner::kV1, "v1"}, {ModelRunner::kV2, "v2"}}};
constexpr std::array<std::pair<SparseMlaPrefill, const char*>, 3> kSparsePrefills{{
    {SparseMlaPrefill::kVllm, "vllm"}, {SparseMlaPrefill::kForceMqa, "force_mqa"}, {SparseMlaPrefill::kDenseMha, "dense_mha"}}};
constexpr std::array<std::pair<ModelDtype, const char*>, 2> kDtypes{{
    {ModelDtype::kFp32, "fp32"}, {ModelDtype::kBf16, "bf16"}}};

}  // namespace

const char* to_string(SchedulingPolicy p) { return name_of(kPolicies, p); }
const char* to_string(SpeculativeMethod m) { return name_of(kSpecMethods, m); }
const char* to_string(EngineProfile p) { return name_of(kProfiles, p); }
const char* to_string(AttentionBackendKind b) { return name_of(kBackends, b); }
const char* to_string(QueryLenSupport s) { return name_of(kSupports, s); }
const char* to_string(ModelDtype d) { return name_of(kDtypes, d); }
const char* to_string(ModelRunner r) { return name_of(kRunners, r); }
std::optional<SchedulingPolicy> parse_policy(const std::string& s) { return parse_of(kPolicies, s); }
std::optional<SpeculativeMethod> parse_speculative_method(const std::string& s) { return parse_of(kSpecMethods, s); }
std::optional<EngineProfile> parse_engine_profile(const std::string& s) {
  if (s == "vllm-current") return EngineProfile::kVllm033;  // the alias of the newest modelled release
  return parse_of(kProfiles, s);
}
std::optional<AttentionBackendKind> parse_attention_backend(const std::string& s) { return parse_of(kBackends, s); }
std::vector<std::string> attention_backend_names() {
  std::vector<std::string> out;
  for (const auto& [value, name] : kBackends) out.emplace_back(name);
  return out;
}
std::optional<QueryLenSupport> parse_query_len_support(const std::string& s) { return parse_of(kSupports, s); }
std::optional<ModelDtype> parse_model_dtype(const std::string& s) { return parse_of(kDtypes, s); }
std::optional<ModelRunner> parse_model_runner(const std::string& s) { return parse_of(kRunners, s); }
const char* to_string(SparseMlaPrefill p) { return name_of(kSparsePrefills, p); }
std::optional<SparseMlaPrefill> parse_sparse_mla_prefill(const std::string& s) { return parse_of(kSparsePrefills, s); }

}  // namespace mlasim
