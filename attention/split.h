// split_decodes_and_prefills (vllm/v1/attention/backends/utils.py, docs/spec/routing.md §2): how many
// leading rows of the reordered batch the decode path takes, looking only at query lengths (and
// at is_prefilling when short extends are not treated as decodes).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/split_counts.h"

namespace mlasim {

// Which step of §2 decided the split.
enum class SplitRule {
  kEmpty,                // no rows
  kMaxQueryLen,          // rule 1: max_q <= T (and not require_uniform or T <= 1): all decodes
  kFirstRowAboveT,       // rule 2: q[0] > T: all prefills
  kUniformPadded,        // rule 3: every q equals q[0] or is 0: all decodes
  kNoPrefill,            // rule 5: no row flagged prefill: all decodes
  kFirstPrefill,         // rule 5: rows [0, f) decodes, [f, n) prefills whatever their q
};
const char* to_string(SplitRule r);

// Why row f was flagged a prefill (rule 3/4).
enum class PrefillCause { kNone, kQueryAboveT, kQueryDiffersFromFirst, kIsPrefilling };

// The split and the facts it was decided on (what its explanation quotes).
struct SplitResult {
  // num_decodes, num_decode_tokens, num_prefills, num_prefill_tokens; num_mqa_tokens and
  // num_mha_tokens are MLA's forward split of dense attention (§4): the decode tokens take the
  // decode path, the prefill tokens the prefill path.
  SplitCounts counts;
  SplitRule rule = SplitRule::kEmpty;
  PrefillCause first_prefill_cause = PrefillCause::kNone;  // for kFirstPrefill
  int decode_threshold = 0;
  int max_query_len = 0;
  int first_query_len = 0;  // query_lens[0]
  friend bool operator==(const SplitResult&, const SplitResult&) = default;
};

// is_prefilling[i] = (nct < P) per row; read only when treat_short_extends_as_decodes is false
// (may be empty otherwise).
SplitResult split_decodes_and_prefills(std::span<const int> query_lens, std::span<const std::uint8_t> is_prefilling,
                                       int decode_threshold, bool require_uniform,
                                       bool treat_short_extends_as_decodes = true);

}  // namespace mlasim
