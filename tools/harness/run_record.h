// What one replay observed, step by step and per request: the data behind the step table, the
// run JSON (DESIGN.md) and the expectation checks. Plain data; ids are the scenario's strings.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlasim {

// One row of the model runner's persistent batch, in batch order.
struct RowRecord {
  std::string id;
  int q = 0;           // num_scheduled_tokens
  int nct = 0;         // num_computed_tokens before the step
  int prompt_len = 0;  // P
};

struct StepRecord {
  int step = 0;
  // {id: q} in scheduling order (running requests first, then admitted ones).
  std::vector<std::pair<std::string, int>> num_scheduled_tokens;
  int total_num_scheduled_tokens = 0;
  std::vector<RowRecord> rows;  // batch order
  std::vector<std::string> new_reqs;   // scheduled_new_reqs, in order
  std::vector<std::string> resumed;    // resumed from preemption this step
  std::vector<std::string> preempted;  // preempted while scheduling this step, in order
  std::vector<std::string> finished;   // finished by this step's samples
  // Blocks handed out this step: a new or resumed request's whole table, a running one's additions.
  std::vector<std::pair<std::string, std::vector<int>>> new_block_ids;
  std::vector<std::pair<std::string, std::vector<int>>> spec_decode_tokens;  // drafts verified this step
  int num_free_blocks = 0;  // after scheduling, before this step's finished requests free theirs
};

struct RequestRecord {
  std::string id;
  std::string status;  // waiting | running | preempted | finished_stopped | finished_length_capped
  int num_prompt_tokens = 0;
  std::vector<int> token_ids;  // prompt + outputs
  int num_preemptions = 0;
  std::optional<int> stop_reason;  // the stop token that finished it, if any
  int num_output_tokens() const { return static_cast<int>(token_ids.size()) - num_prompt_tokens; }
};

struct RunRecord {
  std::string scenario;  // name
  std::vector<StepRecord> steps;
  std::vector<RequestRecord> requests;  // scenario order
};

}  // namespace mlasim
