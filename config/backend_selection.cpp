// Backend priorities, validation, block size and model runner as vLLM 0.33.0 resolves them.
#include "config/backend_selection.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace mlasim {
namespace {

using K = AttentionBackendKind;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// get_preferred_block_size (backend.py ~153-161) for one backend; with the indexer (a sparse
// model) _preferred_block_size_for_backends' LCM search (interface.py ~700-745).
int preferred_block_size(const BackendCard& card, const BackendQuery& q) {
  constexpr int kDefault = 16;  // CacheConfig.DEFAULT_BLOCK_SIZE (config/cache.py ~185)
  const K kind = card.kind;
  if (!q.use_sparse) {
    const auto& sizes = card.kernel_block_sizes;
    if (sizes.empty() || supports_block_size(kind, q, kDefault)) return kDefault;
    int best = sizes.front().size;
    for (const auto& s : sizes) best = std::min(best, s.size);
    return best;
  }
  const auto indexer = indexer_kernel_block_sizes(q);
  auto indexer_ok = [&](int bs) {
    for (const auto& s : indexer)
      if (bs % s.size == 0) return true;
    return false;
  };
  if (supports_block_size(kind, q, kDefault) && indexer_ok(kDefault)) return kDefault;
  std::set<int> candidates;
  for (const auto& a : card.kernel_block_sizes)
    for (const auto& b : indexer) candidates.insert(std::lcm(a.size, b.size));
  for (int c : candidates)
    if (supports_block_size(kind, q, c) && indexer_ok(c)) return c;
  return kDefault;
}

// select_common_block_size over the group's backends (the MLA backend; a sparse model's indexer
// too): the manager size when every kernel takes it (an exact size must match, a MultipleOf
// divide it), else the largest exact size of any of them that divides it and all take.
int kernel_block_size(const BackendCard& card, const BackendQuery& q, int manager) {
  std::vector<std::vector<KernelBlockSize>> groups{card.worker_kernel_block_sizes};
  if (q.use_sparse) groups.push_back(indexer_kernel_block_sizes(q));
  auto supported = [&](int bs) {
    for (const auto& sizes : groups) {
      bool ok = false;
      for (const auto& s : sizes) ok = ok || (s.multiple_of ? bs % s.size == 0 : bs == s.size);
      if (!ok) return false;
    }
    return true;
  };
  if (supported(manager)) return manager;
  int best = 0;
  for (const auto& sizes : groups)
    for (const auto& s : sizes)
      if (!s.multiple_of && manager % s.size == 0 && supported(s.size)) best = std::max(best, s.size);
  return best > 0 ? best : manager;
}

// AttentionSelectorConfig.__repr__ (v1/attention/selector.py ~45-65) for an MLA decoder layer.
std::string selector_config_repr(const BackendQuery& q) {
  auto b = [](bool v) { return v ? "True" : "False"; };
  const char* dtype = q.dtype_is_fp32 ? "torch.float32" : q.dtype_is_bf16 ? "torch.bfloat16" : "torch.float16";
  return "AttentionSelectorConfig(head_size=" + std::to_string(q.head_size) + ", dtype=" + dtype +
         ", kv_cache_dtype=" + to_string(q.kv_cache_dtype) +
         ", block_size=" + (q.block_size ? std::to_string(*q.block_size) : std::string("None")) +
         ", use_mla=True, has_sink=False, use_sparse=" + b(q.use_sparse) +
         ", use_mm_prefix=False, use_per_head_quant_scales=False, attn_type=AttentionType.DECODER, has_sliding_window=False, "
         "use_non_causal=False, use_batch_invariant=False, use_kv_connector=False, "
         "use_adaptive_verification=False, use_pcp=False, use_dcp=False, use_rswa=False)";
}

}  // namespace

std::vector<KernelBlockSize> indexer_kernel_block_sizes(const BackendQuery& q) {
  if (q.vendor == GpuVendor::kAmd) return {{1, false}, {16, true}};
  return {{64, false}};
}

std::vector<AttentionBackendKind> backend_priorities(const BackendQuery& q) {
  if (q.vendor == GpuVendor::kAmd) {
    if (q.use_sparse) return {K::kRocmAiterMlaSparse};
    return {K::kTritonMla};  // rocm_aiter_ops.is_mla_enabled() needs VLLM_ROCM_USE_AITER=1
  }
  if (q.major == 10) {
    std::vector<K> sparse;
    if (is_quantized_kv_cache(q.kv_cache_dtype))
      sparse = {K::kFlashInferMlaSparse, K::kFlashMlaSparse};
    else if (q.num_heads_per_rank <= 16)
      sparse = {K::kFlashAttnMlaSparseFa4, K::kFlashInferMlaSparse, K::kFlashMlaSparse};
    else
      sparse = {K::kFlashMlaSparse, K::kFlashInferMlaSparse};
    std::vector<K> out{K::kFlashInferMla, K::kTokenspeedMla, K::kCutlassMla, K::kFlashAttnMla, K::kFlashMla,
                       K::kTritonMla};
    out.insert(out.end(), sparse.begin(), sparse.end());
    return out;
  }
  if (q.major == 12) return {K::kTritonMla, K::kFlashInferMlaSparseSm120};
  std::vector<K> tail{K::kFlashAttnMlaSparse, K::kFlashMlaSparse};
  if (q.head_size == 512)
    tail.insert(tail.begin(), K::kFlashInferMlaSparseSm90);
  else
    tail.push_back(K::kFlashInferMlaSparseSm90);
  std::vector<K> out{K::kFlashAttnMla, K::kFlashMla, K::kFlashInferMla, K::kTritonMla};
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

namespace {

// get_attn_backend_cls with --attention-backend (cuda.py ~430-446): the selected backend alone,
// refused with its reasons. False when refused (sel.error set).
bool select_explicit(const SelectionRequest& request, BackendSelection& sel) {
  sel.explicit_backend = true;
  sel.backend = *request.backend;
  BackendCandidate c{*request.backend, request.validate_explicit ? validate_configuration(*request.backend, request.query)
                                                                 : std::vector<std::string>{}};
  sel.candidates.push_back(c);
  if (c.reasons.empty()) return true;
  std::string list;
  for (std::size_t i = 0; i < c.reasons.size(); ++i) list += (i ? ", '" : "'") + c.reasons[i] + "'";  // repr(list)
  sel.error = std::string("Selected backend AttentionBackendEnum.") + vllm_backend_name(c.kind) +
              " is not valid for this configuration. Reason: [" + list + "]";
  return false;
}

// cuda.py ~482-500: a --block-size that alone ruled out a higher-priority backend.
void warn_precluded_by_block_size(const BackendQuery& q, std::size_t chosen, BackendSelection& sel) {
  if (!q.block_size) return;
  std::vector<std::string> excluded;
  for (std::size_t i = 0; i < chosen; ++i)
    if (sel.candidates[i].reasons == std::vector<std::string>{"block_size not supported"})
      excluded.emplace_back(vllm_backend_name(sel.candidates[i].kind));
  if (!excluded.empty())
    sel.warnings.push_back("--block-size " + std::to_string(*q.block_size) + " precluded higher-priority backend(s) " +
                           join(excluded) + ". Using " + vllm_backend_name(sel.backend) +
                           " instead, which may result in reduced performance. Consider removing --block-size "
                           "to auto-select the optimal block size.");
}

// The first valid backend in priority order; false when none is (sel.error set).
bool select_by_priority(const BackendQuery& q, BackendSelection& sel) {
  const auto order = backend_priorities(q);
  std::size_t chosen = order.size();
  for (std::size_t i = 0; i < order.size(); ++i) {
    sel.candidates.push_back({order[i], validate_configuration(order[i], q)});
    if (chosen == order.size() && sel.candidates.back().reasons.empty()) chosen = i;
  }
  if (chosen == order.size()) {
    std::string reasons;
    for (const auto& c : sel.candidates)
      reasons += std::string(reasons.empty() ? "" : ", ") + vllm_backend_name(c.kind) + ": [" + join(c.reasons) + "]";
    sel.error = "No valid attention backend found for " + std::string(q.vendor == GpuVendor::kAmd ? "rocm" : "cuda") +
                " with " + selector_config_repr(q) + ". Reasons: {" + reasons + "}.";
    return false;
  }
  sel.backend = order[chosen];
  warn_precluded_by_block_size(q, chosen, sel);
  return true;
}

// VllmConfig.use_v2_model_runner (config/vllm.py ~731-767).
void choose_model_runner(const SelectionRequest& request, BackendSelection& sel) {
  if (request.model_runner) {
    sel.model_runner = *request.model_runner;
    sel.model_runner_reason = std::string("engine.model_runner: ") + to_string(*request.model_runner) +
                              " (VLLM_USE_V2_MODEL_RUNNER=" + (*request.model_runner == ModelRunner::kV2 ? "1" : "0") +
                              ")";
  } else if (request.query.parallel_drafting) {
    sel.model_runner = ModelRunner::kV1;
    sel.model_runner_reason = "Model Runner V2 does not yet support parallel drafting for EAGLE speculative decoding "
                              "(config/vllm.py ~3070-3077)";
  } else {
    sel.model_runner = ModelRunner::kV2;
    sel.model_runner_reason = "VLLM_USE_V2_MODEL_RUNNER unset, Triton present, no unsupported feature: V2 "
                              "(config/vllm.py ~731-767)";
  }
}

}  // namespace

BackendSelection select_deepseek_v4_backend(const SelectionRequest& request) {
  BackendSelection sel;
  sel.chosen_by_model = true;
  const BackendQuery& q = request.query;
  const std::optional<K> named = request.backend;
  if (named == K::kFlashInferMlaSparse || named == K::kFlashInferMlaSparseSm120) {
    sel.error = std::string(vllm_backend_name(*named)) +
                " is not a DeepSeek V4 attention backend. Use FLASHINFER_MLA_SPARSE_DSV4 for DeepSeek V4 FlashInfer "
                "sparse MLA.";
    return sel;
  }
  sel.explicit_backend = named.has_value();
  const bool flashinfer = named == K::kFlashInferMlaSparseDsv4 || (named != K::kFlashMlaSparse &&
                                                                  named != K::kFlashMlaSparseDsv4 && q.major == 12);
  sel.backend = flashinfer ? K::kFlashInferMlaSparseDsv4 : K::kFlashMlaSparseDsv4;
  sel.card = backend_card(request.profile, sel.backend, q);
  sel.block_size_auto = !q.block_size.has_value();
  sel.block_size = q.block_size.value_or(256);
  sel.kernel_block_size = 256;  // the backend's one kernel block size
  choose_model_runner(request, sel);
  return sel;
}

BackendSelection select_backend(const SelectionRequest& request) {
  BackendSelection sel;
  const BackendQuery& q = request.query;
  const bool chosen = request.backend ? select_explicit(request, sel) : select_by_priority(q, sel);
  if (!chosen) return sel;
  bind_backend(request, sel.backend, sel);
  choose_model_runner(request, sel);
  return sel;
}

void bind_backend(const SelectionRequest& request, AttentionBackendKind kind, BackendSelection& sel) {
  const BackendQuery& q = request.query;
  sel.backend = kind;
  sel.card = backend_card(request.profile, kind, q);
  sel.block_size_auto = !q.block_size.has_value();
  sel.block_size = q.block_size ? *q.block_size : preferred_block_size(sel.card, q);
  sel.kernel_block_size = kernel_block_size(sel.card, q, sel.block_size);
}

}  // namespace mlasim
