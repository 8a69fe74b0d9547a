// A progress line on stderr for long replays (steps, requests finished, tokens/s, ETA), redrawn
// in place at most a few times a second; only when stderr is a terminal and not under CI.
#pragma once

#include <chrono>
#include <cstdio>

#include "engine/step_sink.h"

namespace mlasim {

class ProgressLine final : public StepSink {
 public:
  // Enabled when `out` is a terminal and the CI environment variable is unset (or `force`).
  ProgressLine(std::FILE* out, int num_requests, bool force = false);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  void on_end(const RunTotals& totals) override;
  bool enabled() const { return enabled_; }

 private:
  void draw();
  std::FILE* out_;
  int num_requests_;
  bool enabled_;
  bool drawn_ = false;
  long long steps_ = 0, finished_ = 0, tokens_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace mlasim
