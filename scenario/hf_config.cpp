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
#include "scenario/hf_config_hy_v4.h"
#include "scenario/hf_text_model.h"
#include "scenario/json_field_reader.h"

namespace mlasim {
namespace {

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

Rope read_rope(const Reader& r, const JsonNode& root, const std::string& prefix, ModelConfig& out) {
  const JsonNode* params = present(root, "rope_parameters");
  const JsonNode* legacy = present(root, "rope_scaling");
  if (params) r.expect_object(*params, prefix + "rope_parameters");
  if (legacy) r.expect_object(*legacy, prefix + "rope_scaling");
  if (const JsonNode* theta = present(root, "rope_theta"))
    out.rope_theta = r.read_double(*theta, prefix + "rope_theta", 1.0);
  if (params)
    if (const JsonNode* theta = present(*params, "rope_theta"))
      out.rope_theta = r.read_double(*theta, prefix + "rope_parameters.rope_theta", 1.0);
  Rope rope;
  rope.scaling = legacy ? legacy : params;
  rope.key = prefix + (legacy ? "rope_scaling" : "rope_parameters");
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

// _get_and_verify_max_len (vllm/config/model.py ~2545-2640) without a user value, on the text
// model (its hf_config argument is hf_text_config, ~2160): the smallest of kMaxLenKeys
// (derive_max_model_len_and_key, model_arch_config_convertor.py ~374-407), an absent
// max_position_embeddings read as its config class's default (getattr on the config object); a
// truthy model_max_length replaces it. Then the factor of every RoPE type but su, longrope, llama3
// and the YaRN variants, whose max_position_embeddings is already scaled (~2610-2623); a missing
// factor is 1.0. Every family's config class standardises its RoPE into rope_parameters, so vLLM
// always multiplies, and prints a float.
HfDerivedMaxLen derive_max_len(const Reader& r, const HfTextModel& text, const Rope& rope) {
  const JsonNode& root = *text.node;
  HfDerivedMaxLen d;
  double derived = std::numeric_limits<double>::infinity();
  for (const char* key : kMaxLenKeys) {
    double v = 0;
    if (const JsonNode* n = present(root, key))
      v = r.read_double(*n, text.prefix + key, 1.0);
    else if (key == std::string_view("max_position_embeddings"))
      v = text.family->max_position_embeddings;  // every family's class has one
    else
      continue;
    if (v < derived) {
      derived = v;
      d.key = key;
    }
  }
  if (const JsonNode* n = present(root, "model_max_length")) {
    d.model_max_length = r.read_double(*n, text.prefix + "model_max_length", 1.0);
    d.model_max_length_shown = python_repr(*d.model_max_length, !n->is_integer());
    derived = *d.model_max_length;  // a truthy model_max_length replaces the others
    d.key = "model_max_length";
  }
  static const char* const kAlreadyScaled[] = {"su", "longrope", "llama3", "yarn", "deepseek_yarn",
                                               "deepseek_llama_scaling"};
  const bool scaled = std::find(std::begin(kAlreadyScaled), std::end(kAlreadyScaled), rope.type) != std::end(kAlreadyScaled);
  if (rope.scaling && !scaled)
    if (const JsonNode* factor = present(*rope.scaling, "factor"))
      derived *= r.read_double(*factor, rope.key + ".factor", 0.0);
  d.derived = derived;
  d.shown = python_repr(derived, true);
  return d;
}

// `root`'s quantization_config, or else the text model's (get_quantization_config,
// model_arch_config_convertor.py ~285-292).
void read_quantization(const Reader& r, const JsonNode& root, const HfTextModel& text, ModelConfig& out) {
  out.quant_method.clear();
  out.quant_kv_cache_dtype.clear();
  const bool top = present(root, "quantization_config");
  const JsonNode* q = present(top ? root : *text.node, "quantization_config");
  const std::string key = (top ? "" : text.prefix) + "quantization_config";
  if (!q) return;
  r.expect_object(*q, key);  // vLLM calls quantization_config.get(...)
  const JsonNode* method = present(*q, "quant_method");
  if (!method) return;
  out.quant_method = r.read_string(*method, key + ".quant_method");
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

// architectures[0], one vLLM 0.33 serves with one MLA KV cache group (registry.py). Another
// architecture of a family mlasim does not read is refused for its family (hybrid, drafter).
std::string read_architecture(const Reader& r, const JsonNode& root) {
  const JsonNode* archs = present(root, "architectures");
  if (!archs || (archs->is_array() && archs->items.empty()))
    r.fail(archs ? *archs : root, "architectures", "missing `architectures`",
           "a Hugging Face config.json names its model class, e.g. [\"DeepseekV3ForCausalLM\"]");
  r.expect_list(*archs, "architectures");
  for (std::size_t i = 0; i < archs->items.size(); ++i) r.read_string(archs->items[i], json_index_key("architectures", i));
  const std::string arch = archs->items[0].text;
  if (contains(hf_mla_architectures(), arch) || is_hybrid_architecture(arch)) return arch;
  const std::string model_type = hf_config_model_type(r, root, arch);
  if (const HfFamily* f = find_hf_family(model_type); f && f->kind != HfFamilyKind::kOneGroup) {
    const JsonNode* at = present(root, "model_type");
    require_readable_family(r, at ? *at : root, "model_type", model_type);
  }
  const bool dense = contains(kDenseArchitectures, arch);
  std::string known;
  for (const auto& a : hf_mla_architectures()) known += (known.empty() ? "" : ", ") + a;
  r.fail(archs->items[0], "architectures[0]",
         dense ? "architecture " + arch + " does not use MLA (vLLM serves it with standard attention)"
               : "architecture " + arch + " is not an MLA architecture mlasim knows",
         "mlasim reads MLA models: " + known);
}

// The text model's dimensions and RoPE (its family's key names; class defaults where the config
// leaves a key out).
void read_dims(const Reader& r, const HfTextModel& text, ModelConfig& out, std::vector<std::string>& notes) {
  const JsonNode& n = *text.node;
  auto need_int = [&](const char* key, int& field, int min, long long max) {
    const JsonNode* v = n.find(key);
    if (!v) r.fail(n, text.prefix + key, std::string("missing `") + key + "`", "an MLA config.json has this key");
    field = r.read_int(*v, text.prefix + key, min, max);
  };
  auto opt_int = [&](const char* key, int& field, int min, long long max) {
    if (const JsonNode* v = present(n, key)) field = r.read_int(*v, text.prefix + key, min, max);
  };
  need_int("vocab_size", out.vocab_size, 3, 1LL << 21);
  need_int("hidden_size", out.hidden_size, 1, 1LL << 16);
  read_layer_shape(r, text, out);
  need_int("num_attention_heads", out.num_attention_heads, 1, 1LL << 10);
  out.attention_layers.clear();
  out.hybrid = {};
  if (is_hybrid_architecture(out.architecture)) {
    out.rope_scaling_factor = 1.0;  // plain RoPE unless the config names YaRN (read_rope)
    read_hybrid_attention(r, n, out.architecture, out, notes);
  } else {
    need_int("kv_lora_rank", out.kv_lora_rank, 1, 1LL << 16);
    need_int("qk_nope_head_dim", out.qk_nope_head_dim, 1, 1LL << 12);
    need_int("qk_rope_head_dim", out.qk_rope_head_dim, 2, 1LL << 12);
    need_int("v_head_dim", out.v_head_dim, 1, 1LL << 12);
    out.q_lora_rank = 0;  // null (DeepSeek-V2-Lite): q_proj, no q compression
    opt_int("q_lora_rank", out.q_lora_rank, 0, 1LL << 16);
  }
  out.max_position_embeddings = text.family->max_position_embeddings;
  opt_int("max_position_embeddings", out.max_position_embeddings, 2, 1LL << 24);
  if (const JsonNode* v = present(n, "rms_norm_eps")) out.rms_norm_eps = r.read_double(*v, text.prefix + "rms_norm_eps", 0.0);
}

// eos_token_id: an id or a list of them (GLM-5); the first stops a request.
const JsonNode* read_eos(const Reader& r, const HfTextModel& text, ModelConfig& out) {
  const JsonNode* eos = present(*text.node, "eos_token_id");
  const std::string key = text.prefix + "eos_token_id";
  if (eos && eos->is_array()) {
    if (eos->items.empty()) r.fail(*eos, key, "an empty list", "give the end-of-sequence id, or a list of them");
    for (std::size_t i = 0; i < eos->items.size(); ++i) r.read_int(eos->items[i], json_index_key(key, i), 0);
    out.eos_token_id = r.read_int(eos->items[0], key + "[0]", 0);
  } else if (eos) {
    out.eos_token_id = r.read_int(*eos, key, 0);
  }
  return eos;
}

// The serving dtype: the config's dtype, else its text model's (get_torch_dtype,
// model_arch_config_convertor.py ~210-215); torch_dtype is its older name.
void read_torch_dtype(const Reader& r, const JsonNode& root, const HfTextModel& text, ModelConfig& out) {
  for (const auto& [node, prefix] : {std::pair{&root, std::string()}, std::pair{text.node, text.prefix}}) {
    const char* key = node->find("torch_dtype") ? "torch_dtype" : "dtype";
    if (const JsonNode* dt = present(*node, key)) {
      out.torch_dtype = r.read_string(*dt, prefix + key);
      return;
    }
  }
}

// The sparse flag, hasattr(config, "index_topk") (deepseek_v2.py ~1138, ~1439), with its class
// default (GlmMoeDsaConfig), and what vLLM 0.33 refuses without it.
void read_index_topk(const Reader& r, const JsonNode& arch_at, const HfTextModel& text, ModelConfig& out) {
  out.index_topk = text.family->index_topk;
  if (const JsonNode* n = present(*text.node, "index_topk"))
    out.index_topk = r.read_int(*n, text.prefix + "index_topk", 1, 1LL << 24);
  if (!out.index_topk && out.architecture == "DeepseekV32ForCausalLM")
    r.fail(arch_at, "index_topk",
           "DeepseekV32ForCausalLM without index_topk: vLLM 0.33 refuses it (`assert is_v32`, is_v32 = "
           "hasattr(hf_config, \"index_topk\"), vllm/model_executor/models/config.py ~78-81)",
           "restore index_topk (a GGUF conversion can drop it), or declare the dense architecture "
           "DeepseekV3ForCausalLM to serve the weights as dense MLA");
  if (!out.index_topk && out.architecture == "GlmMoeDsaForCausalLM")
    r.fail(arch_at, "index_topk",
           "GlmMoeDsaForCausalLM without index_topk: vLLM 0.33 cannot build it (the DSA model reads "
           "config.index_topk, vllm/models/deepseek_v32/nvidia/model.py ~188-196)",
           "restore index_topk, or declare the dense architecture DeepseekV3ForCausalLM");
}

// The DSA indexer's shape (DeepseekV32Indexer, models/deepseek_v32/attention.py ~50-90, 244-284):
// index_n_heads and index_head_dim (GlmMoeDsaConfig's defaults 32 and 128, DeepSeek-V3.2's 64 and
// 128 otherwise), and indexer_rope_interleave (absent: NeoX).
void read_indexer_dims(const Reader& r, const HfTextModel& text, ModelConfig& out) {
  const JsonNode& n = *text.node;
  out.index_n_heads = text.model_type == "glm_moe_dsa" ? 32 : 64;
  out.index_head_dim = 128;
  out.indexer_rope_interleave = false;
  if (const JsonNode* v = present(n, "index_n_heads")) out.index_n_heads = r.read_int(*v, text.prefix + "index_n_heads", 1, 1 << 10);
  if (const JsonNode* v = present(n, "index_head_dim")) out.index_head_dim = r.read_int(*v, text.prefix + "index_head_dim", 2, 1 << 12);
  if (const JsonNode* v = present(n, "indexer_rope_interleave"))
    out.indexer_rope_interleave = r.read_bool(*v, text.prefix + "indexer_rope_interleave");
}

HfDerivedMaxLen read_config(const Reader& r, const JsonNode& root, ModelConfig& out, std::vector<std::string>& notes) {
  if (!root.is_object())
    r.fail(root, "", "a config.json holds one JSON object, got " + json_kind_name(root), "is this a Hugging Face config.json?");
  out.architecture = read_architecture(r, root);
  out.model_type = hf_config_model_type(r, root, out.architecture);
  const JsonNode* model_type = present(root, "model_type");
  require_readable_family(r, model_type ? *model_type : root, "model_type", out.model_type);
  const HfTextModel text = find_text_model(r, root, out.model_type);
  out.text_model_type = text.model_type;
  read_dims(r, text, out, notes);
  const Rope rope = read_rope(r, *text.node, text.prefix, out);
  const HfDerivedMaxLen max_len = derive_max_len(r, text, rope);
  const JsonNode* eos = read_eos(r, text, out);
  read_torch_dtype(r, root, text, out);
  read_quantization(r, root, text, out);
  read_index_topk(r, present(root, "architectures")->items[0], text, out);
  out.learnable_sink = false;
  out.unused_index_topk.reset();
  read_indexer_dims(r, text, out);
  if (out.model_type == "hy_v4") read_hy_v4_attention(r, *text.node, present(root, "architectures")->items[0], out, notes);
  // The MTP layers SpeculativeConfig.hf_config_override reads (n_predict, config/speculative.py).
  out.num_nextn_predict_layers = 0;
  if (const JsonNode* n = present(root, "num_nextn_predict_layers"))
    out.num_nextn_predict_layers = r.read_int(*n, "num_nextn_predict_layers", 0, 64);
  if (out.eos_token_id >= out.vocab_size)
    r.fail(eos ? *eos : *text.node, text.prefix + "eos_token_id", "eos_token_id is outside the vocabulary");
  out.hf_derived_max_model_len = max_len.derived;
  return max_len;
}

}  // namespace

std::vector<std::string> hf_mla_architectures() {
  return {"DeepseekV2ForCausalLM",   "DeepseekV3ForCausalLM",   "DeepseekV32ForCausalLM",
          "GlmMoeDsaForCausalLM",    "AXK1ForCausalLM",         "Glm4MoeLiteForCausalLM",
          "LongcatFlashForCausalLM", "LongcatFlashNgramForCausalLM", "KimiK25ForConditionalGeneration",
          "HYV4ForCausalLM"};
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
