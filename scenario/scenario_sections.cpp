// The model, scheduler, engine, parallel and requests sections of a scenario.
#include "scenario/scenario_sections.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>

#include <filesystem>

#include "scenario/hf_config.h"
#include "scenario/kv_cache_groups.h"
#include "scenario/request_reader.h"
#include "scenario/scenario_keys.h"
#include "config/request_tokens.h"
#include "config/seeded_tokens.h"

namespace mlasim {
namespace {

std::string show_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

template <typename T, typename Parse>
T read_enum(const YamlReader& r, const YamlNode& node, const std::string& path, Parse parse,
            const std::vector<std::string>& names, const char* what) {
  std::string s = r.read_string(node, path);
  auto v = parse(s);
  if (!v) r.fail(node, path, std::string("unknown ") + what + " \"" + s + "\"", "choose one of: " + names_list(names));
  return *v;
}

}  // namespace

void read_model_section(const YamlReader& r, const YamlNode& node, ModelConfig& out) {
  const std::string p = "model";
  r.expect_map(node, p,
               {"preset", "hf_config", "num_layers", "seed", "dtype", "eos_token_id", "index_topk", "index_n_heads",
                "index_head_dim", "vocab_size", "hidden_size",
                "num_hidden_layers", "num_attention_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                "qk_rope_head_dim", "v_head_dim", "intermediate_size", "max_position_embeddings", "rms_norm_eps",
                "rope_theta", "rope_scaling_factor", "mscale_all_dim", "original_max_position_embeddings",
                "beta_fast", "beta_slow"});
  std::string preset = "tiny";
  if (node["preset"]) preset = r.read_string(node["preset"], p + ".preset");
  auto base = model_preset(preset);
  if (!base)
    r.fail(node["preset"], p + ".preset", "unknown model preset \"" + preset + "\"",
           "choose one of: " + names_list(model_preset_names()));
  out = *base;
  if (node["hf_config"]) {
    // A Hugging Face config.json (relative to the scenario) replaces the preset; the keys below
    // override it (scenarios/README.md lists which).
    if (node["preset"])
      r.fail(node["preset"], p + ".preset", "both `preset` and `hf_config`",
             "a model comes from a preset or from a config.json, not both");
    const std::string file = r.read_string(node["hf_config"], p + ".hf_config");
    if (file.empty()) r.fail(node["hf_config"], p + ".hf_config", "must not be empty");
    const std::filesystem::path rel(file);
    const std::string path =
        rel.is_absolute() ? file : (std::filesystem::path(r.file()).parent_path() / rel).string();
    out.preset = "";
    if (Status st = read_hf_config(path, out); !st) {
      Error e = st.error();
      if (e.line == 0) {  // unreadable: point at the key that names it
        Error at = r.error_at(node["hf_config"], p + ".hf_config", e.message + ": " + path,
                              e.hint + " (hf_config is relative to the scenario file)");
        throw LoadError{at};
      }
      e.key_path = e.key_path.empty() ? "model.hf_config" : "model.hf_config: " + e.key_path;
      throw LoadError{e};
    }
  }
  // Upper bounds (scenarios/README.md): past every released model by a wide margin (DeepSeek-V3:
  // vocab 129,280, d 7,168, 61 layers, 128 heads, ranks 1,536 / 512, head dims 128 / 64 / 128,
  // MLP 18,432, 163,840 positions), and small enough that every index product fits 64 bits.
  auto i = [&](const char* key, int& field, int min, long long max) {
    if (node[key]) field = r.read_int(node[key], join_key(p, key), min, max);
  };
  auto d = [&](const char* key, double& field, double min, double max) {
    if (!node[key]) return;
    field = r.read_double(node[key], join_key(p, key), min);
    if (field > max)
      r.fail(node[key], join_key(p, key), "must be <= " + show_number(max) + " (got " + node[key].Scalar() + ")",
             "this key takes numbers <= " + show_number(max));
  };
  i("vocab_size", out.vocab_size, 3, 1LL << 21);
  i("hidden_size", out.hidden_size, 1, 1LL << 16);
  i("num_hidden_layers", out.num_hidden_layers, 1, 1LL << 10);
  i("num_attention_heads", out.num_attention_heads, 1, 1LL << 10);
  i("q_lora_rank", out.q_lora_rank, 0, 1LL << 16);
  i("kv_lora_rank", out.kv_lora_rank, 1, 1LL << 16);
  i("qk_nope_head_dim", out.qk_nope_head_dim, 1, 1LL << 12);
  i("qk_rope_head_dim", out.qk_rope_head_dim, 2, 1LL << 12);
  i("v_head_dim", out.v_head_dim, 1, 1LL << 12);
  i("intermediate_size", out.intermediate_size, 1, 1LL << 20);
  i("max_position_embeddings", out.max_position_embeddings, 2, 1LL << 24);
  if (node["max_position_embeddings"]) out.hf_derived_max_model_len = 0;  // the key, not the config, bounds it
  i("original_max_position_embeddings", out.original_max_position_embeddings, 1, 1LL << 24);
  d("rms_norm_eps", out.rms_norm_eps, 0.0, 1.0);
  d("rope_theta", out.rope_theta, 1.0, 1e12);
  d("rope_scaling_factor", out.rope_scaling_factor, 1.0, 1e6);
  d("mscale_all_dim", out.mscale_all_dim, 0.0, 1e6);
  d("beta_fast", out.beta_fast, 0.0, 1e6);
  d("beta_slow", out.beta_slow, 0.0, 1e6);
  // YaRN's correction range needs rotation counts > 0; transformers and vLLM also replace a 0 by
  // the default (32, 1), so 0 could not mean the same thing to them.
  for (const auto& [key, value] : {std::pair{"beta_fast", out.beta_fast}, std::pair{"beta_slow", out.beta_slow}})
    if (value <= 0.0)
      r.fail(node[key], p + "." + key, std::string(key) + " must be > 0",
             "YaRN's beta_fast / beta_slow count rotations (DeepSeek-V3: 32 and 1)");
  if (out.qk_rope_head_dim % 2 != 0)
    r.fail(node["qk_rope_head_dim"], p + ".qk_rope_head_dim", "must be even (RoPE rotates pairs)");
  if (node["seed"]) out.seed = static_cast<unsigned long long>(r.read_integer(node["seed"], p + ".seed", 0, 1LL << 62));
  if (node["dtype"])
    out.dtype = read_enum<ModelDtype>(r, node["dtype"], p + ".dtype", parse_model_dtype, {"fp32", "bf16"}, "dtype");
  if (node["eos_token_id"]) {
    out.eos_token_id = r.read_int(node["eos_token_id"], p + ".eos_token_id", 0);
    if (out.eos_token_id >= out.vocab_size)
      r.fail(node["eos_token_id"], p + ".eos_token_id",
             "token id " + std::to_string(out.eos_token_id) + " is outside the vocabulary (vocab_size " +
                 std::to_string(out.vocab_size) + ")",
             "token ids must be in [0, vocab_size)");
  }
  // `index_topk: null` drops it, as a loader that loses it does (the seed's GGUF conversion): the
  // model is dense MLA, as vLLM builds it when hasattr(config, "index_topk") is false.
  if (node["index_topk"] && node["index_topk"].IsNull()) {
    for (const char* arch : {"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})
      if (out.architecture == arch)
        r.fail(node["index_topk"], p + ".index_topk",
               std::string(arch) + " without index_topk: vLLM 0.33 cannot build it (DeepseekV32ForCausalLM: `assert "
               "is_v32`, vllm/model_executor/models/config.py ~78-81; GlmMoeDsaForCausalLM reads config.index_topk, "
               "vllm/models/deepseek_v32/nvidia/model.py ~188-196)",
               "a loader that drops index_topk also declares the dense architecture: use a config.json that says "
               "DeepseekV3ForCausalLM (scenarios/hf_configs/glm-5-gguf-as-deepseek-v3.json)");
    out.index_topk.reset();
    out.unused_index_topk.reset();
  } else if (node["index_topk"]) {
    out.index_topk = r.read_int(node["index_topk"], p + ".index_topk", 1, 1LL << 24);
  }
  if (node["index_n_heads"]) out.index_n_heads = r.read_int(node["index_n_heads"], p + ".index_n_heads", 1, 1 << 10);
  if (node["index_head_dim"]) out.index_head_dim = r.read_int(node["index_head_dim"], p + ".index_head_dim", 2, 1 << 12);
  if (has_dsa_indexer(out)) {
    // DeepseekV32Indexer (models/deepseek_v32/attention.py ~50-90): queries from the q latent
    // (wq_b), the rope part the first qk_rope_head_dim values of an index head.
    const char* at = node["index_topk"] ? "index_topk" : node["preset"] ? "preset" : "hf_config";
    if (out.q_lora_rank == 0)
      r.fail(node[at], p + "." + at,
             "a sparse (DSA) model needs q_lora_rank > 0: its indexer projects its queries from the q latent "
             "(DeepseekV32Indexer.wq_b, models/deepseek_v32/attention.py ~50-90)",
             "use preset tiny-dsa, or set model.q_lora_rank");
    if (out.index_head_dim < out.qk_rope_head_dim)
      r.fail(node[node["index_head_dim"] ? "index_head_dim" : at], p + ".index_head_dim",
             "index_head_dim " + std::to_string(out.index_head_dim) + " is narrower than qk_rope_head_dim " +
                 std::to_string(out.qk_rope_head_dim) + ": the indexer rotates its first qk_rope_head_dim values",
             "index_head_dim >= qk_rope_head_dim (DeepSeek-V3.2: 128 and 64)");
  }
  if (node["num_layers"]) {
    // The layers mlasim runs: a CPU cannot run DeepSeek-V3's 61; routing does not depend on it.
    const int n = r.read_int(node["num_layers"], p + ".num_layers", 1, out.num_hidden_layers);
    if (n < out.num_hidden_layers) out.config_num_hidden_layers = out.num_hidden_layers;
    out.num_hidden_layers = n;
  }
}

void read_scheduler_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  // Upper bounds (scenario/scenario_keys.cpp): a step of 2^24 tokens, 2^16 sequences and 2^24-token
  // contexts are past any deployment (vLLM's defaults: 8,192 / 256), and keep token and slot
  // arithmetic in range.
  r.expect_map(node, "scheduler", section_key_names("scheduler"));
  read_section_keys(r, node, "scheduler", s);
}

void read_engine_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  r.expect_map(node, "engine", section_key_names("engine"));
  read_section_keys(r, node, "engine", s, &s.deployment.gpu);  // engine.gpu: read_deployment_keys
}

void read_deployment_keys(const YamlReader& r, const YamlNode& engine, const YamlNode& cache, Scenario& s) {
  if (engine) read_key(r, engine, key_of(s, &s.deployment.gpu), s);
  if (cache) {
    std::vector<std::string> keys = section_key_names("cache");
    keys.push_back("kv_cache_groups");  // the layout, read apart from the table's scalar keys
    keys.push_back("prefix_cache_retention_interval");
    r.expect_map(cache, "cache", keys);
    read_section_keys(r, cache, "cache", s);
    if (cache["kv_cache_groups"]) read_kv_cache_groups(r, cache["kv_cache_groups"], s);
    if (cache["prefix_cache_retention_interval"]) read_retention_interval(r, cache, s);
  }
}

void read_parallel_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  r.expect_map(node, "parallel", section_key_names("parallel"));
  read_section_keys(r, node, "parallel", s);
}

namespace {

// An inline request's fields: a YAML mapping, with YamlReader's located reads.
class YamlRequestFields final : public RequestFields {
 public:
  YamlRequestFields(const YamlReader& r, const YamlNode& node, std::string path) : r_(r), node_(node), p_(std::move(path)) {
    r_.expect_map(node_, p_, request_keys());
  }
  bool has(const char* key) const override { return static_cast<bool>(node_[key]); }
  std::string read_string(const char* key) const override { return r_.read_string(node_[key], path(key)); }
  long long read_int(const char* key, long long lo, long long hi) const override {
    return r_.read_integer(node_[key], path(key), lo, hi);
  }
  double read_seconds(const char* key) const override { return r_.read_double(node_[key], path(key), 0); }
  bool read_bool(const char* key) const override { return r_.read_bool(node_[key], path(key)); }
  std::vector<long long> read_int_list(const char* key, long long lo, long long hi) const override {
    return r_.read_integer_list(node_[key], path(key), lo, hi);
  }
  [[noreturn]] void fail(At at, const char* key, std::string message, std::string hint) const override {
    if (at == At::kRequest) r_.fail(node_, p_, std::move(message), std::move(hint));
    r_.fail(at == At::kKey ? key_node(key) : node_[key], path(key), std::move(message), std::move(hint));
  }
  [[noreturn]] void fail_item(const char* key, std::size_t item, std::string message, std::string hint) const override {
    r_.fail(node_[key][item], index_key(path(key), item), std::move(message), std::move(hint));
  }

 private:
  std::string path(const char* key) const { return p_ + "." + key; }
  YamlNode key_node(const char* key) const {
    for (std::size_t i = 0; i < node_.size(); ++i)
      if (node_.key_at(i).Scalar() == key) return node_.key_at(i);
    return node_;
  }

  const YamlReader& r_;
  const YamlNode& node_;
  std::string p_;
};

}  // namespace

void read_requests_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  r.expect_sequence(node, "requests");
  if (node.size() == 0) r.fail(node, "requests", "no requests", "a scenario needs at least one request");
  s.requests.reserve(node.size());
  std::map<std::string, int> first_line;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = index_key("requests", i);
    RequestSpec req = read_request(YamlRequestFields(r, node[i], p), s, std::nullopt);
    int line = node[i]["id"].Mark().line + 1;
    auto [it, inserted] = first_line.emplace(req.id, line);
    if (!inserted)
      r.fail(node[i]["id"], p + ".id", "duplicate request id \"" + req.id + "\"",
             "first used on line " + std::to_string(it->second) + "; request ids must be unique");
    if (i > 0 && req.arrival_time_ns.has_value() != s.requests[0].arrival_time_ns.has_value())
      r.fail(node[i][req.arrival_time_ns ? "arrival_time" : "id"], p + (req.arrival_time_ns ? ".arrival_time" : ""),
             req.arrival_time_ns ? "arrival_time where requests[0] arrives by step" : "missing arrival_time",
             "a scenario's requests all use arrival_time (seconds) or all arrival_step");
    s.requests.push_back(std::move(req));
  }
  s.num_requests = static_cast<int>(s.requests.size());
  s.timed_arrivals = !s.requests.empty() && s.requests[0].arrival_time_ns.has_value();
}

void read_timing_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  r.expect_map(node, "timing", section_key_names("timing"));
  read_section_keys(r, node, "timing", s);
}

}  // namespace mlasim
