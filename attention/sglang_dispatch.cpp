// SGLang's batch-level MHA/MLA dispatch (docs/spec/routing.md §6).
#include "attention/sglang_dispatch.h"

namespace mlasim {
namespace {

SglangForwardMode forward_mode(int num_extend, int num_reqs, int num_speculative_tokens) {
  if (num_extend == 0) return num_speculative_tokens > 0 ? SglangForwardMode::kTargetVerify : SglangForwardMode::kDecode;
  return num_extend == num_reqs ? SglangForwardMode::kExtend : SglangForwardMode::kMixed;
}

SglangMhaRule mha_rule(const SglangDispatch& dispatch) {
  const long long sum = dispatch.sum_extend_prefix_lens;
  if (dispatch.mode != SglangForwardMode::kExtend && dispatch.mode != SglangForwardMode::kMixed)
    return SglangMhaRule::kNotExtend;
  if (dispatch.backend == AttentionBackendKind::kRocmAiterMla) return SglangMhaRule::kAiterAnyExtend;
  if (sum == 0) return SglangMhaRule::kPrefixZero;
  if (dispatch.backend == AttentionBackendKind::kTritonMla) return SglangMhaRule::kTritonPrefixNonzero;
  if (sum >= dispatch.chunked_prefix_cache_threshold) return SglangMhaRule::kChunkedPrefix;
  return SglangMhaRule::kShortPrefix;
}

bool takes_mha(SglangMhaRule rule) {
  return rule == SglangMhaRule::kAiterAnyExtend || rule == SglangMhaRule::kPrefixZero ||
         rule == SglangMhaRule::kChunkedPrefix;
}

}  // namespace

const char* to_string(SglangForwardMode m) {
  switch (m) {
    case SglangForwardMode::kExtend: return "EXTEND";
    case SglangForwardMode::kDecode: return "DECODE";
    case SglangForwardMode::kTargetVerify: return "TARGET_VERIFY";
    case SglangForwardMode::kMixed: return "MIXED";
  }
  return "?";
}

const char* sglang_backend_name(AttentionBackendKind backend) {
  switch (backend) {
    case AttentionBackendKind::kFlashMla: return "flashmla";
    case AttentionBackendKind::kFlashAttnMla: return "fa3";
    case AttentionBackendKind::kFlashInferMla: return "flashinfer";
    case AttentionBackendKind::kCutlassMla: return "cutlass_mla";
    case AttentionBackendKind::kTritonMla: return "triton";
    case AttentionBackendKind::kRocmAiterMla: return "aiter";
    default: return "?";  // vLLM-only backends: the scenario loader refuses them with profile sglang
  }
}

SglangDispatch sglang_dispatch(std::span<const RowInput> rows, const RoutingConfig& config) {
  SglangDispatch dispatch;
  int num_extend = 0;
  for (const RowInput& row : rows) {
    const bool extend = row.nct < row.prompt_len || row.q > 1 + config.num_speculative_tokens;
    dispatch.row_is_extend.push_back(extend);
    num_extend += extend ? 1 : 0;
    dispatch.sum_extend_prefix_lens += row.nct;
  }
  dispatch.mode = forward_mode(num_extend, static_cast<int>(rows.size()), config.num_speculative_tokens);
  dispatch.backend = config.backend;
  dispatch.chunked_prefix_cache_threshold = config.sglang_chunked_prefix_cache_threshold;
  dispatch.rule = mha_rule(dispatch);
  dispatch.use_mha = takes_mha(dispatch.rule);
  return dispatch;
}

}  // namespace mlasim
