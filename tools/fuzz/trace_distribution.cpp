// Drawing one fuzz trace: configuration first (it sets T and the block size the prompt lengths
// aim at), then the requests, then enough KV blocks for the longest one (sometimes barely enough).
#include "tools/fuzz/trace_distribution.h"

#include <algorithm>

#include "attention/routing_config.h"
#include "sim/request.h"
#include "config/request_tokens.h"
#include "sim/scheduler.h"
#include "sim/scheduler_rules.h"
#include "base/rng.h"
#include "scenario/scenario_keys.h"

namespace mlasim {

const std::vector<KnobName>& knob_names() {
  static const std::vector<KnobName> names = {
      {Knob::kProfile, "profile", "engine.profile"},
      {Knob::kBackend, "backend", "engine.attention_backend"},
      {Knob::kSpecTokens, "spec", "scheduler.num_speculative_tokens"},
      {Knob::kChunkedPrefill, "chunked", "scheduler.enable_chunked_prefill"},
      {Knob::kThresholds, "thresholds", "scheduler.long_prefill_token_threshold"},
      {Knob::kBudgets, "budgets", "scheduler.max_num_batched_tokens, max_num_seqs, max_model_len"},
      {Knob::kBlocks, "blocks", "scheduler.block_size, num_gpu_blocks"},
      {Knob::kPrefixCaching, "prefix-caching", "scheduler.enable_prefix_caching"},
      {Knob::kDecodeThreshold, "decode-threshold", "engine.reorder_batch_threshold"},
      {Knob::kPolicy, "policy", "scheduler.policy, requests' priority"},
      {Knob::kSampling, "sampling", "requests' min_tokens, stop_token_ids, ignore_eos, output"},
      {Knob::kSpecMethod, "spec-method", "scheduler.speculative_method"},
      {Knob::kReserve, "reserve", "scheduler.scheduler_reserve_full_isl"},
  };
  return names;
}

std::optional<unsigned> parse_knobs(std::string_view name) {
  if (name == "all") return kAllKnobs;
  if (name == "none") return 0u;
  for (const KnobName& k : knob_names())
    if (name == k.name) return static_cast<unsigned>(k.knob);
  return std::nullopt;
}

unsigned knob_of_key(std::string_view key) {
  const ScenarioKey* k = find_key(std::string(key));  // the table names each key's knob
  return k && k->fuzz_knob ? parse_knobs(k->fuzz_knob).value_or(0) : 0;
}

namespace {

bool varies(const TraceDistribution& d, Knob k) { return (d.vary & static_cast<unsigned>(k)) != 0; }

// The generator of run `run` under `seed`: each run's trace can be drawn on its own.
Rng run_rng(std::uint64_t seed, int run) {
  return Rng(splitmix64(seed) ^ splitmix64(0x5bd1e995ULL + static_cast<std::uint64_t>(run)));
}

void draw_engine(const TraceDistribution& d, Rng& rng, Scenario& s) {
  using P = EngineProfile;
  using B = AttentionBackendKind;
  if (varies(d, Knob::kProfile)) {
    s.engine.profile = rng.pick(
        {P::kVllm2025Early, P::kVllm011, P::kVllm012, P::kVllm3Region, P::kVllm033, P::kStrict, P::kSglang});
    s.engine.model_runner = ModelRunner::kV1;
    s.scheduler.rules = scheduler_rules_for(s.engine.profile);
  }
  if (varies(d, Knob::kBackend))
    s.engine.attention_backend =
        rng.pick({B::kFlashMla, B::kFlashAttnMla, B::kFlashInferMla, B::kCutlassMla, B::kTritonMla, B::kRocmAiterMla});
  if (varies(d, Knob::kSpecTokens)) s.scheduler.num_speculative_tokens = rng.pick({0, 0, 0, 1, 2, 3});
}

void draw_scheduler(const TraceDistribution& d, Rng& rng, Scenario& s) {
  SchedulerConfig& sc = s.scheduler;
  const int k = sc.num_speculative_tokens;
  if (varies(d, Knob::kChunkedPrefill)) sc.enable_chunked_prefill = rng.coin(75);
  if (varies(d, Knob::kPrefixCaching)) sc.enable_prefix_caching = rng.coin(80);
  if (varies(d, Knob::kBlocks)) sc.block_size = rng.pick({16, 16, 16, 1, 2, 4, 8, 64});
  if (varies(d, Knob::kBudgets)) {
    sc.max_model_len = rng.pick({128, 256, 512, 1024});
    sc.max_num_seqs = rng.pick({1, 2, 3, 4, 8, 16, 128});
    sc.max_num_batched_tokens = std::max(rng.pick({4, 8, 16, 32, 64, 128, 256, 2048}), sc.max_num_seqs);
    sc.max_num_batched_tokens = std::max(sc.max_num_batched_tokens, k + 2);
  }
  if (!sc.enable_chunked_prefill && sc.max_num_batched_tokens < sc.max_model_len) {
    if (varies(d, Knob::kBudgets))
      sc.max_num_batched_tokens = sc.max_model_len;
    else
      sc.enable_chunked_prefill = true;  // the base's budgets cannot run without chunking
  }
  if (varies(d, Knob::kDecodeThreshold)) {
    s.engine.reorder_batch_threshold = std::nullopt;
    if (rng.coin(30)) s.engine.reorder_batch_threshold = rng.pick({1, 2, 4, 16, 64, 512});
  }
  if (varies(d, Knob::kThresholds)) {
    const int t = make_routing_config(s).decode_threshold;
    sc.long_prefill_token_threshold = 0;
    if (rng.coin(30)) {
      // Below 1 + k too: vLLM accepts it, and its scheduler fails only if a padded one-token
      // admission gets cut (the replay stops there, exit 4).
      const int lptt = rng.pick({1, 2, t, t + 1, sc.block_size, 4, 8});
      sc.long_prefill_token_threshold = std::min(lptt, sc.max_model_len);
    }
  }
}

// A prompt length weighted to the edges where routing and scheduling change.
int draw_prompt_len(Rng& rng, int t, int block, int longest) {
  int len = 1;
  switch (rng.between(0, 19)) {
    case 0: case 1: case 2: case 3: len = 1; break;
    case 4: case 5: len = 2; break;
    case 6: case 7: len = t; break;
    case 8: case 9: len = t + 1; break;
    case 10: len = block - 1; break;
    case 11: len = block; break;
    case 12: len = block + 1; break;
    case 13: len = 2 * block; break;
    default: len = rng.between(1, std::max(1, std::min(longest, 3 * std::max(t, block) + 8)));
  }
  return std::clamp(len, 1, longest);
}

void draw_requests(const TraceDistribution& d, Rng& rng, Scenario& s) {
  const SchedulerConfig& sc = s.scheduler;
  const int k = sc.num_speculative_tokens;
  const int t = make_routing_config(s).decode_threshold;
  const int n = rng.coin(25) ? 1 : rng.coin(27) ? 2 : rng.between(1, d.max_requests);
  const int longest = std::min(sc.max_model_len - 2, 4096);
  int arrival = 0;
  for (int i = 0; i < n; ++i) {
    RequestSpec r;
    r.id = "r" + std::to_string(i);
    if (i > 0 && rng.coin(50)) arrival += rng.between(1, d.max_arrival_gap);
    r.arrival_step = arrival;
    const int len = draw_prompt_len(rng, t, sc.block_size, longest);
    seed_prompt(r, len, {}, sc.block_size, s);
    if (i > 0 && rng.coin(25)) {  // a shared prefix: a whole number of blocks, or any length
      const RequestSpec& from = s.requests[static_cast<std::size_t>(rng.between(0, i - 1))];
      int m = std::min(len, static_cast<int>(from.prompt.size()));
      if (rng.coin(50)) m = m / sc.block_size * sc.block_size;
      std::copy_n(from.prompt.begin(), m, r.prompt.begin());
    }
    r.max_tokens = rng.coin(25) ? 1 : rng.between(1, d.max_output_tokens);
    if (k > 0 && rng.coin(40))
      for (int j = rng.between(1, 4); j > 0; --j) r.accepted_drafts.push_back(rng.between(0, k));
    seed_outputs(r, s);
    s.requests.push_back(std::move(r));
  }
  s.num_requests = n;
}

// The request-side knobs, from their own generator `rng`. A stop (a stop id, or EOS that 30% of
// those requests ignore) is listed among the outputs just past min_tokens, since seeded outputs
// avoid both.
void draw_sampling(const TraceDistribution& d, Rng& rng, Scenario& s) {
  SchedulerConfig& sc = s.scheduler;
  const bool policy = varies(d, Knob::kPolicy), sampling = varies(d, Knob::kSampling);
  if (policy && rng.coin(50)) sc.policy = SchedulingPolicy::kPriority;
  if (varies(d, Knob::kSpecMethod) && sc.num_speculative_tokens > 0 && rng.coin(50))
    sc.speculative_method = SpeculativeMethod::kNgram;
  if (varies(d, Knob::kReserve)) sc.rules.scheduler_reserve_full_isl = rng.coin(50);
  // What the profile's vLLM refuses is not drawn (vLLM 0.8's V1: no MTP, no request priorities).
  if (!sc.rules.v1_runs_mtp) sc.speculative_method = SpeculativeMethod::kNgram;
  for (RequestSpec& r : s.requests) {
    if (policy) {
      const int priority = rng.between(0, 2);  // drawn either way: the other draws stay the same
      r.priority = sc.rules.priority_supported ? priority : 0;
    }
    if (!sampling) continue;
    if (rng.coin(20)) r.min_tokens = rng.between(1, r.max_tokens);
    // The stop's index: past min_tokens (no engine samples a stop before) and within the outputs
    // the request can sample.
    const int lo = r.min_tokens, hi = std::min(static_cast<int>(r.output.size()) - 1, r.min_tokens + 3);
    if (lo > hi || !rng.coin(30)) continue;
    const int eos = s.model.eos_token_id;
    // A stop id is drawn again while one of the first min_tokens outputs (seeded before it was
    // chosen) is that id: no engine samples a stop there, and the loader refuses it.
    const auto early = [&](int id) {
      return std::find(r.output.begin(), r.output.begin() + r.min_tokens, id) != r.output.begin() + r.min_tokens;
    };
    int stop = rng.coin(50) ? eos : rng.between(2, s.model.vocab_size - 1);
    while (stop != eos && early(stop)) stop = rng.between(2, s.model.vocab_size - 1);
    if (stop == eos)
      r.ignore_eos = rng.coin(30);
    else
      r.stop_token_ids.push_back(stop);
    r.output.resize(static_cast<std::size_t>(rng.between(lo, hi)));
    r.output.push_back(stop);
    r.output_given = true;
    seed_outputs(r, s);
  }
}

// KV blocks: the base's, or (blocks varied) enough for the longest request, sometimes barely.
void draw_blocks(const TraceDistribution& d, Rng& rng, Scenario& s) {
  SchedulerConfig& sc = s.scheduler;
  if (varies(d, Knob::kBlocks)) {
    int need = 2;
    for (const RequestSpec& r : s.requests) {
      const int tokens = static_cast<int>(r.prompt.size()) + r.max_tokens + sc.num_speculative_tokens + 1;
      need = std::max(need, 1 + (tokens + sc.block_size - 1) / sc.block_size);
    }
    sc.num_gpu_blocks = rng.coin(40) ? need + rng.between(0, need) : std::max(need, rng.pick({64, 256, 1024}));
  }
  // Grow until every request certainly fits, so that every drawn trace can complete.
  for (bool fits = false; !fits && sc.num_gpu_blocks < (1 << 24);) {
    fits = true;
    for (std::size_t i = 0; i < s.requests.size() && fits; ++i)
      fits = request_always_fits(s.requests[i], sc, sc.max_model_len);
    if (!fits) sc.num_gpu_blocks = std::min(sc.num_gpu_blocks * 2, 1 << 24);
  }
  // vLLM 0.33 starts only when the usable blocks hold max_model_len tokens (check_kv_cache_startup).
  // A tighter pool lowers a drawn max_model_len to what it holds (every prompt stays below it: the
  // pool holds each request's prompt, max_tokens and drafts, or max_model_len); a given one raises
  // the pool instead.
  const long long holds = static_cast<long long>(sc.num_gpu_blocks - 1) * sc.block_size;
  if (sc.rules.startup_checks_usable_blocks && holds < sc.max_model_len) {
    if (varies(d, Knob::kBudgets)) {
      sc.max_model_len = static_cast<int>(holds);
      sc.long_prefill_token_threshold = std::min(sc.long_prefill_token_threshold, sc.max_model_len);
    } else {
      sc.num_gpu_blocks = (sc.max_model_len + sc.block_size - 1) / sc.block_size + 1;
    }
  }
}

}  // namespace

Scenario generate_trace(const TraceDistribution& d, std::uint64_t seed, int run) {
  Scenario s = d.base;
  s.name = "fuzz_" + std::to_string(seed) + "_" + std::to_string(run);
  s.source = s.name;
  s.description.clear();
  s.requests.clear();
  s.requests_file.clear();
  s.timed_arrivals = false;
  s.expect = {};
  Rng rng = run_rng(seed, run);
  draw_engine(d, rng, s);
  draw_scheduler(d, rng, s);
  draw_requests(d, rng, s);
  if (d.vary & (static_cast<unsigned>(Knob::kPolicy) | static_cast<unsigned>(Knob::kSampling) |
                static_cast<unsigned>(Knob::kSpecMethod) | static_cast<unsigned>(Knob::kReserve))) {
    Rng own(splitmix64(seed ^ 0x7f4a7c15ULL) ^ splitmix64(0x9e3779b9ULL + static_cast<std::uint64_t>(run)));
    draw_sampling(d, own, s);
  }
  draw_blocks(d, rng, s);
  return s;
}

std::string describe_distribution() {
  return "Each run draws one trace (fuzz_<seed>_<run>, the same for the same seed and run):\n"
         "  requests   1 (25%), 2 (20%), else 1..--max-requests (8); half arrive with the one before,\n"
         "             the rest 1..3 steps later\n"
         "  prompts    1 (20%), 2, T, T+1 (10% each), block_size-1, block_size, block_size+1, 2*block_size\n"
         "             (5% each), else uniform up to 3*max(T, block_size)+8; T is the decode threshold\n"
         "             (the backend's, with k: at least 1+k); a quarter share a prefix with an earlier prompt\n"
         "  outputs    max_tokens 1 (25%), else 1..16; with k > 0, 40% list 1..4 accepted_drafts in 0..k\n"
         "Varied knobs (--vary; the default is chunked,thresholds,budgets,blocks,prefix-caching; a --set key\n"
         "pins its knob):\n"
         "  profile         one of the six engine profiles\n"
         "  backend         one of the six attention backends\n"
         "  spec            num_speculative_tokens 0 (50%), 1, 2, 3\n"
         "  chunked         enable_chunked_prefill on (75%) or off\n"
         "  thresholds      long_prefill_token_threshold 0 (70%) or 1, 2, T, T+1, block_size, 4, 8\n"
         "  budgets         max_model_len 128..1024, max_num_seqs 1..128, max_num_batched_tokens 4..2048\n"
         "  blocks          block_size 16 (3/8), 1, 2, 4, 8, 64; num_gpu_blocks: 40% barely enough for\n"
         "                  the longest request (preemption pressure), else 64, 256 or 1024; with vLLM\n"
         "                  0.33's rules max_model_len is then lowered to what the usable blocks hold\n"
         "                  (its start-up check; a --set max_model_len raises num_gpu_blocks instead)\n"
         "  prefix-caching  enable_prefix_caching on (80%) or off\n"
         "  decode-threshold  reorder_batch_threshold, the backend's T (70%) or 1, 2, 4, 16, 64, 512\n"
         "  policy          policy priority (50%), each request's priority 0..2\n"
         "  sampling        per request: min_tokens 1..max_tokens (20%); a stop among the outputs after it\n"
         "                  (30%): a stop id, or EOS (ignore_eos for 30% of those)\n"
         "  spec-method     speculative_method ngram (50%, with k > 0) instead of mtp\n"
         "  reserve         scheduler_reserve_full_isl on or off (50%)\n";
}

}  // namespace mlasim
