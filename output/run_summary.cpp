// Run summary statistics and their text.
#include "output/run_summary.h"

#include <fmt/format.h>

namespace mlasim {

void RunSummary::on_step(const StepRecord& st) {
  ++num_steps_;
  preemptions_ += static_cast<long long>(st.preempted.size());
  mqa_tokens_ += st.counts.num_mqa_tokens;
  mha_tokens_ += st.counts.num_mha_tokens;
  decode_rows_ += st.counts.num_decodes;
  prefill_rows_ += st.counts.num_prefills;
  scheduled_.add(st.total_num_scheduled_tokens);
  batch_.add(static_cast<long long>(st.rows.size()));
  mqa_.add(st.counts.num_mqa_tokens);
  mha_.add(st.counts.num_mha_tokens);
  for (const RowRecord& r : st.rows) {
    if (!r.fresh_on_decode_path) continue;
    if (num_fresh_++ < kExamples) fresh_examples_.push_back({st.step, names()[r.index], r.q});
  }
}

void RunSummary::on_request_finished(const RequestRecord& r) {
  ++num_finished_;
  prompt_tokens_ += r.num_prompt_tokens;
  const int outputs = r.num_output_tokens();
  output_tokens_ += outputs;
  ++status_counts_[r.status == "finished_stopped" ? 0 : 1];
  if (first_arrival_ns_ < 0 || r.arrival_ns < first_arrival_ns_) first_arrival_ns_ = r.arrival_ns;
  last_finish_ns_ = std::max(last_finish_ns_, r.finish_ns);
  ttft_.add(r.first_token_ns - r.arrival_ns);
  e2e_.add(r.finish_ns - r.arrival_ns);
  if (outputs >= 2) tpot_.add((r.finish_ns - r.first_token_ns) / (outputs - 1));
}

std::string RunSummary::format_misrouting() const {
  if (num_fresh_ == 0) return "fresh prefills on the decode path: none\n";
  std::string where;
  for (const FreshOnDecodePath& f : fresh_examples_)
    where += fmt::format("{}step {} {} (q={})", where.empty() ? "" : ", ", f.step, f.id, f.q);
  if (num_fresh_ > kExamples) where += ", ...";
  return fmt::format("fresh prefills on the decode path: {} ({})\n", num_fresh_, where);
}

std::string RunSummary::format() const {
  std::string out;
  out += fmt::format("{} steps, {} requests finished ({} stopped, {} length-capped), {} prompt tokens, {} output "
                     "tokens, {} preemptions\n",
                     num_steps_, num_finished_, status_counts_[0], status_counts_[1], prompt_tokens_, output_tokens_,
                     preemptions_);
  out += fmt::format("split: {} tokens on the decode path (num_mqa), {} on the prefill path (num_mha); {} decode "
                     "rows, {} prefill rows\n",
                     mqa_tokens_, mha_tokens_, decode_rows_, prefill_rows_);
  out += format_misrouting();
  out += fmt::format("{:<19} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}\n", "per step", "min", "p50", "p90", "p99", "max",
                     "mean");
  for (const auto& [name, v] : {std::pair{"scheduled tokens", &scheduled_}, std::pair{"batch size (rows)", &batch_},
                                std::pair{"num_mqa", &mqa_}, std::pair{"num_mha", &mha_}})
    out += fmt::format("  {:<17} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10.1f}\n", name, v->min(), v->percentile(0.5),
                       v->percentile(0.9), v->percentile(0.99), v->max(), v->mean());
  const TimingConfig& t = s_.timing;
  const double span_s =
      static_cast<double>(last_finish_ns_ - std::max<std::int64_t>(first_arrival_ns_, 0)) * 1e-9;
  out += fmt::format("simulated time {:.3f} s (step = {:g} us + {:g} us/token + {:g} us/context token + {:g} "
                     "us/request; docs/spec/timing.md)\n",
                     static_cast<double>(totals_.end_ns) * 1e-9, t.fixed_us, t.per_scheduled_token_us,
                     t.per_context_token_us, t.per_request_us);
  out += fmt::format("{:<19} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "latency (ms)", "min", "p50", "p90", "p99", "max",
                     "mean");
  for (const auto& [name, h] : {std::pair{"TTFT", &ttft_}, std::pair{"TPOT", &tpot_}, std::pair{"end to end", &e2e_}}) {
    if (h->count() == 0) {
      out += fmt::format("  {:<17} {:>9}\n", name, "n/a");
      continue;
    }
    out += fmt::format("  {:<17} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", name, static_cast<double>(h->min()) * 1e-6,
                       h->percentile(0.5) * 1e-6, h->percentile(0.9) * 1e-6, h->percentile(0.99) * 1e-6,
                       static_cast<double>(h->max()) * 1e-6, h->mean() * 1e-6);
  }
  if (span_s > 0)
    out += fmt::format("throughput: {:.1f} output tokens/s, {:.2f} requests/s over {:.3f} s from the first arrival\n",
                       static_cast<double>(output_tokens_) / span_s, static_cast<double>(num_finished_) / span_s,
                       span_s);
  return out;
}

}  // namespace mlasim
