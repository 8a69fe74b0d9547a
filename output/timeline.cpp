// Recording a replay's timeline grid step by step, in memory bounded by the grid's size.
#include "output/timeline.h"

#include <algorithm>
#include <numeric>

#include "engine/step_words.h"

namespace mlasim {

const char* to_string(CellState s) {
  switch (s) {
    case CellState::kNone: return "none";
    case CellState::kFinished: return "finished";
    case CellState::kWaiting: return "waiting";
    case CellState::kDecode: return "decode";
    case CellState::kPrefill: return "prefill";
    case CellState::kPreempted: return "preempted";
    case CellState::kFreshOnDecode: return "fresh-on-decode";
  }
  return "none";
}

CellState TimelineCell::state() const {
  for (int s = kNumCellStates - 1; s > 0; --s)
    if (count[static_cast<std::size_t>(s)] > 0) return static_cast<CellState>(s);
  return CellState::kNone;
}

Timeline::Timeline(const Scenario& scenario, std::string title)
    : title_(std::move(title)), num_blocks_(std::max(0, scenario.scheduler.num_gpu_blocks - 1)) {
  const int n = scenario.num_requests;
  requests_per_lane_ = std::max(1, (n + kMaxLanes - 1) / kMaxLanes);
  const int num_lanes = (n + requests_per_lane_ - 1) / requests_per_lane_;
  lanes_.resize(static_cast<std::size_t>(num_lanes));
  for (int l = 0; l < num_lanes; ++l) {
    TimelineLane& lane = lanes_[static_cast<std::size_t>(l)];
    lane.first_index = l * requests_per_lane_;
    lane.last_index = std::min(n, (l + 1) * requests_per_lane_) - 1;
    lane.label = requests_per_lane_ == 1 ? "request " + std::to_string(lane.first_index)
                                         : "requests " + std::to_string(lane.first_index) + "\u2013" +
                                               std::to_string(lane.last_index);
  }
  lane_counts_.resize(lanes_.size());
  cells_.resize(lanes_.size());
}

int Timeline::lane_of(int index) {
  if (lanes_.empty()) {  // a scenario always has requests; this keeps the grid valid regardless
    lanes_.emplace_back();
    lane_counts_.emplace_back();
    cells_.emplace_back(columns_.size());
  }
  const int lane = std::min(index / requests_per_lane_, static_cast<int>(lanes_.size()) - 1);
  if (requests_per_lane_ == 1) lanes_[static_cast<std::size_t>(lane)].label = names()[index];
  return lane;
}

int Timeline::intern_reason(const std::string& reason) {
  if (reason.empty()) return -1;
  auto [it, added] = reason_ids_.emplace(reason, static_cast<int>(reasons_.size()));
  if (added) reasons_.push_back(reason);
  return it->second;
}

void Timeline::start_column(const StepRecord& step) {
  if (columns_.empty() || columns_.back().num_steps == steps_per_column_) {
    TimelineColumn c;
    c.first_step = step.step;
    c.min_free_blocks = step.num_free_blocks;
    columns_.push_back(c);
    for (auto& lane : cells_) lane.emplace_back();
    if (static_cast<int>(columns_.size()) > kMaxColumns) merge_columns();
  }
  TimelineColumn& c = columns_.back();
  c.last_step = step.step;
  ++c.num_steps;
  c.num_mqa += step.counts.num_mqa_tokens;
  c.num_mha += step.counts.num_mha_tokens;
  c.num_fresh_on_decode += step.num_fresh_on_decode_path();
  c.min_free_blocks = std::min(c.min_free_blocks, step.num_free_blocks);
}

// Halves the columns: each new one covers two old ones. Cells keep their counts; the per-row
// detail only describes one-step cells, so it is dropped.
void Timeline::merge_columns() {
  const std::size_t n = columns_.size(), half = (n + 1) / 2;
  for (std::size_t i = 0; i < half; ++i) {
    TimelineColumn merged = columns_[2 * i];
    if (2 * i + 1 < n) {
      const TimelineColumn& b = columns_[2 * i + 1];
      merged.last_step = b.last_step;
      merged.num_steps += b.num_steps;
      merged.num_mqa += b.num_mqa;
      merged.num_mha += b.num_mha;
      merged.num_fresh_on_decode += b.num_fresh_on_decode;
      merged.min_free_blocks = std::min(merged.min_free_blocks, b.min_free_blocks);
    }
    columns_[i] = merged;
  }
  columns_.resize(half);
  for (auto& lane : cells_) {
    for (std::size_t i = 0; i < half; ++i) {
      TimelineCell merged;
      merged.count = lane[2 * i].count;
      if (2 * i + 1 < n)
        for (int s = 0; s < kNumCellStates; ++s)
          merged.count[static_cast<std::size_t>(s)] += lane[2 * i + 1].count[static_cast<std::size_t>(s)];
      lane[i] = merged;
    }
    lane.resize(half);
  }
  steps_per_column_ *= 2;
}

void Timeline::on_step(const StepRecord& step) {
  // Per lane, the requests in each state move as events happen; each step then adds the lane's
  // unscheduled ones to its cell, so a step costs the rows it ran plus the lanes, not the queue.
  auto counter = [this](const Tracked& t) -> int& {
    LaneCounts& lc = lane_counts_[static_cast<std::size_t>(t.lane)];
    return t.state == CellState::kWaiting ? lc.waiting : t.state == CellState::kPreempted ? lc.preempted : lc.running;
  };
  auto move = [&](Tracked& t, CellState to) {
    --counter(t);
    t.state = to;
    ++counter(t);
  };
  for (int index : step.arrived) {
    alive_.emplace(index, Tracked{lane_of(index), CellState::kWaiting});
    ++counter(alive_.at(index));
  }
  start_column(step);
  ++num_steps_;
  const std::size_t column = columns_.size() - 1;
  const bool detailed = steps_per_column_ == 1 && requests_per_lane_ == 1;
  for (int index : step.preempted)
    if (Tracked* t = alive_.find(index)) move(*t, CellState::kPreempted);
  std::vector<int> scheduled(lanes_.size(), 0);
  for (std::size_t r = 0; r < step.rows.size(); ++r) {
    const RowRecord& row = step.rows[r];
    Tracked* tracked = alive_.find(row.index);
    if (row.q == 0 || tracked == nullptr) continue;
    Tracked& t = *tracked;
    move(t, CellState::kDecode);
    ++scheduled[static_cast<std::size_t>(t.lane)];
    const CellState s = row.fresh_on_decode_path ? CellState::kFreshOnDecode
                        : row.path == MlaPath::kMha ? CellState::kPrefill
                                                    : CellState::kDecode;
    TimelineCell& cell = cells_[static_cast<std::size_t>(t.lane)][column];
    ++cell.count[static_cast<std::size_t>(s)];
    if (detailed) {
      cell.q = row.q;
      cell.nct = row.nct;
      cell.prompt_len = row.prompt_len;
      cell.reason = intern_reason(row_reason(step, r));
    }
    TimelineLane& lane = lanes_[static_cast<std::size_t>(t.lane)];
    if (lane.first_row < 0) lane.first_row = static_cast<std::int64_t>(num_steps_) * 65536 + static_cast<std::int64_t>(r);
  }
  // The lane's requests not scheduled in this step: waiting (never ran, or running without tokens
  // this step), preempted (in this step or earlier, until resumed), finished (before this step).
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    TimelineCell& cell = cells_[l][column];
    const LaneCounts& lc = lane_counts_[l];
    cell.count[static_cast<std::size_t>(CellState::kWaiting)] += lc.waiting + lc.running - scheduled[l];
    cell.count[static_cast<std::size_t>(CellState::kPreempted)] += lc.preempted;
    cell.count[static_cast<std::size_t>(CellState::kFinished)] += lc.finished;
  }
  for (int index : step.finished) {
    Tracked* t = alive_.find(index);
    if (t == nullptr) continue;
    --counter(*t);
    ++lane_counts_[static_cast<std::size_t>(t->lane)].finished;
    alive_.erase(index);
  }
}

std::vector<int> Timeline::lane_order() const {
  std::vector<int> order(lanes_.size());
  std::iota(order.begin(), order.end(), 0);
  if (requests_per_lane_ == 1) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const std::int64_t ra = lanes_[static_cast<std::size_t>(a)].first_row,
                         rb = lanes_[static_cast<std::size_t>(b)].first_row;
      if ((ra < 0) != (rb < 0)) return rb < 0;
      return ra < rb;
    });
  }
  return order;
}

}  // namespace mlasim
