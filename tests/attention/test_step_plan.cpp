// make_step_plan on routed batches: the vLLM counts of each form, the prefill-form rows' context
// chunks, the cache-write mask after faults, RoPE positions and the sampled tokens, exactly.
#include <catch2/catch.hpp>

#include <array>

#include "attention/step_plan.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

using Batch = std::vector<std::pair<int, int>>;
using Chunks = std::vector<std::vector<ContextChunk>>;

constexpr int kVocab = 512, kBlockSize = 4;

// One routed step of `batch` (request, q) and its plan; every row samples its last token.
struct PlannedStep {
  StepDriver::Step step;
  StepPlan plan;
};

PlannedStep plan_step(const StepDriver& d, const Batch& batch, bool force_prefill = false, FaultSet faults = {},
                      std::vector<int> num_sample_tokens = {}) {
  PlannedStep s{d.plan(batch), {}};
  StepInputs in;
  in.metadata = &s.step.md;
  in.token_ids = s.step.token_ids;
  in.force_prefill_path = force_prefill;
  for (int r = 0; r < s.step.md.num_reqs; ++r) {
    in.sample_rows.push_back(r);
    in.num_sample_tokens.push_back(num_sample_tokens.empty() ? 1 : num_sample_tokens[static_cast<size_t>(r)]);
  }
  s.plan = make_step_plan(in, kVocab, kBlockSize, faults);
  return s;
}

// num_decodes, num_decode_tokens, num_prefills, num_prefill_tokens.
using Counts = std::array<int, 4>;
Counts counts(const StepPlan& p) { return {p.forms.num_decodes, p.forms.num_decode_tokens, p.forms.num_prefills, p.forms.num_prefill_tokens}; }

std::vector<int> positions(const StepPlan& p) { return {p.positions.begin(), p.positions.end()}; }

using ChunkList = std::vector<std::array<int, 3>>;  // (prefill-form row, start, len) per chunk

ChunkList flat(const Chunks& c) {
  ChunkList out;
  for (size_t r = 0; r < c.size(); ++r)
    for (const ContextChunk& ch : c[r]) out.push_back({static_cast<int>(r), ch.start, ch.len});
  return out;
}

std::vector<bool> all(int n, bool v) { return std::vector<bool>(static_cast<size_t>(n), v); }

// Requests: 0 has 8 cached tokens, 1 has 10, 2 has 3, 3 is a fresh 6-token prompt.
StepDriver driver(const RoutingConfig& routing) {
  StepDriver d(routing, 64);
  for (int i = 0; i < 4; ++i) d.add_request(seeded_sequence(static_cast<std::uint64_t>(40 + i), 24, kVocab), 6);
  d.set_computed(0, 8);
  d.set_computed(1, 10);
  d.set_computed(2, 3);
  return d;
}

}  // namespace

TEST_CASE("step plan: decode-only batch", "[mla]") {
  const StepDriver d = driver(mla_routing());
  const PlannedStep s = plan_step(d, {{0, 1}, {1, 2}}, false, {}, {1, 2});
  REQUIRE(s.step.reqs == std::vector<int>{0, 1});
  const StepPlan& p = s.plan;
  CHECK(p.num_reqs == 2);
  CHECK(p.num_actual_tokens == 3);
  CHECK(counts(p) == Counts{2, 3, 0, 0});
  CHECK(p.context_chunks.empty());
  CHECK(p.num_context_rounds == 0);
  CHECK(p.write_cache == all(3, true));
  CHECK(positions(p) == std::vector<int>{8, 10, 11});
  CHECK(p.logits_indices == std::vector<int>{0, 1, 2});
  CHECK(p.query_start(1) == 1);
  CHECK(p.query_len(1) == 2);
}

TEST_CASE("step plan: prefill-only batch", "[mla]") {
  const StepDriver d = driver(mla_routing());
  const PlannedStep s = plan_step(d, {{3, 6}, {2, 5}});
  REQUIRE(s.step.reqs == std::vector<int>{2, 3});
  const StepPlan& p = s.plan;
  CHECK(counts(p) == Counts{0, 0, 2, 11});
  // The extend's 3 cached tokens fit the workspace in one chunk; the fresh row has no context.
  CHECK(flat(p.context_chunks) == ChunkList{{0, 0, 3}});
  CHECK(p.num_context_rounds == 1);
  CHECK(p.write_cache == all(11, true));
  CHECK(positions(p) == std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5});
  CHECK(p.logits_indices == std::vector<int>{4, 10});
}

TEST_CASE("step plan: mixed batch, decodes first, then prefill-form rows", "[mla]") {
  const StepDriver d = driver(mla_routing());
  // Persistent order: the extend, a decode, the fresh prompt, a decode; the reorder puts the
  // decodes first. num_sample_tokens are per reordered row.
  const PlannedStep s = plan_step(d, {{2, 5}, {0, 1}, {3, 6}, {1, 2}}, false, {}, {1, 1, 3, 2});
  REQUIRE(s.step.reqs == std::vector<int>{1, 0, 2, 3});
  const StepPlan& p = s.plan;
  CHECK(counts(p) == Counts{2, 3, 2, 11});
  CHECK(p.num_actual_tokens == 14);
  // Prefill-form rows: one chunk [0, 3) for the extend, none for the fresh prompt.
  CHECK(flat(p.context_chunks) == ChunkList{{0, 0, 3}});
  CHECK(p.num_context_rounds == 1);
  CHECK(p.write_cache == all(14, true));
  CHECK(positions(p) == std::vector<int>{10, 11, 8, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5});
  CHECK(p.logits_indices == std::vector<int>{1, 2, 5, 6, 7, 12, 13});
}

TEST_CASE("step plan: force_prefill_path sends every row through the prefill form", "[mla]") {
  const StepDriver d = driver(mla_routing());
  const PlannedStep s = plan_step(d, {{0, 1}, {1, 2}, {3, 6}}, true);
  REQUIRE(s.step.reqs == std::vector<int>{0, 1, 3});
  const StepPlan& p = s.plan;
  CHECK(counts(p) == Counts{0, 0, 3, 9});
  // One chunk over each row's whole context (the decode rows' 8 and 10 cached tokens).
  CHECK(flat(p.context_chunks) == ChunkList{{0, 0, 8}, {1, 0, 10}});
  CHECK(p.num_context_rounds == 1);
  CHECK(positions(p) == std::vector<int>{8, 10, 11, 0, 1, 2, 3, 4, 5});
  CHECK(p.logits_indices == std::vector<int>{0, 2, 8});
}

TEST_CASE("step plan: chunked context takes the metadata's chunks, round by round", "[mla]") {
  // W = max(min(max(8 * 2, 4 * 1 * 4), 65536), 1 * 4) = 16 tokens; two rows with context share it:
  // max_context_chunk = 8, so 20 cached tokens take three chunks and 6 take one.
  StepDriver d(mla_routing(4, kBlockSize, 2, 1), 64);
  d.add_request(seeded_sequence(50, 30, kVocab), 24);
  d.add_request(seeded_sequence(51, 30, kVocab), 12);
  d.set_computed(0, 20);
  d.set_computed(1, 6);
  const PlannedStep s = plan_step(d, {{0, 5}, {1, 6}});
  REQUIRE(s.step.reqs == std::vector<int>{0, 1});
  REQUIRE(s.step.md.prefill);
  CHECK(s.step.md.prefill->chunked_context.workspace_size == 16);
  const StepPlan& p = s.plan;
  CHECK(counts(p) == Counts{0, 0, 2, 11});
  CHECK(flat(p.context_chunks) == ChunkList{{0, 0, 8}, {0, 8, 8}, {0, 16, 4}, {1, 0, 6}});
  CHECK(p.num_context_rounds == 3);
  // Forced to the prefill form, the same rows take one chunk each.
  const PlannedStep f = plan_step(d, {{0, 5}, {1, 6}}, true);
  CHECK(flat(f.plan.context_chunks) == ChunkList{{0, 0, 20}, {1, 0, 6}});
  CHECK(f.plan.num_context_rounds == 1);
}

TEST_CASE("step plan: decode_skips_cache_write_for_fresh_rows drops the fresh decode-form rows' writes", "[mla]") {
  // vllm-2025-early sends one-token prompts down the decode path.
  StepDriver d(mla_routing(4, kBlockSize, 4096, 8, EngineProfile::kVllm2025Early), 64);
  d.add_request(seeded_sequence(60, 12, kVocab), 6);
  d.add_request(seeded_sequence(61, 4, kVocab), 1);
  d.add_request(seeded_sequence(62, 8, kVocab), 5);
  d.set_computed(0, 7);
  const Batch batch{{0, 1}, {1, 1}, {2, 5}};
  const FaultSet fault{Fault::kDecodeSkipsCacheWriteForFreshRows};
  const PlannedStep s = plan_step(d, batch, false, fault);
  REQUIRE(s.step.reqs == std::vector<int>{0, 1, 2});
  REQUIRE(s.step.route.rows[1].fresh_on_decode_path);
  CHECK(counts(s.plan) == Counts{2, 2, 1, 5});
  CHECK(s.plan.write_cache == std::vector<bool>{true, false, true, true, true, true, true});
  // Without the fault, or with every row on the prefill form, every latent is written.
  CHECK(plan_step(d, batch).plan.write_cache == all(7, true));
  CHECK(plan_step(d, batch, true, fault).plan.write_cache == all(7, true));
}
