"""Traces of a hybrid model family for the conformance check (vllm_conformance.py --family): a
scenario (a random trace of `mlasim fuzz --emit`, or a scenario file) gets the family's KV cache
groups as vLLM 0.33 plans them for its settings (conformance_families.build) in
`cache.kv_cache_groups`, and a pool drawn the way mlasim fuzz draws one (a seeded choice between
barely enough for its largest request and a few times that), never below vLLM's start-up check.

A hybrid layout hits the prefix cache only at whole scheduler blocks (128 or 256 tokens here) and,
with vLLM's default retention, only where a Mamba or sliding-window group kept the state: at an
earlier prompt's end. mlasim fuzz's shared prefixes are drawn for single-group blocks, so half the
requests after the first (seeded by the trace's name) get an earlier request's whole prompt in
front of theirs, within max_model_len."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from . import conformance_families
from . import conformance_vllm as cv
from .conformance_mlasim import TraceError, run_mlasim


def draw_pool(name: str, sched: dict[str, Any], groups: list[dict[str, Any]], trace) -> int:
    k = sched["num_speculative_tokens"]
    full = {**sched, "kv_cache_groups": [{"extra_retained_tokens": 0, **g} for g in groups]}
    need = 1 + max(cv.group_blocks(full, min(len(r.prompt) + r.max_tokens + k + 1, sched["max_model_len"]))
                   for r in trace.requests)
    rng = random.Random(name)
    n = need + rng.randint(0, need) if rng.random() < 0.5 else max(need, rng.choice([64, 256, 1024]))
    return max(n, cv.group_blocks(full, sched["max_model_len"], startup=True) + 1)  # vLLM's start-up check


PROMPT = re.compile(r"prompt: \[([0-9, ]*)\]")


def share_prefixes(name: str, text: str) -> str:
    """Half the requests after the first get an earlier request's whole prompt in front of theirs
    (see above), within max_model_len - 2 tokens."""
    rng = random.Random("prefix:" + name)
    m = re.search(r"max_model_len: (\d+)", text)
    limit = int(m.group(1)) - 2 if m else 1 << 30
    prompts: list[list[str]] = []

    def edit(match: re.Match) -> str:
        tokens = [t.strip() for t in match.group(1).split(",") if t.strip()]
        if prompts and rng.random() < 0.5:
            tokens = (rng.choice(prompts) + tokens)[: max(limit, len(tokens))]
        prompts.append(tokens)
        return "prompt: [" + ", ".join(tokens) + "]"

    return PROMPT.sub(edit, text)


def _flow(g: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in g.items()) + "}"


def family_trace(path: Path, family: str, opts, workdir: Path) -> Path:
    """`path` with the family's KV cache groups and a pool for them; the resolved settings come from
    mlasim's own replay of `path`."""
    text = path.read_text()
    if re.search(r"^cache:", text, re.M):
        raise TraceError(f"{path.name}: already has a cache section")
    text = share_prefixes(path.stem, text)
    shared = workdir / f"{path.stem}.shared.yaml"
    shared.write_text(text)
    mrun = run_mlasim(opts.mlasim, shared, workdir, ("--set", f"engine.profile={opts.profile}"))
    if mrun.trace is None:
        return path  # mlasim refuses it as it is: check() reports that
    sched = dict(mrun.trace.sched, kv_cache_groups=[])
    plain = cv.Trace(mrun.trace.name, mrun.trace.model, sched, mrun.trace.engine, mrun.trace.timed, mrun.trace.requests)
    try:
        vc = cv.make_vllm_config(plain, workdir)
        _, _, _, groups = conformance_families.build(family, vc, 1 << 22, sched["num_speculative_tokens"], cv.V)
    except Exception as e:  # noqa: BLE001 - vLLM refuses the family's layout for these settings
        raise TraceError(f"{family}: vLLM plans no KV cache for {path.name}: {type(e).__name__}: {e}") from e
    n = draw_pool(path.stem, sched, groups, mrun.trace)
    if re.search(r"num_gpu_blocks: \d+", text):
        text = re.sub(r"num_gpu_blocks: \d+", f"num_gpu_blocks: {n}", text, count=1)
    else:
        text = text.replace("scheduler: {", f"scheduler: {{num_gpu_blocks: {n}, ", 1)
    text += "cache:\n  kv_cache_groups:\n" + "".join(f"    - {_flow(g)}\n" for g in groups)
    out = workdir / f"{path.stem}.{family}.yaml"
    out.write_text(text)
    return out
