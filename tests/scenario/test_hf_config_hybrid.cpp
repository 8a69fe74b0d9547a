// scenario/hf_config_hybrid: the hybrid MLA families' config.json read as vLLM 0.33 reads them
// (the per-layer plan in ModelConfig.attention_layers) and refused, naming file, line, column and
// key, where vLLM's config classes refuse them.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenario/hf_config.h"

using namespace mlasim;

namespace {

const std::string kRoot = MLASIM_SOURCE_DIR;

struct Read {
  Status status;
  ModelConfig model;
};

Read read_path(const std::string& path) {
  Read r;
  r.status = read_hf_config(path, r.model);
  return r;
}

Read read_text(const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlasim_hf_hybrid_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path, std::ios::binary) << text;
  Read r = read_path(path);
  std::filesystem::remove(path);
  return r;
}

// A four-layer DeepSeek-V4 config; `extra` members go on the second line.
std::string v4(const std::string& extra) {
  return "{\"architectures\": [\"DeepseekV4ForCausalLM\"], \"model_type\": \"deepseek_v4\",\n" + extra +
         " \"vocab_size\": 1000, \"hidden_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 8,\n"
         " \"head_dim\": 512, \"qk_rope_head_dim\": 64, \"max_position_embeddings\": 4096}\n";
}

std::string kimi(const std::string& linear, const std::string& extra = " \"mla_use_nope\": true,\n") {
  return "{\"architectures\": [\"KimiLinearForCausalLM\"], \"model_type\": \"kimi_linear\",\n" + extra +
         " \"vocab_size\": 1000, \"hidden_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 8,\n"
         " \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32,\n"
         " \"linear_attn_config\": " + linear + "}\n";
}

std::string where(const Status& s) {
  const Error& e = s.error();
  return std::to_string(e.line) + ":" + std::to_string(e.column) + " " + e.key_path;
}

}  // namespace

TEST_CASE("DeepSeek-V4's shipped config: 43 layers, 2 HCA then CSA / HCA alternating", "[hf_config][hybrid]") {
  const Read r = read_path(kRoot + "/scenarios/hf_configs/deepseek-v4.json");
  REQUIRE(r.status.ok());
  const ModelConfig& m = r.model;
  CHECK(m.architecture == "DeepseekV4ForCausalLM");
  REQUIRE(m.attention_layers.size() == 43);
  CHECK(m.hybrid.head_dim == 512);
  CHECK(m.kv_lora_rank + m.qk_rope_head_dim == 512);  // vLLM's head size for V4 (get_head_size: head_dim)
  CHECK(m.qk_rope_head_dim == 64);
  CHECK(m.hybrid.sliding_window == 128);
  CHECK(m.hybrid.index_head_dim == 128);
  CHECK(m.index_topk == 512);
  int csa = 0, hca = 0;
  for (const auto& l : m.attention_layers) {
    CHECK(l.kind == AttentionLayerKind::kCompressed);
    (l.compress_ratio == 4 ? csa : hca) += 1;
  }
  CHECK(csa == 20);
  CHECK(hca == 23);
  CHECK(m.attention_layers[0].compress_ratio == 128);
  CHECK(m.attention_layers[3].compress_ratio == 4);
}

TEST_CASE("DeepSeek-V4: compress_ratios as transformers folds it into layer_types", "[hf_config][hybrid]") {
  // One ratio per layer; the entries past num_hidden_layers (the MTP layer's) are dropped.
  Read r = read_text(v4(" \"compress_ratios\": [0, 4, 128, 4, 0],\n"));
  REQUIRE(r.status.ok());
  REQUIRE(r.model.attention_layers.size() == 4);
  CHECK(r.model.attention_layers[0].kind == AttentionLayerKind::kSlidingWindow);
  CHECK(r.model.attention_layers[0].compress_ratio == 1);
  CHECK(r.model.attention_layers[1].compress_ratio == 4);
  CHECK(r.model.attention_layers[2].compress_ratio == 128);
  // compress_rates renames a type's ratio.
  r = read_text(v4(" \"layer_types\": [\"sliding_attention\", \"compressed_sparse_attention\", "
                   "\"compressed_sparse_attention\", \"heavily_compressed_attention\"],\n"
                   " \"compress_rates\": {\"compressed_sparse_attention\": 4, \"heavily_compressed_attention\": 64},\n"));
  REQUIRE(r.status.ok());
  CHECK(r.model.attention_layers[3].compress_ratio == 64);
}

TEST_CASE("DeepSeek-V4: a bad layer plan is refused at its line, column and key", "[hf_config][hybrid]") {
  Read r = read_text(v4(" \"compress_ratios\": [0, 4, 128],\n"));  // 3 ratios for 4 layers
  REQUIRE_FALSE(r.status.ok());
  CHECK(where(r.status) == "2:21 compress_ratios");
  CHECK_THAT(r.status.error().message, Catch::Contains("must equal `len(layer_types)` (3)"));
  r = read_text(v4(" \"compress_ratios\": [0, 4, 8, 4],\n"));  // no layer type has ratio 8
  REQUIRE_FALSE(r.status.ok());
  CHECK(where(r.status) == "2:28 compress_ratios[2]");
  CHECK_THAT(r.status.error().message, Catch::Contains("compress ratio 8 names no DeepSeek-V4 layer type"));
  r = read_text(v4(" \"layer_types\": [\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
                   "\"sliding_attention\"],\n"));
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.error().key_path == "layer_types[1]");
  CHECK_THAT(r.status.error().message, Catch::Contains("unknown layer type \"full_attention\""));
  r = read_text("{\"architectures\": [\"DeepseekV4ForCausalLM\"], \"model_type\": \"deepseek_v4\", \"vocab_size\": 1000,\n"
                " \"hidden_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 8}\n");
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.error().key_path == "head_dim");
  CHECK_THAT(r.status.error().message, Catch::Contains("missing `head_dim`"));
}

TEST_CASE("Kimi-Linear: the 1-based kda_layers are KDA, the others MLA", "[hf_config][hybrid]") {
  const Read shipped = read_path(kRoot + "/scenarios/hf_configs/kimi-linear.json");
  REQUIRE(shipped.status.ok());
  REQUIRE(shipped.model.attention_layers.size() == 27);
  int kda = 0;
  for (const auto& l : shipped.model.attention_layers) kda += l.kind == AttentionLayerKind::kLinear;
  CHECK(kda == 20);
  CHECK(shipped.model.attention_layers[3].kind == AttentionLayerKind::kMla);   // layer 4, 1-based
  CHECK(shipped.model.attention_layers[26].kind == AttentionLayerKind::kMla);  // layer 27
  CHECK(shipped.model.hybrid.linear_num_heads == 32);
  CHECK(shipped.model.hybrid.linear_head_dim == 128);
  CHECK(shipped.model.hybrid.linear_conv_kernel_dim == 4);

  // A number that names no layer: vLLM reads past it; mlasim notes it.
  Read r = read_text(kimi("{\"kda_layers\": [0, 1, 2], \"full_attn_layers\": [4], \"num_heads\": 4, \"head_dim\": 32, "
                          "\"short_conv_kernel_size\": 4}"));
  REQUIRE(r.status.ok());
  CHECK(r.model.attention_layers[0].kind == AttentionLayerKind::kLinear);
  CHECK(r.model.attention_layers[2].kind == AttentionLayerKind::kMla);
  REQUIRE(r.model.hf_config_notes.size() == 1);
  CHECK_THAT(r.model.hf_config_notes[0], Catch::Contains("linear_attn_config.kda_layers[0]: layer 0 names no layer"));
}

TEST_CASE("Kimi-Linear and GLM-5-Next: what their config classes and vLLM refuse", "[hf_config][hybrid]") {
  const std::string lac = "{\"kda_layers\": [1], \"full_attn_layers\": [2], \"num_heads\": 4, \"head_dim\": 32, "
                          "\"short_conv_kernel_size\": 4}";
  Read r = read_text(kimi(lac, ""));  // no mla_use_nope
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.error().key_path == "mla_use_nope");
  r = read_text(kimi("{\"kda_layers\": [1], \"num_heads\": 4}"));
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.error().key_path == "linear_attn_config.full_attn_layers");
  r = read_text("{\"architectures\": [\"KimiLinearForCausalLM\"], \"model_type\": \"kimi_linear\", \"mla_use_nope\": true,\n"
                " \"vocab_size\": 1000, \"hidden_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 8}\n");
  REQUIRE_FALSE(r.status.ok());
  CHECK(where(r.status) == "1:1 kv_lora_rank");
  // GLM-5-Next's DSA layers are NoPE (Glm5NextTextConfig.validate_architecture).
  r = read_text("{\"architectures\": [\"Glm5NextForCausalLM\"], \"model_type\": \"glm5_next\", \"vocab_size\": 1000,\n"
                " \"hidden_size\": 256, \"num_hidden_layers\": 4, \"num_attention_heads\": 8, \"kv_lora_rank\": 64,\n"
                " \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32, \"q_lora_rank\": 64}\n");
  REQUIRE_FALSE(r.status.ok());
  CHECK(where(r.status) == "3:46 qk_rope_head_dim");
  CHECK_THAT(r.status.error().message, Catch::Contains("Expecting NoPE"));
}

TEST_CASE("GLM-5-Next's shipped config: three KDA layers to one MLA layer", "[hf_config][hybrid]") {
  const Read r = read_path(kRoot + "/scenarios/hf_configs/glm-5-next.json");
  REQUIRE(r.status.ok());
  REQUIRE(r.model.attention_layers.size() == 45);
  for (std::size_t i = 0; i < 45; ++i)
    CHECK(r.model.attention_layers[i].kind == (i % 4 == 3 ? AttentionLayerKind::kMla : AttentionLayerKind::kLinear));
  CHECK(r.model.qk_rope_head_dim == 0);
  CHECK(r.model.kv_lora_rank == 512);
  CHECK(r.model.hybrid.index_kpool == 16);
  CHECK(r.model.hybrid.linear_num_heads == 64);
}

TEST_CASE("A plain MLA config has no per-layer plan", "[hf_config][hybrid]") {
  const Read r = read_path(kRoot + "/scenarios/hf_configs/deepseek-v3.json");
  REQUIRE(r.status.ok());
  CHECK(r.model.attention_layers.empty());
}

TEST_CASE("GLM-5-Next: a nested text_config reads as the flat checkpoint, glm5_next_text too", "[hf_config][hybrid]") {
  std::ifstream in(kRoot + "/scenarios/hf_configs/glm-5-next.json");
  const std::string flat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Read a = read_path(kRoot + "/scenarios/hf_configs/glm-5-next.json");
  REQUIRE(a.status.ok());
  // Glm5NextConfig with the text model nested, as transformers' to_dict writes it.
  const Read nested = read_text(R"({"architectures": ["Glm5NextForCausalLM"], "model_type": "glm5_next", "text_config": )" +
                                flat + "}");
  REQUIRE(nested.status.ok());
  CHECK(nested.model.text_model_type == "glm5_next");  // the nested one's own model_type (the file's)
  CHECK(nested.model.attention_layers.size() == a.model.attention_layers.size());
  int linear = 0;
  for (std::size_t i = 0; i < a.model.attention_layers.size(); ++i) {
    CHECK(nested.model.attention_layers[i].kind == a.model.attention_layers[i].kind);
    linear += a.model.attention_layers[i].kind == AttentionLayerKind::kLinear;
  }
  CHECK(linear == 34);
  CHECK(nested.model.kv_lora_rank == a.model.kv_lora_rank);
  CHECK(nested.model.index_topk == a.model.index_topk);
  const Read text = read_path(kRoot + "/scenarios/hf_configs/glm-5-next-text.json");
  REQUIRE(text.status.ok());
  CHECK(text.model.model_type == "glm5_next_text");
  CHECK(text.model.attention_layers.size() == a.model.attention_layers.size());
}

TEST_CASE("Bailing-hybrid: every layer_group_size-th layer and the trailing ones MLA, no_kda_lora required",
          "[hf_config][hybrid]") {
  const Read b = read_path(kRoot + "/scenarios/hf_configs/bailing-hybrid.json");
  REQUIRE(b.status.ok());
  REQUIRE(b.model.attention_layers.size() == 42U);
  std::vector<int> mla;
  for (std::size_t i = 0; i < b.model.attention_layers.size(); ++i)
    if (b.model.attention_layers[i].kind == AttentionLayerKind::kMla) mla.push_back(static_cast<int>(i));
  CHECK(mla == std::vector<int>{5, 11, 17, 23, 29, 35, 41});
  CHECK(b.model.hybrid.linear_head_dim == 64);  // head_dim after BailingHybridConfig.__post_init__
  CHECK(b.model.hybrid.linear_num_heads == 32);
  // 8 layers in groups of 3: layers 2 and 5 by the group rule, 6 and 7 trailing (_is_kda_layer ~131-137).
  const std::string small = R"({"architectures": ["BailingMoeV3ForCausalLM"], "model_type": "bailing_hybrid",
"vocab_size": 1000, "hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 4, "layer_group_size": 3,
"intermediate_size": 512, "no_kda_lora": true})";
  const Read s = read_text(small);
  REQUIRE(s.status.ok());
  std::vector<int> small_mla;
  for (std::size_t i = 0; i < s.model.attention_layers.size(); ++i)
    if (s.model.attention_layers[i].kind == AttentionLayerKind::kMla) small_mla.push_back(static_cast<int>(i));
  CHECK(small_mla == std::vector<int>{2, 5, 6, 7});
  std::string refused = small;
  refused.replace(refused.find("\"no_kda_lora\": true"), 19, "\"no_kda_lora\": false");
  const Read r = read_text(refused);
  REQUIRE_FALSE(r.status.ok());
  CHECK_THAT(r.status.error().message, Catch::Contains("BailingMoeV3 KDA currently expects no_kda_lora=True"));
  CHECK(r.status.error().key_path == "no_kda_lora");
}

TEST_CASE("Kimi-Linear without mla_use_nope is refused with vLLM's assert message", "[hf_config][hybrid]") {
  const Read k = read_text(R"({"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear",
"vocab_size": 1000, "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "kv_lora_rank": 64,
"qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32})");
  REQUIRE_FALSE(k.status.ok());
  CHECK_THAT(k.status.error().message, Catch::Contains("Kimi-K3 MLA (MultiHeadLatentAttention) is NoPE-only"));
  CHECK(k.status.error().key_path == "mla_use_nope");
}
