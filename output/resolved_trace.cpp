// The resolved trace writer.
#include "output/resolved_trace.h"

#include "base/check.h"
#include "config/request_tokens.h"
#include "base/formats/json_writer.h"
#include "scenario/kv_cache_groups.h"
#include "scenario/scenario_keys.h"

namespace mlasim {
namespace {

void write_header(JsonWriter& w, const Scenario& s, const RoutingConfig& rc) {
  const ModelConfig& m = s.model;
  w.begin_object();
  w.key("type").value("header");
  w.key("format").value("mlasim-resolved-trace");
  w.key("version").value(1);
  w.key("scenario").value(s.name);
  w.key("model").begin_object();
  w.key("vocab_size").value(m.vocab_size);
  w.key("eos_token_id").value(m.eos_token_id);
  w.key("max_position_embeddings").value(m.max_position_embeddings);
  w.key("sparse_mla").value(m.index_topk.has_value());
  w.end_object();
  w.key("scheduler").begin_object();
  write_section_json(w, s, "scheduler");  // scenario/scenario_keys.h: every scheduler key
  // Several KV cache groups (cache.kv_cache_groups): the layout, block sizes resolved.
  if (s.scheduler.kv_cache_layout.hybrid()) write_kv_cache_layout_json(w, s.scheduler.kv_cache_layout);
  w.end_object();
  w.key("engine").begin_object();
  write_section_json(w, s, "engine");  // profile, attention_backend, model_runner
  w.key("decode_threshold").value(rc.decode_threshold);
  w.key("query_len_support").value(to_string(rc.query_len_support));
  w.key("require_uniform").value(rc.require_uniform);
  // Whether the scenario set them (engine.reorder_batch_threshold, engine.query_len_support)
  // rather than the backend's metadata builder.
  w.key("decode_threshold_given").value(s.engine.reorder_batch_threshold.has_value());
  w.key("query_len_support_given").value(s.engine.query_len_support.has_value());
  w.end_object();
  w.key("timing").begin_object();
  write_section_json(w, s, "timing");
  w.end_object();
  w.key("timed_arrivals").value(s.timed_arrivals);
  w.key("num_requests").value(s.num_requests);
  w.end_object();
}

void write_request(JsonWriter& w, const RequestSpec& r, int index, int admitted_step) {
  w.begin_object();
  w.key("type").value("request");
  w.key("index").value(index);
  w.key("id").value(r.id);
  w.key("arrival_step").value(r.arrival_step);
  if (r.arrival_time_ns) w.key("arrival_time_ns").value(static_cast<long long>(*r.arrival_time_ns));
  w.key("admitted_step").value(admitted_step);
  w.key("prompt").int_array(r.prompt);
  w.key("max_tokens").value(r.max_tokens);
  w.key("min_tokens").value(r.min_tokens);
  w.key("ignore_eos").value(r.ignore_eos);
  w.key("stop_token_ids").int_array(r.stop_token_ids);
  w.key("priority").value(r.priority);
  // Every teacher-forced output the request can sample or draft (listed, then seeded).
  w.key("output").int_array(r.output);
  // Accepted drafts per verification step; past the list every draft is accepted.
  w.key("accepted_drafts").int_array(r.accepted_drafts);
  w.end_object();
}

}  // namespace

Status ResolvedTraceSink::open(const std::string& path, const Scenario& scenario, const RoutingConfig& routing) {
  if (Status st = file_.open(path); !st) return st;
  scenario_ = &scenario;
  requests_ = open_request_stream(scenario);
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  write_header(w, scenario, routing);
  file_.write(w.str());
  return Status::Ok();
}

void ResolvedTraceSink::on_step(const StepRecord& step) { write_arrived(step.arrived, step.step); }

void ResolvedTraceSink::on_end(const RunTotals& totals) {
  if (totals.stopped_step >= 0) write_arrived(totals.arrived_at_stop, totals.stopped_step);
}

void ResolvedTraceSink::write_arrived(const std::vector<int>& arrived, int step) {
  for (int index : arrived) {
    MLASIM_CHECK(requests_->peek() != nullptr && requests_->peek_index() == index,
                 "resolved trace: request " + names()[index] + " arrived out of the scenario's arrival order");
    RequestSpec spec = resolved_request(requests_->pop(), *scenario_);
    // Drafts run up to 2k ids past the last sampled output (1 + accepted, then k drafts).
    extend_outputs(spec, *scenario_, spec.max_tokens + 2 * scenario_->scheduler.num_speculative_tokens);
    JsonWriter w(0, JsonWriter::Layout::kOneLine);
    write_request(w, spec, index, step);
    file_.write(w.str());
  }
}

}  // namespace mlasim
