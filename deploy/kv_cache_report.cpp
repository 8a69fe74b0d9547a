// The hybrid families' KV cache groups in `mlasim deploy`'s report.
#include "deploy/kv_cache_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "config/kv_cache_plan.h"

namespace mlasim {
namespace {

std::optional<KvCachePlan> plan_of(const Scenario& s) {
  if (!reports_kv_cache_groups(s)) return std::nullopt;
  auto plan = plan_kv_cache(s.model, kv_cache_plan_inputs(s));
  if (!plan) return std::nullopt;
  return std::move(plan).value();
}

// The group's layers' distinct specs, in first-seen order, with how many layers have each.
struct SpecCount {
  const KvCacheSpec* spec;
  int count;
};
std::vector<SpecCount> distinct_specs(const PlannedKvCacheGroup& g) {
  std::vector<SpecCount> out;
  for (const auto& s : g.layer_specs) {
    bool found = false;
    for (auto& c : out)
      if (*c.spec == s) ++c.count, found = true;
    if (!found) out.push_back({&s, 1});
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "0..42/2" for 0, 2, ..., 42; runs of one step joined by commas.
std::string number_ranges(const std::vector<long long>& n) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < n.size();) {
    std::size_t j = i + 1;
    const long long step = j < n.size() ? n[j] - n[i] : 1;
    while (j < n.size() && n[j] - n[j - 1] == step && step > 0) ++j;
    if (j - i >= 3) parts.push_back(fmt::format("{}..{}{}", n[i], n[j - 1], step == 1 ? "" : "/" + std::to_string(step)));
    else
      for (std::size_t k = i; k < j; ++k) parts.push_back(std::to_string(n[k]));
    i = j;
  }
  return join(parts, ",");
}

std::string spec_text(const KvCacheSpec& s) {
  std::string t = fmt::format("{} {} B", kv_cache_spec_class_name(s.kind), s.page_size_bytes());
  if (s.kind != KvCacheSpecKind::kMamba && s.tokens_per_state != 1) t += fmt::format(", {} tokens/state", s.tokens_per_state);
  if (s.sliding_window) t += fmt::format(", window {}", s.sliding_window);
  if (s.block_size != 0) t += fmt::format(", block {}", s.block_size);
  return t;
}

std::string group_line(std::size_t i, const PlannedKvCacheGroup& g, const std::vector<std::string>& backends) {
  std::vector<std::string> specs;
  for (const auto& c : distinct_specs(g)) specs.push_back(fmt::format("{} x {}", c.count, spec_text(*c.spec)));
  return fmt::format("  group {}: {}, {} layers ({}), block size {}, {} B per block ({}); backends {}\n", i,
                     to_string(g.layer_specs.front().kind), g.layer_names.size(),
                     join(layer_name_patterns(g.layer_names), " "), g.block_size(), g.page_size_bytes(),
                     join(specs, "; "), join(backends, ", "));
}

void write_spec(JsonWriter& w, const KvCacheSpec& s, int count) {
  w.begin_object();
  w.key("spec").value(kv_cache_spec_class_name(s.kind));
  w.key("num_layers").value(count);
  w.key("block_size").value(s.block_size);
  w.key("page_size_bytes").value(s.page_size_bytes());
  if (s.kind == KvCacheSpecKind::kMamba) {
    w.key("mamba_cache_mode").value(s.mamba_cache_mode);
    w.key("num_speculative_blocks").value(s.num_speculative_blocks);
  } else {
    w.key("head_size").value(s.head_size);
    w.key("dtype").value(s.dtype.name);
    w.key("tokens_per_state").value(s.tokens_per_state);
  }
  if (s.sliding_window) w.key("sliding_window").value(s.sliding_window);
  w.end_object();
}

void write_group(JsonWriter& w, const PlannedKvCacheGroup& g, const std::vector<std::string>& backends) {
  w.begin_object();
  w.key("kind").value(to_string(g.layer_specs.front().kind));
  w.key("spec").value(g.uniform_type ? "UniformTypeKVCacheSpecs" : kv_cache_spec_class_name(g.layer_specs.front().kind));
  w.key("num_layers").value(static_cast<int>(g.layer_names.size()));
  w.key("layers").begin_array();
  for (const auto& n : g.layer_names) w.value(n);
  w.end_array();
  w.key("block_size").value(g.block_size());
  w.key("page_size_bytes").value(g.page_size_bytes());
  w.key("prefix_cacheable").value(g.prefix_cacheable());
  if (g.layer_specs.front().sliding_window) w.key("sliding_window").value(g.layer_specs.front().sliding_window);
  w.key("layer_specs").begin_array();
  for (const auto& c : distinct_specs(g)) write_spec(w, *c.spec, c.count);
  w.end_array();
  w.key("backends").begin_array();
  for (const auto& b : backends) w.value(b);
  w.end_array();
  w.end_object();
}

}  // namespace

bool reports_kv_cache_groups(const Scenario& s) { return !s.model.attention_layers.empty(); }

std::vector<std::string> layer_name_patterns(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::vector<long long>>> templates;  // first-seen order
  for (const auto& n : names) {
    const std::size_t at = n.find("layers.");
    std::size_t digits = at == std::string::npos ? n.size() : at + 7, end = digits;
    while (end < n.size() && std::isdigit(static_cast<unsigned char>(n[end]))) ++end;
    if (end == digits) {
      templates.push_back({n, {}});
      continue;
    }
    const std::string key = n.substr(0, digits) + "\x01" + n.substr(end);
    auto it = std::find_if(templates.begin(), templates.end(), [&](const auto& t) { return t.first == key; });
    if (it == templates.end()) it = templates.insert(templates.end(), {key, {}});
    it->second.push_back(std::stoll(n.substr(digits, end - digits)));
  }
  std::vector<std::string> out;
  for (const auto& [key, numbers] : templates) {
    const std::size_t mark = key.find('\x01');
    if (mark == std::string::npos) out.push_back(key);
    else out.push_back(key.substr(0, mark) + "[" + number_ranges(numbers) + "]" + key.substr(mark + 1));
  }
  return out;
}

std::string kv_cache_groups_text(const Scenario& s) {
  const auto plan = plan_of(s);
  if (!plan) return "";
  const KvCacheLayout& l = plan->layout;
  std::string out = fmt::format(
      "kv cache: {} groups (get_kv_cache_groups, v1/core/kv_cache_planning.py ~1113); block size {}, layout {}, "
      "kv_cache_dtype {}, {} blocks; scheduler block size {}, hash block size {} (kv_cache_utils.py ~816)\n",
      plan->groups.size(), plan->block_size, to_string(plan->tensor_layout), plan->cache_dtype, l.num_blocks,
      l.scheduler_block_size, l.hash_block_size);
  if (plan->mamba_block_size)
    out += fmt::format("  mamba: block size {}, cache mode {}, page padded to {}\n", plan->mamba_block_size,
                       plan->mamba_cache_mode,
                       plan->mamba_page_size_padded ? std::to_string(*plan->mamba_page_size_padded) : "none");
  for (std::size_t i = 0; i < plan->groups.size(); ++i) out += group_line(i, plan->groups[i], plan->group_backends[i]);
  return out;
}

void write_kv_cache_groups_json(JsonWriter& w, const Scenario& s) {
  const auto plan = plan_of(s);
  if (!plan) return;
  w.key("kv_cache").begin_object();
  w.key("block_size").value(plan->block_size);
  w.key("layout").value(to_string(plan->tensor_layout));
  w.key("cache_dtype").value(plan->cache_dtype);
  w.key("num_blocks").value(plan->layout.num_blocks);
  w.key("scheduler_block_size").value(plan->layout.scheduler_block_size);
  w.key("hash_block_size").value(plan->layout.hash_block_size);
  if (plan->mamba_block_size) {
    w.key("mamba_block_size").value(plan->mamba_block_size);
    w.key("mamba_cache_mode").value(plan->mamba_cache_mode);
    w.key("mamba_page_size_padded");
    if (plan->mamba_page_size_padded) w.value(*plan->mamba_page_size_padded);
    else w.null();
  }
  w.end_object();
  w.key("kv_cache_groups").begin_array();
  for (std::size_t i = 0; i < plan->groups.size(); ++i) write_group(w, plan->groups[i], plan->group_backends[i]);
  w.end_array();
}

}  // namespace mlasim
