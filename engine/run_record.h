// What one replay observed, step by step and per request: the data behind the step table, the
// run JSON (docs/design.md) and the expectation checks. Plain data.
//
// Requests are named by their index (their position in the scenario: the engine's ReqId), paths and
// regions by the routing's enums; the sinks format them. A step record names a request by index
// only; its id string is in the engine's RequestNames, which every sink gets in
// StepSink::on_start. That table holds a request's id from its arrival until the engine starts
// the step after the one that finished it (so the record Engine::step returns, and the sinks'
// callbacks, can still name it); then the id leaves, and the table, like the engine, holds the
// requests alive, not the trace. No later step names a finished request, so a sink needs its id
// afterwards only from the RequestRecord, which carries a copy (the run JSON's requests list and
// the step table's are written in scenario order at the end from a spill of formatted text), or
// from its own copy (the timeline's lane label, the summary's examples). A stopped run's RunTotals
// name requests still alive, so still in the table. A RunRecord keeps every step and so carries
// its own table of every request's id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attention/linear_attention_split.h"
#include "attention/precision_class.h"
#include "attention/reorder.h"
#include "attention/route_explain.h"
#include "attention/row_route.h"
#include "attention/split_counts.h"
#include "engine/request_names.h"

namespace mlasim {

// One row of the model runner's persistent batch, in batch order.
struct RowRecord {
  int index = 0;       // the request's scenario index
  int q = 0;           // num_scheduled_tokens
  int nct = 0;         // num_computed_tokens before the step
  int prompt_len = 0;  // P
  // Routing (docs/spec/routing.md): the row's region under the profile's reorder, the split's (or
  // SGLang's) verdict, the MLA path its tokens take, and whether it is a fresh prefill (nct == 0)
  // on the decode path. Why, in words: row_reason(step, pos) (engine/step_words.h).
  Region region = Region::kPrefill;  // decode | short_extend | long_extend | prefill (to_string)
  bool is_decode = false;
  MlaPath path = MlaPath::kMha;      // mqa (decode path, absorbed) | mha (prefill path)
  bool fresh_on_decode_path = false;
};

// The chunked context of the prefill-path rows with context (docs/spec/routing.md §4).
struct ContextChunksRecord {
  int workspace_size = 0;      // W
  int max_context_chunk = 0;   // MCC
  int num_chunks = 0;
  std::vector<int> indices;                  // prefill-path rows' requests, batch order
  std::vector<std::vector<int>> chunk_lens;  // [chunk][row]
};

struct StepRecord {
  int step = 0;
  // Requests that arrived (entered the waiting queue) just before this step, in arrival order.
  std::vector<int> arrived;
  // {request: q} in scheduling order (running requests first, then admitted ones).
  std::vector<std::pair<int, int>> num_scheduled_tokens;
  int total_num_scheduled_tokens = 0;
  std::vector<RowRecord> rows;  // batch order
  std::vector<int> new_reqs;   // scheduled_new_reqs, in order
  std::vector<int> resumed;    // resumed from preemption this step
  std::vector<int> preempted;  // preempted while scheduling this step, in order
  std::vector<int> finished;   // finished by this step's samples
  // Blocks handed out this step: a new or resumed request's whole table, a running one's additions.
  std::vector<std::pair<int, std::vector<int>>> new_block_ids;
  // Several KV cache groups (grouped): the same per group, new_block_ids holding the MLA group's.
  bool grouped = false;
  std::vector<std::pair<int, std::vector<std::vector<int>>>> new_group_block_ids;
  std::vector<std::pair<int, std::vector<int>>> spec_decode_tokens;  // drafts verified this step
  int num_free_blocks = 0;  // after scheduling, before this step's finished requests free theirs
  int num_running = 0;      // the scheduler's running and waiting queues after scheduling
  int num_waiting = 0;
  // The split of the reordered batch and MLA's forward split.
  bool reorder_modified = false;
  SplitCounts counts;
  // A model with linear-attention layers: their own split (they have no MLA path).
  bool has_linear_attention = false;
  LinearAttentionSplit linear_attention;
  // What the step's reasons quote (the split or SGLang's dispatch, the configuration's facts): the
  // writers word them from it (engine/step_words.h: split_reason, row_reason).
  RouteWording wording;
  ContextChunksRecord context_chunks;
  // Simulated time (the scenario's timing model): when the step starts and how long it takes.
  std::int64_t time_ns = 0;
  std::int64_t duration_ns = 0;
  int num_fresh_on_decode_path() const {
    int n = 0;
    for (const RowRecord& r : rows) n += r.fresh_on_decode_path;
    return n;
  }
};

struct RequestRecord {
  int index = 0;  // position in the scenario (its requests list or requests_file line order)
  std::string id;  // a copy: the engine's RequestNames drops it after the step that finished the request
  std::string status;  // waiting | running | preempted | finished_stopped | finished_length_capped
  int num_prompt_tokens = 0;
  std::vector<int> token_ids;  // prompt + outputs (empty when no sink wants them)
  int num_preemptions = 0;
  std::optional<int> stop_reason;  // the stop token that finished it, if any
  // Only for a request still unfinished where the run stopped (RunTotals::unfinished_at_stop):
  // its num_computed_tokens there.
  std::optional<int> num_computed_tokens;
  // Simulated time: arrival, the end of the step that produced its first output token, and the end
  // of the step that finished it (-1 when it did not happen).
  std::int64_t arrival_ns = 0, first_token_ns = -1, finish_ns = -1;
  // Prompt + outputs; -1: token_ids.size(). The engine sets it, and fills token_ids only when a sink
  // wants them (StepSink::wants_token_ids).
  int num_tokens = -1;
  int num_output_tokens() const {
    return (num_tokens >= 0 ? num_tokens : static_cast<int>(token_ids.size())) - num_prompt_tokens;
  }
};

// One row of logits: the output at `position` of the request `index` in `step`, predicting the
// token at position + 1 (docs/design.md logits_index.json, which names the request by its id).
struct LogitsRow {
  int step = 0;
  int index = 0;
  int position = 0;
};

// Logits of every sampling row, in a canonical order (step, then scenario request order, then
// position) so runs under different profiles, devices and TP sizes line up row for row.
struct LogitsRecord {
  int vocab_size = 0;
  std::vector<LogitsRow> index;
  std::vector<float> values;       // [index.size(), vocab_size]
  std::vector<double> values_f64;  // the same before rounding, when the backend computes in double
  bool empty() const { return index.empty(); }
};

// What a whole replay did, for the summary line: known once the last step has run.
struct RunTotals {
  int num_steps = 0;      // steps that ran
  int num_requests = 0;   // requests that arrived (all of them, once the run is complete)
  std::int64_t end_ns = 0;  // simulated time when the last step ended
  int stopped_step = -1;    // >= 0: the run stopped where vLLM cannot go on (VllmCannotRun)
  std::string stopped_reason;
  std::vector<int> arrived_at_stop;  // the requests that arrived for that step
  // Every request that arrived and had not finished where the run stopped, in scenario order, with
  // its status (waiting, running, preempted), num_computed_tokens and tokens as vLLM's scheduler
  // held them at the stop.
  std::vector<RequestRecord> unfinished_at_stop;
};

struct RunRecord {
  std::string scenario;  // name
  RequestNames names;    // every request that arrived, finished or not
  std::optional<PrecisionClass> precision;  // the backend's class; nullopt for a dry run
  std::vector<StepRecord> steps;
  std::vector<RequestRecord> requests;  // scenario order
  LogitsRecord logits;                  // empty for a dry run
};

}  // namespace mlasim
