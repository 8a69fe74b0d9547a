// Scenario loading: read, parse, apply --set overrides, read each section, then the rules that
// span sections (vLLM's startup validation).
#include "scenario/scenario_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/file_read.h"
#include "scenario/request_file.h"
#include "config/mtp_drafter.h"
#include "config/scenario_deployment.h"
#include "scenario/scenario_sections.h"
#include "scenario/kv_cache_groups.h"
#include "scenario/set_override.h"
#include "sim/scheduler.h"
#include "sim/scheduler_rules.h"

namespace mlasim {

// golden/<name>/ and `golden update`'s staging folder .<name>.new.<pid> must fit NAME_MAX (255).
constexpr std::size_t kMaxScenarioNameBytes = 200;

std::string golden_name_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxScenarioNameBytes)
    return "is " + std::to_string(name.size()) + " bytes long, more than " + std::to_string(kMaxScenarioNameBytes);
  if (name[0] == '.') return "starts with '.'";
  for (unsigned char c : name) {
    if (c == '/' || c == '\\') return "contains a path separator";
    if (c < 0x20 || c == 0x7f) return "contains a control character";
  }
  return "";
}

namespace {

// The node of a key path ("scheduler.max_model_len") under root, else of its closest defined
// ancestor; used to point cross-section errors at the key the user wrote.
YamlNode locate(const YamlNode& root, const std::string& path) {
  const std::size_t dot = path.find('.');
  const YamlNode sec = root[path.substr(0, dot)];
  if (dot != std::string::npos && sec && sec.IsMap() && sec[path.substr(dot + 1)]) return sec[path.substr(dot + 1)];
  if (sec) return sec;
  return root;
}

// The scenario's tree as --set walks it (scenario/set_override.h).
class TreeSetTarget : public SetTarget {
 public:
  TreeSetTarget(YamlTree& tree, std::uint32_t root, std::uint32_t value)
      : tree_(tree), cur_(tree.node(root)), value_(value) {}
  Kind kind() const override { return kind_of(cur_); }
  std::size_t size() const override { return cur_.size(); }
  Kind child_kind(const std::string& key) const override { return kind_of(cur_[key]); }
  Kind item_kind(std::size_t index) const override { return kind_of(cur_[index]); }
  void enter(const std::string& key) override {
    const std::uint32_t own = own_copy(cur_[key]);
    tree_.set_map_value(cur_.id(), key, own);
    cur_ = tree_.node(own);
  }
  void enter(std::size_t index) override {
    const std::uint32_t own = own_copy(cur_[index]);
    tree_.set_kid(cur_.id(), index, own);
    cur_ = tree_.node(own);
  }
  void assign(const std::string& key) override { tree_.set_map_value(cur_.id(), key, value_); }
  void assign(std::size_t index) override { tree_.set_kid(cur_.id(), index, value_); }
  bool value_is_collection() const override {
    const YamlNode v = tree_.node(value_);
    return v.IsMap() || v.IsSequence();
  }

 private:
  static Kind kind_of(const YamlNode& n) {
    if (!n) return Kind::kAbsent;
    if (n.IsNull()) return Kind::kNull;
    if (n.IsMap()) return Kind::kMapping;
    return n.IsSequence() ? Kind::kSequence : Kind::kScalar;
  }
  std::uint32_t own_copy(const YamlNode& next) {
    if (next.IsMap() || next.IsSequence()) return tree_.copy_collection(next.id());
    if (!next || next.IsNull()) return tree_.new_map();
    return next.id();
  }
  YamlTree& tree_;
  YamlNode cur_;
  std::uint32_t value_;
};

// Applies one --set to the tree under `root` and returns the new root. Each collection on the
// path is copied before it is edited, so the edit reaches this path only, never another alias of
// the same node (`prompt: *p` or `- *request` elsewhere).
YamlNode apply_override(YamlTree& tree, YamlNode root, YamlReader& reader, const std::string& set) {
  Result<SetArgument> parsed =
      parse_set(set, "for example --set engine.profile=strict or --set requests.0.max_tokens=4");
  if (!parsed) throw LoadError{parsed.error()};
  const SetArgument& a = parsed.value();
  std::uint32_t value = 0;
  try {
    YamlMark second;
    value = tree.parse(a.value, &second).id();
    if (!second.is_null())
      throw LoadError{set_error(a, a.value_column, "the value holds more than one YAML document (`---`)",
                                "give one value; quote it for the shell if it contains `---`")};
  } catch (const YamlSyntaxError& ex) {
    throw LoadError{set_error(a, a.value_column + std::max(ex.mark.column, 0), "cannot parse the value: " + ex.msg,
                              "quote the value for the shell; lists are written [a, b]")};
  }
  const std::uint32_t new_root = tree.copy_collection(root.id());
  TreeSetTarget target(tree, new_root, value);
  Result<std::string> key_path = apply_set(target, a);
  if (!key_path) throw LoadError{key_path.error()};
  reader.add_override(key_path.value(), OverrideOrigin{a.label, a.value_column});
  return tree.node(new_root);
}

// Before the requests are read: their seeded prompts and outputs are bounded by max_model_len.
void resolve_max_model_len(const YamlReader& r, const YamlNode& root, Scenario& s) {
  SchedulerConfig& sc = s.scheduler;
  ModelConfig& m = s.model;
  if (sc.max_model_len == 0) {
    sc.max_model_len = m.max_position_embeddings;  // vLLM derives it from the model config
    if (m.hf_derived_max_model_len > 0) {
      // ... from a config.json as vLLM does (scenario/hf_config.h, _get_and_verify_max_len);
      // the model's positions reach it.
      if (m.hf_derived_max_model_len > (1 << 24))
        r.fail(locate(root, "model.hf_config"), "scheduler.max_model_len",
               "the max_model_len vLLM derives from the config (" + std::to_string(std::llround(m.hf_derived_max_model_len)) +
                   ") is more than mlasim simulates (16777216)",
               "give scheduler.max_model_len");
      sc.max_model_len = static_cast<int>(m.hf_derived_max_model_len);
      m.max_position_embeddings = std::max(m.max_position_embeddings, sc.max_model_len);
    }
  } else if (sc.max_model_len > m.max_position_embeddings) {
    r.fail(locate(root, "scheduler.max_model_len"), "scheduler.max_model_len",
           "max_model_len " + std::to_string(sc.max_model_len) + " exceeds the model's max_position_embeddings " +
               std::to_string(m.max_position_embeddings),
           "lower max_model_len or raise model.max_position_embeddings");
  }
  // An unset num_gpu_blocks stands for what vLLM profiles: 8192, or the smallest pool vLLM 0.33
  // starts with when that is more (check_kv_cache_startup: max_model_len's blocks plus the null one).
  if (!root["scheduler"] || !root["scheduler"]["num_gpu_blocks"]) sc.num_gpu_blocks = default_num_gpu_blocks(sc);
}

// What vLLM 0.33 refuses of a model from a config.json, with its message: a TP size that does not
// divide the heads (ModelConfig.verify_with_parallel_config, vllm/config/model.py ~1557-1563), and
// MTP on a config with MTP layers that SpeculativeConfig makes no drafter of (config/mtp_drafter.h,
// config/speculative.py ~1467-1499).
void refuse_as_vllm_model_config(const YamlReader& r, const YamlNode& root, const Scenario& s) {
  const ModelConfig& m = s.model;
  const SchedulerConfig& sc = s.scheduler;
  const int tp = s.parallel.tensor_parallel_size;
  if (m.hf_config.empty()) return;
  if (m.num_attention_heads % tp != 0)
    r.fail(locate(root, "parallel.tensor_parallel_size"), "parallel.tensor_parallel_size",
           "vLLM 0.33 refuses it: Total number of attention heads (" + std::to_string(m.num_attention_heads) +
               ") must be divisible by tensor parallel size (" + std::to_string(tp) + "). (vllm/config/model.py ~1557-1563)",
           "heads are sharded evenly across ranks: pick a divisor of model.num_attention_heads");
  if (m.num_nextn_predict_layers > 0 && s.deployment.selection_applies &&
      sc.speculative_method == SpeculativeMethod::kMtp && sc.num_speculative_tokens > 0 &&
      !mtp_drafter(m.model_type, m.architecture))
    r.fail(locate(root, "scheduler.num_speculative_tokens"), "scheduler.num_speculative_tokens",
           "vLLM 0.33 refuses it: Unsupported speculative method: 'mtp' (config/speculative.py ~1499: "
           "SpeculativeConfig.hf_config_override makes no MTP drafter of model_type " + m.model_type + ")",
           "draft with n-gram (scheduler.speculative_method: ngram), or serve without speculative tokens");
}

void cross_checks(const YamlReader& r, const YamlNode& root, Scenario& s) {
  SchedulerConfig& sc = s.scheduler;
  const ModelConfig& m = s.model;
  if (!sc.enable_chunked_prefill && sc.max_num_batched_tokens < sc.max_model_len)
    r.fail(locate(root, "scheduler.max_num_batched_tokens"), "scheduler.max_num_batched_tokens",
           "max_num_batched_tokens (" + std::to_string(sc.max_num_batched_tokens) +
               ") is smaller than max_model_len (" + std::to_string(sc.max_model_len) +
               ") with chunked prefill disabled",
           "vLLM refuses this config: enable chunked prefill, raise max_num_batched_tokens or lower max_model_len");
  // A KV slot is block_id * block_size + offset, a 32-bit index as in the engines' slot_mapping
  // and the attention kernels' page tables.
  if (static_cast<long long>(sc.num_gpu_blocks) * sc.block_size > std::numeric_limits<int>::max())
    r.fail(locate(root, "scheduler.block_size"), "scheduler.block_size",
           "num_gpu_blocks x block_size = " +
               std::to_string(static_cast<long long>(sc.num_gpu_blocks) * sc.block_size) +
               " KV slots, more than 2^31 - 1",
           "KV slots are 32-bit indices (slot_mapping, the kernels' page tables): lower block_size or num_gpu_blocks");
  if (sc.max_num_batched_tokens < sc.max_num_seqs)
    r.fail(locate(root, "scheduler.max_num_batched_tokens"), "scheduler.max_num_batched_tokens",
           "max_num_batched_tokens (" + std::to_string(sc.max_num_batched_tokens) + ") is smaller than max_num_seqs (" +
               std::to_string(sc.max_num_seqs) + ")",
           "vLLM requires max_num_batched_tokens >= max_num_seqs");
  const int tp = s.parallel.tensor_parallel_size;
  refuse_as_vllm_model_config(r, root, s);
  if (m.num_attention_heads % tp != 0)
    r.fail(locate(root, "parallel.tensor_parallel_size"), "parallel.tensor_parallel_size",
           "tensor_parallel_size " + std::to_string(tp) + " does not divide the " +
               std::to_string(m.num_attention_heads) + " attention heads",
           "heads are sharded evenly across ranks: pick a divisor of model.num_attention_heads");
  if (m.intermediate_size % tp != 0)  // the MLP is column/row-parallel over the ranks (vLLM)
    r.fail(locate(root, "parallel.tensor_parallel_size"), "parallel.tensor_parallel_size",
           "tensor_parallel_size " + std::to_string(tp) + " does not divide the MLP's intermediate_size " +
               std::to_string(m.intermediate_size),
           "the MLP is sharded evenly across ranks: pick a divisor of model.intermediate_size");
  if (std::string problem = check_long_prefill_token_threshold(sc, sc.max_model_len); !problem.empty())
    r.fail(locate(root, "scheduler.long_prefill_token_threshold"), "scheduler.long_prefill_token_threshold", problem,
           "vLLM refuses it (config/scheduler.py): lower it to at most max_model_len, or 0 for no cap");
  if (!sc.rules.v1_runs_mtp && sc.speculative_method == SpeculativeMethod::kMtp && sc.num_speculative_tokens > 0)
    r.fail(locate(root, "scheduler.num_speculative_tokens"), "scheduler.speculative_method",
           "engine.profile " + std::string(to_string(s.engine.profile)) +
               ": vLLM 0.8 runs MTP speculation on its V0 engine, not V1 (engine/arg_utils.py:1423-1442 in 0.8.5: "
               "only n-gram and EAGLE stay on V1)",
           "set scheduler.speculative_method: ngram, or pick the profile of a later vLLM (vllm-0.11 or newer)");
  // The KV cache groups, listed in cache.kv_cache_groups (or derived from the model's config).
  check_kv_cache_groups(r, root["cache"] ? root["cache"] : root, s);
  if (std::string problem = check_scheduler_config(sc, sc.max_model_len); !problem.empty())
    r.fail(locate(root, "scheduler"), "scheduler", problem, "see scenarios/README.md for each key's range");
  else if (std::string kv = check_kv_cache_startup(sc, sc.max_model_len); !kv.empty())
    r.fail(locate(root, "scheduler.num_gpu_blocks"), "scheduler.num_gpu_blocks", kv,
           sc.kv_cache_layout.hybrid()
               ? "raise scheduler.num_gpu_blocks to at least the groups' blocks + 1, or lower scheduler.max_model_len"
               : "raise scheduler.num_gpu_blocks to at least cdiv(max_model_len, block_size) + 1, or lower "
                 "scheduler.max_model_len");
  const YamlNode reqs = root["requests"];
  for (std::size_t i = 0; i < s.requests.size(); ++i) {
    const RequestSpec& req = s.requests[i];
    // The reader checked each prompt against max_model_len and each output against min_tokens.
    // vLLM's own request checks (a request its KV cache may never hold is accepted, as by vLLM).
    const Request request = make_request(req, m, static_cast<ReqId>(i));
    if (std::string problem = check_request(request, sc, sc.max_model_len); !problem.empty())
      r.fail(reqs[i], index_key("requests", i), problem, check_request_hint(problem));
  }
}

Scenario read_scenario(const YamlReader& r, const YamlNode& root, const std::string& display_name) {
  Scenario s;
  s.source = display_name;
  s.name = std::filesystem::path(display_name).stem().string();
  r.expect_map(root, "",
               {"version", "name", "description", "model", "scheduler", "engine", "cache", "parallel", "timing", "requests",
                "requests_file", "expect"});
  if (!root["version"]) r.fail(root, "version", "missing required key `version`", "add `version: 1` at the top");
  long long version = r.read_integer(root["version"], "version", -(1LL << 40), 1LL << 40);
  if (version != kScenarioVersion)
    r.fail(root["version"], "version", "unsupported scenario version " + std::to_string(version),
           "this mlasim reads scenario version 1");
  if (root["name"]) s.name = r.read_string(root["name"], "name");
  // The name is a folder under the golden directory, replaced whole by `golden update`.
  if (std::string why = golden_name_problem(s.name); !why.empty())
    r.fail(root["name"] ? root["name"] : root, "name",
           s.name.empty() || why == "contains a control character" || s.name.size() > kMaxScenarioNameBytes
               ? "the scenario name " + why
               : "scenario name \"" + s.name + "\" " + why,
           "the name is the golden folder golden/<name>/: give a non-empty `name` of at most 200 bytes without '/', "
           "'\\', control characters or a leading '.'");
  if (root["description"]) s.description = r.read_string(root["description"], "description");
  if (root["model"])
    read_model_section(r, root["model"], s.model);
  else
    s.model = *model_preset("tiny");
  if (root["engine"]) read_engine_section(r, root["engine"], s);
  // The profile picks its vLLM release's scheduler rules; scheduler keys may then override them.
  s.scheduler.rules = scheduler_rules_for(s.engine.profile);
  if (root["scheduler"]) read_scheduler_section(r, root["scheduler"], s);
  if (root["parallel"]) read_parallel_section(r, root["parallel"], s);
  if (root["timing"]) read_timing_section(r, root["timing"], s);
  read_deployment_keys(r, root["engine"], root["cache"], s);
  if (s.model.num_attention_heads % s.parallel.tensor_parallel_size == 0)
    if (std::string refused = resolve_deployment(s); !refused.empty()) {
      const YamlNode at = s.engine.attention_backend_given ? locate(root, "engine.attention_backend")
                          : root["engine"] && root["engine"]["gpu"] ? locate(root, "engine.gpu")
                                                                    : root;
      if (refused.rfind("mlasim ", 0) == 0)  // what mlasim does not model, not vLLM's refusal
        r.fail(at, root["engine"] && root["engine"]["gpu"] ? "engine.gpu" : "engine", refused);
      r.fail(at, s.engine.attention_backend_given ? "engine.attention_backend" : "engine", "vLLM 0.33 refuses this deployment: " + refused,
             "choose another engine.attention_backend, engine.gpu, cache.kv_cache_dtype or scheduler.block_size "
             "(`mlasim deploy` lists every candidate with its reasons)");
    }
  resolve_max_model_len(r, root, s);
  if (root["requests"] && root["requests_file"])
    r.fail(root["requests_file"], "requests_file", "both `requests` and `requests_file`",
           "list the requests inline or name a JSONL file of them, not both");
  if (root["requests_file"]) {
    const std::string file = r.read_string(root["requests_file"], "requests_file");
    if (file.empty()) r.fail(root["requests_file"], "requests_file", "must not be empty");
    const std::filesystem::path rel(file);
    s.requests_file = rel.is_absolute() ? file : (std::filesystem::path(display_name).parent_path() / rel).string();
    // A file that cannot be opened is reported here, at the key that names it.
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(s.requests_file, ec);
    // Checked before opening it: opening a FIFO waits for a writer. The file is read twice (its
    // requests counted, then streamed), which a FIFO, a pipe or a device cannot give.
    if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
        !std::filesystem::is_directory(st))
      r.fail(root["requests_file"], "requests_file",
             "the requests file " + s.requests_file +
                 " is not a regular file (a FIFO, a pipe or a device): mlasim reads it twice, to count the "
                 "requests and then to stream them",
             "write the requests to a file first (e.g. `cat > requests.jsonl`) and name that file");
    if (std::filesystem::is_directory(s.requests_file, ec) || !std::ifstream(s.requests_file, std::ios::binary))
      r.fail(root["requests_file"], "requests_file",
             "cannot read the requests file " + s.requests_file +
                 (std::filesystem::is_directory(s.requests_file, ec)
                      ? std::string(" (a directory)")
                      : " (" + unopenable_path_hint(s.requests_file) + ")"),
             "requests_file is relative to the scenario file");
  } else {
    if (!root["requests"])
      r.fail(root, "requests", "missing required key `requests`", "list at least one request, or give requests_file");
    read_requests_section(r, root["requests"], s);
  }
  cross_checks(r, root, s);
  if (root["expect"]) read_expect_section(r, root["expect"], s);
  if (!s.requests_file.empty())
    if (Status st = scan_requests_file(s); !st) throw LoadError{st.error()};
  return s;
}

}  // namespace

Result<Scenario> load_scenario_text(const std::string& text, const std::string& display_name,
                                    const std::vector<std::string>& sets) {
  YamlReader reader(display_name);
  try {
    YamlTree tree;
    YamlNode root;
    try {
      YamlMark second;
      root = tree.parse(text, &second);
      if (!second.is_null()) {
        Error e;
        e.file = display_name;
        e.line = second.line + 1;
        e.column = second.column + 1;
        e.message = "a second YAML document (after `---`): a scenario file holds one document";
        e.hint = "remove the `---` line and what follows, or put that scenario in a file of its own";
        return e;
      }
    } catch (const YamlSyntaxError& ex) {
      return syntax_error_at(display_name, ex, "YAML syntax error: " + ex.msg,
                             "check indentation, colons and brackets near this position");
    }
    if (!root.IsDefined() || root.IsNull()) {
      Error e;
      e.file = display_name;
      e.line = 1;
      e.column = 1;
      e.message = "the scenario is empty";
      e.hint = "start with `version: 1`; see scenarios/README.md";
      return e;
    }
    // Overrides only apply to a mapping; otherwise the structural check reports the file.
    if (root.IsMap())
      for (const auto& set : sets) root = apply_override(tree, root, reader, set);
    return read_scenario(reader, root, display_name);
  } catch (const LoadError& le) {
    return le.error;
  }
}

Result<Scenario> load_scenario_file(const std::string& path, const std::vector<std::string>& sets) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {  // reads as an empty file otherwise
    Error e;
    e.file = path;
    e.message = "is a directory, not a scenario file";
    e.hint = "give one .yaml file; `mlasim check DIR` runs every scenario under a directory";
    return e;
  }
  Result<std::string> text = read_file_bounded(path, kMaxScenarioFileBytes, "the scenario file");
  if (!text) {
    Error e = text.error();
    if (e.message.find("larger than") != std::string::npos)
      e.hint = "a scenario file holds settings and a few requests (a long trace goes in a requests_file, JSONL); is this the file you meant?";
    return e;
  }
  return load_scenario_text(text.value(), path, sets);
}

}  // namespace mlasim
