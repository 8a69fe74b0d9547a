// The MLA model families vLLM 0.33 serves, with how mlasim reads each and what was checked.
#include "deploy/model_families.h"

#include <fmt/format.h>

#include <map>

namespace mlasim {
namespace {

// Counts: tools/bench/RESULTS.md, "MLA families and hybrid KV cache groups (issue 48)".
constexpr const char* kSelection = "backend selection: identical to vLLM 0.33.0 on every cell of the default grid "
                                   "(2,112 over the 11 one-group configs)";
constexpr const char* kOwnClassLogits = "logits: transformers' own modeling class, top-1 100% (25 match over "
                                        "scenarios/seed and scenarios/deploy)";
constexpr const char* kHybrid = "backend selection 192, KV cache groups 120, scheduler step by step 600 random traces: "
                                "identical to vLLM 0.33.0, 0 differing";
constexpr const char* kSparseLogits = "logits: the DSA indexer and its top-k computed; transformers' "
                                      "DeepseekV32 / GlmMoeDsa modeling, top-1 100% (5 match)";
constexpr const char* kStandIn = "; logits: a one-layer MLA stand-in (its other layers not computed)";
constexpr const char* kKdaSplit = "; KDA layers' split (vLLM's GDN builder): 600 random traces identical";

const std::map<std::string, std::pair<std::vector<std::string>, std::string>>& shipped() {
  static const std::map<std::string, std::pair<std::vector<std::string>, std::string>> table{
      {"axk1", {{"axk1-defaults.json"}, std::string(kSelection) + "; " + kOwnClassLogits}},
      {"deepseek_v2", {{"deepseek-v2-defaults.json", "deepseek-v2-lite.json"}, kSelection}},
      {"deepseek_v3",
       {{"deepseek-v3.json", "glm-5-gguf-as-deepseek-v3.json"},
        std::string(kSelection) + "; logits: transformers' DeepseekV3 modeling, top-1 100%"}},
      {"deepseek_v32", {{"deepseek-v3.2.json"}, std::string(kSelection) + "; " + kSparseLogits}},
      {"deepseek_v4", {{"deepseek-v4.json"}, std::string(kHybrid) + "; routing: no MHA form (DeepseekV4Attention)" + kStandIn}},
      {"glm5_next", {{"glm-5-next.json"}, std::string(kHybrid) + kKdaSplit + kStandIn}},
      {"glm5_next_text",
       {{"glm-5-next-text.json"},
        "backend selection 192, KV cache groups 120: identical to vLLM 0.33.0, 0 differing (the same layers as "
        "glm5_next's, whose scheduler and KDA split checks hold for it)" + std::string(kStandIn)}},
      {"bailing_hybrid", {{"bailing-hybrid.json"}, std::string(kHybrid) + kKdaSplit + kStandIn}},
      {"glm_moe_dsa", {{"glm-5.json"}, std::string(kSelection) + "; " + kSparseLogits}},
      {"glm4_moe_lite", {{"glm4-moe-lite-defaults.json"}, std::string(kSelection) + "; " + kOwnClassLogits}},
      {"kimi_k2", {{"kimi-k2.json"}, kSelection}},
      {"kimi_linear", {{"kimi-linear.json"}, std::string(kHybrid) + kKdaSplit + kStandIn}},
      {"longcat_flash", {{"longcat-flash-defaults.json"}, std::string(kSelection) + "; " + kOwnClassLogits}},
      {"kimi_k25", {{"kimi-k25-defaults.json"}, kSelection}},
      {"hy_v4",
       {{"hy-v4-defaults.json", "hy-v4-sparse.json"},
        "backend selection with the sink backend and sparse_mla_force_mqa: identical to vLLM 0.33.0 on every cell of "
        "the default grid (384 over the 2 configs); logits: a plain MLA stand-in (no output gate, sink or "
        "hyper-connections)"}},
  };
  return table;
}

std::string status_of(const HfFamily& f) {
  switch (f.kind) {
    case HfFamilyKind::kOneGroup:
      if (!f.why.empty()) return fmt::format("read: one MLA KV cache group; {}", f.why);
      return f.text_config ? "read: one MLA KV cache group (its text_config)" : "read: one MLA KV cache group";
    case HfFamilyKind::kSeveralGroups: return fmt::format("read: several KV cache groups ({})", f.why);
    case HfFamilyKind::kHybrid: return fmt::format("not read: several KV cache groups ({})", f.why);
    case HfFamilyKind::kDrafter: return fmt::format("a drafter, not a target: {}", f.why);
    case HfFamilyKind::kNoConfigClass: return fmt::format("no config class: {}", f.why);
  }
  return "?";
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

}  // namespace

const std::vector<ModelFamilyEntry>& model_family_table() {
  static const std::vector<ModelFamilyEntry> table = [] {
    std::vector<ModelFamilyEntry> out;
    for (const HfFamily& f : hf_families()) {
      ModelFamilyEntry e;
      e.family = &f;
      e.status = status_of(f);
      if (auto it = shipped().find(std::string(f.model_type)); it != shipped().end()) {
        e.shipped_configs = it->second.first;
        e.checks = it->second.second;
      }
      out.push_back(std::move(e));
    }
    return out;
  }();
  return table;
}

std::string model_families_text() {
  std::string out = "\nMLA model families vLLM 0.33.0 serves (is_deepseek_mla's model types and kimi_k25):\n";
  for (const ModelFamilyEntry& e : model_family_table()) {
    out += fmt::format("  {:<22} {}\n", e.family->model_type, e.status);
    if (!e.shipped_configs.empty()) out += fmt::format("  {:<22}   configs: {}\n", "", joined(e.shipped_configs));
    if (!e.checks.empty()) out += fmt::format("  {:<22}   checked: {}\n", "", e.checks);
  }
  return out;
}

std::string model_families_markdown() {
  std::string out = "\n| model_type | mlasim | shipped config (scenarios/hf_configs/) | checked against vLLM 0.33.0 / transformers 5.20 |\n"
                    "|---|---|---|---|\n";
  for (const ModelFamilyEntry& e : model_family_table())
    out += fmt::format("| `{}` | {} | {} | {} |\n", e.family->model_type, e.status, joined(e.shipped_configs),
                       e.checks.empty() ? "-" : e.checks);
  return out;
}

void write_model_families_json(JsonWriter& w) {
  w.key("families").begin_array();
  for (const ModelFamilyEntry& e : model_family_table()) {
    w.begin_object();
    w.key("model_type").value(std::string(e.family->model_type));
    w.key("config_class").value(std::string(e.family->config_class));
    w.key("read").value(e.family->kind == HfFamilyKind::kOneGroup || e.family->kind == HfFamilyKind::kSeveralGroups);
    w.key("status").value(e.status);
    w.key("shipped_configs").begin_array();
    for (const auto& c : e.shipped_configs) w.value(c);
    w.end_array();
    w.key("checks").value(e.checks);
    w.end_object();
  }
  w.end_array();
}

}  // namespace mlasim
