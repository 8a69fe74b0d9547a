// Injected faults change the logits exactly where the real bug would, and nowhere else.
#include <catch2/catch.hpp>

#include "attention/cpu/cpu_backend.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

using Batch = std::vector<std::pair<int, int>>;
using Logits = std::vector<std::vector<double>>;

const MlaWeights& weights() {
  static const MlaWeights w = seeded_weights(tiny_config());
  return w;
}

// Runs `script` on a clean and a faulty backend; per step, per request: logits equal (bitwise)?
std::vector<std::vector<bool>> same_per_step(FaultSet faults, const RoutingConfig& routing, int num_requests,
                                             const std::vector<Batch>& script, bool force_prefill = false) {
  CpuBackendOptions o;
  o.num_blocks = 64;
  o.block_size = 4;
  CpuBackend<double> clean(weights(), o);
  o.faults = faults;
  CpuBackend<double> faulty(weights(), o);
  StepDriver d1(routing, 64), d2(routing, 64);
  for (int i = 0; i < num_requests; ++i) {
    d1.add_request(seeded_sequence(static_cast<std::uint64_t>(20 + i), 16, 512), 6);
    d2.add_request(seeded_sequence(static_cast<std::uint64_t>(20 + i), 16, 512), 6);
  }
  std::vector<std::vector<bool>> same;
  for (const Batch& b : script) {
    const Logits x = d1.run(clean, b, force_prefill), y = d2.run(faulty, b, force_prefill);
    std::vector<bool> s;
    for (size_t r = 0; r < x.size(); ++r) s.push_back(x[r] == y[r]);
    same.push_back(s);
  }
  return same;
}

// vllm-current, T = 4: A prefill; A decode; B fresh prefill + A decode; B extend with context + A decode.
const std::vector<Batch> kScript{{{0, 6}}, {{0, 1}}, {{1, 5}, {0, 1}}, {{1, 6}, {0, 1}}};
using V = std::vector<std::vector<bool>>;

}  // namespace

TEST_CASE("faults: names parse and print", "[mla]") {
  CHECK(all_faults().size() == kNumFaults);
  for (Fault f : all_faults()) CHECK(parse_fault(to_string(f)) == f);
  CHECK(parse_fault("decode_skips_cache_write_for_fresh_rows") == Fault::kDecodeSkipsCacheWriteForFreshRows);
  CHECK_FALSE(parse_fault("no_such_fault"));
  FaultSet s{Fault::kKvNormDropped, Fault::kDecodeScale1OverSqrt576};
  CHECK(s.to_string() == "decode_scale_1_over_sqrt_576,kv_norm_dropped");
  CHECK(FaultSet{}.empty());
}

TEST_CASE("faults: decode-path faults change decode-path tokens only", "[mla]") {
  for (Fault f : {Fault::kDecodeScale1OverSqrt576, Fault::kWUkTransposed}) {
    INFO(to_string(f));
    // Step 0 (prefill path only) unchanged; step 1 (a decode) changed.
    const V same = same_per_step({f}, mla_routing(), 2, {kScript[0], kScript[1]});
    CHECK(same == V{{true}, {false}});
    // With every token on the prefill form nothing changes.
    CHECK(same_per_step({f}, mla_routing(), 2, kScript, true) == V{{true}, {true}, {true, true}, {true, true}});
  }
}

TEST_CASE("faults: decode_skips_cache_write_for_fresh_rows only matters for fresh decode-path rows", "[mla]") {
  const FaultSet f{Fault::kDecodeSkipsCacheWriteForFreshRows};
  // vllm-current never puts a fresh row on the decode path: the whole script is unchanged.
  CHECK(same_per_step(f, mla_routing(), 2, kScript) == V{{true}, {true}, {true, true}, {true, true}});
  // vllm-2025-early sends a one-token prompt down the decode path: its own key is never cached.
  const RoutingConfig early = mla_routing(4, 4, 4096, 8, EngineProfile::kVllm2025Early);
  StepDriver d(early, 64);
  d.add_request(seeded_sequence(30, 4, 512), 1);
  CHECK(d.plan({{0, 1}}).route.rows[0].fresh_on_decode_path);
  CHECK(same_per_step(f, early, 2, {{{0, 1}}}) == V{{false}});
  // A decode with context under the same profile is unaffected.
  CHECK(same_per_step(f, early, 2, {{{0, 6}}, {{0, 1}}}) == V{{true}, {true}});
}

TEST_CASE("faults: chunk_lse_merge_wrong changes prefill-path rows with context only", "[mla]") {
  const V same = same_per_step({Fault::kChunkLseMergeWrong}, mla_routing(), 2, kScript);
  CHECK(same == V{{true}, {true}, {true, true}, {false, true}});
}

TEST_CASE("faults: rope_neox_instead_of_interleaved and kv_norm_dropped", "[mla]") {
  const FaultSet neox{Fault::kRopeNeoxInsteadOfInterleaved};
  CHECK(same_per_step(neox, mla_routing(), 2, {kScript[0]}) == V{{false}});
  // One-token prompts sit at position 0, where every rotation is the identity.
  CHECK(same_per_step(neox, mla_routing(), 2, {{{0, 1}, {1, 1}}}) == V{{true, true}});
  const FaultSet norm{Fault::kKvNormDropped};
  CHECK(same_per_step(norm, mla_routing(), 2, {{{0, 1}, {1, 1}}}) == V{{false, false}});
}
