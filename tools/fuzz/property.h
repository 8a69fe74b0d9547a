// The properties mlasim fuzz checks on every run, and the check of one scenario against them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/faults.h"
#include "config/scenario.h"

namespace mlasim {

enum class Property {
  // No row with nct = 0 takes MLA's decode path in any step (the seed's misrouting).
  kNoFreshPrefillOnDecodePath,
  // The checks run every step: the scheduler's (budget, max_num_seqs, KV slots, the block pool
  // audit, progress) and the attention metadata's consistency. A failure is a bug in the scheduler
  // or the metadata builder, never in the trace.
  kStepInvariants,
  // With the model: the logits (fp64 CPU reference) equal those of the same schedule routed by the
  // strict profile, within the fp64 tolerance class: a misrouting that changes the output.
  kSameLogitsAsStrict,
  // The run's split, step by step, equals the split golden <golden_dir>/<trace name>/split.txt
  // (the format of `mlasim golden update`; `mlasim fuzz --record-golden` writes one per run): a
  // change in the scheduler or the routing since the goldens were recorded.
  kMatchesGoldenSplit,
  // With the model, on a sparse (DSA) model: every logits row of a query whose causal positions
  // all fit index_topk (position < index_topk) equals the same schedule's row on the model made
  // dense (index_topk dropped: no indexer), within the fp64 tolerance class. Its top-k then
  // selects every position, so a difference is a fault in the top-k or its use. Holds trivially
  // on a dense model.
  kSparseEqualsDenseWithinTopk,
};

struct PropertyInfo {
  Property property;
  const char* name;
  bool needs_model;
  const char* meaning;
};
const std::vector<PropertyInfo>& property_infos();
const char* to_string(Property p);
std::optional<Property> parse_property(std::string_view name);

struct Violation {
  Property property;
  int step = -1;       // the first step where it shows (-1 when not tied to a step)
  std::string detail;  // what was observed, in words
};

struct PropertyOptions {
  std::vector<Property> properties;  // checked in this order; the first violated one is reported
  FaultSet faults;                   // injected into the model runs (same_logits_as_strict,
                                     // sparse_equals_dense_within_topk)
  std::string golden_dir;            // matches_golden_split: where the split goldens are
};

// Replays `s` (dry run; model runs only for the properties that need the model) and returns the first
// violation, or nullopt when every property holds.
std::optional<Violation> check_properties(const Scenario& s, const PropertyOptions& options);
// Only `p`.
std::optional<Violation> check_property(const Scenario& s, Property p, const FaultSet& faults = {},
                                        const std::string& golden_dir = "");

// The dry run's split golden text of `s` (what `mlasim golden update` writes as split.txt).
std::string split_golden_text(const Scenario& s, const std::string& generator);

}  // namespace mlasim
