// SGLang's per-batch choice between MHA ("forward_normal", non-absorbed) and absorbed MLA for
// DeepSeek models (python/sglang/srt/models/deepseek_v2.py attention dispatch, docs/spec/routing.md §6).
#pragma once

#include <span>
#include <vector>

#include "attention/reorder.h"
#include "attention/routing_config.h"

namespace mlasim {

// ForwardMode of the batch. EXTEND: every row extends (new, chunk-continued or recomputing);
// DECODE: every row decodes (TARGET_VERIFY with speculation); MIXED: a chunk plus decodes.
enum class SglangForwardMode { kExtend, kDecode, kTargetVerify, kMixed };
const char* to_string(SglangForwardMode m);

// --attention-backend name SGLang uses for a vLLM backend kind (flashmla, fa3, flashinfer,
// cutlass_mla, triton, aiter).
const char* sglang_backend_name(AttentionBackendKind backend);

// Which branch of the dispatch decided MHA or absorbed MLA.
enum class SglangMhaRule {
  kNotExtend,             // DECODE or TARGET_VERIFY: absorbed MLA
  kAiterAnyExtend,        // aiter: MHA for any extend
  kPrefixZero,            // prefix sum 0: MHA
  kTritonPrefixNonzero,   // triton, prefix sum > 0: absorbed MLA
  kChunkedPrefix,         // prefix sum >= chunked_prefix_cache_threshold: MHA with chunked KV
  kShortPrefix,           // 0 < prefix sum < chunked_prefix_cache_threshold: absorbed MLA
};

// The dispatch and the facts it was decided on (what its explanation quotes).
struct SglangDispatch {
  SglangForwardMode mode = SglangForwardMode::kDecode;
  std::vector<bool> row_is_extend;   // per row, in batch order
  long long sum_extend_prefix_lens = 0;
  bool use_mha = false;              // true: every token takes MHA; false: every token absorbed MLA
  SglangMhaRule rule = SglangMhaRule::kNotExtend;
  AttentionBackendKind backend = AttentionBackendKind::kFlashAttnMla;
  int chunked_prefix_cache_threshold = 0;
};

// A row extends unless its prompt is done (nct >= P) and q <= 1 + k (a decode, or a verify of k
// drafts). extend_prefix_lens = nct for every row (a decode row mixed into an extend batch has
// prefix = seq_len - 1). MHA iff the mode is extend-without-speculation (EXTEND or MIXED) and:
// flashinfer / fa3 / flashmla / cutlass_mla: prefix sum == 0 or >= the chunked prefix cache
// threshold; triton: prefix sum == 0; aiter: always. (flashinfer_mla_disable_ragged and
// disable_chunked_prefix_cache are not modelled: both at SGLang's default, off.)
SglangDispatch sglang_dispatch(std::span<const RowInput> rows, const RoutingConfig& config);

}  // namespace mlasim
