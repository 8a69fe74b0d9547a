// The backend card (docs/spec/routing.md §3, §7). Line numbers: vLLM 0.33.0's files under
// vllm/v1/attention/backends/mla/ unless named otherwise; older releases where a profile models one.
#include "config/backend_card.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace mlasim {
namespace {

using K = AttentionBackendKind;
using P = EngineProfile;
using S = QueryLenSupport;

// What vLLM 0.33.0's metadata builder class sets: reorder_batch_threshold and query-length support.
struct BuilderClass {
  int threshold;
  S support;
  const char* source;
};

int by_heads(int heads, std::initializer_list<std::pair<int, int>> table, int fallback) {
  for (const auto& [h, t] : table)
    if (h == heads) return t;
  return fallback;
}

// The sparse builders' thresholds depend on the heads per rank (and FlashMLA-Sparse's on SM100);
// they declare no support of their own (SparseMLACommonMetadataBuilder).
BuilderClass sparse_builder_class(K kind, const BackendQuery& q) {
  const int h = q.num_heads_per_rank;
  const bool sm100 = q.vendor == GpuVendor::kNvidia && q.major == 10;
  switch (kind) {
    case K::kFlashMlaSparse:  // require_uniform_decodes = True
      return {sm100 ? by_heads(h, {{8, 128}, {16, 128}, {32, 128}, {64, 256}, {128, 1024}}, 1024)
                    : by_heads(h, {{16, 128}, {32, 128}, {64, 256}, {128, 256}}, 256),
              S::kUniform, "flashmla_sparse.py ~347-380"};
    case K::kFlashAttnMlaSparse:
      return {by_heads(h, {{16, 128}, {32, 128}, {64, 256}, {128, 256}}, 256), S::kVarlen,
              "flashattn_mla_sparse.py ~124-143"};
    case K::kRocmAiterMlaSparse: return {1, S::kVarlen, "rocm_aiter_mla_sparse.py ~438-457"};
    case K::kFlashMlaSparseDsv4:  // DeepseekV4SparseMLAMetadataBuilder: 1, speculation as decode
    case K::kFlashInferMlaSparseDsv4: return {1, S::kVarlen, "models/deepseek_v4/sparse_mla.py ~130-138"};
    default:  // FLASHINFER_MLA_SPARSE{,_SM90,_SM120}, FLASH_ATTN_MLA_SPARSE_FA4
      return {by_heads(h, {{8, 128}, {16, 128}, {32, 128}, {64, 256}, {128, 1024}}, 1024), S::kVarlen,
              "flashinfer_mla_sparse.py ~248-276"};
  }
}

BuilderClass builder_class(K kind, const BackendQuery& q) {
  switch (kind) {
    case K::kFlashMla: return {128, S::kUniform, "flashmla.py ~109-112"};
    case K::kFlashAttnMla: return {512, S::kVarlen, "flashattn_mla.py ~126-129"};
    case K::kFlashInferMla: return {1, S::kVarlen, "flashinfer_mla.py ~136-141 (threshold: the class default 1)"};
    case K::kCutlassMla: return {1, S::kSingle, "cutlass_mla.py ~31-35 (SINGLE_ONLY and 1: the class defaults)"};
    case K::kTritonMla: return {1, S::kUniform, "triton_mla.py ~74-78 (threshold: the class default 1)"};
    case K::kTokenspeedMla: return {1, S::kUniform, "tokenspeed_mla.py ~76-78 (threshold: the class default 1)"};
    case K::kRocmAiterMla:
    case K::kRocmAiterTritonMla:
      return {1, S::kUniform, "rocm_aiter_mla.py ~695-699 (threshold: the class default 1)"};
    default: return sparse_builder_class(kind, q);
  }
}

// The query-length support of the profile's release where it differs from 0.33.0's.
S release_support(P profile, K kind, S v033) {
  const bool v012 = profile == P::kVllm012;            // vLLM 0.11.1-0.13.x
  const bool v014 = v012 || profile == P::kVllm3Region;  // vLLM 0.14.0-0.18.x too
  // 0.16.0 flashinfer_mla.py:34: UNIFORM (0.33: VARLEN).
  if (v014 && kind == K::kFlashInferMla) return S::kUniform;
  // MLACommonMetadataBuilder's SINGLE_ONLY (0.16.0 model_executor/layers/attention/mla_attention.py:1225;
  // 0.33: UNIFORM).
  if (v014 && kind == K::kTritonMla) return S::kSingle;
  // 0.12.0 rocm_aiter_mla.py sets no query_len_support, so SINGLE_ONLY (0.14+: UNIFORM).
  if (v012 && kind == K::kRocmAiterMla) return S::kSingle;
  return v033;
}

bool is_vllm033(P p) { return p == P::kVllm033 || p == P::kStrict; }

// Threshold, its raise under speculation, require_uniform and the indexer's vote, per profile.
void set_threshold(BackendCard& c, int builder_threshold, const BackendQuery& q) {
  if (c.profile == P::kVllm2025Early) {
    // The early-2025 MLA builder hard-coded `num_tokens == 1` as decode; no threshold existed.
    c.has_threshold = false;
    c.class_threshold = 1;
    c.spec_as_decode = false;
    c.require_uniform = false;
  } else if (c.profile == P::kVllm011) {
    // vLLM 0.11.0: the class threshold, 512 for FlashAttention-MLA (flashattn_mla.py:67),
    // MLACommonMetadataBuilder's 1 for every other (mla/common.py:439); no raise for speculation
    // (_init_reorder_batch_threshold is not called) and no require_uniform (mla/common.py:683).
    c.class_threshold = c.kind == K::kFlashAttnMla ? 512 : 1;
    c.spec_as_decode = false;
    c.require_uniform = false;
  } else {
    c.class_threshold = builder_threshold;
    // Dense builders: supports_spec_as_decode = support != SINGLE_ONLY (mla_attention.py ~2502);
    // the sparse ones pass True.
    c.spec_as_decode = c.sparse || c.query_len_support != S::kSingle;
    // require_uniform = support != VARLEN (the sparse builders' require_uniform_decodes agrees).
    c.require_uniform = c.query_len_support != S::kVarlen;
    // The DSA indexer's builder: threshold 1 + k; in vLLM 0.33 it opts out of the vote with a
    // sparse backend (reorder_batch_threshold None, indexer.py ~985-1033).
    if (!(is_vllm033(c.profile) && c.sparse))
      c.indexer_threshold = max_decode_query_len(q.num_speculative_tokens, q.parallel_drafting);
  }
  // T = max(T, max_decode_query_len) when speculation is decode (backend.py ~658-683).
  c.reorder_batch_threshold = c.class_threshold;
  if (c.spec_as_decode && q.num_speculative_tokens > 0)
    c.reorder_batch_threshold =
        std::max(c.class_threshold, max_decode_query_len(q.num_speculative_tokens, q.parallel_drafting));
}

}  // namespace

int max_decode_query_len(int num_speculative_tokens, bool parallel_drafting) {
  return 1 + (parallel_drafting ? 2 : 1) * num_speculative_tokens;
}

BackendCard backend_card(EngineProfile profile, AttentionBackendKind kind, const BackendQuery& q,
                         std::optional<QueryLenSupport> query_len_support) {
  BackendCard c;
  c.profile = profile;
  c.kind = kind;
  c.vllm_name = vllm_backend_name(kind);
  c.source = backend_source(kind);
  c.sparse = is_sparse_backend(kind);
  // flashinfer_mla_sparse_sm120.py ~37: supports_dense_mha_prefill = False; releases before 0.33
  // route every token of a sparse model to the decode path.
  // DeepSeek-V4's backends serve DeepseekV4Attention, which never takes the MHA form
  // (models/deepseek_v4/nvidia/flashmla.py ~143-172).
  c.dense_mha_prefill = is_vllm033(profile) && c.sparse && kind != K::kFlashInferMlaSparseSm120 &&
                        !is_deepseek_v4_backend(kind);
  c.kernel_block_sizes = supported_kernel_block_sizes(kind, q);
  c.worker_kernel_block_sizes = supported_kernel_block_sizes(kind, q, /*with_spec=*/true);
  const BuilderClass b = builder_class(kind, q);
  c.builder_source = b.source;
  c.query_len_support = query_len_support ? *query_len_support : release_support(profile, kind, b.support);
  set_threshold(c, b.threshold, q);
  return c;
}

}  // namespace mlasim
