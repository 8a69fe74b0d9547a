// Streaming run JSON and JSONL.
#include "tools/harness/run_json_sink.h"

#include "tools/harness/run_json.h"

namespace mlasim {
Status RunJsonSink::open(const std::string& path, const std::string& scenario_name) {
  if (Status st = file_.open(path); !st) return st;
  begin_run_json(w_, scenario_name);
  file_.write(w_.take());
  return Status::Ok();
}

void RunJsonSink::on_step(const StepRecord& step) {
  w_.begin_object();
  write_step_fields(w_, step);
  w_.end_object();
  file_.write(w_.take());
}

void RunJsonSink::on_request_finished(const RequestRecord& request) {
  JsonWriter w(2);  // an element of the top-level "requests" array
  w.begin_object();
  write_request_fields(w, request);
  w.end_object();
  requests_.add(request.index, w.take());
}

void RunJsonSink::on_end(const RunTotals& /*totals*/) {
  w_.end_array();
  w_.key("requests").begin_array();
  requests_.for_each([&](std::string_view text) {
    w_.raw_element(text);
    file_.write(w_.take());
  });
  w_.end_array();
  w_.end_object();
  file_.write(w_.str());
}

Status RunJsonlSink::open(const std::string& path, const std::string& scenario_name) {
  if (Status st = file_.open(path); !st) return st;
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

void RunJsonlSink::on_step(const StepRecord& step) {
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object();
  w.key("type").value("step");
  write_step_fields(w, step);
  w.key("time_ns").value(static_cast<long long>(step.time_ns));
  w.key("duration_ns").value(static_cast<long long>(step.duration_ns));
  w.end_object();
  file_.write(w.str());
}

void RunJsonlSink::on_request_finished(const RequestRecord& request) {
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object();
  w.key("type").value("request");
  write_request_fields(w, request);
  w.key("arrival_ns").value(static_cast<long long>(request.arrival_ns));
  w.key("first_token_ns").value(static_cast<long long>(request.first_token_ns));
  w.key("finish_ns").value(static_cast<long long>(request.finish_ns));
  w.end_object();
  requests_.add(request.index, w.str());
}

void RunJsonlSink::on_end(const RunTotals& /*totals*/) {
  requests_.for_each([&](std::string_view line) { file_.write(line); });
}

}  // namespace mlasim
