// Sinks that write the run as it happens: the run JSON document (`--json`, the same bytes as
// run_record_to_json) and JSONL (`--jsonl`: a header line, one line per step, then one per
// request in scenario order). Both publish atomically on commit().
#pragma once

#include <string>

#include "sim/status.h"
#include "tools/harness/atomic_file.h"
#include "tools/harness/json_writer.h"
#include "tools/harness/scenario_order_spill.h"
#include "tools/harness/step_sink.h"

namespace mlasim {

class RunJsonSink final : public StepSink {
 public:
  Status open(const std::string& path, const std::string& scenario_name);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  void on_end(const RunTotals& totals) override;
  bool wants_row_reasons() const override { return true; }
  Status commit() { return file_.commit(); }

 private:
  AtomicOutputFile file_;
  JsonWriter w_;
  ScenarioOrderSpill requests_;
};

class RunJsonlSink final : public StepSink {
 public:
  Status open(const std::string& path, const std::string& scenario_name);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  void on_end(const RunTotals& totals) override;
  bool wants_row_reasons() const override { return true; }
  Status commit() { return file_.commit(); }

 private:
  AtomicOutputFile file_;
  ScenarioOrderSpill requests_;
};

}  // namespace mlasim
