// The shrinker's candidate edits and its greedy loop.
#include "tools/fuzz/shrinker.h"

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/scheduler_rules.h"
#include "sim/scheduler.h"
#include "tools/fuzz/scenario_validity.h"

namespace mlasim {
namespace {

// The scheduler and engine keys a trace may leave at their defaults, with a way to reset each.
struct Key {
  const char* name;  // the scenario key, as --set names it
  std::function<bool(const Scenario&)> is_default;
  std::function<void(Scenario&)> reset;
  std::function<long(const Scenario&)> size;  // what "lower" lowers (0 when nothing)
};

// Applies `edit`; a pool at its default (which follows max_model_len and block_size, with vLLM
// 0.33's start-up check) stays at its default.
void with_default_pool(Scenario& s, void (*edit)(Scenario&)) {
  const bool pool_default = s.scheduler.num_gpu_blocks == default_num_gpu_blocks(s.scheduler);
  edit(s);
  if (pool_default) s.scheduler.num_gpu_blocks = default_num_gpu_blocks(s.scheduler);
}

const std::vector<Key>& keys() {
  static const SchedulerConfig d;
  static const EngineConfig e;
  static const std::vector<Key> k = {
      {"scheduler.max_num_batched_tokens", [](const Scenario& s) { return s.scheduler.max_num_batched_tokens == d.max_num_batched_tokens; },
       [](Scenario& s) { s.scheduler.max_num_batched_tokens = d.max_num_batched_tokens; },
       [](const Scenario& s) { return long{s.scheduler.max_num_batched_tokens}; }},
      {"scheduler.max_num_seqs", [](const Scenario& s) { return s.scheduler.max_num_seqs == d.max_num_seqs; },
       [](Scenario& s) { s.scheduler.max_num_seqs = d.max_num_seqs; },
       [](const Scenario& s) { return long{s.scheduler.max_num_seqs}; }},
      {"scheduler.max_model_len", [](const Scenario& s) { return s.scheduler.max_model_len == s.model.max_position_embeddings; },
       [](Scenario& s) { with_default_pool(s, [](Scenario& t) { t.scheduler.max_model_len = t.model.max_position_embeddings; }); },
       [](const Scenario& s) { return long{s.scheduler.max_model_len}; }},
      {"scheduler.enable_chunked_prefill", [](const Scenario& s) { return s.scheduler.enable_chunked_prefill == d.enable_chunked_prefill; },
       [](Scenario& s) { s.scheduler.enable_chunked_prefill = d.enable_chunked_prefill; }, nullptr},
      {"scheduler.long_prefill_token_threshold", [](const Scenario& s) { return s.scheduler.long_prefill_token_threshold == 0; },
       [](Scenario& s) { s.scheduler.long_prefill_token_threshold = 0; },
       [](const Scenario& s) { return long{s.scheduler.long_prefill_token_threshold}; }},
      {"scheduler.block_size", [](const Scenario& s) { return s.scheduler.block_size == d.block_size; },
       [](Scenario& s) { with_default_pool(s, [](Scenario& t) { t.scheduler.block_size = d.block_size; }); }, nullptr},
      {"scheduler.num_gpu_blocks",
       [](const Scenario& s) { return s.scheduler.num_gpu_blocks == default_num_gpu_blocks(s.scheduler); },
       [](Scenario& s) { s.scheduler.num_gpu_blocks = default_num_gpu_blocks(s.scheduler); },
       [](const Scenario& s) { return long{s.scheduler.num_gpu_blocks}; }},
      {"scheduler.enable_prefix_caching", [](const Scenario& s) { return s.scheduler.enable_prefix_caching == d.enable_prefix_caching; },
       [](Scenario& s) { s.scheduler.enable_prefix_caching = d.enable_prefix_caching; }, nullptr},
      {"scheduler.policy", [](const Scenario& s) { return s.scheduler.policy == d.policy; },
       [](Scenario& s) { s.scheduler.policy = d.policy; }, nullptr},
      {"scheduler.num_speculative_tokens", [](const Scenario& s) { return s.scheduler.num_speculative_tokens == 0; },
       [](Scenario& s) {
         s.scheduler.num_speculative_tokens = 0;
         for (RequestSpec& r : s.requests) r.accepted_drafts.clear();
       },
       [](const Scenario& s) { return long{s.scheduler.num_speculative_tokens}; }},
      {"scheduler.speculative_method", [](const Scenario& s) { return s.scheduler.speculative_method == d.speculative_method; },
       [](Scenario& s) { s.scheduler.speculative_method = d.speculative_method; }, nullptr},
      {"scheduler.scheduler_reserve_full_isl", [](const Scenario& s) {
         return s.scheduler.rules.scheduler_reserve_full_isl ==
                scheduler_rules_for(s.engine.profile).scheduler_reserve_full_isl;
       },
       [](Scenario& s) {
         s.scheduler.rules.scheduler_reserve_full_isl = scheduler_rules_for(s.engine.profile).scheduler_reserve_full_isl;
       },
       nullptr},
      {"engine.reorder_batch_threshold", [](const Scenario& s) { return !s.engine.reorder_batch_threshold; },
       [](Scenario& s) { s.engine.reorder_batch_threshold = std::nullopt; },
       [](const Scenario& s) { return long{s.engine.reorder_batch_threshold.value_or(0)}; }},
      {"engine.query_len_support", [](const Scenario& s) { return !s.engine.query_len_support; },
       [](Scenario& s) { s.engine.query_len_support = std::nullopt; }, nullptr},
      {"engine.model_runner", [](const Scenario& s) { return s.engine.model_runner == e.model_runner; },
       [](Scenario& s) { s.engine.model_runner = e.model_runner; }, nullptr},
      {"engine.sglang_chunked_prefix_cache_threshold", [](const Scenario& s) {
         return s.engine.sglang_chunked_prefix_cache_threshold == e.sglang_chunked_prefix_cache_threshold;
       },
       [](Scenario& s) { s.engine.sglang_chunked_prefix_cache_threshold = e.sglang_chunked_prefix_cache_threshold; },
       nullptr},
  };
  return k;
}

// Sets a budget-like value; the validity check rejects values the config cannot take.
using Edit = std::function<void(Scenario&)>;

void add_lowerings(std::vector<Edit>& edits, int value, int& (*field)(Scenario&), int floor) {
  for (int v : {floor, value / 2, value - 1})
    if (v >= floor && v < value) edits.push_back([field, v](Scenario& s) { field(s) = v; });
}

// Every candidate edit of `s`, the biggest reductions first.
std::vector<Edit> candidate_edits(const Scenario& s, const std::vector<std::string>& keep) {
  std::vector<Edit> edits;
  const int n = static_cast<int>(s.requests.size());
  for (int i = 0; i < n && n > 1; ++i)
    edits.push_back([i](Scenario& t) { t.requests.erase(t.requests.begin() + i); });
  // Every arrival earlier by the same amount: the schedule keeps its shape.
  int first_arrival = s.requests.empty() ? 0 : s.requests[0].arrival_step;
  for (const RequestSpec& r : s.requests) first_arrival = std::min(first_arrival, r.arrival_step);
  if (first_arrival > 0)
    edits.push_back([first_arrival](Scenario& t) {
      for (RequestSpec& r : t.requests) r.arrival_step -= first_arrival;
    });
  for (int i = 0; i < n; ++i) {
    const RequestSpec& r = s.requests[static_cast<std::size_t>(i)];
    const auto at = [i](Scenario& t) -> RequestSpec& { return t.requests[static_cast<std::size_t>(i)]; };
    const int len = static_cast<int>(r.prompt.size());
    for (int v : {1, len / 2, len - 1})
      if (v >= 1 && v < len) edits.push_back([at, v](Scenario& t) { at(t).prompt.resize(static_cast<std::size_t>(v)); });
    for (int v : {1, r.max_tokens / 2, r.max_tokens - 1})
      if (v >= std::max(1, r.min_tokens) && v < r.max_tokens) edits.push_back([at, v](Scenario& t) { at(t).max_tokens = v; });
    for (int v : {0, r.arrival_step / 2, r.arrival_step - 1})
      if (v >= 0 && v < r.arrival_step) edits.push_back([at, v](Scenario& t) { at(t).arrival_step = v; });
    if (!r.accepted_drafts.empty()) {
      edits.push_back([at](Scenario& t) { at(t).accepted_drafts.clear(); });
      edits.push_back([at](Scenario& t) { at(t).accepted_drafts.pop_back(); });
    }
  }
  auto kept = [&](const char* name) { return std::find(keep.begin(), keep.end(), name) != keep.end(); };
  for (const Key& k : keys())
    if (!k.is_default(s) && !kept(k.name)) edits.push_back(k.reset);
  // Lower the budgets that are written anyway.
  using Field = int& (*)(Scenario&);
  const std::tuple<const char*, Field, int> lowerable[] = {
      {"scheduler.max_num_batched_tokens", [](Scenario& t) -> int& { return t.scheduler.max_num_batched_tokens; }, 1},
      {"scheduler.max_num_seqs", [](Scenario& t) -> int& { return t.scheduler.max_num_seqs; }, 1},
      {"scheduler.num_gpu_blocks", [](Scenario& t) -> int& { return t.scheduler.num_gpu_blocks; }, 2},
      {"scheduler.max_model_len", [](Scenario& t) -> int& { return t.scheduler.max_model_len; }, 2},
      {"scheduler.long_prefill_token_threshold", [](Scenario& t) -> int& { return t.scheduler.long_prefill_token_threshold; }, 1},
      {"scheduler.num_speculative_tokens", [](Scenario& t) -> int& { return t.scheduler.num_speculative_tokens; }, 1},
  };
  for (const auto& [name, field, floor] : lowerable) {
    const std::string wanted = name;  // a structured binding cannot be captured before clang 16
    const Key& k = *std::find_if(keys().begin(), keys().end(), [&](const Key& key) { return key.name == wanted; });
    Scenario copy = s;
    if (!k.is_default(s) && !kept(name)) add_lowerings(edits, field(copy), field, floor);
  }
  return edits;
}

}  // namespace

TraceSize trace_size(const Scenario& s) {
  long prompt = 0, max_tokens = 0, arrivals = 0, drafts = 0;
  for (const RequestSpec& r : s.requests) {
    prompt += static_cast<long>(r.prompt.size());
    max_tokens += r.max_tokens;
    arrivals += r.arrival_step;
    drafts += static_cast<long>(r.accepted_drafts.size());
  }
  int away = 0;
  long rest = 0;
  for (const Key& k : keys()) {
    away += !k.is_default(s);
    if (k.size && !k.is_default(s)) rest += k.size(s);
  }
  return {static_cast<int>(s.requests.size()), prompt, max_tokens, arrivals, drafts, away, rest};
}

std::vector<Scenario> shrink_candidates(const Scenario& s, const std::vector<std::string>& keep_keys) {
  std::vector<Scenario> out;
  const TraceSize size = trace_size(s);
  for (const Edit& edit : candidate_edits(s, keep_keys)) {
    Scenario candidate = s;
    edit(candidate);
    for (RequestSpec& r : candidate.requests) r.accepted_drafts.resize(
        candidate.scheduler.num_speculative_tokens > 0 ? r.accepted_drafts.size() : 0);
    for (RequestSpec& r : candidate.requests)
      for (int& a : r.accepted_drafts) a = std::min(a, candidate.scheduler.num_speculative_tokens);
    reseed_outputs(candidate);
    if (trace_size(candidate) >= size || !scenario_problem(candidate).empty()) continue;
    candidate.num_requests = static_cast<int>(candidate.requests.size());
    out.push_back(std::move(candidate));
  }
  return out;
}

ShrinkResult shrink(const Scenario& s, const Violation& violation, const ShrinkOptions& options) {
  ShrinkResult result{s, violation, 0, 0};
  for (bool progress = true; progress && result.attempts < options.max_attempts;) {
    progress = false;
    for (Scenario& candidate : shrink_candidates(result.scenario, options.keep_keys)) {
      if (result.attempts >= options.max_attempts) break;
      ++result.attempts;
      std::optional<Violation> v = check_property(candidate, options.property, options.faults);
      if (!v) continue;
      result.scenario = std::move(candidate);
      result.violation = *v;
      ++result.accepted;
      progress = true;
      break;  // the edits of the smaller trace differ; start again from it
    }
  }
  return result;
}

}  // namespace mlasim
