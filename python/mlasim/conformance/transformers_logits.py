#!/usr/bin/env python3
"""mlasim's model against Hugging Face transformers' modeling of its family, logit for logit.

Optional tool, not run in CI (see tools/conformance/README.md). For each scenario it writes the
model with `mlasim export` (config.json + model.safetensors, the family's layout and names:
DeepSeek-V3's, or A.X-K1's, GLM-4.7-Flash's and LongCat-Flash's own; output/model_export.h), loads
it with transformers' AutoModelForCausalLM (DeepseekV3ForCausalLM, AXK1ForCausalLM,
Glm4MoeLiteForCausalLM, LongcatFlashForCausalLM) in float64 on the CPU, runs every request's final
token ids (prompt + outputs) through it (`--chunk` tokens per forward pass, transformers' KV cache
in between), and compares the logits at the positions of the scenario's logits golden
(golden/<name>/logits.npy + logits_index.json: mlasim's fp64 CPU reference). Attention is causal
per request, so one pass over the final tokens gives the logits every step of the replay computed. Scenarios with speculative decoding (draft rows past
the final tokens) are skipped. A sparse model (index_topk, one MLA group) is exported as
DeepseekV32ForCausalLM or GlmMoeDsaForCausalLM with its indexer's weights, so transformers'
DeepseekV32Indexer / GlmMoeDsaIndexer and top-k mask decide which positions each query attends to.

transformers computes three things in float32 whatever the model's dtype: RoPE
(modeling_rope_utils.py builds the YaRN inverse frequencies with float32 aranges;
DeepseekV3RotaryEmbedding.forward casts positions and frequencies to float32), RMSNorm
(DeepseekV3RMSNorm.forward casts to float32) and the eager attention's softmax
(eager_attention_forward, dtype=torch.float32). That is ~1e-7 relative error in the logits. By
default the script makes all three float64 with the same formulas (RoPE recomputed, RMSNorm's
forward without the cast, attention through SDPA, which keeps the input dtype);
`--as-shipped` keeps transformers' float32 parts and widens the tolerance accordingly.

Runs under the Python of a venv with torch and transformers (default ~/vllm-venv, which
vllm==0.33.0 brings them into; the script re-executes itself there when `import transformers`
fails).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .venv_reexec import DEFAULT_VENV, reexec_in_venv

from mlasim._data import data_root, default_binary

ROOT = data_root()
# transformers' float32 parts (RoPE, RMSNorm, softmax): ~6e-8 relative per operation, a few 1e-7
# in O(1) logits; 1e-5 leaves room for positions up to a few thousand.
TOLERANCE_AS_SHIPPED = 1e-5
# --against-run: mlasim's fp32 tolerance class (verify/logits_compare.cpp).
FP32_ABS, FP32_REL = 1e-4, 1e-3


def float64_throughout(model) -> None:
    """RoPE and RMSNorm in float64 (the attention goes through SDPA, chosen at load time)."""
    import torch

    rope_in_float64(model)

    def rms_forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))

    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):  # DeepseekV3RMSNorm, LongcatFlashRMSNorm, ...
            module.forward = rms_forward.__get__(module)


def rope_in_float64(model) -> None:
    """Replaces the rotary embedding's float32 inverse frequencies and angles by float64 ones,
    from transformers' own YaRN formulas (_compute_yarn_parameters, truncate = True)."""
    import math

    import torch

    rotary = model.model.rotary_emb
    cfg = model.config
    rp = cfg.rope_parameters
    dim, base = cfg.qk_rope_head_dim, rp["rope_theta"]
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    inv = 1.0 / pos_freqs
    if rp.get("rope_type", rp.get("type")) == "yarn":
        factor, orig = rp["factor"], rp["original_max_position_embeddings"]
        beta_fast, beta_slow = rp.get("beta_fast") or 32, rp.get("beta_slow") or 1

        def corr(n: float) -> float:
            return (dim * math.log(orig / (n * 2 * math.pi))) / (2 * math.log(base))

        low, high = max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation
    rotary.inv_freq64 = inv

    def forward(x, position_ids):
        freqs = position_ids[..., None].to(torch.float64) * rotary.inv_freq64
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * rotary.attention_scaling).to(x.dtype), (emb.sin() * rotary.attention_scaling).to(x.dtype)

    rotary.forward = forward


def find_mlasim(given: str | None) -> Path:
    for p in [given] if given else [default_binary()]:
        if p and Path(p).exists():
            return Path(p)
    print("no mlasim binary: build it (cmake --preset cpu && cmake --build --preset cpu) or give --mlasim", file=sys.stderr)
    sys.exit(2)


def forward_at(model, token_ids: list[int], positions: list[int], chunk: int) -> dict:
    """The logits at `positions` of one causal forward over token_ids, run `chunk` tokens at a time
    with transformers' KV cache (the attention of a chunk is chunk x context, not L x L, so a
    20k-token prompt fits in memory), lm_head applied at the wanted positions only."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)  # the layers the config declares (indexed ones keep the indexer keys)
    out: dict[int, object] = {}
    for start in range(0, len(token_ids), chunk):
        ids = torch.tensor([token_ids[start:start + chunk]], dtype=torch.long)
        hidden = model.model(input_ids=ids, past_key_values=cache, use_cache=True).last_hidden_state[0]
        here = [p for p in positions if start <= p < start + ids.shape[1]]
        if here:
            logits = model.lm_head(hidden[[p - start for p in here]])
            for p, row in zip(here, logits):
                out[p] = row.numpy()
    return out


def run_logits(mlasim: Path, scenario: Path, sets: list[str], tmp: str):
    """`mlasim run` (the float32 CPU reference, as written or with --set overrides): its logits
    index and values, or an error string."""
    import numpy as np

    cmd = [str(mlasim), "run", str(scenario), "--table", "none", "--logits-dir", f"{tmp}/run_logits"]
    for s in sets:  # "KEY=VALUE" overrides, or "inject:FAULT" (a negative control)
        cmd += ["--inject", s[len("inject:"):]] if s.startswith("inject:") else ["--set", s]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 1):  # 1: a golden comparison failed; the logits are still written
        return None, None, "mlasim run: " + run.stderr.strip()
    index = json.loads(Path(f"{tmp}/run_logits/logits_index.json").read_text())
    return index, np.load(f"{tmp}/run_logits/logits.npy").astype(np.float64), ""


def check(mlasim: Path, scenario: Path, golden_dir: Path, fp64: bool, chunk: int,
          against_run: list[str] | None = None) -> tuple[str, str]:
    import numpy as np
    import torch
    import yaml
    from transformers import AutoModelForCausalLM

    doc = yaml.safe_load(scenario.read_text())
    if int((doc.get("scheduler") or {}).get("num_speculative_tokens", 0)) > 0:
        return "skipped", "speculative decoding"
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([str(mlasim), "export", str(scenario), "-o", f"{tmp}/model"], capture_output=True, text=True)
        if run.returncode != 0:
            return "error", "mlasim export: " + run.stderr.strip()
        run = subprocess.run([str(mlasim), "run", str(scenario), "--dry-run", "--table", "none", "--json", f"{tmp}/run.json"],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            return "error", "mlasim run: " + run.stderr.strip()
        record = json.loads(Path(f"{tmp}/run.json").read_text())
        name = record["scenario"]
        if against_run is None:
            index = json.loads((golden_dir / name / "logits_index.json").read_text())
            golden = np.load(golden_dir / name / "logits.npy").astype(np.float64)
        else:
            index, golden, err = run_logits(mlasim, scenario, against_run, tmp)
            if err:
                return "error", err
        model, loading = AutoModelForCausalLM.from_pretrained(f"{tmp}/model", dtype=torch.float64,
                                                              attn_implementation="sdpa" if fp64 else "eager",
                                                              output_loading_info=True)
        model.eval()
        # The checkpoint holds exactly the tensors the family's modeling has (no missing, unexpected or
        # mismatched key: a missing one would be left at its random initialisation).
        bad = {k: sorted(map(str, v)) for k, v in loading.items() if k != "error_msgs" and v}
        if bad or loading.get("error_msgs"):
            return "DIFFER", f"{model.config.architectures[0]} loads with {bad or loading['error_msgs']}"
        # transformers' DeepseekV3Attention builds q_a_layernorm and kv_a_layernorm with the default
        # eps 1e-6 (modeling_deepseek_v3.py ~381, ~393); vLLM uses config.rms_norm_eps for them
        # (model_executor/models/deepseek_v2.py ~501, ~525), and so does mlasim. Configs with another
        # eps (GLM-5: 1e-5) take vLLM's.
        # LongCat-Flash's two MLA modules per layer too (self_attn.0, self_attn.1).
        eps = model.config.rms_norm_eps
        for name, norm in model.named_modules():
            if name.rsplit(".", 1)[-1] in ("q_a_layernorm", "kv_a_layernorm"):
                norm.variance_epsilon = eps
        if fp64:
            float64_throughout(model)
        rows = index["rows"] if isinstance(index, dict) else index
        wanted: dict[str, list[int]] = {}
        for row in rows:
            wanted.setdefault(row["id"], []).append(row["position"])
        logits_of: dict[str, dict[int, np.ndarray]] = {}
        with torch.no_grad():
            for r in record["requests"]:
                if r["id"] in wanted:
                    logits_of[r["id"]] = forward_at(model, r["token_ids"], sorted(set(wanted[r["id"]])), chunk)
        # The golden holds float32 values rounded from mlasim's float64 logits, so transformers'
        # float64 logits match when each differs from its golden value by at most half a float32
        # ulp of that value (plus the float64 noise of both sides).
        half_ulp = np.spacing(np.abs(golden).astype(np.float32)).astype(np.float64) / 2
        worst, worst_ulps, where, top1 = 0.0, 0.0, "", 0
        for i, row in enumerate(rows):
            hf = logits_of[row["id"]][row["position"]]
            top1 += int(np.argmax(hf) == np.argmax(golden[i]))
            diff = np.abs(hf - golden[i])
            ulps = float(np.max(diff / half_ulp[i]))
            if ulps > worst_ulps:
                worst_ulps, worst, where = ulps, float(np.max(diff)), f"step {row['step']} {row['id']} position {row['position']}"
        scale = float(np.max(np.abs(golden))) if golden.size else 0.0
        ok = worst_ulps <= 1.0 + 1e-6 if fp64 else worst <= TOLERANCE_AS_SHIPPED * max(1.0, scale)
        if against_run is not None:
            # mlasim's float32 run: its fp32 tolerance class (verify/logits_compare.cpp: an element
            # passes within 1e-4 absolute or 1e-3 relative).
            ok = all(bool(np.all((np.abs(logits_of[r["id"]][r["position"]] - golden[i]) < FP32_ABS) |
                                 (np.abs(logits_of[r["id"]][r["position"]] - golden[i]) /
                                  (np.abs(golden[i]) + 1e-6) < FP32_REL)))
                     for i, r in enumerate(rows))
            return ("match" if ok and top1 == len(rows) else "DIFFER"), (
                f"{model.config.architectures[0]} vs mlasim run {' '.join(against_run) or 'as written'}, {len(rows)} rows: "
                f"top-1 {top1}/{len(rows)}, max abs difference {worst:.3e} ({where}), max |logit| {scale:.3f}")
        ok = ok and top1 == len(rows)
        return ("match" if ok else "DIFFER"), (
            f"{model.config.architectures[0]}, {len(rows)} rows x {golden.shape[1]}: top-1 {top1}/{len(rows)}, max abs "
            f"difference {worst:.3e} = {worst_ulps:.3f} half-ulps of the float32 golden ({where}), max |logit| {scale:.3f}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="transformers_logits.py", description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", help="scenario files or folders (default: scenarios/)")
    ap.add_argument("--mlasim", help="the mlasim binary (default build-cpu/ or build/ of this checkout)")
    ap.add_argument("--golden-dir", default=str(ROOT / "golden"))
    ap.add_argument("--venv", default=str(DEFAULT_VENV))
    ap.add_argument("--as-shipped", action="store_true",
                    help="keep transformers' float32 RoPE, RMSNorm and softmax (tolerance 1e-5)")
    ap.add_argument("--chunk", type=int, default=2048,
                    help="tokens per forward pass, with transformers' KV cache in between (default 2048)")
    ap.add_argument("--against-run", action="store_true",
                    help="compare with `mlasim run`'s float32 logits (its fp32 class) instead of the golden")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="with --against-run: an override for that run (repeatable), e.g. "
                         "parallel.tensor_parallel_size=2 or engine.profile=strict")
    ap.add_argument("--inject", action="append", default=[], metavar="FAULT",
                    help="with --against-run: inject FAULT into that run (a negative control that must DIFFER)")
    args = ap.parse_args(argv)
    args.set += [f"inject:{f}" for f in args.inject]
    if args.set and not args.against_run:
        ap.error("--set applies to --against-run")
    if args.chunk < 1:
        ap.error("--chunk must be at least 1")
    reexec_in_venv(Path(args.venv), ("torch", "transformers"), "use a venv that has them")
    mlasim = find_mlasim(args.mlasim)
    paths: list[Path] = []
    for p in [Path(s) for s in args.scenarios] or [ROOT / "scenarios"]:
        paths += sorted(p.rglob("*.yaml")) if p.is_dir() else [p]
    counts: dict[str, int] = {}
    for p in paths:
        verdict, detail = check(mlasim, p, Path(args.golden_dir), not args.as_shipped, args.chunk,
                                args.set if args.against_run else None)
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{p.stem}: {verdict}: {detail}", flush=True)
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    return 1 if counts.get("DIFFER", 0) or counts.get("error", 0) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
