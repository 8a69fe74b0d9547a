// Helpers for the scheduler tests: requests with distinct prompts, configs, one-step driver.
#pragma once

#include <utility>
#include <vector>

#include "sim/request.h"
#include "sim/scheduler.h"
#include "sim/teacher_forcing.h"

namespace mlasim::test {

// Prompt ids distinct per (salt, position) so unrelated requests never share cache blocks.
inline std::vector<int> prompt_ids(int len, int salt) {
  std::vector<int> p;
  for (int i = 0; i < len; ++i) p.push_back(100000 * (salt + 1) + i);
  return p;
}

inline Request make_req(ReqId id, int prompt_len, int max_tokens = 16, int salt = -1) {
  Request r;
  r.request_id = id;
  r.all_token_ids = prompt_ids(prompt_len, salt < 0 ? id : salt);
  r.num_prompt_tokens = prompt_len;
  r.max_tokens = max_tokens;
  r.eos_token_id = 1;
  r.vocab_size = 1000;
  r.output_seed = 7;
  return r;
}

inline SchedulerConfig make_config(int budget, int num_gpu_blocks, int max_model_len = 4096) {
  SchedulerConfig c;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = 16;
  c.max_model_len = max_model_len;
  c.block_size = 16;
  c.num_gpu_blocks = num_gpu_blocks;
  c.enable_prefix_caching = false;
  return c;
}

struct StepResult {
  SchedulerOutput out;
  ModelRunnerOutput model_output;
  std::vector<Request> finished;
};

inline StepResult run_step(Scheduler& s) {
  StepResult r;
  r.out = s.schedule();
  r.model_output = teacher_force(s, r.out);
  r.finished = s.update_from_output(r.out, r.model_output);
  return r;
}

using Q = std::vector<std::pair<ReqId, int>>;

}  // namespace mlasim::test
