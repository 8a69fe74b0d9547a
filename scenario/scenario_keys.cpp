// The table of scenario keys (scenarios/README.md documents each row; tests/scenario/test_scenario_keys.cpp
// holds the two together).
#include "scenario/scenario_keys.h"

#include <optional>
#include <type_traits>

#include "sim/scheduler.h"
#include "sim/scheduler_rules.h"

namespace mlasim {
namespace {

// The member a row sets, typed as the row's KeyType expects (checked at compile time).
#define MLASIM_KEY_FIELD(T, member)                                             \
  [](Scenario& s) -> void* {                                                    \
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(s.member)>, T>); \
    return &s.member;                                                           \
  }

template <class E>
bool assign(std::optional<E> parsed, E& field) {
  if (parsed) field = *parsed;
  return parsed.has_value();
}

// `auto` leaves an auto-resolved enum to the deployment; a name sets it and records it as given.
template <class E>
bool assign_given(const std::string& text, std::optional<E> parsed, E& field, std::optional<E>& given) {
  if (text == "auto") return true;
  if (parsed) field = *parsed, given = *parsed;
  return parsed.has_value();
}

bool vllm033(EngineProfile p) { return p == EngineProfile::kVllm033 || p == EngineProfile::kStrict; }

bool always(const Scenario&) { return true; }

void mark_block_size_given(const KeyRead& k) { k.scenario.scheduler.block_size_given = true; }

// Backends after rocm-aiter-mla are vLLM 0.33's.
void check_backend_profile(const KeyRead& k) {
  const EngineConfig& e = k.scenario.engine;
  if (!e.attention_backend_given || vllm033(e.profile) ||
      static_cast<int>(e.attention_backend) <= static_cast<int>(AttentionBackendKind::kRocmAiterMla))
    return;
  k.reader.fail(k.node, k.path,
                std::string("backend ") + to_string(e.attention_backend) + " is vLLM 0.33's; profile " +
                    to_string(e.profile) + " predates it",
                "use profile vllm-0.33 (or strict), or one of flashmla | flashattn-mla | flashinfer-mla | cutlass-mla | "
                "triton-mla | rocm-aiter-mla");
}

void check_runner_profile(const KeyRead& k) {
  const EngineConfig& e = k.scenario.engine;
  if (e.model_runner_given && e.model_runner == ModelRunner::kV2 && !vllm033(e.profile))
    k.reader.fail(k.node, k.path,
                  std::string("model runner v2 is vLLM 0.33's; profile ") + to_string(e.profile) + " has only v1",
                  "use profile vllm-0.33 or strict with model_runner v2");
}

void check_timing_cap(const KeyRead& k) {
  if (*static_cast<double*>(k.key.field(k.scenario)) > k.key.max)
    k.reader.fail(k.node, k.path, "more than 1e9 microseconds",
                  "timing terms are microseconds per step, per token or per request");
}

constexpr unsigned kWTP = kEchoWriter | kEchoResolvedTrace | kEchoPrinter;
constexpr double k2p16 = 1 << 16, k2p24 = 1 << 24;

using T = KeyType;
constexpr unsigned kWT = kEchoWriter | kEchoResolvedTrace;

// Sections in the scenario's order; keys in each section's written order.
const ScenarioKey kKeys[] = {
      {.section = "scheduler", .name = "max_num_batched_tokens", .type = T::kInt, .min = 1, .max = k2p24,
       .type_doc = "int in 1..2^24", .default_doc = "2048 (vLLM)", .doc = "token budget per step", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(int, scheduler.max_num_batched_tokens), .fuzz_knob = "budgets"},
      {.section = "scheduler", .name = "max_num_seqs", .type = T::kInt, .min = 1, .max = k2p16,
       .type_doc = "int in 1..2^16", .default_doc = "128 (vLLM)", .doc = "cap on running requests when admitting",
       .echo = kWTP, .field = MLASIM_KEY_FIELD(int, scheduler.max_num_seqs), .fuzz_knob = "budgets"},
      {.section = "scheduler", .name = "max_model_len", .type = T::kInt, .min = 2, .max = k2p24,
       .type_doc = "int in 2..2^24", .default_doc = "the model's max_position_embeddings (vLLM)",
       .doc = "longest sequence", .echo = kWTP, .field = MLASIM_KEY_FIELD(int, scheduler.max_model_len),
       // Written unless loading would give it back: the length vLLM derives from model.hf_config
       // (scenario_loader.cpp resolve_max_model_len), else max_position_embeddings.
       .written = [](const Scenario& s) {
         const double derived = s.model.hf_derived_max_model_len;
         return s.scheduler.max_model_len != (derived > 0 ? static_cast<int>(derived) : s.model.max_position_embeddings);
       },
       .fuzz_knob = "budgets"},
      {.section = "scheduler", .name = "enable_chunked_prefill", .type = T::kBool, .type_doc = "bool",
       .default_doc = "true (vLLM)", .doc = "split prompts across steps", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(bool, scheduler.enable_chunked_prefill), .printer_label = "chunked_prefill",
       .fuzz_knob = "chunked"},
      {.section = "scheduler", .name = "long_prefill_token_threshold", .type = T::kInt, .min = 0, .max = k2p24,
       .type_doc = "int in 0..max_model_len", .default_doc = "0 = off (vLLM)",
       .doc = "per-request cap on tokens per step", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(int, scheduler.long_prefill_token_threshold), .fuzz_knob = "thresholds"},
      // Always written: left out, vLLM 0.33's auto choice for the backend would replace it.
      {.section = "scheduler", .name = "block_size", .type = T::kInt, .min = 1, .max = k2p16,
       .type_doc = "int in 1..2^16",
       .default_doc = "vLLM 0.33's auto choice for the backend (16 for FlashAttention-MLA and Triton, 32 FlashInfer, 64 "
                      "FlashMLA and the sparse backends, 128 CUTLASS); 16 for the older profiles",
       .doc = "tokens per KV block", .echo = kWTP, .field = MLASIM_KEY_FIELD(int, scheduler.block_size),
       .written = always, .check = mark_block_size_given, .fuzz_knob = "blocks"},
      // mlasim keeps per-block state for the whole pool; 2^24 blocks (2^28 tokens at B = 16) is far
      // past any real GPU's KV cache and keeps a simulation within memory.
      {.section = "scheduler", .name = "num_gpu_blocks", .type = T::kInt, .min = 2, .max = k2p24,
       .type_doc = "int in 2..2^24",
       .default_doc = "8192 (mlasim; vLLM profiles memory), or with vLLM 0.33's rules cdiv(max_model_len, block_size) "
                      "+ 1 when that is more",
       .doc = "KV blocks", .echo = kWTP, .field = MLASIM_KEY_FIELD(int, scheduler.num_gpu_blocks),
       .written = [](const Scenario& s) { return s.scheduler.num_gpu_blocks != default_num_gpu_blocks(s.scheduler); },
       .fuzz_knob = "blocks"},
      {.section = "scheduler", .name = "enable_prefix_caching", .type = T::kBool, .type_doc = "bool",
       .default_doc = "true (vLLM)", .doc = "reuse full blocks by chained hash", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(bool, scheduler.enable_prefix_caching), .printer_label = "prefix_caching",
       .fuzz_knob = "prefix-caching"},
      {.section = "scheduler", .name = "policy", .type = T::kEnum, .type_doc = "fcfs \\| priority",
       .default_doc = "fcfs (vLLM)", .doc = "priority: ordered by (priority, arrival), lower first", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(SchedulingPolicy, scheduler.policy),
       .enumeration = {"scheduling policy", [] { return std::vector<std::string>{"fcfs", "priority"}; },
                       [](const Scenario& s) { return to_string(s.scheduler.policy); },
                       [](Scenario& s, const std::string& v) { return assign(parse_policy(v), s.scheduler.policy); }},
       .fuzz_knob = "policy"},
      // vLLM drafters propose a handful.
      {.section = "scheduler", .name = "num_speculative_tokens", .type = T::kInt, .min = 0, .max = 64,
       .type_doc = "int in 0..64", .default_doc = "0", .doc = "draft tokens per step (k)", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(int, scheduler.num_speculative_tokens), .printer_label = "spec_tokens",
       .fuzz_knob = "spec"},
      {.section = "scheduler", .name = "speculative_method", .type = T::kEnum, .type_doc = "mtp \\| ngram",
       .default_doc = "mtp (DeepSeek's drafter)", .doc = "vLLM's SpeculativeConfig.method", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(SpeculativeMethod, scheduler.speculative_method),
       .enumeration = {"speculative method", [] { return std::vector<std::string>{"mtp", "ngram"}; },
                       [](const Scenario& s) { return to_string(s.scheduler.speculative_method); },
                       [](Scenario& s, const std::string& v) {
                         return assign(parse_speculative_method(v), s.scheduler.speculative_method);
                       }},
       .printed = [](const Scenario& s) -> std::string {
         const SchedulerConfig& c = s.scheduler;
         return c.num_speculative_tokens > 0 ? std::string("(") + to_string(c.speculative_method) + ")" : "";
       },
       .fuzz_knob = "spec-method"},
      // The default is the profile's release (read after the profile sets the rules).
      {.section = "scheduler", .name = "scheduler_reserve_full_isl", .type = T::kBool, .type_doc = "bool",
       .default_doc = "the profile's: true for vllm-0.33, strict, sglang (vLLM 0.33's default); false for the older "
                      "profiles",
       .doc = "admit a waiting request only when blocks for its whole known sequence are free", .echo = kWTP,
       .field = MLASIM_KEY_FIELD(bool, scheduler.rules.scheduler_reserve_full_isl),
       .written = [](const Scenario& s) {
         return s.scheduler.rules.scheduler_reserve_full_isl !=
                scheduler_rules_for(s.engine.profile).scheduler_reserve_full_isl;
       },
       .printer_label = "reserve_full_isl", .fuzz_knob = "reserve"},
      {.section = "engine", .name = "profile", .type = T::kEnum,
       .type_doc = "vllm-2025-early \\| vllm-0.11 \\| vllm-0.12 \\| vllm-3region \\| vllm-0.33 \\| vllm-current \\| "
                   "strict \\| sglang",
       .default_doc = "vllm-0.33", .doc = "routing rules", .echo = kWT,
       .field = MLASIM_KEY_FIELD(EngineProfile, engine.profile),
       .enumeration = {"engine profile",
                       [] {
                         return std::vector<std::string>{"vllm-2025-early", "vllm-0.11", "vllm-0.12", "vllm-3region",
                                                         "vllm-0.33",       "vllm-current", "strict", "sglang"};
                       },
                       [](const Scenario& s) { return to_string(s.engine.profile); },
                       [](Scenario& s, const std::string& v) { return assign(parse_engine_profile(v), s.engine.profile); }},
       .written = always, .fuzz_knob = "profile"},
      // Read with the cache section (read_deployment_keys), after the scheduler.
      {.section = "engine", .name = "gpu", .type = T::kEnum,
       .type_doc = "a100 \\| l40s \\| h100 \\| h200 \\| h20 \\| b200 \\| gb200 \\| b300 \\| gb300 \\| rtx-pro-6000 \\| "
                   "rtx-5090 \\| mi300x \\| mi325x \\| mi355x",
       .default_doc = "h200", .doc = "the GPU (its compute capability, or ROCm architecture) the backend is selected for",
       .echo = kEchoWriter, .field = MLASIM_KEY_FIELD(GpuKind, deployment.gpu),
       .enumeration = {"GPU", gpu_names, [](const Scenario& s) { return gpu_info(s.deployment.gpu).name; },
                       [](Scenario& s, const std::string& v) {
                         const bool known = assign(parse_gpu(v), s.deployment.gpu);
                         s.deployment.gpu_given = s.deployment.gpu_given || known;
                         return known;
                       }},
       .written = [](const Scenario& s) { return s.deployment.gpu_given; }},
      {.section = "engine", .name = "attention_backend", .type = T::kEnum,
       .type_doc = "auto \\| flashmla \\| flashattn-mla \\| flashinfer-mla \\| cutlass-mla \\| triton-mla \\| "
                   "rocm-aiter-mla \\| tokenspeed-mla \\| rocm-aiter-triton-mla \\| flashmla-sparse \\| "
                   "flashinfer-mla-sparse \\| flashinfer-mla-sparse-sm90 \\| flashinfer-mla-sparse-sm120 \\| "
                   "flashattn-mla-sparse \\| flashattn-mla-sparse-fa4 \\| rocm-aiter-mla-sparse \\| flashmla-sparse-dsv4 \\| "
                   "flashinfer-mla-sparse-dsv4",
       .default_doc = "auto", .doc = "sets the decode threshold T and query-length support", .echo = kWT,
       .field = MLASIM_KEY_FIELD(AttentionBackendKind, engine.attention_backend),
       .enumeration = {"attention backend",
                       [] {
                         std::vector<std::string> names = attention_backend_names();
                         names.insert(names.begin(), "auto");
                         return names;
                       },
                       [](const Scenario& s) { return to_string(s.engine.attention_backend); },
                       [](Scenario& s, const std::string& v) {
                         return assign_given(v, parse_attention_backend(v), s.engine.attention_backend,
                                             s.engine.attention_backend_given);
                       }},
       .written = always, .check = check_backend_profile, .fuzz_knob = "backend"},
      {.section = "engine", .name = "reorder_batch_threshold", .type = T::kOptionalInt, .min = 1, .max = k2p24,
       .type_doc = "int in 1..2^24", .default_doc = "the backend's, raised to 1 + k with speculation",
       .doc = "overrides T", .echo = kEchoWriter,
       .field = MLASIM_KEY_FIELD(std::optional<int>, engine.reorder_batch_threshold),
       .fuzz_knob = "decode-threshold"},
      {.section = "engine", .name = "query_len_support", .type = T::kEnum, .type_doc = "single \\| uniform \\| varlen",
       .default_doc = "the backend's", .doc = "overrides it", .echo = kEchoWriter,
       .field = MLASIM_KEY_FIELD(std::optional<QueryLenSupport>, engine.query_len_support),
       .enumeration = {"query-length support", [] { return std::vector<std::string>{"single", "uniform", "varlen"}; },
                       [](const Scenario& s) -> const char* {
                         return s.engine.query_len_support ? to_string(*s.engine.query_len_support) : nullptr;
                       },
                       [](Scenario& s, const std::string& v) {
                         const std::optional<QueryLenSupport> q = parse_query_len_support(v);
                         if (q) s.engine.query_len_support = q;
                         return q.has_value();
                       }}},
      // Always written for vLLM 0.33's profiles: left out, it would be auto (V2).
      {.section = "engine", .name = "model_runner", .type = T::kEnum, .type_doc = "auto \\| v1 \\| v2",
       .default_doc = "auto: v2 for vllm-0.33 and strict (config/vllm.py ~731-767), v1 for the older profiles",
       .doc = "vLLM's model runner", .echo = kWT | kEchoListedLast,
       .field = MLASIM_KEY_FIELD(ModelRunner, engine.model_runner),
       .enumeration = {"model runner", [] { return std::vector<std::string>{"auto", "v1", "v2"}; },
                       [](const Scenario& s) { return to_string(s.engine.model_runner); },
                       [](Scenario& s, const std::string& v) {
                         return assign_given(v, parse_model_runner(v), s.engine.model_runner, s.engine.model_runner_given);
                       }},
       .written = [](const Scenario& s) { return vllm033(s.engine.profile) || s.engine.model_runner != ModelRunner::kV1; },
       .check = check_runner_profile},
      {.section = "engine", .name = "sparse_mla_prefill", .type = T::kEnum,
       .type_doc = "vllm \\| force_mqa \\| dense_mha", .default_doc = "vllm",
       .doc = "sparse models' prefill rows (docs/spec/routing.md §4)",
       .echo = kEchoWriter,
       .field = MLASIM_KEY_FIELD(SparseMlaPrefill, engine.sparse_mla_prefill),
       .enumeration = {"sparse MLA prefill", [] { return std::vector<std::string>{"vllm", "force_mqa", "dense_mha"}; },
                       [](const Scenario& s) { return to_string(s.engine.sparse_mla_prefill); },
                       [](Scenario& s, const std::string& v) {
                         return assign(parse_sparse_mla_prefill(v), s.engine.sparse_mla_prefill);
                       }},
       .written = [](const Scenario& s) { return s.engine.sparse_mla_prefill != SparseMlaPrefill::kVllm; }},
      {.section = "engine", .name = "sglang_chunked_prefix_cache_threshold", .type = T::kInt, .min = 1, .max = k2p24,
       .type_doc = "int in 1..2^24", .default_doc = "8192 (SGLang)",
       .doc = "prefix sum from which SGLang's MHA path handles extends", .echo = kEchoWriter,
       .field = MLASIM_KEY_FIELD(int, engine.sglang_chunked_prefix_cache_threshold)},
      {.section = "cache", .name = "kv_cache_dtype", .type = T::kEnum,
       .type_doc = "auto \\| bfloat16 \\| float16 \\| fp8 \\| fp8_e4m3 \\| fp8_e5m2 \\| fp8_ds_mla \\| nvfp4_ds_mla \\| "
                   "nvfp4",
       .default_doc = "auto", .doc = "vLLM's `--kv-cache-dtype`", .echo = kEchoWriter,
       .field = MLASIM_KEY_FIELD(KvCacheDtype, deployment.kv_cache_dtype),
       .enumeration = {"KV-cache dtype", kv_cache_dtype_names,
                       [](const Scenario& s) { return to_string(s.deployment.kv_cache_dtype); },
                       [](Scenario& s, const std::string& v) {
                         return assign(parse_kv_cache_dtype(v), s.deployment.kv_cache_dtype);
                       }}},
      {.section = "parallel", .name = "tensor_parallel_size", .type = T::kInt, .min = 1, .max = 8,
       .type_doc = "int in 1..8", .default_doc = "1", .doc = "ranks; must divide num_attention_heads",
       .echo = kEchoWriter, .field = MLASIM_KEY_FIELD(int, parallel.tensor_parallel_size),
       .range_hint = "mlasim simulates 1 to 8 tensor-parallel ranks"},
      {.section = "timing", .name = "fixed_us", .type = T::kDouble, .min = 0, .max = 1e9, .type_doc = "number ≥ 0",
       .default_doc = "20000", .doc = "per step", .echo = kWT, .field = MLASIM_KEY_FIELD(double, timing.fixed_us),
       .check = check_timing_cap},
      {.section = "timing", .name = "per_scheduled_token_us", .type = T::kDouble, .min = 0, .max = 1e9,
       .type_doc = "number ≥ 0", .default_doc = "12", .doc = "per scheduled token", .echo = kWT,
       .field = MLASIM_KEY_FIELD(double, timing.per_scheduled_token_us), .check = check_timing_cap},
      {.section = "timing", .name = "per_context_token_us", .type = T::kDouble, .min = 0, .max = 1e9,
       .type_doc = "number ≥ 0", .default_doc = "0.018", .doc = "per token of context read (nct + q per row)",
       .echo = kWT, .field = MLASIM_KEY_FIELD(double, timing.per_context_token_us), .check = check_timing_cap},
      {.section = "timing", .name = "per_request_us", .type = T::kDouble, .min = 0, .max = 1e9,
       .type_doc = "number ≥ 0", .default_doc = "25", .doc = "per scheduled row", .echo = kWT,
       .field = MLASIM_KEY_FIELD(double, timing.per_request_us), .check = check_timing_cap},
};

#undef MLASIM_KEY_FIELD

}  // namespace

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

}  // namespace mlasim
