// The loader's semantic checks on a Scenario struct (scenario/scenario_loader.cpp cross_checks).
#include "tools/fuzz/scenario_validity.h"

#include <set>

#include "sim/request.h"
#include "config/request_tokens.h"
#include "sim/scheduler.h"

namespace mlasim {

std::string scenario_problem(const Scenario& s) {
  const SchedulerConfig& sc = s.scheduler;
  if (sc.max_model_len < 2 || sc.max_model_len > s.model.max_position_embeddings)
    return "max_model_len outside 2..max_position_embeddings";
  if (std::string p = check_scheduler_config(sc, sc.max_model_len); !p.empty()) return p;
  if (std::string p = check_kv_cache_startup(sc, sc.max_model_len); !p.empty()) return p;
  if (s.engine.model_runner == ModelRunner::kV2 && s.engine.profile != EngineProfile::kVllm033 &&
      s.engine.profile != EngineProfile::kStrict)
    return "model_runner v2 needs the vllm-0.33 or strict profile";
  if (s.engine.reorder_batch_threshold && *s.engine.reorder_batch_threshold < 1) return "reorder_batch_threshold < 1";
  if (s.requests.empty()) return "no requests";
  std::set<std::string> ids;
  for (std::size_t i = 0; i < s.requests.size(); ++i) {
    const RequestSpec& r = s.requests[i];
    if (!ids.insert(r.id).second) return "duplicate request id " + r.id;
    if (r.prompt.empty()) return r.id + ": empty prompt";
    if (static_cast<int>(r.prompt.size()) >= sc.max_model_len) return r.id + ": prompt does not fit max_model_len";
    if (r.min_tokens > r.max_tokens) return r.id + ": min_tokens > max_tokens";
    for (int d : r.accepted_drafts)
      if (d < 0 || d > sc.num_speculative_tokens) return r.id + ": accepted_drafts outside 0..k";
    if (!r.accepted_drafts.empty() && sc.num_speculative_tokens == 0) return r.id + ": accepted_drafts without k";
    if (std::string p = check_request(r, sc, sc.max_model_len); !p.empty())
      return r.id + ": " + p;
  }
  return "";
}

void reseed_outputs(Scenario& s) {
  for (RequestSpec& r : s.requests) {
    if (r.output_given) continue;
    r.output.clear();
    seed_outputs(r, s);
  }
}

}  // namespace mlasim
