// Batch reorder versions of docs/spec/routing.md §1.
#include "attention/reorder.h"

#include <algorithm>
#include <cstddef>

#include "attention/input_batch.h"
#include "base/check.h"

namespace mlasim {
namespace {

using Swaps = std::vector<std::pair<int, int>>;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// vLLM <= 0.11 and the early-2025 MLA builder: decodes are scanned from the back, non-decodes
// from the front; swap while the decode sits at an index >= num_decodes.
Swaps two_region_swaps(const std::vector<Region>& regions) {
  std::vector<int> decodes, prefills;
  for (int i = 0; i < static_cast<int>(regions.size()); ++i)
    (regions[sz(i)] == Region::kDecode ? decodes : prefills).push_back(i);
  const int nd = static_cast<int>(decodes.size());
  const int np = static_cast<int>(prefills.size());
  Swaps swaps;
  for (int i = 1; i <= std::min(nd, np); ++i) {
    const int decode_idx = decodes[sz(nd - i)];
    if (decode_idx < nd) break;
    swaps.emplace_back(prefills[sz(i - 1)], decode_idx);
  }
  return swaps;
}

// The 3/4-region algorithm: rows at mismatched positions M move so that src[j] lands on M[j],
// src = M stably sorted by current region. Realised as swaps: for each j in order, bring the row
// src[j] into M[j] by one swap with wherever it currently sits (always a position of M). Each
// permutation cycle of length L costs L - 1 swaps; rows outside M are never touched.
Swaps swap_cycle_swaps(const std::vector<Region>& regions) {
  const int n = static_cast<int>(regions.size());
  std::vector<Region> target = regions;
  std::sort(target.begin(), target.end());
  std::vector<int> mismatched;
  for (int i = 0; i < n; ++i)
    if (regions[sz(i)] != target[sz(i)]) mismatched.push_back(i);
  Swaps swaps;
  if (mismatched.empty()) return swaps;
  std::vector<int> src = mismatched;
  std::stable_sort(src.begin(), src.end(), [&](int a, int b) { return regions[sz(a)] < regions[sz(b)]; });

  std::vector<int> at(sz(n)), where(sz(n));  // at[pos] = original row there; where[row] = its pos
  for (int i = 0; i < n; ++i) at[sz(i)] = where[sz(i)] = i;
  for (std::size_t j = 0; j < mismatched.size(); ++j) {
    const int pos = mismatched[j];
    const int row = src[j];
    const int from = where[sz(row)];
    if (from == pos) continue;
    swaps.emplace_back(pos, from);
    const int displaced = at[sz(pos)];
    std::swap(at[sz(pos)], at[sz(from)]);
    where[sz(row)] = pos;
    where[sz(displaced)] = from;
  }
  return swaps;
}

}  // namespace

ReorderVersion reorder_version(EngineProfile profile) {
  switch (profile) {
    case EngineProfile::kVllm2025Early: return ReorderVersion::kMlaBuilderQ1;
    case EngineProfile::kVllm011: return ReorderVersion::kTwoRegion;
    case EngineProfile::kVllm012: return ReorderVersion::kThreeRegionQFirst;
    case EngineProfile::kVllm3Region: return ReorderVersion::kThreeRegion;
    case EngineProfile::kVllm033: return ReorderVersion::kFourRegion;
    case EngineProfile::kStrict: return ReorderVersion::kFourRegion;
    case EngineProfile::kSglang: return ReorderVersion::kNone;
  }
  return ReorderVersion::kNone;
}

const char* to_string(ReorderVersion v) {
  switch (v) {
    case ReorderVersion::kNone: return "none";
    case ReorderVersion::kMlaBuilderQ1: return "mla-builder-q1";
    case ReorderVersion::kTwoRegion: return "2-region";
    case ReorderVersion::kThreeRegionQFirst: return "3-region-q-first";
    case ReorderVersion::kThreeRegion: return "3-region";
    case ReorderVersion::kFourRegion: return "4-region";
  }
  return "?";
}

ReorderResult reorder_rows(std::span<const RowInput> rows, ReorderVersion version, int decode_threshold) {
  ReorderResult reordered;
  reordered.regions.reserve(rows.size());
  for (const RowInput& row : rows) reordered.regions.push_back(row_region(row, version, decode_threshold));
  switch (version) {
    case ReorderVersion::kNone: break;
    case ReorderVersion::kMlaBuilderQ1:
    case ReorderVersion::kTwoRegion: reordered.swaps = two_region_swaps(reordered.regions); break;
    case ReorderVersion::kThreeRegionQFirst:
    case ReorderVersion::kThreeRegion:
    case ReorderVersion::kFourRegion: reordered.swaps = swap_cycle_swaps(reordered.regions); break;
  }
  reordered.order.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) reordered.order[i] = static_cast<int>(i);
  for (const auto& [i, j] : reordered.swaps) std::swap(reordered.order[sz(i)], reordered.order[sz(j)]);
  reordered.modified = !reordered.swaps.empty();
  return reordered;
}

ReorderResult reorder_rows(std::span<const RowInput> rows, const RoutingConfig& config) {
  return reorder_rows(rows, reorder_version(config.profile), reorder_threshold(config));
}

std::vector<RowInput> row_inputs(const InputBatch& batch) {
  std::vector<RowInput> rows;
  row_inputs(batch, rows);
  return rows;
}

void row_inputs(const InputBatch& batch, std::vector<RowInput>& rows) {
  rows.resize(sz(batch.num_reqs()));
  std::size_t i = 0;
  for (const BatchRow& row : batch.rows()) rows[i++] = {row.num_scheduled_tokens, row.num_computed_tokens, row.num_prompt_tokens};
}

ReorderResult reorder_input_batch(InputBatch& batch, const RoutingConfig& config) {
  ReorderResult reordered = reorder_rows(row_inputs(batch), config);
  for (const auto& [i, j] : reordered.swaps) batch.swap_rows(i, j);
  return reordered;
}

}  // namespace mlasim
