#!/usr/bin/env python3
"""Checks `mlasim deploy` (attention-backend selection, block sizes, decode threshold, model
runner) against vLLM 0.33.0's own code, cell by cell, on a CPU-only machine.

Optional tool, not run in CI (see tools/conformance/README.md for the venv). Runs under the
Python of a venv holding vllm==0.33.0 (default ~/vllm-venv; the script re-executes itself there
when `import vllm` fails). vLLM is imported once; every cell then goes through vLLM's real code:

  config     EngineArgs(...).create_engine_config(): ModelConfig from the config.json, the model's
             verify_and_update_config (model_executor/models/config.py: DeepseekV32 `assert is_v32`
             ~81 and bfloat16 -> auto; GlmMoeDsa auto -> fp8_e4m3 on SM10x ~97),
             CudaPlatform.check_and_update_config, SpeculativeConfig (k > 0: method `mtp` when the
             config has num_nextn_predict_layers > 0, else `ngram`; vLLM refuses `mtp` without MTP
             layers, config/speculative.py ~1499), VllmConfig.use_v2_model_runner (config/vllm.py
             ~731, VLLM_USE_V2_MODEL_RUNNER unset).
  backend    vllm.v1.attention.selector.get_attn_backend(head_size, dtype, kv_cache_dtype,
             use_mla=True, use_sparse, num_heads=per-rank heads), called exactly as MLAAttention
             calls it (model_executor/layers/attention/mla_attention.py ~514) -> CudaPlatform.
             get_attn_backend_cls -> get_valid_backends -> _get_backend_priorities and each
             backend's validate_configuration (platforms/cuda.py ~84, ~377, ~420). The candidate
             list is get_valid_backends' own answer for the same AttentionSelectorConfig.
  block      CudaPlatform.update_block_size_for_backend (platforms/interface.py ~750) ->
             _preferred_block_size_for_backends (~700) over the model's non-SSM backends: the MLA
             backend, and for sparse models (index_topk) also DeepseekV32IndexerBackend
             (v1/attention/backends/mla/indexer.py), whose cache layer the DSA indexer builds
             before its MLA layer (models/deepseek_v32/attention.py ~189).
  families   the configs of scenarios/hf_configs: DeepSeek-V2/V3/V3.2, Kimi-K2, GLM-5 (and as DeepSeek-V3),
             and the class defaults of AXK1, DeepSeek-V2, GLM-4.7-Flash (glm4_moe_lite), LongCat-Flash
             (two MLA modules per decoder layer) and Kimi-K2.5 (its text_config is hf_text_config):
             every family vLLM 0.33 serves with one MLA KV cache group (scenario/hf_families.h).
             HY-V4 (hy-v4-defaults, hy-v4-sparse): its layers built in order as HYV4MLAAttention
             builds them (models/hy_v4/nvidia/attention.py ~341-500): a DSA layer's probe of the
             selector, the real _resolve_sink_backend and _force_sparse_mqa on a stand-in self, the
             layer's canonicalised cache dtype written back; the backend compared is the first
             layer's (every layer's agrees in every cell), sparse_mla_force_mqa the flag they leave.
  kernel     the worker's KV-cache specs (MLAAttention.get_kv_cache_spec ~1371 with the layer's
             canonicalised cache dtype, _canonicalize_sparse_mla_kv_cache_dtype ~359;
             DeepseekV32IndexerCache.get_kv_cache_spec; customize_attention_spec, v1/worker/utils.py
             ~476), resolve_kv_cache_layout, get_global_kv_cache_groups / get_kv_cache_configs
             (v1/core/kv_cache_planning.py) and prepare_kernel_block_sizes -> select_common_block_size
             (v1/worker/utils.py ~630, ~515) for the KV-cache group of the MLA layers. Note: the DSA
             indexer's cache is an MLAAttentionSpec too, so it shares that group and its backend
             takes part in the kernel block size.
  threshold  the chosen backend's metadata builder __init__ (real code) up to its
             _init_reorder_batch_threshold call (v1/attention/backend.py ~658, max_decode_query_len
             ~572): MLACommonMetadataBuilder (mla_attention.py ~2502) for dense backends, the
             heads-per-rank dicts of the sparse builders. query_len_support is the builder's
             QueryLenSupport; sparse builders have none: "uniform" when require_uniform_decodes
             (FlashMLASparse), else "varlen" (what they pass to split_decodes_and_prefills,
             model_executor/layers/attention/sparse_mla_attention.py ~346).

What is stubbed, and why (a CPU-only machine: no libcuda.so.1, no libnvidia-ml.so.1, no GPU):
  1. libcuda.so.1: a stand-in compiled with cc at start (FAKE_LIBCUDA_C: cuInit, cuDriverGetVersion,
     cuGetProcAddress_v2, cuPointerGetAttribute, cuTensorMapEncodeTiled, each returning
     CUDA_ERROR_NO_DEVICE) and loaded RTLD_GLOBAL before torch. The wheel's extension modules link
     libcuda.so.1 (vllm._C_stable_libtorch, _flashmla_C, vllm_flash_attn._vllm_fa3_C need exactly
     those symbols); with it they load as on a GPU machine, so FA2_AVAILABLE / FA3_AVAILABLE
     (vllm_flash_attn/flash_attn_interface.py; _is_fa3_supported still checks capability family
     9.x), _flashmla_C_AVAILABLE / _flashmla_extension_C_AVAILABLE (v1/attention/ops/flashmla.py)
     and torch.ops._C's host-side ops are the real ones. torch.cuda.is_available() stays False.
  2. Triton's NVIDIA driver reports active (its is_active() is torch.cuda.is_available()), so
     vllm.triton_utils.HAS_TRITON is True as with a GPU: use_v2_model_runner reads it
     (config/vllm.py ~752), and with Triton placeholders vLLM's worker modules do not import.
  3. current_platform is vLLM's NvmlCudaPlatform (its choice when NVML works) with
     get_device_capability -> the cell's GPU (has_device_capability, is_device_capability and
     is_device_capability_family derive from it, platforms/interface.py ~531-590);
     device_count -> 8 (one 8-GPU node, so TP 8 passes ParallelConfig's check, config/parallel.py
     ~1068); log_warnings -> no-op (it only logs, through NVML).
  4. While v1/attention/backends/mla/cutlass_mla.py is imported: torch.empty(device="cuda") ->
     device "meta" and num_compute_units -> 0 (its module-level 128 MB SM100 workspace).
  5. The model is not built (no weights, no GPU): _find_non_ssm_backends (the layers' backends)
     returns [DeepseekV32IndexerBackend (sparse models only), the selected MLA backend]; the
     worker's KV-cache specs come from the layers' own get_kv_cache_spec methods called on
     stand-ins holding what the layer would hold (MLA: canonicalised cache dtype, head size); KV
     planning gets 1 TiB per worker (only num_blocks depends on it) and the target model's layers
     only (no MTP draft layers: same backends); the metadata builder gets a stand-in layer in
     static_forward_context (MLA dims, per-rank heads, a prefill backend whose clone() is None),
     device "meta", sparse_mla_attention.PIN_MEMORY = False (pinned memory needs the driver), and
     its real __init__ is stopped right after _init_reorder_batch_threshold.
  6. The hybrid MLA families (DeepSeek-V4, Kimi-Linear, GLM-5-Next; scenarios/hf_configs) take no
     stub 5: their layers are built as vllm_kv_groups.py builds them (vLLM's own cache layers, stand-ins
     of its attention classes) and registered in static_forward_context, so update_block_size_for_backend
     sees the real layers' backends (with _align_hybrid_block_size for the KDA layers); the kernel block
     size is that of the KV cache group holding the first MLA attention layer; DeepSeek-V4's backend is
     its attention class's (_select_dsv4_attn_cls, models/deepseek_v4/nvidia/model.py ~537), no selector
     and no candidates. The flash-linear-attention ops they import see a Triton driver without a current
     target (vllm_kv_groups.py's _NoTarget).
Nothing else: get_current_vllm_config().model_config.hf_text_config (read by FlashInfer MLA,
TokenSpeed, FlashInfer/FA sparse: qk_nope_head_dim, index_topk, ...) is the real ModelConfig of
the cell, set with set_current_vllm_config as during model construction.
Machine-dependent, not stubbed (printed in the header line): FlashInfer availability (has_flashinfer:
flashinfer-cubin installed, or nvcc + ninja present), the tokenspeed_mla package (TOKENSPEED_MLA's
supports_combination imports it; a pip dependency of vllm 0.33.0 on Linux) and the FA4 cute-DSL
import (FLASH_ATTN_MLA_SPARSE_FA4). vLLM inspects each architecture once in a subprocess (on the
CPU platform) and caches it in ~/.cache/vllm/modelinfos, as vLLM does.

A cell is identical when backend, block_size, kernel_block_size, reorder_threshold,
query_len_support, model_runner, the candidates (names, validity, reasons), the input fields
(architecture, model_type, use_mla, sparse, kv_cache_dtype, num_heads_per_rank, head_size) and the
refusal agree (both refuse: mlasim's stderr or JSON `error` contains vLLM's reason text, or with
--loose-refusals that text less its " with AttentionSelectorConfig(...)" clause; or neither refuses).
Output: each differing cell with both sides' values (without -q also `NAME: identical` lines), then
`N identical, M differing` and the count per first differing field. Exit 0 when every cell is
identical, 1 otherwise, 2 on bad usage or a missing venv / binary / `deploy` subcommand.
`--vllm-only` prints the vLLM table instead; `--expect-table FILE` writes it as JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .venv_reexec import DEFAULT_VENV, reexec_in_venv

from mlasim._data import data_root, default_binary

REPO = data_root()
DEFAULT_MLASIM = default_binary()
DEFAULT_CONFIGS = REPO / "scenarios/hf_configs"

GPUS: dict[str, tuple[int, int]] = {
    "a100": (8, 0),
    "h100": (9, 0),
    "h200": (9, 0),
    "b200": (10, 0),
    "gb200": (10, 0),
    "b300": (10, 3),
    "rtx-pro-6000": (12, 0),
}
ACCEPTANCE_GPUS = ["a100", "h200", "b200", "rtx-pro-6000"]
FULL_GPUS = ["a100", "h100", "h200", "b200", "gb200", "b300", "rtx-pro-6000"]
KV_DTYPES = ["auto", "fp8"]
TPS = [1, 8]
BLOCKS: list[int | None] = [None, 64, 128, 16]
SPEC_TOKENS = [0, 1, 3]

COMPARED = (
    "architecture",
    "model_type",
    "use_mla",
    "sparse",
    "kv_cache_dtype",
    "num_heads_per_rank",
    "head_size",
    "backend",
    "block_size",
    "kernel_block_size",
    "reorder_threshold",
    "query_len_support",
    "model_runner",
    "sparse_mla_force_mqa",
    "candidates",
)
AVAILABLE_MEMORY = 1 << 40  # bytes per worker for KV-cache planning (only num_blocks depends on it)

STUBS = [
    "libcuda.so.1 stand-in (5 driver entry points, CUDA_ERROR_NO_DEVICE): the wheel's extension modules load, "
    "so FA2/FA3 and FlashMLA availability are real import results",
    "Triton's NVIDIA driver reports active (HAS_TRITON True)",
    "current_platform = NvmlCudaPlatform with get_device_capability = the cell's GPU, device_count = 8, log_warnings no-op",
    "cutlass_mla's import-time CUDA workspace on device 'meta'",
    "no model built: layer backends = [DeepseekV32Indexer (sparse),] MLA backend; KV specs from the layers' methods on "
    "stand-ins; KV planning with 1 TiB/worker, target layers only; metadata builder on a stand-in layer, device meta, "
    "stopped after _init_reorder_batch_threshold",
    "hybrid families: their layers built from vLLM's cache classes and stand-ins of its attention classes (no stub 5); "
    "FLA ops imported under a Triton driver without a current target",
]


@dataclasses.dataclass(frozen=True)
class Cell:
    config: Path
    gpu: str
    kv: str
    tp: int
    block: int | None
    k: int

    @property
    def name(self) -> str:
        bs = "auto" if self.block is None else str(self.block)
        return f"{self.config.stem} {self.gpu} kv={self.kv} tp={self.tp} bs={bs} k={self.k}"

    def params(self) -> dict[str, Any]:
        return {
            "config": self.config.name,
            "gpu": self.gpu,
            "kv_cache_dtype_arg": self.kv,
            "tp": self.tp,
            "block_size_arg": self.block,
            "spec_tokens": self.k,
        }


def make_grid(configs: list[Path], gpus: list[str], quick: bool) -> list[Cell]:
    blocks = [None] if quick else BLOCKS
    ks = [0] if quick else SPEC_TOKENS
    return [
        Cell(c, g, kv, tp, b, k)
        for c in configs
        for g in gpus
        for kv in KV_DTYPES
        for tp in TPS
        for b in blocks
        for k in ks
    ]


# ---------------------------------------------------------------------------------------------
# vLLM, stubbed for a CPU-only machine (see the module docstring for each stub)


class _V:
    """The vLLM names this tool uses (filled by import_vllm)."""


V = _V()
_CAP: list[Any] = [None]  # the current cell's DeviceCapability


FAKE_LIBCUDA_C = r"""
/* The CUDA driver entry points vLLM's extension modules link (nm -D --undefined-only), and the two
   cudart probes first: every one reports CUDA_ERROR_NO_DEVICE (100). */
int cuInit(unsigned flags) { return 100; }
int cuDriverGetVersion(int *v) { if (v) *v = 0; return 100; }
int cuGetProcAddress_v2(const char *sym, void **p, int ver, unsigned long long flags, void *status) {
  if (p) *p = 0;
  return 100;
}
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr) { return 100; }
int cuTensorMapEncodeTiled(void *a, int b, unsigned c, void *d, const void *e, const void *f,
                           const void *g, const void *h, int i, int j, int k, int l) { return 100; }
"""


def load_fake_libcuda(workdir: Path) -> str:
    """Stub 1: a libcuda.so.1 without a device, loaded RTLD_GLOBAL so that the dynamic linker
    resolves the extension modules' NEEDED libcuda.so.1 to it (matched by SONAME)."""
    import ctypes

    with contextlib.suppress(OSError):
        ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        return "libcuda.so.1 (the machine's own)"
    src, lib = workdir / "fake_libcuda.c", workdir / "libcuda.so.1"
    src.write_text(FAKE_LIBCUDA_C)
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler (cc/gcc/clang) to build the stand-in libcuda.so.1")
    subprocess.run([cc, "-shared", "-fPIC", "-O0", "-Wl,-soname,libcuda.so.1", "-o", str(lib), str(src)], check=True)
    ctypes.CDLL(str(lib), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    return str(lib)


def import_vllm(workdir: Path) -> None:
    os.environ.pop("VLLM_USE_V2_MODEL_RUNNER", None)  # use_v2_model_runner's own default
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)

    # 1. libcuda.so.1 without a device: the wheel's extension modules load (vllm._C_stable_libtorch,
    #    _flashmla_C, _flashmla_extension_C, vllm_flash_attn._vllm_fa2_C / _vllm_fa3_C, ...).
    V.libcuda = load_fake_libcuda(workdir)
    import torch

    # 2. Triton's NVIDIA driver counts as active (torch.cuda.is_available() is False here).
    from triton.backends import backends as triton_backends

    triton_backends["nvidia"].driver.is_active = staticmethod(lambda: True)

    import vllm
    import vllm.platforms as platforms
    import vllm.platforms.cuda as cuda
    from vllm.platforms.interface import DeviceCapability

    # 3. The CUDA platform with the cell's compute capability.
    plat = cuda.NvmlCudaPlatform
    plat.get_device_capability = classmethod(lambda cls, device_id=0: _CAP[0])
    plat.device_count = classmethod(lambda cls: 8)
    plat.log_warnings = classmethod(lambda cls: None)
    _CAP[0] = DeviceCapability(9, 0)
    platforms._current_platform = plat()
    from vllm.platforms import current_platform

    assert isinstance(current_platform, plat)
    import vllm.config.vllm as config_vllm
    from vllm.triton_utils import HAS_TRITON

    assert HAS_TRITON and config_vllm.HAS_TRITON

    # 4. cutlass_mla allocates a 128 MB CUDA workspace when imported.
    real_empty = torch.empty

    def meta_empty(*args, **kwargs):
        if str(kwargs.get("device", "")).startswith("cuda"):
            kwargs["device"] = "meta"
        return real_empty(*args, **kwargs)

    real_units = plat.num_compute_units
    torch.empty = meta_empty
    plat.num_compute_units = classmethod(lambda cls, device_id=0: 0)
    try:
        import vllm.v1.attention.backends.mla.cutlass_mla  # noqa: F401
    finally:
        torch.empty = real_empty
        plat.num_compute_units = real_units

    from . import vllm_kv_groups

    vllm_kv_groups.import_hybrid_models()
    import vllm.model_executor.layers.attention.sparse_mla_attention as sparse_mla_attention
    from vllm.config import set_current_vllm_config
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.layers.attention.mla_attention import (
        MLAAttention,
        QueryLenSupport,
        _canonicalize_sparse_mla_kv_cache_dtype,
    )
    from vllm.model_executor.models.deepseek_v2 import DeepseekV32IndexerCache
    from vllm.utils.torch_utils import set_default_torch_dtype
    from vllm.v1.attention import selector
    from vllm.v1.attention.backends.mla.indexer import DeepseekV32IndexerBackend
    from vllm.v1.attention.backends.registry import AttentionBackendEnum
    from vllm.v1.attention.backends.utils import get_supported_kv_cache_layouts, resolve_kv_cache_layout
    from vllm.v1.core.kv_cache_planning import get_global_kv_cache_groups, get_kv_cache_configs
    from vllm.v1.kv_cache_interface import UniformTypeKVCacheSpecs
    from vllm.v1.worker.utils import AttentionGroup, customize_attention_spec, prepare_kernel_block_sizes

    sparse_mla_attention.PIN_MEMORY = False  # a pinned CPU buffer needs the CUDA driver
    indexer_cache_spec = DeepseekV32IndexerCache.get_kv_cache_spec
    for name, value in list(locals().items()):
        if not name.startswith("_") or name == "_canonicalize_sparse_mla_kv_cache_dtype":
            setattr(V, name, value)
    V.platform = plat
    V.current_platform = current_platform

    # Import the CUDA MLA backends once, so that import costs (and module-level constants, none of
    # which feeds selection) are paid under one capability. One that does not import here would
    # show up as an "ImportError: ..." reason in its candidate entry: a machine artifact.
    V.import_failures = {}
    for e in AttentionBackendEnum:
        if "MLA" in e.name and not any(x in e.name for x in ("ROCM", "XPU", "AITER", "CPU", "AMX", "DSV4")):
            try:
                e.get_class()
            except Exception as exc:  # noqa: BLE001
                V.import_failures[e.name] = f"{type(exc).__name__}: {exc}"


def environment_line() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def ver(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "not installed"

    from vllm.utils.flashinfer import has_flashinfer

    return (
        f"vLLM {V.vllm.__version__} on the CPU; torch {V.torch.__version__}; flashinfer-python "
        f"{ver('flashinfer-python')} (has_flashinfer: {has_flashinfer()}); tokenspeed-mla "
        f"{ver('tokenspeed-mla')}; flashinfer-cubin {ver('flashinfer-cubin')}; libcuda: {V.libcuda}"
    )


class Refusal(Exception):
    def __init__(self, stage: str, exc: BaseException):
        self.stage = stage
        self.reason, self.where = exception_reason(exc)
        super().__init__(f"{stage}: {self.reason}")


class ToolError(Exception):
    pass


def exception_reason(exc: BaseException) -> tuple[str, str | None]:
    """vLLM's reason text and where it was raised: the exception message (for a pydantic
    ValidationError, that of the error raised inside the validator), or for a bare `assert` the
    asserting source line (e.g. `assert is_v32`)."""
    errs = None
    if hasattr(exc, "errors") and callable(exc.errors):  # pydantic ValidationError
        with contextlib.suppress(Exception):
            errs = exc.errors()
    if errs:
        inner = (errs[0].get("ctx") or {}).get("error")
        if isinstance(inner, BaseException):
            return exception_reason(inner)
        return re.sub(r"^(Value error|Assertion failed), ", "", str(errs[0].get("msg", ""))).strip(), None
    tb = traceback.extract_tb(exc.__traceback__)
    where = None
    if tb:
        frame = tb[-1]
        rel = frame.filename.split("site-packages/")[-1]
        where = f"{rel}:{frame.lineno}"
    msg = str(exc).strip()
    if not msg and tb:
        msg = (tb[-1].line or "").strip()
    return msg, where


_model_dirs: dict[Path, str] = {}


def model_dir(config: Path, workdir: Path) -> str:
    """A model folder for vLLM: the config file, verbatim, as its config.json (no weights)."""
    if config not in _model_dirs:
        cfg = json.loads(config.read_text())
        d = workdir / f"model_{len(_model_dirs)}_{config.stem}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(cfg))
        _model_dirs[config] = str(d)
    return _model_dirs[config]


def speculative_config(config: Path, k: int) -> dict[str, Any] | None:
    if not k:
        return None
    cfg = json.loads(config.read_text())
    if int(cfg.get("num_nextn_predict_layers") or 0) > 0:
        return {"method": "mtp", "num_speculative_tokens": k}
    return {"method": "ngram", "num_speculative_tokens": k, "prompt_lookup_max": 5, "prompt_lookup_min": 1}


def mla_layer_names(mc, i: int) -> list[str]:
    """The MLA layers of decoder layer i as the model names them: LongCat-Flash's FlashDecoderLayer
    holds two (models/longcat_flash.py ~267-284; num_attn_module, v1/worker/gpu_model_runner.py ~6948),
    every other family one."""
    if mc.hf_config.model_type == "longcat_flash":
        return [f"model.layers.{i}.self_attn.{j}.attn" for j in range(2)]
    return [f"model.layers.{i}.self_attn.attn"]


def backend_enum_name(cls) -> str:
    path = f"{cls.__module__}.{cls.__qualname__}"
    for e in V.AttentionBackendEnum:
        with contextlib.suppress(Exception):
            if e.get_path() == path:
                return e.name
    return cls.get_name()


class _Captured(Exception):
    pass


def builder_threshold(backend, spec, layer_name: str, hf, heads: int, vc) -> tuple[int | None, str]:
    """(reorder_batch_threshold, query_len_support) of the backend's metadata builder: its real
    __init__, stopped right after _init_reorder_batch_threshold (stub 5)."""
    import torch

    builder_cls = backend.get_builder_cls()
    layer = types.SimpleNamespace(
        q_lora_rank=getattr(hf, "q_lora_rank", None),
        kv_lora_rank=hf.kv_lora_rank,
        qk_nope_head_dim=hf.qk_nope_head_dim,
        qk_rope_head_dim=hf.qk_rope_head_dim,
        v_head_dim=hf.v_head_dim,
        num_heads=heads,
        non_causal_multi_token_decode=False,
        prefill_backend=types.SimpleNamespace(clone=lambda: None),
    )
    ctx = vc.compilation_config.static_forward_context
    ctx[layer_name] = layer
    builder = builder_cls.__new__(builder_cls)
    called: list[bool] = []

    def intercept(*args, **kwargs):
        type(builder)._init_reorder_batch_threshold(builder, *args, **kwargs)
        called.append(True)
        raise _Captured

    builder.__dict__["_init_reorder_batch_threshold"] = intercept
    try:
        builder_cls.__init__(builder, spec, [layer_name], vc, torch.device("meta"))
    except _Captured:
        pass
    except Exception as e:  # noqa: BLE001
        raise ToolError(f"{builder_cls.__name__}.__init__ failed before its threshold: {type(e).__name__}: {e}") from e
    finally:
        ctx.pop(layer_name, None)
    if not called:
        raise ToolError(f"{builder_cls.__name__}.__init__ returned without calling _init_reorder_batch_threshold")
    threshold = builder.__dict__["reorder_batch_threshold"]
    support = getattr(builder_cls, "query_len_support", None)
    if isinstance(support, V.QueryLenSupport):
        qls = {"single_only": "single"}.get(support.value, support.value)
    else:  # sparse builders: what they pass as require_uniform (sparse_mla_attention.py ~346)
        qls = "uniform" if getattr(builder_cls, "require_uniform_decodes", False) else "varlen"
    return threshold, qls


HYBRID_MODEL_TYPES = ("deepseek_v4", "kimi_linear", "glm5_next", "glm5_next_text", "bailing_hybrid")


def _hybrid_cell(vc, hf, out: dict[str, Any]) -> None:
    """The hybrid MLA families (DeepSeek-V4, Kimi-Linear, GLM-5-Next): their layers built as
    vllm_kv_groups.py builds them (vLLM's own cache layers and stand-ins of its attention classes,
    registered in static_forward_context), so the block size comes from update_block_size_for_backend
    over the real layers (no stub 5), the kernel block size from the KV cache group that holds the
    first MLA attention layer. DeepSeek-V4's attention class names its backend
    (_select_dsv4_attn_cls, models/deepseek_v4/nvidia/model.py ~537): no selector, no candidates."""
    import torch

    from . import vllm_kv_groups as kg
    from vllm.distributed.kv_transfer.kv_connector.utils import get_current_attn_backends
    from vllm.config.vllm import get_layers_from_vllm_config
    from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
    from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec

    mc, pc, cc = vc.model_config, vc.parallel_config, vc.cache_config
    heads = mc.get_num_attention_heads(pc)
    model_type = mc.hf_config.model_type
    v4 = model_type == "deepseek_v4"
    head_size = hf.head_dim if v4 else hf.kv_lora_rank + hf.qk_rope_head_dim
    out.update(head_size=head_size, sparse=getattr(hf, "index_topk", None) is not None)
    if not v4:  # the MLA layers' selector call, its candidates captured as for the plain models
        captured: dict[str, Any] = {}
        real = V.platform.get_attn_backend_cls.__func__

        def spy(cls, selected_backend, attn_selector_config, num_heads=None):
            captured.setdefault("config", attn_selector_config)
            captured.setdefault("num_heads", num_heads)
            return real(cls, selected_backend, attn_selector_config, num_heads)

        V.platform.get_attn_backend_cls = classmethod(spy)
        try:
            kg.mla_backend(sys.modules[__name__], vc, head_size, out["sparse"])
        except Exception as e:  # noqa: BLE001
            raise Refusal("backend", e) from e
        finally:
            V.platform.get_attn_backend_cls = classmethod(real)
        valid, invalid = V.current_platform.get_valid_backends(_CAP[0], captured["config"], captured["num_heads"])
        cands = [(c.priority, c.backend.name, True, []) for c in valid]
        cands += [(p, b.name, False, list(reasons)) for b, (p, reasons) in invalid.items()]
        out["candidates"] = [{"name": n, "valid": ok, "reasons": r} for _, n, ok, r in sorted(cands)]
    else:
        out["candidates"] = []
    try:
        kg.BUILDERS[model_type](sys.modules[__name__], vc, hf)
    except Exception as e:  # noqa: BLE001
        raise Refusal("layers", e) from e
    layers = get_layers_from_vllm_config(vc, AttentionLayerBase)
    mla_name = next(n for n, l in layers.items() if (l.get_attn_backend().is_mla() and not n.endswith("cache")))
    backend = layers[mla_name].get_attn_backend()
    out["backend"] = backend_enum_name(backend)
    out["layer_kv_cache_dtype"] = cc.cache_dtype  # as the layers resolved it (DeepSeek-V4: fp8_ds_mla)
    out["sparse_mla_force_mqa"] = bool(vc.attention_config.sparse_mla_force_mqa)
    try:
        V.current_platform.update_block_size_for_backend(vc)
    except Exception as e:  # noqa: BLE001
        raise Refusal("block size", e) from e
    out["block_size"] = cc.block_size
    try:
        specs = get_kv_cache_spec(vc)
        mla_name = next(n for n in specs if layers[n].get_attn_backend() is backend)
        layouts = [layout.name for layout in V.get_supported_kv_cache_layouts(get_current_attn_backends(vc))]
        V.resolve_kv_cache_layout(vc, [layouts], list(specs.values()))
        groups = V.get_global_kv_cache_groups(vc, [specs])
        (kv_cfg,) = V.get_kv_cache_configs(vc, [specs], [AVAILABLE_MEMORY], groups)
        attn_groups = []
        for gid, g in enumerate(kv_cfg.kv_cache_groups):
            by_key: dict[tuple, Any] = {}
            for n in g.layer_names:
                spec = g.kv_cache_spec.kv_cache_specs[n] if isinstance(g.kv_cache_spec, V.UniformTypeKVCacheSpecs) else g.kv_cache_spec
                b = layers[n].get_attn_backend()
                key = (b.full_cls_name(), spec)
                if key in by_key:
                    by_key[key].layer_names.append(n)
                else:
                    by_key[key] = V.AttentionGroup(b, [n], spec, gid)
            attn_groups.append(list(by_key.values()))
        kernel_sizes = V.prepare_kernel_block_sizes(kv_cfg, attn_groups)
    except Exception as e:  # noqa: BLE001
        raise Refusal("kernel block size", e) from e
    gid = next(i for i, g in enumerate(kv_cfg.kv_cache_groups) if mla_name in g.layer_names)
    out["kernel_block_size"] = kernel_sizes[gid]
    group_spec = kv_cfg.kv_cache_groups[gid].kv_cache_spec
    if isinstance(group_spec, V.UniformTypeKVCacheSpecs):
        group_spec = group_spec.kv_cache_specs[mla_name]
    stand_in = types.SimpleNamespace(q_lora_rank=getattr(hf, "q_lora_rank", None), kv_lora_rank=head_size - hf.qk_rope_head_dim,
                                     qk_nope_head_dim=getattr(hf, "qk_nope_head_dim", head_size - hf.qk_rope_head_dim),
                                     qk_rope_head_dim=hf.qk_rope_head_dim, v_head_dim=getattr(hf, "v_head_dim", head_size))
    threshold, qls = builder_threshold(backend, group_spec, mla_name, stand_in, heads, vc)
    out["reorder_threshold"] = threshold
    out["query_len_support"] = qls


def hy_v4_sparse_layers(hf) -> list[bool]:
    """HYV4MLAAttention's requested_sparse per layer (hy_v4/nvidia/attention.py ~323-330): index_topk
    present and the layer's type one of _SPARSE_LAYER_TYPES."""
    from vllm.models.hy_v4.nvidia.attention import _SPARSE_LAYER_TYPES

    types_ = getattr(hf, "layer_types", None)
    n = hf.num_hidden_layers
    return [hasattr(hf, "index_topk") and types_ is not None and i < len(types_) and types_[i] in _SPARSE_LAYER_TYPES
            for i in range(n)]


def hy_v4_indexer_layers(hf, sparse_layers: list[bool]) -> list[bool]:
    """create_indexer per backbone layer: sparse and not a top-k sharing layer (compute_skip_topk_layers)."""
    from vllm.models.hy_v4.nvidia.attention import compute_skip_topk_layers

    skip = compute_skip_topk_layers(hf) if any(sparse_layers) else set()
    return [s and i not in skip for i, s in enumerate(sparse_layers)]


def hy_v4_layers_backend(vc, hf, heads: int, sparse_layers: list[bool], out: dict[str, Any]):
    """HY-V4's layers built in order as HYV4MLAAttention.__init__ builds them (hy_v4/nvidia/attention.py
    ~341-500): the sparse layers' probe of the selector (a RuntimeError when it finds nothing), the
    learnable sink's backend (_resolve_sink_backend, real code on a stand-in self) with _force_sparse_mqa,
    then MLAAttention's backend (the sink backend, else the selector's) and its canonicalised cache dtype
    written back to cache_config (mla_attention.py ~506-534), which the next layer reads. Returns the
    first layer's backend; out["layer_backends"] names every distinct one."""
    import torch
    from vllm.models.hy_v4.nvidia.attention import HYV4MLAAttention

    cc = vc.cache_config
    head_size = hf.kv_lora_rank + hf.qk_rope_head_dim
    dtype = torch.get_default_dtype()
    chosen = []
    sinks = []
    for is_sparse in sparse_layers:
        kv = cc.cache_dtype
        if is_sparse:
            try:
                V.selector.get_attn_backend(head_size, dtype, kv, use_mla=True, has_sink=False, use_sparse=True, num_heads=heads)
            except Exception as exc:  # noqa: BLE001 - as the model wraps it
                raise RuntimeError(
                    "HYV4 sparse attention was requested, but no valid sparse MLA backend is available for current "
                    "runtime/config. Refusing to fall back to dense attention."
                ) from exc
        stand_in = types.SimpleNamespace(kv_lora_rank=hf.kv_lora_rank, qk_rope_head_dim=hf.qk_rope_head_dim,
                                         is_sparse=is_sparse, num_local_heads=heads)
        sink_backend = None
        if bool(getattr(hf, "learnable_sink", False)):
            sink_backend = HYV4MLAAttention._resolve_sink_backend(stand_in, kv)
            if sink_backend is not None:
                HYV4MLAAttention._force_sparse_mqa(stand_in)
        backend = sink_backend or V.selector.get_attn_backend(head_size, dtype, kv, use_mla=True, use_sparse=is_sparse,
                                                              num_heads=heads)
        normalized = V._canonicalize_sparse_mla_kv_cache_dtype(backend, kv)
        if normalized != kv:
            cc.cache_dtype = normalized
        chosen.append(backend)
        sinks.append(sink_backend is not None)
    out["layer_backends"] = sorted({f"{b.get_name()}({b.__name__})" for b in chosen})
    out["learnable_sink_applied"] = sinks[0] if sinks else False
    return chosen[0]


def vllm_cell(cell: Cell, workdir: Path) -> dict[str, Any]:
    """The vLLM side of one cell: the fields of `mlasim deploy --json`, and `refusal`."""
    out: dict[str, Any] = {"cell": cell.name, **cell.params(), "refusal": None}
    _CAP[0] = V.DeviceCapability(*GPUS[cell.gpu])
    V.selector._cached_get_attn_backend.cache_clear()  # keyed without the device capability
    try:
        _vllm_cell(cell, workdir, out)
    except Refusal as r:
        out["refusal"] = {"stage": r.stage, "reason": r.reason, "where": r.where}
    except ToolError as e:
        out["tool_error"] = str(e)
    return out


def _vllm_cell(cell: Cell, workdir: Path, out: dict[str, Any]) -> None:
    import torch

    # config: vllm/engine/arg_utils.py create_engine_config -> VllmConfig.__post_init__
    try:
        ea = V.EngineArgs(
            model=model_dir(cell.config, workdir),
            skip_tokenizer_init=True,
            tensor_parallel_size=cell.tp,
            kv_cache_dtype=cell.kv,
            block_size=cell.block,
            speculative_config=speculative_config(cell.config, cell.k),
        )
        vc = ea.create_engine_config()
    except Exception as e:  # noqa: BLE001 - vLLM's config validation
        raise Refusal("config", e) from e
    mc, pc, cc = vc.model_config, vc.parallel_config, vc.cache_config
    hf = mc.hf_text_config
    if getattr(mc.hf_config, "model_type", None) in HYBRID_MODEL_TYPES:
        out.update(
            architecture=mc.architecture,
            model_type=mc.hf_config.model_type,
            use_mla=bool(mc.use_mla),
            kv_cache_dtype=cc.cache_dtype,
            num_heads_per_rank=mc.get_num_attention_heads(pc),
            model_runner="v2" if vc.use_v2_model_runner else "v1",
            spec_method=(vc.speculative_config.method if vc.speculative_config else None),
        )
        with V.set_current_vllm_config(vc), V.set_default_torch_dtype(mc.dtype):
            _hybrid_cell(vc, hf, out)
        return
    hy_v4 = getattr(mc.hf_config, "model_type", None) == "hy_v4"
    # deepseek_v2.py ~1138 is_v32; HY-V4: per layer, its layer_types (hy_v4/nvidia/attention.py ~323-330)
    sparse_layers = hy_v4_sparse_layers(hf) if hy_v4 else None
    sparse = any(sparse_layers) if hy_v4 else hasattr(hf, "index_topk")
    heads = mc.get_num_attention_heads(pc)
    head_size = hf.kv_lora_rank + hf.qk_rope_head_dim  # MLAAttention.head_size, mla_attention.py ~478
    out.update(
        architecture=mc.architecture,
        model_type=getattr(mc.hf_config, "model_type", None),
        use_mla=bool(mc.use_mla),
        sparse=sparse,
        kv_cache_dtype=cc.cache_dtype,
        num_heads_per_rank=heads,
        head_size=head_size,
        model_runner="v2" if vc.use_v2_model_runner else "v1",
        spec_method=(vc.speculative_config.method if vc.speculative_config else None),
    )

    with V.set_current_vllm_config(vc), V.set_default_torch_dtype(mc.dtype):
        # backend: mla_attention.py ~514, through the real selector; capture its selector config.
        captured: dict[str, Any] = {}
        real = V.platform.get_attn_backend_cls.__func__

        def spy(cls, selected_backend, attn_selector_config, num_heads=None):
            if "config" not in captured:  # the first layer's call (HY-V4 asks once per layer)
                captured.update(selected=selected_backend, config=attn_selector_config, num_heads=num_heads)
            return real(cls, selected_backend, attn_selector_config, num_heads)

        V.platform.get_attn_backend_cls = classmethod(spy)
        try:
            backend_exc: Exception | None = None
            try:
                if hy_v4:
                    backend = hy_v4_layers_backend(vc, hf, heads, sparse_layers, out)
                else:
                    backend = V.selector.get_attn_backend(
                        head_size, torch.get_default_dtype(), cc.cache_dtype, use_mla=True, use_sparse=sparse, num_heads=heads
                    )
            except Exception as e:  # noqa: BLE001
                backend, backend_exc = None, e
        finally:
            V.platform.get_attn_backend_cls = classmethod(real)
        if "config" in captured:
            valid, invalid = V.current_platform.get_valid_backends(_CAP[0], captured["config"], captured["num_heads"])
            cands = [(c.priority, c.backend.name, True, []) for c in valid]
            cands += [(p, b.name, False, list(reasons)) for b, (p, reasons) in invalid.items()]
            out["candidates"] = [{"name": n, "valid": ok, "reasons": r} for _, n, ok, r in sorted(cands)]
        if backend_exc is not None:
            raise Refusal("backend", backend_exc)
        out["backend"] = backend_enum_name(backend)
        layer_kv = V._canonicalize_sparse_mla_kv_cache_dtype(backend, cc.cache_dtype)  # mla_attention.py ~528
        out["sparse_mla_force_mqa"] = bool(vc.attention_config.sparse_mla_force_mqa)
        out["layer_kv_cache_dtype"] = layer_kv

        # block: interface.py ~750 with the model's layer backends (stub 5)
        layer_backends = ([V.DeepseekV32IndexerBackend] if sparse else []) + [backend]
        real_find = V.platform._find_non_ssm_backends
        V.platform._find_non_ssm_backends = classmethod(lambda cls, vllm_config: list(layer_backends))
        try:
            V.current_platform.update_block_size_for_backend(vc)
        except Exception as e:  # noqa: BLE001
            raise Refusal("block size", e) from e
        finally:
            V.platform._find_non_ssm_backends = real_find
        out["block_size"] = cc.block_size

        # kernel: the worker's specs -> layout -> KV cache groups/config -> kernel block sizes
        specs: dict[str, Any] = {}
        layer_backend: dict[str, Any] = {}
        def mla_spec_of(has_indexer: bool):
            mla_layer = types.SimpleNamespace(
                kv_cache_dtype=layer_kv,
                head_size=head_size,
                sliding_window=None,
                topk_buffer_width=(int(hf.index_topk) if sparse else None),
                indexer=(object() if has_indexer else None),
                non_causal_multi_token_decode=False,
            )
            return V.customize_attention_spec(backend, V.MLAAttention.get_kv_cache_spec(mla_layer, vc))

        # The layers that build a DSA indexer: every sparse layer, but HY-V4's "shared" indexer layers
        # (create_indexer, hy_v4/nvidia/attention.py ~331-339).
        indexer_layers = hy_v4_indexer_layers(hf, sparse_layers) if hy_v4 else [sparse] * mc.get_num_layers(pc)
        idx_spec = None
        if sparse:
            idx_dim = int(hf.index_head_dim)
            idx_layer = types.SimpleNamespace(
                head_dim=idx_dim + idx_dim // 128 * 4, dtype=torch.uint8, cache_config=cc  # deepseek_v32/attention.py ~95
            )
            idx_spec = V.customize_attention_spec(
                V.DeepseekV32IndexerBackend, V.indexer_cache_spec(idx_layer, vc)
            )
        mla_names = []
        for i in range(mc.get_num_layers(pc)):
            if indexer_layers[i]:
                n = f"model.layers.{i}.self_attn.indexer.k_cache"
                specs[n], layer_backend[n] = idx_spec, V.DeepseekV32IndexerBackend
            for n in mla_layer_names(mc, i):
                specs[n], layer_backend[n] = mla_spec_of(indexer_layers[i]), backend
                mla_names.append(n)
        try:
            layouts = [layout.name for layout in V.get_supported_kv_cache_layouts(list(dict.fromkeys(layer_backend.values())))]
            V.resolve_kv_cache_layout(vc, [layouts], list(specs.values()))
            groups = V.get_global_kv_cache_groups(vc, [specs])
            (kv_cfg,) = V.get_kv_cache_configs(vc, [specs], [AVAILABLE_MEMORY], groups)
            attn_groups = []  # v1/worker/gpu/attn_utils.py ~215: one AttentionGroup per (backend, spec)
            for gid, g in enumerate(kv_cfg.kv_cache_groups):
                by_key: dict[tuple, Any] = {}
                for n in g.layer_names:
                    spec = g.kv_cache_spec.kv_cache_specs[n] if isinstance(g.kv_cache_spec, V.UniformTypeKVCacheSpecs) else g.kv_cache_spec
                    key = (layer_backend[n].full_cls_name(), spec)
                    if key in by_key:
                        by_key[key].layer_names.append(n)
                    else:
                        by_key[key] = V.AttentionGroup(layer_backend[n], [n], spec, gid)
                attn_groups.append(list(by_key.values()))
            kernel_sizes = V.prepare_kernel_block_sizes(kv_cfg, attn_groups)
        except Exception as e:  # noqa: BLE001
            raise Refusal("kernel block size", e) from e
        gid = next(i for i, g in enumerate(kv_cfg.kv_cache_groups) if mla_names[0] in g.layer_names)
        out["kernel_block_size"] = kernel_sizes[gid]
        out["kv_cache_layout"] = cc.kv_cache_layout
        out["kv_cache_groups"] = len(kv_cfg.kv_cache_groups)
        mla_group_spec = kv_cfg.kv_cache_groups[gid].kv_cache_spec
        if isinstance(mla_group_spec, V.UniformTypeKVCacheSpecs):
            mla_group_spec = mla_group_spec.kv_cache_specs[mla_names[0]]

        # threshold: the builder's __init__ (stub 5)
        threshold, qls = builder_threshold(backend, mla_group_spec, mla_names[0], hf, heads, vc)
        out["reorder_threshold"] = threshold
        out["query_len_support"] = qls


# ---------------------------------------------------------------------------------------------
# mlasim


def mlasim_has_deploy(binary: Path) -> bool:
    try:
        r = subprocess.run([str(binary), "deploy", "--help"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return r.returncode == 0 and "--hf-config" in (r.stdout + r.stderr)


def mlasim_cell(binary: Path, cell: Cell, workdir: Path) -> dict[str, Any]:
    out_json = workdir / ("mlasim_" + re.sub(r"[^A-Za-z0-9_.=-]+", "_", cell.name) + ".json")
    cmd = [str(binary), "deploy", "--hf-config", str(cell.config), "--gpu", cell.gpu, "--kv-cache-dtype", cell.kv, "--tp", str(cell.tp)]
    if cell.block is not None:
        cmd += ["--block-size", str(cell.block)]
    if cell.k:
        cmd += ["--spec-tokens", str(cell.k)]
    cmd += ["--json", str(out_json)]
    with contextlib.suppress(FileNotFoundError):
        out_json.unlink()
    for attempt in range(31):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            break
        except OSError as e:  # the binary is being rebuilt (ETXTBSY, EACCES, ENOENT): wait a while
            if attempt == 30:
                return {"rc": -1, "stderr": f"{type(e).__name__}: {e}", "cmd": " ".join(cmd)}
            time.sleep(2)
        except subprocess.TimeoutExpired as e:
            return {"rc": -1, "stderr": f"{type(e).__name__}: {e}", "cmd": " ".join(cmd)}
    res: dict[str, Any] = {"rc": r.returncode, "stderr": r.stderr.strip(), "cmd": " ".join(cmd)}
    if out_json.exists():
        try:
            res["json"] = json.loads(out_json.read_text())
        except json.JSONDecodeError as e:
            res["json_error"] = str(e)
        out_json.unlink()
    return res


# ---------------------------------------------------------------------------------------------
# Comparison


def _norm(s: str) -> str:
    return " ".join(s.split())


def _short(v: Any, limit: int = 400) -> str:
    s = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return s if len(s) <= limit else s[: limit - 3] + "..."


SELECTOR_CLAUSE = re.compile(r" with AttentionSelectorConfig\([^()]*\)")


def compare(v: dict[str, Any], m: dict[str, Any], loose_refusals: bool = False) -> list[str]:
    """The differences of one cell (empty: identical)."""
    if "tool_error" in v:
        return [f"tool: vLLM side could not be computed: {v['tool_error']}"]
    if m["rc"] not in (0, 2):
        return [f"mlasim: failed (exit {m['rc']}): {_short(m['stderr'])}"]
    mj = m.get("json") or {}
    m_refused = m["rc"] == 2
    v_ref = v.get("refusal")
    if v_ref and m_refused:
        text = _norm(m["stderr"] + " " + str(mj.get("error", "")))
        if _norm(v_ref["reason"]) in text:
            return []
        # platforms/cuda.py ~472 puts the AttentionSelectorConfig repr into its message.
        if SELECTOR_CLAUSE.search(v_ref["reason"]) and _norm(SELECTOR_CLAUSE.sub("", v_ref["reason"])) in text:
            if loose_refusals:
                return []
            return ["refusal: same reasons, but mlasim leaves out vLLM's \" with AttentionSelectorConfig(...)\" clause "
                    "(--loose-refusals accepts that)"]
        return [f"refusal: both refuse, reasons differ\n      vLLM   {refusal_text(v_ref)}\n      mlasim {_short(m['stderr'], 2000)}"]
    if v_ref:
        return [f"refusal: vLLM refuses, mlasim accepts\n      vLLM   {refusal_text(v_ref)}"]
    if m_refused:
        return [f"refusal: mlasim refuses, vLLM accepts\n      mlasim {_short(m['stderr'], 2000)}"]
    if not mj:
        return [f"mlasim: exit 0 without a JSON ({m.get('json_error', 'missing')})"]
    diffs = []
    for f in COMPARED:
        if f not in mj:
            diffs.append(f"{f}: mlasim has no such field; vLLM {_short(v.get(f))}")
            continue
        mv, vv = mj[f], v.get(f)
        if f == "candidates":
            mv = [{"name": c.get("name"), "valid": c.get("valid"), "reasons": list(c.get("reasons", []))} for c in (mv or [])]
        if mv != vv:
            if f == "candidates":
                diffs.append("candidates:\n" + candidate_diff(vv or [], mv or []))
            else:
                diffs.append(f"{f}: mlasim {_short(mv)}  vLLM {_short(vv)}")
    return diffs


def refusal_text(r: dict[str, Any], limit: int = 2000) -> str:
    where = f" ({r['where']})" if r.get("where") else ""
    return f"[{r['stage']}{where}] {_short(r['reason'], limit)}"


def candidate_diff(v: list[dict[str, Any]], m: list[dict[str, Any]]) -> str:
    lines = []
    for i in range(max(len(v), len(m))):
        a = v[i] if i < len(v) else None
        b = m[i] if i < len(m) else None
        if a != b:
            fmt = lambda c: "-" if c is None else f"{c['name']} {'valid' if c['valid'] else 'invalid'} {c['reasons']}"  # noqa: E731
            lines.append(f"      [{i}] vLLM   {fmt(a)}\n          mlasim {fmt(b)}")
    return "\n".join(lines)


def table_line(v: dict[str, Any]) -> str:
    if "tool_error" in v:
        return f"{v['cell']}: TOOL ERROR {v['tool_error']}"
    if v.get("refusal"):
        return f"{v['cell']}: refused {refusal_text(v['refusal'], 160)}"
    return (
        f"{v['cell']}: {v['backend']} block {v['block_size']} kernel {v['kernel_block_size']} "
        f"thr {v['reorder_threshold']} {v['query_len_support']} {v['model_runner']} (kv {v['kv_cache_dtype']}"
        + (f"->{v['layer_kv_cache_dtype']}" if v.get("layer_kv_cache_dtype") != v.get("kv_cache_dtype") else "")
        + f", heads/rank {v['num_heads_per_rank']})"
    )


# ---------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="vllm_selection.py",
        description="Compare `mlasim deploy` (MLA backend selection, block sizes, decode threshold, model runner) "
        "with vLLM 0.33.0's own code, cell by cell.",
    )
    ap.add_argument("--configs", nargs="*", metavar="PATH", help="config.json files or folders (default scenarios/hf_configs/*.json)")
    ap.add_argument("--quick", action="store_true", help="acceptance grid only: GPUs a100,h200,b200,rtx-pro-6000 x kv {auto,fp8} x TP {1,8}, block unset, k 0")
    ap.add_argument("--full", action="store_true", help="also h100, gb200, b300")
    ap.add_argument("--gpus", metavar="G,...", help="these GPUs instead (" + ", ".join(GPUS) + ")")
    ap.add_argument("--mlasim", metavar="PATH", default=str(DEFAULT_MLASIM), help="the mlasim binary (default: a checkout's build-cpu/ or build/, else the installed command)")
    ap.add_argument("--vllm-only", action="store_true", help="print the vLLM table only (no mlasim)")
    ap.add_argument("--expect-table", metavar="FILE", help="write the vLLM side as a JSON table (one entry per cell)")
    ap.add_argument("--venv", default=str(DEFAULT_VENV), help="venv with vllm==0.33.0 (default ~/vllm-venv)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only differing cells and the summary")
    ap.add_argument(
        "--loose-refusals",
        action="store_true",
        help="a refusal matches when mlasim gives vLLM's text without the \"with AttentionSelectorConfig(...)\" clause",
    )
    args = ap.parse_args(argv)

    configs: list[Path] = []
    for p in args.configs if args.configs else [str(DEFAULT_CONFIGS)]:
        pp = Path(p)
        if pp.is_dir():
            configs.extend(sorted(pp.glob("*.json")))
        elif pp.is_file():
            configs.append(pp)
        else:
            ap.error(f"no such config file or folder: {p}")
    if not configs:
        ap.error("no config.json files to check")
    if args.gpus:
        gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
        bad = [g for g in gpus if g not in GPUS]
        if bad:
            ap.error(f"unknown GPU(s) {', '.join(bad)}; known: {', '.join(GPUS)}")
    else:
        gpus = FULL_GPUS if args.full else ACCEPTANCE_GPUS
    cells = make_grid([c.resolve() for c in configs], gpus, args.quick)

    reexec_in_venv(
        Path(args.venv),
        ("vllm",),
        f"set up the venv: python3 -m venv {args.venv} && {args.venv}/bin/pip install vllm==0.33.0  "
        "(see tools/conformance/README.md)",
    )
    mlasim = Path(args.mlasim)
    if not args.vllm_only:
        if not (mlasim.is_file() and os.access(mlasim, os.X_OK)):
            print(f"mlasim binary not found: {mlasim} (build it, or pass --mlasim PATH; --vllm-only runs vLLM alone)", file=sys.stderr)
            return 2
        stamp = mlasim.stat().st_mtime
        if not mlasim_has_deploy(mlasim):
            print(f"{mlasim} has no `deploy` subcommand (with --hf-config) yet; --vllm-only runs vLLM alone", file=sys.stderr)
            return 2

    t0 = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="mlasim-selection-"))
    try:
        import_vllm(workdir)
        print(environment_line())
        for name, why in V.import_failures.items():
            print(f"note: backend {name} does not import on this machine ({_short(why, 200)}); its candidate "
                  "entries carry that as their reason")
        print("stubbed (CPU machine): " + "; ".join(f"({i + 1}) {s}" for i, s in enumerate(STUBS)))
        print(f"{len(cells)} cells: {len(configs)} configs x {','.join(gpus)} x kv {{{','.join(KV_DTYPES)}}} x TP {{1,8}}"
              + ("" if args.quick else " x block {auto,64,128,16} x k {0,1,3}") + f"; vLLM imported in {time.time() - t0:.1f} s",
              flush=True)
        pool = None
        futures = {}
        if not args.vllm_only:
            pool = ThreadPoolExecutor(max_workers=2)
            futures = {c.name: pool.submit(mlasim_cell, mlasim, c, workdir) for c in cells}
        table = []
        differing = 0
        categories: dict[str, int] = {}
        for cell in cells:
            v = vllm_cell(cell, workdir)
            table.append(v)
            if args.vllm_only:
                print(table_line(v), flush=True)
                continue
            m = futures[cell.name].result()
            diffs = compare(v, m, args.loose_refusals)
            if diffs:
                differing += 1
                for d in diffs:
                    cat = d.split("\n")[0]
                    cat = cat if cat.startswith("refusal:") else cat.split(":")[0]
                    categories[cat] = categories.get(cat, 0) + 1
                print(f"{cell.name}: differing")
                for d in diffs:
                    print(f"    {d}")
                print(f"    (mlasim: {m['cmd']})", flush=True)
            elif not args.quiet:
                print(f"{cell.name}: identical", flush=True)
        if pool is not None:
            pool.shutdown()
        if args.expect_table:
            Path(args.expect_table).write_text(json.dumps(table, indent=1) + "\n")
            print(f"wrote the vLLM table ({len(table)} cells) to {args.expect_table}")
        tool_errors = sum(1 for v in table if "tool_error" in v)
        if args.vllm_only:
            refused = sum(1 for v in table if v.get("refusal"))
            print(f"{len(table)} cells: {len(table) - refused - tool_errors} accepted, {refused} refused by vLLM"
                  + (f", {tool_errors} tool errors" if tool_errors else "") + f" ({time.time() - t0:.0f} s)")
            return 0 if not tool_errors else 1
        if not mlasim.exists() or mlasim.stat().st_mtime != stamp:
            print(f"warning: {mlasim} was rebuilt during this run; results may mix two builds")
        print(f"{len(cells) - differing} identical, {differing} differing ({time.time() - t0:.0f} s)")
        for cat, n in sorted(categories.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:5d}  {cat}")
        return 0 if differing == 0 else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
