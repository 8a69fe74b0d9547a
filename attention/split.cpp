// The decode/prefill split of docs/spec/routing.md §2, rule by rule.
#include "attention/split.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "sim/check.h"

namespace mlasim {

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

SplitResult split_decodes_and_prefills(std::span<const int> q, const std::vector<bool>& is_prefilling, int t,
                                       bool require_uniform, bool treat_short) {
  SplitResult r;
  const int n = static_cast<int>(q.size());
  if (n == 0) return r;
  MLASIM_CHECK(treat_short || is_prefilling.size() == q.size(), "is_prefilling must have one entry per row");
  const int total = std::accumulate(q.begin(), q.end(), 0);
  const int max_q = *std::max_element(q.begin(), q.end());
  auto all_decodes = [&](SplitRule rule) {
    r.num_decodes = n;
    r.num_decode_tokens = total;
    r.rule = rule;
    return r;
  };

  if (max_q <= t && (!require_uniform || t <= 1) && treat_short) return all_decodes(SplitRule::kMaxQueryLen);
  if (q[0] > t) {
    r.num_prefills = n;
    r.num_prefill_tokens = total;
    r.rule = SplitRule::kFirstRowAboveT;
    return r;
  }
  if (require_uniform && treat_short &&
      std::all_of(q.begin(), q.end(), [&](int x) { return x == q[0] || x == 0; }))
    return all_decodes(SplitRule::kUniformPadded);

  int first = -1;
  for (int i = 0; i < n && first < 0; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const bool by_q = require_uniform ? q[k] != q[0] : q[k] > t;
    if (by_q) {
      first = i;
      r.first_prefill_cause = require_uniform ? PrefillCause::kQueryDiffersFromFirst : PrefillCause::kQueryAboveT;
    } else if (!treat_short && is_prefilling[k]) {
      first = i;
      r.first_prefill_cause = PrefillCause::kIsPrefilling;
    }
  }
  if (first < 0) return all_decodes(SplitRule::kNoPrefill);
  r.num_decodes = first;
  r.num_prefills = n - first;
  r.num_decode_tokens = std::accumulate(q.begin(), q.begin() + first, 0);
  r.num_prefill_tokens = total - r.num_decode_tokens;
  r.rule = SplitRule::kFirstPrefill;
  return r;
}

}  // namespace mlasim
