// config.json → ModelConfig, as vLLM 0.33.0 reads an MLA model's config.
#include "scenario/hf_config.h"

#include <algorithm>
#include <cctype>

#include "base/file_read.h"
#include "scenario/yaml_reader.h"

namespace mlasim {
namespace {

// ModelArchConfigConvertor.is_deepseek_mla's model types that mlasim reads
// (transformers_utils/model_arch_config_convertor.py ~294-320).
const std::vector<std::string> kMlaModelTypes{"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa"};

// Known non-MLA architectures get a plain answer rather than "unknown".
const std::vector<std::string> kDenseArchitectures{"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
                                                   "Qwen3MoeForCausalLM", "MistralForCausalLM", "MixtralForCausalLM",
                                                   "Glm4MoeForCausalLM", "GptOssForCausalLM", "DeepseekForCausalLM"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void read_config(const YamlReader& r, const YamlNode& root, ModelConfig& out) {
  if (!root.IsMap()) r.fail(root, "", "a config.json holds one JSON object", "is this a Hugging Face config.json?");
  const YamlNode archs = root["architectures"];
  if (!archs || !archs.IsSequence() || archs.size() == 0)
    r.fail(archs ? archs : root, "architectures", "missing `architectures`",
           "a Hugging Face config.json names its model class, e.g. [\"DeepseekV3ForCausalLM\"]");
  const std::string arch = r.read_string(archs[0], "architectures[0]");
  if (!contains(hf_mla_architectures(), arch)) {
    const bool dense = contains(kDenseArchitectures, arch);
    std::string known;
    for (const auto& a : hf_mla_architectures()) known += (known.empty() ? "" : ", ") + a;
    r.fail(archs[0], "architectures[0]",
           dense ? "architecture " + arch + " does not use MLA (vLLM serves it with standard attention)"
                 : "architecture " + arch + " is not an MLA architecture mlasim knows",
           "mlasim reads MLA models: " + known);
  }
  out.architecture = arch;
  out.model_type = root["model_type"] ? r.read_string(root["model_type"], "model_type") : "";
  if (!contains(kMlaModelTypes, out.model_type))
    r.fail(root["model_type"] ? root["model_type"] : root, "model_type",
           "model_type \"" + out.model_type + "\" is not one vLLM 0.33 serves with MLA",
           "vLLM's use_mla needs a DeepSeek-MLA model_type (model_arch_config_convertor.py ~294): deepseek_v2, "
           "deepseek_v3, deepseek_v32, kimi_k2, glm_moe_dsa");

  auto need_int = [&](const char* key, int& field, int min, long long max) {
    if (!root[key]) r.fail(root, key, std::string("missing `") + key + "`", "an MLA config.json has this key");
    field = r.read_int(root[key], key, min, max);
  };
  auto opt_int = [&](const char* key, int& field, int min, long long max) {
    if (root[key] && !root[key].IsNull()) field = r.read_int(root[key], key, min, max);
  };
  auto opt_double = [&](const YamlNode& node, const std::string& key, double& field, double min) {
    if (node && !node.IsNull()) field = r.read_double(node, key, min);
  };
  need_int("vocab_size", out.vocab_size, 3, 1LL << 21);
  need_int("hidden_size", out.hidden_size, 1, 1LL << 16);
  need_int("num_hidden_layers", out.num_hidden_layers, 1, 1LL << 10);
  need_int("num_attention_heads", out.num_attention_heads, 1, 1LL << 10);
  need_int("kv_lora_rank", out.kv_lora_rank, 1, 1LL << 16);
  need_int("qk_nope_head_dim", out.qk_nope_head_dim, 1, 1LL << 12);
  need_int("qk_rope_head_dim", out.qk_rope_head_dim, 2, 1LL << 12);
  need_int("v_head_dim", out.v_head_dim, 1, 1LL << 12);
  out.q_lora_rank = 0;  // null (DeepSeek-V2-Lite): q_proj, no q compression
  opt_int("q_lora_rank", out.q_lora_rank, 0, 1LL << 16);
  need_int("intermediate_size", out.intermediate_size, 1, 1LL << 20);
  opt_int("max_position_embeddings", out.max_position_embeddings, 2, 1LL << 24);
  opt_double(root["rms_norm_eps"], "rms_norm_eps", out.rms_norm_eps, 0.0);
  // RoPE: rope_theta + rope_scaling (DeepSeek, Kimi), or rope_parameters (transformers 5 style, GLM-5).
  const YamlNode params = root["rope_parameters"];
  opt_double(root["rope_theta"], "rope_theta", out.rope_theta, 1.0);
  if (params && params.IsMap()) opt_double(params["rope_theta"], "rope_parameters.rope_theta", out.rope_theta, 1.0);
  const YamlNode scaling = root["rope_scaling"] && root["rope_scaling"].IsMap() ? root["rope_scaling"] : params;
  const std::string scaling_key = root["rope_scaling"] && root["rope_scaling"].IsMap() ? "rope_scaling" : "rope_parameters";
  std::string rope_type;
  if (scaling && scaling.IsMap()) {
    if (scaling["type"]) rope_type = r.read_string(scaling["type"], scaling_key + ".type");
    if (scaling["rope_type"]) rope_type = r.read_string(scaling["rope_type"], scaling_key + ".rope_type");
  }
  if (rope_type == "yarn" || rope_type == "deepseek_yarn") {
    opt_double(scaling["factor"], scaling_key + ".factor", out.rope_scaling_factor, 1.0);
    opt_double(scaling["mscale_all_dim"], scaling_key + ".mscale_all_dim", out.mscale_all_dim, 0.0);
    opt_double(scaling["beta_fast"], scaling_key + ".beta_fast", out.beta_fast, 0.0);
    opt_double(scaling["beta_slow"], scaling_key + ".beta_slow", out.beta_slow, 0.0);
    if (scaling["original_max_position_embeddings"])
      out.original_max_position_embeddings =
          r.read_int(scaling["original_max_position_embeddings"], scaling_key + ".original_max_position_embeddings", 1,
                     1LL << 24);
  } else if (rope_type.empty() || rope_type == "default") {
    out.rope_scaling_factor = 1.0;  // plain RoPE
  } else {
    r.fail(scaling["type"] ? scaling["type"] : scaling["rope_type"], scaling_key + ".type",
           "rope scaling \"" + rope_type + "\" is not one mlasim runs", "mlasim runs plain RoPE and DeepSeek's YaRN");
  }
  // eos_token_id: an id or a list of them (GLM-5); the first stops a request.
  if (const YamlNode eos = root["eos_token_id"]; eos && !eos.IsNull())
    out.eos_token_id = eos.IsSequence() ? r.read_int(eos[0], "eos_token_id[0]", 0) : r.read_int(eos, "eos_token_id", 0);
  if (const YamlNode dt = root["torch_dtype"] ? root["torch_dtype"] : root["dtype"]; dt && !dt.IsNull())
    out.torch_dtype = r.read_string(dt, root["torch_dtype"] ? "torch_dtype" : "dtype");
  out.quant_method.clear();
  out.quant_kv_cache_dtype.clear();
  if (const YamlNode q = root["quantization_config"]; q && q.IsMap() && q["quant_method"]) {
    out.quant_method = r.read_string(q["quant_method"], "quantization_config.quant_method");
    // resolve_kv_cache_dtype_string / get_kv_cache_quant_algo_string (utils/torch_utils.py
    // ~443-516): only modelopt checkpoints name their KV cache's dtype.
    if (out.quant_method.rfind("modelopt", 0) == 0) {
      const YamlNode inner = q["quantization"] && q["quantization"].IsMap() ? q["quantization"] : q;
      YamlNode algo;
      for (const YamlNode& n : {inner["kv_cache_scheme"], q["kv_cache_scheme"], inner["kv_cache_quant_algo"],
                                q["kv_cache_quant_algo"]})
        if (!algo && n && !n.IsNull()) algo = n;
      if (algo) {
        std::string name = "auto";  // unknown: vLLM falls back to auto
        if (algo.IsMap()) {
          const bool dynamic = algo["dynamic"] && algo["dynamic"].Scalar() == "true";
          const std::string bits = algo["num_bits"] ? algo["num_bits"].Scalar() : "";
          const std::string type = algo["type"] ? algo["type"].Scalar() : "";
          name = algo["dynamic"] && !dynamic && bits == "8" && type == "float" ? "fp8_e4m3"
                 : bits == "4" && type == "float"                              ? "nvfp4"
                                                                               : "auto";
        } else if (algo.IsScalar()) {
          std::string v = algo.Scalar();
          for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          name = v == "fp8" ? "fp8_e4m3" : v == "nvfp4" ? "nvfp4" : "auto";
        }
        out.quant_kv_cache_dtype = name;
      }
    }
  }
  // The sparse flag: hasattr(config, "index_topk") (deepseek_v2.py ~1138, ~1439).
  out.index_topk.reset();
  if (root["index_topk"] && !root["index_topk"].IsNull())
    out.index_topk = r.read_int(root["index_topk"], "index_topk", 1, 1LL << 24);
  if (!out.index_topk && arch == "DeepseekV32ForCausalLM")
    r.fail(archs[0], "index_topk",
           "DeepseekV32ForCausalLM without index_topk: vLLM 0.33 refuses it (`assert is_v32`, is_v32 = "
           "hasattr(hf_config, \"index_topk\"), vllm/model_executor/models/config.py ~78-81)",
           "restore index_topk (a GGUF conversion can drop it), or declare the dense architecture "
           "DeepseekV3ForCausalLM to serve the weights as dense MLA");
  if (!out.index_topk && arch == "GlmMoeDsaForCausalLM")
    r.fail(archs[0], "index_topk",
           "GlmMoeDsaForCausalLM without index_topk: vLLM 0.33 cannot build it (the DSA model reads "
           "config.index_topk, vllm/models/deepseek_v32/nvidia/model.py ~188-196)",
           "restore index_topk, or declare the dense architecture DeepseekV3ForCausalLM");
  if (out.eos_token_id >= out.vocab_size)
    r.fail(root["eos_token_id"], "eos_token_id", "eos_token_id is outside the vocabulary");
}

}  // namespace

std::vector<std::string> hf_mla_architectures() {
  return {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"};
}

Status read_hf_config(const std::string& path, ModelConfig& out) {
  auto text = read_file_bounded(path, 16u << 20, "model config");
  if (!text) return text.error();
  YamlReader reader(path);
  try {
    YamlTree tree;
    YamlNode root;
    try {
      root = tree.parse(text.value());
    } catch (const YamlSyntaxError& ex) {
      return syntax_error_at(path, ex, "JSON syntax error: " + ex.msg, "a Hugging Face config.json is one JSON object");
    }
    read_config(reader, root, out);
  } catch (const LoadError& e) {
    return e.error;
  }
  out.hf_config = path;
  return Status::Ok();
}

}  // namespace mlasim
