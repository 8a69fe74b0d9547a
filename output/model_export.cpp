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

std::string hf_config_json(const ModelConfig& m) {
  JsonWriter w;
  w.begin_object();
  w.key("architectures").begin_array().value("DeepseekV3ForCausalLM").end_array();
  w.key("model_type").value("deepseek_v3");
  w.key("vocab_size").value(m.vocab_size);
  w.key("hidden_size").value(m.hidden_size);
  w.key("intermediate_size").value(m.intermediate_size);
  w.key("moe_intermediate_size").value(m.intermediate_size);
  w.key("num_hidden_layers").value(m.num_hidden_layers);
  w.key("first_k_dense_replace").value(m.num_hidden_layers);  // every layer has a dense MLP
  w.key("n_routed_experts").value(1);
  w.key("n_shared_experts").value(1);
  w.key("num_experts_per_tok").value(1);
  w.key("n_group").value(1);
  w.key("topk_group").value(1);
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
  w.key("rope_interleave").value(true);
  w.key("attention_bias").value(false);
  w.key("tie_word_embeddings").value(false);
  w.key("bos_token_id").value(0);
  w.key("eos_token_id").value(m.eos_token_id);
  if (m.index_topk) w.key("index_topk").value(*m.index_topk);
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
