// `mlasim run --resolved FILE`: the trace exactly as the replay ran it, for tools that drive
// another engine with it (tools/conformance). JSONL: a header line with the resolved configuration
// (model, scheduler, engine, the routing threshold and support, timing), then one line per request
// in the order the engine admitted them, each with its prompt token ids, sampling parameters,
// teacher-forced outputs, accepted drafts and the step that admitted it. docs/spec/interfaces.md
// "Resolved trace" documents every field.
#pragma once

#include <memory>
#include <string>

#include "attention/routing_config.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "config/scenario.h"
#include "engine/step_sink.h"
#include "scenario/request_stream.h"

namespace mlasim {

class ResolvedTraceSink final : public StepSink {
 public:
  // `scenario` outlives the sink; `routing` is the engine's (Engine::routing_config()).
  Status open(const std::string& path, const Scenario& scenario, const RoutingConfig& routing);
  // Writes the requests this step admitted (StepRecord::arrived), drawn from the sink's own pass
  // over the scenario's requests, which arrive in the same order.
  void on_step(const StepRecord& step) override;
  // A run stopped where vLLM cannot go on: the requests that arrived for that step too.
  void on_end(const RunTotals& totals) override;
  Status finish() { return file_.finish(); }
  Status publish() { return file_.publish(); }
  AtomicOutputFile& output() { return file_; }

 private:
  const Scenario* scenario_ = nullptr;
  void write_arrived(const std::vector<int>& arrived, int step);

  std::unique_ptr<RequestStream> requests_;
  AtomicOutputFile file_;
};

}  // namespace mlasim
