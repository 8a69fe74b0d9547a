// Streaming the Trace Event JSON.
#include "output/trace_event_sink.h"

#include "base/formats/json_writer.h"
#include "engine/step_words.h"

namespace mlasim {
namespace {

constexpr int kPid = 1;

JsonWriter start(const char* ph, std::string_view name, double ts, int tid) {
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object();
  w.key("ph").value(ph);
  w.key("name").value(name);
  w.key("ts").fixed(ts, 3);
  w.key("pid").value(kPid);
  w.key("tid").value(tid);
  return w;
}

const char* slice_name(const RowRecord& row) {
  if (row.fresh_on_decode_path) return "FRESH PREFILL on the decode path (mqa)";
  return row.path == MlaPath::kMha ? "prefill path (mha)" : "decode path (mqa)";
}

}  // namespace

Status TraceEventSink::open(const std::string& path, const std::string& scenario_name) {
  if (Status st = file_.open(path); !st) return st;
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object();
  w.key("scenario").value(scenario_name);
  w.key("clock").value(clock_ == TraceClock::kStep ? "step (1 ms per step)" : "simulated (the scenario's timing model)");
  w.key("generator").value("mlasim");
  w.end_object();
  file_.write("{\"displayTimeUnit\": \"ms\", \"otherData\": " + w.take() + ", \"traceEvents\": [\n");
  JsonWriter p = start("M", "process_name", 0, 0);
  p.key("args").begin_object().key("name").value("mlasim " + scenario_name + ": requests").end_object();
  p.end_object();
  event(p.take());
  return Status::Ok();
}

void TraceEventSink::event(const std::string& json) {
  if (!first_) file_.write(",\n");
  first_ = false;
  file_.write(json);
}

double TraceEventSink::ts_us(const StepRecord& step) const {
  return clock_ == TraceClock::kStep ? step.step * 1000.0 : static_cast<double>(step.time_ns) / 1000.0;
}

double TraceEventSink::dur_us(const StepRecord& step) const {
  return clock_ == TraceClock::kStep ? 1000.0 : static_cast<double>(step.duration_ns) / 1000.0;
}

void TraceEventSink::on_step(const StepRecord& step) {
  const double ts = ts_us(step), dur = dur_us(step);
  for (int index : step.arrived) {
    const int tid = index + 1;
    tids_.emplace(index, tid);
    JsonWriter name = start("M", "thread_name", ts, tid);
    name.key("args").begin_object().key("name").value(names()[index]).end_object();
    name.end_object();
    event(name.take());
    JsonWriter order = start("M", "thread_sort_index", ts, tid);
    order.key("args").begin_object().key("sort_index").value(tid).end_object();
    order.end_object();
    event(order.take());
  }
  for (std::size_t pos = 0; pos < step.rows.size(); ++pos) {
    const RowRecord& row = step.rows[pos];
    const int* tid = tids_.find(row.index);
    if (row.q == 0 || tid == nullptr) continue;
    JsonWriter w = start("X", slice_name(row), ts, *tid);
    w.key("dur").fixed(dur, 3);
    w.key("cat").value(to_string(row.path));
    if (row.fresh_on_decode_path) w.key("cname").value("terrible");
    w.key("args").begin_object();
    w.key("step").value(step.step);
    w.key("q").value(row.q);
    w.key("nct").value(row.nct);
    w.key("P").value(row.prompt_len);
    w.key("region").value(to_string(row.region));
    w.key("path").value(to_string(row.path));
    w.key("fresh_on_decode_path").value(row.fresh_on_decode_path);
    w.key("reason").value(row_reason(step, pos));
    w.end_object();
    w.end_object();
    event(w.take());
  }
  auto instant = [&](int index, const char* what) {
    const int* tid = tids_.find(index);
    if (tid == nullptr) return;
    JsonWriter w = start("i", what, ts, *tid);
    w.key("s").value("t");
    w.key("args").begin_object().key("step").value(step.step).end_object();
    w.end_object();
    event(w.take());
  };
  for (int index : step.preempted) instant(index, "preempted");
  auto counter = [&](const char* name, std::initializer_list<std::pair<const char*, long long>> values) {
    JsonWriter w = start("C", name, ts, 0);
    w.key("args").begin_object();
    for (const auto& [k, v] : values) w.key(k).value(v);
    w.end_object();
    w.end_object();
    event(w.take());
  };
  counter("split tokens", {{"num_mqa", step.counts.num_mqa_tokens}, {"num_mha", step.counts.num_mha_tokens}});
  counter("requests", {{"running", step.num_running}, {"waiting", step.num_waiting}});
  counter("free KV blocks", {{"free_blocks", step.num_free_blocks}});
  for (int index : step.finished) {
    const int* tid = tids_.find(index);
    if (tid == nullptr) continue;
    JsonWriter w = start("i", "finished", ts + dur, *tid);
    w.key("s").value("t");
    w.key("args").begin_object().key("step").value(step.step).end_object();
    w.end_object();
    event(w.take());
    tids_.erase(index);
  }
}

void TraceEventSink::on_end(const RunTotals& /*totals*/) { file_.write("\n]}\n"); }

}  // namespace mlasim
