// Tensor-parallel sharding of the MLA model (docs/spec/mla.md §3, vLLM): heads and MLP columns split
// evenly over ranks; kv_a, q_a and the latent cache replicated; partial o_proj / down_proj
// outputs summed in rank order.
#pragma once

#include <string>

#include "config/model_config.h"

namespace mlasim {

inline constexpr int kMaxTensorParallelSize = 8;

struct TpShard {
  int rank = 0, size = 1;
  int head_begin = 0, head_end = 0;  // heads [head_begin, head_end): q/q_b_proj and kv_b_proj rows, o_proj columns
  int mlp_begin = 0, mlp_end = 0;    // gate/up rows and down_proj columns [mlp_begin, mlp_end)
};

// "" when the model can run at this TP size, else why not (1..8, H and intermediate_size divisible).
std::string tp_support_error(const ModelConfig& config, int tp);

// Rank `rank` of `tp`; tp_support_error(config, tp) must be "".
TpShard tp_shard(const ModelConfig& config, int tp, int rank);

}  // namespace mlasim
