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

}  // namespace mlasim
