// config.json → ModelConfig, as vLLM 0.33.0 reads an MLA model's config.
#include "scenario/hf_config.h"


#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/file_read.h"
#include "base/json_document.h"
#include "scenario/hf_config_hybrid.h"
#include "scenario/json_field_reader.h"

namespace mlasim {
namespace {

// ModelArchConfigConvertor.is_deepseek_mla's model types that mlasim reads
// (transformers_utils/model_arch_config_convertor.py ~294-320).
const std::vector<std::string> kMlaModelTypes{"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa"};

// Known non-MLA architectures get a plain answer rather than "unknown".
const std::vector<std::string> kDenseArchitectures{"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
                                                   "Qwen3MoeForCausalLM", "MistralForCausalLM", "MixtralForCausalLM",
                                                   "Glm4MoeForCausalLM", "GptOssForCausalLM", "DeepseekForCausalLM"};

// _get_and_verify_max_len's possible_keys, in its order.
const char* const kMaxLenKeys[] = {"max_position_embeddings", "n_positions",          "max_seq_len",
                                   "seq_length",              "model_max_length",     "max_target_positions",
                                   "max_sequence_length",     "max_seq_length",       "seq_len"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A Python number as repr() prints it: an int as written, a float with ".0" when whole.
std::string python_repr(double v, bool is_float) {
  char buf[40];
  if (!is_float) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  if (v == std::floor(v) && std::fabs(v) < 1e16) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

using Reader = JsonFieldReader;
const JsonNode* present(const JsonNode& object, const char* key) { return Reader::present(object, key); }

// The RoPE parameters vLLM reads: rope_scaling (DeepSeek, Kimi) or rope_parameters (transformers 5
// style, GLM-5); each an object or null.
struct Rope {
  const JsonNode* scaling = nullptr;
  std::string key;  // "rope_scaling" or "rope_parameters"
  std::string type;
};

Rope read_rope(const Reader& r, const JsonNode& root, ModelConfig& out) {
  const JsonNode* params = present(root, "rope_parameters");
  const JsonNode* legacy = present(root, "rope_scaling");
  if (params) r.expect_object(*params, "rope_parameters");
  if (legacy) r.expect_object(*legacy, "rope_scaling");
  if (const JsonNode* theta = present(root, "rope_theta")) out.rope_theta = r.read_double(*theta, "rope_theta", 1.0);
  if (params)
    if (const JsonNode* theta = present(*params, "rope_theta"))
      out.rope_theta = r.read_double(*theta, "rope_parameters.rope_theta", 1.0);
  Rope rope;
  rope.scaling = legacy ? legacy : params;
  rope.key = legacy ? "rope_scaling" : "rope_parameters";
  if (!rope.scaling) return rope;
  const JsonNode& s = *rope.scaling;
  if (const JsonNode* t = present(s, "type")) rope.type = r.read_string(*t, rope.key + ".type");
  if (const JsonNode* t = present(s, "rope_type")) rope.type = r.read_string(*t, rope.key + ".rope_type");
  auto opt_double = [&](const char* key, double& field, double min) {
    if (const JsonNode* n = present(s, key)) field = r.read_double(*n, rope.key + "." + key, min);
  };
  if (rope.type == "yarn" || rope.type == "deepseek_yarn") {
    opt_double("factor", out.rope_scaling_factor, 1.0);
    opt_double("mscale_all_dim", out.mscale_all_dim, 0.0);
    // Rotation counts: vLLM divides by them (rotary_embedding/common.py:40,
    // yarn_find_correction_dim), so 0 fails there (math.floor of infinity).
    for (const auto& [key, field] : {std::pair<const char*, double*>{"beta_fast", &out.beta_fast},
                                     std::pair<const char*, double*>{"beta_slow", &out.beta_slow}}) {
      opt_double(key, *field, 0.0);
      if (const JsonNode* n = present(s, key); n && *field <= 0.0)
        r.fail(*n, rope.key + "." + key, "must be > 0: vLLM's YaRN divides by it (rotary_embedding/common.py:40)",
               "DeepSeek-V3's are beta_fast 32 and beta_slow 1");
    }
    if (const JsonNode* n = present(s, "original_max_position_embeddings"))
      out.original_max_position_embeddings =
          r.read_int(*n, rope.key + ".original_max_position_embeddings", 1, 1LL << 24);
  } else if (rope.type.empty() || rope.type == "default") {
    out.rope_scaling_factor = 1.0;  // plain RoPE
  } else {
    const JsonNode* at = present(s, "rope_type") ? present(s, "rope_type") : present(s, "type");
    r.fail(*at, rope.key + (present(s, "rope_type") ? ".rope_type" : ".type"),
           "rope scaling \"" + rope.type + "\" is not one mlasim runs", "mlasim runs plain RoPE and DeepSeek's YaRN");
  }
  return rope;
}

// _get_and_verify_max_len (vllm/config/model.py) without a user value.
HfDerivedMaxLen derive_max_len(const Reader& r, const JsonNode& root, const Rope& rope) {
  HfDerivedMaxLen d;
  double derived = std::numeric_limits<double>::infinity();
  bool is_float = false;
  for (const char* key : kMaxLenKeys) {
    const JsonNode* n = present(root, key);
    if (!n) continue;
    const double v = r.read_double(*n, key, 1.0);
    if (v < derived) {
      derived = v;
      d.key = key;
      is_float = !n->is_integer();
    }
  }
  if (const JsonNode* n = present(root, "model_max_length")) {
    d.model_max_length = r.read_double(*n, "model_max_length", 1.0);
    d.model_max_length_shown = python_repr(*d.model_max_length, !n->is_integer());
    derived = *d.model_max_length;  // a truthy model_max_length replaces the others
    d.key = "model_max_length";
    is_float = !n->is_integer();
  }
  if (std::isinf(derived)) {
    derived = 2048;  // vLLM's default, with a warning
    d.key.clear();
  }
  // Every RoPE type but su, longrope and llama3 scales it (a missing factor is 1.0).
  if (rope.scaling && rope.type != "su" && rope.type != "longrope" && rope.type != "llama3") {
    const JsonNode* factor = present(*rope.scaling, "factor");
    if (rope.type == "yarn")
      if (const JsonNode* orig = present(*rope.scaling, "original_max_position_embeddings")) {
        derived = r.read_double(*orig, rope.key + ".original_max_position_embeddings", 1.0);
        is_float = !orig->is_integer();
      }
    derived *= factor ? r.read_double(*factor, rope.key + ".factor", 0.0) : 1.0;
    is_float = is_float || !factor || !factor->is_integer();
  }
  d.derived = derived;
  d.shown = python_repr(derived, is_float);
  return d;
}

void read_quantization(const Reader& r, const JsonNode& root, ModelConfig& out) {
  out.quant_method.clear();
  out.quant_kv_cache_dtype.clear();
  const JsonNode* q = present(root, "quantization_config");
  if (!q) return;
  r.expect_object(*q, "quantization_config");  // vLLM calls quantization_config.get(...)
  const JsonNode* method = present(*q, "quant_method");
  if (!method) return;
  out.quant_method = r.read_string(*method, "quantization_config.quant_method");
  // resolve_kv_cache_dtype_string / get_kv_cache_quant_algo_string (utils/torch_utils.py
  // ~443-516): only modelopt checkpoints name their KV cache's dtype.
  if (out.quant_method.rfind("modelopt", 0) != 0) return;
  const JsonNode* nested = present(*q, "quantization");
  const JsonNode& inner = nested && nested->is_object() ? *nested : *q;
  const JsonNode* algo = nullptr;
  for (const JsonNode* n : {present(inner, "kv_cache_scheme"), present(*q, "kv_cache_scheme"),
                            present(inner, "kv_cache_quant_algo"), present(*q, "kv_cache_quant_algo")})
    if (!algo && n) algo = n;
  if (!algo) return;
  std::string name = "auto";  // unknown: vLLM falls back to auto
  if (algo->is_object()) {
    const JsonNode* dynamic = algo->find("dynamic");
    const JsonNode* bits = algo->find("num_bits");
    const JsonNode* type = algo->find("type");
    const bool is_dynamic = dynamic && dynamic->kind == JsonNode::Kind::kBool && dynamic->boolean;
    const bool eight = bits && bits->is_number() && bits->text == "8";
    const bool four = bits && bits->is_number() && bits->text == "4";
    const bool is_float = type && type->is_string() && type->text == "float";
    name = dynamic && !is_dynamic && eight && is_float ? "fp8_e4m3" : four && is_float ? "nvfp4" : "auto";
  } else if (algo->is_string()) {
    std::string v = algo->text;
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    name = v == "fp8" ? "fp8_e4m3" : v == "nvfp4" ? "nvfp4" : "auto";
  }
  out.quant_kv_cache_dtype = name;
}

HfDerivedMaxLen read_config(const Reader& r, const JsonNode& root, ModelConfig& out, std::vector<std::string>& notes) {
  if (!root.is_object())
    r.fail(root, "", "a config.json holds one JSON object, got " + json_kind_name(root), "is this a Hugging Face config.json?");
  const JsonNode* archs = present(root, "architectures");
  if (!archs || (archs->is_array() && archs->items.empty()))
    r.fail(archs ? *archs : root, "architectures", "missing `architectures`",
           "a Hugging Face config.json names its model class, e.g. [\"DeepseekV3ForCausalLM\"]");
  r.expect_list(*archs, "architectures");
  for (std::size_t i = 0; i < archs->items.size(); ++i) r.read_string(archs->items[i], json_index_key("architectures", i));
  const std::string arch = archs->items[0].text;
  if (!contains(hf_mla_architectures(), arch) && !is_hybrid_architecture(arch)) {
    const bool dense = contains(kDenseArchitectures, arch);
    std::string known;
    for (const auto& a : hf_mla_architectures()) known += (known.empty() ? "" : ", ") + a;
    r.fail(archs->items[0], "architectures[0]",
           dense ? "architecture " + arch + " does not use MLA (vLLM serves it with standard attention)"
                 : "architecture " + arch + " is not an MLA architecture mlasim knows",
           "mlasim reads MLA models: " + known);
  }
  out.architecture = arch;
  const JsonNode* model_type = present(root, "model_type");
  out.model_type = model_type ? r.read_string(*model_type, "model_type") : "";
  if (!contains(kMlaModelTypes, out.model_type) && !contains(hf_hybrid_model_types(), out.model_type))
    r.fail(model_type ? *model_type : root, "model_type",
           "model_type \"" + out.model_type + "\" is not one vLLM 0.33 serves with MLA",
           "vLLM's use_mla needs a DeepSeek-MLA model_type (model_arch_config_convertor.py ~294): deepseek_v2, "
           "deepseek_v3, deepseek_v32, kimi_k2, glm_moe_dsa");

  auto need_int = [&](const char* key, int& field, int min, long long max) {
    const JsonNode* n = root.find(key);
    if (!n) r.fail(root, key, std::string("missing `") + key + "`", "an MLA config.json has this key");
    field = r.read_int(*n, key, min, max);
  };
  auto opt_int = [&](const char* key, int& field, int min, long long max) {
    if (const JsonNode* n = present(root, key)) field = r.read_int(*n, key, min, max);
  };
  need_int("vocab_size", out.vocab_size, 3, 1LL << 21);
  need_int("hidden_size", out.hidden_size, 1, 1LL << 16);
  need_int("num_hidden_layers", out.num_hidden_layers, 1, 1LL << 10);
  need_int("num_attention_heads", out.num_attention_heads, 1, 1LL << 10);
  out.attention_layers.clear();
  out.hybrid = {};
  if (is_hybrid_architecture(arch)) {
    out.rope_scaling_factor = 1.0;  // plain RoPE unless the config names YaRN (read_rope)
    read_hybrid_attention(r, root, arch, out, notes);
  } else {
    need_int("kv_lora_rank", out.kv_lora_rank, 1, 1LL << 16);
    need_int("qk_nope_head_dim", out.qk_nope_head_dim, 1, 1LL << 12);
    need_int("qk_rope_head_dim", out.qk_rope_head_dim, 2, 1LL << 12);
    need_int("v_head_dim", out.v_head_dim, 1, 1LL << 12);
    out.q_lora_rank = 0;  // null (DeepSeek-V2-Lite): q_proj, no q compression
    opt_int("q_lora_rank", out.q_lora_rank, 0, 1LL << 16);
    need_int("intermediate_size", out.intermediate_size, 1, 1LL << 20);
  }
  opt_int("max_position_embeddings", out.max_position_embeddings, 2, 1LL << 24);
  if (const JsonNode* n = present(root, "rms_norm_eps")) out.rms_norm_eps = r.read_double(*n, "rms_norm_eps", 0.0);
  const Rope rope = read_rope(r, root, out);
  const HfDerivedMaxLen max_len = derive_max_len(r, root, rope);
  // eos_token_id: an id or a list of them (GLM-5); the first stops a request.
  const JsonNode* eos = present(root, "eos_token_id");
  if (eos && eos->is_array()) {
    if (eos->items.empty()) r.fail(*eos, "eos_token_id", "an empty list", "give the end-of-sequence id, or a list of them");
    for (std::size_t i = 0; i < eos->items.size(); ++i) r.read_int(eos->items[i], json_index_key("eos_token_id", i), 0);
    out.eos_token_id = r.read_int(eos->items[0], "eos_token_id[0]", 0);
  } else if (eos) {
    out.eos_token_id = r.read_int(*eos, "eos_token_id", 0);
  }
  const char* dtype_key = root.find("torch_dtype") ? "torch_dtype" : "dtype";
  if (const JsonNode* dt = present(root, dtype_key)) out.torch_dtype = r.read_string(*dt, dtype_key);
  read_quantization(r, root, out);
  // The sparse flag: hasattr(config, "index_topk") (deepseek_v2.py ~1138, ~1439).
  out.index_topk.reset();
  if (const JsonNode* n = present(root, "index_topk")) out.index_topk = r.read_int(*n, "index_topk", 1, 1LL << 24);
  if (!out.index_topk && arch == "DeepseekV32ForCausalLM")
    r.fail(archs->items[0], "index_topk",
           "DeepseekV32ForCausalLM without index_topk: vLLM 0.33 refuses it (`assert is_v32`, is_v32 = "
           "hasattr(hf_config, \"index_topk\"), vllm/model_executor/models/config.py ~78-81)",
           "restore index_topk (a GGUF conversion can drop it), or declare the dense architecture "
           "DeepseekV3ForCausalLM to serve the weights as dense MLA");
  if (!out.index_topk && arch == "GlmMoeDsaForCausalLM")
    r.fail(archs->items[0], "index_topk",
           "GlmMoeDsaForCausalLM without index_topk: vLLM 0.33 cannot build it (the DSA model reads "
           "config.index_topk, vllm/models/deepseek_v32/nvidia/model.py ~188-196)",
           "restore index_topk, or declare the dense architecture DeepseekV3ForCausalLM");
  if (out.eos_token_id >= out.vocab_size)
    r.fail(eos ? *eos : root, "eos_token_id", "eos_token_id is outside the vocabulary");
  return max_len;
}

}  // namespace

std::vector<std::string> hf_mla_architectures() {
  return {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"};
}

Status read_hf_config(const std::string& path, ModelConfig& out, HfConfigInfo* info) {
  // A FIFO or a device is refused before it is opened (read_file_bounded: regular files only).
  auto text = read_file_bounded(path, 16u << 20, "model config");
  if (!text) return text.error();
  JsonDocumentOptions options;
  options.python_constants = true;  // json.loads reads NaN and Infinity
  auto doc = parse_json_document(text.value(), path, options);
  if (!doc) {
    Error e = doc.error();
    e.message = "JSON syntax error: " + e.message;
    if (e.hint.empty()) e.hint = "a Hugging Face config.json is one JSON object";
    return e;
  }
  std::vector<std::string> notes;
  for (const JsonDuplicate& d : doc.value().duplicates)
    notes.push_back(path + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.key_path +
                    ": written twice (first at line " + std::to_string(d.first_line) + ", column " +
                    std::to_string(d.first_column) + "); the last value is read, as vLLM's json.loads reads it");
  if (info) info->notes = notes;
  const Reader reader(path);
  HfDerivedMaxLen max_len;
  try {
    max_len = read_config(reader, doc.value().root, out, notes);
  } catch (const LoadError& e) {
    Error error = e.error;
    // A refused value that is the second of a key written twice: say which one was read.
    for (const JsonDuplicate& d : doc.value().duplicates) {
      const std::string& k = error.key_path;
      if (k.rfind(d.key_path, 0) == 0 && (k.size() == d.key_path.size() || k[d.key_path.size()] == '.' ||
                                          k[d.key_path.size()] == '['))
        error.hint += std::string(error.hint.empty() ? "" : "; ") + "`" + d.key_path + "` is written twice (line " +
                      std::to_string(d.first_line) + " and line " + std::to_string(d.line) +
                      "): the last value is read, as vLLM's json.loads reads it";
    }
    return error;
  }
  out.hf_config = path;
  out.hf_config_notes = std::move(notes);
  if (info) info->max_len = max_len;
  return Status::Ok();
}

}  // namespace mlasim
