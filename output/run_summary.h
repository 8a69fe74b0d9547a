// Summary statistics of a run, gathered step by step in constant memory: totals, the split, the
// fresh prefills on the decode path (count and the first few), per-step distributions and the
// simulated latencies (TTFT, TPOT, end to end) and throughput under the scenario's timing model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "output/histogram.h"
#include "engine/step_sink.h"

namespace mlasim {

struct FreshOnDecodePath {
  int step = 0;
  std::string id;
  int q = 0;
};

class RunSummary final : public StepSink {
 public:
  static constexpr int kExamples = 8;  // fresh prefills on the decode path listed by name

  explicit RunSummary(const Scenario& scenario) : s_(scenario) {}
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  void on_end(const RunTotals& totals) override { totals_ = totals; }

  int num_steps() const { return num_steps_; }
  long long num_finished() const { return num_finished_; }
  long long num_fresh_on_decode_path() const { return num_fresh_; }
  const std::vector<FreshOnDecodePath>& fresh_examples() const { return fresh_examples_; }
  long long num_mqa_tokens() const { return mqa_tokens_; }
  long long num_mha_tokens() const { return mha_tokens_; }
  long long num_output_tokens() const { return output_tokens_; }
  long long num_preemptions() const { return preemptions_; }
  const ValueCounts& scheduled_tokens() const { return scheduled_; }
  const ValueCounts& batch_size() const { return batch_; }
  const LogHistogram& ttft() const { return ttft_; }
  const LogHistogram& tpot() const { return tpot_; }

  // "fresh prefills on the decode path: N (step S id (q=Q), ...)" or ": none".
  std::string format_misrouting() const;
  // The block `--table summary` prints.
  std::string format() const;

 private:
  const Scenario& s_;
  RunTotals totals_;
  int num_steps_ = 0;
  long long num_finished_ = 0, prompt_tokens_ = 0, output_tokens_ = 0, preemptions_ = 0;
  long long mqa_tokens_ = 0, mha_tokens_ = 0, decode_rows_ = 0, prefill_rows_ = 0;
  long long num_fresh_ = 0;
  std::vector<FreshOnDecodePath> fresh_examples_;
  ValueCounts scheduled_, batch_, mqa_, mha_;
  LogHistogram ttft_, tpot_, e2e_;
  std::int64_t first_arrival_ns_ = -1, last_finish_ns_ = 0;
  std::vector<long long> status_counts_ = std::vector<long long>(2, 0);  // stopped, length capped
};

}  // namespace mlasim
