// Collecting a whole run.
#include "engine/run_collector.h"

#include <algorithm>

#include "config/request_tokens.h"

namespace mlasim {

RecordCollector::RecordCollector(const Scenario& scenario) : from_file_(!scenario.requests_file.empty()) {
  record_.scenario = scenario.name;
  if (from_file_) return;
  record_.requests.resize(scenario.requests.size());
  for (std::size_t i = 0; i < scenario.requests.size(); ++i) {
    RequestRecord& r = record_.requests[i];
    r.index = static_cast<int>(i);
    r.id = scenario.requests[i].id;
    r.status = "waiting";
    r.num_prompt_tokens = prompt_len(scenario.requests[i]);
    r.token_ids = prompt_tokens(scenario.requests[i], scenario);
  }
}

void RecordCollector::on_logits(const LogitsRecord& rows) {
  LogitsRecord& all = record_.logits;
  all.vocab_size = rows.vocab_size;
  all.index.insert(all.index.end(), rows.index.begin(), rows.index.end());
  all.values.insert(all.values.end(), rows.values.begin(), rows.values.end());
  all.values_f64.insert(all.values_f64.end(), rows.values_f64.begin(), rows.values_f64.end());
}

void RecordCollector::on_step(const StepRecord& step) {
  for (int index : step.arrived) record_.names.add(index, names()[index]);
  record_.steps.push_back(step);
}

void RecordCollector::on_request_finished(const RequestRecord& request) {
  if (from_file_) {
    record_.requests.push_back(request);
    return;
  }
  record_.requests[static_cast<std::size_t>(request.index)] = request;
}

RunRecord RecordCollector::take() {
  if (from_file_)
    std::sort(record_.requests.begin(), record_.requests.end(),
              [](const RequestRecord& a, const RequestRecord& b) { return a.index < b.index; });
  return std::move(record_);
}

}  // namespace mlasim
