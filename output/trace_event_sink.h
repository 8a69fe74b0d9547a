// A replay as a Chrome / Perfetto trace (`mlasim run --trace-out FILE.json`), in the Trace Event
// format's JSON object form: one process "requests" with a track (thread) per request holding a
// complete ("X") slice per step it was scheduled in (args: step, q, nct, P, region, path, reason),
// instant events where it was preempted or finished, and counters num_mqa/num_mha, running/waiting
// and free KV blocks per step. Streamed as the run goes (memory: the requests alive) and
// published atomically on commit(). Time is the simulated clock of the scenario's timing model
// (docs/spec/timing.md) or, with TraceClock::kStep, one millisecond per step.
#pragma once

#include <string>

#include "base/status.h"
#include "base/atomic_file.h"
#include "engine/slot_table.h"
#include "engine/step_sink.h"

namespace mlasim {

enum class TraceClock { kSimulated, kStep };

class TraceEventSink final : public StepSink {
 public:
  explicit TraceEventSink(TraceClock clock) : clock_(clock) {}
  Status open(const std::string& path, const std::string& scenario_name);
  void on_step(const StepRecord& step) override;
  void on_end(const RunTotals& totals) override;
  Status commit() { return file_.commit(); }
  // commit() in two steps, for outputs published together (AtomicOutputFile).
  Status finish() { return file_.finish(); }
  Status publish() { return file_.publish(); }
  AtomicOutputFile& output() { return file_; }

 private:
  void event(const std::string& json);
  double ts_us(const StepRecord& step) const;
  double dur_us(const StepRecord& step) const;

  TraceClock clock_;
  AtomicOutputFile file_;
  bool first_ = true;
  SlotTable<int> tids_;  // alive request's scenario index -> its track (scenario index + 1)
};

}  // namespace mlasim
