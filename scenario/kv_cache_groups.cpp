// cache.kv_cache_groups: read, checked, written, echoed.
#include "scenario/kv_cache_groups.h"

#include <fmt/format.h>

#include <iterator>
#include <numeric>
#include <optional>

#include "scenario/scenario_keys.h"

namespace mlasim {

namespace {

constexpr const char* kKinds[] = {"mla_attention", "sliding_window_mla", "mamba", "circular_buffer"};
const std::vector<std::string> kGroupKeys = {"kind", "block_size", "sliding_window", "extra_retained_tokens",
                                             "tokens_per_state", "mamba_cache_mode", "num_speculative_blocks",
                                             "num_prefill_checkpoint_blocks", "prefill_checkpoint_alignment",
                                             "num_layers", "page_size_bytes", "is_eagle_group"};

std::string kind_names() { return names_list(std::vector<std::string>(std::begin(kKinds), std::end(kKinds))); }

std::optional<KvCacheSpecKind> parse_kind(const std::string& s) {
  for (int i = 0; i < 4; ++i)
    if (s == kKinds[i]) return static_cast<KvCacheSpecKind>(i);
  return std::nullopt;
}

// A key only some kinds take: refused on the others.
void only_for(const YamlReader& r, const YamlNode& item, const std::string& p, const char* key, bool allowed,
              const char* kinds) {
  if (item[key] && !allowed)
    r.fail(item[key], p + "." + key, std::string(key) + " is for " + kinds + " groups",
           "remove it, or change the group's kind");
}

KvCacheGroup read_group(const YamlReader& r, const YamlNode& item, const std::string& p, const Scenario& s) {
  r.expect_map(item, p, kGroupKeys);
  KvCacheGroup g;
  if (!item["kind"]) r.fail(item, p + ".kind", "missing required key `kind`", "kind: " + kind_names());
  const std::string kind = r.read_string(item["kind"], p + ".kind");
  auto k = parse_kind(kind);
  if (!k) r.fail(item["kind"], p + ".kind", "unknown KV cache group kind \"" + kind + "\"", "choose one of: " + kind_names());
  g.kind = *k;
  if (!item["block_size"]) r.fail(item, p + ".block_size", "missing required key `block_size`", "tokens per block of this group");
  g.block_size = r.read_int(item["block_size"], p + ".block_size", 1, 1LL << 24);
  const bool swa = g.kind == KvCacheSpecKind::kSlidingWindowMla, mamba = g.kind == KvCacheSpecKind::kMamba;
  only_for(r, item, p, "sliding_window", swa, "sliding_window_mla");
  only_for(r, item, p, "extra_retained_tokens", swa, "sliding_window_mla");
  for (const char* key : {"mamba_cache_mode", "num_speculative_blocks", "num_prefill_checkpoint_blocks", "prefill_checkpoint_alignment"})
    only_for(r, item, p, key, mamba, "mamba");
  if (swa) {
    if (!item["sliding_window"])
      r.fail(item, p + ".sliding_window", "missing required key `sliding_window`", "a sliding_window_mla group's window in tokens");
    g.sliding_window = r.read_int(item["sliding_window"], p + ".sliding_window", 1, 1LL << 24);
    if (item["extra_retained_tokens"])
      g.extra_retained_tokens = r.read_int(item["extra_retained_tokens"], p + ".extra_retained_tokens", 0, 1LL << 24);
  }
  if (item["tokens_per_state"]) g.tokens_per_state = r.read_int(item["tokens_per_state"], p + ".tokens_per_state", 1, 1LL << 16);
  if (mamba) {
    // model_executor/models/config.py:762-787: "align" with prefix caching, "none" without.
    g.mamba_cache_mode = s.scheduler.enable_prefix_caching ? "align" : "none";
    if (item["mamba_cache_mode"]) {
      g.mamba_cache_mode = r.read_string(item["mamba_cache_mode"], p + ".mamba_cache_mode");
      if (g.mamba_cache_mode != "none" && g.mamba_cache_mode != "align")
        r.fail(item["mamba_cache_mode"], p + ".mamba_cache_mode", "unknown mamba_cache_mode \"" + g.mamba_cache_mode + "\"",
               "choose one of: none | align");
    }
    // model_executor/layers/mamba/abstract.py:85-90: one state block per speculative token.
    g.num_speculative_blocks = s.scheduler.num_speculative_tokens;
    if (item["num_speculative_blocks"])
      g.num_speculative_blocks = r.read_int(item["num_speculative_blocks"], p + ".num_speculative_blocks", 0, 64);
    if (item["num_prefill_checkpoint_blocks"])
      g.num_prefill_checkpoint_blocks = r.read_int(item["num_prefill_checkpoint_blocks"], p + ".num_prefill_checkpoint_blocks", 0, 1);
    if (item["prefill_checkpoint_alignment"])
      g.prefill_checkpoint_alignment = r.read_int(item["prefill_checkpoint_alignment"], p + ".prefill_checkpoint_alignment", 1, 1LL << 16);
  }
  if (item["num_layers"]) g.num_layers = r.read_int(item["num_layers"], p + ".num_layers", 1, 1LL << 16);
  if (item["page_size_bytes"]) g.page_size_bytes = r.read_integer(item["page_size_bytes"], p + ".page_size_bytes", 0, 1LL << 40);
  if (item["is_eagle_group"]) g.is_eagle_group = r.read_bool(item["is_eagle_group"], p + ".is_eagle_group");
  return g;
}

}  // namespace

void read_kv_cache_groups(const YamlReader& r, const YamlNode& node, Scenario& s) {
  const std::string p = "cache.kv_cache_groups";
  r.expect_sequence(node, p);
  if (node.size() == 0) r.fail(node, p, "no KV cache groups", "list the model's groups, or leave the key out for one MLA group");
  KvCacheLayout& layout = s.scheduler.kv_cache_layout;
  layout = KvCacheLayout{};
  s.scheduler.kv_cache_groups_listed = true;
  for (std::size_t i = 0; i < node.size(); ++i) layout.groups.push_back(read_group(r, node[i], index_key(p, i), s));
}

void read_retention_interval(const YamlReader& r, const YamlNode& cache, Scenario& s) {
  const std::string p = "cache.prefix_cache_retention_interval";
  const YamlNode node = cache["prefix_cache_retention_interval"];
  if (!cache["kv_cache_groups"])
    r.fail(node, p, "prefix_cache_retention_interval without cache.kv_cache_groups",
           "it applies to sliding-window and Mamba groups: list the model's KV cache groups");
  int& interval = s.scheduler.kv_cache_layout.prefix_cache_retention_interval;
  interval = node.Scalar() == "dense" ? kDenseRetention : r.read_int(node, p, 0, 1LL << 24);
}

namespace {

// v1/core/kv_cache_coordinator.py:33-62 _validate_prefix_cache_retention_interval.
void check_retention_interval(const YamlReader& r, const YamlNode& cache, const KvCacheLayout& layout) {
  const int interval = layout.prefix_cache_retention_interval;
  if (interval <= 0) return;
  const YamlNode at = cache.IsMap() && cache["prefix_cache_retention_interval"] ? cache["prefix_cache_retention_interval"] : cache;
  const std::string p = "cache.prefix_cache_retention_interval";
  bool sparse = false;
  for (const KvCacheGroup& g : layout.groups)
    sparse = sparse || g.kind == KvCacheSpecKind::kSlidingWindowMla || g.kind == KvCacheSpecKind::kMamba;
  if (!sparse)
    r.fail(at, p, "prefix_cache_retention_interval is set but no group is sliding-window or Mamba",
           "vLLM refuses it (kv_cache_coordinator.py:44-55): set it to 0");
  if (interval % layout.scheduler_block_size != 0)
    r.fail(at, p,
           "prefix_cache_retention_interval (" + std::to_string(interval) + ") is not a multiple of the scheduler block size (" +
               std::to_string(layout.scheduler_block_size) + ")",
           "vLLM refuses it (kv_cache_coordinator.py:57-62)");
}

}  // namespace

void check_kv_cache_groups(const YamlReader& r, const YamlNode& cache, Scenario& s) {
  const std::string p = "cache.kv_cache_groups";
  // The groups' nodes when the scenario lists them; else (a layout derived from the model) `cache`.
  const YamlNode node = cache.IsMap() && cache["kv_cache_groups"] ? cache["kv_cache_groups"] : cache;
  auto item = [&](std::size_t i, const char* key) {
    const YamlNode it = node.IsSequence() ? node[i] : YamlNode();
    return it && it[key] ? it[key] : it ? it : node;
  };
  KvCacheLayout& layout = s.scheduler.kv_cache_layout;
  const SchedulerConfig& sc = s.scheduler;
  if (layout.groups.empty()) return;
  int attention = -1;
  for (std::size_t i = 0; i < layout.groups.size() && attention < 0; ++i)
    if (layout.groups[i].kind == KvCacheSpecKind::kMlaAttention) attention = static_cast<int>(i);
  if (attention < 0)
    r.fail(node, p, "no mla_attention group", "the MLA layers' group holds the attention's block table: add it");
  const KvCacheGroup& mla = layout.groups[static_cast<std::size_t>(attention)];
  if (mla.block_size != sc.block_size)
    r.fail(item(static_cast<std::size_t>(attention), "block_size"), index_key(p, static_cast<std::size_t>(attention)) + ".block_size",
           "the first mla_attention group's block_size " + std::to_string(mla.block_size) + " differs from scheduler.block_size " +
               std::to_string(sc.block_size),
           "the MLA layers' group takes the cache's block size (cache_config.block_size): make them equal");
  if (!layout.hybrid()) return;  // one MLA group: the scheduler's own manager, as without the key
  if (s.engine.profile != EngineProfile::kVllm033 && s.engine.profile != EngineProfile::kStrict)
    r.fail(node, p, "several KV cache groups need vLLM 0.33's scheduler (engine.profile vllm-0.33 or strict)",
           "the older profiles' vLLM releases are replayed with one MLA group");
  for (std::size_t i = 0; i < layout.groups.size(); ++i) {
    const KvCacheGroup& g = layout.groups[i];
    if (g.kind == KvCacheSpecKind::kMamba && (g.mamba_cache_mode == "align") != sc.enable_prefix_caching)
      r.fail(item(i, "mamba_cache_mode"), index_key(p, i) + ".mamba_cache_mode",
             "mamba_cache_mode " + g.mamba_cache_mode + (sc.enable_prefix_caching ? " with" : " without") + " prefix caching",
             "vLLM 0.33 sets \"align\" with prefix caching and \"none\" without (model_executor/models/config.py:762-787)");
  }
  long long lcm = 1;
  for (const KvCacheGroup& g : layout.groups) lcm = std::lcm(lcm, static_cast<long long>(g.block_size));
  if (lcm > (1LL << 24))
    r.fail(node, p, "the groups' block sizes have a least common multiple of " + std::to_string(lcm) + " tokens",
           "vLLM schedules in blocks of that lcm (kv_cache_utils.py:853-856): keep it at most 2^24");
  layout.scheduler_block_size = layout.hash_block_size = 0;
  resolve_kv_cache_block_sizes(layout, sc.enable_prefix_caching);
  check_retention_interval(r, cache, layout);
}

YamlValue kv_cache_groups_yaml(const Scenario& s) {
  using Style = YamlValue::Style;
  YamlValue list = YamlValue::sequence(Style::kBlock);
  for (const KvCacheGroup& g : s.scheduler.kv_cache_layout.groups) {
    YamlValue m = YamlValue::mapping(Style::kFlow);
    m.set("kind", YamlValue::plain(to_string(g.kind)));
    m.set("block_size", YamlValue::number(g.block_size));
    if (g.kind == KvCacheSpecKind::kSlidingWindowMla) {
      m.set("sliding_window", YamlValue::number(g.sliding_window));
      if (g.extra_retained_tokens) m.set("extra_retained_tokens", YamlValue::number(g.extra_retained_tokens));
    }
    if (g.tokens_per_state != 1) m.set("tokens_per_state", YamlValue::number(g.tokens_per_state));
    if (g.kind == KvCacheSpecKind::kMamba) {  // the defaults follow prefix caching and k (a shrunk trace's too)
      if (g.mamba_cache_mode != (s.scheduler.enable_prefix_caching ? "align" : "none"))
        m.set("mamba_cache_mode", YamlValue::plain(g.mamba_cache_mode));
      if (g.num_speculative_blocks != s.scheduler.num_speculative_tokens)
        m.set("num_speculative_blocks", YamlValue::number(g.num_speculative_blocks));
      if (g.num_prefill_checkpoint_blocks) m.set("num_prefill_checkpoint_blocks", YamlValue::number(g.num_prefill_checkpoint_blocks));
      if (g.prefill_checkpoint_alignment) m.set("prefill_checkpoint_alignment", YamlValue::number(g.prefill_checkpoint_alignment));
    }
    if (g.num_layers) m.set("num_layers", YamlValue::number(g.num_layers));
    if (g.page_size_bytes) m.set("page_size_bytes", YamlValue::number(g.page_size_bytes));
    if (g.is_eagle_group) m.set("is_eagle_group", YamlValue::boolean(true));
    list.push(std::move(m));
  }
  return list;
}

void write_kv_cache_layout_json(JsonWriter& w, const KvCacheLayout& layout) {
  w.key("kv_cache_groups").begin_array();
  for (const KvCacheGroup& g : layout.groups) {
    w.begin_object();
    w.key("kind").value(to_string(g.kind));
    w.key("block_size").value(g.block_size);
    w.key("sliding_window").value(g.sliding_window);
    w.key("extra_retained_tokens").value(g.extra_retained_tokens);
    w.key("tokens_per_state").value(g.tokens_per_state);
    w.key("mamba_cache_mode").value(g.mamba_cache_mode);
    w.key("num_speculative_blocks").value(g.num_speculative_blocks);
    w.key("num_prefill_checkpoint_blocks").value(g.num_prefill_checkpoint_blocks);
    w.key("prefill_checkpoint_alignment").value(g.prefill_checkpoint_alignment);
    w.key("num_layers").value(g.num_layers);
    w.key("page_size_bytes").value(g.page_size_bytes);
    w.key("is_eagle_group").value(g.is_eagle_group);
    w.end_object();
  }
  w.end_array();
  w.key("scheduler_block_size").value(layout.scheduler_block_size);
  w.key("hash_block_size").value(layout.hash_block_size);
  w.key("prefix_cache_retention_interval");  // null: None (dense)
  if (layout.prefix_cache_retention_interval == kDenseRetention) w.null();
  else w.value(layout.prefix_cache_retention_interval);
}

std::string describe_kv_cache_layout(const KvCacheLayout& layout) {
  std::string out = "kv_cache_groups:";
  for (std::size_t i = 0; i < layout.groups.size(); ++i) {
    const KvCacheGroup& g = layout.groups[i];
    out += fmt::format("{} {}/{}", i ? "," : "", to_string(g.kind), g.block_size);
    if (g.kind == KvCacheSpecKind::kSlidingWindowMla) out += fmt::format(" window={}", g.sliding_window);
    if (g.kind == KvCacheSpecKind::kMamba) out += fmt::format(" {} spec={}", g.mamba_cache_mode, g.num_speculative_blocks);
  }
  const int ri = layout.prefix_cache_retention_interval;
  return out + fmt::format(" (scheduler block {}, hash block {}, retention {})", layout.scheduler_block_size,
                           layout.hash_block_size, ri == kDenseRetention ? std::string("dense") : std::to_string(ri));
}

}  // namespace mlasim
