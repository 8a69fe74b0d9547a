#!/usr/bin/env python3
"""Checks mlasim's forward split of sparse MLA (DeepSeek-V3.2 / GLM-5 DSA) against vLLM 0.33.0's
own decision code, batch by batch, on a CPU-only machine.

Optional tool, not run in CI (see tools/conformance/README.md). Runs under the Python of a venv
holding vllm==0.33.0 (default ~/vllm-venv; the script re-executes itself there when `import vllm`
fails). vLLM is imported as tools/conformance/vllm_selection.py imports it (a stand-in libcuda,
the CUDA platform with each deployment's compute capability), so these run as vLLM's code:

  split     v1/attention/backends/utils.py split_decodes_and_prefills, with the sparse builder's
            reorder_batch_threshold (mlasim's, which vllm_selection.py checks against vLLM's
            builders) and the builder class's require_uniform_decodes, as
            SparseMLACommonMetadataBuilder.build calls it (sparse_mla_attention.py ~342-347).
  prefill   the prefill metadata build() makes when there are prefill rows and a prefill backend:
            prefill_max_seq_len, the builder's real determine_chunked_prefill_workspace_size,
            build_mla_chunked_context_metadata (mla_attention.py ~2029: plan_mla_context_chunks
            and each chunk's max_seq_len), use_dense_mha from _use_dense_mha_prefill
            (sparse_mla_attention.py ~136-144), and the top-k mask workspace where
            _is_masked_mha_available says so (~99-133, run under the deployment's capability with
            the wheel's own FlashAttention version check).
  forward   MLAAttention._use_sparse_mha (mla_attention.py ~1215-1240, on a stand-in layer that
            holds the impl's masked_mha_available, the real masked_mha_workspace_fits and the
            backend's name) and forward_impl's split (~986-994): num_mqa = num_decode_tokens,
            or every token when the prefill rows do not take MHA.

Deployments: DeepSeek-V3.2 and GLM-5 (scenarios/hf_configs) x the NVIDIA GPUs of vllm_selection.py
x KV cache dtype (auto, bfloat16, fp8_ds_mla) x TP (1, 2, 4, 8) x backend (vLLM's choice and each
sparse backend named explicitly), as `mlasim deploy` accepts them; the layer's prefill backend is
taken as present where the impl class allows a dense-MHA prefill (supports_dense_mha_prefill)
(get_mla_prefill_backend's own choice is not run). Batches: seeded random rows (q, nct) in the
order given, decodes and prefills mixed, lengths around T, index_topk, the masked-MHA table's
bounds and the workspace; each goes to `mlasim route --scenario S --batch ... --no-reorder --json`.

  vllm_sparse_split.py [--mlasim BIN] [--batches N] [--seed S] [-q]

Prints, per backend, "N identical, M differing" and the first differences; exit 1 when any differ.
"""
from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

from .venv_reexec import DEFAULT_VENV, reexec_in_venv

from mlasim._data import data_root, default_binary

ROOT = data_root()
CONFIGS = ["deepseek-v3.2.json", "glm-5.json"]
KV_DTYPES = ["auto", "bfloat16", "fp8_ds_mla"]
TPS = [1, 2, 4, 8]
SPARSE_BACKENDS = ["flashmla-sparse", "flashinfer-mla-sparse", "flashinfer-mla-sparse-sm90",
                   "flashinfer-mla-sparse-sm120", "flashattn-mla-sparse", "flashattn-mla-sparse-fa4"]
# Query lengths around the thresholds that decide: T (128, 256, 1024), index_topk (2048), the
# masked-MHA table's sequence and query bounds, and the 128 MiB mask workspace.
Q_BANDS = [(1, 8), (120, 136), (250, 260), (500, 530), (1000, 1100), (1530, 1540), (2040, 2060),
           (3000, 5000), (8000, 8300), (16000, 16500), (30000, 34000)]
CTX_BANDS = [(1, 64), (1000, 2100), (3000, 9000), (12000, 20000), (30000, 50000), (60000, 120000)]


def find_mlasim(given: str | None) -> Path:
    for p in ([Path(given)] if given else [default_binary()]):
        if p.is_file():
            return p
    sys.exit("vllm_sparse_split: no mlasim binary (build it, or pass --mlasim)")


def deployments(mlasim: Path, work: Path) -> list[dict]:
    """Every sparse deployment mlasim deploy accepts, with its scenario and facts."""
    from . import vllm_selection

    out, seen = [], set()
    for config, gpu, kv, tp, backend in itertools.product(CONFIGS, vllm_selection.FULL_GPUS, KV_DTYPES, TPS,
                                                          ["auto"] + SPARSE_BACKENDS):
        name = f"{Path(config).stem}_{gpu}_{kv}_tp{tp}_{backend}"
        scen, js = work / f"{name}.yaml", work / f"{name}.json"
        r = subprocess.run([str(mlasim), "deploy", "--hf-config", str(ROOT / "scenarios/hf_configs" / config), "--gpu", gpu,
                            "--kv-cache-dtype", kv, "--tp", str(tp), "--attention-backend", backend, "--json", str(js),
                            "-o", str(scen)], capture_output=True, text=True)
        if r.returncode != 0:
            continue  # refused (as vLLM refuses it: vllm_selection.py checks that)
        d = json.loads(js.read_text())
        key = (config, gpu, kv, tp, d["backend"])
        if key in seen or not d["sparse"]:
            continue
        seen.add(key)
        text = scen.read_text()
        d["max_num_seqs"] = int(re.search(r"max_num_seqs: (\d+)", text).group(1))
        d.update(name=name, scenario=str(scen), config=config, gpu_name=gpu)
        out.append(d)
    return out


def hf_dims(config: str) -> dict:
    j = json.loads((ROOT / "scenarios/hf_configs" / config).read_text())
    return {k: j[k] for k in ("num_attention_heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                              "v_head_dim", "index_topk")}


def random_batch(rng: random.Random, threshold: int) -> list[tuple[int, int]]:
    rows = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.35:  # a decode-like row
            rows.append((rng.randint(1, max(1, min(threshold, 8))), rng.randint(1, 70000)))
        elif kind < 0.7:  # a fresh prefill
            lo, hi = rng.choice(Q_BANDS)
            rows.append((rng.randint(lo, hi), 0))
        else:  # a prefill with cached context
            lo, hi = rng.choice(Q_BANDS)
            clo, chi = rng.choice(CTX_BANDS)
            rows.append((rng.randint(lo, hi), rng.randint(clo, chi)))
    return rows


class Vllm:
    """vLLM 0.33's decision code, under each deployment's capability."""

    def __init__(self, work: Path):
        from . import vllm_selection

        vllm_selection.import_vllm(work)
        import torch
        from vllm.model_executor.layers.attention import mla_attention, sparse_mla_attention
        from vllm.platforms.interface import DeviceCapability
        from vllm.v1.attention.backends.registry import AttentionBackendEnum
        from vllm.v1.attention.backends.utils import split_decodes_and_prefills

        import vllm.utils.torch_utils as torch_utils

        mla_attention.PIN_MEMORY = torch_utils.PIN_MEMORY = False  # a pinned CPU buffer needs the CUDA driver
        self.sel, self.torch, self.mla, self.sparse = vllm_selection, torch, mla_attention, sparse_mla_attention
        self.cap, self.enum, self.split = DeviceCapability, AttentionBackendEnum, split_decodes_and_prefills

    def facts(self, d: dict) -> dict:
        """The deployment's layer-level facts, from vLLM's classes and functions."""
        self.sel._CAP[0] = self.cap(*self.sel.GPUS[d["gpu_name"]])
        backend = self.enum[d["backend"]].get_class()
        dims = hf_dims(d["config"])
        impl_cls, builder_cls = backend.get_impl_cls(), backend.get_builder_cls()
        cfg = SimpleNamespace(
            scheduler_config=SimpleNamespace(max_num_seqs=d["max_num_seqs"]),
            cache_config=SimpleNamespace(block_size=d["block_size"]),
            model_config=SimpleNamespace(max_model_len=d["max_model_len"],
                                         hf_text_config=SimpleNamespace(index_topk=dims["index_topk"])),
            parallel_config=SimpleNamespace(decode_context_parallel_size=1))
        heads_total = d["num_heads_per_rank"] * d["tensor_parallel_size"]
        masked = self.sparse._is_masked_mha_available(heads_total, dims["kv_lora_rank"], dims["qk_nope_head_dim"],
                                                      dims["qk_rope_head_dim"], dims["v_head_dim"], d["kv_cache_dtype"])
        return {
            "name": backend.get_name(),
            "require_uniform": bool(getattr(builder_cls, "require_uniform_decodes", False)),
            "prefill_backend": bool(impl_cls.supports_dense_mha_prefill),
            "workspace": self.sparse.SparseMLACommonMetadataBuilder.determine_chunked_prefill_workspace_size(cfg),
            "masked": masked, "dims": dims, "tp": d["tensor_parallel_size"], "T": d["reorder_threshold"],
            "block_size": d["block_size"], "force_mqa": d["sparse_mla_force_mqa"],
        }

    def route(self, f: dict, rows: list[tuple[int, int]]) -> dict:
        torch = self.torch
        qs = [q for q, _ in rows]
        qsl = torch.tensor([0, *itertools.accumulate(qs)], dtype=torch.int32)
        cam = SimpleNamespace(max_query_len=max(qs), num_reqs=len(rows), num_actual_tokens=sum(qs),
                              query_start_loc_cpu=qsl, is_prefilling=None)
        nd, npf, ndt, _ = self.split(cam, decode_threshold=f["T"] or 1, require_uniform=f["require_uniform"],
                                     treat_short_extends_as_decodes=True)
        vc = SimpleNamespace(attention_config=SimpleNamespace(hisparse_config=None, sparse_mla_force_mqa=f["force_mqa"]),
                             parallel_config=SimpleNamespace(tensor_parallel_size=f["tp"]))
        prefill, prefill_max_seq_len = None, 0
        if npf > 0 and f["prefill_backend"]:
            pre = rows[nd:]
            prefill_max_seq_len = max(q + c for q, c in pre)
            chunked = self.mla.build_mla_chunked_context_metadata(
                context_lens_cpu=torch.tensor([c for _, c in pre], dtype=torch.int32),
                prefill_query_start_loc_cpu=qsl[nd:] - qsl[nd],
                chunked_prefill_workspace=torch.empty((0,)), chunked_prefill_workspace_size=f["workspace"],
                block_size=f["block_size"], align_chunk_to_block=True, device=torch.device("cpu"),
                dcp_world_size=1, dcp_local_block_size=1, dcp_virtual_block_size=1)
            prefill = SimpleNamespace(
                max_query_len=max(q for q, _ in pre), query_lens_cpu=torch.tensor([q for q, _ in pre]),
                chunked_context=chunked,
                use_dense_mha=self.sparse._use_dense_mha_prefill(vc, prefill_max_seq_len, f["dims"]["index_topk"]),
                topk_mask_workspace=(torch.empty((self.sparse.GLOBAL_TOPK_MASK_MAX_BYTES // 4,), dtype=torch.int32,
                                                 device="meta") if f["masked"] else None))
        layer = SimpleNamespace(
            hisparse_cache=None, prefill_backend=object() if f["prefill_backend"] else None,
            impl=SimpleNamespace(masked_mha_available=f["masked"], dcp_world_size=1,
                                 masked_mha_workspace_fits=self.sparse.SparseMLACommonImpl.masked_mha_workspace_fits),
            attn_backend=SimpleNamespace(get_name=lambda: f["name"]), _vllm_config=vc,
            qk_nope_head_dim=f["dims"]["qk_nope_head_dim"], qk_rope_head_dim=f["dims"]["qk_rope_head_dim"],
            v_head_dim=f["dims"]["v_head_dim"])
        md = SimpleNamespace(prefill=prefill, prefill_max_seq_len=prefill_max_seq_len)
        num_mqa, num_mha = ndt, sum(qs) - ndt
        if num_mha > 0 and not self.mla.MLAAttention._use_sparse_mha(layer, md):
            num_mqa, num_mha = sum(qs), 0
        return {"num_decodes": nd, "num_prefills": npf, "num_mqa_tokens": num_mqa, "num_mha_tokens": num_mha}


def mlasim_route(mlasim: Path, scenario: str, rows: list[tuple[int, int]]) -> dict:
    batch = ",".join(f"{q}:{c}:{c + q}" for q, c in rows)
    r = subprocess.run([str(mlasim), "route", "--scenario", scenario, "--batch", batch, "--no-reorder", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[:300]}
    j = json.loads(r.stdout)
    return {k: j[k] for k in ("num_decodes", "num_prefills", "num_mqa_tokens", "num_mha_tokens")}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlasim")
    ap.add_argument("--batches", type=int, default=300, help="random batches per sparse backend (default 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--venv", default=str(DEFAULT_VENV))
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    reexec_in_venv(Path(args.venv), ("vllm",), f"set up the venv: python3 -m venv {args.venv} && {args.venv}/bin/pip "
                   "install vllm==0.33.0  (see tools/conformance/README.md)")
    mlasim = find_mlasim(args.mlasim)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="vllm_sparse_split_") as tmp:
        work = Path(tmp)
        deps = deployments(mlasim, work)
        vllm = Vllm(work)
        by_backend = defaultdict(list)
        for d in deps:
            by_backend[d["backend"]].append(d)
        results: dict[str, list[int]] = {}
        diffs: list[str] = []
        masked_mha_batches = 0
        for backend, ds in sorted(by_backend.items()):
            per = max(5, -(-args.batches // len(ds)))
            same = differ = 0
            for d in ds:
                f = vllm.facts(d)
                # Deployments with the masked-MHA prefill get four times the batches: its table and
                # workspace decide there.
                for _ in range(per * (4 if f["masked"] else 1)):
                    rows = random_batch(rng, f["T"])
                    v, m = vllm.route(f, rows), mlasim_route(mlasim, d["scenario"], rows)
                    if f["masked"] and v["num_mha_tokens"] > 0 and max(q + c for q, c in rows[v["num_decodes"]:]) > \
                            f["dims"]["index_topk"]:
                        masked_mha_batches += 1
                    if v == m:
                        same += 1
                    else:
                        differ += 1
                        if len(diffs) < 20:
                            diffs.append(f"{d['name']} rows {rows}: vLLM {v} mlasim {m}")
            results[backend] = [same, differ, len(ds)]
            if not args.quiet:
                print(f"{backend}: {same} identical, {differ} differing ({len(ds)} deployments)", flush=True)
        total_same = sum(r[0] for r in results.values())
        total_differ = sum(r[1] for r in results.values())
        for line in diffs:
            print("DIFF", line)
        print(f"sparse split: {len(deps)} deployments, {len(results)} backends: {total_same} identical, "
              f"{total_differ} differing; {masked_mha_batches} batches took masked MHA past index_topk")
        for backend, (same, differ, n) in sorted(results.items()):
            print(f"  {backend}: {same} identical, {differ} differing ({n} deployments)")
        return 1 if total_differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
