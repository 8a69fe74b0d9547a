// The text model of a config.json and its family, as vLLM 0.33 reads them.
#include "scenario/hf_text_model.h"

#include <optional>

namespace mlasim {
namespace {

using Reader = JsonFieldReader;
const JsonNode* present(const JsonNode& object, const char* key) { return Reader::present(object, key); }

std::string readable_model_types() {
  std::string out;
  for (const HfFamily& f : hf_families())
    if (f.kind == HfFamilyKind::kOneGroup || f.kind == HfFamilyKind::kSeveralGroups) out += (out.empty() ? "" : ", ") + std::string(f.model_type);
  return out;
}

// transformers' AutoConfig on a model_type it has no class for (models/auto/configuration_auto.py
// ~430), which vLLM 0.33 raises as it is: its first two sentences.
std::string transformers_unknown_model_type(const std::string& model_type) {
  return "vLLM 0.33 refuses it: The checkpoint you are trying to load has model type `" + model_type +
         "` but Transformers does not recognize this architecture. This could be because of an issue with the "
         "checkpoint, or because your version of Transformers is out of date.";
}

}  // namespace

std::string hf_config_model_type(const Reader& r, const JsonNode& root, const std::string& architecture) {
  if (const JsonNode* n = present(root, "model_type")) return r.read_string(*n, "model_type");
  if (architecture == "LongcatFlashForCausalLM" || architecture == "LongcatFlashNgramForCausalLM")
    return "longcat_flash";  // _ARCHITECTURE_TO_MODEL_TYPE (transformers_utils/config.py ~181-184)
  return "";
}

void require_readable_family(const Reader& r, const JsonNode& at, const std::string& key_path,
                             const std::string& model_type) {
  const HfFamily* f = find_hf_family(model_type);
  if (!f)
    r.fail(at, key_path, "model_type \"" + model_type + "\" is not one vLLM 0.33 serves with MLA",
           "vLLM's use_mla needs a DeepSeek-MLA model_type (model_arch_config_convertor.py ~294-330); mlasim reads " +
               readable_model_types());
  const std::string type(f->model_type), why(f->why);
  switch (f->kind) {
    case HfFamilyKind::kOneGroup:
    case HfFamilyKind::kSeveralGroups:
      return;
    case HfFamilyKind::kDrafter:
      if (f->config_class.empty())
        r.fail(at, key_path, transformers_unknown_model_type(type),
               type + " is " + why + " (config/speculative.py ~720-1100), never a config.json's: serve the target's "
                                     "config.json with speculative tokens (mlasim deploy --spec-tokens K)");
      r.fail(at, key_path, "model_type " + type + " (" + std::string(f->config_class) + ") is " + why,
             "vLLM builds it as a drafter beside its target only: serve the target's config.json");
    case HfFamilyKind::kNoConfigClass:
      r.fail(at, key_path, transformers_unknown_model_type(type),
             why + ": vLLM serves it only with --trust-remote-code, which runs code mlasim does not");
    case HfFamilyKind::kHybrid:
      r.fail(at, key_path,
             "model_type " + type + " (" + std::string(f->config_class) + "): its layers give vLLM 0.33 several KV "
                 "cache groups (" + why + "), which mlasim does not read",
             "mlasim reads " + readable_model_types());
  }
}

HfTextModel find_text_model(const Reader& r, const JsonNode& root, const std::string& model_type) {
  HfTextModel text{&root, "", find_hf_family(model_type), model_type};
  // Glm5NextConfig holds its text model in text_config (a Glm5NextTextConfig) unless the checkpoint
  // is flat, when the top level is the text model (configuration_glm5_next.py ~291-311).
  const bool glm5_next_nested = model_type == "glm5_next" && present(root, "text_config");
  if (!text.family->text_config && !glm5_next_nested) return text;
  // Kimi_K25Config: the text model is text_config, an AutoConfig of its model_type
  // (sub_configs_defaults), which is_deepseek_mla reads (hf_text_config.model_type).
  const JsonNode* sub = present(root, "text_config");
  if (!sub)
    r.fail(root, "text_config", "missing `text_config`",
           model_type + " (" + std::string(text.family->config_class) + ") holds its text model in text_config");
  r.expect_object(*sub, "text_config");
  const JsonNode* type_node = present(*sub, "model_type");
  std::optional<std::string> given;
  if (type_node) given = r.read_string(*type_node, "text_config.model_type");
  text.node = sub;
  text.prefix = "text_config.";
  text.model_type = glm5_next_nested ? given.value_or("glm5_next_text") : kimi_k25_text_model_type(given);
  require_readable_family(r, type_node ? *type_node : *sub, "text_config.model_type", text.model_type);
  text.family = find_hf_family(text.model_type);
  if (text.family->text_config)
    r.fail(type_node ? *type_node : *sub, "text_config.model_type",
           "a text_config of model_type " + text.model_type + " nests another text_config",
           "the text model is a DeepSeek-MLA config (deepseek_v3, the default)");
  return text;
}

void read_layer_shape(const Reader& r, const HfTextModel& text, ModelConfig& out) {
  const JsonNode& n = *text.node;
  // `key`, or else the family's own name `alt`; missing, the error names the family's name.
  auto need = [&](const char* key, const char* alt, int min, long long max) {
    const char* k = present(n, key) || !alt ? key : alt;
    const JsonNode* v = present(n, k);
    if (!v) r.fail(n, text.prefix + k, std::string("missing `") + k + "`", "an MLA config.json has this key");
    return std::pair{r.read_int(*v, text.prefix + k, min, max), std::string(k)};
  };
  out.num_attn_modules = 1;
  out.mla_lora_scaling = false;
  if (text.family->kind == HfFamilyKind::kSeveralGroups) {  // intermediate_size: scenario/hf_config_hybrid.h
    out.num_hidden_layers = need("num_hidden_layers", nullptr, 1, 1LL << 10).first;
    return;
  }
  if (text.family->model_type != "longcat_flash") {
    out.num_hidden_layers = need("num_hidden_layers", nullptr, 1, 1LL << 10).first;
    out.intermediate_size = need("intermediate_size", nullptr, 1, 1LL << 20).first;
    return;
  }
  // LongcatFlashConfig: num_hidden_layers is a property, 2 * num_layers; given, its setter makes
  // num_layers = value // 2 (and wins over num_layers). vLLM's layer count is num_layers
  // (LongCatFlashModelArchConfigConvertor.get_num_hidden_layers, model_arch_config_convertor.py
  // ~772); each FlashDecoderLayer holds two MLA modules (models/longcat_flash.py ~267).
  auto [layers, key] = need("num_hidden_layers", "num_layers", 1, 1LL << 10);
  if (key == "num_hidden_layers") {
    if (layers < 2)
      r.fail(*present(n, "num_hidden_layers"), text.prefix + key, "must be >= 2 (got " + std::to_string(layers) + ")",
             "LongcatFlashConfig counts two MLA modules per decoder layer: num_layers = num_hidden_layers // 2");
    layers /= 2;
  }
  out.num_hidden_layers = layers;
  out.num_attn_modules = 2;  // gpu_model_runner.py ~6948 num_attn_module
  out.mla_lora_scaling = true;
  // attribute_map intermediate_size -> ffn_hidden_size: a given intermediate_size wins.
  out.intermediate_size = need("intermediate_size", "ffn_hidden_size", 1, 1LL << 20).first;
}

}  // namespace mlasim
