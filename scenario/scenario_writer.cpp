// A Scenario as scenario YAML (schema version 1, scenarios/README.md).
#include "scenario/scenario_writer.h"

#include <filesystem>
#include <vector>

#include "scenario/hf_config.h"
#include "scenario/kv_cache_groups.h"
#include "config/request_tokens.h"
#include "scenario/scenario_keys.h"

namespace mlasim {
namespace {

using Style = YamlValue::Style;

YamlValue flow_map() { return YamlValue::mapping(Style::kFlow); }

YamlValue model_section(const ModelConfig& m) {
  ModelConfig p = model_preset(m.preset).value_or(ModelConfig{});
  YamlValue out = flow_map();
  if (!m.hf_config.empty()) {  // the config.json as the base (absolute: the YAML may land anywhere)
    p = *model_preset("tiny");
    (void)read_hf_config(m.hf_config, p);
    out.set("hf_config", YamlValue::quoted(std::filesystem::absolute(m.hf_config).string()));
  } else {
    out.set("preset", YamlValue::plain(m.preset));
  }
  auto i = [&](const char* key, int a, int b) {
    if (a != b) out.set(key, YamlValue::number(a));
  };
  auto d = [&](const char* key, double a, double b) {
    if (a != b) out.set(key, YamlValue::number(a));
  };
  i("vocab_size", m.vocab_size, p.vocab_size);
  i("hidden_size", m.hidden_size, p.hidden_size);
  i("num_hidden_layers", m.num_hidden_layers, p.num_hidden_layers);
  i("num_attention_heads", m.num_attention_heads, p.num_attention_heads);
  i("q_lora_rank", m.q_lora_rank, p.q_lora_rank);
  i("kv_lora_rank", m.kv_lora_rank, p.kv_lora_rank);
  i("qk_nope_head_dim", m.qk_nope_head_dim, p.qk_nope_head_dim);
  i("qk_rope_head_dim", m.qk_rope_head_dim, p.qk_rope_head_dim);
  i("v_head_dim", m.v_head_dim, p.v_head_dim);
  i("intermediate_size", m.intermediate_size, p.intermediate_size);
  i("max_position_embeddings", m.max_position_embeddings, p.max_position_embeddings);
  d("rms_norm_eps", m.rms_norm_eps, p.rms_norm_eps);
  d("rope_theta", m.rope_theta, p.rope_theta);
  d("rope_scaling_factor", m.rope_scaling_factor, p.rope_scaling_factor);
  d("mscale_all_dim", m.mscale_all_dim, p.mscale_all_dim);
  i("original_max_position_embeddings", m.original_max_position_embeddings, p.original_max_position_embeddings);
  d("beta_fast", m.beta_fast, p.beta_fast);
  d("beta_slow", m.beta_slow, p.beta_slow);
  if (m.seed != p.seed) out.set("seed", YamlValue::number(m.seed));
  if (m.dtype != p.dtype) out.set("dtype", YamlValue::plain(to_string(m.dtype)));
  i("eos_token_id", m.eos_token_id, p.eos_token_id);
  if (m.index_topk) out.set("index_topk", YamlValue::number(*m.index_topk));
  i("index_n_heads", m.index_n_heads, p.index_n_heads);
  i("index_head_dim", m.index_head_dim, p.index_head_dim);
  return out;
}

// The prompt as it was given: token ids, or a length (with its hash ids) for seeded ids.
void prompt_keys(const RequestSpec& r, YamlValue& out) {
  if (!r.prompt.empty() || r.seeded_prompt_len == 0) {
    out.set("prompt", YamlValue::list(r.prompt));
    return;
  }
  out.set("prompt_len", YamlValue::number(r.seeded_prompt_len));
  if (r.prompt_hash_ids.empty()) return;
  out.set("prompt_hash_ids", YamlValue::list(r.prompt_hash_ids));
  if (r.prompt_hash_block_size != kDefaultPromptHashBlockSize)
    out.set("prompt_hash_block_size", YamlValue::number(r.prompt_hash_block_size));
}

YamlValue request_entry(const RequestSpec& r, const Scenario& s) {
  YamlValue out = flow_map();
  out.set("id", YamlValue::quoted(r.id));
  if (r.arrival_time_ns)
    out.set("arrival_time", YamlValue::number(static_cast<double>(*r.arrival_time_ns) / 1e9));
  else if (r.arrival_step != 0)
    out.set("arrival_step", YamlValue::number(r.arrival_step));
  prompt_keys(r, out);
  out.set("max_tokens", YamlValue::number(r.max_tokens));
  if (r.min_tokens != 0) out.set("min_tokens", YamlValue::number(r.min_tokens));
  if (r.ignore_eos) out.set("ignore_eos", YamlValue::boolean(true));
  if (!r.stop_token_ids.empty()) out.set("stop_token_ids", YamlValue::list(r.stop_token_ids));
  if (r.output_given) out.set("output", YamlValue::list(r.output));
  if (r.priority != 0) out.set("priority", YamlValue::number(r.priority));
  if (!r.accepted_drafts.empty() && s.scheduler.num_speculative_tokens > 0)
    out.set("accepted_drafts", YamlValue::list(r.accepted_drafts));
  return out;
}

}  // namespace

YamlValue scenario_document(const Scenario& s) {
  YamlValue doc = YamlValue::mapping(Style::kBlock);
  doc.set("version", YamlValue::number(1));
  doc.set("name", YamlValue::quoted(s.name));
  if (!s.description.empty()) doc.set("description", YamlValue::quoted(s.description));
  doc.set("model", model_section(s.model));
  // The table's sections (scenario/scenario_keys.h), each when it holds a key to write.
  for (const std::string& section : key_sections()) {
    YamlValue keys = section_yaml(s, section);
    if (section == "cache" && s.scheduler.kv_cache_groups_listed) {  // a block mapping around the list
      YamlValue block = YamlValue::mapping(YamlValue::Style::kBlock);
      for (const auto& [key, value] : keys.entries()) block.set(key, value);
      block.set("kv_cache_groups", kv_cache_groups_yaml(s));
      if (const int ri = s.scheduler.kv_cache_layout.prefix_cache_retention_interval; ri != 0)
        block.set("prefix_cache_retention_interval", ri == kDenseRetention ? YamlValue::plain("dense") : YamlValue::number(ri));
      keys = std::move(block);
    }
    if (!keys.empty()) doc.set(section, std::move(keys));
  }
  YamlValue& requests = doc.set("requests", YamlValue::sequence(Style::kBlock));
  for (const RequestSpec& r : s.requests) requests.push(request_entry(r, s));
  if (!s.expect.invariants.empty()) {
    YamlValue invariants = YamlValue::sequence(Style::kFlow);
    for (const std::string& name : s.expect.invariants) invariants.push(YamlValue::plain(name));
    doc.set("expect", YamlValue::mapping(Style::kBlock)).set("invariants", std::move(invariants));
  }
  return doc;
}

std::string scenario_to_yaml(const Scenario& s, const std::string& comment) {
  return emit_yaml(scenario_document(s), comment);
}

}  // namespace mlasim
