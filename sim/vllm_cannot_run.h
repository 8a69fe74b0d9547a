// Where vLLM's own scheduler cannot go on with a trace that its configuration accepts: an
// assertion it raises, or a step from which it makes no progress. mlasim replays the trace as vLLM
// does up to that step and stops there with this, naming vLLM's line; the outputs then hold the
// steps before it (docs/spec/interfaces.md, exit code 4).
#pragma once

#include <stdexcept>
#include <string>

namespace mlasim {

struct VllmCannotRun : std::runtime_error {
  VllmCannotRun(int step_, const std::string& reason_, int request_ = -1)
      : std::runtime_error("step " + std::to_string(step_) + ": " + reason_), step(step_), reason(reason_),
        request(request_) {}
  int step;            // the step vLLM fails in (its schedule() call)
  std::string reason;  // what vLLM does there, with its line
  int request;         // the scheduler's id of the request it fails on, -1 when none (the engine names it)
};

// vLLM 0.33.0's lines where a request its KV cache can never hold stops making progress.
inline constexpr const char* kVllmAllocateSlotsFails =
    "vllm/v1/core/kv_cache_manager.py:550-588: min(num_computed + num_new + lookahead, max_model_len) slots, "
    "more than the free blocks: None";
inline constexpr const char* kVllmPreemptsWhenAllocationFails =
    "vllm/v1/core/sched/scheduler.py:912-981, the running request preempted, itself last";
inline constexpr const char* kVllmWaitingAllocationFails = "vllm/v1/core/sched/scheduler.py:1435-1461";

}  // namespace mlasim
