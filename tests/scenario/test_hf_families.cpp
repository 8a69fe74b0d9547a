// scenario/hf_families + the config.json reader: every MLA family vLLM 0.33 serves with one KV cache
// group read as vLLM reads it (nested text_config, LongCat-Flash's layer keys, class defaults, the
// architectures of its registry), and what vLLM refuses of the others, with its message.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/mtp_drafter.h"
#include "scenario/hf_config.h"
#include "scenario/hf_families.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

const std::string kConfigs = std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/";

struct Read {
  Status status;
  ModelConfig model;
  HfConfigInfo info;
};

Read read_path(const std::string& path) {
  Read r;
  r.status = read_hf_config(path, r.model, &r.info);
  return r;
}

Read read_text(const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlasim_hf_family_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path, std::ios::binary) << text;
  Read r = read_path(path);
  std::filesystem::remove(path);
  return r;
}

// The MLA keys every family needs, on one line after `head` (which opens the object).
std::string mla_config(const std::string& head, const std::string& tail = "") {
  return head +
         "\n \"vocab_size\": 1000, \"hidden_size\": 256, \"num_attention_heads\": 20, \"kv_lora_rank\": 64,"
         " \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32" +
         tail + "}\n";
}

}  // namespace

TEST_CASE("hf families: vLLM 0.33's is_deepseek_mla model types, each with its kind and class defaults",
          "[hf_config][families]") {
  // model_arch_config_convertor.py ~294-318, in its order.
  const std::vector<std::string> vllm = {
      "axk1",         "deepseek_v2",       "deepseek_v3",   "deepseek_v32",       "deepseek_v4",
      "deepseek_v41", "dots3_note",        "deepseek_mtp",  "k3_dspark",          "glm5_next",
      "glm5_next_text", "glm_moe_dsa",     "glm4_moe_lite", "glm4_moe_lite_mtp",  "kimi_k2",
      "kimi_linear",  "longcat_flash",     "pangu_ultra_moe", "pangu_ultra_moe_mtp", "bailing_hybrid",
      "bailing_hybrid_mtp", "bailing_hybrid_v3_mtp", "hy_v4", "hy_v4_mtp"};
  CHECK(vllm_deepseek_mla_model_types() == vllm);
  using K = HfFamilyKind;
  struct Row {
    const char* type;
    K kind;
    int max_position_embeddings;
  };
  const Row rows[] = {
      {"axk1", K::kOneGroup, 32768},           {"deepseek_v2", K::kOneGroup, 2048},
      {"deepseek_v3", K::kOneGroup, 4096},     {"deepseek_v32", K::kOneGroup, 4096},
      {"deepseek_v4", K::kSeveralGroups, 1048576},          {"deepseek_v41", K::kHybrid, 0},
      {"dots3_note", K::kHybrid, 0},           {"deepseek_mtp", K::kDrafter, 0},
      {"k3_dspark", K::kDrafter, 0},           {"glm5_next", K::kSeveralGroups, 1048576},
      {"glm5_next_text", K::kSeveralGroups, 1048576}, {"glm_moe_dsa", K::kOneGroup, 202752},
      {"glm4_moe_lite", K::kOneGroup, 202752}, {"glm4_moe_lite_mtp", K::kDrafter, 0},
      {"kimi_k2", K::kOneGroup, 4096},         {"kimi_linear", K::kSeveralGroups, 4096},
      {"longcat_flash", K::kOneGroup, 131072}, {"pangu_ultra_moe", K::kNoConfigClass, 0},
      {"pangu_ultra_moe_mtp", K::kDrafter, 0}, {"bailing_hybrid", K::kSeveralGroups, 262144},
      {"bailing_hybrid_mtp", K::kDrafter, 0},  {"bailing_hybrid_v3_mtp", K::kDrafter, 0},
      {"hy_v4", K::kOneGroup, 262144},         {"hy_v4_mtp", K::kDrafter, 0},
      {"kimi_k25", K::kOneGroup, 0},
  };
  REQUIRE(hf_families().size() == std::size(rows));
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    INFO(rows[i].type);
    const HfFamily& f = hf_families()[i];
    CHECK(f.model_type == rows[i].type);
    CHECK(f.kind == rows[i].kind);
    CHECK(f.max_position_embeddings == rows[i].max_position_embeddings);
    CHECK(f.text_config == (f.model_type == "kimi_k25"));
    const bool topk_default = f.model_type == "glm_moe_dsa" || f.model_type == "hy_v4";
    CHECK(f.index_topk == (topk_default ? std::optional<int>(2048) : std::nullopt));
  }
  CHECK(find_hf_family("llama") == nullptr);
  CHECK(kimi_k25_text_model_type(std::nullopt) == "deepseek_v3");
  CHECK(kimi_k25_text_model_type("kimi_k2") == "deepseek_v3");
  CHECK(kimi_k25_text_model_type("deepseek_v2") == "deepseek_v2");
}

TEST_CASE("hf families: the MTP drafter vLLM makes of each target", "[hf_config][families]") {
  struct Row {
    const char* type;
    const char* arch;
    const char* drafter_type;  // "" when vLLM makes none
    const char* drafter_arch;
  };
  const Row rows[] = {
      {"deepseek_v3", "DeepseekV3ForCausalLM", "deepseek_mtp", "DeepSeekMTPModel"},
      {"deepseek_v32", "DeepseekV32ForCausalLM", "deepseek_mtp", "DeepseekV32MTPModel"},
      {"glm_moe_dsa", "GlmMoeDsaForCausalLM", "deepseek_mtp", "DeepseekV32MTPModel"},
      {"glm4_moe_lite", "Glm4MoeLiteForCausalLM", "glm4_moe_lite_mtp", "Glm4MoeLiteMTPModel"},
      {"deepseek_v3", "Glm4MoeLiteForCausalLM", "deepseek_mtp", "DeepSeekMTPModel"},  // the type's branch first
      {"longcat_flash", "LongcatFlashForCausalLM", "longcat_flash_mtp", "LongCatFlashMTPModel"},
      {"pangu_ultra_moe", "PanguUltraMoEForCausalLM", "pangu_ultra_moe_mtp", "OpenPanguMTPModel"},
      {"hy_v4", "HYV4ForCausalLM", "hy_v4_mtp", "HYV4MTPModel"},
      {"deepseek_v2", "DeepseekV2ForCausalLM", "", ""},
      {"kimi_k2", "DeepseekV3ForCausalLM", "", ""},
      {"axk1", "AXK1ForCausalLM", "", ""},
      {"kimi_k25", "KimiK25ForConditionalGeneration", "", ""},
  };
  for (const Row& row : rows) {
    INFO(row.type << " " << row.arch);
    const auto d = mtp_drafter(row.type, row.arch);
    CHECK(d.has_value() == (row.drafter_type[0] != '\0'));
    if (d) {
      CHECK(d->model_type == row.drafter_type);
      CHECK(d->architecture == row.drafter_arch);
    }
  }
}

TEST_CASE("hf families: each shipped family config reads to its class's dimensions", "[hf_config][families]") {
  struct Row {
    const char* file;
    const char* arch;
    const char* type;
    const char* text_type;
    int heads, layers, modules, q_lora, qk_nope, v_head, intermediate, vocab;
    double max_len;
  };
  const Row rows[] = {
      {"axk1-defaults.json", "AXK1ForCausalLM", "axk1", "axk1", 64, 61, 1, 1536, 128, 128, 18432, 163840, 32768},
      {"deepseek-v2-defaults.json", "DeepseekV2ForCausalLM", "deepseek_v2", "deepseek_v2", 32, 32, 1, 1536, 128, 128,
       11008, 102400, 2048},
      {"glm4-moe-lite-defaults.json", "Glm4MoeLiteForCausalLM", "glm4_moe_lite", "glm4_moe_lite", 20, 47, 1, 768, 192,
       256, 10240, 154880, 202752},
      {"longcat-flash-defaults.json", "LongcatFlashForCausalLM", "longcat_flash", "longcat_flash", 64, 28, 2, 1536, 128,
       128, 12288, 131072, 131072},
      {"kimi-k25-defaults.json", "KimiK25ForConditionalGeneration", "kimi_k25", "deepseek_v3", 128, 61, 1, 1536, 128,
       128, 18432, 129280, 4096},
  };
  for (const Row& row : rows) {
    INFO(row.file);
    const Read r = read_path(kConfigs + row.file);
    REQUIRE(r.status.ok());
    const ModelConfig& m = r.model;
    CHECK(m.architecture == row.arch);
    CHECK(m.model_type == row.type);
    CHECK(m.text_model_type == row.text_type);
    CHECK(m.num_attention_heads == row.heads);
    CHECK(m.num_hidden_layers == row.layers);
    CHECK(m.num_attn_modules == row.modules);
    CHECK(m.q_lora_rank == row.q_lora);
    CHECK(m.kv_lora_rank == 512);
    CHECK(m.qk_nope_head_dim == row.qk_nope);
    CHECK(m.qk_rope_head_dim == 64);
    CHECK(m.v_head_dim == row.v_head);
    CHECK(m.intermediate_size == row.intermediate);
    CHECK(m.vocab_size == row.vocab);
    CHECK(m.max_position_embeddings == static_cast<int>(row.max_len));
    CHECK(r.info.max_len.derived == row.max_len);
    CHECK(r.info.max_len.key == "max_position_embeddings");
    CHECK(m.hf_derived_max_model_len == row.max_len);
    CHECK_FALSE(m.index_topk.has_value());
  }
}

TEST_CASE("hf families: keys as each family's config class names them", "[hf_config][families]") {
  const std::string longcat = "{\"architectures\": [\"LongcatFlashForCausalLM\"], \"model_type\": \"longcat_flash\",";
  // LongcatFlashConfig: num_hidden_layers = 2 * num_layers; a given one sets num_layers = n // 2.
  Read r = read_text(mla_config(longcat, ", \"num_layers\": 3, \"ffn_hidden_size\": 96"));
  REQUIRE(r.status.ok());
  CHECK(r.model.num_hidden_layers == 3);
  CHECK(r.model.num_attn_modules == 2);
  CHECK(r.model.intermediate_size == 96);
  r = read_text(mla_config(longcat, ", \"num_layers\": 3, \"num_hidden_layers\": 11, \"ffn_hidden_size\": 96, "
                                    "\"intermediate_size\": 64"));
  REQUIRE(r.status.ok());
  CHECK(r.model.num_hidden_layers == 5);
  CHECK(r.model.intermediate_size == 64);  // attribute_map: intermediate_size is ffn_hidden_size
  // No model_type: vLLM names it from the architecture (_ARCHITECTURE_TO_MODEL_TYPE).
  r = read_text(mla_config("{\"architectures\": [\"LongcatFlashNgramForCausalLM\"],",
                           ", \"num_layers\": 2, \"ffn_hidden_size\": 96"));
  REQUIRE(r.status.ok());
  CHECK(r.model.model_type == "longcat_flash");
  CHECK(r.model.architecture == "LongcatFlashNgramForCausalLM");
  CHECK(r.model.max_position_embeddings == 131072);  // the class default
  // glm_moe_dsa without index_topk: GlmMoeDsaConfig's default 2048, so sparse.
  r = read_text(mla_config("{\"architectures\": [\"GlmMoeDsaForCausalLM\"], \"model_type\": \"glm_moe_dsa\",",
                           ", \"num_hidden_layers\": 2, \"intermediate_size\": 64"));
  REQUIRE(r.status.ok());
  CHECK(r.model.index_topk == 2048);
  CHECK(r.model.max_position_embeddings == 202752);
  // Kimi-K2.5: the text model is text_config (kimi_k2 read as deepseek_v3); the top level's
  // dtype and quantization_config come first, then the text model's.
  r = read_text(
      "{\"architectures\": [\"KimiK25ForConditionalGeneration\"], \"model_type\": \"kimi_k25\", \"dtype\": \"float16\",\n"
      " \"text_config\": " + mla_config("{\"model_type\": \"kimi_k2\", \"dtype\": \"bfloat16\",",
                                       ", \"num_hidden_layers\": 2, \"intermediate_size\": 64, "
                                       "\"max_position_embeddings\": 8192, \"num_nextn_predict_layers\": 1") + "}\n");
  REQUIRE(r.status.ok());
  CHECK(r.model.model_type == "kimi_k25");
  CHECK(r.model.text_model_type == "deepseek_v3");
  CHECK(r.model.torch_dtype == "float16");
  CHECK(r.model.max_position_embeddings == 8192);
  CHECK(r.model.num_nextn_predict_layers == 0);  // hf_config_override reads the top level's
}

TEST_CASE("hf families: what vLLM refuses, with its message, and bad keys naming file, line and column", "[hf_config][families]") {
  struct Case {
    std::string text;
    const char* key_path;
    std::string message;
    int line;
  };
  const std::string transformers =
      "` but Transformers does not recognize this architecture. This could be because of an issue with the "
      "checkpoint, or because your version of Transformers is out of date.";
  auto head = [](const char* arch, const char* type) {
    return std::string("{\"architectures\": [\"") + arch + "\"], \"model_type\": \"" + type + "\",";
  };
  const std::string dims = ", \"num_hidden_layers\": 2, \"intermediate_size\": 64";
  const Case cases[] = {
      {mla_config(head("DeepSeekMTPModel", "deepseek_mtp"), dims), "model_type",
       "vLLM 0.33 refuses it: The checkpoint you are trying to load has model type `deepseek_mtp" + transformers, 1},
      {mla_config(head("Glm4MoeLiteMTPModel", "glm4_moe_lite_mtp"), dims), "model_type",
       "vLLM 0.33 refuses it: The checkpoint you are trying to load has model type `glm4_moe_lite_mtp" + transformers, 1},
      {mla_config(head("DeepseekV3ForCausalLM", "pangu_ultra_moe_mtp"), dims), "model_type",
       "vLLM 0.33 refuses it: The checkpoint you are trying to load has model type `pangu_ultra_moe_mtp" + transformers, 1},
      {mla_config(head("PanguUltraMoEForCausalLM", "pangu_ultra_moe"), dims), "model_type",
       "vLLM 0.33 refuses it: The checkpoint you are trying to load has model type `pangu_ultra_moe" + transformers, 1},
      {mla_config(head("DeepseekV41ForCausalLM", "deepseek_v41"), dims), "model_type",
       "model_type deepseek_v41 (vLLM DeepseekV41Config): its layers give vLLM 0.33 several KV cache groups "
       "(DeepSeek-V4's compressed and sliding-window MLA layers (models/deepseek_v4)), which mlasim does not read", 1},
      {mla_config(head("DeepseekV4ForCausalLM", "deepseek_v4"), dims), "head_dim", "missing `head_dim`", 1},
      // HY-V4: DSA beside dense MLA layers, an unknown layer type, indexer_types vLLM refuses, a DSA
      // layer without q_lora_rank.
      {mla_config(head("HYV4ForCausalLM", "hy_v4") + "\n \"layer_types\": [\"sparse_attention\", \"full_attention\"],",
                  dims),
       "layer_types",
       "1 of 2 layers are DSA and the rest dense MLA: vLLM 0.33 gives each kind its own backend "
       "(models/hy_v4/nvidia/attention.py ~341-500), and mlasim routes one kind of MLA layer", 2},
      {mla_config(head("HYV4ForCausalLM", "hy_v4") + "\n \"layer_types\": [\"sparse\", \"dsa\"],", dims),
       "layer_types[1]", "unknown layer type \"dsa\"", 2},
      {mla_config(head("HYV4ForCausalLM", "hy_v4") + "\n \"layer_types\": [\"sparse\", \"sparse\"], \"indexer_types\": [\"full\"],",
                  dims),
       "indexer_types",
       "indexer_types must contain one entry per hidden layer: expected 2, got 1. (vLLM 0.33 raises it building a DSA "
       "layer, models/hy_v4/nvidia/attention.py ~81-86)", 2},
      {mla_config(head("HYV4ForCausalLM", "hy_v4") +
                      "\n \"layer_types\": [\"sparse\", \"sparse\"], \"indexer_types\": [\"full\", \"half\"],",
                  dims),
       "indexer_types[1]",
       "indexer_types only supports 'full' and 'shared', got ['half']. (models/hy_v4/nvidia/attention.py ~87-91)", 2},
      {mla_config(head("HYV4ForCausalLM", "hy_v4") + "\n \"layer_types\": [\"indexed_attention\", \"sparse\"], "
                      "\"q_lora_rank\": null,", dims),
       "q_lora_rank",
       "HYV4 sparse attention requires q_lora_rank to be set (the DSA indexer projects its queries from the q latent, "
       "models/hy_v4/nvidia/attention.py ~431-434)", 1},
      {mla_config(head("DeepseekV3ForCausalLM", "llama"), dims), "model_type",
       "model_type \"llama\" is not one vLLM 0.33 serves with MLA", 1},
      {mla_config(head("LongcatFlashForCausalLM", "longcat_flash"), ", \"num_hidden_layers\": 1, \"ffn_hidden_size\": 8"),
       "num_hidden_layers", "must be >= 2 (got 1)", 2},
      {mla_config(head("LongcatFlashForCausalLM", "longcat_flash"), ", \"ffn_hidden_size\": 8"), "num_layers",
       "missing `num_layers`", 1},
      {mla_config(head("LongcatFlashForCausalLM", "longcat_flash"), ", \"num_layers\": \"2\", \"ffn_hidden_size\": 8"),
       "num_layers", "expected an integer, got a string", 2},
      {head("KimiK25ForConditionalGeneration", "kimi_k25") + " \"vocab_size\": 5}", "text_config",
       "missing `text_config`", 1},
      {head("KimiK25ForConditionalGeneration", "kimi_k25") + "\n \"text_config\": " +
           mla_config("{\"model_type\": \"llama\",", dims) + "}",
       "text_config.model_type", "model_type \"llama\" is not one vLLM 0.33 serves with MLA", 2},
      {head("KimiK25ForConditionalGeneration", "kimi_k25") + "\n \"text_config\": {\"model_type\": \"kimi_k2\",\n"
           " \"vocab_size\": 1000, \"hidden_size\": 256, \"num_hidden_layers\": 2, \"intermediate_size\": 64,"
           " \"num_attention_heads\": 8}}",
       "text_config.kv_lora_rank", "missing `kv_lora_rank`", 2},
      {head("KimiK25ForConditionalGeneration", "kimi_k25") + "\n \"text_config\": " +
           mla_config("{\"model_type\": \"kimi_k2\", \"index_topk\": 1.5,", dims) + "}",
       "text_config.index_topk", "expected an integer, got a number (1.5)", 2},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const Read r = read_text(c.text);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.error().key_path == c.key_path);
    CHECK(r.status.error().message == c.message);
    CHECK(r.status.error().line == c.line);
    CHECK(r.status.error().column > 0);
    CHECK(r.status.error().file.find("mlasim_hf_family_") != std::string::npos);
  }
}

TEST_CASE("hf families: a scenario takes vLLM's derived max_model_len and refuses what vLLM refuses",
          "[hf_config][families][loader]") {
  const std::string dir = kConfigs;
  // DeepseekV2Config's 2048 positions: max_model_len 2048 when the scenario leaves it out.
  Result<Scenario> v2 = load_scenario_text(
      "version: 1\nmodel: {hf_config: deepseek-v2-defaults.json, num_layers: 1, vocab_size: 4096}\n"
      "requests:\n  - {id: a, prompt_len: 5, max_tokens: 2}\n",
      dir + "t.yaml");
  REQUIRE(v2.ok());
  CHECK(v2.value().scheduler.max_model_len == 2048);
  // GLM-4.7-Flash's 20 heads on TP 8: vLLM's ModelConfig.verify_with_parallel_config.
  Result<Scenario> tp8 = load_scenario_text(
      "version: 1\nmodel: {hf_config: glm4-moe-lite-defaults.json, num_layers: 1, vocab_size: 4096, intermediate_size: 2048}\n"
      "engine: {profile: vllm-0.33, gpu: h200}\nparallel: {tensor_parallel_size: 8}\n"
      "requests:\n  - {id: a, prompt_len: 5, max_tokens: 2}\n",
      dir + "t.yaml");
  REQUIRE_FALSE(tp8.ok());
  CHECK(tp8.error().key_path == "parallel.tensor_parallel_size");
  CHECK(tp8.error().line == 4);
  CHECK(tp8.error().message ==
        "vLLM 0.33 refuses it: Total number of attention heads (20) must be divisible by tensor parallel size (8). "
        "(vllm/config/model.py ~1557-1563)");
  // MTP on a config with MTP layers whose model_type vLLM makes no drafter of.
  const std::string kimi = (std::filesystem::temp_directory_path() / "mlasim_kimi_k25_mtp.json").string();
  {
    std::ifstream in(dir + "kimi-k25-defaults.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(1, "\"num_nextn_predict_layers\": 1,");
    std::ofstream(kimi) << text;
  }
  Result<Scenario> mtp = load_scenario_text(
      "version: 1\nmodel: {hf_config: " + kimi + ", num_layers: 1, vocab_size: 4096, intermediate_size: 2048}\n"
      "scheduler: {num_speculative_tokens: 1}\nengine: {profile: vllm-0.33, gpu: h200}\n"
      "requests:\n  - {id: a, prompt_len: 5, max_tokens: 2}\n",
      dir + "t.yaml");
  std::filesystem::remove(kimi);
  REQUIRE_FALSE(mtp.ok());
  CHECK(mtp.error().key_path == "scheduler.num_speculative_tokens");
  CHECK(mtp.error().message ==
        "vLLM 0.33 refuses it: Unsupported speculative method: 'mtp' (config/speculative.py ~1499: "
        "SpeculativeConfig.hf_config_override makes no MTP drafter of model_type kimi_k25)");
}

TEST_CASE("hf families: HY-V4's DSA layers, learnable sink and sink backend, as vLLM 0.33 builds them",
          "[hf_config][families][hy_v4]") {
  // The class defaults: no layer_types, so every layer dense MLA despite index_topk 2048.
  Read d = read_path(kConfigs + "hy-v4-defaults.json");
  REQUIRE(d.status.ok());
  CHECK(d.model.architecture == "HYV4ForCausalLM");
  CHECK_FALSE(d.model.index_topk.has_value());
  CHECK(d.model.unused_index_topk == 2048);
  CHECK(d.model.learnable_sink);
  CHECK(d.model.q_lora_rank == 1536);
  CHECK(d.model.qk_nope_head_dim == 192);
  CHECK(d.model.v_head_dim == 256);
  CHECK(d.model.max_position_embeddings == 262144);
  CHECK(d.model.num_nextn_predict_layers == 1);
  REQUIRE(d.model.hf_config_notes.size() == 1);
  CHECK(d.model.hf_config_notes[0].find(": index_topk: 2048 with no DSA layer (layer_types unset)") != std::string::npos);
  // Every layer DSA ("indexed_attention", as transformers writes it).
  Read s = read_path(kConfigs + "hy-v4-sparse.json");
  REQUIRE(s.status.ok());
  CHECK(s.model.index_topk == 2048);
  CHECK_FALSE(s.model.unused_index_topk.has_value());
  // HYV4Config's own spellings fold into a DSA layer; the class defaults fill index_topk and
  // q_lora_rank; learnable_sink as given.
  Read folded = read_text(mla_config("{\"architectures\": [\"HYV4ForCausalLM\"], \"model_type\": \"hy_v4\",\n"
                                     " \"layer_types\": [\"sparse_attention\", \"sparse\"], \"learnable_sink\": false,",
                                     ", \"num_hidden_layers\": 2, \"intermediate_size\": 64"));
  REQUIRE(folded.status.ok());
  CHECK(folded.model.index_topk == 2048);
  CHECK(folded.model.q_lora_rank == 1536);
  CHECK_FALSE(folded.model.learnable_sink);
}

TEST_CASE("hf families: HY-V4 scenarios route as its attention class leaves them", "[hf_config][families][hy_v4][loader]") {
  const std::string dir = kConfigs;
  auto load = [&](const std::string& config, const std::string& gpu) {
    return load_scenario_text("version: 1\nmodel: {hf_config: " + config + ", num_layers: 1, vocab_size: 4096}\n"
                              "engine: {profile: vllm-0.33, gpu: " + gpu + "}\n"
                              "requests:\n  - {id: a, prompt_len: 5, max_tokens: 2}\n",
                              dir + "t.yaml");
  };
  Result<Scenario> sparse = load("hy-v4-sparse.json", "h200");
  REQUIRE(sparse.ok());
  const BackendSelection& sel = sparse.value().deployment.selection;
  CHECK(vllm_backend_name(sel.backend) == std::string("FLASHMLA_SPARSE"));
  CHECK(sel.sparse_mla_force_mqa);
  CHECK(sparse.value().scheduler.block_size == 64);
  CHECK(sparse.value().scheduler.max_model_len == 262144);
  Result<Scenario> dense = load("hy-v4-defaults.json", "h200");
  REQUIRE(dense.ok());
  CHECK(vllm_backend_name(dense.value().deployment.selection.backend) == std::string("FLASH_ATTN_MLA"));
  CHECK_FALSE(dense.value().deployment.selection.sparse_mla_force_mqa);
  CHECK(dense.value().deployment.selection.warnings.size() == 1);
  // A DSA layer on an A100: vLLM's model refuses rather than fall back to dense attention.
  Result<Scenario> a100 = load("hy-v4-sparse.json", "a100");
  REQUIRE_FALSE(a100.ok());
  CHECK(a100.error().message.find("HYV4 sparse attention was requested, but no valid sparse MLA backend") !=
        std::string::npos);
}
