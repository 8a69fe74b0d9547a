// Step table formatting.
#include "tools/harness/step_table.h"

#include <fmt/format.h>

namespace mlasim {
namespace {

std::string id_list(const char* label, const std::vector<std::string>& ids) {
  if (ids.empty()) return "";
  std::string out = fmt::format(" {}=[", label);
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + ids[i];
  return out + "]";
}

}  // namespace

std::string format_step_line(const StepRecord& s) {
  std::string out = fmt::format("step {:>4}: total_toks={} free_blocks={} |", s.step, s.total_num_scheduled_tokens,
                                s.num_free_blocks);
  for (const RowRecord& r : s.rows) out += fmt::format(" {}(q={},nct={},P={})", r.id, r.q, r.nct, r.prompt_len);
  out += " |";
  out += id_list("new", s.new_reqs);
  out += id_list("resumed", s.resumed);
  out += id_list("preempted", s.preempted);
  out += id_list("finished", s.finished);
  return out;
}

std::string format_request_summary(const RunRecord& run) {
  std::string out = fmt::format("{} steps; requests:\n", run.steps.size());
  for (const RequestRecord& r : run.requests) {
    out += fmt::format("  {:<12} {:<22} prompt={} outputs={} preemptions={}", r.id, r.status, r.num_prompt_tokens,
                       r.num_output_tokens(), r.num_preemptions);
    if (r.stop_reason) out += fmt::format(" stop_token={}", *r.stop_reason);
    out += "\n";
  }
  return out;
}

}  // namespace mlasim
