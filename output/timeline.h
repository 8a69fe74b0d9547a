// The timeline of a replay as a grid (docs/design.md "Pictures"): one lane per request, one
// column per step that ran, each cell saying what the request did in that step (its MLA path,
// waiting, preempted, finished), plus per-column split counts and free KV blocks. Recorded as a
// sink in bounded memory: past kMaxColumns steps a column covers 2^k consecutive steps, past
// kMaxLanes requests a lane covers ceil(n / kMaxLanes) consecutive requests (scenario order), and a
// cell then counts its (request, step) pairs per state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/scenario.h"
#include "engine/slot_table.h"
#include "engine/step_sink.h"

namespace mlasim {

// What a request did in a step. Ordered by how much it matters: an aggregated cell is drawn in
// the state of highest rank it holds (a fresh prefill on the decode path is never hidden).
enum class CellState : std::uint8_t { kNone, kFinished, kWaiting, kDecode, kPrefill, kPreempted, kFreshOnDecode };
constexpr int kNumCellStates = 7;
const char* to_string(CellState s);  // none | finished | waiting | decode | prefill | preempted | fresh-on-decode

struct TimelineCell {
  std::array<std::int32_t, kNumCellStates> count{};  // (request, step) pairs in each state
  // A one-step, one-request cell that ran: the row as the batch had it, and its reason.
  int q = 0, nct = 0, prompt_len = 0;
  int reason = -1;  // index into Timeline::reasons(), -1 when none
  CellState state() const;  // the highest-ranked state with a count, kNone for an empty cell
};

struct TimelineColumn {
  int first_step = 0, last_step = 0;  // step numbers it covers (steps that ran, idle ones skipped)
  int num_steps = 0;                  // steps that ran in it
  std::int64_t num_mqa = 0, num_mha = 0, num_fresh_on_decode = 0;  // summed over its steps
  int min_free_blocks = 0;
};

struct TimelineLane {
  std::string label;          // the request id, or "requests i–j" for a lane of several
  int first_index = 0, last_index = 0;  // scenario indices it covers
  std::int64_t first_row = -1;  // (column, batch row) of its first scheduled row, for the lane order
};

class Timeline final : public StepSink {
 public:
  static constexpr int kMaxColumns = 200;
  static constexpr int kMaxLanes = 64;

  explicit Timeline(const Scenario& scenario, std::string title = "");
  void on_step(const StepRecord& step) override;

  const std::string& title() const { return title_; }
  int steps_per_column() const { return steps_per_column_; }
  int requests_per_lane() const { return requests_per_lane_; }
  int num_steps() const { return num_steps_; }
  int num_blocks() const { return num_blocks_; }
  const std::vector<TimelineColumn>& columns() const { return columns_; }
  // Lanes in drawing order: one request per lane in the order their rows first entered the batch
  // (never scheduled ones last, by scenario order); grouped lanes in scenario order.
  std::vector<int> lane_order() const;
  const std::vector<TimelineLane>& lanes() const { return lanes_; }
  const TimelineCell& cell(int lane, int column) const {
    return cells_[static_cast<std::size_t>(lane)][static_cast<std::size_t>(column)];
  }
  const std::vector<std::string>& reasons() const { return reasons_; }

 private:
  struct Tracked {
    int lane = 0;
    CellState state = CellState::kWaiting;  // kWaiting, kPreempted or kDecode (running)
  };
  struct LaneCounts {
    int waiting = 0, preempted = 0, running = 0, finished = 0;
  };
  int lane_of(int index);
  void start_column(const StepRecord& step);
  void merge_columns();
  int intern_reason(const std::string& reason);

  std::string title_;
  int requests_per_lane_ = 1;
  int steps_per_column_ = 1;
  int num_steps_ = 0;
  int num_blocks_ = 0;
  std::vector<TimelineColumn> columns_;
  std::vector<TimelineLane> lanes_;
  std::vector<LaneCounts> lane_counts_;
  std::vector<std::vector<TimelineCell>> cells_;  // [lane][column]
  SlotTable<Tracked> alive_;  // by scenario index
  std::vector<std::string> reasons_;
  std::unordered_map<std::string, int> reason_ids_;
};

}  // namespace mlasim
