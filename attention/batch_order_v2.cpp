// Model runner V2's row order.
#include "attention/batch_order_v2.h"

#include <algorithm>
#include <array>

#include "base/check.h"

namespace mlasim {

namespace {

// Whether each scheduled request has drafts, in num_scheduled_tokens order. The scheduler lists
// scheduled_spec_decode_tokens in scheduling order, a subsequence of num_scheduled_tokens: one
// merge pass; any other output (built by hand) falls back to a search per request.
void draft_flags(const SchedulerOutput& out, std::vector<char>& has_drafts) {
  const auto& spec = out.scheduled_spec_decode_tokens;
  has_drafts.assign(out.num_scheduled_tokens.size(), 0);
  if (spec.empty()) return;
  std::size_t p = 0;
  for (std::size_t i = 0; i < out.num_scheduled_tokens.size() && p < spec.size(); ++i) {
    if (spec[p].first != out.num_scheduled_tokens[i].first) continue;
    has_drafts[i] = !spec[p].second.empty();
    ++p;
  }
  if (p == spec.size()) return;
  for (std::size_t i = 0; i < out.num_scheduled_tokens.size(); ++i) {
    const ReqId id = out.num_scheduled_tokens[i].first;
    has_drafts[i] = std::any_of(spec.begin(), spec.end(), [id](const auto& e) { return e.first == id && !e.second.empty(); });
  }
}

}  // namespace

void sort_batch_req_ids(const SchedulerOutput& out, int decode_query_len, std::vector<ReqId>& ids) {
  // The key (no drafts, q != decode_query_len, q) has four classes by its first two parts, and q
  // is constant in the two classes with q == decode_query_len: a stable counting pass places the
  // classes, and only the rows of the other two (prefill chunks, short draft rows: few per step)
  // are sorted by q. The same order as one stable sort by the whole key.
  thread_local std::vector<char> has_drafts;
  thread_local std::vector<std::pair<int, ReqId>> uneven;
  const std::size_t n = out.num_scheduled_tokens.size();
  if (out.scheduled_spec_decode_tokens.empty()) {  // no drafts: the q == decode_query_len rows, then the rest by q
    ids.clear();
    uneven.clear();
    for (const auto& [id, q] : out.num_scheduled_tokens) {
      if (q == decode_query_len) ids.push_back(id);
      else uneven.emplace_back(q, id);
    }
    std::stable_sort(uneven.begin(), uneven.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& e : uneven) ids.push_back(e.second);
    return;
  }
  draft_flags(out, has_drafts);
  auto cls = [&](std::size_t i) {
    return (has_drafts[i] ? 0 : 2) + (out.num_scheduled_tokens[i].second != decode_query_len ? 1 : 0);
  };
  std::array<std::size_t, 5> start{};
  for (std::size_t i = 0; i < n; ++i) ++start[static_cast<std::size_t>(cls(i)) + 1];
  for (std::size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
  ids.resize(n);
  std::array<std::size_t, 4> next{start[0], start[1], start[2], start[3]};
  for (std::size_t i = 0; i < n; ++i) ids[next[static_cast<std::size_t>(cls(i))]++] = out.num_scheduled_tokens[i].first;
  for (const int c : {1, 3}) {  // the classes whose q varies: stably by q
    const std::size_t b = start[static_cast<std::size_t>(c)], e = start[static_cast<std::size_t>(c) + 1];
    if (e - b < 2) continue;
    uneven.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (cls(i) == c) uneven.emplace_back(out.num_scheduled_tokens[i].second, out.num_scheduled_tokens[i].first);
    std::stable_sort(uneven.begin(), uneven.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t k = 0; k < uneven.size(); ++k) ids[b + k] = uneven[k].second;
  }
}

std::vector<ReqId> sort_batch_req_ids(const SchedulerOutput& out, int decode_query_len) {
  std::vector<ReqId> ids;
  sort_batch_req_ids(out, decode_query_len, ids);
  return ids;
}

void order_batch_v2(InputBatch& batch, const SchedulerOutput& out, int decode_query_len) {
  thread_local std::vector<ReqId> ids;
  thread_local std::vector<int> from;
  sort_batch_req_ids(out, decode_query_len, ids);
  MLASIM_CHECK(static_cast<int>(ids.size()) == batch.num_reqs(), "the batch does not hold exactly the scheduled requests");
  // The rows keep last step's order: a row already in place costs one compare. A request that
  // left shifts the rows behind it by one place each, and condense moved the last rows into the
  // holes; so the row last found at an offset is tried at that offset first, then the batch's map.
  const std::span<const BatchRow> rows = batch.rows();
  const int n = static_cast<int>(ids.size());
  from.resize(ids.size());
  bool in_place = true;
  int offset = 0;
  for (int pos = 0; pos < n; ++pos) {
    const ReqId id = ids[static_cast<std::size_t>(pos)];
    int row = pos;
    if (rows[static_cast<std::size_t>(pos)].req_id != id) {
      const int guess = pos + offset;
      if (offset != 0 && guess >= 0 && guess < n && rows[static_cast<std::size_t>(guess)].req_id == id) {
        row = guess;
      } else {
        const std::optional<int> found = batch.row_of(id);
        MLASIM_CHECK(found.has_value(), "a scheduled request is missing from the batch");
        row = *found;
      }
      offset = row - pos;
      in_place = false;
    }
    from[static_cast<std::size_t>(pos)] = row;
  }
  if (!in_place) batch.permute_rows(from);
}

}  // namespace mlasim
