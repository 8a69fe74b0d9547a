#!/usr/bin/env python3
"""Writes the config.json of each hybrid MLA family vLLM 0.33 serves with several KV cache groups
(scenarios/hf_configs/{bailing-hybrid,deepseek-v4,kimi-linear,glm-5-next,glm-5-next-text}.json), from the config classes the
vLLM 0.33 venv holds (transformers 5.20), with `architectures` as vLLM's model registry names the
class (model_executor/models/registry.py ~99, ~127, ~148).

  deepseek-v4   transformers DeepseekV4Config() (models/deepseek_v4/configuration_deepseek_v4.py,
                docstring checkpoint deepseek-ai/DeepSeek-V4-Flash-Base), to_dict().
  glm-5-next    transformers Glm5NextTextConfig() (models/glm5_next/configuration_glm5_next.py,
                docstring checkpoint zai-org/GLM-5.3-Flash), to_dict(), written flat with
                model_type glm5_next (Glm5NextConfig takes a flat text-only checkpoint as its
                text_config, configuration_glm5_next.py ~307).
  glm-5-next-text  the same, with the class's own model_type glm5_next_text (Glm5NextTextConfig,
                which vLLM 0.33's is_deepseek_mla lists beside glm5_next).
  bailing-hybrid  transformers BailingHybridConfig() (models/bailing_hybrid/configuration_bailing_hybrid.py,
                docstring checkpoint inclusionAI/Ling-3.0-Flash), to_dict(), architectures
                BailingMoeV3ForCausalLM (the KDA model vLLM serves for it: model_executor/models/
                bailing_moe_v3.py reads layer_group_size and kda_lower_bound), and no_kda_lora true,
                which vLLM's KDA layer requires (bailing_moe_v3.py ~687) and the class lacks.
  kimi-linear   transformers KimiLinearConfig() dimensions (models/kimi_linear/
                configuration_kimi_linear.py, docstring checkpoint
                moonshotai/Kimi-Linear-48B-A3B-Instruct) in the checkpoint's own keys, which vLLM
                reads with its own KimiLinearConfig (transformers_utils/configs/kimi_linear.py,
                registered for kimi_linear in transformers_utils/config.py ~142):
                linear_attn_config {kda_layers, full_attn_layers (1-based), num_heads, head_dim,
                short_conv_kernel_size}, model_max_length, num_experts, num_experts_per_token,
                num_shared_experts, moe_renormalize, num_expert_group, mla_use_nope true (the MLA
                layers are NoPE-only: vllm/models/kimi_k3/nvidia/model.py ~744 asserts it). The
                full-attention layers are the published checkpoint's (1-based 4, 8, ..., 24, 27);
                transformers' default layer_types puts them at 0-based 4, 8, ..., 24 instead.

The generic PreTrainedConfig keys that describe no model (id2label, label2id, return_dict,
output_attentions, output_hidden_states, chunk_size_feed_forward, problem_type,
is_encoder_decoder, _name_or_path) are left out. Run with the venv's Python:
  /root/vllm-venv/bin/python tools/conformance/hybrid_hf_configs.py [OUT_DIR]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from mlasim._data import data_root, default_binary

REPO = data_root()
GENERIC_KEYS = {
    "_name_or_path",
    "chunk_size_feed_forward",
    "id2label",
    "label2id",
    "is_encoder_decoder",
    "output_attentions",
    "output_hidden_states",
    "problem_type",
    "return_dict",
}
KIMI_LINEAR_FULL_ATTN_LAYERS = [4, 8, 12, 16, 20, 24, 27]


def model_keys(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in GENERIC_KEYS}


def deepseek_v4() -> dict:
    from transformers import DeepseekV4Config

    return model_keys(DeepseekV4Config(architectures=["DeepseekV4ForCausalLM"]).to_dict())


def glm5_next() -> dict:
    from transformers import Glm5NextTextConfig

    d = model_keys(Glm5NextTextConfig().to_dict())
    d["architectures"] = ["Glm5NextForCausalLM"]
    d["model_type"] = "glm5_next"
    return dict(sorted(d.items()))


def glm5_next_text() -> dict:
    from transformers import Glm5NextTextConfig

    d = model_keys(Glm5NextTextConfig().to_dict())
    d["architectures"] = ["Glm5NextForCausalLM"]
    return dict(sorted(d.items()))


def bailing_hybrid() -> dict:
    from transformers import BailingHybridConfig

    d = model_keys(BailingHybridConfig().to_dict())
    d["architectures"] = ["BailingMoeV3ForCausalLM"]
    d["no_kda_lora"] = True  # BailingMoeV3KimiDeltaAttention raises without it (bailing_moe_v3.py ~687)
    return dict(sorted(d.items()))


def kimi_linear() -> dict:
    from transformers import KimiLinearConfig

    c = KimiLinearConfig()
    n = c.num_hidden_layers
    kda = [i for i in range(1, n + 1) if i not in KIMI_LINEAR_FULL_ATTN_LAYERS]
    d = {
        "architectures": ["KimiLinearForCausalLM"],
        "model_type": "kimi_linear",
        "vocab_size": c.vocab_size,
        "hidden_size": c.hidden_size,
        "intermediate_size": c.intermediate_size,
        "moe_intermediate_size": c.moe_intermediate_size,
        "num_hidden_layers": n,
        "num_attention_heads": c.num_attention_heads,
        "num_key_value_heads": c.num_key_value_heads,
        "hidden_act": c.hidden_act,
        "initializer_range": c.initializer_range,
        "rms_norm_eps": c.rms_norm_eps,
        "model_max_length": c.model_max_length,
        "pad_token_id": c.pad_token_id,
        "bos_token_id": c.bos_token_id,
        "eos_token_id": c.eos_token_id,
        "tie_word_embeddings": c.tie_word_embeddings,
        "rope_theta": 10000.0,
        "kv_lora_rank": c.kv_lora_rank,
        "q_lora_rank": c.q_lora_rank,
        "qk_nope_head_dim": c.qk_nope_head_dim,
        "qk_rope_head_dim": c.qk_rope_head_dim,
        "v_head_dim": c.v_head_dim,
        "mla_use_nope": True,
        "num_experts": c.num_local_experts,
        "num_experts_per_token": c.num_experts_per_tok,
        "num_shared_experts": c.n_shared_experts,
        "moe_renormalize": c.norm_topk_prob,
        "moe_router_activation_func": "sigmoid",
        "routed_scaling_factor": c.routed_scaling_factor,
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
        "use_grouped_topk": True,
        "num_expert_group": c.n_group,
        "topk_group": c.topk_group,
        "num_nextn_predict_layers": 0,
        "linear_attn_config": {
            "kda_layers": kda,
            "full_attn_layers": KIMI_LINEAR_FULL_ATTN_LAYERS,
            "num_heads": c.linear_num_heads,
            "head_dim": c.linear_head_dim,
            "short_conv_kernel_size": c.linear_conv_kernel_dim,
        },
        "torch_dtype": "bfloat16",
    }
    return d


FAMILIES = {"bailing-hybrid": bailing_hybrid, "deepseek-v4": deepseek_v4, "glm-5-next": glm5_next,
            "glm-5-next-text": glm5_next_text, "kimi-linear": kimi_linear}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "scenarios/hf_configs"
    for name, make in FAMILIES.items():
        (out / f"{name}.json").write_text(json.dumps(make(), indent=2) + "\n")
        print(out / f"{name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
