// A sink that writes the run as it happens: the run JSON document (`--json`, the same bytes as
// run_record_to_json) or JSONL (`--jsonl`: a header line, one line per step, then one per request
// in scenario order, with simulated times). Published atomically on commit().
#pragma once

#include <string>

#include "base/status.h"
#include "base/atomic_file.h"
#include "base/formats/json_writer.h"
#include "output/scenario_order_spill.h"
#include "engine/step_sink.h"

namespace mlasim {

enum class RunFileFormat { kJson, kJsonl };

class RunFileSink final : public StepSink {
 public:
  explicit RunFileSink(RunFileFormat format);
  Status open(const std::string& path, const std::string& scenario_name);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  bool wants_token_ids() const override { return true; }
  void on_end(const RunTotals& totals) override;
  Status commit() { return file_.commit(); }
  // commit() in two steps, for outputs published together (AtomicOutputFile).
  Status finish() { return file_.finish(); }
  Status publish() { return file_.publish(); }
  AtomicOutputFile& output() { return file_; }

 private:
  RunFileFormat format_;
  AtomicOutputFile file_;
  JsonWriter w_;     // the document (kJson)
  JsonWriter line_;  // a JSONL step line, its buffer reused from step to step
  ScenarioOrderSpill requests_;
};

}  // namespace mlasim
