// Streaming run JSON and JSONL.
#include "output/run_json_sink.h"

#include "output/run_json.h"

namespace mlasim {

RunFileSink::RunFileSink(RunFileFormat format)
    : format_(format),
      w_(0, format == RunFileFormat::kJson ? JsonWriter::Layout::kIndented : JsonWriter::Layout::kOneLine),
      line_(0, JsonWriter::Layout::kOneLine) {}

Status RunFileSink::open(const std::string& path, const std::string& scenario_name) {
  if (Status st = file_.open(path); !st) return st;
  if (format_ == RunFileFormat::kJson) {
    begin_run_json(w_, scenario_name);
    file_.write(w_.take());
    return Status::Ok();
  }
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object();
  w.key("type").value("header");
  w.key("format").value("mlasim-run-jsonl");
  w.key("version").value(1);
  w.key("scenario").value(scenario_name);
  w.end_object();
  file_.write(w.str());
  return Status::Ok();
}

void RunFileSink::on_step(const StepRecord& step) {
  if (format_ == RunFileFormat::kJson) {
    w_.begin_object();
    write_step_fields(w_, step, names());
    w_.end_object();
    file_.write(w_.text());
    w_.clear_text();
    return;
  }
  line_.clear_text();
  line_.begin_object();
  line_.key("type").value("step");
  write_step_fields(line_, step, names());
  line_.key("time_ns").value(static_cast<long long>(step.time_ns));
  line_.key("duration_ns").value(static_cast<long long>(step.duration_ns));
  line_.end_object();
  file_.write(line_.text());
  file_.write("\n");
}

void RunFileSink::on_request_finished(const RequestRecord& request) {
  const bool json = format_ == RunFileFormat::kJson;
  // In the document a request is an element of the top-level "requests" array (depth 2).
  JsonWriter w(json ? 2 : 0, json ? JsonWriter::Layout::kIndented : JsonWriter::Layout::kOneLine);
  w.begin_object();
  if (!json) w.key("type").value("request");
  write_request_fields(w, request);
  if (!json) {
    w.key("arrival_ns").value(static_cast<long long>(request.arrival_ns));
    w.key("first_token_ns").value(static_cast<long long>(request.first_token_ns));
    w.key("finish_ns").value(static_cast<long long>(request.finish_ns));
  }
  w.end_object();
  requests_.add(request.index, json ? w.take() : w.str());
}

void RunFileSink::on_end(const RunTotals& totals) {
  // A stopped run lists the requests still unfinished there too, in scenario order with the rest.
  for (const RequestRecord& r : totals.unfinished_at_stop) on_request_finished(r);
  if (format_ == RunFileFormat::kJsonl) {
    requests_.for_each([&](std::string_view line) { file_.write(line); });
    if (totals.stopped_step >= 0) {
      JsonWriter w(0, JsonWriter::Layout::kOneLine);
      w.begin_object();
      w.key("type").value("stopped");
      w.key("step").value(totals.stopped_step);
      w.key("reason").value(totals.stopped_reason);
      w.end_object();
      file_.write(w.str());
    }
    return;
  }
  w_.end_array();
  w_.key("requests").begin_array();
  requests_.for_each([&](std::string_view text) {
    w_.raw_element(text);
    file_.write(w_.take());
  });
  w_.end_array();
  if (totals.stopped_step >= 0) {
    w_.key("stopped").begin_object();
    w_.key("step").value(totals.stopped_step);
    w_.key("reason").value(totals.stopped_reason);
    w_.end_object();
  }
  w_.end_object();
  file_.write(w_.str());
}

}  // namespace mlasim
