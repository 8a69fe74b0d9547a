// The hybrid MLA families' config.json (DeepSeek-V4, Kimi-Linear, GLM-5-Next, Bailing-hybrid) as
// vLLM 0.33 reads it.
#include "scenario/hf_config_hybrid.h"

#include <algorithm>
#include <map>

namespace mlasim {
namespace {

using Reader = JsonFieldReader;
const JsonNode* present(const JsonNode& object, const char* key) { return Reader::present(object, key); }

// DeepseekV4Config's layer types and their default compress rates
// (transformers/models/deepseek_v4/configuration_deepseek_v4.py ~21-33, ~140).
const char* const kCsa = "compressed_sparse_attention";
const char* const kHca = "heavily_compressed_attention";
const char* const kSwa = "sliding_attention";

// transformers' ALLOWED_ATTN_LAYER_TYPES (configuration_utils.py ~66-83), which every config's
// validate_layer_type checks, after the legacy names are remapped (~94-99).
const std::vector<std::string> kAllowedLayerTypes{
    "full_attention", "sliding_attention", "chunked_attention", "window_attention", "indexed_attention",
    "compressed_sparse_attention", "heavily_compressed_attention", "minimax_m3_sparse", "conv", "moe", "hybrid",
    "hybrid_sliding", "reference_sliding_attention", "linear_attention"};
const std::map<std::string, std::string> kLegacyLayerTypes{{"mamba", "linear_attention"},
                                                          {"attention", "full_attention"},
                                                          {"deepseek_sparse_attention", "indexed_attention"},
                                                          {"qwen_sparse_attention", "indexed_attention"}};

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

int opt_int(const Reader& r, const JsonNode& root, const char* key, int fallback, long long min, long long max) {
  const JsonNode* n = present(root, key);
  return n ? r.read_int(*n, key, min, max) : fallback;
}

int need_int(const Reader& r, const JsonNode& root, const char* key, long long min, long long max, const std::string& why) {
  const JsonNode* n = present(root, key);
  if (!n) r.fail(root, key, std::string("missing `") + key + "`", why);
  return r.read_int(*n, key, min, max);
}

// A list of layer-type strings (`key`), checked against `allowed` and the layer count as the
// config class's validate_layer_type checks it.
std::vector<std::string> read_layer_types(const Reader& r, const JsonNode& list, const char* key,
                                          const std::vector<std::string>& allowed, int num_layers, bool remap,
                                          std::string (*fold)(const std::string&) = nullptr) {
  r.expect_list(list, key);
  std::vector<std::string> types;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    std::string t = r.read_string(list.items[i], json_index_key(key, i));
    if (fold) t = fold(t);
    if (remap)
      if (auto it = kLegacyLayerTypes.find(t); it != kLegacyLayerTypes.end()) t = it->second;
    if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
      r.fail(list.items[i], json_index_key(key, i), "unknown layer type \"" + t + "\"",
             "the config class takes " + join(allowed));
    types.push_back(t);
  }
  if (static_cast<int>(types.size()) != num_layers)
    r.fail(list, key,
           "`num_hidden_layers` (" + std::to_string(num_layers) + ") must equal the number of `" + key + "` (" +
               std::to_string(types.size()) + "), as the config class checks (validate_layer_type)",
           "one entry per layer");
  return types;
}

// DeepseekV4Config.__post_init__'s compress_rates (~231-238): the default per type, the legacy
// scalar keys folded in, a config's own dict replacing the default.
std::map<std::string, int> read_compress_rates(const Reader& r, const JsonNode& root) {
  std::map<std::string, int> rates{{kCsa, 4}, {kHca, 128}};
  if (const JsonNode* n = present(root, "compress_rates")) {
    r.expect_object(*n, "compress_rates");
    rates.clear();
    for (const auto& m : n->members) rates[m.key] = r.read_int(m.value, "compress_rates." + m.key, 0, 1 << 20);
  }
  if (const JsonNode* n = present(root, "compress_rate_csa")) rates[kCsa] = r.read_int(*n, "compress_rate_csa", 0, 1 << 20);
  if (const JsonNode* n = present(root, "compress_rate_hca")) rates[kHca] = r.read_int(*n, "compress_rate_hca", 0, 1 << 20);
  return rates;
}

// layer_types: the config's > the legacy `compress_ratios` (0/4/128 per layer, truncated to the
// layer count) > 2 HCA layers then CSA / HCA alternating (~240-249).
std::vector<std::string> deepseek_v4_layer_types(const Reader& r, const JsonNode& root, int n) {
  const std::vector<std::string> allowed{kSwa, kCsa, kHca};
  if (const JsonNode* lt = present(root, "layer_types")) return read_layer_types(r, *lt, "layer_types", allowed, n, false);
  if (const JsonNode* cr = present(root, "compress_ratios")) {
    r.expect_list(*cr, "compress_ratios");
    std::vector<std::string> types;
    for (std::size_t i = 0; i < cr->items.size() && static_cast<int>(i) < n; ++i) {
      const int ratio = r.read_int(cr->items[i], json_index_key("compress_ratios", i), 0, 1 << 20);
      if (ratio != 0 && ratio != 4 && ratio != 128)
        r.fail(cr->items[i], json_index_key("compress_ratios", i),
               "compress ratio " + std::to_string(ratio) + " names no DeepSeek-V4 layer type (a KeyError in "
               "DeepseekV4Config, configuration_deepseek_v4.py ~243)",
               "0 (sliding_attention), 4 (compressed_sparse_attention) or 128 (heavily_compressed_attention)");
      types.push_back(ratio == 0 ? kSwa : ratio == 4 ? kCsa : kHca);
    }
    if (static_cast<int>(types.size()) != n)
      r.fail(*cr, "compress_ratios",
             "`compress_ratios` has " + std::to_string(cr->items.size()) + " entries for " + std::to_string(n) +
                 " layers: `num_hidden_layers` (" + std::to_string(n) + ") must equal `len(layer_types)` (" +
                 std::to_string(types.size()) + ") (DeepseekV4Config.validate_layer_type)",
             "one ratio per layer (entries past num_hidden_layers, the MTP layers', are dropped)");
    return types;
  }
  std::vector<std::string> types(std::min(n, 2), kHca);
  for (int i = 0; i < n - 2; ++i) types.push_back(i % 2 ? kCsa : kHca);
  return types;
}

void read_deepseek_v4(const Reader& r, const JsonNode& root, ModelConfig& out) {
  // is_deepseek_mla: with compress ratios, MLA when head_dim is set (model_arch_config_convertor.py ~323).
  HybridAttentionDims& h = out.hybrid;
  h.head_dim = need_int(r, root, "head_dim", 2, 1 << 12, "DeepSeek-V4 is MLA when head_dim is set (is_deepseek_mla)");
  double factor = 64.0 / 512.0;  // default_partial_rotary_factor
  if (const JsonNode* n = present(root, "qk_rope_head_dim")) factor = r.read_int(*n, "qk_rope_head_dim", 0, h.head_dim) / double(h.head_dim);
  if (const JsonNode* n = present(root, "partial_rotary_factor")) factor = r.read_double(*n, "partial_rotary_factor", 0.0);
  out.qk_rope_head_dim = static_cast<int>(h.head_dim * factor);
  out.kv_lora_rank = h.head_dim - out.qk_rope_head_dim;  // 448 NoPE + 64 RoPE (attention.py ~874)
  out.qk_nope_head_dim = out.kv_lora_rank;
  out.v_head_dim = h.head_dim;
  out.q_lora_rank = opt_int(r, root, "q_lora_rank", 1024, 1, 1 << 16);
  out.intermediate_size = opt_int(r, root, "moe_intermediate_size", 2048, 1, 1 << 20);  // attribute_map
  h.sliding_window = opt_int(r, root, "sliding_window", 128, 1, 1 << 24);
  h.index_head_dim = opt_int(r, root, "index_head_dim", 128, 1, 1 << 12);
  h.index_n_heads = opt_int(r, root, "index_n_heads", 64, 1, 1 << 12);
  h.num_nextn_predict_layers = opt_int(r, root, "num_nextn_predict_layers", 1, 0, 64);
  const auto rates = read_compress_rates(r, root);
  for (const auto& type : deepseek_v4_layer_types(r, root, out.num_hidden_layers)) {
    const auto it = rates.find(type);
    const int ratio = std::max(1, it == rates.end() ? 0 : it->second);  // attention.py ~240
    out.attention_layers.push_back({ratio == 1 ? AttentionLayerKind::kSlidingWindow : AttentionLayerKind::kCompressed, ratio});
  }
}

// The MLA dimensions every MLA layer of Kimi-Linear and GLM-5-Next asserts are set.
void read_mla_dims(const Reader& r, const JsonNode& root, int min_rope, ModelConfig& out) {
  const std::string why = "the model's MLA layers need it (vLLM asserts it is set)";
  out.kv_lora_rank = need_int(r, root, "kv_lora_rank", 1, 1 << 16, "MLA when kv_lora_rank is set (is_deepseek_mla)");
  out.qk_nope_head_dim = need_int(r, root, "qk_nope_head_dim", 1, 1 << 12, why);
  out.qk_rope_head_dim = need_int(r, root, "qk_rope_head_dim", min_rope, 1 << 12, why);
  out.v_head_dim = need_int(r, root, "v_head_dim", 1, 1 << 12, why);
  out.q_lora_rank = opt_int(r, root, "q_lora_rank", 0, 0, 1 << 16);
}

// KimiLinearConfig (transformers_utils/configs/kimi_linear.py): linear_attn_config's 1-based
// kda_layers are KDA (is_kda_layer ~170), every other layer MLA (models/kimi_k3/nvidia/model.py ~715).
void read_kimi_linear(const Reader& r, const JsonNode& root, ModelConfig& out, std::vector<std::string>& notes) {
  read_mla_dims(r, root, 2, out);
  out.intermediate_size = opt_int(r, root, "intermediate_size", 11008, 1, 1 << 20);
  const JsonNode* nope = present(root, "mla_use_nope");
  if (!nope || !r.read_bool(*nope, "mla_use_nope"))
    r.fail(nope ? *nope : root, "mla_use_nope",
           "vLLM 0.33 refuses it: Kimi-K3 MLA (MultiHeadLatentAttention) is NoPE-only (an assert on mla_use_nope, "
           "models/kimi_k3/nvidia/model.py ~744)", "set \"mla_use_nope\": true, as the checkpoint does");
  out.attention_layers.assign(out.num_hidden_layers, {AttentionLayerKind::kMla, 1});
  const JsonNode* lac = present(root, "linear_attn_config");
  if (!lac) return;  // no linear attention: every layer MLA
  r.expect_object(*lac, "linear_attn_config");
  for (const char* key : {"kda_layers", "full_attn_layers"})
    if (!present(*lac, key))
      r.fail(*lac, std::string("linear_attn_config.") + key, std::string("missing `") + key + "`",
             "KimiLinearConfig asserts both layer lists are set (configs/kimi_linear.py ~128)");
  HybridAttentionDims& h = out.hybrid;
  auto need = [&](const char* key) {
    const JsonNode* n = present(*lac, key);
    if (!n) r.fail(*lac, std::string("linear_attn_config.") + key, std::string("missing `") + key + "`", "the KDA layers read it");
    return r.read_int(*n, std::string("linear_attn_config.") + key, 1, 1 << 16);
  };
  const JsonNode& kda = *present(*lac, "kda_layers");
  r.expect_list(kda, "linear_attn_config.kda_layers");
  for (std::size_t i = 0; i < kda.items.size(); ++i) {
    const std::string key = json_index_key("linear_attn_config.kda_layers", i);
    const int layer = r.read_int(kda.items[i], key, -(1 << 20), 1 << 20);
    if (layer >= 1 && layer <= out.num_hidden_layers) {
      out.attention_layers[layer - 1].kind = AttentionLayerKind::kLinear;
      continue;
    }
    notes.push_back(r.file() + ":" + std::to_string(kda.items[i].line) + ":" + std::to_string(kda.items[i].column) +
                    ": " + key + ": layer " + std::to_string(layer) + " names no layer (the list is 1-based, 1.." +
                    std::to_string(out.num_hidden_layers) + "); vLLM reads past it (is_kda_layer)");
  }
  h.linear_num_heads = need("num_heads");
  h.linear_head_dim = need("head_dim");
  h.linear_conv_kernel_dim = need("short_conv_kernel_size");
}

// Glm5NextTextConfig (transformers/models/glm5_next/configuration_glm5_next.py): layer_types'
// "linear_attention" layers are KDA, every other one MLA (vllm/models/glm5next/common/model.py ~141).
void read_glm5_next(const Reader& r, const JsonNode& root, ModelConfig& out) {
  if (present(root, "text_config"))
    r.fail(*present(root, "text_config"), "text_config", "a nested text_config is not read by mlasim",
           "write the text model's keys at the top level, as a text-only GLM-5-Next checkpoint does");
  read_mla_dims(r, root, 0, out);
  if (out.qk_rope_head_dim > 0)
    r.fail(*present(root, "qk_rope_head_dim"), "qk_rope_head_dim",
           "Expecting NoPE for the DSA attention layers, but got " + std::to_string(out.qk_rope_head_dim) +
               " as RoPE dim. (Glm5NextTextConfig.validate_architecture)");
  if (!out.q_lora_rank)
    r.fail(root, "q_lora_rank", "For DSA usage in the attention layers, the `q_lora_rank` is strictly required! "
           "(Glm5NextTextConfig.validate_architecture)");
  out.intermediate_size = opt_int(r, root, "intermediate_size", 12288, 1, 1 << 20);
  HybridAttentionDims& h = out.hybrid;
  h.index_head_dim = opt_int(r, root, "index_head_dim", 128, 1, 1 << 12);
  h.index_n_heads = opt_int(r, root, "index_n_heads", 32, 1, 1 << 12);
  h.index_kpool = opt_int(r, root, "index_kpool", 16, 1, 1 << 12);
  h.linear_num_heads = opt_int(r, root, "linear_num_heads", 64, 1, 1 << 12);
  h.linear_head_dim = opt_int(r, root, "linear_head_dim", 128, 1, 1 << 12);
  h.linear_conv_kernel_dim = opt_int(r, root, "linear_conv_kernel_dim", 4, 1, 64);
  h.linear_lower_bound = -5.0;
  if (const JsonNode* n = root.find("linear_lower_bound"))
    h.linear_lower_bound = n->is_null() ? std::nullopt : std::optional<double>(r.read_double(*n, "linear_lower_bound", -1e9));
  std::vector<std::string> types;
  const int n = out.num_hidden_layers;
  if (const JsonNode* lt = present(root, "layer_types"))
    types = read_layer_types(r, *lt, "layer_types", kAllowedLayerTypes, n, true);
  else
    for (int i = 0; i < n; ++i) types.push_back(i % 4 != 3 ? "linear_attention" : "indexed_attention");  // ~164-168
  for (const auto& t : types)
    out.attention_layers.push_back({t == "linear_attention" ? AttentionLayerKind::kLinear : AttentionLayerKind::kMla, 1});
}

// BailingHybridConfig (transformers/models/bailing_hybrid/configuration_bailing_hybrid.py) served
// as BailingMoeV3ForCausalLM (model_executor/models/bailing_moe_v3.py): every layer KDA but each
// layer_group_size-th and the trailing ones, which are MLA (_is_kda_layer ~131-137). The KDA layers'
// head dim is the config's head_dim, which the class's __post_init__ sets to qk_rope_head_dim.
void read_bailing_hybrid(const Reader& r, const JsonNode& root, ModelConfig& out) {
  out.kv_lora_rank = opt_int(r, root, "kv_lora_rank", 512, 1, 1 << 16);
  out.qk_nope_head_dim = opt_int(r, root, "qk_nope_head_dim", 128, 1, 1 << 12);
  out.qk_rope_head_dim = opt_int(r, root, "qk_rope_head_dim", 64, 1, 1 << 12);
  out.v_head_dim = opt_int(r, root, "v_head_dim", 128, 1, 1 << 12);
  out.q_lora_rank = opt_int(r, root, "q_lora_rank", 0, 0, 1 << 16);  // getattr(config, "q_lora_rank", None)
  out.intermediate_size = opt_int(r, root, "intermediate_size", 6144, 1, 1 << 20);
  const JsonNode* no_lora = present(root, "no_kda_lora");
  if (!no_lora || !r.read_bool(*no_lora, "no_kda_lora"))
    r.fail(no_lora ? *no_lora : root, "no_kda_lora",
           "vLLM 0.33 refuses it: BailingMoeV3 KDA currently expects no_kda_lora=True "
           "(model_executor/models/bailing_moe_v3.py ~687)",
           "set \"no_kda_lora\": true, as the Ling checkpoints vLLM serves do");
  const int group = opt_int(r, root, "layer_group_size", 6, 1, 1 << 16);
  HybridAttentionDims& h = out.hybrid;
  h.linear_num_heads = out.num_attention_heads;
  h.linear_head_dim = out.qk_rope_head_dim;  // head_dim after BailingHybridConfig.__post_init__
  h.linear_conv_kernel_dim = opt_int(r, root, "short_conv_kernel_size", 4, 1, 64);
  const int n = out.num_hidden_layers;
  for (int i = 0; i < n; ++i) {
    const bool mla = (i + 1) % group == 0 || i >= n / group * group;
    out.attention_layers.push_back({mla ? AttentionLayerKind::kMla : AttentionLayerKind::kLinear, 1});
  }
}

}  // namespace

std::vector<std::string> read_transformers_layer_types(const JsonFieldReader& r, const JsonNode& list, const char* key,
                                                       int num_layers, std::string (*fold)(const std::string&)) {
  return read_layer_types(r, list, key, kAllowedLayerTypes, num_layers, true, fold);
}

std::vector<std::string> hf_hybrid_architectures() {
  return {"DeepseekV4ForCausalLM", "KimiLinearForCausalLM", "Glm5NextForCausalLM", "BailingMoeV3ForCausalLM"};
}

bool is_hybrid_architecture(const std::string& architecture) {
  const auto a = hf_hybrid_architectures();
  return std::find(a.begin(), a.end(), architecture) != a.end();
}

void read_hybrid_attention(const Reader& r, const JsonNode& root, const std::string& architecture, ModelConfig& out,
                           std::vector<std::string>& notes) {
  out.attention_layers.clear();
  out.hybrid = {};
  if (architecture == "DeepseekV4ForCausalLM") read_deepseek_v4(r, root, out);
  else if (architecture == "KimiLinearForCausalLM") read_kimi_linear(r, root, out, notes);
  else if (architecture == "BailingMoeV3ForCausalLM") read_bailing_hybrid(r, root, out);
  else read_glm5_next(r, root, out);
}

}  // namespace mlasim
