// vLLM 0.33's KV cache grouping (v1/core/kv_cache_planning.py) and block-size resolution
// (v1/core/kv_cache_utils.py).
#include "config/kv_cache_groups.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace mlasim {
namespace {

using Specs = std::vector<NamedKvCacheSpec>;

int cdiv(int a, int b) { return (a + b - 1) / b; }

std::vector<const KvCacheSpec*> pointers(const Specs& specs) {
  std::vector<const KvCacheSpec*> out;
  for (const auto& s : specs) out.push_back(&s.spec);
  return out;
}

PlannedKvCacheGroup make_group(const Specs& specs, bool uniform_type) {
  PlannedKvCacheGroup g;
  g.uniform_type = uniform_type;
  for (const auto& s : specs) {
    g.layer_names.push_back(s.name);
    g.layer_specs.push_back(s.spec);
  }
  return g;
}

// Layers in dict order, keyed by name (a KV cache spec dict's lookup).
const KvCacheSpec& spec_of(const Specs& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return s.spec;
  return specs.front().spec;
}

Specs select(const Specs& specs, const std::vector<std::string>& names) {
  Specs out;
  for (const auto& n : names) out.push_back({n, spec_of(specs, n)});
  return out;
}

// One bucket of _get_packed_kv_cache_groups: its layers, grouped by page size in first-seen order.
struct Bucket {
  Specs specs;
  std::vector<std::pair<long long, std::vector<std::string>>> page_size_layers;
  bool balanced = false;
  int max_layers_per_page_size() const {  // get_max_layers_per_page_size (~1425)
    std::size_t m = 0;
    for (const auto& [page, names] : page_size_layers) m = std::max(m, names.size());
    return static_cast<int>(m);
  }
  bool is_state(bool no_repeats) const {  // is_state_bucket (~990)
    const KvCacheSpecKind k = specs.front().spec.kind;
    if (k == KvCacheSpecKind::kMamba || k == KvCacheSpecKind::kCircularBuffer) return true;
    return no_repeats && k == KvCacheSpecKind::kSlidingWindowMla;
  }
};

std::vector<Bucket> packed_buckets(const Specs& specs) {
  std::vector<Bucket> buckets;
  for (const auto& s : specs) {
    bool placed = false;
    for (Bucket& b : buckets) {
      Specs candidate = b.specs;
      candidate.push_back(s);
      if (is_uniform_type(pointers(candidate))) {
        b.specs.push_back(s);
        placed = true;
        break;
      }
    }
    if (!placed) buckets.push_back({{s}, {}, false});
  }
  for (Bucket& b : buckets) {
    for (const auto& s : b.specs) {
      const long long page = s.spec.page_size_bytes();
      auto it = std::find_if(b.page_size_layers.begin(), b.page_size_layers.end(),
                             [&](const auto& p) { return p.first == page; });
      if (it == b.page_size_layers.end()) b.page_size_layers.push_back({page, {s.name}});
      else it->second.push_back(s.name);
    }
    std::vector<std::size_t> counts;
    for (const auto& [page, names] : b.page_size_layers) counts.push_back(names.size());
    b.balanced = std::all_of(counts.begin(), counts.end(), [&](std::size_t c) { return c == counts[0]; });
  }
  return buckets;
}

// The groups one bucket splits into: pattern repeats i, i + n, i + 2n, ... (~1030-1041).
void split_bucket(const Bucket& b, int num_groups, std::vector<PlannedKvCacheGroup>& out) {
  if (num_groups == 1) {
    out.push_back(make_group(b.specs, true));
    return;
  }
  std::size_t repeats = b.page_size_layers.front().second.size();
  for (const auto& [page, names] : b.page_size_layers) repeats = std::min(repeats, names.size());  // zip(*...)
  for (int i = 0; i < num_groups; ++i) {
    std::vector<std::string> names;
    for (std::size_t r = i; r < repeats; r += num_groups)
      for (const auto& [page, layer_names] : b.page_size_layers) names.push_back(layer_names[r]);
    out.push_back(make_group(select(b.specs, names), true));
  }
}

// _get_packed_kv_cache_groups (~912-1041) for a block-outermost layout with mixed page sizes.
std::vector<PlannedKvCacheGroup> packed_groups(const Specs& specs) {
  const std::vector<Bucket> buckets = packed_buckets(specs);
  int min_repeats = 0;
  std::vector<int> balanced_repeats;
  for (const Bucket& b : buckets) {
    if (!b.balanced) continue;
    balanced_repeats.push_back(b.max_layers_per_page_size());
    if (b.page_size_layers.size() > 1) min_repeats = std::max(min_repeats, b.max_layers_per_page_size());
  }
  const int repeats_per_group = min_repeats ? approximate_gcd(balanced_repeats, min_repeats) : 0;
  auto num_groups_for = [&](const Bucket& b) {
    return b.balanced && repeats_per_group ? cdiv(b.max_layers_per_page_size(), repeats_per_group) : 1;
  };
  auto widest_group_bytes = [](const Bucket& b, int n) {
    long long bytes = 0;
    for (const auto& [page, names] : b.page_size_layers) bytes += cdiv(static_cast<int>(names.size()), n) * page;
    return bytes;
  };
  long long anchor = 0;
  for (const Bucket& b : buckets)
    anchor = std::max(anchor, widest_group_bytes(b, b.is_state(!repeats_per_group) ? static_cast<int>(b.specs.size())
                                                                                   : num_groups_for(b)));
  std::vector<PlannedKvCacheGroup> groups;
  for (const Bucket& b : buckets) {
    int num_groups = num_groups_for(b);
    if (anchor && b.is_state(!repeats_per_group)) {
      const long long per_block = std::max(anchor / b.specs.front().spec.page_size_bytes(), 1LL);
      num_groups = std::max(num_groups, static_cast<int>((static_cast<long long>(b.specs.size()) + per_block - 1) / per_block));
    }
    split_bucket(b, num_groups, groups);
  }
  return groups;
}

// unify_kv_cache_spec_page_size (~360-414).
Result<Specs> unify_page_sizes(const Specs& specs) {
  long long max_page = 0;
  for (const auto& s : specs) max_page = std::max(max_page, s.spec.page_size_bytes());
  Specs out;
  for (const auto& s : specs) {
    const long long page = s.spec.page_size_bytes();
    KvCacheSpec spec = s.spec;
    if (page == max_page) {
    } else if (spec.kind == KvCacheSpecKind::kMamba) {
      spec.page_size_padded = max_page;
    } else if (max_page % page == 0) {
      spec = spec.with_block_size(spec.block_size * static_cast<int>(max_page / page));
    } else if (spec.kind != KvCacheSpecKind::kMlaAttention) {
      spec.page_size_padded = max_page;
    } else {
      Error e;
      e.message = "Layer " + s.name + ": page size is not divisible by the maximum page size and cannot be padded. "
                  "Padding is only supported for non-MLA attention layers.";
      return e;
    }
    if (spec.page_size_bytes() != max_page) {
      Error e;
      e.message = "Layer " + s.name + ": unify_kv_cache_spec_page_size's page " + std::to_string(spec.page_size_bytes()) +
                  " != " + std::to_string(max_page) + " (an AssertionError in vLLM, kv_cache_planning.py ~410)";
      return e;
    }
    out.push_back({s.name, spec});
  }
  return out;
}

// _get_kv_cache_groups_uniform_page_size (~416-540).
std::vector<PlannedKvCacheGroup> uniform_page_size_groups(const Specs& specs) {
  std::vector<std::pair<KvCacheSpec, std::vector<std::string>>> same_type;  // dict keyed by spec
  for (const auto& s : specs) {
    auto it = std::find_if(same_type.begin(), same_type.end(), [&](const auto& p) { return p.first == s.spec; });
    if (it == same_type.end()) same_type.push_back({s.spec, {s.name}});
    else it->second.push_back(s.name);
  }
  std::vector<std::vector<std::string>> layer_buckets;
  std::vector<std::vector<KvCacheSpec>> spec_buckets;
  for (const auto& [spec, names] : same_type) {
    bool merged = false;
    for (std::size_t b = 0; b < layer_buckets.size() && !merged; ++b) {
      std::vector<const KvCacheSpec*> candidate;
      for (const auto& x : spec_buckets[b]) candidate.push_back(&x);
      candidate.push_back(&spec);
      if (!specs_merge(candidate)) continue;
      layer_buckets[b].insert(layer_buckets[b].end(), names.begin(), names.end());
      spec_buckets[b].push_back(spec);
      merged = true;
    }
    if (!merged) {
      layer_buckets.push_back(names);
      spec_buckets.push_back({spec});
    }
  }
  std::size_t min_layers = layer_buckets.front().size(), max_layers = 0;
  for (const auto& l : layer_buckets) min_layers = std::min(min_layers, l.size()), max_layers = std::max(max_layers, l.size());
  const int group_size = static_cast<int>(2 * max_layers < 3 * min_layers ? max_layers : min_layers);  // max < min * 1.5
  std::vector<PlannedKvCacheGroup> groups;
  for (const auto& layers : layer_buckets) {
    const int num_groups = cdiv(static_cast<int>(layers.size()), group_size);
    for (int i = 0; i < num_groups; ++i) {
      std::vector<std::string> names;
      for (std::size_t j = i; j < layers.size(); j += num_groups) names.push_back(layers[j]);
      groups.push_back(make_group(select(specs, names), false));
    }
  }
  return groups;
}

}  // namespace

const char* to_string(KvTensorLayout layout) {
  switch (layout) {
    case KvTensorLayout::kLBHNC: return "LBHNC";
    case KvTensorLayout::kLBNHC: return "LBNHC";
    case KvTensorLayout::kLHBNC: return "LHBNC";
    case KvTensorLayout::kBLHNC: return "BLHNC";
    case KvTensorLayout::kBLNHC: return "BLNHC";
    case KvTensorLayout::kBHLNC: return "BHLNC";
  }
  return "";
}

bool is_block_outermost(KvTensorLayout l) {
  return l == KvTensorLayout::kBLHNC || l == KvTensorLayout::kBLNHC || l == KvTensorLayout::kBHLNC;
}

bool is_block_compact(KvTensorLayout l) { return l != KvTensorLayout::kLHBNC && l != KvTensorLayout::kBHLNC; }

long long PlannedKvCacheGroup::page_size_bytes() const {
  if (!uniform_type) return layer_specs.front().page_size_bytes();
  long long total = 0;
  for (const auto& s : layer_specs) total += s.page_size_bytes();
  return total;
}

bool PlannedKvCacheGroup::prefix_cacheable() const {
  return std::all_of(layer_specs.begin(), layer_specs.end(), [](const KvCacheSpec& s) { return s.prefix_cacheable(); });
}

int approximate_gcd(const std::vector<int>& values, int lower_bound) {
  const int min_d = std::max(1, lower_bound);
  const int max_d = *std::max_element(values.begin(), values.end());
  if (min_d > max_d) return min_d;
  int best_d = min_d;
  long long best_pad = -1;
  for (int d = min_d; d <= max_d; ++d) {
    long long pad = 0;
    for (int x : values) pad += (d - x % d) % d;
    if (best_pad < 0 || pad < best_pad || (pad == best_pad && d > best_d)) best_pad = pad, best_d = d;
  }
  return best_d;
}

Result<std::vector<PlannedKvCacheGroup>> get_kv_cache_groups(const Specs& specs, KvTensorLayout layout) {
  if (specs.empty()) return std::vector<PlannedKvCacheGroup>{};
  const auto all = pointers(specs);
  if (specs_merge(all)) return std::vector<PlannedKvCacheGroup>{make_group(specs, false)};  // ~1140
  if (is_uniform_type(all)) return std::vector<PlannedKvCacheGroup>{make_group(specs, true)};  // ~1145
  bool mixed_pages = false;
  for (const auto& s : specs) mixed_pages |= s.spec.page_size_bytes() != specs[0].spec.page_size_bytes();
  if (is_block_outermost(layout) && mixed_pages) return packed_groups(specs);  // ~1163
  auto unified = unify_page_sizes(specs);  // the full-allocation fallback needs regular SWA: none here
  if (!unified) return unified.error();
  return uniform_page_size_groups(unified.value());
}

}  // namespace mlasim
