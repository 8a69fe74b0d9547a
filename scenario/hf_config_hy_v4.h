// HY-V4's config.json (vLLM's HYV4Config, transformers_utils/configs/hy_v4.py) past the MLA
// dimensions every family shares: which layers are DSA, their indexer layers, the learnable sink.
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"
#include "scenario/json_field_reader.h"

namespace mlasim {

// HYV4MLAAttention's per-layer sparse flag (hy_v4/nvidia/attention.py ~323-330): index_topk present
// and layer_types[i] one of _SPARSE_LAYER_TYPES (~52-58), after HYV4Config.__post_init__ folds
// "sparse_attention" and "sparse" into "deepseek_sparse_attention" and transformers remaps that to
// "indexed_attention". layer_types absent or null (the class default): every layer dense MLA, so
// out.index_topk is cleared (hasattr(config, "index_topk") alone does not make HY-V4 sparse).
// learnable_sink (default true) into out.learnable_sink. For DSA layers, indexer_types as
// compute_skip_topk_layers checks it (~60-103) and q_lora_rank set (the indexer's assert, ~432).
// Throws LoadError (file, line, column, key) for what vLLM refuses, and for DSA beside dense MLA
// layers, which vLLM serves with a backend per layer kind and mlasim does not route.
void read_hy_v4_attention(const JsonFieldReader& r, const JsonNode& root, const JsonNode& arch_at, ModelConfig& out,
                          std::vector<std::string>& notes);

}  // namespace mlasim
