// vLLM 0.33's grouping of a model's layers into KV cache groups (v1/core/kv_cache_planning.py
// get_kv_cache_groups ~1113). Their block sizes for the scheduler and the prefix cache are
// resolved on the layout (config/kv_cache_layout.h resolve_kv_cache_block_sizes).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/kv_cache_specs.h"

namespace mlasim {

// The KV cache layout (v1/kv_cache_layout.py KVCacheLayout): the order of the [L, B, H, N, C]
// dimensions in memory, outermost first.
enum class KvTensorLayout { kLBHNC, kLBNHC, kLHBNC, kBLHNC, kBLNHC, kBHLNC };
const char* to_string(KvTensorLayout layout);
bool is_block_outermost(KvTensorLayout layout);  // ~56
bool is_block_compact(KvTensorLayout layout);    // ~50

struct NamedKvCacheSpec {
  std::string name;  // the layer's name in vLLM's static_forward_context
  KvCacheSpec spec;
};

// A KVCacheGroupSpec: its layers and their specs. `uniform_type`: the group's spec is a
// UniformTypeKVCacheSpecs (one spec per layer, kv_cache_interface.py ~1310), else the layers'
// merged spec (create_kv_cache_group_specs ~190), which is `specs[0]` without `alignment`.
struct PlannedKvCacheGroup {
  std::vector<std::string> layer_names;
  std::vector<KvCacheSpec> layer_specs;  // parallel to layer_names
  bool uniform_type = false;
  int block_size() const { return layer_specs.front().block_size; }
  // The group spec's page_size_bytes: a UniformTypeKVCacheSpecs sums its layers' (~1372).
  long long page_size_bytes() const;
  bool prefix_cacheable() const;
};

// get_kv_cache_groups with vLLM 0.33's defaults (hybrid KV cache manager on, no HiSparse, no
// hidden-state layers): one uniform spec, one uniform type, block-outermost packing
// (_get_packed_kv_cache_groups ~912), else page sizes unified (~360) and grouped by spec
// (_get_kv_cache_groups_uniform_page_size ~416). Errors: what vLLM raises there.
Result<std::vector<PlannedKvCacheGroup>> get_kv_cache_groups(const std::vector<NamedKvCacheSpec>& specs,
                                                             KvTensorLayout layout);

// _approximate_gcd (~860): the chunk size in [lower_bound, max(values)] with least upward padding.
int approximate_gcd(const std::vector<int>& values, int lower_bound);

}  // namespace mlasim
