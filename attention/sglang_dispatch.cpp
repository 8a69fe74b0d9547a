// SGLang's batch-level MHA/MLA dispatch (docs/spec/routing.md §6).
#include "attention/sglang_dispatch.h"

namespace mlasim {

const char* to_string(SglangForwardMode m) {
  switch (m) {
    case SglangForwardMode::kExtend: return "EXTEND";
    case SglangForwardMode::kDecode: return "DECODE";
    case SglangForwardMode::kTargetVerify: return "TARGET_VERIFY";
    case SglangForwardMode::kMixed: return "MIXED";
  }
  return "?";
}

const char* sglang_backend_name(AttentionBackendKind b) {
  switch (b) {
    case AttentionBackendKind::kFlashMla: return "flashmla";
    case AttentionBackendKind::kFlashAttnMla: return "fa3";
    case AttentionBackendKind::kFlashInferMla: return "flashinfer";
    case AttentionBackendKind::kCutlassMla: return "cutlass_mla";
    case AttentionBackendKind::kTritonMla: return "triton";
    case AttentionBackendKind::kRocmAiterMla: return "aiter";
  }
  return "?";
}

SglangDispatch sglang_dispatch(std::span<const RowInput> rows, const RoutingConfig& c) {
  SglangDispatch d;
  int num_extend = 0;
  for (const RowInput& r : rows) {
    const bool extend = r.nct < r.prompt_len || r.q > 1 + c.num_speculative_tokens;
    d.row_is_extend.push_back(extend);
    num_extend += extend ? 1 : 0;
    d.sum_extend_prefix_lens += r.nct;
  }
  const int n = static_cast<int>(rows.size());
  if (num_extend == 0) d.mode = c.num_speculative_tokens > 0 ? SglangForwardMode::kTargetVerify : SglangForwardMode::kDecode;
  else d.mode = num_extend == n ? SglangForwardMode::kExtend : SglangForwardMode::kMixed;

  const bool extend_without_spec = d.mode == SglangForwardMode::kExtend || d.mode == SglangForwardMode::kMixed;
  const std::string backend = sglang_backend_name(c.backend);
  const std::string head = std::string("sglang ") + to_string(d.mode) + " batch on " + backend +
                           ", sum(extend_prefix_lens) = " + std::to_string(d.sum_extend_prefix_lens) + ": ";
  const long long sum = d.sum_extend_prefix_lens;
  if (!extend_without_spec) {
    d.use_mha = false;
    d.reason = head + "not an extend batch, so absorbed MLA";
  } else if (c.backend == AttentionBackendKind::kRocmAiterMla) {
    d.use_mha = true;
    d.reason = head + "aiter takes MHA for any extend";
  } else if (c.backend == AttentionBackendKind::kTritonMla) {
    d.use_mha = sum == 0;
    d.reason = head + (d.use_mha ? "prefix sum 0, so MHA" : "triton takes MHA only when the prefix sum is 0, so absorbed MLA");
  } else if (sum == 0) {
    d.use_mha = true;
    d.reason = head + "prefix sum 0, so MHA";
  } else if (sum >= c.sglang_chunked_prefix_cache_threshold) {
    d.use_mha = true;
    d.reason = head + "prefix sum >= chunked_prefix_cache_threshold " +
               std::to_string(c.sglang_chunked_prefix_cache_threshold) + ", so MHA (chunked KV)";
  } else {
    d.use_mha = false;
    d.reason = head + "0 < prefix sum < chunked_prefix_cache_threshold " +
               std::to_string(c.sglang_chunked_prefix_cache_threshold) + ", so absorbed MLA";
  }
  return d;
}

}  // namespace mlasim
