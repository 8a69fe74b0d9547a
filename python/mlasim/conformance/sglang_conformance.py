"""Check mlasim's `sglang` profile (batch-level MHA vs absorbed-MLA choice for DeepSeek MLA) against
SGLang's own dispatch code, on the CPU.

SGLang cannot be imported whole without CUDA-era dependencies (torch, flashinfer, ...), so this
script loads only the deciding code from the installed package (or --sglang-root), never re-writing it:
  * models/deepseek_common/attention_backend_handler.py: loaded as a real module from its file; its
    module-level `from X import ...` lines are served by stand-ins (STANDINS, at SGLang defaults),
    except forward_methods.py (AttnForwardMethod) and environ.py (envs), which load for real.
  * these are exec'd from their source, cut out with `ast` and compiled with their file's name and
    line numbers: DeepseekV2AttentionMLA.dispatch_attn_forward_method (models/deepseek_v2.py),
    ForwardMode (model_executor/forward_batch_info.py), init_mha_forward / init_mla_forward (the
    attention module's threshold and flags), ForwardBatchDeepSeekMHAMixin.get_max_chunk_capacity and
    maybe_disable_chunked_prefix_cache (the load-time gate on --disable-chunked-prefix-cache).
The ForwardBatch is a stand-in with SGLang's real ForwardMode and extend_prefix_lens_cpu = nct per row.
Each batch is also routed by `mlasim route --profile sglang --json`; MHA there means num_mha_tokens > 0.

Usage: python3 tools/conformance/sglang_conformance.py --random 300 --seed 1
(re-executes itself under ~/sglang-venv/bin/python, which has `pip install --no-deps sglang`)."""

from __future__ import annotations

import __future__
import argparse
import ast
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import types
from collections import Counter
from enum import IntEnum, auto
from pathlib import Path
from types import SimpleNamespace as NS

VENV = Path(os.environ.get("SGLANG_VENV", Path.home() / "sglang-venv"))
from mlasim._data import data_root, default_binary
from .venv_reexec import reexec

REPO = data_root()
# mlasim backend -> SGLang --attention-backend (mirrors sglang_backend_name in attention/sglang_dispatch.cpp)
BACKENDS = {"flashmla": "flashmla", "flashattn-mla": "fa3", "flashinfer-mla": "flashinfer",
            "cutlass-mla": "cutlass_mla", "triton-mla": "triton", "rocm-aiter-mla": "aiter"}
HELPERS = {"_get_sum_extend_prefix_lens", "_support_mha_one_shot", "_can_use_triton_dense_fp8_prefill",
           "get_handler", "resolve_rocm_forward_method",
           "dispatch_attn_forward_method", "is_extend", "is_extend_without_speculative", "is_target_verify",
           "is_decode", "is_decode_or_idle", "is_draft_extend_v2"}


def reexec_in_sglang_venv() -> None:
    if importlib.util.find_spec("sglang") is not None:
        return
    py = VENV / "bin" / "python"
    if py.exists() and not os.environ.get("MLASIM_CONFORMANCE_REEXEC"):
        os.environ["MLASIM_CONFORMANCE_REEXEC"] = "1"
        reexec(py)
    sys.exit(f"sglang not found ({sys.executable}); python3 -m venv {VENV} && {VENV}/bin/pip install --no-deps sglang")


class SGLang:
    """SGLang's dispatch, loaded from the package directory `root` (…/site-packages/sglang)."""

    def __init__(self, root: Path):
        self.root, self.srt = root, root / "srt"
        self.version = re.search(r"__version__ = version = '([^']+)'", (root / "_version.py").read_text())[1]
        self.schedule = NS(disable_chunked_prefix_cache=False)   # --disable-chunked-prefix-cache (default off)
        self.backend = "flashinfer"                               # --attention-backend of the current batch
        self.envs = self._load_real("sglang.srt.environ").envs
        fm = self._load_real("sglang.srt.models.deepseek_common.attention_forward_methods.forward_methods")
        self.AttnForwardMethod = fm.AttnForwardMethod
        self.STANDINS = {
            "TboAttnBackend": type("TboAttnBackend", (), {}), "envs": self.envs,
            "AttnForwardMethod": fm.AttnForwardMethod, "_is_hip": False,
            "is_cp_active": lambda fb: False, "mla_use_prefill_cp": lambda fb: False,     # no context parallel
            "is_in_breakable_cuda_graph": lambda: False, "is_in_tc_piecewise_cuda_graph": lambda: False,
            "get_attn_backend": lambda: NS(prefill_attention_backend_str=None, decode_attention_backend_str=None),
            "attention_backends": lambda: (self.backend, self.backend),
            "get_exec": lambda: NS(deterministic=NS(enable_deterministic_inference=False),
                                   kernel=NS(flashinfer_mla_disable_ragged=False)),
            "get_parallel": lambda: NS(dcp_enabled=False), "get_platform": lambda: NS(is_sm100_or_sm110=False),
            "is_sm100_or_sm110_supported": lambda: False, "is_gfx95_supported": lambda: False,
            "use_intel_amx_backend": lambda layer: False,
            "get_spec": lambda: NS(speculative_attention_mode="prefill"),
            "get_schedule": lambda: self.schedule,
            "get_context": lambda: NS(override=lambda tag, **kw: vars(self.schedule).update(kw)),
            "logger": NS(info=lambda *a, **k: None), "IntEnum": IntEnum, "auto": auto,
            "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS": self._chunked_prefix_backends(),
        }
        self.handler_path = self.srt / "models/deepseek_common/attention_backend_handler.py"
        self.handler = self._load_with_standins("sglang.srt.models.deepseek_common.attention_backend_handler",
                                                self.handler_path)
        ns = dict(self.STANDINS, **vars(self.handler))
        self.v2_path = self.srt / "models/deepseek_v2.py"
        self.dispatch, self.dispatch_line = self._extract(self.v2_path, "dispatch_attn_forward_method", ns)
        self.ForwardMode, self.mode_line = self._extract(self.srt / "model_executor/forward_batch_info.py",
                                                         "ForwardMode", ns)
        fwd = self.srt / "models/deepseek_common/attention_forward_methods"
        self.init_mha, _ = self._extract(fwd / "forward_mha.py", "init_mha_forward", ns)
        self.init_mla, _ = self._extract(fwd / "forward_mla.py", "init_mla_forward", ns)
        self.max_chunk, _ = self._extract(self.srt / "model_executor/forward_batch_deepseek_mha_mixin.py",
                                          "get_max_chunk_capacity", ns)
        self.gate, _ = self._extract(self.srt / "model_executor/model_runner_components/misc_utils.py",
                                     "maybe_disable_chunked_prefix_cache", ns)

    def _stub_packages(self, modname: str) -> None:
        parts = modname.split(".")
        for i in range(1, len(parts)):   # parents as bare packages: no sglang/__init__.py (it needs torch)
            name = ".".join(parts[:i])
            if name not in sys.modules:
                pkg = types.ModuleType(name)
                pkg.__path__ = [str(self.root.joinpath(*parts[1:i]))]
                sys.modules[name] = pkg

    def _load_real(self, modname: str, path: Path | None = None):
        self._stub_packages(modname)
        path = path or self.root.joinpath(*modname.split(".")[1:]).with_suffix(".py")
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        spec.loader.exec_module(mod)
        return mod

    def _load_with_standins(self, modname: str, path: Path):
        real = {"sglang.srt.models.deepseek_common.attention_forward_methods.forward_methods", "sglang.srt.environ"}
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module not in real:
                stub = sys.modules.setdefault(node.module, types.ModuleType(node.module))
                for alias in node.names:
                    if alias.name not in self.STANDINS:
                        sys.exit(f"no stand-in for {alias.name} (from {node.module}) in {path}")
                    setattr(stub, alias.name, self.STANDINS[alias.name])
        return self._load_real(modname, path)

    @staticmethod
    def _extract(path: Path, name: str, ns: dict):
        """exec the def/class `name` from `path`, compiled with the file's name and line numbers."""
        node = next(n for n in ast.walk(ast.parse(path.read_text()))
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
        code = compile(ast.Module([node], []), str(path), "exec",
                       flags=__future__.annotations.compiler_flag, dont_inherit=True)
        exec(code, ns)
        return ns[name], node.lineno

    def _chunked_prefix_backends(self) -> list[str]:
        for rel in ("arg_groups/choices.py", "server_args.py"):   # moved to choices.py after 0.5.18
            if not (self.srt / rel).exists():
                continue
            for node in ast.parse((self.srt / rel).read_text()).body:
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == \
                        "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS":
                    return ast.literal_eval(node.value)
        sys.exit("CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS not found")

    def decide(self, backend: str, mode: str, rows: list[tuple[int, int, int]]):
        """SGLang's AttnForwardMethod for the batch, and the handler lines that returned it."""
        self.backend, self.schedule.disable_chunked_prefix_cache = backend, False
        self.gate(use_mla_backend=True, is_draft_worker=False)       # load-time gate (model runner)
        self.handler._is_hip = backend == "aiter"                     # aiter is ROCm-only
        attn = NS(qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, kv_lora_rank=512,
                  num_local_heads=128, kv_cache_dtype="auto", rocm_fused_decode_mla=False)  # DeepSeek-V3
        self.init_mha(attn)
        self.init_mla(attn)
        fmode = self.ForwardMode[mode]
        fb = NS(forward_mode=fmode, spec_info=None, batch_size=len(rows),
                extend_prefix_lens_cpu=[nct for q, nct, p in rows] if fmode.is_extend() else None,
                extend_seq_lens_cpu=[q for q, nct, p in rows] if fmode.is_extend() else None,
                seq_lens_cpu=[nct + q for q, nct, p in rows])
        fb.get_max_chunk_capacity = types.MethodType(self.max_chunk, fb)
        returns: list[str] = []
        files = {str(self.handler_path): "attention_backend_handler.py", str(self.v2_path): "deepseek_v2.py"}

        def tracer(frame, event, arg):
            short = files.get(frame.f_code.co_filename)
            if short is None:
                return None
            if event == "return" and frame.f_code.co_name not in HELPERS:
                returns.append(f"{short}:{frame.f_lineno} {frame.f_code.co_name}")
            return tracer

        sys.settrace(tracer)
        try:
            method = self.dispatch(attn, fb)
        finally:
            sys.settrace(None)
        return method, " < ".join(returns)


def forward_mode(rows, k: int) -> str:
    """As sglang_dispatch.cpp: a row extends unless nct >= P and q <= 1 + k."""
    n_ext = sum(nct < p or q > 1 + k for q, nct, p in rows)
    if n_ext == 0:
        return "TARGET_VERIFY" if k > 0 else "DECODE"
    return "EXTEND" if n_ext == len(rows) else "MIXED"


def mlasim_route(binary: Path, rows, backend: str, k: int) -> dict:
    batch = ",".join(f"{q}:{nct}:{p}" for q, nct, p in rows)
    cmd = [str(binary), "route", "--batch", batch, "--profile", "sglang", "--backend", backend,
           "--spec-tokens", str(k), "--json"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def random_batch(rng: random.Random):
    """Rows a scheduler could form, with the prefix sum often pinned near the chunked-prefix threshold."""
    backend, k = rng.choice(list(BACKENDS)), rng.choice([0, 0, 1, 2, 3])
    kinds = rng.choices(["new", "chunk", "decode"], [35, 20, 45], k=rng.randint(1, 6))
    target = rng.choice([None, None, 0, 1, 8191, 8192, 8193, rng.randint(2, 8190), rng.randint(8194, 300000)])
    if target == 0:
        kinds = ["new"] * len(kinds)
    elif target is not None:
        if all(kd == "new" for kd in kinds):
            kinds[rng.randrange(len(kinds))] = "chunk"
        while sum(kd != "new" for kd in kinds) > target:   # each prefix-bearing row needs nct >= 1
            kinds[next(i for i, kd in enumerate(kinds) if kd != "new")] = "new"
        m = sum(kd != "new" for kd in kinds)
        cuts = sorted(rng.sample(range(1, target), m - 1)) if m > 1 else []
        parts = iter(b - a for a, b in zip([0, *cuts], [*cuts, target]))
    rows = []
    for kd in kinds:
        if kd == "new":
            p = rng.choice([rng.randint(1, 8), rng.randint(1, 4096)])
            rows.append((rng.randint(1, p), 0, p))
            continue
        nct = next(parts) if target is not None else int(rng.choice([rng.randint(1, 64), 10 ** rng.uniform(0, 5)]))
        if kd == "chunk":
            p = nct + rng.randint(1, 4096)
            rows.append((rng.randint(1, p - nct), nct, p))
        elif rng.random() < 0.05:   # a finished-prompt row scheduled for more than 1 + k tokens (recompute)
            rows.append((2 + k + rng.randint(0, 10), nct, rng.randint(1, nct)))
        else:
            rows.append((1 + k if k and rng.random() < 0.8 else 1, nct, rng.randint(1, nct)))
    rng.shuffle(rows)
    return rows, backend, k


def probes():
    for backend in BACKENDS:
        yield [(1, 0, 1)], backend, 0                    # lone 1-token prompt
        yield [(5, 0, 5)], backend, 0                    # lone 5-token prompt
        yield [(1, 57, 50), (1, 0, 1)], backend, 0       # 1-token prompt behind a decode (MIXED)
        yield [(5, 0, 5)], backend, 1                    # short fresh prompt, k = 1
        yield [(5, 0, 5)], backend, 3                    # short fresh prompt, k = 3


def compare(sgl: SGLang, binary: Path, cases, label: str, show: int) -> int:
    same, diffs, classes = 0, [], Counter()
    for rows, backend, k in cases:
        mode = forward_mode(rows, k)
        method, where = sgl.decide(BACKENDS[backend], mode, rows)
        sgl_mha = method.name.startswith("MHA")
        out = mlasim_route(binary, rows, backend, k)
        ml_mha = out["num_mha_tokens"] > 0
        if f" {mode} " not in out["reason"]:
            sys.exit(f"forward mode disagrees with mlasim for {rows}: {mode} vs {out['reason']}")
        if sgl_mha == ml_mha:
            same += 1
            continue
        diffs.append((rows, backend, k, mode, method.name, where, out["reason"]))
        classes[(backend, mode, method.name, where, ml_mha)] += 1
    print(f"[{label}] sglang {sgl.version}: {same} identical, {len(diffs)} differing")
    for (backend, mode, name, line, ml_mha), n in classes.most_common():
        print(f"  class x{n}: {backend} {mode}: SGLang {name} ({line}) vs mlasim {'MHA' if ml_mha else 'MLA'}")
    for rows, backend, k, mode, name, where, reason in diffs[:show]:
        prefix = sum(nct for _, nct, _ in rows)
        print(f"  rows={rows} backend={backend} k={k} mode={mode} prefix_sum={prefix}\n"
              f"    SGLang: {name} via {where}\n    mlasim: {reason}")
    return len(diffs)


def main() -> int:
    reexec_in_sglang_venv()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=300, help="number of random batches")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="differing batches to print")
    ap.add_argument("--mlasim", type=Path, default=default_binary())
    ap.add_argument("--sglang-root", type=Path, default=None,
                    help="an sglang package directory (e.g. an unzipped older wheel); default: the installed one")
    args = ap.parse_args()
    root = args.sglang_root or Path(importlib.util.find_spec("sglang").submodule_search_locations[0])
    sgl = SGLang(root)
    print(f"sglang {sgl.version} at {root}; dispatch_attn_forward_method at deepseek_v2.py:{sgl.dispatch_line}, "
          f"ForwardMode at forward_batch_info.py:{sgl.mode_line}, chunked_prefix_cache_threshold "
          f"{sgl.envs.SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD.get()}")
    rng = random.Random(args.seed)
    n_diff = compare(sgl, args.mlasim, probes(), "probes", args.show)
    n_diff += compare(sgl, args.mlasim, (random_batch(rng) for _ in range(args.random)),
                      f"random {args.random} seed {args.seed}", args.show)
    return 1 if n_diff else 0


if __name__ == "__main__":
    sys.exit(main())
