// The model runner's batch reorder (vllm/v1/attention/backends/utils.py
// reorder_batch_to_split_decodes_and_prefills, docs/spec/routing.md §1) in its historical versions.
// Produces the permutation and the swaps, so a caller can apply them to the persistent batch.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "attention/routing_config.h"

namespace mlasim {

class InputBatch;

// A row's region; the target order is ascending. Versions use subsets (see row_region).
enum class Region : int { kDecode = 0, kShortExtend = 1, kLongExtend = 2, kPrefill = 3 };
// "decode" | "short_extend" | "long_extend" | "prefill"; inline, so a caller's length of it folds.
inline const char* to_string(Region r) {
  switch (r) {
    case Region::kDecode: return "decode";
    case Region::kShortExtend: return "short_extend";
    case Region::kLongExtend: return "long_extend";
    case Region::kPrefill: return "prefill";
  }
  return "?";
}

enum class ReorderVersion {
  kNone,           // sglang: batch-level dispatch, rows stay in order
  kMlaBuilderQ1,   // vllm-2025-early: MLA builder, q == 1 is decode, 2-region swap
  kTwoRegion,      // vllm-0.11: q <= T is decode whatever nct, 2-region swap
  kThreeRegionQFirst,  // vllm-0.12: decode (q <= T whatever nct) / extend / prefill, swap-cycle
  kThreeRegion,    // vllm-3region: decode / extend / prefill, swap-cycle algorithm
  kFourRegion,     // vllm-0.33, strict: decode / short extend / long extend / prefill
};
ReorderVersion reorder_version(EngineProfile profile);
const char* to_string(ReorderVersion v);

// One row of a step: q = scheduled tokens, nct = computed tokens before the step, P = prompt length.
struct RowInput {
  int q = 0;
  int nct = 0;
  int prompt_len = 0;
};

// The row's region under a version (T = decode threshold):
// 4 regions: 0 if nct > 0, q <= T, nct >= P; 1 if nct > 0, q <= T, nct < P; 2 if nct > 0, q > T;
//            3 if nct == 0.
// 3 regions: 0 if nct > 0, q <= T; 2 (extend) if nct > 0, q > T; 3 if nct == 0.
// 3 regions, q first (0.11.1-0.13.x): 0 if q <= T; 2 if q > T, nct > 0; 3 if q > T, nct == 0.
// 2 regions: 0 if q <= T, else 3.   MLA builder: 0 if q == 1, else 3.   kNone: as 4 regions.
inline Region row_region(const RowInput& row, ReorderVersion version, int decode_threshold) {
  switch (version) {
    case ReorderVersion::kMlaBuilderQ1: return row.q == 1 ? Region::kDecode : Region::kPrefill;
    case ReorderVersion::kTwoRegion: return row.q <= decode_threshold ? Region::kDecode : Region::kPrefill;
    case ReorderVersion::kThreeRegionQFirst:  // vLLM 0.11.1-0.13.x (0.12.0 utils.py:931-933)
      if (row.q <= decode_threshold) return Region::kDecode;
      return row.nct == 0 ? Region::kPrefill : Region::kLongExtend;
    case ReorderVersion::kThreeRegion:
      if (row.nct == 0) return Region::kPrefill;
      return row.q <= decode_threshold ? Region::kDecode : Region::kLongExtend;
    case ReorderVersion::kNone:
    case ReorderVersion::kFourRegion:
      if (row.nct == 0) return Region::kPrefill;
      if (row.q > decode_threshold) return Region::kLongExtend;
      return row.nct >= row.prompt_len ? Region::kDecode : Region::kShortExtend;
  }
  return Region::kPrefill;
}

struct ReorderResult {
  std::vector<Region> regions;              // per input row
  std::vector<int> order;                   // order[pos] = input index of the row now at pos
  std::vector<std::pair<int, int>> swaps;   // (i, j) position swaps, applied in sequence
  bool modified = false;                    // any swap (vLLM's return value)
};

// Pure: reorders an explicit batch. Swap-cycle versions (3/4 regions): target = regions sorted;
// M = positions whose region differs from the target; src = M stably sorted by current region;
// row src[j] ends at M[j]; rows already in their target region never move. 2-region versions:
// swap the i-th last decode with the i-th first non-decode while that decode sits at an index >=
// the number of decodes.
ReorderResult reorder_rows(std::span<const RowInput> rows, ReorderVersion version, int decode_threshold);
ReorderResult reorder_rows(std::span<const RowInput> rows, const RoutingConfig& config);

std::vector<RowInput> row_inputs(const InputBatch& batch);
// The same into `rows` (its capacity kept).
void row_inputs(const InputBatch& batch, std::vector<RowInput>& rows);

// Applies the reorder of config's profile to the persistent batch in place (the swaps persist to
// later steps, docs/spec/scheduler.md §8). Returns the reorder: `modified` (vLLM's return value),
// the regions and the order, both by row index before the swaps.
ReorderResult reorder_input_batch(InputBatch& batch, const RoutingConfig& config);

}  // namespace mlasim
