// DeepSeek sparse attention in the CPU reference (docs/spec/mla.md §10): the indexer's top-k
// decides which positions a query attends to. The independent oracle is transformers'
// DeepseekV32ForCausalLM on `mlasim export` (tools/conformance/transformers_logits.py: the tiny-dsa
// scenarios match it to half a float32 ulp, tools/bench/RESULTS.md); these tests hold what follows
// from the definition: within index_topk the sparse model is the dense one, past it it is not, and
// its two forms (the absorbed top-k form of the replay, the MHA form with the top-k mask of the
// golden) agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/replay.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

// A 40-token prompt decoded 3 steps on tiny-dsa (index_topk 16), with the index_topk given.
Scenario scenario(int index_topk) {
  Result<Scenario> s = load_scenario_text(
      "version: 1\nmodel: {preset: tiny-dsa, index_topk: " + std::to_string(index_topk) +
          "}\nscheduler: {max_num_batched_tokens: 256, max_num_seqs: 4, max_model_len: 512, num_gpu_blocks: 64}\n"
          "engine: {profile: vllm-0.33, attention_backend: flashmla-sparse}\n"
          "requests:\n  - {id: a, prompt_len: 40, max_tokens: 4, ignore_eos: true}\n",
      std::string(MLASIM_SOURCE_DIR) + "/scenarios/model/t.yaml");
  REQUIRE(s.ok());
  return s.value();
}

// The largest |a - b| over one logits row.
double row_diff(const LogitsRecord& a, const LogitsRecord& b, std::size_t row) {
  const std::size_t V = static_cast<std::size_t>(a.vocab_size);
  double worst = 0;
  for (std::size_t j = 0; j < V; ++j) worst = std::max(worst, std::abs(a.values_f64[row * V + j] - b.values_f64[row * V + j]));
  return worst;
}

}  // namespace

TEST_CASE("DSA: within index_topk sparse is dense, past it the top-k changes the logits", "[dsa][model]") {
  // The golden mode (fp64, every token in the MHA form) of the same weights: index_topk does not
  // change a tensor's name or shape, so 16 and 4096 (every position) share every weight.
  const RunRecord sparse = replay(scenario(16), golden_replay_options());
  const RunRecord dense = replay(scenario(4096), golden_replay_options());
  REQUIRE(sparse.logits.index.size() == 4);
  REQUIRE(dense.logits.index.size() == 4);
  // Every row is at position >= 39, past index_topk 16: the sparse model attends to 16 of 40+
  // positions per layer and its logits move by far more than rounding.
  for (std::size_t r = 0; r < 4; ++r) {
    INFO("row " << r << " position " << sparse.logits.index[r].position);
    CHECK(sparse.logits.index[r].position == 39 + static_cast<int>(r));
    CHECK(row_diff(sparse.logits, dense.logits, r) > 1e-3);
  }
  // index_topk 43 covers every position the four rows see (the last is at 42): dense, bit for bit.
  const RunRecord all = replay(scenario(43), golden_replay_options());
  CHECK(all.logits.values_f64 == dense.logits.values_f64);
}

TEST_CASE("DSA: the replay's absorbed top-k form agrees with the golden's masked MHA form", "[dsa][model]") {
  ReplayOptions replay_options = golden_replay_options();
  replay_options.force_prefill_path = false;  // the routed forms: every token here on top-k MQA
  const Scenario s = scenario(16);
  const RunRecord routed = replay(s, replay_options);
  const RunRecord golden = replay(s, golden_replay_options());
  REQUIRE(routed.logits.index.size() == golden.logits.index.size());
  // Both fp64: the same attention in two association orders (docs/spec/tolerances.md: the forms
  // agree to ~1e-12 relative in double).
  for (std::size_t r = 0; r < routed.logits.index.size(); ++r) CHECK(row_diff(routed.logits, golden.logits, r) < 1e-9);
  // And the dense model differs from both, so the agreement is not the dense model's twice.
  const RunRecord dense = replay(scenario(4096), golden_replay_options());
  CHECK(row_diff(routed.logits, dense.logits, 0) > 1e-3);
}

TEST_CASE("DSA: the masked MHA form in float agrees with the fp64 golden", "[dsa][model]") {
  // float's vectorised exponential on the masked (-inf) scores: exactly 0, no NaN.
  ReplayOptions f32 = golden_replay_options();
  f32.precision = CpuPrecision::kFloat;  // every token in the MHA form, with the top-k mask
  const Scenario s = scenario(16);
  const RunRecord run = replay(s, f32);
  const RunRecord golden = replay(s, golden_replay_options());
  REQUIRE(run.logits.index.size() == golden.logits.index.size());
  const std::size_t V = static_cast<std::size_t>(golden.logits.vocab_size);
  for (std::size_t r = 0; r < golden.logits.index.size(); ++r)
    for (std::size_t j = 0; j < V; ++j) {
      const double a = run.logits.values[r * V + j], b = golden.logits.values_f64[r * V + j];
      REQUIRE(std::isfinite(a));
      // fp32 compute of O(1) logits over two layers: ~1e-6; within the fp32 class's abs 1e-4
      // (verify/logits_compare.cpp), scaled by the logit past magnitude 1.
      CHECK(std::abs(a - b) < 1e-4 * std::max(1.0, std::abs(b)));
    }
}
