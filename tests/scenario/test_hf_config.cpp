// scenario/hf_config: config.json read as vLLM reads it (strict JSON, the last of a duplicate key,
// wrong JSON types refused with file, line, column and key) and vLLM's derived max_model_len.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenario/hf_config.h"

using namespace mlasim;

namespace {

// A small DeepSeek-V3-style config; `extra` members go after the first line's.
std::string config_text(const std::string& extra = "", const std::string& architectures = "[\"DeepseekV3ForCausalLM\"]") {
  return "{\"architectures\": " + architectures + ", \"model_type\": \"deepseek_v3\",\n" + extra +
         " \"vocab_size\": 1000, \"hidden_size\": 256, \"num_hidden_layers\": 2, \"num_attention_heads\": 8,\n"
         " \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32,\n"
         " \"q_lora_rank\": null, \"intermediate_size\": 512, \"max_position_embeddings\": 2048}\n";
}

struct Read {
  Status status;
  ModelConfig model;
  HfConfigInfo info;
};

Read read_text(const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlasim_hf_config_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path, std::ios::binary) << text;
  Read r;
  r.status = read_hf_config(path, r.model, &r.info);
  std::filesystem::remove(path);
  return r;
}

}  // namespace

TEST_CASE("config.json: a valid config reads, with vLLM's derived max_model_len", "[hf_config]") {
  const Read r = read_text(config_text());
  REQUIRE(r.status.ok());
  CHECK(r.model.vocab_size == 1000);
  CHECK(r.model.max_position_embeddings == 2048);
  CHECK(r.info.max_len.derived == 2048);
  CHECK(r.info.max_len.key == "max_position_embeddings");
  CHECK(r.info.max_len.shown == "2048.0");  // DeepseekV3Config standardises its RoPE: vLLM multiplies by 1.0
  CHECK(r.info.notes.empty());
  CHECK(r.model.hf_derived_max_model_len == 2048);
}

TEST_CASE("config.json: vLLM's derived max_model_len follows RoPE scaling and model_max_length", "[hf_config]") {
  // YaRN leaves max_position_embeddings as it is: it is already scaled (vllm/config/model.py
  // ~2610-2623), whatever original_max_position_embeddings x factor makes.
  Read r = read_text(config_text(
      " \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"original_max_position_embeddings\": 4096},\n"));
  REQUIRE(r.status.ok());
  CHECK(r.info.max_len.derived == 2048);
  CHECK(r.info.max_len.shown == "2048.0");
  // Another RoPE type's factor multiplies it, as a float.
  r = read_text(config_text(" \"rope_parameters\": {\"rope_type\": \"default\", \"factor\": 2, \"rope_theta\": 10000},\n"));
  REQUIRE(r.status.ok());
  CHECK(r.info.max_len.derived == 4096);
  CHECK(r.info.max_len.shown == "4096.0");
  // The smallest of the keys; model_max_length replaces it.
  r = read_text(config_text(" \"seq_length\": 1024,\n"));
  REQUIRE(r.status.ok());
  CHECK(r.info.max_len.key == "seq_length");
  CHECK(r.info.max_len.derived == 1024);
  r = read_text(config_text(" \"model_max_length\": 4096,\n"));
  REQUIRE(r.status.ok());
  CHECK(r.info.max_len.key == "model_max_length");
  CHECK(r.info.max_len.derived == 4096);
  REQUIRE(r.info.max_len.model_max_length);
  CHECK(r.info.max_len.model_max_length_shown == "4096");
}

TEST_CASE("config.json: a key written twice keeps the last value, with a note", "[hf_config]") {
  // Python's json (vLLM's reader) takes the last: a Llama architecture after DeepSeek's is not MLA.
  Read r = read_text(config_text("", "[\"DeepseekV3ForCausalLM\"], \"architectures\": [\"LlamaForCausalLM\"]"));
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.error().key_path == "architectures[0]");
  CHECK(r.status.error().message == "architecture LlamaForCausalLM does not use MLA (vLLM serves it with standard attention)");
  CHECK(r.status.error().line == 1);
  CHECK(r.status.error().column == 64);
  r = read_text(config_text(" \"vocab_size\": 5,\n"));
  REQUIRE(r.status.ok());
  CHECK(r.model.vocab_size == 1000);
  REQUIRE(r.info.notes.size() == 1);
  CHECK(r.info.notes[0].find(".json:3:2: vocab_size: written twice (first at line 2, column 2); the last value is read, "
                             "as vLLM's json.loads reads it") != std::string::npos);
  CHECK(r.model.hf_config_notes == r.info.notes);
}

TEST_CASE("config.json: a key vLLM reads with the wrong JSON type is an error naming it", "[hf_config]") {
  struct Case {
    const char* extra;
    const char* key_path;
    const char* message;
  };
  const Case cases[] = {
      {" \"torch_dtype\": 42,\n", "torch_dtype", "expected a string, got a number (42)"},
      {" \"dtype\": true,\n", "dtype", "expected a string, got true"},
      {" \"rope_scaling\": [\"yarn\"],\n", "rope_scaling", "expected an object, got a list"},
      {" \"rope_parameters\": \"default\",\n", "rope_parameters", "expected an object, got a string"},
      {" \"rope_scaling\": {\"type\": \"yarn\", \"factor\": \"40\"},\n", "rope_scaling.factor", "expected a number, got a string"},
      {" \"rope_scaling\": {\"type\": 3},\n", "rope_scaling.type", "expected a string, got a number (3)"},
      {" \"quantization_config\": \"fp8\",\n", "quantization_config", "expected an object, got a string"},
      {" \"quantization_config\": {\"quant_method\": 8},\n", "quantization_config.quant_method", "expected a string, got a number (8)"},
      {" \"index_topk\": 2048.0,\n", "index_topk", "expected an integer, got a number (2048.0)"},
      {" \"index_topk\": \"2048\",\n", "index_topk", "expected an integer, got a string"},
      {" \"rms_norm_eps\": NaN,\n", "rms_norm_eps", "expected a finite number, got NaN"},
      {" \"rope_theta\": Infinity,\n", "rope_theta", "expected a finite number, got Infinity"},
      {" \"eos_token_id\": [],\n", "eos_token_id", "an empty list"},
      {" \"eos_token_id\": [1, \"2\"],\n", "eos_token_id[1]", "expected an integer, got a string"},
      {" \"max_seq_len\": \"4k\",\n", "max_seq_len", "expected a number, got a string"},
      {" \"seq_length\": 0,\n", "seq_length", "must be >= 1 (got 0)"},
      {" \"rope_theta\": 0.5,\n", "rope_theta", "must be >= 1 (got 0.5)"},
  };
  for (const Case& c : cases) {
    INFO(c.extra);
    const Read r = read_text(config_text(c.extra));
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.error().key_path == c.key_path);
    CHECK(r.status.error().message == c.message);
    CHECK(r.status.error().line == 2);
    CHECK(r.status.error().column > 1);
  }
  // The dimensions: a fraction, a string or null is not an integer.
  for (const char* value : {"8.0", "\"8\"", "null", "true"}) {
    std::string text = config_text();
    text.replace(text.find("\"num_attention_heads\": 8"), 24, std::string("\"num_attention_heads\": ") + value);
    const Read r = read_text(text);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.error().key_path == "num_attention_heads");
    CHECK(r.status.error().message.rfind("expected an integer, got ", 0) == 0);
  }
  const Read list = read_text(config_text("", "\"DeepseekV3ForCausalLM\""));
  REQUIRE_FALSE(list.status.ok());
  CHECK(list.status.error().key_path == "architectures");
  CHECK(list.status.error().message == "expected a list, got a string");
}

TEST_CASE("config.json: not JSON is a syntax error naming line, column and key", "[hf_config]") {
  struct Case {
    std::string text;
    int line, column;
    const char* key_path;
    const char* message;
  };
  const Case cases[] = {
      {"\xEF\xBB\xBF" + config_text(), 1, 1, "", "JSON syntax error: the text starts with a UTF-8 byte-order mark (EF BB BF)"},
      {config_text(" \"x\": 1,\n").replace(0, 1, "{// c\n"), 1, 2, "", "JSON syntax error: a comment"},
      {config_text() + "{}", 5, 1, "", "JSON syntax error: text after the JSON value (found '{')"},
      {config_text(" \"rope_scaling\": {\"factor\": 40,},\n"), 2, 32, "rope_scaling", "JSON syntax error: a trailing comma before '}'"},
      {"architectures: [DeepseekV3ForCausalLM]\n", 1, 1, "", "JSON syntax error: expected a value, found 'a'"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const Read r = read_text(c.text);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.error().line == c.line);
    CHECK(r.status.error().column == c.column);
    CHECK(r.status.error().key_path == c.key_path);
    CHECK(r.status.error().message == c.message);
  }
  // CR-only line ends are JSON's white space: the config reads.
  std::string cr = config_text();
  for (char& ch : cr)
    if (ch == '\n') ch = '\r';
  CHECK(read_text(cr).status.ok());
}

TEST_CASE("config.json: a FIFO is refused without being opened", "[hf_config]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlasim_hf_fifo_" + std::to_string(::getpid()))).string();
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  ModelConfig m;
  const Status st = read_hf_config(path, m);
  std::filesystem::remove(path);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.rfind("model config is a FIFO, not a regular file: mlasim reads only regular files", 0) == 0);
}
