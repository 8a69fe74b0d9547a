#!/usr/bin/env python3
"""Checks the KV cache groups `mlasim deploy --json` reports for the hybrid MLA families
(DeepSeek-V4, Kimi-Linear, GLM-5-Next) against vLLM 0.33.0's own code, cell by cell, on a
CPU-only machine.

Optional tool, not run in CI. Runs under the Python of a venv holding vllm==0.33.0 (default
~/vllm-venv; it re-executes itself there). It reuses vllm_selection.py's stand-ins for a CPU machine
(a libcuda.so.1 without a device, Triton's driver reported active, the CUDA platform with the cell's
compute capability; see that file's docstring), and adds one: while vLLM's flash-linear-attention
ops are imported (models/kimi_k3, models/glm5next), Triton's active driver is a stand-in that has no
current target, so the module-level platform probe (third_party/flash_linear_attention/ops/utils.py
~121) answers "cpu" instead of asserting that libcuda.so is missing.

Per cell, through vLLM's real code:
  config   EngineArgs(...).create_engine_config() with num_gpu_blocks_override (the blocks mlasim
           reports): the transformers / vLLM config class, verify_and_update_config (GLM-5-Next's
           auto -> fp8 on SM10x), MambaModelConfig's cache mode and mamba block size.
  layers   the model's KV-cache-holding layers, built as the model builds them but without weights:
           the cache layers that are small modules are vLLM's own classes constructed for real
           (DeepseekV4SWACache, CompressorStateCache, DeepseekV4IndexerCache, Glm5NextIndexerCache,
           Glm5NextTailCache); the attention layers (DeepseekV4 attention class from
           _select_dsv4_attn_cls, MLAAttention, Kimi's MultiHeadLatentAttention, the KDA layers
           KimiGatedDeltaNetAttention / Glm5NextLinearAttention) are instances of vLLM's classes made
           with __new__ and given the attributes their get_kv_cache_spec / get_attn_backend read
           (the kv cache dtype through _resolve_dsv4_kv_cache_dtype or the selector and
           _canonicalize_sparse_mla_kv_cache_dtype, the backend from vllm.v1.attention.selector,
           the KDA prefill backend from _resolve_kda_prefill_backend), registered in
           static_forward_context in the order the model registers them. The target model's layers
           only (no MTP draft).
  block    CudaPlatform.update_block_size_for_backend (platforms/interface.py ~750): the backends
           of those layers, _preferred_block_size_for_backends, _align_hybrid_block_size.
  groups   the worker's get_kv_cache_spec (v1/worker/gpu/attn_utils.py ~138, customize_attention_spec
           included), get_supported_kv_cache_layouts over get_current_attn_backends,
           resolve_kv_cache_layout, get_global_kv_cache_groups, get_kv_cache_configs (1 TiB per
           worker, num_gpu_blocks_override) and resolve_kv_cache_block_sizes.

A cell is identical when the block size, the layout, the cache dtype, num_blocks, the scheduler
and hash block sizes, the Mamba block size and padded page, and every group (its kind, its spec
class, its layer names in order, block size, page bytes and its layers' specs: class, block size,
page bytes, tokens per state, sliding window, counted) agree, or when both refuse with vLLM's reason
in mlasim's message. Output: each differing cell, then `N identical, M differing`. Exit 0 when every
cell is identical, 1 otherwise, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .venv_reexec import DEFAULT_VENV, reexec_in_venv

from mlasim._data import data_root, default_binary

REPO = data_root()
DEFAULT_MLASIM = default_binary()
CONFIG_DIR = REPO / "scenarios/hf_configs"
FAMILIES = ["deepseek-v4.json", "kimi-linear.json", "glm-5-next.json", "glm-5-next-text.json", "bailing-hybrid.json"]
KV_DTYPES = ["auto", "bfloat16", "fp8"]
BLOCKS: list[int | None] = [None, 64, 256, 2048]
TPS = [1, 8]
GPUS = ["h200"]
ALL_GPUS = ["a100", "h100", "h200", "b200", "rtx-pro-6000"]
AVAILABLE_MEMORY = 1 << 40


class Cell:
    def __init__(self, config: Path, gpu: str, kv: str, tp: int, block: int | None):
        self.config, self.gpu, self.kv, self.tp, self.block = config, gpu, kv, tp, block

    @property
    def name(self) -> str:
        return f"{self.config.stem} {self.gpu} kv={self.kv} tp={self.tp} bs={'auto' if self.block is None else self.block}"


# ---------------------------------------------------------------------------------------------
# vLLM


class _NoTarget:
    """Triton's active driver while the FLA ops import: no current target (a CPU machine)."""

    def get_current_target(self):
        raise RuntimeError("no GPU")


def import_vllm(workdir: Path):
    from . import vllm_selection as vs

    vs.import_vllm(workdir)
    import_hybrid_models()
    return vs


def import_hybrid_models() -> None:
    """The families' vLLM modules, their flash-linear-attention imports under the _NoTarget driver."""
    import triton

    triton.runtime.driver.set_active(_NoTarget())
    try:
        import vllm.models.glm5next.common.attention  # noqa: F401
        import vllm.models.glm5next.common.kda  # noqa: F401
        import vllm.models.glm5next.common.model  # noqa: F401
        import vllm.models.kimi_k3.nvidia.model  # noqa: F401
        import vllm.model_executor.models.bailing_moe_v3  # noqa: F401
    finally:
        triton.runtime.driver._active = None


def standin(cls, **attrs):
    """An instance of a vLLM layer class without its __init__ (no weights), holding `attrs`."""
    from torch import nn

    obj = cls.__new__(cls)
    nn.Module.__init__(obj)
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


def register(vc, name: str, layer) -> None:
    ctx = vc.compilation_config.static_forward_context
    assert name not in ctx, name
    ctx[name] = layer


def deepseek_v4_layers(vs, vc, hf) -> None:
    """DeepseekV4DecoderLayer's attention (models/deepseek_v4/nvidia/model.py ~600, attention.py ~206-380)."""
    import torch
    from vllm.models.deepseek_v4.attention import DeepseekV4IndexerCache, _resolve_dsv4_kv_cache_dtype
    from vllm.models.deepseek_v4.compressor import CompressorStateCache
    from vllm.models.deepseek_v4.nvidia.model import _select_dsv4_attn_cls
    from vllm.v1.attention.backends.mla.indexer import dsa_indexer_uses_fp4
    from vllm.v1.attention.backends.mla.sparse_swa import DeepseekV4SWACache

    cc = vc.cache_config
    attn_cls = _select_dsv4_attn_cls(vc)
    for i in range(hf.num_hidden_layers):
        prefix = f"model.layers.{i}.attn"
        cr = max(1, hf.compress_rates.get(hf.layer_types[i], 0))
        if cr == 4:
            ih = hf.index_head_dim
            k_head = ih // 2 + ih // 32 if dsa_indexer_uses_fp4(vc) else ih + ih // 128 * 4
            DeepseekV4IndexerCache(head_dim=k_head, dtype=torch.uint8, prefix=f"{prefix}.indexer.k_cache", cache_config=cc, compress_ratio=cr)
            CompressorStateCache(state_dim=4 * ih, dtype=torch.float32, compress_ratio=cr, prefix=f"{prefix}.indexer.compressor.state_cache")
        layer = standin(attn_cls, compress_ratio=cr, head_dim=hf.head_dim)
        layer.kv_cache_dtype, layer.kv_cache_torch_dtype = _resolve_dsv4_kv_cache_dtype(
            layer._uses_fp8_ds_mla_layout(), cc.cache_dtype, cc
        )
        DeepseekV4SWACache(head_dim=hf.head_dim, window_size=hf.sliding_window, dtype=layer.kv_cache_torch_dtype,
                           prefix=f"{prefix}.swa_cache", cache_config=cc, backend_cls=attn_cls.swa_backend_cls)
        register(vc, prefix, layer)
        if cr > 1:
            coff = 1 + (cr == 4)
            CompressorStateCache(state_dim=2 * coff * hf.head_dim, dtype=torch.float32, compress_ratio=cr,
                                 prefix=f"{prefix}.compressor.state_cache")


def mla_backend(vs, vc, head_size: int, sparse: bool):
    import torch

    heads = vc.model_config.get_num_attention_heads(vc.parallel_config)
    return vs.V.selector.get_attn_backend(head_size, torch.get_default_dtype(), vc.cache_config.cache_dtype,
                                          use_mla=True, use_sparse=sparse, num_heads=heads)


def num_spec(vc) -> int:
    return vc.speculative_config.num_speculative_tokens if vc.speculative_config else 0


def kimi_linear_layers(vs, vc, hf) -> None:
    """KimiDecoderLayer's attention (models/kimi_k3/nvidia/model.py ~715-766)."""
    from vllm.model_executor.layers.mamba.gdn.kimi_gdn_linear_attn import KimiGatedDeltaNetAttention
    from vllm.models.kimi_k3.nvidia.mla import MultiHeadLatentAttention

    tp = vc.parallel_config.tensor_parallel_size
    for i in range(hf.num_hidden_layers):
        prefix = f"model.layers.{i}.self_attn"
        if hf.is_kda_layer(i):
            k = hf.linear_attn_config
            register(vc, prefix, standin(KimiGatedDeltaNetAttention, tp_size=tp, num_heads=k["num_heads"], head_dim=k["head_dim"],
                                         conv_size=k["short_conv_kernel_size"], num_spec=num_spec(vc),
                                         model_config=vc.model_config, cache_config=vc.cache_config, prefix=prefix))
        else:
            hs = hf.kv_lora_rank + hf.qk_rope_head_dim
            register(vc, prefix, standin(MultiHeadLatentAttention, head_size=hs, kv_cache_dtype=vc.cache_config.cache_dtype,
                                         attn_backend=mla_backend(vs, vc, hs, False), non_causal_multi_token_decode=False,
                                         layer_name=prefix))


def glm5_next_layers(vs, vc, hf) -> None:
    """Glm5NextDecoderLayer's attention (models/glm5next/common/model.py ~384-411, attention.py ~260-276)."""
    import torch
    from vllm.model_executor.layers.attention.mla_attention import MLAAttention, _canonicalize_sparse_mla_kv_cache_dtype
    from vllm.models.glm5next.common.attention import Glm5NextIndexerCache, Glm5NextTailCache
    from vllm.models.glm5next.common.kda import Glm5NextLinearAttention, _resolve_kda_prefill_backend
    from vllm.models.glm5next.common.model import get_sparse_topk_buffer_width

    cc = vc.cache_config
    tp = vc.parallel_config.tensor_parallel_size
    sparse = hf.index_topk is not None
    for i in range(hf.num_hidden_layers):
        prefix = f"model.layers.{i}.self_attn"
        if hf.layer_types[i] == "linear_attention":
            backend = _resolve_kda_prefill_backend("auto", hf.linear_head_dim, vc.model_config.dtype, hf.linear_lower_bound)
            register(vc, prefix, standin(Glm5NextLinearAttention, tp_size=tp, num_heads=hf.linear_num_heads,
                                         head_dim=hf.linear_head_dim, conv_size=hf.linear_conv_kernel_dim, num_spec=num_spec(vc),
                                         model_config=vc.model_config, cache_config=cc, prefix=prefix, kda_prefill_backend=backend))
            continue
        if sparse:
            ih = hf.index_head_dim
            Glm5NextIndexerCache(head_dim=ih + ih // 128 * 4, dtype=torch.uint8, prefix=f"{prefix}.indexer.k_cache",
                                 cache_config=cc, index_kpool=hf.index_kpool)
            Glm5NextTailCache(head_dim=ih, dtype=torch.bfloat16, prefix=f"{prefix}.indexer.tail_cache", cache_config=cc,
                              index_kpool=hf.index_kpool)
        hs = hf.kv_lora_rank + hf.qk_rope_head_dim
        backend = mla_backend(vs, vc, hs, sparse)
        kv = _canonicalize_sparse_mla_kv_cache_dtype(backend, cc.cache_dtype)  # mla_attention.py ~524
        cc.cache_dtype = kv
        register(vc, f"{prefix}.attn", standin(
            MLAAttention, kv_cache_dtype=kv, head_size=hs, sliding_window=None,
            topk_buffer_width=get_sparse_topk_buffer_width(hf) if sparse else None,
            indexer=object() if sparse else None, non_causal_multi_token_decode=False, attn_backend=backend, layer_name=f"{prefix}.attn"))


def bailing_hybrid_layers(vs, vc, hf) -> None:
    """BailingMoeV3DecoderLayer's attention (model_executor/models/bailing_moe_v3.py ~1229-1263): KDA
    layers but each layer_group_size-th and the trailing ones, which are MLA (MultiHeadLatentAttentionWrapper,
    its MLAAttention at `.attn`)."""
    from vllm.model_executor.layers.attention.mla_attention import MLAAttention
    from vllm.model_executor.models.bailing_moe_v3 import BailingMoeV3KimiDeltaAttention, _is_kda_layer

    cc = vc.cache_config
    tp = vc.parallel_config.tensor_parallel_size
    for i in range(hf.num_hidden_layers):
        prefix = f"model.layers.{i}.self_attn"
        if _is_kda_layer(i, hf.layer_group_size, hf.num_hidden_layers):
            register(vc, prefix, standin(BailingMoeV3KimiDeltaAttention, tp_size=tp, num_heads=hf.num_attention_heads,
                                         head_dim=hf.head_dim, conv_size=hf.short_conv_kernel_size,
                                         num_speculative_tokens=num_spec(vc), model_config=vc.model_config,
                                         cache_config=cc, prefix=prefix))
            continue
        hs = hf.kv_lora_rank + hf.qk_rope_head_dim
        register(vc, f"{prefix}.attn", standin(
            MLAAttention, kv_cache_dtype=cc.cache_dtype, head_size=hs, sliding_window=None, topk_buffer_width=None,
            indexer=None, non_causal_multi_token_decode=False, attn_backend=mla_backend(vs, vc, hs, False),
            layer_name=f"{prefix}.attn"))


BUILDERS = {"deepseek_v4": deepseek_v4_layers, "kimi_linear": kimi_linear_layers, "glm5_next": glm5_next_layers,
            "glm5_next_text": glm5_next_layers, "bailing_hybrid": bailing_hybrid_layers}


def spec_row(spec) -> dict[str, Any]:
    return {
        "spec": type(spec).__name__,
        "block_size": spec.block_size,
        "page_size_bytes": spec.page_size_bytes,
        "tokens_per_state": None if type(spec).__name__ == "MambaSpec" else int(spec.tokens_per_state),
        "sliding_window": getattr(spec, "sliding_window", None) or None,
    }


def vllm_cell(vs, cell: Cell, workdir: Path, num_blocks: int) -> dict[str, Any]:
    V = vs.V
    vs._CAP[0] = V.DeviceCapability(*vs.GPUS[cell.gpu])
    V.selector._cached_get_attn_backend.cache_clear()
    try:
        return _vllm_cell(vs, cell, workdir, num_blocks)
    except Exception as e:  # noqa: BLE001 - vLLM's refusal
        reason, where = vs.exception_reason(e)
        return {"refusal": {"reason": reason, "where": where}}


def _vllm_cell(vs, cell: Cell, workdir: Path, num_blocks: int) -> dict[str, Any]:
    V = vs.V
    from vllm.config.vllm import get_layers_from_vllm_config
    from vllm.distributed.kv_transfer.kv_connector.utils import get_current_attn_backends
    from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
    from vllm.v1.core.kv_cache_utils import resolve_kv_cache_block_sizes
    from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec

    ea = V.EngineArgs(model=vs.model_dir(cell.config, workdir), skip_tokenizer_init=True, tensor_parallel_size=cell.tp,
                      kv_cache_dtype=cell.kv, block_size=cell.block, num_gpu_blocks_override=num_blocks)
    vc = ea.create_engine_config()
    mc, cc = vc.model_config, vc.cache_config
    with V.set_current_vllm_config(vc), V.set_default_torch_dtype(mc.dtype):
        BUILDERS[mc.hf_config.model_type](vs, vc, mc.hf_text_config)
        V.current_platform.update_block_size_for_backend(vc)
        specs = get_kv_cache_spec(vc)
        layers = get_layers_from_vllm_config(vc, AttentionLayerBase)
        assert list(specs) == [n for n in layers if n in specs]
        layouts = [layout.name for layout in V.get_supported_kv_cache_layouts(get_current_attn_backends(vc))]
        layout = V.resolve_kv_cache_layout(vc, [layouts], list(specs.values()))
        groups = V.get_global_kv_cache_groups(vc, [specs])
        (kv_cfg,) = V.get_kv_cache_configs(vc, [specs], [AVAILABLE_MEMORY], groups)
        scheduler, hashing = resolve_kv_cache_block_sizes(kv_cfg, vc)
        out: dict[str, Any] = {
            "block_size": cc.block_size,
            "layout": layout.name,
            "cache_dtype": cc.cache_dtype,
            "num_blocks": kv_cfg.num_blocks,
            "scheduler_block_size": scheduler,
            "hash_block_size": hashing,
            "mamba_block_size": cc.mamba_block_size if mc.is_hybrid else None,
            "mamba_page_size_padded": cc.mamba_page_size_padded if mc.is_hybrid else None,
            "groups": [],
        }
        for g in kv_cfg.kv_cache_groups:
            s = g.kv_cache_spec
            uniform = isinstance(s, V.UniformTypeKVCacheSpecs)
            inner = [s.kv_cache_specs[n] for n in g.layer_names] if uniform else [s] * len(g.layer_names)
            out["groups"].append({
                "spec": type(s).__name__,
                "layers": list(g.layer_names),
                "block_size": s.block_size,
                "page_size_bytes": s.page_size_bytes,
                "layer_specs": sorted(Counter(json.dumps(spec_row(x), sort_keys=True) for x in inner).items()),
            })
        return out


# ---------------------------------------------------------------------------------------------
# mlasim


def mlasim_cell(binary: Path, cell: Cell, workdir: Path) -> dict[str, Any]:
    from . import vllm_selection as vs

    c = vs.Cell(cell.config, cell.gpu, cell.kv, cell.tp, cell.block, 0)
    return vs.mlasim_cell(binary, c, workdir)


def mlasim_side(m: dict[str, Any]) -> dict[str, Any]:
    j = m.get("json") or {}
    kv = j.get("kv_cache") or {}
    out: dict[str, Any] = {k: kv.get(k) for k in ("block_size", "layout", "cache_dtype", "num_blocks", "scheduler_block_size",
                                                   "hash_block_size")}
    out["mamba_block_size"] = kv.get("mamba_block_size")
    out["mamba_page_size_padded"] = kv.get("mamba_page_size_padded")
    out["groups"] = []
    for g in j.get("kv_cache_groups", []):
        rows = Counter()
        for s in g["layer_specs"]:
            row = {
                "spec": s["spec"],
                "block_size": s["block_size"],
                "page_size_bytes": s["page_size_bytes"],
                "tokens_per_state": s.get("tokens_per_state"),
                "sliding_window": s.get("sliding_window"),
            }
            rows[json.dumps(row, sort_keys=True)] += s["num_layers"]
        out["groups"].append({"spec": g["spec"], "layers": g["layers"], "block_size": g["block_size"],
                              "page_size_bytes": g["page_size_bytes"], "layer_specs": sorted(rows.items())})
    return out


def compare(v: dict[str, Any], m: dict[str, Any]) -> list[str]:
    if m["rc"] not in (0, 2):
        return [f"mlasim failed (exit {m['rc']}): {m['stderr'][:400]}"]
    if "refusal" in v:
        if m["rc"] == 2 and " ".join(v["refusal"]["reason"].split()) in " ".join(m["stderr"].split()):
            return []
        return [f"vLLM refuses ({v['refusal']['where']}): {v['refusal']['reason'][:400]}\n      mlasim: exit {m['rc']} "
                f"{m['stderr'][:400]}"]
    if m["rc"] == 2:
        return [f"mlasim refuses, vLLM accepts: {m['stderr'][:400]}"]
    ms = mlasim_side(m)
    diffs = [f"{k}: mlasim {ms[k]}  vLLM {v[k]}" for k in v if k != "groups" and ms.get(k) != v[k]]
    if len(ms["groups"]) != len(v["groups"]):
        diffs.append(f"groups: mlasim {len(ms['groups'])}  vLLM {len(v['groups'])}")
    for i, (a, b) in enumerate(zip(ms["groups"], v["groups"])):
        for k in b:
            if a[k] != b[k]:
                diffs.append(f"group {i} {k}: mlasim {str(a[k])[:300]}  vLLM {str(b[k])[:300]}")
    return diffs


def fnv1a64(text: str) -> str:
    """base/hash.h stable_hash: FNV-1a over the UTF-8 bytes."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def table_cell(cell: Cell, v: dict[str, Any]) -> dict[str, Any]:
    """One row of tests/data/vllm033_kv_groups.json: the vLLM side, layer names as an FNV-1a of
    their newline-joined list."""
    row: dict[str, Any] = {"config": cell.config.name, "gpu": cell.gpu, "kv": cell.kv, "tp": cell.tp, "block": cell.block}
    if "refusal" in v:
        row["refusal"] = v["refusal"]["reason"]
        return row
    row.update({k: v[k] for k in v if k != "groups"})
    row["groups"] = [
        {
            "spec": g["spec"],
            "num_layers": len(g["layers"]),
            "layers_fnv1a": fnv1a64("\n".join(g["layers"])),
            "block_size": g["block_size"],
            "page_size_bytes": g["page_size_bytes"],
            # [spec class, block size, page bytes, tokens per state (None: Mamba), sliding window, layers]
            "layer_specs": [[d["spec"], d["block_size"], d["page_size_bytes"], d["tokens_per_state"], d["sliding_window"], n]
                            for d, n in ((json.loads(k), n) for k, n in g["layer_specs"])],
        }
        for g in v["groups"]
    ]
    return row


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="vllm_kv_groups.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlasim", default=str(DEFAULT_MLASIM), help="the mlasim binary")
    ap.add_argument("--gpus", help="GPUs (default h200; all: " + ",".join(ALL_GPUS) + ")")
    ap.add_argument("--venv", default=str(DEFAULT_VENV))
    ap.add_argument("-q", "--quiet", action="store_true", help="print only differing cells and the summary")
    ap.add_argument("--expect-table", metavar="FILE",
                    help="write vLLM's side (every GPU, 8192 blocks) as tests/data/vllm033_kv_groups.json's table, mlasim not run")
    args = ap.parse_args(argv)
    reexec_in_venv(Path(args.venv), ("vllm",), f"set up {args.venv} with vllm==0.33.0 (tools/conformance/README.md)")
    if args.expect_table:
        return write_table(Path(args.expect_table))
    mlasim = Path(args.mlasim)
    if not (mlasim.is_file() and os.access(mlasim, os.X_OK)):
        print(f"mlasim binary not found: {mlasim}", file=sys.stderr)
        return 2
    gpus = ALL_GPUS if args.gpus == "all" else (args.gpus.split(",") if args.gpus else GPUS)
    cells = [Cell(CONFIG_DIR / f, g, kv, tp, b) for f in FAMILIES for g in gpus for kv in KV_DTYPES for tp in TPS for b in BLOCKS]
    t0 = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="mlasim-kv-groups-"))
    try:
        vs = import_vllm(workdir)
        print(f"{len(cells)} cells: {len(FAMILIES)} families x {','.join(gpus)} x kv {{{','.join(KV_DTYPES)}}} x TP "
              f"{{{','.join(map(str, TPS))}}} x block {{{','.join('auto' if b is None else str(b) for b in BLOCKS)}}}", flush=True)
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {c.name: pool.submit(mlasim_cell, mlasim, c, workdir) for c in cells}
            differing = 0
            for cell in cells:
                m = futures[cell.name].result()
                num_blocks = ((m.get("json") or {}).get("kv_cache") or {}).get("num_blocks") or 8192
                diffs = compare(vllm_cell(vs, cell, workdir, num_blocks), m)
                if diffs:
                    differing += 1
                    print(f"{cell.name}: differing\n    " + "\n    ".join(diffs) + f"\n    (mlasim: {m['cmd']})", flush=True)
                elif not args.quiet:
                    print(f"{cell.name}: identical", flush=True)
        print(f"{len(cells) - differing} identical, {differing} differing ({time.time() - t0:.0f} s)")
        return 0 if differing == 0 else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def write_table(path: Path) -> int:
    cells = [Cell(CONFIG_DIR / f, g, kv, tp, b) for f in FAMILIES for g in ALL_GPUS for kv in KV_DTYPES for tp in TPS for b in BLOCKS]
    workdir = Path(tempfile.mkdtemp(prefix="mlasim-kv-groups-"))
    try:
        vs = import_vllm(workdir)
        rows = [table_cell(c, vllm_cell(vs, c, workdir, 8192)) for c in cells]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    head = ('{"format":"mlasim-vllm033-kv-groups","version":1,\n"source":"vLLM 0.33.0\'s KV cache groups over the grid '
            '(families x GPUs x kv dtype x TP x --block-size, 8192 blocks), from tools/conformance/vllm_kv_groups.py '
            '--expect-table; layer names as the FNV-1a 64 of their newline-joined list",\n"cells":[\n')
    path.write_text(head + ",\n".join(json.dumps(r, separators=(",", ":")) for r in rows) + "\n]}\n")
    print(f"wrote {len(rows)} cells ({sum('refusal' in r for r in rows)} refused by vLLM) to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
