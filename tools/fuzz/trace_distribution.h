// The distribution mlasim fuzz draws traces from (`mlasim fuzz --help` states it): the requests
// (count, arrivals, prompt lengths weighted to 1, 2, T, T + 1 and block edges, outputs, shared
// prefixes, accepted drafts) and the configuration knobs it varies around a base scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/scenario.h"

namespace mlasim {

// Configuration the fuzzer may draw instead of taking it from the base scenario.
enum class Knob : unsigned {
  kProfile = 1u << 0,        // engine.profile (and its scheduler rules)
  kBackend = 1u << 1,        // engine.attention_backend
  kSpecTokens = 1u << 2,     // scheduler.num_speculative_tokens in {0, 1, 2, 3}
  kChunkedPrefill = 1u << 3, // scheduler.enable_chunked_prefill
  kThresholds = 1u << 4,     // scheduler.long_prefill_token_threshold
  kBudgets = 1u << 5,        // max_num_batched_tokens, max_num_seqs, max_model_len
  kBlocks = 1u << 6,         // block_size, num_gpu_blocks (preemption pressure)
  kPrefixCaching = 1u << 7,  // enable_prefix_caching
  kDecodeThreshold = 1u << 8,  // engine.reorder_batch_threshold (overrides the backend's T)
  // Drawn from a generator of their own, so that varying them leaves every other draw as it was.
  kPolicy = 1u << 9,         // scheduler.policy and each request's priority
  kSampling = 1u << 10,      // min_tokens, stop_token_ids, ignore_eos, a stop among the first outputs
  kSpecMethod = 1u << 11,    // scheduler.speculative_method (ngram instead of mtp, with k > 0)
  kReserve = 1u << 12,       // scheduler.scheduler_reserve_full_isl
};
inline constexpr unsigned kAllKnobs = 0x1fffu;
// The scheduler side varies by default; the engine (profile, backend, k) is the base's.
inline constexpr unsigned kDefaultKnobs = static_cast<unsigned>(Knob::kChunkedPrefill) |
                                          static_cast<unsigned>(Knob::kThresholds) |
                                          static_cast<unsigned>(Knob::kBudgets) |
                                          static_cast<unsigned>(Knob::kBlocks) |
                                          static_cast<unsigned>(Knob::kPrefixCaching);

struct KnobName {
  Knob knob;
  const char* name;  // for --vary
  const char* keys;  // the scenario keys it draws, in words
};
const std::vector<KnobName>& knob_names();
// "profile" -> Knob::kProfile, "all" -> every knob, "none" -> 0; nullopt when unknown.
std::optional<unsigned> parse_knobs(std::string_view name);
// The knob a `--set key=value` key belongs to (pinned by it), 0 when none.
unsigned knob_of_key(std::string_view key);

struct TraceDistribution {
  Scenario base;                   // model, engine and scheduler kept where no knob varies
  unsigned vary = kDefaultKnobs;
  int max_requests = 8;            // 1..max_requests per trace
  int max_arrival_gap = 3;         // steps between consecutive arrivals (half arrive together)
  int max_output_tokens = 16;      // max_tokens in 1..this
};

// The trace of run `run` under `seed`: a valid scenario (scenario_problem() is "") named
// fuzz_<seed>_<run>. Deterministic in (distribution, seed, run).
Scenario generate_trace(const TraceDistribution& d, std::uint64_t seed, int run);

// The distribution in words, for `mlasim fuzz --help`.
std::string describe_distribution();

}  // namespace mlasim
