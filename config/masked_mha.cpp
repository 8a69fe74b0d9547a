// The masked-MHA prefill rule of vLLM 0.33's sparse MLA (config/masked_mha.h).
#include "config/masked_mha.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>

#include "config/deployment.h"

namespace mlasim {
namespace {

struct TableRow {
  int qk_head_dim, v_head_dim;
  std::string_view backend;
  int tp;
  MaskedMhaRanges pure;
  std::optional<MaskedMhaRanges> context;
};

constexpr int K = 1024;

// _MASKED_MHA_THRESHOLDS (mla_attention.py ~1782-1869).
const std::vector<TableRow>& table() {
  static const std::vector<TableRow> rows = {
      {192, 128, "FLASHMLA_SPARSE", 1, {{2048, 1536}, {4096, 4096}}, std::nullopt},
      {192, 128, "FLASHMLA_SPARSE", 2, {{2048, 512}, {4096, 1024}, {8192, 4096}}, std::nullopt},
      {192, 128, "FLASHMLA_SPARSE", 4, {{2048, 512}, {4096, 1024}, {8192, 1536}, {16384, 8192}}, std::nullopt},
      {192, 128, "FLASHMLA_SPARSE", 8, {{2048, 512}, {4096, 512}, {8192, 1024}, {16384, 2048}, {32768, 16384}},
       std::nullopt},
      {192, 128, "FLASHINFER_MLA_SPARSE", 8,
       {{2048, 512}, {4096, 1024}, {8192, 1024}, {16384, 2048}, {32768, 32768}}, std::nullopt},
      {256, 256, "FLASHMLA_SPARSE", 1, {{8 * K, 0}}, MaskedMhaRanges{}},
      {256, 256, "FLASHMLA_SPARSE", 2, {{20 * K, 0}}, MaskedMhaRanges{{6 * K, 4 * K}, {10 * K, 8 * K}}},
      {256, 256, "FLASHMLA_SPARSE", 4, {{48 * K, 0}},
       MaskedMhaRanges{{8 * K, 4 * K}, {16 * K, 8 * K}, {24 * K, 16 * K}, {34 * K, 32 * K}}},
      {256, 256, "FLASHMLA_SPARSE", 8, {{112 * K, 0}},
       MaskedMhaRanges{{8 * K, 4 * K}, {16 * K, 8 * K}, {32 * K, 16 * K}, {48 * K, 32 * K}}},
      {256, 256, "FLASHINFER_MLA_SPARSE", 4, {{36 * K, 0}},
       MaskedMhaRanges{{12 * K, 4 * K}, {16 * K, 8 * K}, {24 * K, 16 * K}, {28 * K, 24 * K}}},
      {256, 256, "FLASHINFER_MLA_SPARSE", 8, {{64 * K, 0}},
       MaskedMhaRanges{{20 * K, 4 * K}, {24 * K, 8 * K}, {32 * K, 16 * K}, {48 * K, 32 * K}, {56 * K, 40 * K},
                       {64 * K, 48 * K}, {72 * K, 56 * K}}},
  };
  return rows;
}

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

}  // namespace

MaskedMhaRule masked_mha_rule(const BackendQuery& q, AttentionBackendKind backend, int tp, int max_model_len,
                              int max_num_seqs, int block_size, int index_topk) {
  MaskedMhaRule rule;
  // _is_masked_mha_available (sparse_mla_attention.py ~99-133): SM100's family, the shapes of its
  // kernel, FlashAttention 4 (the default on major 10 for head sizes 192/128 and 256/256,
  // fa_utils.py ~98-104, ~193-207), an unquantized cache. GLM-5.3-Flash's NoPE shape
  // (64, 512, 256, 0, 256) needs a rope dimension of 0, which mlasim's models do not have.
  const int heads_total = q.num_heads_per_rank * tp;
  const std::tuple dims{heads_total, q.kv_lora_rank, q.qk_nope_head_dim, q.qk_rope_head_dim, q.v_head_dim};
  const bool shape = dims == std::tuple{128, 512, 128, 64, 128} || dims == std::tuple{64, 512, 192, 64, 256};
  if (q.vendor != GpuVendor::kNvidia || q.major != 10 || !shape || is_quantized_kv_cache(q.kv_cache_dtype)) return rule;
  // FLASH_ATTN_MLA_SPARSE_FA4's prefill batches run on FlashInfer's kernel (_use_masked_mha ~1881).
  std::string_view name = vllm_backend_name(backend);
  if (name == "FLASH_ATTN_MLA_SPARSE_FA4") name = "FLASHINFER_MLA_SPARSE";
  const int qk = q.qk_nope_head_dim + q.qk_rope_head_dim;
  for (const TableRow& r : table())
    if (r.qk_head_dim == qk && r.v_head_dim == q.v_head_dim && r.backend == name && r.tp == tp) {
      rule.available = true;
      rule.pure_prefill = r.pure;
      rule.with_context = r.context;
    }
  // determine_chunked_prefill_workspace_size of the sparse builders (no decode context parallelism).
  const long long w = std::min<long long>({std::max<long long>(8LL * max_model_len, 4LL * max_num_seqs * block_size),
                                           64LL * 1024, 1LL * max_num_seqs * index_topk});
  rule.workspace_size = static_cast<int>(std::max<long long>(w, block_size));
  rule.block_size = block_size;
  return rule;
}

bool masked_mha_by_lengths(const MaskedMhaRule& rule, int max_query_len, long long max_seq_len, bool has_context) {
  if (!rule.available) return false;
  const MaskedMhaRanges& ranges = has_context && rule.with_context ? *rule.with_context : rule.pure_prefill;
  for (const auto& [max_seq, min_query] : ranges)
    if (max_seq_len <= max_seq) return max_query_len >= min_query;
  return false;
}

int max_context_chunk_seq_len(std::span<const int> context_lens, int workspace_size, int block_size) {
  // plan_mla_context_chunks with row_budget W, max_context_chunk round_down(W, B), alignment B
  // (build_mla_chunked_context_metadata, ~2077-2106: chunks aligned to blocks on CUDA) and padded
  // rows the identity (no decode context parallelism).
  const long long budget = workspace_size, max_chunk = 1LL * workspace_size / block_size * block_size;
  int longest = 0;
  const std::size_t n = context_lens.size();
  std::size_t request = 0;
  long long start = 0;
  while (request < n) {
    if (context_lens[request] == 0) {
      ++request;
      continue;
    }
    long long rows = 0;
    bool emitted = false;
    while (request < n && context_lens[request] > 0) {
      const long long remaining = context_lens[request] - start;
      if (rows + remaining > budget) {
        const long long available = budget - rows;
        const long long max_split = std::min(max_chunk, (remaining - 1) / block_size * block_size);
        const long long split = std::min(max_split / block_size, available / block_size) * block_size;
        if (split > 0) {
          longest = static_cast<int>(std::max<long long>(longest, split));
          rows += split;
          start += split;
          emitted = true;
        }
        break;
      }
      rows += remaining;
      longest = static_cast<int>(std::max<long long>(longest, remaining));
      emitted = true;
      ++request;
      start = 0;
    }
    if (!emitted) break;  // vLLM asserts a chunk is never empty; cannot happen with W >= B
  }
  return longest;
}

bool masked_mha_workspace_fits(int batch, int max_query_len, int max_context_chunk_seq_len) {
  // _topk_mask_shape (sparse_mla_attention.py ~70-81) with max_key_len = max(query, chunk).
  const long long max_key = std::max(max_query_len, max_context_chunk_seq_len);
  const long long tile = max_query_len <= 128 ? 128 : 256;
  const long long padded_q = cdiv(max_query_len, tile) * tile;
  const long long words = cdiv(cdiv(max_key, 32), 4) * 4;
  constexpr long long kWorkspaceInt32 = 128LL * 1024 * 1024 / 4;  // GLOBAL_TOPK_MASK_MAX_BYTES / int32
  return 1LL * batch * padded_q * words <= kWorkspaceInt32;
}

}  // namespace mlasim
