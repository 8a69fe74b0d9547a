// Seeded MLA weights: Hugging Face names and shapes, bf16 exactness, the drawn distributions,
// determinism, and reading weights back from a name -> tensor map.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/bf16.h"
#include "model/mla_weights.h"
#include "mla_test_util.h"

using namespace mlasim;

TEST_CASE("bf16 rounding: nearest, ties to even, specials kept", "[mla]") {
  CHECK(round_to_bf16(1.0f) == 1.0f);
  CHECK(round_to_bf16(1.0f + 0x1.0p-8f) == 1.0f);                     // tie -> even (1.0)
  CHECK(round_to_bf16(1.0f + 0x1.0p-7f + 0x1.0p-8f) == 1.0f + 0x1.0p-6f);  // tie -> even (up)
  CHECK(round_to_bf16(1.0f + 0x1.8p-8f) == 1.0f + 0x1.0p-7f);
  CHECK(std::isnan(round_to_bf16(std::nanf(""))));
  CHECK(std::isinf(round_to_bf16(INFINITY)));
  CHECK(is_bf16_exact(round_to_bf16(0.1234567f)));
}

TEST_CASE("weight listing: HF DeepSeek-V3 names and [out, in] shapes", "[mla]") {
  const ModelConfig tiny = *model_preset("tiny");
  const std::vector<WeightSpec> specs = weight_specs(tiny);
  REQUIRE(specs.size() == 1 + 10 * 2 + 2);
  CHECK(specs.front().name == "model.embed_tokens.weight");
  CHECK(specs.front().shape == std::vector<int>{512, 256});
  CHECK(specs[1].name == "model.layers.0.input_layernorm.weight");
  CHECK(specs[2].name == "model.layers.0.self_attn.q_proj.weight");
  CHECK(specs[2].shape == std::vector<int>{4 * 192, 256});
  CHECK(specs[3].name == "model.layers.0.self_attn.kv_a_proj_with_mqa.weight");
  CHECK(specs[3].shape == std::vector<int>{576, 256});
  CHECK(specs[4].name == "model.layers.0.self_attn.kv_a_layernorm.weight");
  CHECK(specs[4].shape == std::vector<int>{512});
  CHECK(specs[5].name == "model.layers.0.self_attn.kv_b_proj.weight");
  CHECK(specs[5].shape == std::vector<int>{4 * 256, 512});
  CHECK(specs[6].name == "model.layers.0.self_attn.o_proj.weight");
  CHECK(specs[6].shape == std::vector<int>{256, 4 * 128});
  CHECK(specs[7].name == "model.layers.0.post_attention_layernorm.weight");
  CHECK(specs[8].name == "model.layers.0.mlp.gate_proj.weight");
  CHECK(specs[8].shape == std::vector<int>{512, 256});
  CHECK(specs[10].name == "model.layers.0.mlp.down_proj.weight");
  CHECK(specs[10].shape == std::vector<int>{256, 512});
  CHECK(specs[specs.size() - 2].name == "model.norm.weight");
  CHECK(specs.back().name == "lm_head.weight");

  ModelConfig v3 = *model_preset("v3-attn");
  const std::vector<WeightSpec> s3 = weight_specs(v3);
  REQUIRE(s3.size() == 1 + 12 + 2);
  CHECK(s3[2].name == "model.layers.0.self_attn.q_a_proj.weight");
  CHECK(s3[2].shape == std::vector<int>{1536, 7168});
  CHECK(s3[3].name == "model.layers.0.self_attn.q_a_layernorm.weight");
  CHECK(s3[4].name == "model.layers.0.self_attn.q_b_proj.weight");
  CHECK(s3[4].shape == std::vector<int>{128 * 192, 1536});
  CHECK(s3[7].shape == std::vector<int>{128 * 256, 512});
}

TEST_CASE("seeded weights: bf16-exact, N(0, 1/fan_in) and 1 + 0.2 N(0,1), deterministic", "[mla]") {
  const ModelConfig c = test::tiny_config();
  const MlaWeights w = seeded_weights(c);
  const std::vector<NamedWeight> tensors = w.tensors();
  REQUIRE(tensors.size() == weight_specs(c).size());
  for (const NamedWeight& t : tensors) {
    INFO(t.name);
    REQUIRE(t.tensor->values.size() == static_cast<size_t>(t.tensor->numel()));
    bool exact = true;
    for (float v : t.tensor->values) exact = exact && is_bf16_exact(v) && std::isfinite(v);
    CHECK(exact);
  }
  auto moments = [](const std::vector<float>& v) {
    double s = 0, ss = 0;
    for (float x : v) s += x, ss += double(x) * x;
    const double m = s / double(v.size());
    return std::pair{m, std::sqrt(ss / double(v.size()) - m * m)};
  };
  // kv_b_proj: 524288 values, fan_in 512 -> std 0.0442; sampling error of the std ~ 0.1%.
  auto [m1, s1] = moments(w.layers[0].kv_b_proj.values);
  CHECK(std::abs(m1) < 1e-3);
  CHECK(s1 == Approx(1.0 / std::sqrt(512.0)).epsilon(0.01));
  // Norm weights around 1 with std 0.2 (512 values: 5% tolerance on the std).
  auto [m2, s2] = moments(w.layers[1].kv_a_layernorm.values);
  CHECK(m2 == Approx(1.0).margin(0.05));
  CHECK(s2 == Approx(0.2).epsilon(0.1));
  auto [m3, s3] = moments(w.embed_tokens.values);
  CHECK(s3 == Approx(1.0).epsilon(0.01));

  const MlaWeights again = seeded_weights(c);
  CHECK(again.layers[1].o_proj.values == w.layers[1].o_proj.values);
  ModelConfig other = c;
  other.seed = c.seed + 1;
  CHECK(seeded_weights(other).layers[1].o_proj.values != w.layers[1].o_proj.values);
  // Tensors have their own streams: two same-shape tensors differ.
  CHECK(w.layers[0].gate_proj.values != w.layers[0].up_proj.values);
}

TEST_CASE("weights from a name -> tensor map round-trip, with named errors", "[mla]") {
  const ModelConfig c = test::tiny_config();
  const MlaWeights w = seeded_weights(c);
  std::map<std::string, WeightTensor> m;
  for (const NamedWeight& t : w.tensors()) m[t.name] = *t.tensor;
  Result<MlaWeights> back = weights_from_tensors(c, m);
  REQUIRE(back.ok());
  CHECK(back.value().layers[1].kv_b_proj.values == w.layers[1].kv_b_proj.values);
  CHECK(back.value().lm_head.values == w.lm_head.values);

  auto missing = m;
  missing.erase("model.layers.1.self_attn.kv_a_layernorm.weight");
  Result<MlaWeights> r1 = weights_from_tensors(c, missing);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().key_path == "model.layers.1.self_attn.kv_a_layernorm.weight");
  CHECK(r1.error().message == "missing tensor (want shape [512])");

  auto wrong = m;
  wrong["model.layers.0.self_attn.o_proj.weight"].shape = {512, 256};
  Result<MlaWeights> r2 = weights_from_tensors(c, wrong);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().message == "shape [512, 256] with 131072 values, want [256, 512]");

  auto extra = m;
  extra["model.layers.0.self_attn.q_a_proj.weight"] = WeightTensor{{1}, {0.f}};
  Result<MlaWeights> r3 = weights_from_tensors(c, extra);
  REQUIRE_FALSE(r3.ok());
  CHECK(r3.error().key_path == "model.layers.0.self_attn.q_a_proj.weight");
}
