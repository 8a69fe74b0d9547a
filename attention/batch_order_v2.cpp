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

void sort_batch_entries(const SchedulerOutput& out, int decode_query_len, std::vector<int>& entries) {
  // The key (no drafts, q != decode_query_len, q) has four classes by its first two parts, and q
  // is constant in the two classes with q == decode_query_len: a stable counting pass places the
  // classes, and only the rows of the other two (prefill chunks, short draft rows: few per step)
  // are sorted by q. The same order as one stable sort by the whole key.
  thread_local std::vector<char> has_drafts;
  thread_local std::vector<std::pair<int, int>> uneven;  // (q, entry)
  const int n = static_cast<int>(out.num_scheduled_tokens.size());
  auto q_of = [&](int i) { return out.num_scheduled_tokens[static_cast<std::size_t>(i)].second; };
  if (out.scheduled_spec_decode_tokens.empty()) {  // no drafts: the q == decode_query_len rows, then the rest by q
    entries.clear();
    uneven.clear();
    for (int i = 0; i < n; ++i) {
      if (q_of(i) == decode_query_len) entries.push_back(i);
      else uneven.emplace_back(q_of(i), i);
    }
    std::stable_sort(uneven.begin(), uneven.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& e : uneven) entries.push_back(e.second);
    return;
  }
  draft_flags(out, has_drafts);
  auto cls = [&](int i) { return (has_drafts[static_cast<std::size_t>(i)] ? 0 : 2) + (q_of(i) != decode_query_len ? 1 : 0); };
  std::array<int, 5> start{};
  for (int i = 0; i < n; ++i) ++start[static_cast<std::size_t>(cls(i)) + 1];
  for (std::size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
  entries.resize(static_cast<std::size_t>(n));
  std::array<int, 4> next{start[0], start[1], start[2], start[3]};
  for (int i = 0; i < n; ++i) entries[static_cast<std::size_t>(next[static_cast<std::size_t>(cls(i))]++)] = i;
  for (const int c : {1, 3}) {  // the classes whose q varies: stably by q
    const int b = start[static_cast<std::size_t>(c)], e = start[static_cast<std::size_t>(c) + 1];
    if (e - b < 2) continue;
    uneven.clear();
    for (int i = 0; i < n; ++i)
      if (cls(i) == c) uneven.emplace_back(q_of(i), i);
    std::stable_sort(uneven.begin(), uneven.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t k = 0; k < uneven.size(); ++k) entries[static_cast<std::size_t>(b) + k] = uneven[k].second;
  }
}

std::vector<ReqId> sort_batch_req_ids(const SchedulerOutput& out, int decode_query_len) {
  std::vector<int> entries;
  sort_batch_entries(out, decode_query_len, entries);
  std::vector<ReqId> ids;
  ids.reserve(entries.size());
  for (int e : entries) ids.push_back(out.num_scheduled_tokens[static_cast<std::size_t>(e)].first);
  return ids;
}

void order_batch_v2(InputBatch& batch, const SchedulerOutput& out, int decode_query_len) {
  thread_local std::vector<int> entries;
  thread_local std::vector<int> from;
  sort_batch_entries(out, decode_query_len, entries);
  MLASIM_CHECK(static_cast<int>(entries.size()) == batch.num_reqs() && out.scheduled_slots.size() == entries.size(),
               "the batch does not hold exactly the scheduled requests");
  // The rows keep last step's order: a row already in place costs one compare; any other is found
  // by its request's slot.
  const std::span<const BatchRow> rows = batch.rows();
  const int n = static_cast<int>(entries.size());
  from.resize(entries.size());
  bool in_place = true;
  for (int pos = 0; pos < n; ++pos) {
    const int slot = out.scheduled_slots[static_cast<std::size_t>(entries[static_cast<std::size_t>(pos)])];
    int row = pos;
    if (rows[static_cast<std::size_t>(pos)].slot != slot) {
      row = batch.row_of_slot(slot);
      MLASIM_CHECK(row >= 0, "a scheduled request is missing from the batch");
      in_place = false;
    }
    from[static_cast<std::size_t>(pos)] = row;
  }
  if (!in_place) batch.permute_rows(from);
}

}  // namespace mlasim
