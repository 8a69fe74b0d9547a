// Prints the resolved scenario (every default filled in) so a user sees what will be replayed.
#include "output/scenario_printer.h"

#include <fmt/format.h>

#include "attention/routing_config.h"
#include "config/request_tokens.h"
#include "scenario/kv_cache_groups.h"
#include "scenario/scenario_keys.h"

namespace mlasim {
namespace {

constexpr std::size_t kRequestsListedInFull = 50;
constexpr std::size_t kRequestsListedHead = 20;

}  // namespace
namespace {

std::string token_preview(const std::vector<int>& ids, std::size_t max_shown = 8) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size() && i < max_shown; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > max_shown) out += fmt::format(", ... ({} in all)", ids.size());
  return out + "]";
}

}  // namespace

std::string describe_scenario(const Scenario& s) {
  std::string out;
  const ModelConfig& m = s.model;
  const SchedulerConfig& sc = s.scheduler;
  const EngineConfig& e = s.engine;
  out += fmt::format("scenario {} ({})\n", s.name, s.source);
  if (!s.description.empty()) out += fmt::format("  {}\n", s.description);
  out += fmt::format(
      "model: {} vocab={} d={} layers={} H={} q_lora_rank={} kv_lora_rank={} qk_nope={} qk_rope={} v={} mlp={} "
      "dtype={} seed={} eos={}{}\n",
      m.preset, m.vocab_size, m.hidden_size, m.num_hidden_layers, m.num_attention_heads, m.q_lora_rank,
      m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim, m.intermediate_size, to_string(m.dtype),
      m.seed, m.eos_token_id, m.index_topk ? fmt::format(" index_topk={} (sparse MLA)", *m.index_topk) : "");
  out += "scheduler: " + printed_section(s, "scheduler") + "\n";  // scenario/scenario_keys.h
  // The threshold and support the replay routes with (make_routing_config: the deployment's
  // builder, speculation, overrides).
  const RoutingConfig rc = make_routing_config(s);
  const DeploymentConfig& d = s.deployment;
  out += fmt::format("engine: profile={} backend={}{} decode_threshold={}{} query_len_support={} model_runner={}{}\n",
                     to_string(e.profile), to_string(e.attention_backend),
                     d.selection_applies && !e.attention_backend_given ? " (auto)" : "", rc.decode_threshold,
                     e.reorder_batch_threshold ? " (override)" : "", to_string(rc.query_len_support),
                     to_string(e.model_runner), d.selection_applies && !e.model_runner_given ? " (auto)" : "");
  out += fmt::format("deployment: gpu={}{} kv_cache_dtype={}{} block_size={}{} kernel_block_size={}\n",
                     gpu_info(d.gpu).name, d.gpu_given ? "" : " (default)", to_string(d.effective_kv_cache_dtype),
                     d.effective_kv_cache_dtype != d.kv_cache_dtype ? fmt::format(" (from {})", to_string(d.kv_cache_dtype)) : "",
                     sc.block_size, sc.block_size_given ? "" : (d.selection_applies ? " (auto)" : " (default)"),
                     d.selection.kernel_block_size);
  if (!m.hf_config.empty())
    out += fmt::format("model config: {} ({}, model_type {}){}\n", m.hf_config, m.architecture, m.model_type,
                       m.config_num_hidden_layers > 0
                           ? fmt::format("; running {} of its {} layers (model.num_layers)", m.num_hidden_layers,
                                         m.config_num_hidden_layers)
                           : "");
  if (sc.kv_cache_layout.hybrid()) out += describe_kv_cache_layout(sc.kv_cache_layout) + "\n";
  out += fmt::format("parallel: tensor_parallel_size={}\n", s.parallel.tensor_parallel_size);
  if (!s.requests_file.empty()) {
    out += fmt::format("requests: {} from {} (arriving by {})\n", s.num_requests, s.requests_file,
                       s.timed_arrivals ? "arrival_time" : "arrival_step");
  } else {
    out += fmt::format("requests ({}):\n", s.requests.size());
  }
  // A long inline list is shown by its head (the scenario file has the rest).
  const std::size_t shown = s.requests.size() <= kRequestsListedInFull ? s.requests.size() : kRequestsListedHead;
  for (std::size_t i = 0; i < shown; ++i) {
    const RequestSpec& r = s.requests[i];
    const std::string arrival = r.arrival_time_ns ? fmt::format("arrival_time={:.6f}", static_cast<double>(*r.arrival_time_ns) * 1e-9)
                                                  : fmt::format("arrival_step={}", r.arrival_step);
    out += fmt::format("  {:<10} {} prompt_len={} max_tokens={} min_tokens={}{}{}{} prompt={}\n", r.id, arrival,
                       prompt_len(r), r.max_tokens, r.min_tokens, r.ignore_eos ? " ignore_eos" : "",
                       r.priority != 0 ? fmt::format(" priority={}", r.priority) : "",
                       r.stop_token_ids.empty() ? "" : " stop=" + token_preview(r.stop_token_ids),
                       token_preview(prompt_tokens(r, s)));
  }
  if (shown < s.requests.size()) out += fmt::format("  ... and {} more\n", s.requests.size() - shown);
  if (!s.expect.steps.empty() || !s.expect.requests.empty() || !s.expect.invariants.empty() || s.expect.num_steps)
    out += fmt::format("expect: {} step entries, {} request entries, {} invariants\n", s.expect.steps.size(),
                       s.expect.requests.size(), s.expect.invariants.size());
  return out;
}

}  // namespace mlasim
