// The deployment scenario, its dry replay and the report of `mlasim deploy`.
#include "deploy/deploy_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "config/scenario_deployment.h"
#include "scenario/scenario_keys.h"
#include "scenario/scenario_loader.h"
#include "scenario/yaml_document.h"
#include "base/formats/json_writer.h"
#include "engine/replay.h"
#include "deploy/kv_cache_report.h"

namespace mlasim {
namespace {

// The scenario keys deployment_scenario_yaml sets from flags.
constexpr std::pair<const char*, const char*> kKeyFlags[] = {
    {"engine.attention_backend", "--attention-backend"},
    {"engine.gpu", "--gpu"},
    {"cache.kv_cache_dtype", "--kv-cache-dtype"},
    {"scheduler.block_size", "--block-size"},
    {"scheduler.num_speculative_tokens", "--spec-tokens"},
    {"scheduler.max_model_len", "--max-model-len"},
    {"parallel.tensor_parallel_size", "--tp"},
    {"model.hf_config", "--hf-config"},
    {"model.max_position_embeddings", "the config's max_position_embeddings"},
    {"model.num_attention_heads", "the config's num_attention_heads"},
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// An error of the generated scenario as `mlasim deploy`'s own: no file, line or column (there is
// no such file), the key as the flag that set it, and flags in the message and hint.
Error deploy_error(Error e, const std::string& display_name) {
  const std::string config_prefix = "model.hf_config: ";
  if (e.key_path.rfind(config_prefix, 0) == 0) e.key_path.erase(0, config_prefix.size());  // the file is named
  if (e.file != display_name) return e;
  e.file = "mlasim deploy";
  e.line = e.column = 0;
  std::string key;
  for (const auto& [scenario_key, flag] : kKeyFlags)
    if (e.key_path == scenario_key && flag[0] == '-') key = flag;
  if (e.key_path.rfind("requests[", 0) == 0) {  // a probe: only a short max_model_len refuses one
    key = "--max-model-len";
    e.message = "the misrouting report's probes do not fit: " + e.message;
    e.hint = "give a longer --max-model-len (the probes' prompts need it; vLLM would take this one)";
  }
  e.key_path = key;
  for (const auto& [scenario_key, flag] : kKeyFlags) {
    replace_all(e.message, scenario_key, flag);
    replace_all(e.hint, scenario_key, flag);
  }
  return e;
}

// model_max_length as vLLM's message prints it: the config's value, or None.
std::string show_optional(const std::optional<double>& v, const std::string& shown) { return v ? shown : "None"; }

}  // namespace

bool vllm_allow_long_max_model_len() {
  const char* env = std::getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
  std::string v = env ? env : "0";
  v.erase(0, v.find_first_not_of(" \t\n\r\f\v"));
  v.erase(v.find_last_not_of(" \t\n\r\f\v") + 1);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "1" || v == "true";
}

Result<int> deploy_max_model_len(const HfDerivedMaxLen& d, std::optional<int> user, bool allow_long,
                                 std::string& warning) {
  // The longest max_model_len a scenario takes (scheduler.max_model_len, scenario_sections.cpp).
  constexpr double kMaxSimulatedLen = 1 << 24;
  if (!user && d.derived > kMaxSimulatedLen) {
    Error e;
    e.file = "mlasim deploy";
    e.key_path = "--max-model-len";
    e.message = fmt::format(
        "the max_model_len vLLM derives from the config ({}, from {} and its RoPE scaling factor) is more than "
        "mlasim simulates ({})",
        d.shown, d.key.empty() ? "the 2048 default" : d.key, static_cast<long long>(kMaxSimulatedLen));
    e.hint = fmt::format("give --max-model-len {} or less, or check the config's rope_scaling factor",
                         static_cast<long long>(kMaxSimulatedLen));
    return e;
  }
  if (!user) return static_cast<int>(d.derived);
  if (d.key.empty() || *user <= d.derived) return *user;  // no length in the config: vLLM takes the user's
  if (d.model_max_length && *user <= *d.model_max_length) return *user;
  // vllm/config/model.py ~2655-2685: the ValueError, or with the env var its warning.
  const std::string msg = fmt::format(
      "User-specified max_model_len ({}) is greater than the derived max_model_len ({}={} or model_max_length={} in "
      "model's config.json).",
      *user, d.key, d.shown, show_optional(d.model_max_length, d.model_max_length_shown));
  const std::string caution =
      "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position encoding "
      "(RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, "
      "positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error.";
  if (allow_long) {
    warning = msg + " " + caution;
    return *user;
  }
  Error e;
  e.file = "mlasim deploy";
  e.key_path = "--max-model-len";
  e.message = "vLLM 0.33 refuses it: " + msg + " To allow overriding this maximum, set the env var "
              "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. " + caution;
  e.hint = fmt::format("give --max-model-len {} or less ({} in the config, as vLLM derives it), or leave it out", static_cast<long long>(d.derived), d.key);
  return e;
}

std::string deployment_scenario_yaml(const DeployOptions& o, const std::string& hf_config_ref) {
  using V = YamlValue;
  const std::string tp = std::to_string(o.tensor_parallel_size);
  const std::string header =
      "vLLM 0.33.0 serving " + hf_config_ref + " on " + o.gpu + " x" + tp + " (TP " + tp + "), kv_cache_dtype " +
      o.kv_cache_dtype +
      ": written by `mlasim deploy`.\n"
      "Its requests are the misrouting report's probes. The model keeps the config's attention\n"
      "geometry (what routing reads) and runs one layer with a shrunk vocabulary and MLP on the CPU.";
  V doc = V::mapping(V::Style::kBlock);
  doc.set("version", V::number(1));
  V& model = doc.set("model", V::mapping(V::Style::kFlow));
  model.set("hf_config", V::quoted(hf_config_ref));
  using Keys = std::initializer_list<std::pair<const char*, int>>;
  for (auto [key, value] : Keys{{"num_layers", 1}, {"vocab_size", 4096}, {"intermediate_size", 2048}, {"eos_token_id", 1}})
    model.set(key, V::number(value));
  if (o.max_position_embeddings) model.set("max_position_embeddings", V::number(*o.max_position_embeddings));
  // The scheduler and parallel keys as a Scenario, written through the key table: the budgets of
  // `mlasim deploy`, and what the flags give (num_gpu_blocks unset: the smallest pool vLLM 0.33
  // starts with for max_model_len, or 8192). The engine and cache names are the flags' own text.
  Scenario d;
  SchedulerConfig& sc = d.scheduler;
  sc.max_num_batched_tokens = 2048;
  sc.max_num_seqs = 16;
  std::vector<const void*> given = {&sc.max_num_batched_tokens, &sc.max_num_seqs};
  if (o.max_model_len > 0) sc.max_model_len = o.max_model_len, given.push_back(&sc.max_model_len);
  if (o.block_size) sc.block_size = *o.block_size, given.push_back(&sc.block_size);
  if (o.num_speculative_tokens > 0)
    sc.num_speculative_tokens = o.num_speculative_tokens, given.push_back(&sc.num_speculative_tokens);
  doc.set("scheduler", keys_yaml(d, given));
  V& engine = doc.set("engine", keys_yaml(d, {&d.engine.profile}));  // vllm-0.33
  engine.set(key_of(d, &d.deployment.gpu).name, V::plain(o.gpu));
  engine.set(key_of(d, &d.engine.attention_backend).name, V::plain(o.attention_backend));
  const ScenarioKey& dtype = key_of(d, &d.deployment.kv_cache_dtype);
  doc.set(dtype.section, V::mapping(V::Style::kFlow)).set(dtype.name, V::plain(o.kv_cache_dtype));
  d.parallel.tensor_parallel_size = o.tensor_parallel_size;
  doc.set("parallel", keys_yaml(d, {&d.parallel.tensor_parallel_size}));
  doc.set("requests", probe_requests_yaml(o.num_speculative_tokens));
  return emit_yaml(doc, header);
}

Result<DeployReport> evaluate_deployment(const DeployOptions& o, const std::string& yaml,
                                         const std::string& display_name) {
  auto loaded = load_scenario_text(yaml, display_name);
  if (!loaded) return deploy_error(loaded.error(), display_name);
  DeployReport report;
  report.scenario = std::move(loaded).value();
  report.max_model_len_source = o.max_model_len_source;
  ReplayOptions ro;
  ro.with_model = false;
  const RunRecord run = replay(report.scenario, ro);
  report.probes = probe_results(run, o.num_speculative_tokens);
  return report;
}

std::string probe_expectations_yaml(const DeployReport& r) {
  using V = YamlValue;
  V doc = V::mapping(V::Style::kBlock);
  V& steps = doc.set("expect", V::mapping(V::Style::kBlock)).set("steps", V::sequence(V::Style::kBlock));
  steps.comment("the probes as vLLM 0.33 would log them");
  for (const ProbeResult& p : r.probes) {
    V step = V::mapping(V::Style::kFlow);
    step.set("step", V::number(p.step));
    step.set("num_mqa_tokens", V::number(p.num_mqa));
    step.set("num_mha_tokens", V::number(p.num_mha));
    steps.push(std::move(step)).comment(fmt::format("{}: {} path", p.name, p.decode_path ? "decode" : "prefill"));
  }
  return emit_yaml(doc);
}

std::string deploy_report_text(const DeployReport& r) {
  std::string out = explain_deployment(r.scenario);
  out += fmt::format("max_model_len: {} ({})\n", r.scenario.scheduler.max_model_len, r.max_model_len_source);
  out += kv_cache_groups_text(r.scenario);
  out += "probes (a dry replay of the deployment's scenario; the step's totals as vLLM logs them):\n";
  for (const ProbeResult& p : r.probes) {
    out += fmt::format("  {:<36} step {}: q={} nct={} → {} path ({}){}  num_mqa={} num_mha={}{}\n", p.name, p.step, p.q,
                       p.nct, p.decode_path ? "decode" : "prefill", p.decode_path ? "MQA, absorbed" : "MHA",
                       p.fresh_on_decode_path ? ", a fresh prefill on the decode path" : "", p.num_mqa, p.num_mha,
                       p.has_linear_attention ? format_linear_attention_counts(p.linear_attention) : "");
  }
  return out;
}

namespace {

// vLLM's candidates and the chosen backend's card, block sizes and runner.
void write_selection_json(JsonWriter& w, const Scenario& s, const BackendSelection& sel) {
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
  w.key(key_of(s, &s.scheduler.block_size).name).value(sel.block_size);
  w.key("block_size_auto").value(sel.block_size_auto);
  w.key("kernel_block_size").value(sel.kernel_block_size);
  w.key("reorder_threshold").value(sel.card.reorder_batch_threshold);
  w.key("query_len_support").value(to_string(sel.card.query_len_support));
  w.key("require_uniform").value(sel.card.require_uniform);
  w.key("model_runner").value(to_string(sel.model_runner));
  w.key("learnable_sink_applied").value(sel.learnable_sink_applied);
  w.key("sparse_mla_force_mqa").value(sel.sparse_mla_force_mqa);
  w.key("warnings").begin_array();
  for (const auto& x : sel.warnings) w.value(x);
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& x : sel.notes) w.value(x);
  w.end_array();
}

// A hybrid family's layers by how they route: each kind's layer count, backend, the split its
// builder makes, and whether any of its tokens can take the MHA form.
void write_layer_kinds_json(JsonWriter& w, const Scenario& s) {
  const ModelConfig& m = s.model;
  if (m.attention_layers.empty()) return;
  const BackendCard& b = s.deployment.selection.card;
  struct Kind {
    const char* name;
    int num_layers;
    const char* backend;
    const char* split;
    bool mha_form;
  };
  std::vector<Kind> kinds;
  auto count = [&](auto pred) {
    int n = 0;
    for (const AttentionLayerPlan& l : m.attention_layers) n += pred(l);
    return n;
  };
  if (is_deepseek_v4_backend(b.kind)) {
    for (const auto& [ratio, name] : std::initializer_list<std::pair<int, const char*>>{
             {1, "sliding_window"}, {4, "compressed_4"}, {128, "compressed_128"}})
      if (const int n = count([r = ratio](const AttentionLayerPlan& l) { return l.compress_ratio == r; }); n > 0)
        kinds.push_back({name, n, b.vllm_name, "deepseek_v4_swa", false});
  } else {
    const int mla = count([](const AttentionLayerPlan& l) { return l.kind != AttentionLayerKind::kLinear; });
    kinds.push_back({"mla", mla, b.vllm_name, "mla", !m.index_topk || b.dense_mha_prefill});
    if (const int n = static_cast<int>(m.attention_layers.size()) - mla; n > 0)
      kinds.push_back({"linear_attention", n, "GDN_ATTN", "gdn", false});
  }
  w.key("layer_kinds").begin_array();
  for (const Kind& k : kinds) {
    w.begin_object();
    w.key("kind").value(k.name);
    w.key("num_layers").value(k.num_layers);
    w.key("backend").value(k.backend);
    w.key("split").value(k.split);
    w.key("mha_form").value(k.mha_form);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string deploy_report_json(const DeployReport& r) {
  const Scenario& s = r.scenario;
  const ModelConfig& m = s.model;
  const DeploymentConfig& d = s.deployment;
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
  w.key(key_of(s, &d.kv_cache_dtype).name).value(to_string(d.effective_kv_cache_dtype));
  w.key("kv_cache_dtype_given").value(to_string(d.kv_cache_dtype));
  w.key("tensor_parallel_size").value(s.parallel.tensor_parallel_size);
  w.key("num_heads_per_rank").value(m.num_attention_heads / s.parallel.tensor_parallel_size);
  w.key("head_size").value(m.kv_lora_rank + m.qk_rope_head_dim);
  for (const void* member : {&s.scheduler.num_speculative_tokens, &s.scheduler.max_model_len})
    w.key(key_of(s, member).name).value(*static_cast<const int*>(member));
  write_selection_json(w, s, d.selection);
  write_kv_cache_groups_json(w, s);
  write_layer_kinds_json(w, s);
  w.key("probes").begin_array();
  for (const ProbeResult& p : r.probes) {
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
    if (p.has_linear_attention) write_linear_attention_json(w, p.linear_attention);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace mlasim
