// The exported checkpoint loads back, and the model run from the file's weights reproduces the
// seeded model's logits exactly and the golden within the fp32 class.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario/scenario_loader.h"
#include "base/formats/json_value.h"
#include "verify/logits_golden.h"
#include "output/model_export.h"
#include "engine/replay.h"

using namespace mlasim;

TEST_CASE("export round trip: safetensors weights drive the forward to the golden logits", "[export]") {
  const std::string root = MLASIM_SOURCE_DIR;
  Result<Scenario> loaded = load_scenario_file(root + "/scenarios/seed/one_token_prompt_behind_decode.yaml");
  REQUIRE(loaded.ok());
  const Scenario& s = loaded.value();
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("mlasim_export_" + std::to_string(::getpid()))).string();
  const MlaWeights seeded = seeded_weights(s.model);
  REQUIRE(export_hf_checkpoint(dir, seeded).ok());
  // The disk check's estimate is the files' size, byte for byte.
  CHECK(export_bytes(s.model) ==
        std::filesystem::file_size(dir + "/model.safetensors") + std::filesystem::file_size(dir + "/config.json"));

  Result<MlaWeights> back = read_hf_checkpoint(dir, s.model);
  REQUIRE(back.ok());
  const auto a = seeded.tensors(), b = back.value().tensors();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].tensor->shape == b[i].tensor->shape);
    CHECK(a[i].tensor->values == b[i].tensor->values);
  }

  ReplayOptions from_file = golden_replay_options();
  from_file.weights = &back.value();
  const RunRecord run = replay(s, from_file);
  const RunRecord reference = replay(s, golden_replay_options());
  REQUIRE_FALSE(run.logits.empty());
  CHECK(run.logits.values_f64 == reference.logits.values_f64);

  Result<LogitsFiles> golden = read_logits_files(root + "/golden/" + s.name);
  REQUIRE(golden.ok());
  LogitsCheck c =
      check_logits_against(golden.value(), run.logits, run.names, logits_tolerance(PrecisionClass::kFp32), "golden");
  INFO(c.message);
  CHECK(c.pass);

  // config.json is valid JSON with DeepSeek-V3's keys.
  std::ifstream in(dir + "/config.json");
  std::stringstream text;
  text << in.rdbuf();
  Result<JsonValue> config = parse_json(text.str(), "config.json");
  REQUIRE(config.ok());
  CHECK(config.value().find("model_type")->string() == "deepseek_v3");
  CHECK(config.value().find("kv_lora_rank")->number() == 512);
  CHECK(config.value().find("first_k_dense_replace")->number() == s.model.num_hidden_layers);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a checkpoint with a missing tensor is refused, naming it", "[export]") {
  Result<Scenario> loaded = load_scenario_text("version: 1\nrequests:\n  - {id: a, prompt: [3]}\n", "t.yaml");
  REQUIRE(loaded.ok());
  Result<MlaWeights> back = read_hf_checkpoint("/nonexistent-dir", loaded.value().model);
  REQUIRE_FALSE(back.ok());
  CHECK(back.error().file == "/nonexistent-dir/model.safetensors");
}

TEST_CASE("export writes every YaRN parameter, attention_factor 1 included", "[export]") {
  // mscale_all_dim 0: transformers would derive attention_factor from factor alone (0.1 ln 40 + 1)
  // if the config did not say 1; mlasim scales no cos/sin.
  Result<Scenario> loaded = load_scenario_text(
      "version: 1\nmodel: {preset: tiny, rope_scaling_factor: 40, mscale_all_dim: 0, beta_fast: 16, beta_slow: 2, "
      "original_max_position_embeddings: 2048}\nrequests:\n  - {id: a, prompt: [5]}\n",
      "yarn.yaml");
  REQUIRE(loaded.ok());
  Result<JsonValue> config = parse_json(hf_config_json(loaded.value().model), "config.json");
  REQUIRE(config.ok());
  const JsonValue* rope = config.value().find("rope_scaling");
  REQUIRE(rope != nullptr);
  CHECK(rope->find("type")->string() == "yarn");
  CHECK(rope->find("factor")->number() == 40);
  CHECK(rope->find("original_max_position_embeddings")->number() == 2048);
  CHECK(rope->find("beta_fast")->number() == 16);
  CHECK(rope->find("beta_slow")->number() == 2);
  CHECK(rope->find("mscale")->number() == 0);
  CHECK(rope->find("mscale_all_dim")->number() == 0);
  CHECK(rope->find("attention_factor")->number() == 1);
  CHECK(std::get<bool>(rope->find("truncate")->v));
  // A zero beta is refused: readers would replace it by the default.
  Result<Scenario> zero = load_scenario_text(
      "version: 1\nmodel: {preset: tiny, beta_fast: 0}\nrequests:\n  - {id: a, prompt: [5]}\n", "b.yaml");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().key_path == "model.beta_fast");
  CHECK(zero.error().message == "beta_fast must be > 0");
}

TEST_CASE("export writes each family's transformers class, every layer dense", "[export][families]") {
  const std::string configs = std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/";
  struct Row {
    const char* file;
    const char* architecture;
    const char* model_type;
  };
  const Row rows[] = {
      {"axk1-defaults.json", "AXK1ForCausalLM", "axk1"},
      {"glm4-moe-lite-defaults.json", "Glm4MoeLiteForCausalLM", "glm4_moe_lite"},
      {"longcat-flash-defaults.json", "LongcatFlashForCausalLM", "longcat_flash"},
      {"kimi-k25-defaults.json", "DeepseekV3ForCausalLM", "deepseek_v3"},  // its text model
      {"deepseek-v3.json", "DeepseekV3ForCausalLM", "deepseek_v3"},
  };
  for (const Row& row : rows) {
    INFO(row.file);
    Result<Scenario> loaded = load_scenario_text(std::string("version: 1\nmodel: {hf_config: ") + row.file +
                                                     ", num_layers: 1, vocab_size: 512}\nrequests:\n  - {id: a, prompt: [5]}\n",
                                                 configs + "t.yaml");
    REQUIRE(loaded.ok());
    Result<JsonValue> config = parse_json(hf_config_json(loaded.value().model), "config.json");
    REQUIRE(config.ok());
    const JsonValue& c = config.value();
    CHECK(c.find("architectures")->array().at(0).string() == row.architecture);
    CHECK(c.find("model_type")->string() == row.model_type);
    const std::string type = row.model_type;
    if (type == "longcat_flash") {
      CHECK(c.find("num_layers")->number() == 1);
      CHECK(c.find("n_routed_experts")->number() == 0);
      CHECK(c.find("zero_expert_num")->number() == kLongcatZeroExperts);
      CHECK(c.find("moe_topk")->number() == kLongcatZeroExperts);
      CHECK(c.find("routed_scaling_factor")->number() == 1);
      CHECK(c.find("num_hidden_layers") == nullptr);  // a property: 2 x num_layers
    } else if (type == "deepseek_v3") {
      CHECK(c.find("first_k_dense_replace")->number() == 1);
    } else {
      REQUIRE(c.find("mlp_layer_types") != nullptr);
      CHECK(c.find("mlp_layer_types")->array().size() == 1);
      CHECK(c.find("mlp_layer_types")->array().at(0).string() == "dense");
    }
  }
}
