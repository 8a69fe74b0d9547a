"""mlasim's MLA model in float64, written from docs/spec/mla.md (§2 one layer, §3 weights, §9 layers,
§10 the DSA indexer of a sparse model).

Both attention forms of §2 are here, computed independently from the same latents:
  mha       the prefill form: k_nope_h = W_UK_h c_kv, v_h = W_UV_h c_kv, keys [k_nope_h; k_pe];
  absorbed  the decode form: q_lat_h = W_UK_hᵀ q_nope_h, keys [c_kv; k_pe], values c_kv, then W_UV_h.
The weights are the float32 tensors of `mlasim export` (Hugging Face DeepSeek-V3 names), widened to
float64 exactly. numpy only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FORMS = ("mha", "absorbed")
QUERY_BLOCK = 512      # queries per score block: bounds memory at QUERY_BLOCK x sequence length
LM_HEAD_CHUNK = 8192   # vocabulary rows of lm_head widened to float64 at a time


class ModelError(ValueError):
    """The exported config or weights do not describe a model of docs/spec/mla.md."""


@dataclass(frozen=True)
class Yarn:
    factor: float
    original_max_position_embeddings: int
    beta_fast: float
    beta_slow: float
    mscale_all_dim: float


@dataclass(frozen=True)
class Config:
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    q_lora_rank: int      # 0: q_proj without compression
    kv_lora_rank: int
    nope_dim: int         # d_n
    rope_dim: int         # d_r
    v_dim: int            # d_v
    intermediate_size: int
    rms_norm_eps: float
    rope_theta: float
    yarn: Yarn | None     # None: plain RoPE (no rope_scaling, or factor 1)
    index_topk: int | None
    modules: int = 1      # MLA modules per decoder layer: LongCat-Flash's 2 (§3)
    lora_scaling: bool = False  # LongCat-Flash: c_q and c_kv times sqrt(d / rank) after their norms
    zero_experts: int = 0       # LongCat-Flash's shortcut MoE: its identity experts, all routed
    routed_scaling_factor: float = 1.0
    # The DSA indexer (§10; DeepseekV32 / GlmMoeDsa exports): index heads, their width, RoPE layout.
    index_n_heads: int = 0      # 0: no indexer (dense, or a sparse model the oracle computes dense)
    index_head_dim: int = 0
    indexer_interleave: bool = False

    @property
    def softmax_scale(self) -> float:
        """(d_n + d_r)^(-1/2) · m², m = 0.1 · mscale_all_dim · ln(factor) + 1 under YaRN (§2)."""
        m = 1.0 if self.yarn is None else 0.1 * self.yarn.mscale_all_dim * math.log(self.yarn.factor) + 1.0
        return (self.nope_dim + self.rope_dim) ** -0.5 * m * m


def config_from_hf(doc: dict) -> Config:
    """The Config of an exported config.json (DeepSeek-V3 keys; LongCat-Flash's own, §3)."""
    if doc.get("model_type") == "longcat_flash":
        return longcat_config(doc)
    try:
        scaling = doc.get("rope_scaling")
        yarn = None
        if scaling is not None and float(scaling["factor"]) > 1.0:
            yarn = Yarn(float(scaling["factor"]), int(scaling["original_max_position_embeddings"]),
                        float(scaling["beta_fast"]), float(scaling["beta_slow"]), float(scaling["mscale_all_dim"]))
        cfg = Config(int(doc["vocab_size"]), int(doc["hidden_size"]), int(doc["num_hidden_layers"]),
                     int(doc["num_attention_heads"]), int(doc["q_lora_rank"] or 0), int(doc["kv_lora_rank"]),
                     int(doc["qk_nope_head_dim"]), int(doc["qk_rope_head_dim"]), int(doc["v_head_dim"]),
                     int(doc["intermediate_size"]), float(doc["rms_norm_eps"]), float(doc["rope_theta"]), yarn,
                     None if doc.get("index_topk") is None else int(doc["index_topk"]))
        if doc.get("model_type") in ("deepseek_v32", "glm_moe_dsa"):
            cfg = Config(**(cfg.__dict__ | {"index_n_heads": int(doc["index_n_heads"]),
                                            "index_head_dim": int(doc["index_head_dim"]),
                                            "indexer_interleave": bool(doc.get("indexer_rope_interleave",
                                                                               doc["model_type"] == "glm_moe_dsa"))}))
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"config.json: missing or malformed key {e}") from e
    if cfg.rope_dim % 2:
        raise ModelError(f"config.json: qk_rope_head_dim {cfg.rope_dim} is odd; RoPE rotates pairs")
    return cfg


def longcat_config(doc: dict) -> Config:
    """LongCat-Flash's keys: num_layers decoder layers of two MLA modules, ffn_hidden_size, a shortcut
    MoE of zero_expert_num identity experts (no routed ones), the MLA LoRA scaling (§3)."""
    try:
        base = config_from_hf(doc | {"model_type": "deepseek_v3", "num_hidden_layers": doc["num_layers"],
                                     "intermediate_size": doc["ffn_hidden_size"]})
        if int(doc["n_routed_experts"]) != 0 or int(doc["moe_topk"]) != int(doc["zero_expert_num"]):
            raise ModelError("config.json: the shortcut MoE is not identity experts only, all routed")
        if doc.get("mla_scale_q_lora") is not True or doc.get("mla_scale_kv_lora") is not True:
            raise ModelError("config.json: LongCat-Flash's MLA LoRA scaling is off")
        return Config(**(base.__dict__ | {"modules": 2, "lora_scaling": True, "zero_experts": int(doc["zero_expert_num"]),
                                          "routed_scaling_factor": float(doc["routed_scaling_factor"])}))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ModelError):
            raise
        raise ModelError(f"config.json: missing or malformed key {e}") from e


def module_prefixes(cfg: Config, j: int) -> dict[str, str]:
    """How module j's tensors are named under model.layers.<i>.: DeepSeek's one module, or
    LongCat-Flash's self_attn.<j>., input_layernorm.<j>, post_attention_layernorm.<j>, mlps.<j>. (§3)."""
    if cfg.modules == 1:
        return {}
    return {"self_attn.": f"self_attn.{j}.", "input_layernorm": f"input_layernorm.{j}",
            "post_attention_layernorm": f"post_attention_layernorm.{j}", "mlp.": f"mlps.{j}."}


def checkpoint_name(cfg: Config, j: int, name: str) -> str:
    for canonical, actual in module_prefixes(cfg, j).items():
        if name.startswith(canonical):
            return actual + name[len(canonical):]
    return name


def layer_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """The tensors of one layer (§3, §9) by name under model.layers.<i>., with their [out, in] shapes."""
    d, heads, qk = cfg.hidden_size, cfg.num_heads, cfg.nope_dim + cfg.rope_dim
    shapes = {
        "input_layernorm": (d,),
        "post_attention_layernorm": (d,),
        "self_attn.kv_a_proj_with_mqa": (cfg.kv_lora_rank + cfg.rope_dim, d),
        "self_attn.kv_a_layernorm": (cfg.kv_lora_rank,),
        "self_attn.kv_b_proj": (heads * (cfg.nope_dim + cfg.v_dim), cfg.kv_lora_rank),
        "self_attn.o_proj": (d, heads * cfg.v_dim),
        "mlp.gate_proj": (cfg.intermediate_size, d),
        "mlp.up_proj": (cfg.intermediate_size, d),
        "mlp.down_proj": (d, cfg.intermediate_size),
    }
    if cfg.q_lora_rank:
        shapes |= {"self_attn.q_a_proj": (cfg.q_lora_rank, d), "self_attn.q_a_layernorm": (cfg.q_lora_rank,),
                   "self_attn.q_b_proj": (heads * qk, cfg.q_lora_rank)}
    else:
        shapes["self_attn.q_proj"] = (heads * qk, d)
    if cfg.index_n_heads:
        n, dim = cfg.index_n_heads, cfg.index_head_dim
        shapes |= {"self_attn.indexer.wq_b": (n * dim, cfg.q_lora_rank), "self_attn.indexer.wk": (dim, d),
                   "self_attn.indexer.k_norm": (dim,), "self_attn.indexer.weights_proj": (n, d)}
    return shapes


def bias_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """The tensors of one layer named `.bias` (the indexer's LayerNorm)."""
    return {"self_attn.indexer.k_norm": (cfg.index_head_dim,)} if cfg.index_n_heads else {}


def weight_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Every tensor of the checkpoint with its shape."""
    d = cfg.hidden_size
    shapes = {"model.embed_tokens.weight": (cfg.vocab_size, d), "model.norm.weight": (d,),
              "lm_head.weight": (cfg.vocab_size, d)}
    for i in range(cfg.num_layers):
        for j in range(cfg.modules):
            shapes |= {f"model.layers.{i}.{checkpoint_name(cfg, j, name)}.weight": shape
                       for name, shape in layer_shapes(cfg).items()}
            shapes |= {f"model.layers.{i}.{checkpoint_name(cfg, j, name)}.bias": shape
                       for name, shape in bias_shapes(cfg).items()}
        if cfg.zero_experts:
            shapes |= {f"model.layers.{i}.mlp.router.classifier.weight": (cfg.zero_experts, d),
                       f"model.layers.{i}.mlp.router.e_score_correction_bias": (cfg.zero_experts,)}
    return shapes


class Model:
    """The weights, checked against the config; layer weights widened to float64 once."""

    def __init__(self, cfg: Config, tensors: dict[str, np.ndarray]):
        for name, shape in weight_shapes(cfg).items():
            if name not in tensors:
                raise ModelError(f"model.safetensors: tensor {name} is missing")
            if tuple(tensors[name].shape) != shape:
                raise ModelError(f"model.safetensors: {name} has shape {list(tensors[name].shape)}, "
                                 f"the config says {list(shape)}")
        self.cfg = cfg
        self.embed_tokens = tensors["model.embed_tokens.weight"]  # float32; rows gathered per pass
        self.lm_head = tensors["lm_head.weight"]                  # float32; widened in chunks
        self.norm = tensors["model.norm.weight"].astype(np.float64)
        # Per decoder layer its modules' weights under the canonical names, and its router.
        self.layers = [[{name: tensors[f"model.layers.{i}.{checkpoint_name(cfg, j, name)}.weight"].astype(np.float64)
                         for name in layer_shapes(cfg)}
                        | {name + ".bias": tensors[f"model.layers.{i}.{checkpoint_name(cfg, j, name)}.bias"].astype(np.float64)
                           for name in bias_shapes(cfg)} for j in range(cfg.modules)]
                       for i in range(cfg.num_layers)]
        self.routers = [(tensors[f"model.layers.{i}.mlp.router.classifier.weight"].astype(np.float64),
                         tensors[f"model.layers.{i}.mlp.router.e_score_correction_bias"].astype(np.float64))
                        if cfg.zero_experts else None for i in range(cfg.num_layers)]
        self.inv_freq = rope_inv_freq(cfg)


def rope_inv_freq(cfg: Config) -> np.ndarray:
    """f_i = theta^(-2i/d_r), with YaRN's blend f_i' = ρ_i f_i / factor + (1 - ρ_i) f_i (§2)."""
    d_r = cfg.rope_dim
    i = np.arange(d_r // 2, dtype=np.float64)
    freq = cfg.rope_theta ** (-2.0 * i / d_r)
    y = cfg.yarn
    if y is None:
        return freq

    def corr(rotations: float) -> float:
        return d_r * math.log(y.original_max_position_embeddings / (2 * math.pi * rotations)) / (
            2 * math.log(cfg.rope_theta))

    low, high = math.floor(corr(y.beta_fast)), math.ceil(corr(y.beta_slow))
    if high <= low:
        raise ModelError(f"YaRN correction range [{low}, {high}] is empty; docs/spec/mla.md divides by high - low")
    rho = np.clip((i - low) / (high - low), 0.0, 1.0)
    return rho * freq / y.factor + (1.0 - rho) * freq


def rope(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Interleaved RoPE: each pair (x[2i], x[2i+1]) of the last axis rotated by angle p·f_i,
    counter-clockwise (x[2i] cos - x[2i+1] sin, x[2i] sin + x[2i+1] cos). x: [n, ..., d_r], positions: [n]."""
    angle = np.multiply.outer(positions.astype(np.float64), inv_freq)        # [n, d_r/2]
    angle = angle.reshape(angle.shape[:1] + (1,) * (x.ndim - 2) + angle.shape[1:])
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rope_neox(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """NeoX RoPE: each pair (x[i], x[i + d_r/2]) of the last axis rotated by angle p·f_i."""
    angle = np.multiply.outer(positions.astype(np.float64), inv_freq)
    angle = angle.reshape(angle.shape[:1] + (1,) * (x.ndim - 2) + angle.shape[1:])
    cos, sin = np.cos(angle), np.sin(angle)
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """y = w ⊙ x / sqrt(mean(x²) + eps) over the last axis."""
    return weight * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, q_pos: np.ndarray, scale: float,
                     keep: np.ndarray | None = None) -> np.ndarray:
    """softmax(scale · q kᵀ) v where query i sees keys 0..q_pos[i] (one request, causal), and with
    `keep` [m, n] only the keys it marks (a sparse model's top-k, §10).
    q: [m, e], k: [n, e], v: [n, f], q_pos: [m] ascending. Blocks of QUERY_BLOCK queries."""
    q = q * scale
    out = np.empty((len(q), v.shape[1]))
    # One score buffer for every block: fresh large arrays would each cost page faults.
    workspace = np.empty(min(len(q), QUERY_BLOCK) * (int(q_pos[-1]) + 1))
    for start in range(0, len(q), QUERY_BLOCK):
        rows = slice(start, start + QUERY_BLOCK)
        pos = q_pos[rows]
        n_keys = int(pos[-1]) + 1
        s = workspace[:len(pos) * n_keys].reshape(len(pos), n_keys)
        np.matmul(q[rows], k[:n_keys].T, out=s)
        first_masked = int(pos[0]) + 1  # keys before it are visible to every query of the block
        tail = s[:, first_masked:]
        tail[np.arange(first_masked, n_keys)[None, :] > pos[:, None]] = -np.inf
        if keep is not None:
            s[~keep[rows, :n_keys]] = -np.inf
        np.subtract(s, s.max(axis=1, keepdims=True), out=s)
        np.exp(s, out=s)
        out[rows] = (s @ v[:n_keys]) / s.sum(axis=1, keepdims=True)
    return out


def kv_latents(cfg: Config, w: dict, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """§2 step 2: [c̃_kv ; k̃_pe] = W_A x; c_kv = RMSNorm(c̃_kv); k_pe = RoPE_p(k̃_pe), one per token."""
    a = x @ w["self_attn.kv_a_proj_with_mqa"].T
    c_kv = rms_norm(a[:, :cfg.kv_lora_rank], w["self_attn.kv_a_layernorm"], cfg.rms_norm_eps)
    if cfg.lora_scaling:
        c_kv = c_kv * math.sqrt(cfg.hidden_size / cfg.kv_lora_rank)
    return c_kv, a[:, cfg.kv_lora_rank:]


def queries(cfg: Config, w: dict, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """§2 step 1 before RoPE: q = W_UQ RMSNorm(W_DQ x) (or W_Q x), split per head into nope and rope parts."""
    if cfg.q_lora_rank:
        c_q = rms_norm(x @ w["self_attn.q_a_proj"].T, w["self_attn.q_a_layernorm"], cfg.rms_norm_eps)
        q = c_q @ w["self_attn.q_b_proj"].T
        if cfg.lora_scaling:
            q = q * math.sqrt(cfg.hidden_size / cfg.q_lora_rank)
    else:
        q = x @ w["self_attn.q_proj"].T
    q = q.reshape(len(x), cfg.num_heads, cfg.nope_dim + cfg.rope_dim)
    return q[:, :, :cfg.nope_dim], q[:, :, cfg.nope_dim:]


def head_up_projections(cfg: Config, kv_b: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
    """W_UK_h [d_n, r_kv] and W_UV_h [d_v, r_kv]: rows of kv_b_proj (§3)."""
    base = head * (cfg.nope_dim + cfg.v_dim)
    return kv_b[base:base + cfg.nope_dim], kv_b[base + cfg.nope_dim:base + cfg.nope_dim + cfg.v_dim]


def mha_form(cfg: Config, kv_b, c_kv, k_pe, q_nope, q_pe, q_pos, keep=None) -> np.ndarray:
    """§2 step 3: per head, decompressed keys [W_UK_h c_kv ; k_pe] and values W_UV_h c_kv."""
    out = []
    for h in range(cfg.num_heads):
        w_uk, w_uv = head_up_projections(cfg, kv_b, h)
        keys = np.concatenate([c_kv @ w_uk.T, k_pe], axis=1)
        qh = np.concatenate([q_nope[:, h], q_pe[:, h]], axis=1)
        out.append(causal_attention(qh, keys, c_kv @ w_uv.T, q_pos, cfg.softmax_scale, keep))
    return np.concatenate(out, axis=1)


def absorbed_form(cfg: Config, kv_b, c_kv, k_pe, q_nope, q_pe, q_pos, keep=None) -> np.ndarray:
    """§2 step 4: per head, q_lat = W_UK_hᵀ q_nope against keys [c_kv ; k_pe], values c_kv, then W_UV_h."""
    keys = np.concatenate([c_kv, k_pe], axis=1)
    out = []
    for h in range(cfg.num_heads):
        w_uk, w_uv = head_up_projections(cfg, kv_b, h)
        qh = np.concatenate([q_nope[:, h] @ w_uk, q_pe[:, h]], axis=1)
        out.append(causal_attention(qh, keys, c_kv, q_pos, cfg.softmax_scale, keep) @ w_uv.T)
    return np.concatenate(out, axis=1)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def indexer_keep(model: Model, w: dict, x: np.ndarray, q_pos: np.ndarray) -> np.ndarray:
    """§10: the positions each query at q_pos attends to, [m, n] booleans. Index queries W_QB c_q and
    key LayerNorm(W_K x), RoPE on the first d_r values (NeoX, or interleaved for GLM-MoE-DSA);
    score_j = Σ_h w_h ReLU(q_h · k_j) with w = W_W x; the index_topk best of 0..q_pos[i] (all of them
    when no more), equal scores taken lower position first."""
    cfg = model.cfg
    n, dim, dr = cfg.index_n_heads, cfg.index_head_dim, cfg.rope_dim
    rot = rope if cfg.indexer_interleave else rope_neox
    c_q = rms_norm(x[q_pos] @ w["self_attn.q_a_proj"].T, w["self_attn.q_a_layernorm"], cfg.rms_norm_eps)
    q = (c_q @ w["self_attn.indexer.wq_b"].T).reshape(len(q_pos), n, dim)
    q[..., :dr] = rot(q[..., :dr], q_pos, model.inv_freq)
    k = layer_norm(x @ w["self_attn.indexer.wk"].T, w["self_attn.indexer.k_norm"], w["self_attn.indexer.k_norm.bias"])
    k[:, :dr] = rot(k[:, :dr], np.arange(len(x)), model.inv_freq)
    weights = (x[q_pos] @ w["self_attn.indexer.weights_proj"].T) * (n ** -0.5) * (dim ** -0.5)
    keep = np.zeros((len(q_pos), len(x)), dtype=bool)
    for i, p in enumerate(q_pos):
        seen = int(p) + 1
        if seen <= cfg.index_topk:
            keep[i, :seen] = True
            continue
        score = weights[i] @ np.maximum(q[i] @ k[:seen].T, 0.0)
        order = np.lexsort((np.arange(seen), -score))  # score descending, then position ascending
        keep[i, order[:cfg.index_topk]] = True
    return keep


def mla(model: Model, w: dict, x: np.ndarray, q_pos: np.ndarray, form: str) -> np.ndarray:
    """One MLA layer (§2) for the tokens at positions q_pos; x holds the normed input of every token."""
    cfg = model.cfg
    c_kv, k_pe_raw = kv_latents(cfg, w, x)
    k_pe = rope(k_pe_raw, np.arange(len(x)), model.inv_freq)
    q_nope, q_pe_raw = queries(cfg, w, x[q_pos])
    q_pe = rope(q_pe_raw, q_pos, model.inv_freq)
    attend = mha_form if form == "mha" else absorbed_form
    keep = indexer_keep(model, w, x, q_pos) if cfg.index_n_heads else None
    o = attend(cfg, w["self_attn.kv_b_proj"], c_kv, k_pe, q_nope, q_pe, q_pos, keep)
    return o @ w["self_attn.o_proj"].T  # §2 step 5


def module(model: Model, w: dict, h: np.ndarray, q_pos: np.ndarray, form: str) -> tuple[np.ndarray, np.ndarray]:
    """§9: h += MLA(RMSNorm(h)); h += W_down(silu(W_gate x) ⊙ W_up x), x = RMSNorm(h); rows q_pos only.
    Also returns x, the MLP's input."""
    eps = model.cfg.rms_norm_eps
    h = h[q_pos] + mla(model, w, rms_norm(h, w["input_layernorm"], eps), q_pos, form)
    x = rms_norm(h, w["post_attention_layernorm"], eps)
    gate = x @ w["mlp.gate_proj"].T
    return h + ((gate / (1.0 + np.exp(-gate))) * (x @ w["mlp.up_proj"].T)) @ w["mlp.down_proj"].T, x


def shortcut_moe(model: Model, router: tuple[np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    """LongCat-Flash's shortcut MoE with identity experts only: softmax over the router's logits, the
    top moe_topk (= every expert) by score + correction bias, each weight times routed_scaling_factor,
    times the input (§3)."""
    classifier, bias = router
    logits = x @ classifier.T
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    del bias  # every expert is chosen: the correction bias only orders them
    return (p.sum(axis=1, keepdims=True) * model.cfg.routed_scaling_factor) * x


def decoder_layer(model: Model, layer: int, h: np.ndarray, q_pos: np.ndarray, form: str) -> np.ndarray:
    """Decoder layer `layer` at rows q_pos: its one module, or LongCat-Flash's two (module 0 on every
    row, since module 1 attends to them all) and the shortcut MoE of module 0's MLP input, added
    after module 1's MLP (§3)."""
    modules = model.layers[layer]
    if len(modules) == 1:
        return module(model, modules[0], h, q_pos, form)[0]
    h, x0 = module(model, modules[0], h, np.arange(len(h)), form)
    h, _ = module(model, modules[1], h, q_pos, form)
    return h + shortcut_moe(model, model.routers[layer], x0[q_pos])


def embed(model: Model, tokens: np.ndarray) -> np.ndarray:
    return model.embed_tokens[tokens].astype(np.float64)


def hidden_before_last_layer(model: Model, tokens: np.ndarray, form: str) -> np.ndarray:
    """The residual stream of every token entering the last layer (all earlier layers in `form`)."""
    h = embed(model, tokens)
    every = np.arange(len(tokens))
    for layer in range(len(model.layers) - 1):
        h = decoder_layer(model, layer, h, every, form)
    return h


def final_hidden(model: Model, h: np.ndarray, positions: np.ndarray, form: str) -> np.ndarray:
    """The last layer in `form` at `positions` (ascending), then the final RMSNorm (§9)."""
    h = decoder_layer(model, len(model.layers) - 1, h, positions, form)
    return rms_norm(h, model.norm, model.cfg.rms_norm_eps)


def lm_head(model: Model, x: np.ndarray) -> np.ndarray:
    """logits = lm_head x, widening LM_HEAD_CHUNK vocabulary rows to float64 at a time."""
    vocab = model.cfg.vocab_size
    out = np.empty((len(x), vocab))
    for start in range(0, vocab, LM_HEAD_CHUNK):
        out[:, start:start + LM_HEAD_CHUNK] = x @ model.lm_head[start:start + LM_HEAD_CHUNK].astype(np.float64).T
    return out
