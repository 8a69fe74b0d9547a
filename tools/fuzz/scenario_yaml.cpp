// The scenario YAML writer (schema version 1, scenarios/README.md).
#include "tools/fuzz/scenario_yaml.h"

#include <filesystem>

#include "sim/hf_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "sim/scheduler_rules.h"

namespace mlasim {
namespace {

// A double-quoted YAML string (ids have no control characters; the loader refuses them).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

template <class T>
std::string list(const std::vector<T>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

// "{a: 1, b: 2}" from the pieces, or "" when there are none.
std::string flow(const std::vector<std::string>& pieces) {
  return pieces.empty() ? "" : fmt::format("{{{}}}", fmt::join(pieces, ", "));
}

std::string model_section(const ModelConfig& m) {
  ModelConfig p = model_preset(m.preset).value_or(ModelConfig{});
  std::vector<std::string> out{"preset: " + m.preset};
  if (!m.hf_config.empty()) {  // the config.json as the base (absolute: the YAML may land anywhere)
    p = *model_preset("tiny");
    (void)read_hf_config(m.hf_config, p);
    out = {fmt::format("hf_config: \"{}\"", std::filesystem::absolute(m.hf_config).string())};
  }
  auto i = [&](const char* key, int a, int b) {
    if (a != b) out.push_back(fmt::format("{}: {}", key, a));
  };
  auto d = [&](const char* key, double a, double b) {
    if (a != b) out.push_back(fmt::format("{}: {}", key, a));
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
  if (m.seed != p.seed) out.push_back(fmt::format("seed: {}", m.seed));
  if (m.dtype != p.dtype) out.push_back(fmt::format("dtype: {}", to_string(m.dtype)));
  i("eos_token_id", m.eos_token_id, p.eos_token_id);
  if (m.index_topk) out.push_back(fmt::format("index_topk: {}", *m.index_topk));
  return flow(out);
}

std::string scheduler_section(const Scenario& s) {
  const SchedulerConfig& c = s.scheduler;
  const SchedulerConfig d;
  std::vector<std::string> out;
  auto i = [&](const char* key, long long a, long long b) {
    if (a != b) out.push_back(fmt::format("{}: {}", key, a));
  };
  auto b = [&](const char* key, bool a, bool def) {
    if (a != def) out.push_back(fmt::format("{}: {}", key, a ? "true" : "false"));
  };
  i("max_num_batched_tokens", c.max_num_batched_tokens, d.max_num_batched_tokens);
  i("max_num_seqs", c.max_num_seqs, d.max_num_seqs);
  i("max_model_len", c.max_model_len, s.model.max_position_embeddings);
  b("enable_chunked_prefill", c.enable_chunked_prefill, d.enable_chunked_prefill);
  i("long_prefill_token_threshold", c.long_prefill_token_threshold, d.long_prefill_token_threshold);
  // Always written: left out, vLLM 0.33's auto choice for the backend would replace it.
  out.push_back(fmt::format("block_size: {}", c.block_size));
  i("num_gpu_blocks", c.num_gpu_blocks, d.num_gpu_blocks);
  b("enable_prefix_caching", c.enable_prefix_caching, d.enable_prefix_caching);
  if (c.policy != d.policy) out.push_back(fmt::format("policy: {}", to_string(c.policy)));
  i("num_speculative_tokens", c.num_speculative_tokens, d.num_speculative_tokens);
  if (c.speculative_method != d.speculative_method)
    out.push_back(fmt::format("speculative_method: {}", to_string(c.speculative_method)));
  b("scheduler_reserve_full_isl", c.rules.scheduler_reserve_full_isl,
    scheduler_rules_for(s.engine.profile).scheduler_reserve_full_isl);
  return flow(out);
}

std::string engine_section(const Scenario& s) {
  const EngineConfig& e = s.engine;
  std::vector<std::string> out{fmt::format("profile: {}", to_string(e.profile))};
  if (s.deployment.gpu_given) out.push_back(fmt::format("gpu: {}", gpu_info(s.deployment.gpu).name));
  out.push_back(fmt::format("attention_backend: {}", to_string(e.attention_backend)));
  if (e.reorder_batch_threshold) out.push_back(fmt::format("reorder_batch_threshold: {}", *e.reorder_batch_threshold));
  if (e.query_len_support) out.push_back(fmt::format("query_len_support: {}", to_string(*e.query_len_support)));
  // Always written for vLLM 0.33's profiles: left out, it would be auto (V2).
  if (e.profile == EngineProfile::kVllm033 || e.profile == EngineProfile::kStrict || e.model_runner != ModelRunner::kV1)
    out.push_back(fmt::format("model_runner: {}", to_string(e.model_runner)));
  if (e.sglang_chunked_prefix_cache_threshold != EngineConfig{}.sglang_chunked_prefix_cache_threshold)
    out.push_back(fmt::format("sglang_chunked_prefix_cache_threshold: {}", e.sglang_chunked_prefix_cache_threshold));
  return flow(out);
}

std::string timing_section(const TimingConfig& t) {
  const TimingConfig d;
  std::vector<std::string> out;
  for (auto [key, a, b] : {std::tuple{"fixed_us", t.fixed_us, d.fixed_us},
                           std::tuple{"per_scheduled_token_us", t.per_scheduled_token_us, d.per_scheduled_token_us},
                           std::tuple{"per_context_token_us", t.per_context_token_us, d.per_context_token_us},
                           std::tuple{"per_request_us", t.per_request_us, d.per_request_us}})
    if (a != b) out.push_back(fmt::format("{}: {}", key, a));
  return flow(out);
}

std::string request_line(const RequestSpec& r, const Scenario& s) {
  std::vector<std::string> out{"id: " + quoted(r.id)};
  if (r.arrival_time_ns)
    out.push_back(fmt::format("arrival_time: {}", static_cast<double>(*r.arrival_time_ns) / 1e9));
  else if (r.arrival_step != 0)
    out.push_back(fmt::format("arrival_step: {}", r.arrival_step));
  out.push_back("prompt: " + list(r.prompt));
  out.push_back(fmt::format("max_tokens: {}", r.max_tokens));
  if (r.min_tokens != 0) out.push_back(fmt::format("min_tokens: {}", r.min_tokens));
  if (r.ignore_eos) out.push_back("ignore_eos: true");
  if (!r.stop_token_ids.empty()) out.push_back("stop_token_ids: " + list(r.stop_token_ids));
  if (r.output_given) out.push_back("output: " + list(r.output));
  if (r.priority != 0) out.push_back(fmt::format("priority: {}", r.priority));
  if (!r.accepted_drafts.empty() && s.scheduler.num_speculative_tokens > 0)
    out.push_back("accepted_drafts: " + list(r.accepted_drafts));
  return "  - " + flow(out) + "\n";
}

}  // namespace

std::string scenario_to_yaml(const Scenario& s, const std::string& comment) {
  std::string y = "# " + comment + "\nversion: 1\n";
  y += "name: " + quoted(s.name) + "\n";
  if (!s.description.empty()) y += "description: " + quoted(s.description) + "\n";
  y += "model: " + model_section(s.model) + "\n";
  if (std::string sc = scheduler_section(s); !sc.empty()) y += "scheduler: " + sc + "\n";
  y += "engine: " + engine_section(s) + "\n";
  if (s.deployment.kv_cache_dtype != KvCacheDtype::kAuto)
    y += fmt::format("cache: {{kv_cache_dtype: {}}}\n", to_string(s.deployment.kv_cache_dtype));
  if (s.parallel.tensor_parallel_size != 1)
    y += fmt::format("parallel: {{tensor_parallel_size: {}}}\n", s.parallel.tensor_parallel_size);
  if (std::string t = timing_section(s.timing); !t.empty()) y += "timing: " + t + "\n";
  y += "requests:\n";
  for (const RequestSpec& r : s.requests) y += request_line(r, s);
  if (!s.expect.invariants.empty()) y += "expect:\n  invariants: " + list(s.expect.invariants) + "\n";
  return y;
}

}  // namespace mlasim
