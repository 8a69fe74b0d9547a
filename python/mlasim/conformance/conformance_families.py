"""vLLM 0.33's KV cache layout of a hybrid MLA model, built the way EngineCore builds it
(v1/engine/core.py:250-370): every layer's KV cache spec from the model's own layer classes
(their get_kv_cache_spec, called on stand-ins that hold only the attributes it reads: no weights,
no GPU), the layer kinds from the model's transformers config class defaults, then vLLM's own
resolve_kv_cache_layout, get_global_kv_cache_groups, get_kv_cache_configs (with
num_gpu_blocks_override: its start-up check), generate_scheduler_kv_cache_config and
resolve_kv_cache_block_sizes. The result is the KVCacheConfig vLLM's Scheduler gets, and the same
groups as mlasim's `cache.kv_cache_groups`.

Families (the deployment vLLM 0.33 gives them on an H100/H200):
  deepseek-v4   DeepseekV4Config(): 43 layers, 23 heavily (128) and 20 compressed (4) attention;
                each layer's SWA cache (sparse_swa.py:76-164), compressed MLA (attention.py:860-883),
                compressor state (compressor.py:139-196), and for the compressed ones the indexer's
                cache (attention.py:886-924) and compressor; fp8_ds_mla, block size 256; the indexer
                backend's block-outer layouts (indexer.py:346-350).
  kimi-linear   KimiLinearConfig(): 27 layers, 6 MLA (576-byte latent rows), 21 KDA (MambaSpec).
  glm5-next     Glm5NextTextConfig(): 45 layers, 11 indexed MLA attention (MLA, kpool indexer cache
                with tokens_per_state = index_kpool, the kpool tail's circular buffer,
                glm5next/common/attention.py:79-178), 34 KDA; the tail backend's BLHNC layout.
  bailing-hybrid  BailingHybridConfig(), served as BailingMoeV3ForCausalLM: 42 layers, every 6th MLA
                (at `.self_attn.attn`), the others KDA without prefill checkpoints
                (model_executor/models/bailing_moe_v3.py:131-137, 1229-1263).
KDA layers on FlashKDA (H100/H200, bf16, head_dim 128) export prefill checkpoints: one block,
alignment 16 (glm5next/common/kda.py:168-176, kimi_k3/nvidia/kda.py:902-909,
kda_checkpoint.py:9-10); Mamba mode "align" with prefix caching, "none" (block = max_model_len)
without (model_executor/models/config.py:750-787). The KDA state stand-in keeps the real kind and
dtypes with fewer heads, so its page fits the attention page of the trace's block size, as the
platform's alignment makes it (platforms/interface.py:940-1135 pads the Mamba page to it); the
scheduler reads block sizes and kinds, not page bytes. A drafter's own layers (MTP) are not added.
"""
from __future__ import annotations

import types
from typing import Any

FAMILIES = ("deepseek-v4", "kimi-linear", "glm5-next", "bailing-hybrid")
# The block size vLLM 0.33 gives each family's attention (cache_config.block_size): DeepSeek-V4's
# sparse SWA backend prefers 256 (sparse_swa.py:182-184); MLA next to Mamba is a multiple of 128
# (platforms/interface.py:1083-1088).
BLOCK_SIZE = {"deepseek-v4": 256, "kimi-linear": 128, "glm5-next": 128, "bailing-hybrid": 128}
KIND = {"MLAAttentionSpec": "mla_attention", "SlidingWindowMLASpec": "sliding_window_mla", "MambaSpec": "mamba",
        "CircularBufferSpec": "circular_buffer"}


def _dsv4_specs(vc, torch) -> tuple[dict[str, Any], list[str]]:
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config
    from vllm.models.deepseek_v4.attention import DeepseekV4Attention, DeepseekV4IndexerCache
    from vllm.models.deepseek_v4.compressor import CompressorStateCache
    from vllm.v1.attention.backends.mla.sparse_swa import DeepseekV4SWACache

    cfg, cc = DeepseekV4Config(), vc.cache_config
    cc.cache_dtype = "fp8_ds_mla"  # attention.py:94-123: FlashMLA's fp8_ds_mla layout

    def compressor(ratio: int, head_dim: int):  # compressor.py:155-177, 282-283
        coff = 1 + (ratio == 4)
        s = types.SimpleNamespace(block_size=4 if ratio == 4 else 8, state_dim=2 * coff * head_dim, dtype=torch.float32,
                                  sliding_window=coff * ratio)
        return CompressorStateCache.get_kv_cache_spec(s, vc)

    specs: dict[str, Any] = {}
    swa = types.SimpleNamespace(bounded_replay=False, block_size=64, head_dim=cfg.head_dim, dtype=torch.uint8,
                                window_size=cfg.sliding_window, cache_config=cc, packed_bytes_per_token=584,
                                packed_page_alignment=576, packed_block_stride_alignment=None)
    for i, layer_type in enumerate(cfg.layer_types):
        ratio = cfg.compress_rates[layer_type]
        p = f"model.layers.{i}.attn"
        specs[f"{p}.swa_cache"] = DeepseekV4SWACache.get_kv_cache_spec(swa, vc)
        attn = types.SimpleNamespace(compress_ratio=ratio, kv_cache_dtype="fp8_ds_mla", head_dim=cfg.head_dim,
                                     kv_cache_torch_dtype=torch.uint8)
        specs[p] = DeepseekV4Attention.get_kv_cache_spec(attn, vc)
        specs[f"{p}.compressor.state_cache"] = compressor(ratio, cfg.head_dim)
        if ratio == 4:  # attention.py:302-318: only compressed sparse attention has the indexer
            index = types.SimpleNamespace(cache_config=cc, head_dim=cfg.index_head_dim + cfg.index_head_dim // 128 * 4,
                                          dtype=torch.uint8, compress_ratio=ratio)
            specs[f"{p}.indexer.k_cache"] = DeepseekV4IndexerCache.get_kv_cache_spec(index, vc)
            specs[f"{p}.indexer.compressor.state_cache"] = compressor(ratio, cfg.index_head_dim)
    return specs, ["BLHNC", "BLNHC"]


def _kda_spec(vc, torch, num_spec: int, checkpoints: bool = True):
    """A KDA layer's MambaSpec (MambaBase.get_kv_cache_spec, abstract.py:71-90, with FlashKDA's
    checkpoint fields), its state shape from vLLM's calculator with two heads of the largest head
    dim (64 down to 4) whose page the attention page holds."""
    from dataclasses import replace

    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateShapeCalculator
    from vllm.v1.kv_cache_interface import MambaSpec

    cc = vc.cache_config
    for head_dim in (64, 32, 16, 8, 4):
        shapes = MambaStateShapeCalculator.kda_state_shape(1, 2, head_dim, conv_kernel_size=4, num_spec=num_spec)
        spec = MambaSpec(shapes=shapes, dtypes=(torch.bfloat16, torch.float32), block_size=cc.mamba_block_size,
                         mamba_cache_mode=cc.mamba_cache_mode, num_speculative_blocks=num_spec)
        if spec.page_size_bytes <= cc.mamba_page_size_padded:
            break
    spec = replace(spec, page_size_padded=cc.mamba_page_size_padded)
    if not checkpoints:
        return spec
    return replace(spec, num_prefill_checkpoint_blocks=1, prefill_checkpoint_alignment=16)


def _mla(vc, torch, head_size: int):
    from vllm.v1.kv_cache_interface import MLAAttentionSpec

    return MLAAttentionSpec(block_size=vc.cache_config.block_size, num_kv_heads=1, head_size=head_size, dtype=torch.bfloat16)


def _kimi_specs(vc, torch, num_spec: int) -> tuple[dict[str, Any], list[str]]:
    from transformers.models.kimi_linear.configuration_kimi_linear import KimiLinearConfig

    cfg = KimiLinearConfig()
    mla = _mla(vc, torch, cfg.kv_lora_rank + cfg.qk_rope_head_dim)
    _align_mamba(vc, mla)
    specs = {}
    for i, t in enumerate(cfg.layer_types):
        if t == "full_attention":
            specs[f"model.layers.{i}.self_attn.attn"] = mla
        else:
            specs[f"model.layers.{i}.self_attn"] = _kda_spec(vc, torch, num_spec)
    return specs, ["LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC"]


def _bailing_specs(vc, torch, num_spec: int) -> tuple[dict[str, Any], list[str]]:
    from transformers.models.bailing_hybrid.configuration_bailing_hybrid import BailingHybridConfig

    cfg = BailingHybridConfig()
    g, n = cfg.layer_group_size, cfg.num_hidden_layers
    mla = _mla(vc, torch, cfg.kv_lora_rank + cfg.qk_rope_head_dim)
    _align_mamba(vc, mla)
    specs = {}
    for i in range(n):
        p = f"model.layers.{i}.self_attn"
        if not ((i + 1) % g == 0 or i >= n // g * g):  # bailing_moe_v3.py:131-137 _is_kda_layer
            specs[p] = _kda_spec(vc, torch, num_spec, checkpoints=False)
        else:
            specs[f"{p}.attn"] = mla
    return specs, ["LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC"]


def _glm_specs(vc, torch, num_spec: int) -> tuple[dict[str, Any], list[str]]:
    from dataclasses import replace

    from transformers.models.glm5_next.configuration_glm5_next import Glm5NextTextConfig
    from vllm.model_executor.models.deepseek_v2 import DeepseekV32IndexerCache
    from vllm.models.glm5next.common.attention import Glm5NextTailCache

    cfg, cc = Glm5NextTextConfig(), vc.cache_config
    mla = _mla(vc, torch, cfg.kv_lora_rank + cfg.qk_rope_head_dim)
    _align_mamba(vc, mla)
    vc_spec = types.SimpleNamespace(num_speculative_tokens=num_spec)  # what the tail's ring reads
    idx_head = cfg.index_head_dim + cfg.index_head_dim // 128 * 4  # attention.py:260-266: fp8 + fp32 scales
    specs = {}
    for i, t in enumerate(cfg.layer_types):
        p = f"model.layers.{i}.self_attn"
        if t == "linear_attention":
            specs[p] = _kda_spec(vc, torch, num_spec)
            continue
        specs[f"{p}.attn"] = mla
        # Glm5NextIndexerCache.get_kv_cache_spec (attention.py:112-119): its base's spec with
        # tokens_per_state = index_kpool.
        index = types.SimpleNamespace(cache_config=cc, head_dim=idx_head, dtype=torch.uint8)
        base = DeepseekV32IndexerCache.get_kv_cache_spec(index, vc)
        specs[f"{p}.indexer.k_cache"] = replace(base, tokens_per_state=cfg.index_kpool)
        tail = types.SimpleNamespace(cache_config=cc, head_dim=cfg.index_head_dim, _index_kpool=cfg.index_kpool)
        specs[f"{p}.indexer.tail_cache"] = Glm5NextTailCache.get_kv_cache_spec(tail, vc_spec)
    return specs, ["BLHNC"]


def _align_mamba(vc, mla) -> None:
    """The platform's hybrid alignment (platforms/interface.py:1112-1135): Mamba blocks follow the
    attention's in "align" mode, and the Mamba page is padded to the attention page."""
    cc = vc.cache_config
    cc.mamba_page_size_padded = mla.page_size_bytes


def layer_specs(family: str, vc, num_spec: int) -> tuple[dict[str, Any], list[str]]:
    import torch

    if family == "deepseek-v4":
        return _dsv4_specs(vc, torch)
    if family == "kimi-linear":
        return _kimi_specs(vc, torch, num_spec)
    if family == "bailing-hybrid":
        return _bailing_specs(vc, torch, num_spec)
    return _glm_specs(vc, torch, num_spec)


def first_spec(spec):
    return next(iter(spec.kv_cache_specs.values())) if hasattr(spec, "kv_cache_specs") else spec


def group_entry(group, spec) -> dict[str, Any]:
    """One group as mlasim's `cache.kv_cache_groups` takes it (the scheduler's first spec)."""
    kind = KIND[type(spec).__name__]
    e: dict[str, Any] = {"kind": kind, "block_size": spec.block_size}
    if kind == "sliding_window_mla":
        e["sliding_window"] = spec.sliding_window
        if spec.extra_retained_tokens:
            e["extra_retained_tokens"] = spec.extra_retained_tokens
    if kind != "mamba" and spec.tokens_per_state != 1:
        e["tokens_per_state"] = int(spec.tokens_per_state)
    if kind == "mamba":
        e.update(mamba_cache_mode=spec.mamba_cache_mode, num_speculative_blocks=spec.num_speculative_blocks,
                 num_prefill_checkpoint_blocks=spec.num_prefill_checkpoint_blocks)
        if spec.prefill_checkpoint_alignment:
            e["prefill_checkpoint_alignment"] = spec.prefill_checkpoint_alignment
    e["num_layers"] = len(group.layer_names)
    e["page_size_bytes"] = spec.page_size_bytes
    if group.is_eagle_group:
        e["is_eagle_group"] = True
    return e


def build(family: str, vc, num_blocks: int, num_spec: int, V) -> tuple[Any, int, int, list[dict[str, Any]]]:
    """EngineCore's planning for the family: (the scheduler's KVCacheConfig, scheduler block size,
    hash block size, the groups for mlasim). vLLM's start-up check raises ValueError."""
    from vllm.v1.core.kv_cache_planning import get_global_kv_cache_groups
    from vllm.v1.core.kv_cache_utils import generate_scheduler_kv_cache_config, resolve_kv_cache_block_sizes
    from vllm.v1.core.single_type_kv_cache_manager import register_all_kvcache_specs

    cc = vc.cache_config
    register_all_kvcache_specs(vc)
    specs, layouts = layer_specs(family, vc, num_spec)
    cc.kv_cache_layout = None
    V.resolve_kv_cache_layout(vc, [layouts], list(specs.values()))
    groups = get_global_kv_cache_groups(vc, [specs])
    cc.num_gpu_blocks_override = num_blocks
    try:
        configs = V.get_kv_cache_configs(vc, [specs], [1 << 50], groups)
    finally:
        cc.num_gpu_blocks_override = None
    kc = generate_scheduler_kv_cache_config(configs)
    cc.num_gpu_blocks = kc.num_blocks
    # core.py:341-349: the smallest prefix-cacheable group's block size becomes cache_config's.
    cc.block_size = min(g.kv_cache_spec.block_size for g in kc.kv_cache_groups if g.kv_cache_spec.prefix_cacheable)
    sbs, hbs = resolve_kv_cache_block_sizes(kc, vc)
    entries = [group_entry(g, g.kv_cache_spec) for g in kc.kv_cache_groups]
    return kc, sbs, hbs, entries
