// fp8 KV caches (attention/kv_cache_quant.h, docs/spec/mla.md §11): e4m3 rounding and bytes, the
// fp8_ds_mla layout, which format and query rule a deployment gets, and the golden following the
// routing on such a cache. The independent oracle is tools/oracle/fp8_cache.py (CI:
// oracle.goldens, oracle.fault.fp8_dequant_scale_wrong, oracle.edited_fp8_golden).
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "attention/kv_cache_quant.h"
#include "engine/replay.h"
#include "model/bf16.h"
#include "model/fp8.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

TEST_CASE("round_to_fp8_e4m3: nearest e4m3 value, ties to even, saturating at 448", "[fp8]") {
  CHECK(round_to_fp8_e4m3(1.0f) == 1.0f);
  CHECK(round_to_fp8_e4m3(1.0625f) == 1.0f);     // halfway 1 | 1.125: the even mantissa
  CHECK(round_to_fp8_e4m3(1.1875f) == 1.25f);    // halfway 1.125 | 1.25: the even one is 1.25
  CHECK(round_to_fp8_e4m3(1.07f) == 1.125f);
  CHECK(round_to_fp8_e4m3(-3.3f) == -3.25f);     // spacing 0.25 in [2, 4)
  CHECK(round_to_fp8_e4m3(440.0f) == 448.0f);    // spacing 32 in [256, 448]
  CHECK(round_to_fp8_e4m3(500.0f) == 448.0f);    // SATFINITE
  CHECK(round_to_fp8_e4m3(-1e9f) == -448.0f);
  CHECK(round_to_fp8_e4m3(std::ldexp(1.0f, -6)) == std::ldexp(1.0f, -6));  // smallest normal
  CHECK(round_to_fp8_e4m3(0.003f) == std::ldexp(2.0f, -9));                 // subnormal: 1.536 · 2^-9 -> 2 · 2^-9
  CHECK(round_to_fp8_e4m3(std::ldexp(1.0f, -10)) == 0.0f);                  // halfway 0 | 2^-9: 0
  CHECK(round_to_fp8_e4m3(std::ldexp(3.0f, -10)) == std::ldexp(2.0f, -9));  // halfway 1 | 2 (· 2^-9): 2
  CHECK(std::isnan(round_to_fp8_e4m3(NAN)));
}

TEST_CASE("fp8 e4m3 bytes: every finite code round-trips, and known codes", "[fp8]") {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    const float v = fp8_e4m3_value(static_cast<std::uint8_t>(b));
    if (std::isnan(v)) continue;
    ++finite;
    CHECK(round_to_fp8_e4m3(v) == v);
    CHECK(fp8_e4m3_bits(v) == b);
  }
  CHECK(finite == 254);  // 0x7f and 0xff are NaN; no infinities
  CHECK(fp8_e4m3_value(0x7e) == 448.0f);
  CHECK(fp8_e4m3_value(0x38) == 1.0f);
  CHECK(fp8_e4m3_value(0x08) == std::ldexp(1.0f, -6));
  CHECK(fp8_e4m3_value(0x01) == std::ldexp(1.0f, -9));
  CHECK(fp8_e4m3_value(0xc0) == -2.0f);
}

TEST_CASE("fp8_ds_mla: 656 bytes for r_kv 512 and d_r 64, scales after the NoPE bytes, RoPE in bf16", "[fp8]") {
  CHECK(fp8_ds_mla_row_bytes(512, 64) == 656);
  std::vector<float> latent(576);
  for (int i = 0; i < 576; ++i) latent[static_cast<size_t>(i)] = round_to_bf16(std::sin(0.37f * static_cast<float>(i)) * static_cast<float>(1 + i / 128));
  latent[5] = 4.5f;  // tile 0's largest magnitude
  std::vector<std::uint8_t> bytes(656);
  encode_fp8_ds_mla(latent, 512, bytes);
  float scale0;
  std::memcpy(&scale0, &bytes[512], 4);
  CHECK(scale0 == 4.5f / 448.0f);
  CHECK(bytes[5] == 0x7e);  // the tile's largest value maps to 448
  for (int tile = 0; tile < 4; ++tile) {
    float amax = 0, scale;
    for (int i = 0; i < 128; ++i) amax = std::max(amax, std::fabs(latent[static_cast<size_t>(tile * 128 + i)]));
    std::memcpy(&scale, &bytes[static_cast<size_t>(512 + 4 * tile)], 4);
    CHECK(scale == std::max(amax / 448.0f, FLT_MIN));
  }
  for (int i = 0; i < 64; ++i) {
    std::uint16_t b;
    std::memcpy(&b, &bytes[static_cast<size_t>(528 + 2 * i)], 2);
    CHECK(b == bf16_bits(latent[static_cast<size_t>(512 + i)]));
  }
  std::vector<float> back(576);
  decode_fp8_ds_mla(KvCacheQuant{}, bytes, 512, back);
  CHECK(back[5] == 4.5f);
  for (int i = 0; i < 512; ++i) {
    const float s = i < 128 ? scale0 : 0;
    if (i < 128) CHECK(back[static_cast<size_t>(i)] == round_to_bf16(round_to_fp8_e4m3(latent[static_cast<size_t>(i)] / s) * s));
    CHECK(std::fabs(back[static_cast<size_t>(i)] - latent[static_cast<size_t>(i)]) <= std::fabs(latent[static_cast<size_t>(i)]) / 16 + 1e-3f);
  }
  for (int i = 512; i < 576; ++i) CHECK(back[static_cast<size_t>(i)] == latent[static_cast<size_t>(i)]);
  // A zero tile keeps a positive scale (FLT_MIN) and reads back zeros.
  std::vector<float> zeros(576, 0.0f);
  encode_fp8_ds_mla(zeros, 512, bytes);
  std::memcpy(&scale0, &bytes[512], 4);
  CHECK(scale0 == FLT_MIN);
  decode_fp8_ds_mla(KvCacheQuant{}, bytes, 512, back);
  CHECK(back[0] == 0.0f);
}

TEST_CASE("kv_cache_quant: the format and query rule per dtype and backend, as vLLM 0.33 has them", "[fp8]") {
  using K = AttentionBackendKind;
  using D = KvCacheDtype;
  const auto q = [](D d, K k, int r_kv = 512) { return kv_cache_quant(d, k, true, r_kv); };
  CHECK(q(D::kAuto, K::kFlashMla).quant.kind == KvCacheQuantKind::kNone);
  CHECK(q(D::kBfloat16, K::kFlashInferMla).quant.kind == KvCacheQuantKind::kNone);
  CHECK(q(D::kFp8, K::kFlashMla).quant.kind == KvCacheQuantKind::kFp8PerTensor);
  CHECK(q(D::kFp8, K::kFlashMla).quant.quantize_query);
  CHECK(q(D::kFp8E4m3, K::kCutlassMla).quant.quantize_query);
  CHECK_FALSE(q(D::kFp8, K::kTritonMla).quant.quantize_query);  // Triton dequantizes on load, bf16 query
  CHECK(q(D::kFp8E4m3, K::kFlashInferMlaSparse).quant.quantize_query);
  CHECK_FALSE(q(D::kFp8, K::kFlashInferMlaSparseSm90).quant.quantize_query);
  // FLASHMLA_SPARSE serves every fp8 dtype as fp8_ds_mla; SM120's sparse backend even auto.
  CHECK(q(D::kFp8, K::kFlashMlaSparse).quant.kind == KvCacheQuantKind::kFp8DsMla);
  CHECK(q(D::kFp8E4m3, K::kFlashMlaSparse).quant.kind == KvCacheQuantKind::kFp8DsMla);
  CHECK_FALSE(q(D::kFp8DsMla, K::kFlashMlaSparse).quant.quantize_query);
  CHECK(q(D::kAuto, K::kFlashInferMlaSparseSm120).quant.kind == KvCacheQuantKind::kFp8DsMla);
  CHECK(q(D::kAuto, K::kFlashMlaSparse).quant.kind == KvCacheQuantKind::kNone);
  CHECK(q(D::kFp8DsMla, K::kFlashMlaSparse, 192).unsupported.find("not a multiple of 128") != std::string::npos);
  CHECK(q(D::kFp8E5m2, K::kRocmAiterMla).unsupported.find("fp8_e5m2") != std::string::npos);
  CHECK(q(D::kNvfp4DsMla, K::kFlashMlaSparse).unsupported.find("nvfp4_ds_mla") != std::string::npos);
}

namespace {

Scenario fp8_scenario(const std::string& dtype) {
  Result<Scenario> s = load_scenario_text(
      "version: 1\nmodel: {preset: tiny, dtype: bf16}\n"
      "scheduler: {max_num_batched_tokens: 256, max_num_seqs: 4, max_model_len: 512, num_gpu_blocks: 64}\n"
      "engine: {profile: vllm-0.33, attention_backend: flashmla}\ncache: {kv_cache_dtype: " + dtype + "}\n"
      "requests:\n  - {id: a, prompt_len: 20, max_tokens: 3, ignore_eos: true}\n"
      "  - {id: b, prompt_len: 1, max_tokens: 2, arrival_step: 1, ignore_eos: true}\n",
      std::string(MLASIM_SOURCE_DIR) + "/scenarios/model/t.yaml");
  REQUIRE(s.ok());
  return s.value();
}

double max_diff(const LogitsRecord& a, const LogitsRecord& b) {
  REQUIRE(a.values_f64.size() == b.values_f64.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.values_f64.size(); ++i) worst = std::max(worst, std::abs(a.values_f64[i] - b.values_f64[i]));
  return worst;
}

}  // namespace

TEST_CASE("fp8 cache: the golden follows the routing, and the quantization shows in the logits", "[fp8]") {
  const Scenario fp8 = fp8_scenario("fp8");
  ReplayOptions routed = golden_replay_options();
  routed.force_prefill_path = false;
  const RunRecord golden = replay(fp8, golden_replay_options());
  const RunRecord as_routed = replay(fp8, routed);
  REQUIRE(golden.logits.index.size() == 5);
  // On an fp8 cache golden mode runs each row in its routed form: the same computation, bit for bit.
  CHECK(max_diff(golden.logits, as_routed.logits) == 0.0);
  // The same requests on an unquantized cache differ by the fp8 rounding of the cache and query.
  const RunRecord exact = replay(fp8_scenario("auto"), golden_replay_options());
  CHECK(max_diff(golden.logits, exact.logits) > 1e-3);
  CHECK(max_diff(golden.logits, exact.logits) < 0.5);
  // fp8_e4m3 is the same format as fp8 on CUDA.
  CHECK(max_diff(golden.logits, replay(fp8_scenario("fp8_e4m3"), golden_replay_options()).logits) == 0.0);
  // A dtype whose numerics are not modelled is refused before the model runs, naming the key.
  Scenario e5m2 = fp8_scenario("fp8_e5m2");
  const Status st = model_memory_check(e5m2, CpuPrecision::kFloat, 1e12);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().key_path == "cache.kv_cache_dtype");
  CHECK(st.error().message.find("fp8_e5m2") != std::string::npos);
}
