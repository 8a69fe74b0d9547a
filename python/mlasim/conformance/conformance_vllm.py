"""vLLM's side of the conformance check (0.33.0, or the release installed in the venv): its real
Scheduler on the CPU, driven with
mlasim's step loop (engine/engine.cpp) and teacher forcing (sim/teacher_forcing.cpp) over a
resolved trace (conformance_mlasim.Trace), and its real batch ordering and decode/prefill split.
`replay_vllm` returns a record shaped like `mlasim run --json`."""
from __future__ import annotations

import argparse
import ast
import json
import os
import traceback
from pathlib import Path
from typing import Any

from . import conformance_linear
from .conformance_mlasim import Req, Trace
from .conformance_release import Release

MAX_IDLE_STEPS = 1000  # engine/engine.h kMaxIdleSteps
MAX_STEPS = 20000
class VllmRejects(Exception):
    """vLLM's config or request validation refused the trace."""


class VllmStall(Exception):
    """vLLM made no progress for MAX_IDLE_STEPS steps (or ran MAX_STEPS): `step` is the last step
    run, `steps` every step, `requests` the state of each request added (`_request_state`)."""

    def __init__(self, what: str, step: int = -1, steps: list[dict[str, Any]] | None = None,
                 requests: list[dict[str, Any]] | None = None):
        super().__init__(what)
        self.step, self.steps, self.requests = step, steps or [], requests or []


class VllmStops(Exception):
    """vLLM's scheduler raised an assertion in schedule() at `step`; `steps` are the ones before,
    `requests` the unfinished requests as the scheduler holds them after the raise (`_request_state`)."""

    def __init__(self, step: int, what: str, steps: list[dict[str, Any]], requests: list[dict[str, Any]] | None = None):
        super().__init__(f"step {step}: {what}")
        self.step, self.what, self.steps, self.requests = step, what, steps, requests or []


class _V:  # the vLLM names this module uses, set by import_vllm
    pass


V = _V()


def import_vllm(runner: str) -> str:
    """Imports vLLM for the model runner `runner`; returns its version."""
    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1" if runner == "v2" else "0"
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import torch
    import vllm
    from vllm.config import CacheConfig, DeviceConfig, ModelConfig, ParallelConfig, SchedulerConfig, SpeculativeConfig, VllmConfig
    from vllm.sampling_params import SamplingParams
    try:
        from vllm.utils.hashing import sha256
    except ImportError:  # before 0.12: vllm/utils/__init__.py
        from vllm.utils import sha256
    try:
        from vllm.v1.attention.backends.utils import reorder_batch_to_split_decodes_and_prefills, split_decodes_and_prefills
        MLACommonMetadataBuilder = None
    except ImportError:  # 0.8: the MLA metadata builder reorders and splits (mla/common.py reorder_batch)
        from vllm.v1.attention.backends.mla.common import MLACommonMetadataBuilder
        reorder_batch_to_split_decodes_and_prefills = split_decodes_and_prefills = None
    try:
        from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    except ImportError:  # 0.8: the KV cache manager hashes the blocks itself
        get_request_block_hasher = init_none_hash = None
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import KVCacheConfig, KVCacheGroupSpec
    try:
        from vllm.v1.kv_cache_interface import MLAAttentionSpec
    except ImportError:  # 0.8: a full-attention spec with use_mla
        from vllm.v1.kv_cache_interface import FullAttentionSpec

        def MLAAttentionSpec(**kw):  # noqa: N802 - stands for the class
            return FullAttentionSpec(**kw, use_mla=True)
    try:  # 0.33: the start-up check of the KV cache against max_model_len
        from vllm.v1.attention.backends.utils import resolve_kv_cache_layout
        from vllm.v1.core.kv_cache_planning import get_kv_cache_configs
    except ImportError:  # older releases check the profiled memory, before num_gpu_blocks_override
        get_kv_cache_configs = resolve_kv_cache_layout = None
    from vllm.v1.outputs import ModelRunnerOutput
    try:
        from vllm.v1.outputs import DraftTokenIds
    except ImportError:  # 0.8: drafts come back in ModelRunnerOutput.spec_token_ids
        DraftTokenIds = None
    from vllm.v1.request import Request, RequestStatus
    from vllm.v1.structured_output import StructuredOutputManager
    import vllm.v1.worker.gpu_input_batch as gpu_input_batch

    # The persistent batch lives on the CPU here: no pinned host buffers without a GPU driver
    # (0.33: a module flag; older releases take pin_memory in InputBatch's constructor).
    gpu_input_batch.PIN_MEMORY = False
    # 0.8's VllmConfig asks the platform whether async output processing (a V0 feature) is
    # supported; with no GPU the platform is UnspecifiedPlatform, which raises. The answer does not
    # touch the V1 scheduler.
    from vllm.platforms import current_platform

    if type(current_platform).__name__ == "UnspecifiedPlatform":
        type(current_platform).is_async_output_supported = classmethod(lambda cls, enforce_eager: False)
    if init_none_hash is not None:
        init_none_hash(sha256)
    for name, value in list(locals().items()):
        setattr(V, name, value)
    V.release = Release()
    try:
        from vllm.v1.worker.gpu.model_runner import sort_batch_req_ids

        V.sort_batch_req_ids = sort_batch_req_ids
    except Exception:  # noqa: BLE001 - only the V2 runner needs it
        V.sort_batch_req_ids = None
    return vllm.__version__


def vllm_threshold(trace: Trace) -> tuple[int, bool]:
    """The decode threshold and require_uniform the installed release uses for the trace."""
    return V.release.threshold(trace.engine, trace.sched["num_speculative_tokens"])


def _call(fn, **kwargs):
    """`fn` with the keyword arguments its signature takes: the releases add and drop parameters
    (Scheduler's block_size, SchedulerConfig's scheduler_reserve_full_isl, Request's
    eos_token_id, ModelRunnerOutput's logprobs and pooler_output, InputBatch's pin_memory)."""
    import inspect

    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**kwargs)
    return fn(**{k: v for k, v in kwargs.items() if k in params})


_model_dirs: dict[tuple, str] = {}


def model_dir(trace: Trace, tmp: Path) -> str:
    """A small DeepSeek-V3-style config.json (no weights: the scheduler never loads a model)."""
    m = trace.model
    key = (m["vocab_size"], m["max_position_embeddings"], m["eos_token_id"])
    if key not in _model_dirs:
        d = tmp / f"model_{os.getpid()}_{len(_model_dirs)}"
        d.mkdir(parents=True, exist_ok=True)
        cfg = {
            "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": key[0],
            "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 4, "n_routed_experts": 4, "n_shared_experts": 1,
            "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 2,
            "num_nextn_predict_layers": 1, "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64, "v_head_dim": 128, "max_position_embeddings": key[1], "rms_norm_eps": 1e-6,
            "rope_theta": 10000, "bos_token_id": 0, "eos_token_id": key[2], "hidden_act": "silu",
            "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        }  # fmt: skip
        (d / "config.json").write_text(json.dumps(cfg))
        _model_dirs[key] = str(d)
    return _model_dirs[key]


def v1_engine_refusal(trace: Trace, mdir: str) -> str | None:
    """Releases with a V0 engine (up to 0.10) run a configuration on V1 only when
    EngineArgs._is_v1_supported_oracle says so. Its verdict on the trace's speculation: the oracle
    is run and the first feature it sends to V0 is read (later checks, such as the device, concern
    this CPU, not the deployment)."""
    import inspect

    import vllm.engine.arg_utils as au

    k = trace.sched["num_speculative_tokens"]
    if not k or not hasattr(au.EngineArgs, "_is_v1_supported_oracle"):
        return None
    method = "deepseek_mtp" if trace.sched["speculative_method"] == "mtp" else "ngram"
    spec = {"method": method, "num_speculative_tokens": k}
    if method == "ngram":
        spec.update(prompt_lookup_max=2, prompt_lookup_min=1)
    features: list[str] = []
    original = au._raise_or_fallback
    au._raise_or_fallback = lambda feature_name, recommend_to_remove: features.append(feature_name)
    try:
        ea = au.EngineArgs(model=mdir, skip_tokenizer_init=True, speculative_config=spec, max_model_len=trace.sched["max_model_len"])
        ea._is_v1_supported_oracle(ea.create_model_config())
    finally:
        au._raise_or_fallback = original
    if features and features[0] == "Speculative Decoding":
        line = inspect.getsourcelines(au.EngineArgs._is_v1_supported_oracle)[1]
        return f"{method} speculation falls back to the V0 engine (engine/arg_utils.py:{line} _is_v1_supported_oracle)"
    return None


def make_vllm_config(trace: Trace, tmp: Path):
    """The VllmConfig of the trace's deployment (model, scheduler, cache and speculative config)."""
    s = trace.sched
    mml = s["max_model_len"]
    mdir = model_dir(trace, tmp)
    refusal = v1_engine_refusal(trace, mdir)
    if refusal:
        raise ValueError(refusal)
    model_config = _call(
        V.ModelConfig, model=mdir, skip_tokenizer_init=True, max_model_len=mml, dtype="bfloat16", seed=0,
        task="generate", tokenizer=mdir, tokenizer_mode="auto", trust_remote_code=False,  # 0.8's required arguments
    )
    if s["scheduler_reserve_full_isl"] and not V.release.has_scheduler_option("scheduler_reserve_full_isl"):
        raise ValueError(f"vLLM {V.release.version} has no scheduler_reserve_full_isl (its admission reserves nothing)")
    scheduler_config = _call(
        V.SchedulerConfig,
        max_num_batched_tokens=s["max_num_batched_tokens"],
        max_num_seqs=s["max_num_seqs"],
        max_model_len=mml,
        is_encoder_decoder=False,
        enable_chunked_prefill=s["enable_chunked_prefill"],
        long_prefill_token_threshold=s["long_prefill_token_threshold"],
        policy=s["policy"],
        scheduler_reserve_full_isl=s["scheduler_reserve_full_isl"],
        async_scheduling=False,
    )
    cache_config = V.CacheConfig(block_size=s["block_size"], enable_prefix_caching=s["enable_prefix_caching"])
    k = s["num_speculative_tokens"]
    # The drafts come from teacher forcing, as in mlasim; the method only sets the scheduler's
    # reservations: MTP (DeepSeek's drafter: the target's config with num_nextn_predict_layers,
    # eagle-family) k lookahead slots and one-token hash lookahead, n-gram none.
    spec = None
    if k and s["speculative_method"] == "mtp":
        spec = V.SpeculativeConfig(
            method="mtp", num_speculative_tokens=k, target_model_config=model_config, target_parallel_config=V.ParallelConfig()
        )
    elif k:
        spec = V.SpeculativeConfig(method="ngram", num_speculative_tokens=k, prompt_lookup_max=2, prompt_lookup_min=1)
    vllm_config = V.VllmConfig(
        model_config=model_config,
        scheduler_config=scheduler_config,
        cache_config=cache_config,
        device_config=V.DeviceConfig("cpu"),
        speculative_config=spec,
    )
    sc = vllm_config.scheduler_config
    if (vllm_config.cache_config.enable_prefix_caching, sc.max_num_batched_tokens) != (s["enable_prefix_caching"], s["max_num_batched_tokens"]):
        # 0.8's VllmConfig.__post_init__ (config.py:3933-3945) turns chunked prefill and prefix
        # caching off, and raises the token budget, for MLA on a platform that is not CUDA or
        # ROCm: this CPU. The GPU deployment the trace describes keeps its settings.
        sc.enable_chunked_prefill = sc.chunked_prefill_enabled = s["enable_chunked_prefill"]
        sc.max_num_batched_tokens = s["max_num_batched_tokens"]
        vllm_config.cache_config.enable_prefix_caching = s["enable_prefix_caching"]
    if "kv_cache_groups" in s:
        # A hybrid model on a GPU: the hybrid KV cache manager stays on (config/vllm.py:2228-2294
        # turns it off only on platforms without it, as this CPU), and Mamba layers run "align"
        # with prefix caching, "none" (one block of max_model_len) without
        # (model_executor/models/config.py:750-787).
        sc.disable_hybrid_kv_cache_manager = False
        cc = vllm_config.cache_config
        cc.mamba_cache_mode = "align" if s["enable_prefix_caching"] else "none"
        cc.mamba_block_size = s["block_size"] if s["enable_prefix_caching"] else mml
    return vllm_config


# The family whose layer specs build the hybrid KVCacheConfig (vllm_conformance.py --family); None:
# the trace's kv_cache_groups are turned into one spec each.
FAMILY: str | None = None


def _synthesized_spec(g: dict[str, Any]):
    """A group's spec from its mlasim fields: the spec class of its kind with those fields (a
    one-byte row, padded to the group's page size when it has one)."""
    from vllm.v1.kv_cache_interface import CircularBufferSpec, MambaSpec, SlidingWindowMLASpec

    torch = V.torch
    page = g["page_size_bytes"] or None
    common = dict(block_size=g["block_size"], num_kv_heads=1, head_size=1, dtype=torch.uint8, page_size_padded=page)
    kind = g["kind"]
    if kind == "mla_attention":
        return V.MLAAttentionSpec(**common, tokens_per_state=g["tokens_per_state"])
    if kind == "sliding_window_mla":
        return SlidingWindowMLASpec(**common, tokens_per_state=g["tokens_per_state"], sliding_window=g["sliding_window"],
                                    extra_retained_tokens=g["extra_retained_tokens"])
    if kind == "circular_buffer":
        return CircularBufferSpec(**common)
    return MambaSpec(shapes=((1,),), dtypes=(torch.uint8,), block_size=g["block_size"], page_size_padded=page,
                     mamba_cache_mode=g["mamba_cache_mode"], num_speculative_blocks=g["num_speculative_blocks"],
                     num_prefill_checkpoint_blocks=g["num_prefill_checkpoint_blocks"],
                     prefill_checkpoint_alignment=g["prefill_checkpoint_alignment"] or None)


def hybrid_kv_cache_config(trace: Trace, vllm_config):
    """The KVCacheConfig, scheduler block size and hash block size of a trace with several KV cache
    groups: the family's, planned as EngineCore plans it (conformance_families.build), or the
    trace's groups one spec each."""
    from vllm.v1.core.kv_cache_utils import resolve_kv_cache_block_sizes

    s = trace.sched
    n = s["num_gpu_blocks"]
    if FAMILY is not None:
        from . import conformance_families

        kc, sbs, hbs, entries = conformance_families.build(FAMILY, vllm_config, n, s["num_speculative_tokens"], V)
        ours = [{k: g[k] for k in e} for g, e in zip(s["kv_cache_groups"], entries)]
        if ours != entries:
            raise ValueError(f"{FAMILY}: vLLM's groups {entries} are not the trace's {s['kv_cache_groups']}")
        return kc, sbs, hbs
    groups = [V.KVCacheGroupSpec([f"group{i}.layer0"], _synthesized_spec(g)) for i, g in enumerate(s["kv_cache_groups"])]
    kc = _call(V.KVCacheConfig, num_blocks=n, kv_cache_tensors=[], tensors={}, kv_cache_groups=groups,
               prefix_cache_retention_interval=s["prefix_cache_retention_interval"])
    cc = vllm_config.cache_config
    cc.num_gpu_blocks = n
    cc.block_size = min(g.kv_cache_spec.block_size for g in groups if g.kv_cache_spec.prefix_cacheable)  # core.py:341-349
    sbs, hbs = resolve_kv_cache_block_sizes(kc, vllm_config)
    return kc, sbs, hbs


def make_scheduler(trace: Trace, tmp: Path):
    s = trace.sched
    try:
        vllm_config = make_vllm_config(trace, tmp)
        n = s["num_gpu_blocks"]
        vllm_config.cache_config.num_gpu_blocks = n
        if "kv_cache_groups" in s:
            kv_cache_config, block_size, hash_block_size = hybrid_kv_cache_config(trace, vllm_config)
        else:
            kv_cache_config = single_group_kv_cache_config(vllm_config, n, s["block_size"])
            block_size = hash_block_size = s["block_size"]
        sched = _call(
            V.Scheduler,
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            structured_output_manager=V.StructuredOutputManager(vllm_config),
            block_size=block_size,
            hash_block_size=hash_block_size,
            log_stats=False,
        )
    except Exception as e:  # noqa: BLE001 - vLLM's config validation
        if os.environ.get("MLASIM_CONFORMANCE_DEBUG"):
            traceback.print_exc()
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("For further")]
        raise VllmRejects(f"{type(e).__name__}: {' / '.join(lines[:3])}") from e
    return sched, vllm_config


def single_group_kv_cache_config(vllm_config, n: int, block_size: int):
    """One MLA group of the cache's block size, after vLLM's start-up check of it."""
    kv_spec = V.MLAAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=576, dtype=V.torch.bfloat16)
    if V.get_kv_cache_configs is not None:
        # EngineCore's start-up planning with num_gpu_blocks_override = n: vLLM's own check that
        # the usable blocks (the null block held back) hold max_model_len (kv_cache_planning.py
        # get_kv_cache_configs). Its ValueError is vLLM refusing the trace.
        vllm_config.cache_config.num_gpu_blocks_override = n
        # EngineCore resolves the layout first (v1/engine/core.py:286); with one MLA group the
        # check does not depend on it: the legacy NHD default.
        V.resolve_kv_cache_layout(vllm_config, [["LBNHC"]], [kv_spec])
        try:
            V.get_kv_cache_configs(vllm_config, [{"mla": kv_spec}], [n * kv_spec.page_size_bytes],
                                   [V.KVCacheGroupSpec(["mla"], kv_spec)])
        finally:
            vllm_config.cache_config.num_gpu_blocks_override = None
    return _call(V.KVCacheConfig, num_blocks=n, kv_cache_tensors=[], tensors={}, kv_cache_groups=[V.KVCacheGroupSpec(["mla"], kv_spec)])


def make_request(trace: Trace, r: Req, arrival: int, vllm_config):
    mml = trace.sched["max_model_len"]
    # vllm/v1/engine/input_processor.py _validate_prompt_len: prompt_len >= max_model_len is refused.
    if len(r.prompt) >= mml:
        raise VllmRejects(f"request {r.id}: prompt length {len(r.prompt)} >= max_model_len {mml}")
    try:
        sp = V.SamplingParams(
            max_tokens=r.max_tokens,
            min_tokens=r.min_tokens,
            ignore_eos=r.ignore_eos,
            stop_token_ids=list(r.stop_token_ids),
            temperature=0.0,
        )
        sp.update_from_generation_config({}, trace.model["eos_token_id"])  # 0.11: model_eos_token_id
    except Exception as e:  # noqa: BLE001
        raise VllmRejects(f"request {r.id}: {type(e).__name__}: {e}") from e
    if r.priority and V.release.refuses_request_priority:
        raise VllmRejects(f"request {r.id}: priority {r.priority}: {V.release.refuses_request_priority}")
    # As EngineCore.__init__ (vllm/v1/engine/core.py) builds it.
    hasher = None
    if trace.sched["enable_prefix_caching"] and V.get_request_block_hasher is not None:
        lookahead = getattr(vllm_config, "num_hash_lookahead_tokens", None)  # 0.33's MTP hash lookahead
        # EngineCore hashes at the hash block size (v1/engine/core.py:225-231): the block size with
        # one group.
        hash_block_size = trace.sched.get("hash_block_size", trace.sched["block_size"])
        args = (hash_block_size, V.sha256) + ((lookahead,) if lookahead is not None else ())
        hasher = V.get_request_block_hasher(*args)
    return _call(
        V.Request,
        request_id=r.id,
        prompt_token_ids=list(r.prompt),
        sampling_params=sp,
        pooling_params=None,
        arrival_time=float(arrival),
        priority=r.priority,
        block_hasher=hasher,
        eos_token_id=trace.model["eos_token_id"],
        multi_modal_inputs=None,  # 0.8's required multimodal arguments
        multi_modal_hashes=None,
        multi_modal_placeholders=None,
    )


class V1PersistentBatch:
    """vLLM's real InputBatch (vllm/v1/worker/gpu_input_batch.py) on the CPU, driven the way
    GPUModelRunner._update_states (vllm/v1/worker/gpu_model_runner.py) drives it: the row
    placement part of that method is ported here (removals, CachedRequestState bookkeeping, adds,
    condense), then vLLM's own reorder_batch_to_split_decodes_and_prefills runs on it."""

    def __init__(self, trace: Trace, threshold: int):
        s = trace.sched
        mml, bs = s["max_model_len"], s["block_size"]
        self.threshold = threshold
        # One block table per KV cache group (the runner's MultiGroupBlockTable); a Mamba group's
        # row also holds its speculative blocks (MambaSpec.max_num_blocks_per_req).
        sizes = [g["block_size"] for g in s.get("kv_cache_groups", [{"block_size": bs}])]
        widths = [-(-mml // size) + 2 + s["num_speculative_tokens"] for size in sizes]
        self.batch = _call(
            V.gpu_input_batch.InputBatch,
            max_num_reqs=s["max_num_seqs"],
            max_model_len=mml,
            max_num_batched_tokens=s["max_num_batched_tokens"],
            device=V.torch.device("cpu"),
            vocab_size=trace.model["vocab_size"],
            block_sizes=sizes,
            kernel_block_sizes=sizes,
            # One entry per KV cache group; 0.8's InputBatch has one group and takes an int.
            max_num_blocks_per_req=(widths if "kv_cache_groups" in s else [-(-mml // bs) + 1]) if self._grouped() else -(-mml // bs) + 1,
            num_spec_tokens=s["num_speculative_tokens"],
            num_speculative_tokens=s["num_speculative_tokens"],
            is_spec_decode=s["num_speculative_tokens"] > 0,
            pin_memory=False,
        )
        self.states: dict[str, Any] = {}

    @staticmethod
    def _new_state(nr, block_ids):
        """The runner's CachedRequestState of a newly scheduled request (each release's fields)."""
        return _call(
            V.gpu_input_batch.CachedRequestState,
            req_id=nr.req_id,
            prompt_token_ids=nr.prompt_token_ids,
            mm_features=[],
            mm_inputs=[],
            mm_positions=[],
            sampling_params=nr.sampling_params,
            generator=None,
            block_ids=block_ids,
            num_computed_tokens=nr.num_computed_tokens,
            output_token_ids=[],
            pooling_params=None,
        )

    @staticmethod
    def _grouped() -> bool:
        import inspect

        return "block_sizes" in inspect.signature(V.gpu_input_batch.InputBatch).parameters

    def update(self, so) -> list[str]:
        b = self.batch
        for rid in so.finished_req_ids:
            self.states.pop(rid, None)
            b.remove_request(rid)
        scheduled = so.num_scheduled_tokens.keys()
        resumed = resumed_ids(so.scheduled_cached_reqs)
        # 0.33 also drops the resumed requests' stale rows; 0.11 (no resumed_req_ids) keeps
        # every scheduled one (gpu_model_runner.py:584).
        stale = resumed if hasattr(so.scheduled_cached_reqs, "resumed_req_ids") else set()
        for rid in b.req_id_to_index.keys() - (scheduled - stale):
            b.remove_request(rid)
        to_add = []
        for nr in so.scheduled_new_reqs:
            st = self._new_state(nr, tuple(list(g) for g in nr.block_ids))
            self.states[nr.req_id] = st
            to_add.append(st)
        cr = so.scheduled_cached_reqs
        for i, rid in enumerate(cr.req_ids):
            st = self.states[rid]
            nct = cr.num_computed_tokens[i]
            new_block_ids = cr.new_block_ids[i]
            st.num_computed_tokens = nct
            if rid not in resumed:
                if new_block_ids is not None:
                    for ids, new in zip(st.block_ids, new_block_ids):
                        ids.extend(new)
            else:
                st.block_ids = tuple(list(g) for g in new_block_ids)
            idx = b.req_id_to_index.get(rid)
            if idx is None:
                to_add.append(st)
                continue
            b.num_computed_tokens_cpu[idx] = nct
            if new_block_ids is not None:
                b.block_table.append_row(new_block_ids, idx)
        for st in to_add:
            b.add_request(st)
        b.condense()
        V.reorder_batch_to_split_decodes_and_prefills(b, so, decode_threshold=self.threshold)
        if hasattr(b, "batch_update_builder"):
            b.batch_update_builder.get_and_reset(b.num_reqs)  # refresh_metadata's reset (no sampling metadata needed)
        return list(b.req_ids)

    def nct(self, rid: str) -> int:
        return int(self.batch.num_computed_tokens_cpu[self.batch.req_id_to_index[rid]])

    def prompt_len(self, rid: str) -> int:
        return int(self.batch.num_prompt_tokens[self.batch.req_id_to_index[rid]])


class V1PersistentBatch08(V1PersistentBatch):
    """vLLM 0.8's InputBatch driven as its GPUModelRunner._update_states
    (v1/worker/gpu_model_runner.py:285-486) drives it: removed rows' indices are refilled smallest
    first by added requests, then condense(removed); then the MLA metadata builder's own
    reorder_batch (v1/attention/backends/mla/common.py:386-444: q == 1 is a decode), which also
    counts the split."""

    def __init__(self, trace: Trace, threshold: int):
        super().__init__(trace, threshold)
        self.builder = argparse.Namespace()  # reorder_batch's `self`: it only stores the counts
        self.counts = (0, 0, 0, 0)

    def update(self, so) -> list[str]:
        b = self.batch
        removed: list[int] = []
        for rid in so.finished_req_ids:
            self.states.pop(rid, None)
            idx = b.remove_request(rid)
            if idx is not None:
                removed.append(idx)
        for rid in b.req_id_to_index.keys() - so.num_scheduled_tokens.keys():
            removed.append(b.remove_request(rid))
        to_add = []
        for nr in so.scheduled_new_reqs:
            st = self._new_state(nr, list(nr.block_ids))  # 0.8: one group, a flat list
            self.states[nr.req_id] = st
            to_add.append(st)
        for rd in so.scheduled_cached_reqs:
            st = self.states[rd.req_id]
            st.num_computed_tokens = rd.num_computed_tokens
            if rd.resumed_from_preemption:
                st.block_ids = list(rd.new_block_ids)
            else:
                st.block_ids.extend(rd.new_block_ids)
            idx = b.req_id_to_index.get(rd.req_id)
            if idx is None:
                to_add.append(st)
                continue
            b.num_computed_tokens_cpu[idx] = rd.num_computed_tokens
            b.block_table.append_row(rd.new_block_ids, idx)
        removed.sort(reverse=True)
        for st in to_add:
            b.add_request(st, removed.pop() if removed else None)
        if removed:
            b.condense(removed)
        V.MLACommonMetadataBuilder.reorder_batch(self.builder, b, so)
        nb = self.builder
        self.counts = (nb._num_decodes, nb._num_prefills, nb._num_decode_tokens, nb._num_prefill_tokens)
        return list(b.req_ids)


class V2Batch:
    """Model runner V2 (vllm/v1/worker/gpu/model_runner.py): no persistent batch; each step's
    rows are sort_batch_req_ids(num_scheduled_tokens, drafts, decode_query_len = 1 + k)."""

    def __init__(self, trace: Trace, requests: dict[str, Any]):
        self.k = trace.sched["num_speculative_tokens"]
        self.requests = requests
        self.pre_nct: dict[str, int] = {}

    def update(self, so) -> list[str]:
        self.pre_nct = {nr.req_id: nr.num_computed_tokens for nr in so.scheduled_new_reqs}
        cr = so.scheduled_cached_reqs
        self.pre_nct.update(zip(cr.req_ids, cr.num_computed_tokens))
        return V.sort_batch_req_ids(so.num_scheduled_tokens, so.scheduled_spec_decode_tokens, 1 + self.k)

    def nct(self, rid: str) -> int:
        return self.pre_nct[rid]

    def prompt_len(self, rid: str) -> int:
        return self.requests[rid].num_prompt_tokens


# MLA's builder passes treat_short_extends_as_decodes = not use_pcp (True without prefill context
# parallelism); the `strict` profile is the split with False (--profile strict).
TREAT_SHORT_EXTENDS_AS_DECODES = True


def split(rows: list[str], so, threshold: int, require_uniform: bool, batch) -> tuple[int, int, int, int]:
    """vLLM's split_decodes_and_prefills on the step's rows (the CommonAttentionMetadata fields it
    reads)."""
    if not rows:
        return (0, 0, 0, 0)
    if isinstance(batch, V1PersistentBatch08):  # counted by the builder's reorder_batch
        return batch.counts
    q = [so.num_scheduled_tokens[r] for r in rows]
    qsl = [0]
    for x in q:
        qsl.append(qsl[-1] + x)
    meta = argparse.Namespace(
        max_query_len=max(q),
        num_reqs=len(rows),
        num_actual_tokens=qsl[-1],
        query_start_loc_cpu=V.torch.tensor(qsl, dtype=V.torch.int32),
        is_prefilling=V.torch.tensor([batch.nct(r) < batch.prompt_len(r) for r in rows]),
    )
    kw = {} if TREAT_SHORT_EXTENDS_AS_DECODES else {"treat_short_extends_as_decodes": False}
    nd, np_, ndt, npt = V.split_decodes_and_prefills(meta, decode_threshold=threshold, require_uniform=require_uniform, **kw)
    return (int(nd), int(np_), int(ndt), int(npt))


def resumed_ids(cr) -> set[str]:
    """The resumed requests of CachedRequestData (0.33: resumed_req_ids; 0.11: a flag per row)."""
    if hasattr(cr, "resumed_req_ids"):
        return set(cr.resumed_req_ids)
    return {rid for rid, r in zip(cr.req_ids, cr.resumed_from_preemption) if r}


def _groups(block_ids):
    """Block ids per KV cache group: 0.8 has one group and a flat list."""
    if block_ids is None:
        return None
    return (list(block_ids),) if not block_ids or isinstance(block_ids[0], int) else block_ids


class _CachedReqs:
    """0.8's scheduled_cached_reqs (a list of per-request CachedRequestData) in the
    struct-of-lists shape of later releases."""

    def __init__(self, rows):
        self.req_ids = [r.req_id for r in rows]
        self.num_computed_tokens = [r.num_computed_tokens for r in rows]
        self.new_block_ids = [_groups(r.new_block_ids) for r in rows]
        self.resumed_from_preemption = [r.resumed_from_preemption for r in rows]


def cached_reqs(so):
    cr = so.scheduled_cached_reqs
    return _CachedReqs(cr) if isinstance(cr, list) else cr


def _step_record(step: int, so, sched, runner: str, was_preempted: set[str], preempted: list[str]) -> dict[str, Any]:
    """`preempted`: the requests whose preemption count schedule() raised (releases whose
    SchedulerOutput has no preempted_req_ids)."""
    rec: dict[str, Any] = {"step": step, "num_scheduled_tokens": dict(so.num_scheduled_tokens)}
    new_ids = [nr.req_id for nr in so.scheduled_new_reqs]
    cr = cached_reqs(so)
    if runner == "v2":  # MRV2: resumed requests are sent as new requests
        rec["new"] = [i for i in new_ids if i not in was_preempted]
        rec["resumed"] = [i for i in new_ids if i in was_preempted]
    else:
        rec["new"] = new_ids
        resumed = resumed_ids(cr)
        rec["resumed"] = [i for i in cr.req_ids if i in resumed]
    rec["preempted"] = sorted(so.preempted_req_ids) if hasattr(so, "preempted_req_ids") else preempted
    # With several KV cache groups, new_block_ids is the MLA layers' group (mlasim's block_ids) and
    # new_block_ids_by_group every group's.
    groups = sched.kv_cache_manager.kv_cache_config.kv_cache_groups
    attn = next((i for i, g in enumerate(groups) if type(g.kv_cache_spec).__name__ == "MLAAttentionSpec"), 0)
    nbi = {nr.req_id: list(_groups(nr.block_ids)[attn]) for nr in so.scheduled_new_reqs}
    for i, rid in enumerate(cr.req_ids):
        if cr.new_block_ids[i] is not None and cr.new_block_ids[i][attn]:
            nbi[rid] = list(cr.new_block_ids[i][attn])
    rec["new_block_ids"] = nbi
    if len(groups) > 1:
        by_group = {nr.req_id: [list(g) for g in nr.block_ids] for nr in so.scheduled_new_reqs}
        for i, rid in enumerate(cr.req_ids):
            if cr.new_block_ids[i] is not None:
                by_group[rid] = [list(g) for g in cr.new_block_ids[i]]
        rec["new_block_ids_by_group"] = by_group
    rec["scheduled_spec_decode_tokens"] = {i: list(d) for i, d in so.scheduled_spec_decode_tokens.items()}
    rec["num_free_blocks"] = sched.kv_cache_manager.block_pool.get_num_free_blocks()
    return rec


def group_blocks(sched: dict[str, Any], tokens: int, startup: bool = False) -> int:
    """The blocks a request of `tokens` tokens holds at once over the KV cache groups, as mlasim's
    Scheduler::can_never_fit counts them (sim/kv_cache/group_capacity.h): full attention every
    block, a sliding window at most its admission cap (SlidingWindowSpec.max_admission_blocks_per_request),
    Mamba its state blocks, a circular buffer one. `startup`: vLLM's start-up need for a request of
    `tokens` = max_model_len (kv_cache_planning.py:1253-1286), a sliding window's whole cap."""
    mml, total = sched["max_model_len"], 0
    for g in sched["kv_cache_groups"]:
        bs, kind = g["block_size"], g["kind"]
        if kind == "mla_attention":
            total += -(-tokens // bs)
        elif kind == "sliding_window_mla":
            cap = -(-min(g["sliding_window"] - 1 + g["extra_retained_tokens"] + sched["max_num_batched_tokens"], mml) // bs) + 1
            total += cap if startup else min(-(-tokens // bs), cap)
        elif kind == "circular_buffer":
            total += 1
        elif g["mamba_cache_mode"] == "align":
            total += 2 + g["num_speculative_blocks"] + g["num_prefill_checkpoint_blocks"]
        else:
            total += 1 + g["num_speculative_blocks"]
    return total


def replay_vllm(trace: Trace, tmp: Path, runner: str, routing: tuple[int, bool] | None) -> dict[str, Any]:
    """The trace through vLLM's Scheduler: requests added at the steps mlasim admitted them, in
    that order; arrivals before schedule(); idle steps kept; the step counter jumping to the next
    arrival when nothing is alive; teacher-forced outputs and drafts. With `routing` (threshold,
    require_uniform) also the batch row order and split of `runner`."""
    sched, vllm_config = make_scheduler(trace, tmp)
    k = trace.sched["num_speculative_tokens"]
    # Linear-attention layers: their builder's split beside the MLA split (conformance_linear.py).
    linear = conformance_linear.make(trace, sched, vllm_config, runner) if routing is not None else None
    order = trace.requests
    reqs = {r.id: r for r in order}
    live: dict[str, Any] = {}
    verify_steps = {r.id: 0 for r in order}
    num_preemptions = {r.id: 0 for r in order}
    batch = None
    if routing is not None:
        v1 = V1PersistentBatch08 if V.MLACommonMetadataBuilder is not None else V1PersistentBatch
        # Model runner V1 reorders with the minimum over the groups' builders (the KDA builder's
        # too, as vLLM's own instance reports it); the MLA builder splits with its own threshold.
        reorder = routing[0] if linear is None else min(routing[0], linear.builder.reorder_batch_threshold)
        batch = V2Batch(trace, live) if runner == "v2" else v1(trace, reorder)
    steps = []
    step = nxt = idle = 0
    usable = trace.sched["num_gpu_blocks"] - 1  # BlockPool holds the null block back
    bs, mml = trace.sched["block_size"], trace.sched["max_model_len"]
    lookahead = k if trace.sched["speculative_method"] == "mtp" else 0

    def never_fits(q) -> bool:
        tokens = min(q.num_tokens + lookahead, mml)
        if "kv_cache_groups" in trace.sched:
            return group_blocks(trace.sched, tokens) > usable
        return -(-tokens // bs) > usable

    def unfinished() -> list[dict[str, Any]]:  # the requests added and not finished, in scenario order
        states = [_request_state(r.id, live[r.id], num_preemptions[r.id]) for r in trace.by_index if r.id in live]
        return [st for st in states if not st["status"].startswith("finished")]
    while nxt < len(order) or sched.has_unfinished_requests():
        if not sched.has_unfinished_requests():
            step = max(step, order[nxt].arrival_step)
        while nxt < len(order) and order[nxt].arrival_step <= step:
            req = make_request(trace, order[nxt], nxt, vllm_config)
            live[order[nxt].id] = req
            sched.add_request(req)
            nxt += 1
        was_preempted = {rid for rid, q in live.items() if q.status == V.RequestStatus.PREEMPTED}
        before = {rid: q.status for rid, q in live.items()}
        try:
            so = sched.schedule()
        except (AssertionError, IndexError) as ex:  # a trace its config accepts but its scheduler cannot run
            tb = traceback.extract_tb(ex.__traceback__)[-1]
            raise VllmStops(step, f"{type(ex).__name__} at {Path(tb.filename).name}:{tb.lineno} `{tb.line}`", steps,
                            unfinished()) from ex
        # Preempted in this schedule(): running before it, preempted after (0.11 has neither
        # SchedulerOutput.preempted_req_ids nor Request.num_preemptions; a request preempted in a
        # step is not scheduled again in it).
        preempted = sorted(rid for rid, q in live.items() if q.status == V.RequestStatus.PREEMPTED and before[rid] == V.RequestStatus.RUNNING)
        for rid in preempted:
            num_preemptions[rid] += 1
        kept = [rid for rid in preempted if rid in so.num_scheduled_tokens]
        if kept:  # 0.11.0 (scheduler.py:262-300): a step no model runner can take
            raise VllmStops(step, f"request {kept[0]} is preempted and scheduled in the same step", steps, unfinished())
        rec = _step_record(step, so, sched, runner, was_preempted, preempted)
        if batch is not None:
            rows = batch.update(so)
            nd, np_, ndt, npt = split(rows, so, routing[0], routing[1], batch)
            rec.update(order=rows, split=[nd, np_, ndt, npt], num_mqa_tokens=ndt, num_mha_tokens=so.total_num_scheduled_tokens - ndt)
            conformance_linear.record(linear, rec, rows, so, batch)
        req_ids, sampled, drafts_next = [], [], []
        for rid in so.num_scheduled_tokens:
            q, r = live[rid], reqs[rid]
            req_ids.append(rid)
            # A partial prefill samples nothing (0.33: is_prefill_chunk; 0.11's runner discards the
            # token of a request whose computed tokens stay short of its tokens).
            chunk = q.is_prefill_chunk if hasattr(q, "is_prefill_chunk") else q.num_computed_tokens < q.num_tokens
            if chunk:
                sampled.append([])
                drafts_next.append([])
                continue
            o = q.num_output_tokens
            drafts = so.scheduled_spec_decode_tokens.get(rid) or []
            accepted = 0
            # Placeholder drafts (-1, a padded one-token admission) are never accepted and, as in
            # mlasim's teacher forcing, do not use up an accepted_drafts entry.
            if drafts and drafts[0] != -1:
                accepted = r.accepted_at(verify_steps[rid], len(drafts))
                verify_steps[rid] += 1
            sampled.append([r.forced(o + j) for j in range(accepted + 1)])
            drafts_next.append([r.forced(o + accepted + 1 + j) for j in range(k)])
        # No progress (engine/engine.cpp made_no_progress), judged before the update: nothing
        # scheduled, or only requests that already can never fit (their known tokens need more KV
        # blocks than the usable ones).
        progress = any(not never_fits(live[rid]) for rid in so.num_scheduled_tokens)
        mo = _call(
            V.ModelRunnerOutput,
            req_ids=req_ids,
            req_id_to_index={rid: i for i, rid in enumerate(req_ids)},
            sampled_token_ids=sampled,
            logprobs=None,
            prompt_logprobs_dict={},
            pooler_output=[],
            spec_token_ids=drafts_next if k and V.DraftTokenIds is None else None,  # 0.8
        )
        sched.update_from_output(so, mo)
        rec["finished"] = sorted(sched.finished_req_ids)
        if k and so.total_num_scheduled_tokens > 0 and V.DraftTokenIds is not None:  # EngineCore.post_step
            sched.update_draft_token_ids(V.DraftTokenIds(req_ids, drafts_next))
        steps.append(rec)
        idle = 0 if progress else idle + 1
        if idle >= MAX_IDLE_STEPS or len(steps) >= MAX_STEPS:
            raise VllmStall(f"no progress for {idle} steps at step {step}" if idle else f"over {MAX_STEPS} steps", step, steps,
                            unfinished())
        step += 1
    requests = [_request_state(r.id, live[r.id], num_preemptions[r.id]) for r in trace.by_index]
    for st in requests:
        del st["num_computed_tokens"]
    return {"steps": steps, "requests": requests}


def _request_state(rid: str, q, preemptions: int) -> dict[str, Any]:
    """A request as `mlasim run --json` lists it (with num_computed_tokens, as for a stopped run)."""
    return {
        "id": rid,
        "status": q.status.name.lower(),  # RequestStatus names, as mlasim's
        "token_ids": list(q.all_token_ids),
        "num_preemptions": getattr(q, "num_preemptions", preemptions),
        "stop_reason": q.stop_reason,
        "num_computed_tokens": q.num_computed_tokens,
    }
