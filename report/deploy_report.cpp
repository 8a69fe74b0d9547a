// The deployment scenario, its dry replay and the report of `mlasim deploy`.
#include "report/deploy_report.h"

#include <fmt/format.h>

#include "sim/scenario_deployment.h"
#include "sim/scenario_loader.h"
#include "report/json_writer.h"
#include "engine/replay.h"

namespace mlasim {
namespace {

// The probes' requests: arrival steps chosen so each situation happens alone in its step.
struct ProbeSpec {
  const char* name;
  const char* id;
  int arrival_step;
  int prompt_len;
  int max_tokens;
};

std::vector<ProbeSpec> probe_specs(int k) {
  std::vector<ProbeSpec> specs{
      {"lone 1-token prompt", "lone_1_token", 0, 1, 1},
      {"lone 5-token prompt", "lone_5_tokens", 1, 5, 1},
      {"decode in flight", "decoder", 2, 10, 6},
      {"1-token prompt behind a decode", "behind_decode_1_token", 3, 1, 1},
  };
  if (k > 0) specs.push_back({"short fresh prompt (1 + k tokens)", "short_fresh", 12, 1 + k, 1});
  return specs;
}

}  // namespace

std::string deployment_scenario_yaml(const DeployOptions& o, const std::string& hf_config_ref) {
  std::string y;
  y += "# vLLM 0.33.0 serving " + hf_config_ref + " on " + o.gpu + " x" + std::to_string(o.tensor_parallel_size) +
       " (TP " + std::to_string(o.tensor_parallel_size) + "), kv_cache_dtype " + o.kv_cache_dtype +
       ": written by `mlasim deploy`.\n";
  y += "# Its requests are the misrouting report's probes. The model keeps the config's attention\n"
       "# geometry (what routing reads) and runs one layer with a shrunk vocabulary and MLP on the CPU.\n";
  y += "version: 1\n";
  y += "model: {hf_config: \"" + hf_config_ref + "\", num_layers: 1, vocab_size: 4096, intermediate_size: 2048, "
       "eos_token_id: 1}\n";
  y += "scheduler: {max_num_batched_tokens: 2048, max_num_seqs: 16, max_model_len: 4096, num_gpu_blocks: 512";
  if (o.block_size) y += ", block_size: " + std::to_string(*o.block_size);
  if (o.num_speculative_tokens > 0) y += ", num_speculative_tokens: " + std::to_string(o.num_speculative_tokens);
  y += "}\n";
  y += "engine: {profile: vllm-0.33, gpu: " + o.gpu + ", attention_backend: " + o.attention_backend + "}\n";
  y += "cache: {kv_cache_dtype: " + o.kv_cache_dtype + "}\n";
  y += "parallel: {tensor_parallel_size: " + std::to_string(o.tensor_parallel_size) + "}\n";
  y += "requests:\n";
  for (const ProbeSpec& p : probe_specs(o.num_speculative_tokens))
    y += fmt::format("  - {{id: {}, arrival_step: {}, prompt_len: {}, max_tokens: {}, ignore_eos: true}}  # {}\n",
                     p.id, p.arrival_step, p.prompt_len, p.max_tokens, p.name);
  return y;
}

Result<DeployReport> evaluate_deployment(const DeployOptions& o, const std::string& yaml,
                                         const std::string& display_name) {
  auto loaded = load_scenario_text(yaml, display_name);
  if (!loaded) return loaded.error();
  DeployReport report;
  report.scenario = std::move(loaded).value();
  ReplayOptions ro;
  ro.with_model = false;
  const RunRecord run = replay(report.scenario, ro);
  for (const ProbeSpec& p : probe_specs(o.num_speculative_tokens)) {
    if (std::string(p.id) == "decoder") continue;  // the backdrop of the next probe
    for (const StepRecord& step : run.steps) {
      const RowRecord* row = nullptr;
      for (const RowRecord& r : step.rows)
        if (r.id == p.id) row = &r;
      if (!row) continue;
      DeployProbe d;
      d.name = p.name;
      d.id = p.id;
      d.step = step.step;
      d.q = row->q;
      d.nct = row->nct;
      d.prompt_len = row->prompt_len;
      d.decode_path = row->path == "mqa";
      d.fresh_on_decode_path = row->fresh_on_decode_path;
      d.num_mqa = step.counts.num_mqa_tokens;
      d.num_mha = step.counts.num_mha_tokens;
      report.probes.push_back(d);
      break;
    }
  }
  return report;
}

std::string probe_expectations_yaml(const DeployReport& r) {
  std::string y = "expect:\n  steps:  # the probes as vLLM 0.33 would log them\n";
  for (const DeployProbe& p : r.probes)
    y += fmt::format("    - {{step: {}, num_mqa_tokens: {}, num_mha_tokens: {}}}  # {}: {} path\n", p.step, p.num_mqa,
                     p.num_mha, p.name, p.decode_path ? "decode" : "prefill");
  return y;
}

std::string deploy_report_text(const DeployReport& r) {
  std::string out = explain_deployment(r.scenario);
  out += "probes (a dry replay of the deployment's scenario; the step's totals as vLLM logs them):\n";
  for (const DeployProbe& p : r.probes) {
    out += fmt::format("  {:<36} step {}: q={} nct={} → {} path ({}){}  num_mqa={} num_mha={}\n", p.name, p.step, p.q,
                       p.nct, p.decode_path ? "decode" : "prefill", p.decode_path ? "MQA, absorbed" : "MHA",
                       p.fresh_on_decode_path ? ", a fresh prefill on the decode path" : "", p.num_mqa, p.num_mha);
  }
  return out;
}

std::string deploy_report_json(const DeployReport& r) {
  const Scenario& s = r.scenario;
  const ModelConfig& m = s.model;
  const DeploymentConfig& d = s.deployment;
  const BackendSelection& sel = d.selection;
  const GpuInfo& gpu = gpu_info(d.gpu);
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-deploy");
  w.key("version").value(1);
  w.key("hf_config").value(m.hf_config);
  w.key("architecture").value(m.architecture);
  w.key("model_type").value(m.model_type);
  w.key("use_mla").value(true);
  w.key("sparse").value(m.index_topk.has_value());
  w.key("gpu").value(gpu.name);
  w.key("compute_capability").value(gpu.vendor == GpuVendor::kNvidia ? fmt::format("{}.{}", gpu.major, gpu.minor)
                                                                     : std::string(gpu.gcn_arch));
  w.key("kv_cache_dtype").value(to_string(d.effective_kv_cache_dtype));
  w.key("kv_cache_dtype_given").value(to_string(d.kv_cache_dtype));
  w.key("tensor_parallel_size").value(s.parallel.tensor_parallel_size);
  w.key("num_heads_per_rank").value(m.num_attention_heads / s.parallel.tensor_parallel_size);
  w.key("head_size").value(m.kv_lora_rank + m.qk_rope_head_dim);
  w.key("num_speculative_tokens").value(s.scheduler.num_speculative_tokens);
  w.key("candidates").begin_array();
  for (const auto& c : sel.candidates) {
    w.begin_object();
    w.key("name").value(vllm_backend_name(c.kind));
    w.key("valid").value(c.reasons.empty());
    w.key("reasons").begin_array();
    for (const auto& reason : c.reasons) w.value(reason);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("backend").value(vllm_backend_name(sel.backend));
  w.key("backend_scenario_name").value(to_string(sel.backend));
  w.key("block_size").value(sel.block_size);
  w.key("block_size_auto").value(sel.block_size_auto);
  w.key("kernel_block_size").value(sel.kernel_block_size);
  w.key("reorder_threshold").value(sel.builder.reorder_batch_threshold);
  w.key("query_len_support").value(to_string(sel.builder.query_len_support));
  w.key("require_uniform").value(sel.builder.require_uniform);
  w.key("model_runner").value(to_string(sel.model_runner));
  w.key("warnings").begin_array();
  for (const auto& x : sel.warnings) w.value(x);
  w.end_array();
  w.key("probes").begin_array();
  for (const DeployProbe& p : r.probes) {
    w.begin_object();
    w.key("name").value(p.name);
    w.key("id").value(p.id);
    w.key("step").value(p.step);
    w.key("q").value(p.q);
    w.key("nct").value(p.nct);
    w.key("prompt_len").value(p.prompt_len);
    w.key("path").value(p.decode_path ? "decode" : "prefill");
    w.key("fresh_on_decode_path").value(p.fresh_on_decode_path);
    w.key("num_mqa").value(p.num_mqa);
    w.key("num_mha").value(p.num_mha);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace mlasim
