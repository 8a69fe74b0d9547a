// vLLM 0.33's masked-MHA prefill of sparse MLA (docs/spec/routing.md §4): on SM100 GPUs, for the
// model shapes its kernel serves, a sparse layer's prefill rows past index_topk may still take the
// MHA form with the indexer's top-k applied as a key mask (MLAAttention._use_sparse_mha,
// mla_attention.py ~1215-1240), where a per-backend table of sequence and query lengths says so
// (_use_masked_mha, _MASKED_MHA_THRESHOLDS, ~1782-1899) and the batch's top-k masks fit the 128 MiB
// workspace (_masked_mha_workspace_fits, sparse_mla_attention.py ~67-97, ~897-920).
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "config/mla_backends.h"

namespace mlasim {

// (max_seq_len, min_query_len): the first range whose max_seq_len holds the batch's longest
// prefill sequence decides: masked MHA when its longest prefill query is >= min_query_len.
using MaskedMhaRanges = std::vector<std::pair<int, int>>;

struct MaskedMhaRule {
  bool available = false;  // _is_masked_mha_available and a table row for (dims, backend, TP)
  MaskedMhaRanges pure_prefill;  // batches whose prefill rows have no cached context
  std::optional<MaskedMhaRanges> with_context;  // nullopt: the pure-prefill ranges serve both
  int workspace_size = 0;  // the sparse builder's chunked-prefill workspace (rows)
  int block_size = 16;     // the chunk alignment (the MLA group's block size)
};

// The rule of a deployment: `q` the backend query (GPU, dims per rank, KV dtype), `tp` the
// tensor-parallel size, and the sizes of determine_chunked_prefill_workspace_size
// (sparse_mla_attention.py ~274-291). Unavailable off SM100, for other shapes, a quantized KV
// cache, or a backend and TP the table lacks.
MaskedMhaRule masked_mha_rule(const BackendQuery& q, AttentionBackendKind backend, int tp, int max_model_len,
                              int max_num_seqs, int block_size, int index_topk);

// _use_masked_mha for the batch's prefill rows.
bool masked_mha_by_lengths(const MaskedMhaRule& rule, int max_query_len, long long max_seq_len, bool has_context);

// The longest per-request piece of plan_mla_context_chunks (mla_attention.py ~1943-2010) over the
// prefill rows' context lengths in batch order: what each context chunk's max_seq_len is built from.
int max_context_chunk_seq_len(std::span<const int> context_lens, int workspace_size, int block_size);

// _masked_mha_workspace_fits: the bit-packed top-k masks of `batch` prefill rows fit the 128 MiB
// int32 workspace (GLOBAL_TOPK_MASK_MAX_BYTES).
bool masked_mha_workspace_fits(int batch, int max_query_len, int max_context_chunk_seq_len);

}  // namespace mlasim
