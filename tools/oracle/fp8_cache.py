"""fp8 KV caches in float64, written from docs/spec/mla.md §11, and the step-by-step replay they need.

On an fp8 cache the two attention forms are no longer the same computation: the decode form reads
every key, the query's own included, back from the quantized cache (and may quantize its query),
while the prefill form attends to its new keys exactly and to the cached context dequantized. So a
request's logits depend on the form each step gave it, and the oracle replays the steps in order,
keeping per layer what the cache holds and each token's normed input (the DSA indexer's keys).

Formats (the golden's meta.yaml names one, with the backend and the writer's input dtype):
  fp8         every value e4m3(x / k_scale) · k_scale, k_scale 1.0; the decode query likewise
              (q_scale 1.0) on the backends in QUERY_FP8_BACKENDS.
  fp8_ds_mla  c_kv in tiles of 128: scale = max(max|x| / 448, FLT_MIN) in float32, e4m3(x / scale),
              read back as bf16(e4m3 · scale); k_pe as bf16. The query is not quantized.
The writer's input is the model's dtype: x in float32, then bf16 when the model is bf16.
e4m3: 3 mantissa bits, exponent bias 7, smallest normal 2^-6, subnormal spacing 2^-9, largest 448,
round to nearest even, saturating. numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import mla_model

E4M3_MAX = 448.0
TILE = 128
FLT_MIN = np.float32(np.finfo(np.float32).tiny)
# The impls that quantize the decode query on an fp8 cache (supports_quant_query_input: vLLM 0.33's
# MLACommonImpl sets it; TRITON_MLA and the sparse impls but FLASHINFER_MLA_SPARSE do not).
QUERY_FP8_BACKENDS = {"FLASHMLA", "FLASH_ATTN_MLA", "FLASHINFER_MLA", "CUTLASS_MLA", "TOKENSPEED_MLA",
                      "ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA", "FLASHINFER_MLA_SPARSE"}


class Unsupported(ValueError):
    """A run this replay does not cover."""


@dataclass(frozen=True)
class CacheFormat:
    format: str        # "fp8" | "fp8_ds_mla"
    backend: str       # vLLM's name of the backend
    writer_bf16: bool  # the writer's input is bf16 (else float32)

    @property
    def query_fp8(self) -> bool:
        return self.format == "fp8" and self.backend in QUERY_FP8_BACKENDS


def round_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values to the nearest bf16 (ties to even), as float32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


def round_e4m3(x: np.ndarray) -> np.ndarray:
    """Values to the nearest e4m3 value (ties to even), saturating at ±448, as float64."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    _, e = np.frexp(a)                      # a = m · 2^e, m in [0.5, 1): floor(log2 a) = e - 1
    ulp = np.ldexp(1.0, np.maximum(e - 1, -6) - 3)
    r = np.minimum(np.rint(a / ulp) * ulp, E4M3_MAX)
    return np.copysign(r, x)


def writer_input(fmt: CacheFormat, x: np.ndarray) -> np.ndarray:
    f = np.asarray(x, dtype=np.float32)
    return round_bf16(f) if fmt.writer_bf16 else f


def quantize_latents(fmt: CacheFormat, latents: np.ndarray, r_kv: int) -> np.ndarray:
    """What the cache gives back for rows [c_kv | k_pe] (float64)."""
    v = writer_input(fmt, latents)
    if fmt.format == "fp8":
        return round_e4m3(v)  # k_scale 1: e4m3(x / 1) · 1
    if r_kv % TILE:
        raise Unsupported(f"fp8_ds_mla needs kv_lora_rank a multiple of {TILE}, not {r_kv}")
    nope = v[:, :r_kv].reshape(len(v), r_kv // TILE, TILE)
    scale = np.maximum(np.abs(nope).max(axis=2, keepdims=True) / np.float32(E4M3_MAX), FLT_MIN).astype(np.float32)
    q = round_e4m3((nope / scale).astype(np.float32)).astype(np.float32)
    nope_back = round_bf16((q * scale).astype(np.float32)).reshape(len(v), r_kv)
    return np.concatenate([nope_back, round_bf16(v[:, r_kv:])], axis=1).astype(np.float64)


def quantize_query(fmt: CacheFormat, q: np.ndarray) -> np.ndarray:
    return round_e4m3(writer_input(fmt, q)) if fmt.query_fp8 else q  # q_scale 1


@dataclass
class LayerState:
    cache: np.ndarray   # [positions, r_kv + d_r] as the cache gives them back
    x: np.ndarray       # [positions, hidden] the layer's normed inputs (the indexer's keys come from them)


@dataclass
class RequestState:
    layers: list[LayerState] = field(default_factory=list)


def attention(model: mla_model.Model, fmt: CacheFormat, w: dict, st: LayerState, x: np.ndarray,
              pos: np.ndarray, nct: int, path: str) -> np.ndarray:
    """One MLA layer's attention output (after o_proj) for a step's new tokens at positions pos."""
    cfg = model.cfg
    r = cfg.kv_lora_rank
    c_kv, k_pe_raw = mla_model.kv_latents(cfg, w, x)
    k_pe = mla_model.rope(k_pe_raw, pos, model.inv_freq)
    fresh = np.concatenate([c_kv, k_pe], axis=1)
    st.cache = np.concatenate([st.cache[:nct], quantize_latents(fmt, fresh, r)])
    st.x = np.concatenate([st.x[:nct], x])
    q_nope, q_pe_raw = mla_model.queries(cfg, w, x)
    q_pe = mla_model.rope(q_pe_raw, pos, model.inv_freq)
    keep = mla_model.indexer_keep(model, w, st.x, pos) if cfg.index_n_heads else None
    kv_b = w["self_attn.kv_b_proj"]
    out = []
    for h in range(cfg.num_heads):
        w_uk, w_uv = mla_model.head_up_projections(cfg, kv_b, h)
        if path == "mqa":  # every key from the cache; the query maybe in e4m3 too
            qh = quantize_query(fmt, np.concatenate([q_nope[:, h] @ w_uk, q_pe[:, h]], axis=1))
            o = mla_model.causal_attention(qh, st.cache, st.cache[:, :r], pos, cfg.softmax_scale, keep) @ w_uv.T
        else:  # the context from the cache, the new keys exact
            c_all = np.concatenate([st.cache[:nct, :r], c_kv])
            keys = np.concatenate([c_all @ w_uk.T, np.concatenate([st.cache[:nct, r:], k_pe])], axis=1)
            qh = np.concatenate([q_nope[:, h], q_pe[:, h]], axis=1)
            o = mla_model.causal_attention(qh, keys, c_all @ w_uv.T, pos, cfg.softmax_scale, keep)
        out.append(o)
    return np.concatenate(out, axis=1) @ w["self_attn.o_proj"].T


def step_hidden(model: mla_model.Model, fmt: CacheFormat, state: RequestState, tokens: list[int],
                nct: int, path: str) -> np.ndarray:
    """The final-normed hidden states of a step's new tokens (positions nct..), updating the state."""
    cfg = model.cfg
    eps = cfg.rms_norm_eps
    pos = np.arange(nct, nct + len(tokens))
    if not state.layers:
        empty = LayerState(np.empty((0, cfg.kv_lora_rank + cfg.rope_dim)), np.empty((0, cfg.hidden_size)))
        state.layers = [LayerState(empty.cache, empty.x) for _ in model.layers]
    h = mla_model.embed(model, np.asarray(tokens))
    for modules, st in zip(model.layers, state.layers):
        w = modules[0]
        h = h + attention(model, fmt, w, st, mla_model.rms_norm(h, w["input_layernorm"], eps), pos, nct, path)
        x = mla_model.rms_norm(h, w["post_attention_layernorm"], eps)
        gate = x @ w["mlp.gate_proj"].T
        h = h + ((gate / (1.0 + np.exp(-gate))) * (x @ w["mlp.up_proj"].T)) @ w["mlp.down_proj"].T
    return mla_model.rms_norm(h, model.norm, eps)


def replay_logits(model: mla_model.Model, fmt: CacheFormat, tokens: dict[str, list[int]],
                  steps: dict[int, dict[str, tuple[int, int, str]]], drafts: dict[int, dict[str, list[int]]],
                  rows: list) -> np.ndarray:
    """The logits at `rows` (step, id, position), replaying every step's (q, nct, path) per request."""
    if any(len(m) > 1 for m in model.layers):
        raise Unsupported("a model with several MLA modules per layer")
    wanted: dict[tuple[int, str], list[int]] = {}
    for i, row in enumerate(rows):
        wanted.setdefault((row.step, row.id), []).append(i)
    states: dict[str, RequestState] = {}
    hidden = np.empty((len(rows), model.cfg.hidden_size))
    for step in sorted(steps):
        for rid, (q, nct, path) in steps[step].items():
            if drafts.get(step, {}).get(rid):
                raise Unsupported("speculative decoding")
            state = states.setdefault(rid, RequestState())
            have = len(state.layers[0].cache) if state.layers else 0
            if nct > have:
                raise Unsupported(f"request {rid} starts at position {nct} with {have} cached (a prefix-cache hit)")
            h = step_hidden(model, fmt, state, tokens[rid][nct:nct + q], nct, path)
            for i in wanted.get((step, rid), []):
                hidden[i] = h[rows[i].position - nct]
    return mla_model.lm_head(model, hidden)
