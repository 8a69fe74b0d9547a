// Shrinking a trace that violates a property to a smaller one that still violates it: fewer
// requests, shorter prompts and outputs, earlier arrivals, keys back to their defaults, lower
// budgets. Greedy, to a fixed point; every step strictly lowers the trace's size (trace_size),
// so it ends. The engine profile and attention backend are kept: they are where it was found.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tools/fuzz/property.h"

namespace mlasim {

// Ordered lexicographically: requests, prompt tokens, max_tokens, arrival steps, accepted_drafts
// entries, keys away from their defaults, then the sum of the budgets and sizes left.
using TraceSize = std::tuple<int, long, long, long, long, int, long>;
TraceSize trace_size(const Scenario& s);

struct ShrinkOptions {
  Property property = Property::kNoFreshPrefillOnDecodePath;
  FaultSet faults;
  int max_attempts = 20000;  // candidate replays at most
  // Scenario keys (as --set names them) left as they are, e.g. scheduler.num_speculative_tokens
  // when the finding is about speculation.
  std::vector<std::string> keep_keys;
};

struct ShrinkResult {
  Scenario scenario;    // the smallest violating trace found
  Violation violation;  // its violation
  int attempts = 0;     // candidates replayed
  int accepted = 0;     // candidates that were smaller and still violating
};

// The traces one edit smaller than `s` that are valid scenarios, in the order shrink() tries them
// (`mlasim shrink --candidates`: for a caller that judges them itself, as tools/conformance does
// with vLLM). keep_keys as in ShrinkOptions.
std::vector<Scenario> shrink_candidates(const Scenario& s, const std::vector<std::string>& keep_keys = {});

// `s` must violate options.property (`violation` is that violation).
ShrinkResult shrink(const Scenario& s, const Violation& violation, const ShrinkOptions& options);

}  // namespace mlasim
