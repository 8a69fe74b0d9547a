// The decode/prefill split of docs/spec/routing.md §2, rule by rule.
#include "attention/split.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>

#include "base/check.h"

namespace mlasim {
namespace {

// The verdict of `rule`: rows [0, num_decodes) are decodes, the rest prefills.
SplitResult decided(SplitResult split, SplitRule rule, std::span<const int> query_lens, int num_decodes) {
  const auto first_prefill = query_lens.begin() + num_decodes;
  SplitCounts& counts = split.counts;
  counts.num_decodes = num_decodes;
  counts.num_prefills = static_cast<int>(query_lens.size()) - num_decodes;
  counts.num_decode_tokens = std::accumulate(query_lens.begin(), first_prefill, 0);
  counts.num_prefill_tokens = std::accumulate(first_prefill, query_lens.end(), 0);
  counts.num_mqa_tokens = counts.num_decode_tokens;
  counts.num_mha_tokens = counts.num_prefill_tokens;
  split.rule = rule;
  return split;
}

// Rule 4: the first row flagged a prefill and why; -1 when no row is.
std::pair<int, PrefillCause> first_prefill_row(std::span<const int> query_lens, std::span<const std::uint8_t> is_prefilling,
                                               int decode_threshold, bool require_uniform,
                                               bool treat_short_extends_as_decodes) {
  for (std::size_t i = 0; i < query_lens.size(); ++i) {
    const int row = static_cast<int>(i);
    if (require_uniform && query_lens[i] != query_lens[0]) return {row, PrefillCause::kQueryDiffersFromFirst};
    if (!require_uniform && query_lens[i] > decode_threshold) return {row, PrefillCause::kQueryAboveT};
    if (!treat_short_extends_as_decodes && is_prefilling[i]) return {row, PrefillCause::kIsPrefilling};
  }
  return {-1, PrefillCause::kNone};
}

}  // namespace

const char* to_string(SplitRule r) {
  switch (r) {
    case SplitRule::kEmpty: return "empty";
    case SplitRule::kMaxQueryLen: return "max query length <= threshold";
    case SplitRule::kFirstRowAboveT: return "first row above threshold";
    case SplitRule::kUniformPadded: return "uniform query lengths";
    case SplitRule::kNoPrefill: return "no prefill row";
    case SplitRule::kFirstPrefill: return "first prefill row";
  }
  return "?";
}

SplitResult split_decodes_and_prefills(std::span<const int> query_lens, std::span<const std::uint8_t> is_prefilling,
                                       int decode_threshold, bool require_uniform,
                                       bool treat_short_extends_as_decodes) {
  SplitResult split;
  split.decode_threshold = decode_threshold;
  const int num_reqs = static_cast<int>(query_lens.size());
  if (num_reqs == 0) return split;
  MLASIM_CHECK(treat_short_extends_as_decodes || is_prefilling.size() == query_lens.size(),
               "is_prefilling must have one entry per row");
  split.max_query_len = *std::max_element(query_lens.begin(), query_lens.end());
  split.first_query_len = query_lens[0];
  if (split.max_query_len <= decode_threshold && (!require_uniform || decode_threshold <= 1) &&
      treat_short_extends_as_decodes)
    return decided(split, SplitRule::kMaxQueryLen, query_lens, num_reqs);
  if (query_lens[0] > decode_threshold) return decided(split, SplitRule::kFirstRowAboveT, query_lens, 0);
  if (require_uniform && treat_short_extends_as_decodes &&
      std::all_of(query_lens.begin(), query_lens.end(), [&](int q) { return q == query_lens[0] || q == 0; }))
    return decided(split, SplitRule::kUniformPadded, query_lens, num_reqs);
  const auto [first_prefill, cause] = first_prefill_row(query_lens, is_prefilling, decode_threshold, require_uniform,
                                                        treat_short_extends_as_decodes);
  if (first_prefill < 0) return decided(split, SplitRule::kNoPrefill, query_lens, num_reqs);
  split.first_prefill_cause = cause;
  return decided(split, SplitRule::kFirstPrefill, query_lens, first_prefill);
}

}  // namespace mlasim
