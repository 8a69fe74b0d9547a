// The MLA glossary dimensions of one model (docs/spec/mla.md §1) as a plain struct.
#pragma once

#include "config/model_config.h"

namespace mlasim {

struct MlaDims {
  int num_heads = 0;  // H
  int r_kv = 0;       // kv_lora_rank
  int d_n = 0;        // qk_nope_head_dim
  int d_r = 0;        // qk_rope_head_dim
  int d_v = 0;        // v_head_dim
  int d_qk() const { return d_n + d_r; }
  int latent_dim() const { return r_kv + d_r; }  // 576 with the real geometry
};

inline MlaDims mla_dims(const ModelConfig& c) {
  return {c.num_attention_heads, c.kv_lora_rank, c.qk_nope_head_dim, c.qk_rope_head_dim, c.v_head_dim};
}

}  // namespace mlasim
