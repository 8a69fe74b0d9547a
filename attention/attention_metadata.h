// The attention metadata of one step (vLLM CommonAttentionMetadata + MLA's prefill/decode
// metadata, docs/spec/routing.md §4), in reordered row order, built from a BatchRoute and the rows'
// block tables. Plain data; validate() checks every internal consistency.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/chunked_context.h"
#include "attention/route.h"
#include "attention/split_counts.h"

namespace mlasim {

// Block ids of the row at reordered position `row` (its whole block table).
using BlockIdsFn = std::function<std::span<const int>(int row)>;

// MLA prefill path (forward_mha): rows [row_start, num_reqs) in reordered order.
struct PrefillMetadata {
  int row_start = 0;
  int num_rows = 0;
  int token_start = 0;               // = counts.num_mqa_tokens
  std::vector<int> query_start_loc;  // relative to token_start, num_rows + 1 entries
  int max_query_len = 0;
  ChunkedContextMetadata chunked_context;  // over these rows' context_lens
};

// MLA decode path (forward_mqa): rows [0, num_rows). Their block tables are the batch's
// AttentionMetadata::block_table[0, num_rows), not copied (a step would copy every decode row's
// table twice).
struct DecodeMetadata {
  int num_rows = 0;
  std::vector<int> query_start_loc;  // num_rows + 1 entries
  std::vector<int> seq_lens;
  int max_query_len = 0;
};

struct AttentionMetadata {
  EngineProfile profile = EngineProfile::kVllm033;
  bool sparse_mla = false;
  int block_size = 16;

  int num_reqs = 0;
  int num_actual_tokens = 0;
  int max_query_len = 0;
  int max_seq_len = 0;
  std::vector<int> query_start_loc;  // num_reqs + 1: exclusive prefix sum of q
  std::vector<int> seq_lens;         // nct + q
  std::vector<int> context_lens;     // nct (num_computed_tokens)
  std::vector<int> num_prompt_tokens;
  std::vector<std::uint8_t> is_prefilling;  // nct < P (0 / 1: a byte per row, not std::vector<bool>'s bits)
  std::vector<int> positions;        // per token: nct + j
  std::vector<std::vector<int>> block_table;  // per row
  std::vector<int> slot_mapping;     // per token: block_table[pos / B] * B + pos % B (-1 if uncovered)
  // false: built with MetadataDetail::kRows, so positions, block_table and slot_mapping are empty.
  bool has_token_arrays = true;

  SplitCounts counts;                // the route's split and MLA's forward split
  std::vector<std::uint8_t> is_decode;      // per row: the split's verdict (0 / 1)
  std::vector<Region> regions;       // per row
  std::vector<MlaPath> paths;        // per row

  std::optional<PrefillMetadata> prefill;  // when a row takes the prefill path
  std::optional<DecodeMetadata> decode;    // when a row takes the decode path

  // "" or the first inconsistency (a kRows build is one: it has nothing to check tokens against): prefix sums, counts summing to the batch, seq_lens and
  // positions, slot mapping within the block table, decodes before prefills (vLLM profiles),
  // decode-path rows before prefill-path rows and matching num_mqa_tokens, sub-metadata.
  std::string validate() const;
};

// What build_attention_metadata fills. kRows leaves out what only a kernel reads (positions,
// block_table, slot_mapping: per token and per block, most of the build's cost); a replay without a
// model builds them only on the steps it checks the metadata (Engine::step).
enum class MetadataDetail { kFull, kRows };

// W: the profile's chunked-prefill workspace size (early-2025 cap 131072, else 65536).
int chunked_prefill_workspace_size(const RoutingConfig& config);

AttentionMetadata build_attention_metadata(const BatchRoute& route, const RoutingConfig& config, const BlockIdsFn& block_ids);
// The same into `out`, reusing its vectors' capacity (the engine's per-step path).
void build_attention_metadata(AttentionMetadata& out, const BatchRoute& route, const RoutingConfig& config,
                              const BlockIdsFn& block_ids, MetadataDetail detail = MetadataDetail::kFull);
// block_ids[row] in reordered order.
AttentionMetadata build_attention_metadata(const BatchRoute& route, const RoutingConfig& config,
                                           std::span<const std::vector<int>> block_ids);

}  // namespace mlasim
