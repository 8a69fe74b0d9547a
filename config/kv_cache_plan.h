// A model's KV cache as vLLM 0.33 lays it out: its layers' specs, the block size the attention
// backends and the Mamba state pages settle on (Platform.update_block_size_for_backend,
// platforms/interface.py ~750-1130), the KV cache layout (resolve_kv_cache_layout,
// v1/attention/backends/utils.py ~293), the KV cache groups (get_kv_cache_groups,
// v1/core/kv_cache_planning.py ~1113), num_blocks (num_gpu_blocks_override, ~1597) and the
// scheduler and hash block sizes (resolve_kv_cache_block_sizes, v1/core/kv_cache_utils.py ~816).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/kv_cache_groups.h"
#include "config/kv_cache_layers.h"
#include "config/kv_cache_layout.h"
#include "config/scenario.h"

namespace mlasim {

struct KvCachePlan {
  KvCacheLayout layout;                      // what the scheduler reads
  std::vector<PlannedKvCacheGroup> groups;   // the same groups with every layer's spec
  std::vector<std::vector<std::string>> group_backends;  // per group: its layers' backends' names
  std::vector<KvBackendFacts> backends;      // the model's backends, in layer order
  int block_size = 16;                       // cache_config.block_size once resolved
  int mamba_block_size = 0;                  // 0: no Mamba layers
  std::optional<long long> mamba_page_size_padded;
  KvTensorLayout tensor_layout = KvTensorLayout::kLBNHC;
  std::string cache_dtype;                   // cache_config.cache_dtype once the layers are built
  std::string mamba_cache_mode = "none";
  // The kernel block size of the group holding the model's MLA attention layers
  // (prepare_kernel_block_sizes -> select_common_block_size, v1/worker/utils.py ~515-630).
  int mla_kernel_block_size = 0;
};

// Plans the KV cache of `m` (its config's layers, not model.num_layers). Errors: what vLLM 0.33
// raises on the way (a kv cache dtype DeepSeek-V4's layout cannot hold, backends that share no
// block size, an aligned block size a backend rejects, pages that cannot be unified).
Result<KvCachePlan> plan_kv_cache(const ModelConfig& m, const KvCachePlanInputs& in);

// The inputs a scenario gives (its deployment as resolved by resolve_deployment).
KvCachePlanInputs kv_cache_plan_inputs(const Scenario& s);


}  // namespace mlasim
