// Hugging Face export of the seeded MLA model.
#include "output/model_export.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/atomic_file.h"
#include "base/created_folders.h"
#include "base/output_set.h"
#include "base/formats/json_writer.h"
#include "base/formats/safetensors.h"

namespace mlasim {
namespace {

const std::vector<std::pair<std::string, std::string>> kSafetensorsMetadata = {{"format", "pt"},
                                                                               {"producer", "mlasim"}};

}  // namespace

namespace {

// The transformers class the checkpoint is written for: the model's family where transformers 5.20
// has its own dense-layer modeling for it, else DeepSeek-V3 (Kimi-K2.5's text model is one).
struct ExportClass {
  const char* architecture;
  const char* model_type;
};

ExportClass export_class(const ModelConfig& m) {
  // A model with the DSA indexer: transformers' sparse classes, whose indexer and top-k mask are
  // the oracle's. The class follows the indexer's RoPE, the one thing they compute differently:
  // GlmMoeDsa's is always interleaved, DeepseekV32's always NeoX.
  if (has_dsa_indexer(m))
    return m.indexer_rope_interleave ? ExportClass{"GlmMoeDsaForCausalLM", "glm_moe_dsa"}
                                     : ExportClass{"DeepseekV32ForCausalLM", "deepseek_v32"};
  if (m.model_type == "glm4_moe_lite") return {"Glm4MoeLiteForCausalLM", "glm4_moe_lite"};
  if (m.model_type == "axk1") return {"AXK1ForCausalLM", "axk1"};
  if (m.model_type == "longcat_flash") return {"LongcatFlashForCausalLM", "longcat_flash"};
  return {"DeepseekV3ForCausalLM", "deepseek_v3"};
}

// The layers and MLPs: every layer dense. DeepSeek-V3 by first_k_dense_replace, GLM-4.7-Flash and
// A.X-K1 by mlp_layer_types; LongCat-Flash's two dense MLPs per layer, and its shortcut MoE the
// zero-computation (identity) experts of model/mla_weights.h, all chosen at equal weight
// (n_routed_experts 0, zero_expert_num = moe_topk = kLongcatZeroExperts, routed_scaling_factor 1),
// with its MLA LoRA scaling on.
void layer_keys(JsonWriter& w, const ModelConfig& m, const std::string& model_type) {
  if (model_type == "longcat_flash") {
    w.key("ffn_hidden_size").value(m.intermediate_size);
    w.key("expert_ffn_hidden_size").value(m.intermediate_size);
    w.key("num_layers").value(m.num_hidden_layers);
    w.key("n_routed_experts").value(0);
    w.key("zero_expert_num").value(kLongcatZeroExperts);
    w.key("moe_topk").value(kLongcatZeroExperts);
    w.key("routed_scaling_factor").value(1.0);
    w.key("mla_scale_q_lora").value(true);
    w.key("mla_scale_kv_lora").value(true);
    return;
  }
  w.key("intermediate_size").value(m.intermediate_size);
  w.key("moe_intermediate_size").value(m.intermediate_size);
  w.key("num_hidden_layers").value(m.num_hidden_layers);
  if (model_type == "deepseek_v3") {
    w.key("first_k_dense_replace").value(m.num_hidden_layers);  // every layer has a dense MLP
  } else if (model_type == "deepseek_v32" || model_type == "glm_moe_dsa") {
    w.key("first_k_dense_replace").value(m.num_hidden_layers);
    w.key("mlp_layer_types").begin_array();
    for (int i = 0; i < m.num_hidden_layers; ++i) w.value("dense");
    w.end_array();
    w.key("index_topk").value(*m.index_topk);
    w.key("index_n_heads").value(m.index_n_heads);
    w.key("index_head_dim").value(m.index_head_dim);
    w.key("indexer_rope_interleave").value(m.indexer_rope_interleave);  // vLLM's reading of the RoPE
    if (model_type == "glm_moe_dsa") {  // every layer computes its own top-k
      w.key("indexer_types").begin_array();
      for (int i = 0; i < m.num_hidden_layers; ++i) w.value("full");
      w.end_array();
    }
  } else {
    w.key("mlp_layer_types").begin_array();
    for (int i = 0; i < m.num_hidden_layers; ++i) w.value("dense");
    w.end_array();
  }
  w.key("n_routed_experts").value(1);
  w.key("n_shared_experts").value(1);
  w.key("num_experts_per_tok").value(1);
  w.key("n_group").value(1);
  w.key("topk_group").value(1);
}

}  // namespace

std::string hf_config_json(const ModelConfig& m) {
  const ExportClass cls = export_class(m);
  const std::string model_type = cls.model_type;
  JsonWriter w;
  w.begin_object();
  w.key("architectures").begin_array().value(cls.architecture).end_array();
  w.key("model_type").value(model_type);
  w.key("vocab_size").value(m.vocab_size);
  w.key("hidden_size").value(m.hidden_size);
  layer_keys(w, m, model_type);
  w.key("num_attention_heads").value(m.num_attention_heads);
  w.key("num_key_value_heads").value(m.num_attention_heads);
  if (m.q_lora_rank > 0) w.key("q_lora_rank").value(m.q_lora_rank);
  else w.key("q_lora_rank").null();
  w.key("kv_lora_rank").value(m.kv_lora_rank);
  w.key("qk_nope_head_dim").value(m.qk_nope_head_dim);
  w.key("qk_rope_head_dim").value(m.qk_rope_head_dim);
  w.key("v_head_dim").value(m.v_head_dim);
  w.key("hidden_act").value("silu");
  w.key("max_position_embeddings").value(m.max_position_embeddings);
  w.key("rms_norm_eps").value(m.rms_norm_eps);
  w.key("rope_theta").value(m.rope_theta);
  if (m.rope_scaling_factor > 1.0) {
    // Every YaRN parameter is written, so a reader that fills in defaults for missing or zero
    // values computes what mlasim computes: transformers derives attention_factor (the cos/sin
    // scale) from mscale / mscale_all_dim only when both are non-zero, else from factor alone;
    // mlasim scales no cos/sin (the mscale^2 goes into the softmax scale), so it is 1 here.
    // truncate: mlasim floors/ceils the correction range (transformers' default).
    w.key("rope_scaling").begin_object();
    w.key("type").value("yarn");
    w.key("factor").value(m.rope_scaling_factor);
    w.key("original_max_position_embeddings").value(m.original_max_position_embeddings);
    w.key("beta_fast").value(m.beta_fast);
    w.key("beta_slow").value(m.beta_slow);
    w.key("mscale").value(m.mscale_all_dim);
    w.key("mscale_all_dim").value(m.mscale_all_dim);
    w.key("attention_factor").value(1.0);
    w.key("truncate").value(true);
    w.end_object();
  } else {
    w.key("rope_scaling").null();
  }
  if (model_type != "longcat_flash") w.key("rope_interleave").value(true);  // LongCat's is always interleaved
  w.key("attention_bias").value(false);
  w.key("tie_word_embeddings").value(false);
  w.key("bos_token_id").value(0);
  w.key("eos_token_id").value(m.eos_token_id);
  if (m.index_topk && !has_dsa_indexer(m)) w.key("index_topk").value(*m.index_topk);
  w.key("torch_dtype").value("float32");
  w.end_object();
  return w.str();
}

std::uint64_t export_bytes(const ModelConfig& model) {
  std::vector<TensorView> tensors;
  std::uint64_t data = 0;
  for (const WeightSpec& spec : weight_specs(model)) {
    TensorView t{spec.name, {}, nullptr, 1};
    for (int d : spec.shape) t.shape.push_back(d), t.size *= static_cast<std::size_t>(d);
    data += t.size * sizeof(float);
    tensors.push_back(std::move(t));
  }
  return safetensors_header(tensors, kSafetensorsMetadata).size() + data + hf_config_json(model).size();
}

Status export_hf_checkpoint(const std::string& dir, const MlaWeights& weights) {
  CreatedFolders folders;  // removed again unless both files are published
  if (Status st = folders.create(dir); !st) return st;
  const std::string model_path = dir + "/model.safetensors", config_path = dir + "/config.json";
  for (const std::string& note : recover_output_leftovers({model_path, config_path}))
    std::fprintf(stderr, "note: %s\n", note.c_str());
  std::vector<TensorView> tensors;
  for (const NamedWeight& nw : weights.tensors()) {
    TensorView t{nw.name, {}, nw.tensor->values.data(), nw.tensor->values.size()};
    for (int d : nw.tensor->shape) t.shape.push_back(d);
    tensors.push_back(std::move(t));
  }
  // Both files written and synced, then published as one set: a failure (a full disk) leaves the
  // folder as it was, never new weights beside an old config. The weights go to the file from
  // where they are, tensor by tensor.
  AtomicOutputFile model, config;
  if (Status st = model.open(model_path); !st) return st;
  model.write(safetensors_header(tensors, kSafetensorsMetadata));
  for (const TensorView& t : tensors)
    model.write(std::string_view(reinterpret_cast<const char*>(t.data), t.size * sizeof(float)));
  if (Status st = model.finish(); !st) return st;
  if (Status st = config.open(config_path); !st) return st;
  config.write(hf_config_json(weights.config));
  if (Status st = config.finish(); !st) return st;
  if (Status st = publish_together({&model, &config}); !st) return st;
  folders.keep();
  return Status::Ok();
}

Result<MlaWeights> read_hf_checkpoint(const std::string& dir, const ModelConfig& model) {
  Result<std::vector<NamedTensor>> tensors = read_safetensors(dir + "/model.safetensors");
  if (!tensors) return tensors.error();
  std::map<std::string, WeightTensor> by_name;
  for (NamedTensor& t : tensors.value()) {
    WeightTensor w;
    for (std::int64_t d : t.shape) w.shape.push_back(static_cast<int>(d));
    w.values = std::move(t.data);
    by_name.emplace(t.name, std::move(w));
  }
  Result<MlaWeights> weights = weights_from_tensors(model, std::move(by_name));
  if (!weights) {
    Error e = weights.error();
    if (e.file.empty()) e.file = dir + "/model.safetensors";
    return e;
  }
  return weights;
}

}  // namespace mlasim
