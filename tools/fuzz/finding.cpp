// Describing and writing a shrunk violation.
#include "tools/fuzz/finding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "scenario/scenario_loader.h"
#include "scenario/scenario_writer.h"

namespace mlasim {

std::string describe_batch(const Scenario& s) {
  std::vector<int> prompts, outputs, arrivals;
  for (const RequestSpec& r : s.requests) {
    prompts.push_back(static_cast<int>(r.prompt.size()));
    outputs.push_back(r.max_tokens);
    arrivals.push_back(r.arrival_step);
  }
  const std::size_t n = s.requests.size();
  std::string out = fmt::format("{} request{}: P={} max_tokens={}", n, n == 1 ? "" : "s", fmt::join(prompts, ","),
                                fmt::join(outputs, ","));
  if (std::any_of(arrivals.begin(), arrivals.end(), [](int a) { return a != 0; }))
    out += fmt::format(" (arrival steps {})", fmt::join(arrivals, ","));
  if (s.scheduler.num_speculative_tokens > 0) out += fmt::format(", k={}", s.scheduler.num_speculative_tokens);
  return out;
}

Result<std::string> finding_yaml(const Scenario& shrunk, const Violation& v, const std::string& origin,
                                 const FaultSet& faults, const std::string& golden_dir) {
  Scenario s = shrunk;
  s.expect = {};
  // The schema states these two properties as invariants; same_logits_as_strict is described in
  // the comment (its check needs two model runs), matches_golden_split is pinned by its golden.
  if (v.property == Property::kNoFreshPrefillOnDecodePath ||
      check_property(shrunk, Property::kNoFreshPrefillOnDecodePath))
    s.expect.invariants.push_back(kInvariantNoFreshPrefillOnDecodePath);
  if (v.property == Property::kStepInvariants) s.expect.invariants.push_back(kInvariantStepInvariants);
  s.description = fmt::format("{} violated under {} with {}: {}", to_string(v.property), to_string(s.engine.profile),
                              to_string(s.engine.attention_backend), describe_batch(s));
  std::string comment = fmt::format("{}; {}", v.detail, origin);
  std::replace(comment.begin(), comment.end(), '\n', ' ');
  const std::string yaml = scenario_to_yaml(s, comment);
  Result<Scenario> loaded = load_scenario_text(yaml, s.name + ".yaml");
  if (!loaded) {
    Error e = loaded.error();
    e.message = "the shrunk scenario does not load: " + e.message;
    return e;
  }
  Scenario back = loaded.value();
  back.scheduler.test_waiting_budget_overrun = shrunk.scheduler.test_waiting_budget_overrun;  // not a key
  if (!check_property(back, v.property, faults, golden_dir)) {
    Error e;
    e.file = s.name + ".yaml";
    e.message = "the shrunk scenario no longer violates " + std::string(to_string(v.property)) + " once loaded";
    return e;
  }
  return yaml;
}

}  // namespace mlasim
