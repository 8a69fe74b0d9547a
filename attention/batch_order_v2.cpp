// Model runner V2's row order.
#include "attention/batch_order_v2.h"

#include <algorithm>
#include <tuple>

#include "base/check.h"

namespace mlasim {

std::vector<ReqId> sort_batch_req_ids(const SchedulerOutput& out, int decode_query_len) {
  struct Key {
    ReqId id;
    bool no_drafts;
    bool not_decode_len;
    int q;
  };
  std::vector<Key> keys;
  keys.reserve(out.num_scheduled_tokens.size());
  for (const auto& [id, q] : out.num_scheduled_tokens) {
    const bool drafts = std::any_of(out.scheduled_spec_decode_tokens.begin(), out.scheduled_spec_decode_tokens.end(),
                                    [id = id](const auto& e) { return e.first == id && !e.second.empty(); });
    keys.push_back({id, !drafts, q != decode_query_len, q});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.no_drafts, a.not_decode_len, a.q) < std::tie(b.no_drafts, b.not_decode_len, b.q);
  });
  std::vector<ReqId> ids;
  ids.reserve(keys.size());
  for (const Key& k : keys) ids.push_back(k.id);
  return ids;
}

void order_batch_v2(InputBatch& batch, const SchedulerOutput& out, int decode_query_len) {
  const std::vector<ReqId> ids = sort_batch_req_ids(out, decode_query_len);
  MLASIM_CHECK(static_cast<int>(ids.size()) == batch.num_reqs(), "the batch does not hold exactly the scheduled requests");
  for (int pos = 0; pos < static_cast<int>(ids.size()); ++pos) {
    const std::optional<int> row = batch.row_of(ids[static_cast<std::size_t>(pos)]);
    MLASIM_CHECK(row.has_value() && *row >= pos, "a scheduled request is missing from the batch");
    if (*row != pos) batch.swap_rows(pos, *row);
  }
}

}  // namespace mlasim
