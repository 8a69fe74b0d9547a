// Serialises a RunRecord with docs/design.md's field names.
#include "output/run_json.h"

#include <charconv>
#include <cstring>
#include <string>

#include "base/formats/json_writer.h"
#include "engine/step_words.h"

namespace mlasim {
namespace {

void id_map(JsonWriter& w, const char* key, const std::vector<std::pair<int, std::vector<int>>>& m,
            const RequestNames& names) {
  w.key(key).begin_object();
  for (const auto& [index, ids] : m) w.key(names[index]).int_array(ids);
  w.end_object();
}

void id_array(JsonWriter& w, const char* key, const std::vector<int>& requests, const RequestNames& names) {
  w.key(key).begin_array();
  for (int index : requests) w.value(names[index]);
  w.end_array();
}

}  // namespace

namespace {

// A literal's bytes at p (sizes known at compile time: plain stores).
template <std::size_t N>
char* put(char* p, const char (&text)[N]) {
  std::memcpy(p, text, N - 1);
  return p + N - 1;
}
char* put(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}
char* put_int(char* p, int v) { return std::to_chars(p, p + 11, v).ptr; }

}  // namespace

void write_row_json(JsonWriter& w, const RowRecord& r, std::string_view id, std::string_view reason) {
  // Every row of every step goes through here (most of a run file's bytes): the object is put
  // together with plain stores in a scratch buffer sized for its worst case, then handed to the
  // writer whole, laid out as the writer's own calls would lay it out (begin_object, key, value).
  const bool one_line = w.layout() == JsonWriter::Layout::kOneLine;
  const std::size_t inner = one_line ? 0 : 2 * static_cast<std::size_t>(w.level() + 1);
  thread_local std::string scratch;
  const std::size_t bound = 9 * (inner + 4) + 256 + json_string_max(id.size()) + reason.size() + 2;
  if (scratch.size() < bound) scratch.resize(bound);
  char* const start = scratch.data();
  char* p = start;
  auto member = [&](char* q, std::string_view key_and_colon, bool first) {
    if (!first) *q++ = ',';
    if (one_line) {
      if (!first) *q++ = ' ';
    } else {
      *q++ = '\n';
      std::memset(q, ' ', inner);
      q += inner;
    }
    return put(q, key_and_colon);
  };
  *p++ = '{';
  p = put_json_string(member(p, "\"id\": ", true), id);
  p = put_int(member(p, "\"q\": ", false), r.q);
  p = put_int(member(p, "\"nct\": ", false), r.nct);
  p = put_int(member(p, "\"prompt_len\": ", false), r.prompt_len);
  // The region's and the path's names, like the reason, need no escape.
  p = put(put(member(p, "\"region\": \"", false), std::string_view(to_string(r.region))), "\"");
  p = put(put(member(p, "\"path\": \"", false), std::string_view(to_string(r.path))), "\"");
  p = put(member(p, "\"fresh_on_decode_path\": ", false), r.fresh_on_decode_path ? std::string_view("true") : "false");
  p = put(member(p, "\"reason\": \"", false), reason);  // no escapes in the words (route_explain.h)
  *p++ = '"';
  if (!one_line) {
    *p++ = '\n';
    std::memset(p, ' ', inner - 2);
    p += inner - 2;
  }
  *p++ = '}';
  w.raw_element(std::string_view(start, static_cast<std::size_t>(p - start)));
}

void write_split_counts(JsonWriter& w, const SplitCounts& counts) {
  w.key("num_decodes").value(counts.num_decodes);
  w.key("num_decode_tokens").value(counts.num_decode_tokens);
  w.key("num_prefills").value(counts.num_prefills);
  w.key("num_prefill_tokens").value(counts.num_prefill_tokens);
  w.key("num_mqa_tokens").value(counts.num_mqa_tokens);
  w.key("num_mha_tokens").value(counts.num_mha_tokens);
}

void write_step_fields(JsonWriter& w, const StepRecord& s, const RequestNames& names) {
  w.key("step").value(s.step);
  w.key("num_scheduled_tokens").begin_object();
  for (const auto& [index, q] : s.num_scheduled_tokens) w.key(names[index]).value(q);
  w.end_object();
  w.key("total_num_scheduled_tokens").value(s.total_num_scheduled_tokens);
  write_split_counts(w, s.counts);
  if (s.has_linear_attention) write_linear_attention_json(w, s.linear_attention);  // KDA layers' own split
  w.key("reorder_modified").value(s.reorder_modified);
  // The reasons are worded here, from the record's codes, into storage kept from row to row.
  thread_local std::string reason;
  reason.clear();
  word_batch_reason(reason, s.wording);
  w.key("split_reason").value(reason);
  w.key("rows").begin_array();
  for (std::size_t pos = 0; pos < s.rows.size(); ++pos) {
    reason.clear();
    append_row_reason(reason, s, pos);
    write_row_json(w, s.rows[pos], names[s.rows[pos].index], reason);
  }
  w.end_array();
  id_array(w, "new", s.new_reqs, names);
  id_array(w, "resumed", s.resumed, names);
  id_array(w, "preempted", s.preempted, names);
  id_array(w, "finished", s.finished, names);
  id_map(w, "new_block_ids", s.new_block_ids, names);
  if (s.grouped) {  // several KV cache groups: each group's blocks
    w.key("new_block_ids_by_group").begin_object();
    for (const auto& [index, groups] : s.new_group_block_ids) {
      w.key(names[index]).begin_array();
      for (const std::vector<int>& ids : groups) w.int_array(ids);
      w.end_array();
    }
    w.end_object();
  }
  id_map(w, "scheduled_spec_decode_tokens", s.spec_decode_tokens, names);
  w.key("context_chunks").begin_object();
  w.key("workspace_size").value(s.context_chunks.workspace_size);
  w.key("max_context_chunk").value(s.context_chunks.max_context_chunk);
  w.key("num_chunks").value(s.context_chunks.num_chunks);
  id_array(w, "ids", s.context_chunks.indices, names);
  w.key("chunk_lens").begin_array();
  for (const auto& lens : s.context_chunks.chunk_lens) w.int_array(lens);
  w.end_array();
  w.end_object();
  w.key("num_free_blocks").value(s.num_free_blocks);
}

void write_request_fields(JsonWriter& w, const RequestRecord& r) {
  w.key("id").value(r.id);
  w.key("status").value(r.status);
  w.key("num_prompt_tokens").value(r.num_prompt_tokens);
  w.key("token_ids").int_array(r.token_ids);
  w.key("num_preemptions").value(r.num_preemptions);
  if (r.stop_reason) w.key("stop_reason").value(*r.stop_reason);
  else w.key("stop_reason").null();
  if (r.num_computed_tokens) w.key("num_computed_tokens").value(*r.num_computed_tokens);  // unfinished at a stop
}

void begin_run_json(JsonWriter& w, const std::string& scenario) {
  w.begin_object();
  w.key("format").value("mlasim-run");
  w.key("version").value(1);
  w.key("scenario").value(scenario);
  w.key("steps").begin_array();
}

std::string run_record_to_json(const RunRecord& run) {
  JsonWriter w;
  begin_run_json(w, run.scenario);
  for (const StepRecord& s : run.steps) {
    w.begin_object();
    write_step_fields(w, s, run.names);
    w.end_object();
  }
  w.end_array();
  w.key("requests").begin_array();
  for (const RequestRecord& r : run.requests) {
    w.begin_object();
    write_request_fields(w, r);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace mlasim
