// Whole-scenario equalities of the model in double: routing (decode form) vs the golden's
// all-prefill form, with and without q_lora, across TP sizes; and bf16 caches within their class.
#include <catch2/catch.hpp>

#include <cmath>

#include "scenario/scenario_loader.h"
#include "verify/logits_compare.h"
#include "engine/replay.h"

using namespace mlasim;

namespace {

Scenario load(const std::string& model) {
  // a decodes while b (40 tokens) arrives; T = 512 sends everything down the decode path.
  const std::string text = "version: 1\nmodel: " + model +
                           "\nscheduler: {max_num_batched_tokens: 256, max_num_seqs: 4, max_model_len: 512}\n"
                           "requests:\n  - {id: a, prompt_len: 24, max_tokens: 4}\n"
                           "  - {id: b, prompt_len: 40, max_tokens: 3, arrival_step: 2}\n";
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  if (!r) FAIL(r.error().format());
  return r.value();
}

// Largest difference relative to the largest logit magnitude (elementwise relative error is
// meaningless for logits near zero).
double max_rel_diff(const LogitsRecord& a, const LogitsRecord& b) {
  REQUIRE(a.values_f64.size() == b.values_f64.size());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.values_f64.size(); ++i) {
    worst = std::max(worst, std::fabs(a.values_f64[i] - b.values_f64[i]));
    scale = std::max(scale, std::fabs(b.values_f64[i]));
  }
  return worst / scale;
}

}  // namespace

TEST_CASE("decode-form routing equals the all-prefill golden in double, with and without q_lora", "[model]") {
  for (const char* model : {"{preset: tiny}", "{preset: tiny, q_lora_rank: 64}"}) {
    INFO(model);
    Scenario s = load(model);
    ReplayOptions routed;
    routed.precision = CpuPrecision::kDouble;
    const RunRecord a = replay(s, routed), golden = replay(s, golden_replay_options());
    REQUIRE(a.logits.index.size() == 7);  // 4 + 3 sampled tokens
    CHECK(a.steps[2].counts.num_mha_tokens == 0);  // everything on the decode path (T = 512)
    // 1e-12: the two forms differ by associativity only (~1e-15 per operation).
    CHECK(max_rel_diff(a.logits, golden.logits) < 1e-12);
  }
}

TEST_CASE("tensor parallel 2 and 4 equal TP 1 in double", "[model]") {
  Scenario s = load("{preset: tiny}");
  ReplayOptions o;
  o.precision = CpuPrecision::kDouble;
  o.tensor_parallel_size = 1;
  const RunRecord tp1 = replay(s, o);
  for (int tp : {2, 4}) {
    o.tensor_parallel_size = tp;
    CHECK(max_rel_diff(replay(s, o).logits, tp1.logits) < 1e-12);  // partial sums in rank order
  }
}

TEST_CASE("a bf16 cache stays within the bf16 class of the fp64 golden, outside the fp32 class", "[model]") {
  Scenario s = load("{preset: tiny, dtype: bf16}");
  ReplayOptions o;  // float compute
  const RunRecord bf16 = replay(s, o), golden = replay(s, golden_replay_options());
  CHECK(bf16.precision == PrecisionClass::kBf16);
  CHECK(golden.precision == PrecisionClass::kFp64);
  std::vector<double> a(bf16.logits.values.begin(), bf16.logits.values.end());
  const long rows = static_cast<long>(bf16.logits.index.size());
  CHECK(compare_logits(a, golden.logits.values_f64, rows, bf16.logits.vocab_size, logits_tolerance(PrecisionClass::kBf16)).pass);
  CHECK_FALSE(compare_logits(a, golden.logits.values_f64, rows, bf16.logits.vocab_size, logits_tolerance(PrecisionClass::kFp32)).pass);
}

TEST_CASE("model_memory_check: weights and KV cache against the limit, before anything is allocated", "[model]") {
  Result<Scenario> s = load_scenario_text(
      "version: 1\nscheduler: {max_model_len: 1008, num_gpu_blocks: 64, block_size: 16}\nrequests:\n  - {id: a, prompt_len: 4}\n", "m.yaml");
  REQUIRE(s.ok());
  // tiny: 2 layers, (512 + 64) latent values per token; 64 x 16 slots x 576 x 2 layers x 4 bytes = 4.5 MiB.
  CHECK(model_memory_check(s.value(), CpuPrecision::kFloat, 1e12).ok());
  Status st = model_memory_check(s.value(), CpuPrecision::kFloat, 1024.0 * 1024);
  REQUIRE(!st.ok());
  CHECK(st.error().file == "m.yaml");
  CHECK(st.error().key_path == "model");
  CHECK(st.error().message.find("KV cache 4.5 MiB), more than the 1 MiB of memory this machine has") != std::string::npos);
  // fp64 adds a double copy of the weights and doubles the cache.
  Status dbl = model_memory_check(s.value(), CpuPrecision::kDouble, 1024.0 * 1024);
  REQUIRE(!dbl.ok());
  CHECK(dbl.error().message.find("KV cache 9 MiB)") != std::string::npos);
}
