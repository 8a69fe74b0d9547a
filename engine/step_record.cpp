// The step record: what one engine step scheduled, routed and handed out, built for the sinks
// (engine/run_record.h), its lists' storage reused from step to step.
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "base/check.h"
#include "engine/engine.h"

namespace mlasim {

void Engine::record_step(const SchedulerOutput& out, const BatchRoute& route) {
  StepRecord& s = current_;
  s.step = step_;
  s.arrived.swap(arrived_);
  arrived_.clear();
  s.num_scheduled_tokens.assign(out.num_scheduled_tokens.begin(), out.num_scheduled_tokens.end());
  s.total_num_scheduled_tokens = out.total_num_scheduled_tokens;
  record_rows(route);
  s.reorder_modified = route.modified;
  s.counts = route.counts;
  s.has_linear_attention = routing_.linear_attention_layers;
  if (s.has_linear_attention) record_linear_attention(out);
  s.wording = route.wording;
  record_context_chunks();
  record_requests(out);
  s.num_free_blocks = scheduler_.num_free_blocks();
  s.num_running = static_cast<int>(scheduler_.running().size());
  s.num_waiting = scheduler_.num_waiting();
  s.time_ns = now_ns_;
  s.duration_ns = step_duration_ns();
}

void Engine::record_rows(const BatchRoute& route) {
  MLASIM_CHECK(route.rows.size() == batch_.rows().size(), "route and batch disagree on the row count");
  current_.rows.resize(route.rows.size());
  for (std::size_t i = 0; i < route.rows.size(); ++i) {
    const BatchRow& row = batch_.rows()[i];
    const RowRoute& rr = route.rows[i];
    MLASIM_CHECK(rr.q == row.num_scheduled_tokens && rr.nct == row.num_computed_tokens, "route row mismatch");
    RowRecord& rec = current_.rows[i];
    rec.index = row.req_id;
    rec.q = row.num_scheduled_tokens;
    rec.nct = row.num_computed_tokens;
    rec.prompt_len = row.num_prompt_tokens;
    std::tie(rec.region, rec.is_decode, rec.path, rec.fresh_on_decode_path) =
        std::tie(rr.region, rr.is_decode, rr.path, rr.fresh_on_decode_path);
  }
}

void Engine::record_linear_attention(const SchedulerOutput& out) {
  linear_rows_.resize(batch_.rows().size());
  for (std::size_t i = 0; i < linear_rows_.size(); ++i) {
    const BatchRow& row = batch_.rows()[i];
    LinearAttentionRow& r = linear_rows_[i];
    r = {row.num_scheduled_tokens, row.num_computed_tokens, row.num_prompt_tokens,
         batch_.prefill_len(static_cast<int>(i)), -1};
  }
  // The scheduler lists scheduled_spec_decode_tokens in scheduling order, a subsequence of
  // num_scheduled_tokens: one merge pass finds each one's slot, and so its row.
  std::size_t i = 0;
  for (const auto& [id, drafts] : out.scheduled_spec_decode_tokens) {
    while (i < out.num_scheduled_tokens.size() && out.num_scheduled_tokens[i].first != id) ++i;
    MLASIM_CHECK(i < out.num_scheduled_tokens.size(), "drafts of an unscheduled request, or out of order");
    const int row = batch_.row_of_slot(out.scheduled_slots[i++]);
    MLASIM_CHECK(row >= 0, "drafts of a request the batch does not hold");
    linear_rows_[static_cast<std::size_t>(row)].num_drafts = static_cast<int>(drafts.size());
  }
  current_.linear_attention =
      split_linear_attention(linear_rows_, routing_.num_speculative_tokens, routing_.model_runner);
}

void Engine::record_context_chunks() {
  ContextChunksRecord& c = current_.context_chunks;
  c.workspace_size = c.max_context_chunk = c.num_chunks = 0;
  c.indices.clear();
  if (!metadata_.prefill || metadata_.prefill->chunked_context.num_chunks == 0) {
    c.chunk_lens.clear();
    return;
  }
  const PrefillMetadata& p = *metadata_.prefill;
  c.workspace_size = p.chunked_context.workspace_size;
  c.max_context_chunk = p.chunked_context.max_context_chunk;
  c.num_chunks = p.chunked_context.num_chunks;
  for (int r = 0; r < p.num_rows; ++r)
    c.indices.push_back(batch_.rows()[static_cast<std::size_t>(p.row_start + r)].req_id);
  c.chunk_lens = p.chunked_context.seq_lens;
}

namespace {

// Appends (id, ids) to `lists`, the ids copied into a vector taken from `spare` when it has one:
// the last step's lists give their storage back (recycle_lists), so a step allocates nothing
// once the run has warmed up.
void append_list(std::vector<std::pair<int, std::vector<int>>>& lists, std::vector<std::vector<int>>& spare, int id,
                 std::span<const int> ids) {
  std::vector<int> v;
  if (!spare.empty()) {
    v = std::move(spare.back());
    spare.pop_back();
  }
  v.assign(ids.begin(), ids.end());
  lists.emplace_back(id, std::move(v));
}

void recycle_lists(std::vector<std::pair<int, std::vector<int>>>& lists, std::vector<std::vector<int>>& spare) {
  for (auto& [id, v] : lists) spare.push_back(std::move(v));
  lists.clear();
}

}  // namespace

void Engine::record_requests(const SchedulerOutput& out) {
  StepRecord& s = current_;
  s.new_reqs.clear();
  recycle_lists(s.new_block_ids, spare_lists_);
  for (const NewRequestData& n : out.scheduled_new_reqs) {
    s.new_reqs.push_back(n.req_id);
    append_list(s.new_block_ids, spare_lists_, n.req_id, n.block_ids);
  }
  s.resumed.clear();
  const CachedRequestData& c = out.scheduled_cached_reqs;
  for (std::size_t i = 0; i < static_cast<std::size_t>(c.num_reqs()); ++i) {
    if (c.resumed_from_preemption[i]) s.resumed.push_back(c.req_ids[i]);
    if (!c.new_block_ids[i].empty()) append_list(s.new_block_ids, spare_lists_, c.req_ids[i], c.new_block_ids[i]);
  }
  s.grouped = scheduler_.grouped_kv_cache_manager() != nullptr;
  s.new_group_block_ids.clear();
  if (s.grouped) {  // every group's: a new request's tables, a cached one's additions when it has any
    for (const NewRequestData& n : out.scheduled_new_reqs) s.new_group_block_ids.emplace_back(n.req_id, n.group_block_ids);
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.num_reqs()); ++i)
      if (!c.new_group_block_ids[i].empty()) s.new_group_block_ids.emplace_back(c.req_ids[i], c.new_group_block_ids[i]);
  }
  s.preempted.assign(out.preempted_req_ids.begin(), out.preempted_req_ids.end());
  s.finished.clear();  // filled once the step's samples are in
  recycle_lists(s.spec_decode_tokens, spare_lists_);
  for (const auto& [id, drafts] : out.scheduled_spec_decode_tokens) append_list(s.spec_decode_tokens, spare_lists_, id, drafts);
}

}  // namespace mlasim
