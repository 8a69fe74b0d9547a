// Even head and MLP sharding over tensor-parallel ranks.
#include "model/tp_shard.h"

#include "base/check.h"

namespace mlasim {

std::string tp_support_error(const ModelConfig& c, int tp) {
  if (tp < 1 || tp > kMaxTensorParallelSize) return "tensor_parallel_size " + std::to_string(tp) + " is outside 1..8";
  if (c.num_attention_heads % tp != 0)
    return "num_attention_heads " + std::to_string(c.num_attention_heads) + " is not divisible by tensor_parallel_size " +
           std::to_string(tp);
  if (c.intermediate_size % tp != 0)
    return "intermediate_size " + std::to_string(c.intermediate_size) + " is not divisible by tensor_parallel_size " +
           std::to_string(tp);
  return "";
}

TpShard tp_shard(const ModelConfig& c, int tp, int rank) {
  const std::string err = tp_support_error(c, tp);
  MLASIM_CHECK(err.empty(), err);
  MLASIM_CHECK(rank >= 0 && rank < tp, "rank outside the tensor-parallel group");
  const int heads = c.num_attention_heads / tp, mlp = c.intermediate_size / tp;
  return {rank, tp, rank * heads, (rank + 1) * heads, rank * mlp, (rank + 1) * mlp};
}

}  // namespace mlasim
