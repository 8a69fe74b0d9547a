#!/usr/bin/env python3
"""Replays traces through mlasim and through the real vLLM 0.33.0 scheduler (on the CPU) and
reports, per trace, `identical` or the first difference.

Optional tool, not run in CI; see tools/conformance/README.md. Runs under the Python of a venv
holding vllm==0.33.0 (default ~/vllm-venv: the script re-executes itself there when `import vllm`
fails in the current interpreter).

Per trace it compares, step by step: num_scheduled_tokens (values, then order), new and resumed
ids, preempted ids, scheduled spec-decode tokens, new_block_ids, num_free_blocks, the model
runner's batch row order and the MLA split (num_decodes, num_prefills, num_decode_tokens,
num_prefill_tokens; num_mqa = num_decode_tokens), the ids finished by the step; then each
request's final token_ids, status, num_preemptions and stop_reason, and the number of steps.
Requests with `arrival_time` reach vLLM at the steps at which mlasim admitted them (vLLM has no
clock), and mlasim's step times are checked against the scenario's timing model.
"""
from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from venv_reexec import DEFAULT_VENV, reexec_in_venv

REPO = Path(__file__).resolve().parents[2]
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MLASIM = [REPO_ROOT / "build-cpu/tools/mlasim/mlasim", REPO_ROOT / "build/tools/mlasim/mlasim"]
MAX_IDLE_STEPS = 1000  # engine/engine.cpp kMaxIdleSteps
MAX_STEPS = 20000

# ---------------------------------------------------------------------------------------------
# mlasim's seeded token streams (sim/seeded_tokens.cpp), for prompts given by prompt_len and for
# teacher-forced outputs past a scenario's `output` list.

M64 = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def stable_hash(s: str) -> int:
    h = 0xCBF29CE484222325
    for c in s.encode("utf-8"):
        h ^= c
        h = (h * 0x100000001B3) & M64
    return h


def prompt_block_stream(hash_id: int) -> int:
    """The stream of one prompt block named by a trace's hash id (prompt_hash_ids)."""
    return splitmix64(stable_hash("prompt-block/") ^ splitmix64(hash_id & M64))


def seeded_token(seed: int, stream: int, index: int, vocab: int, avoid=(), avoid_also: int = -1) -> int:
    rng = vocab - 2 if vocab > 2 else 1
    state = splitmix64((seed & M64) ^ splitmix64(stream ^ splitmix64(index)))
    for _ in range(64):
        token = 2 + state % rng
        if token != avoid_also and token not in avoid:
            return token
        state = splitmix64(state)
    return 2


# ---------------------------------------------------------------------------------------------
# Scenarios: the subset of scenarios/README.md that reaches the scheduler and the routing, with
# mlasim's defaults (vLLM's where vLLM has one).

PRESET_VOCAB = {"tiny": 512, "v2-lite-attn": 32768, "v3-attn": 32768}
SCHEDULER_DEFAULTS = {
    "max_num_batched_tokens": 2048,
    "max_num_seqs": 128,
    "max_model_len": None,  # the model's max_position_embeddings
    "enable_chunked_prefill": True,
    "long_prefill_token_threshold": 0,
    "block_size": 16,
    "num_gpu_blocks": 8192,
    "enable_prefix_caching": True,
    "policy": "fcfs",
    "num_speculative_tokens": 0,
    "scheduler_reserve_full_isl": True,  # vLLM's default (vllm/config/scheduler.py)
    "speculative_method": "mtp",  # mlasim's default: DeepSeek's drafter
}
# The step-time model of mlasim's simulated clock (docs/spec/timing.md), microseconds.
TIMING_DEFAULTS = {"fixed_us": 20000.0, "per_scheduled_token_us": 12.0, "per_context_token_us": 0.018, "per_request_us": 25.0}
DEFAULT_PROMPT_HASH_BLOCK_SIZE = 512  # Mooncake's
# mlasim backend name -> vLLM module and metadata builder class (vllm/v1/attention/backends/mla/).
BACKENDS = {
    "flashmla": ("flashmla", "FlashMLAMetadataBuilder"),
    "flashattn-mla": ("flashattn_mla", "FlashAttnMLAMetadataBuilder"),
    "flashinfer-mla": ("flashinfer_mla", "FlashInferMLAMetadataBuilder"),
    "cutlass-mla": ("cutlass_mla", "CutlassMLAMetadataBuilder"),
    "triton-mla": ("triton_mla", "TritonMLAMetadataBuilder"),
    "rocm-aiter-mla": ("rocm_aiter_mla", "AiterMLAMetadataBuilder"),
    "tokenspeed-mla": ("tokenspeed_mla", "TokenspeedMLAMetadataBuilder"),
}
ROUTED_PROFILES = ("vllm-current", "vllm-0.33")  # vLLM 0.33.0; the other profiles model older or other engines


class TraceError(Exception):
    """The tool cannot replay this input (not a difference between mlasim and vLLM)."""


@dataclasses.dataclass
class Req:
    id: str
    arrival_step: int
    prompt: list[int]
    max_tokens: int
    min_tokens: int
    ignore_eos: bool
    stop_token_ids: list[int]
    output: list[int]  # listed teacher-forced outputs; seeded past the list
    priority: int
    accepted_drafts: list[int]
    seed: int
    vocab: int
    eos: int
    arrival_ns: int | None = None  # arrival_time in ns (timed arrivals); arrival_step is then derived

    def forced(self, i: int) -> int:
        """The i-th teacher-forced output token (sim/request.cpp forced_output_token)."""
        if i < len(self.output):
            return self.output[i]
        return seeded_token(self.seed, stable_hash("output/" + self.id), i, self.vocab, self.stop_token_ids, self.eos)

    def accepted_at(self, verify_step: int, num_drafts: int) -> int:
        """Accepted drafts of a verification step (sim/request.cpp accepted_drafts_at)."""
        if verify_step < len(self.accepted_drafts):
            return max(0, min(self.accepted_drafts[verify_step], num_drafts))
        return num_drafts


@dataclasses.dataclass
class Trace:
    name: str
    sched: dict[str, Any]
    reserve_full_isl_given: bool
    vocab: int
    eos: int
    seed: int
    max_position_embeddings: int
    sparse: bool
    profile: str
    backend: str
    threshold_override: int | None
    query_len_support_override: str | None
    requests: list[Req]
    model_runner: str = "v1"
    timing: dict[str, float] = dataclasses.field(default_factory=lambda: dict(TIMING_DEFAULTS))

    @property
    def timed(self) -> bool:
        return any(r.arrival_ns is not None for r in self.requests)


def llround(x: float) -> int:
    """C's llround for x >= 0: to the nearest integer, halves away from zero (x - floor(x) is exact)."""
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def read_requests_file(path: Path) -> list[dict[str, Any]]:
    """The requests of a JSONL requests_file (sim/request_file.cpp): one JSON object per non-blank
    line; without ids they are named r0, r1, ... by line order."""
    try:
        lines = [ln for ln in path.read_text().splitlines() if ln.strip(" \t\r")]
    except OSError as e:
        raise TraceError(f"cannot read the requests file {path.name}: {e.strerror}") from e
    out = []
    for i, ln in enumerate(lines):
        rd = json.loads(ln)
        if not isinstance(rd, dict):
            raise TraceError(f"{path.name}: line {i + 1} is not a JSON object")
        out.append(rd if "id" in rd else {"id": f"r{i}", **rd})
    return out


def seeded_prompt(rd: dict[str, Any], rid: str, seed: int, vocab: int) -> list[int]:
    """A prompt given by prompt_len (sim/request_tokens.cpp generate_prompt): from the request's
    own stream, or block by block from the streams of its prompt_hash_ids."""
    n = int(rd["prompt_len"])
    if "prompt_hash_ids" not in rd:
        stream = stable_hash("prompt/" + rid)
        return [seeded_token(seed, stream, j, vocab) for j in range(n)]
    block = int(rd.get("prompt_hash_block_size", DEFAULT_PROMPT_HASH_BLOCK_SIZE))
    streams = [prompt_block_stream(int(h)) for h in rd["prompt_hash_ids"]]
    if len(streams) != -(-n // block):
        raise TraceError(f"request {rid}: {len(streams)} prompt_hash_ids for {n} tokens in blocks of {block}")
    return [seeded_token(seed, streams[j // block], j % block, vocab) for j in range(n)]


def resolve(doc: dict[str, Any], name: str, base: Path | None = None) -> Trace:
    """The effective configuration of a scenario document, as mlasim's loader computes it; a
    `requests_file` is read relative to `base` (the scenario's folder) unless the document also
    holds its `requests` (a generated trace in memory)."""
    if not isinstance(doc, dict):
        raise TraceError("not a YAML mapping")
    model = doc.get("model") or {}
    vocab = int(model.get("vocab_size", PRESET_VOCAB.get(model.get("preset", "tiny"), 512)))
    eos = int(model.get("eos_token_id", 1))
    seed = int(model.get("seed", 0))
    mpe = int(model.get("max_position_embeddings", 163840))
    sched = dict(SCHEDULER_DEFAULTS)
    given = doc.get("scheduler") or {}
    sched.update(given)
    if sched["max_model_len"] is None:
        sched["max_model_len"] = mpe
    eng = doc.get("engine") or {}
    timing = dict(TIMING_DEFAULTS)
    timing.update({key: float(v) for key, v in (doc.get("timing") or {}).items()})
    if "requests" in doc or "requests_file" not in doc:
        listed = doc.get("requests") or []
    elif base is None:
        raise TraceError("a requests_file needs the scenario's folder")
    else:
        listed = read_requests_file(base / str(doc["requests_file"]))
    reqs = []
    for rd in listed:
        rid = str(rd["id"])
        prompt = [int(t) for t in rd["prompt"]] if "prompt" in rd else seeded_prompt(rd, rid, seed, vocab)
        reqs.append(
            Req(
                id=rid,
                arrival_step=int(rd.get("arrival_step", 0)),
                arrival_ns=llround(float(rd["arrival_time"]) * 1e9) if "arrival_time" in rd else None,
                prompt=prompt,
                max_tokens=int(rd.get("max_tokens", 16)),
                min_tokens=int(rd.get("min_tokens", 0)),
                ignore_eos=bool(rd.get("ignore_eos", False)),
                stop_token_ids=[int(t) for t in rd.get("stop_token_ids", [])],
                output=[int(t) for t in rd.get("output", [])],
                priority=int(rd.get("priority", 0)),
                accepted_drafts=[int(a) for a in rd.get("accepted_drafts", [])],
                seed=seed,
                vocab=vocab,
                eos=eos,
            )
        )
    return Trace(
        name=name,
        sched=sched,
        reserve_full_isl_given="scheduler_reserve_full_isl" in given,
        vocab=vocab,
        eos=eos,
        seed=seed,
        max_position_embeddings=mpe,
        sparse="index_topk" in model,
        profile=str(eng.get("profile", "vllm-current")),
        backend=str(eng.get("attention_backend", "flashattn-mla")),
        threshold_override=eng.get("reorder_batch_threshold"),
        query_len_support_override=eng.get("query_len_support"),
        requests=reqs,
        model_runner=str(eng.get("model_runner", "v1")),
        timing=timing,
    )


# ---------------------------------------------------------------------------------------------
# Writing scenario YAML (generated traces), compact and in the style of scenarios/.


def _flow(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return v if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", v) and v not in ("true", "false", "null", "yes", "no", "on", "off") else json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_flow(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_yaml(doc: dict[str, Any], comment: str = "") -> str:
    lines = [f"# {comment}"] if comment else []
    for key, value in doc.items():
        if key == "requests":
            lines.append("requests:")
            lines.extend(f"  - {_flow(r)}" for r in value)
        else:
            lines.append(f"{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Seeded random traces. Every generated trace is meant to be accepted by mlasim's loader (only
# configurations vLLM also accepts, with one deliberate exception: rarely a
# long_prefill_token_threshold above max_model_len, which vLLM's SchedulerConfig rejects).


def _prompt_len(rng: random.Random, bs: int, cap: int) -> int:
    u = rng.random()
    if u < 0.22:
        n = 1
    elif u < 0.32:
        n = 2
    elif u < 0.60:
        n = rng.choice([bs - 1, bs, bs + 1, 2 * bs - 1, 2 * bs, 2 * bs + 1, 3 * bs])
    else:
        n = rng.randint(1, 4 * bs + 3)
    return max(1, min(n, cap))


def generate(seed: int, index: int, spec: str, keys: frozenset[str]) -> dict[str, Any]:
    rng = random.Random(f"mlasim-conformance/{seed}/{index}")
    bs = rng.choice([1, 2, 4, 4, 8, 8, 16, 16])
    if spec == "off":
        k = 0
    elif spec == "on":
        k = rng.choice([1, 3])
    else:
        k = rng.choice([0, 1, 3])
    num_reqs = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 10])
    vocab = 512
    tok_hi = rng.choice([6, 40, vocab - 1])  # a small alphabet makes prompts repeat
    eos = 1
    chunked = rng.random() < 0.75
    max_model_len = rng.choice([24, 48, 64, 96, 128, 256]) if rng.random() < 0.8 else rng.randint(8, 300)
    max_model_len = max(max_model_len, 4)
    cap = max_model_len - 1

    requests: list[dict[str, Any]] = []
    longest_need = 0
    for i in range(num_reqs):
        n = _prompt_len(rng, bs, cap)
        prompt = [rng.randint(2, tok_hi) for _ in range(n)]
        if requests and rng.random() < 0.45:  # share a prefix with an earlier request
            base_req = rng.choice(requests)
            base = base_req["prompt"]
            if rng.random() < 0.3:  # a follow-up turn: the earlier prompt and part of its output
                base = base + base_req["output"][: rng.randint(1, base_req["max_tokens"])]
            share = rng.choice([len(base), len(base) - 1, (len(base) // bs) * bs, rng.randint(1, len(base))])
            share = max(1, min(share, len(base), cap))
            prompt = base[:share] + prompt[: max(0, n - share)] if rng.random() < 0.7 else base[:share]
            prompt = prompt[:cap] or base[:1]
        room = max_model_len - len(prompt)
        max_tokens = rng.choice([1, 1, 2, 3, 4, 5, 8, 12])
        if rng.random() < 0.15:
            max_tokens = room + rng.randint(0, 3)  # the max_model_len cap decides
        min_tokens = 0
        if rng.random() < 0.3:
            # Sometimes past max_model_len: vLLM's length cap comes first (check_stop).
            min_tokens = rng.randint(0, max_tokens if rng.random() < 0.3 else min(max_tokens, room))
        ignore_eos = rng.random() < 0.2
        stop_ids: list[int] = []
        if rng.random() < 0.3:
            stop_ids = sorted({rng.randint(2, tok_hi) for _ in range(rng.choice([1, 2]))})
        forbidden = set(stop_ids) | {eos}
        out_len = max_tokens + 2 * k + 1
        allowed = [t for t in range(2, tok_hi + 1) if t not in forbidden] or [tok_hi + 1]
        output = [rng.choice(allowed) for _ in range(out_len)]
        # EOS or a stop id at or after min_tokens (the sampler never produces one before).
        if rng.random() < 0.35 and min_tokens < out_len:
            pos = rng.randint(min_tokens, min(out_len - 1, min_tokens + max_tokens))
            output[pos] = rng.choice([eos] + stop_ids)
        if rng.random() < 0.1 and min_tokens < out_len:
            pos = rng.randint(min_tokens, out_len - 1)
            output[pos] = eos
        r: dict[str, Any] = {"id": f"r{i}"}
        if rng.random() < 0.4:
            r["arrival_step"] = rng.randint(0, 6)
        r["prompt"] = prompt
        r["max_tokens"] = max_tokens
        if min_tokens:
            r["min_tokens"] = min_tokens
        if ignore_eos:
            r["ignore_eos"] = True
        if stop_ids:
            r["stop_token_ids"] = stop_ids
        r["output"] = output
        requests.append(r)
        longest = min(len(prompt) + max_tokens + 2 * k, max_model_len)
        longest_need = max(longest_need, -(-longest // bs))

    max_num_seqs = rng.choice([1, 2, 2, 3, 4, 8, 16])
    budget = rng.choice([1, 2, 3, 4, 8, 8, 16, 16, 32, 64, 128, 2048])
    budget = max(budget, max_num_seqs)
    if not chunked:
        budget = max(budget, max_model_len)
    policy = "priority" if rng.random() < 0.25 else "fcfs"
    if policy == "priority":
        for r in requests:
            r["priority"] = rng.randint(-1, 2)
    if k:
        for r in requests:
            if rng.random() < 0.7:
                r["accepted_drafts"] = [rng.randint(0, k) for _ in range(rng.randint(1, 5))]
    u = rng.random()
    if u < 0.45:
        num_gpu_blocks = longest_need + 1 + rng.randint(0, max(1, longest_need))  # preemption pressure
    elif u < 0.8:
        num_gpu_blocks = longest_need * num_reqs + 1 + rng.randint(0, 4)
    else:
        num_gpu_blocks = 8192
    sched: dict[str, Any] = {
        "max_num_batched_tokens": budget,
        "max_num_seqs": max_num_seqs,
        "max_model_len": max_model_len,
        "enable_chunked_prefill": chunked,
    }
    if rng.random() < 0.35:
        lo = 1 if (k == 0 or rng.random() < 0.1) else min(1 + k, max_model_len)  # below 1 + k: vLLM may assert
        sched["long_prefill_token_threshold"] = rng.randint(lo, max(lo, min(max_model_len, 2 * bs + 2)))
    elif rng.random() < 0.02:
        sched["long_prefill_token_threshold"] = max_model_len + rng.randint(1, 8)
    sched["block_size"] = bs
    sched["num_gpu_blocks"] = num_gpu_blocks
    sched["enable_prefix_caching"] = rng.random() < 0.75
    sched["policy"] = policy
    if k:
        sched["num_speculative_tokens"] = k
    method = rng.choice(["mtp", "ngram"])
    if k and "speculative_method" in keys:
        sched["speculative_method"] = method
    reserve = rng.random() < 0.5
    if "scheduler_reserve_full_isl" in keys:
        sched["scheduler_reserve_full_isl"] = reserve
    backend = rng.choice(list(BACKENDS))
    return {
        "version": 1,
        "name": f"conformance_s{seed}_{index:05d}",
        "scheduler": sched,
        "engine": {"profile": "vllm-current", "attention_backend": backend},
        "requests": requests,
    }


def file_trace(doc: dict[str, Any], seed: int, index: int) -> dict[str, Any]:
    """The trace as a requests_file (written as JSONL next to the YAML; `requests` stays in the
    document for the tool). Its own random stream, so the rest of the trace is generate()'s. Some
    get timed arrivals (mid-step, at step boundaries, after idle gaps) and a `timing` model; some
    get prompts from prompt_hash_ids sharing leading blocks (prompts seeded lazily by mlasim's
    scheduler); ids are left out where they are the defaults r0, r1, ..."""
    rng = random.Random(f"mlasim-conformance-files/{seed}/{index}")
    doc = copy.deepcopy(doc)
    reqs = doc["requests"]
    bs = doc["scheduler"]["block_size"]
    if rng.random() < 0.5:
        u = rng.random()
        if u < 0.35:
            timing = {}
        elif u < 0.65:  # every step exactly 1 ms: arrivals on whole ms hit step starts
            timing = {"fixed_us": 1000, "per_scheduled_token_us": 0, "per_context_token_us": 0, "per_request_us": 0}
        else:
            timing = {
                "fixed_us": rng.choice([0, 50, 500, 2000]),
                "per_scheduled_token_us": rng.choice([0, 1.5, 7]),
                "per_context_token_us": rng.choice([0, 0.25, 0.018]),
                "per_request_us": rng.choice([0, 3, 25]),
            }
        t = {**TIMING_DEFAULTS, **timing}
        unit = max(t["fixed_us"] + 8 * t["per_scheduled_token_us"] + 64 * t["per_context_token_us"] + 2 * t["per_request_us"], 1.0)
        at = 0.0 if rng.random() < 0.6 else unit * rng.uniform(0, 3)
        for r in reqs:
            r.pop("arrival_step", None)
            r["arrival_time"] = round(at * 1e-6, 9)
            u = rng.random()
            if u < 0.25:
                gap = 0.0  # with the previous one
            elif u < 0.55:
                gap = unit * rng.uniform(0.05, 0.95)  # while a step runs
            elif u < 0.75:
                gap = unit * rng.randint(1, 4)
            elif u < 0.9:
                gap = unit * rng.uniform(1, 6)
            else:
                gap = unit * rng.randint(30, 200)  # usually after everything finished: an idle gap
            at += round(gap, 3)
        if timing:
            doc["timing"] = timing
    else:
        reqs.sort(key=lambda r: r.get("arrival_step", 0))  # a requests_file lists requests in arrival order
    if rng.random() < 0.6:
        block = rng.choice([16, 16, 32, 5, bs, 2 * bs, DEFAULT_PROMPT_HASH_BLOCK_SIZE])
        fresh = rng.choice([100, 1 << 40])  # hash ids are 64-bit in a requests_file
        earlier: list[list[int]] = []
        for r in reqs:
            u = rng.random()
            if u < 0.15:
                continue  # keeps its token list
            n = len(r.pop("prompt"))
            r["prompt_len"] = n
            if u < 0.25:
                continue  # seeded from its own stream
            ids = []
            nblocks = -(-n // block)
            if earlier and rng.random() < 0.6:
                theirs = rng.choice(earlier)
                ids = theirs[: rng.randint(1, min(len(theirs), nblocks))]
            while len(ids) < nblocks:
                ids.append(fresh)
                fresh += 1
            r["prompt_hash_ids"] = ids
            if block != DEFAULT_PROMPT_HASH_BLOCK_SIZE or rng.random() < 0.5:
                r["prompt_hash_block_size"] = block
            earlier.append(ids)
    named = rng.random() < 0.5  # else the default ids r0, r1, ... by line, left out of the file
    first = ("id", "arrival_step", "arrival_time", "prompt", "prompt_len", "prompt_hash_ids", "prompt_hash_block_size")
    for i, r in enumerate(reqs):
        r["id"] = f"req-{r['id'][1:]}" if named else f"r{i}"
        reqs[i] = {**{k: r[k] for k in first if k in r}, **r}
    doc["requests_file"] = f"{doc['name']}.jsonl"
    return doc


def write_scenario(path: Path, doc: dict[str, Any], comment: str = "") -> None:
    """The document as YAML at `path`; with `requests_file`, its `requests` go to PATH.jsonl
    (named in the YAML), one per line, without ids where they are the defaults r0, r1, ..."""
    if "requests_file" not in doc:
        path.write_text(to_yaml(doc, comment))
        return
    jsonl = path.with_suffix(".jsonl")
    reqs = doc["requests"]
    default_ids = all(r["id"] == f"r{i}" for i, r in enumerate(reqs))
    lines = [json.dumps({k: v for k, v in r.items() if not (default_ids and k == "id")}) for r in reqs]
    jsonl.write_text("\n".join(lines) + "\n")
    head = {k: v for k, v in doc.items() if k != "requests"}
    head["requests_file"] = jsonl.name
    path.write_text(to_yaml(head, comment))


# ---------------------------------------------------------------------------------------------
# mlasim


def find_mlasim(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    for p in DEFAULT_MLASIM:
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return DEFAULT_MLASIM[0]


REFUSED = "refused: a config vLLM 0.33 cannot always run"


def unrunnable_in_vllm(trace: Trace) -> bool:
    """Configurations mlasim refuses although vLLM 0.33 accepts them (docs/spec/scheduler.md §9):
    with speculation, a one-token admission is padded to 1 + k tokens, so a prefill threshold
    below 1 + k fails vLLM's assertion (scheduler.py ~1579) and a budget below 1 + k can stall a
    waiting request forever (~1320)."""
    s = trace.sched
    k = s.get("num_speculative_tokens", 0)
    if k <= 0 or trace.profile not in ("vllm-0.33", "vllm-current", "strict", "sglang"):
        return False
    t = s.get("long_prefill_token_threshold", 0)
    return 0 < t < 1 + k or s.get("max_num_batched_tokens", 2048) < 1 + k


@dataclasses.dataclass
class MlasimRun:
    rc: int
    record: dict[str, Any] | None
    stdout: str
    stderr: str
    threshold: int | None
    query_len_support: str | None
    clock: dict[str, Any] | None = None  # from --jsonl: step time_ns/duration_ns, request arrival_ns
    # What mlasim resolved for the scenario's deployment (vLLM 0.33's auto backend, block size and
    # model runner when the scenario leaves them out): the header lines of `mlasim run`.
    backend: str | None = None
    model_runner: str | None = None
    block_size: int | None = None
    sparse: bool = False  # the model mlasim read has index_topk (from the scenario or its model.hf_config)


def read_clock(path: Path) -> dict[str, Any] | None:
    """The simulated clock of `mlasim run --jsonl`: {"steps": [(step, time_ns, duration_ns)],
    "arrival_ns": {id: ns}}."""
    if not path.exists():
        return None
    steps, arrivals = [], {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "step":
            steps.append((rec["step"], rec["time_ns"], rec["duration_ns"]))
        elif rec.get("type") == "request":
            arrivals[rec["id"]] = rec["arrival_ns"]
    return {"steps": steps, "arrival_ns": arrivals}


def run_mlasim(
    binary: Path, scenario: Path, workdir: Path, extra: tuple[str, ...] = (), fallback: bool = False
) -> MlasimRun:
    """`mlasim run SCENARIO --dry-run --json OUT --jsonl CLOCK`. The binary may be missing or half
    written for a moment while it is rebuilt: then retry for up to a minute (with `fallback`, also
    on the other default path)."""
    out = workdir / (scenario.stem + ".mlasim.json")
    clock = workdir / (scenario.stem + ".mlasim.jsonl")
    for attempt in range(31):
        for f in (out, clock):
            if f.exists():
                f.unlink()
        candidates = [binary] + ([p for p in DEFAULT_MLASIM if p != binary] if fallback else [])
        exe = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), binary)
        try:
            proc = subprocess.run(
                [str(exe), "run", str(scenario), "--dry-run", "--json", str(out), "--jsonl", str(clock), *extra],
                capture_output=True,
                text=True,
                timeout=600,
            )
        except OSError:
            if attempt == 30:
                raise
            time.sleep(2)
            continue
        if proc.returncode < 0 and attempt < 30:  # killed by a signal: a binary being replaced
            time.sleep(2)
            continue
        break
    record = json.loads(out.read_text()) if out.exists() else None
    m = re.search(r"decode_threshold=(\d+)(?: \(override\))? query_len_support=(\w+)", proc.stdout)
    b = re.search(r"^engine: profile=\S+ backend=(\S+) .*model_runner=(v\d)", proc.stdout, re.M)
    bs = re.search(r"^scheduler: .*\bblock_size=(\d+)", proc.stdout, re.M)
    sparse = re.search(r"^model: .* index_topk=\d+ \(sparse MLA\)", proc.stdout, re.M) is not None
    return MlasimRun(
        proc.returncode,
        record,
        proc.stdout,
        proc.stderr,
        int(m.group(1)) if m else None,
        m.group(2) if m else None,
        read_clock(clock) if record is not None else None,
        b.group(1) if b else None,
        b.group(2) if b else None,
        int(bs.group(1)) if bs else None,
        sparse,
    )


def admission_steps(trace: Trace, clock: dict[str, Any]) -> dict[str, int]:
    """The step at which mlasim admitted each timed request: the first step (by step number) that
    starts at or after its arrival time (engine/engine.cpp admit_arrivals). vLLM has no
    clock, so its replay takes these as arrival steps: the clock is mlasim's model, the scheduler
    given the same admissions is what is compared."""
    steps = sorted(clock["steps"])
    out = {}
    for r in trace.requests:
        ns = clock["arrival_ns"].get(r.id)
        if ns != r.arrival_ns:
            raise TraceError(f"request {r.id}: mlasim's arrival_ns {ns} vs arrival_time {r.arrival_ns} ns")
        step = next((s for s, t, _ in steps if t >= ns), None)
        if step is None:
            raise TraceError(f"request {r.id}: no step starts at or after its arrival ({ns} ns)")
        out[r.id] = step
    return out


def clock_problem(trace: Trace, record: dict[str, Any], clock: dict[str, Any]) -> str | None:
    """Whether mlasim's step times follow the scenario's timing model (docs/spec/timing.md),
    recomputed from each step's rows: a step lasts fixed + per token x tokens scheduled + per
    context token x sum(nct + q) + per request x rows (rows with q > 0), rounded to ns; the next
    starts when it ends, or, with nothing alive, at the next arrival time (timed arrivals)."""
    t = trace.timing
    if [s for s, _, _ in clock["steps"]] != [s["step"] for s in record["steps"]]:
        return "the --jsonl steps are not the --json steps"
    timed = trace.timed
    arrivals = sorted(r.arrival_ns if timed else r.arrival_step for r in trace.requests)
    now = alive = nxt = 0
    for rec, (step, time_ns, duration_ns) in zip(record["steps"], clock["steps"]):
        if timed and alive == 0 and nxt < len(arrivals):
            now = max(now, arrivals[nxt])
        while nxt < len(arrivals) and arrivals[nxt] <= (now if timed else step):
            alive += 1
            nxt += 1
        if time_ns != now:
            return f"step {step} time_ns: mlasim {time_ns} vs the timing model {now}"
        rows = [r for r in rec["rows"] if r["q"] > 0]
        context = sum(r["nct"] + r["q"] for r in rows)
        us = (
            t["fixed_us"]
            + t["per_scheduled_token_us"] * rec["total_num_scheduled_tokens"]
            + t["per_context_token_us"] * float(context)
            + t["per_request_us"] * len(rows)
        )
        if duration_ns != llround(us * 1000.0):
            return f"step {step} duration_ns: mlasim {duration_ns} vs the timing model {llround(us * 1000.0)}"
        now += duration_ns
        alive -= len(rec["finished"])
    return None


OPTIONAL_KEYS = {"scheduler_reserve_full_isl": False, "speculative_method": "ngram"}


def probe_keys(binary: Path, workdir: Path) -> frozenset[str]:
    """The scheduler keys of OPTIONAL_KEYS this mlasim accepts (mlasim gains them over time)."""
    found = set()
    for key, value in OPTIONAL_KEYS.items():
        doc = {
            "version": 1,
            "name": "probe",
            "scheduler": {"max_model_len": 64, "num_speculative_tokens": 1, key: value},
            "requests": [{"id": "a", "prompt": [5], "max_tokens": 1}],
        }
        path = workdir / "probe.yaml"
        path.write_text(to_yaml(doc))
        if run_mlasim(binary, path, workdir, fallback=True).rc == 0:
            found.add(key)
    return frozenset(found)


# ---------------------------------------------------------------------------------------------
# vLLM


def import_vllm(runner: str) -> None:
    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1" if runner == "v2" else "0"
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    global torch, vllm, V
    import torch  # noqa: F401
    import vllm  # noqa: F401

    class _V:  # the vLLM names this tool uses
        pass

    V = _V()
    from vllm.config import CacheConfig, DeviceConfig, ModelConfig, ParallelConfig, SchedulerConfig, SpeculativeConfig, VllmConfig
    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import sha256
    from vllm.v1.attention.backends.utils import reorder_batch_to_split_decodes_and_prefills, split_decodes_and_prefills
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import KVCacheConfig, KVCacheGroupSpec, MLAAttentionSpec
    from vllm.v1.outputs import DraftTokenIds, ModelRunnerOutput
    from vllm.v1.request import Request, RequestStatus
    from vllm.v1.structured_output import StructuredOutputManager
    import vllm.v1.worker.gpu_input_batch as gpu_input_batch

    # The persistent batch lives on the CPU here: no pinned host buffers without a GPU driver.
    gpu_input_batch.PIN_MEMORY = False
    init_none_hash(sha256)
    for name, value in list(locals().items()):
        setattr(V, name, value)
    try:
        from vllm.v1.worker.gpu.model_runner import sort_batch_req_ids

        V.sort_batch_req_ids = sort_batch_req_ids
    except Exception:  # noqa: BLE001 - only --runner v2 needs it
        V.sort_batch_req_ids = None


_builder_cache: dict[str, tuple[int, str]] = {}


def backend_class_values(backend: str) -> tuple[int, str]:
    """(reorder_batch_threshold, query_len_support) of the backend's metadata builder class,
    read from the installed vLLM source (several modules do not import without a GPU); a class
    that sets neither inherits MLACommonMetadataBuilder's (threshold 1, SINGLE_ONLY)."""
    if backend in _builder_cache:
        return _builder_cache[backend]
    module, cls_name = BACKENDS[backend]
    base = Path(vllm.__file__).parent
    values = {"reorder_batch_threshold": 1, "query_len_support": "SINGLE_ONLY"}
    src = (base / "v1/attention/backends/mla" / f"{module}.py").read_text()
    for node in ast.parse(src).body:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for stmt in node.body:
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else (stmt.targets[0] if isinstance(stmt, ast.Assign) else None)
                if isinstance(target, ast.Name) and target.id in values and stmt.value is not None:
                    v = stmt.value
                    values[target.id] = v.value if isinstance(v, ast.Constant) else v.attr
    result = (int(values["reorder_batch_threshold"]), str(values["query_len_support"]).lower().replace("single_only", "single"))
    _builder_cache[backend] = result
    return result


def vllm_threshold(trace: Trace) -> tuple[int, bool]:
    """The decode threshold and require_uniform vLLM 0.33.0 uses for the trace's backend
    (MLACommonMetadataBuilder.__init__ -> _init_reorder_batch_threshold, max_decode_query_len)."""
    t, support = backend_class_values(trace.backend)
    if trace.query_len_support_override:
        support = trace.query_len_support_override
    k = trace.sched["num_speculative_tokens"]
    if trace.threshold_override:
        t = int(trace.threshold_override)
    elif support != "single" and k > 0:
        t = max(t, 1 + k)
    return t, support != "varlen"


_model_dirs: dict[tuple, str] = {}


def model_dir(trace: Trace, tmp: Path) -> str:
    """A small DeepSeek-V3-style config.json (no weights: the scheduler never loads a model)."""
    key = (trace.vocab, trace.max_position_embeddings, trace.eos)
    if key not in _model_dirs:
        d = tmp / f"model_{len(_model_dirs)}"
        d.mkdir(parents=True, exist_ok=True)
        cfg = {
            "architectures": ["DeepseekV3ForCausalLM"],
            "model_type": "deepseek_v3",
            "vocab_size": trace.vocab,
            "hidden_size": 256,
            "intermediate_size": 512,
            "moe_intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "n_routed_experts": 4,
            "n_shared_experts": 1,
            "num_experts_per_tok": 2,
            "n_group": 1,
            "topk_group": 1,
            "first_k_dense_replace": 2,
            "num_nextn_predict_layers": 1,
            "q_lora_rank": None,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "max_position_embeddings": trace.max_position_embeddings,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000,
            "bos_token_id": 0,
            "eos_token_id": trace.eos,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        }
        (d / "config.json").write_text(json.dumps(cfg))
        _model_dirs[key] = str(d)
    return _model_dirs[key]


class VllmRejects(Exception):
    pass


class VllmStall(Exception):
    pass


STATUS_NAMES = {
    "WAITING": "waiting",
    "RUNNING": "running",
    "PREEMPTED": "preempted",
    "FINISHED_STOPPED": "finished_stopped",
    "FINISHED_LENGTH_CAPPED": "finished_length_capped",
}


def make_scheduler(trace: Trace, tmp: Path):
    s = trace.sched
    try:
        mml = int(s["max_model_len"])
        model_config = V.ModelConfig(model=model_dir(trace, tmp), skip_tokenizer_init=True, max_model_len=mml, dtype="bfloat16", seed=0)
        scheduler_config = V.SchedulerConfig(
            max_num_batched_tokens=int(s["max_num_batched_tokens"]),
            max_num_seqs=int(s["max_num_seqs"]),
            max_model_len=mml,
            is_encoder_decoder=False,
            enable_chunked_prefill=bool(s["enable_chunked_prefill"]),
            long_prefill_token_threshold=int(s["long_prefill_token_threshold"]),
            policy=str(s["policy"]),
            scheduler_reserve_full_isl=bool(s["scheduler_reserve_full_isl"]),
            async_scheduling=False,
        )
        cache_config = V.CacheConfig(block_size=int(s["block_size"]), enable_prefix_caching=bool(s["enable_prefix_caching"]))
        k = int(s["num_speculative_tokens"])
        # The drafts themselves come from teacher forcing, as in mlasim; the method (the scenario's
        # scheduler.speculative_method, mlasim's default mtp) only sets the scheduler's reservations:
        # MTP k lookahead slots and one-token hash lookahead, n-gram none.
        spec = None
        if k and trace.sched["speculative_method"] == "mtp":
            # DeepSeek's own drafter: the target's config with num_nextn_predict_layers (no weights
            # are loaded); eagle-family, so k lookahead slots and one-token hash lookahead.
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
        n = int(s["num_gpu_blocks"])
        vllm_config.cache_config.num_gpu_blocks = n
        kv_spec = V.MLAAttentionSpec(block_size=int(s["block_size"]), num_kv_heads=1, head_size=576, dtype=torch.bfloat16)
        kv_cache_config = V.KVCacheConfig(num_blocks=n, kv_cache_tensors=[], kv_cache_groups=[V.KVCacheGroupSpec(["mla"], kv_spec)])
        sched = V.Scheduler(
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            structured_output_manager=V.StructuredOutputManager(vllm_config),
            block_size=int(s["block_size"]),
            log_stats=False,
        )
    except Exception as e:  # noqa: BLE001 - vLLM's config validation
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("For further")]
        raise VllmRejects(f"{type(e).__name__}: {' / '.join(lines[:3])}") from e
    return sched, vllm_config


def make_request(trace: Trace, r: Req, arrival: int, vllm_config):
    mml = int(trace.sched["max_model_len"])
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
        sp.update_from_generation_config({}, eos_token_id=r.eos)
    except Exception as e:  # noqa: BLE001
        raise VllmRejects(f"request {r.id}: {type(e).__name__}: {e}") from e
    # As EngineCore.__init__ (vllm/v1/engine/core.py) builds it.
    hasher = None
    if trace.sched["enable_prefix_caching"]:
        hasher = V.get_request_block_hasher(int(trace.sched["block_size"]), V.sha256, vllm_config.num_hash_lookahead_tokens)
    return V.Request(
        request_id=r.id,
        prompt_token_ids=list(r.prompt),
        sampling_params=sp,
        pooling_params=None,
        arrival_time=float(arrival),
        priority=r.priority,
        block_hasher=hasher,
    )


class V1PersistentBatch:
    """vLLM's real InputBatch (vllm/v1/worker/gpu_input_batch.py) on the CPU, driven the way
    GPUModelRunner._update_states (vllm/v1/worker/gpu_model_runner.py) drives it: the row
    placement part of that method is ported here (removals, CachedRequestState bookkeeping, adds,
    condense), then vLLM's own reorder_batch_to_split_decodes_and_prefills runs on it."""

    def __init__(self, trace: Trace, threshold: int):
        s = trace.sched
        mml = int(s["max_model_len"])
        bs = int(s["block_size"])
        self.threshold = threshold
        self.batch = V.gpu_input_batch.InputBatch(
            max_num_reqs=int(s["max_num_seqs"]),
            max_model_len=mml,
            max_num_batched_tokens=int(s["max_num_batched_tokens"]),
            device=torch.device("cpu"),
            vocab_size=trace.vocab,
            block_sizes=[bs],
            max_num_blocks_per_req=[-(-mml // bs) + 1],
            num_spec_tokens=int(s["num_speculative_tokens"]),
        )
        self.states: dict[str, Any] = {}

    def update(self, so) -> list[str]:
        b = self.batch
        for rid in so.finished_req_ids:
            self.states.pop(rid, None)
        for rid in so.finished_req_ids:
            b.remove_request(rid)
        scheduled = so.num_scheduled_tokens.keys()
        resumed = so.scheduled_cached_reqs.resumed_req_ids
        for rid in b.req_id_to_index.keys() - (scheduled - resumed):
            b.remove_request(rid)
        to_add = []
        for nr in so.scheduled_new_reqs:
            st = V.gpu_input_batch.CachedRequestState(
                req_id=nr.req_id,
                prompt_token_ids=nr.prompt_token_ids,
                mm_features=[],
                sampling_params=nr.sampling_params,
                generator=None,
                block_ids=tuple(list(g) for g in nr.block_ids),
                num_computed_tokens=nr.num_computed_tokens,
                output_token_ids=[],
            )
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
        b.batch_update_builder.get_and_reset(b.num_reqs)  # refresh_metadata's reset (no sampling metadata needed)
        return list(b.req_ids)

    def nct(self, rid: str) -> int:
        return int(self.batch.num_computed_tokens_cpu[self.batch.req_id_to_index[rid]])

    def prompt_len(self, rid: str) -> int:
        return int(self.batch.num_prompt_tokens[self.batch.req_id_to_index[rid]])


class V2Batch:
    """Model runner V2 (vllm/v1/worker/gpu/model_runner.py): no persistent batch; each step's
    rows are sort_batch_req_ids(num_scheduled_tokens, drafts, decode_query_len = 1 + k)."""

    def __init__(self, trace: Trace, requests: dict[str, Any]):
        self.k = int(trace.sched["num_speculative_tokens"])
        self.requests = requests
        self.pre_nct: dict[str, int] = {}

    def update(self, so) -> list[str]:
        self.pre_nct = {}
        for nr in so.scheduled_new_reqs:
            self.pre_nct[nr.req_id] = nr.num_computed_tokens
        for i, rid in enumerate(so.scheduled_cached_reqs.req_ids):
            self.pre_nct[rid] = so.scheduled_cached_reqs.num_computed_tokens[i]
        return V.sort_batch_req_ids(so.num_scheduled_tokens, so.scheduled_spec_decode_tokens, 1 + self.k)

    def nct(self, rid: str) -> int:
        return self.pre_nct[rid]

    def prompt_len(self, rid: str) -> int:
        return self.requests[rid].num_prompt_tokens


def split(rows: list[str], so, threshold: int, require_uniform: bool, batch) -> tuple[int, int, int, int]:
    """vLLM's split_decodes_and_prefills on the step's rows (the CommonAttentionMetadata fields it
    reads; MLA passes treat_short_extends_as_decodes = not use_pcp = True)."""
    if not rows:
        return (0, 0, 0, 0)
    q = [so.num_scheduled_tokens[r] for r in rows]
    qsl = [0]
    for x in q:
        qsl.append(qsl[-1] + x)
    meta = argparse.Namespace(
        max_query_len=max(q),
        num_reqs=len(rows),
        num_actual_tokens=qsl[-1],
        query_start_loc_cpu=torch.tensor(qsl, dtype=torch.int32),
        is_prefilling=torch.tensor([batch.nct(r) < batch.prompt_len(r) for r in rows]),
    )
    nd, np_, ndt, npt = V.split_decodes_and_prefills(meta, decode_threshold=threshold, require_uniform=require_uniform)
    return (int(nd), int(np_), int(ndt), int(npt))


def replay_vllm(
    trace: Trace, tmp: Path, runner: str, routing: tuple[int, bool] | None
) -> dict[str, Any]:
    """The trace through vLLM's Scheduler, with mlasim's step loop (engine/engine.cpp) and
    teacher forcing (sim/teacher_forcing.cpp). Returns a record shaped like `mlasim run --json`."""
    sched, vllm_config = make_scheduler(trace, tmp)
    k = int(trace.sched["num_speculative_tokens"])
    reqs = {r.id: r for r in trace.requests}
    # Arrival order as mlasim's request stream (sim/request_stream.cpp): stable, by step or time.
    order = sorted(range(len(trace.requests)), key=lambda i: (trace.requests[i].arrival_step, trace.requests[i].arrival_ns or 0))
    live: dict[str, Any] = {}
    verify_steps = {r.id: 0 for r in trace.requests}
    batch = None
    if routing is not None:
        threshold, require_uniform = routing
        batch = V2Batch(trace, live) if runner == "v2" else V1PersistentBatch(trace, threshold)
    steps = []
    step = 0
    next_arrival = 0
    idle = 0
    while next_arrival < len(order) or sched.has_unfinished_requests():
        if not sched.has_unfinished_requests() and next_arrival < len(order):
            step = max(step, trace.requests[order[next_arrival]].arrival_step)
        while next_arrival < len(order) and trace.requests[order[next_arrival]].arrival_step <= step:
            r = trace.requests[order[next_arrival]]
            req = make_request(trace, r, next_arrival, vllm_config)
            live[r.id] = req
            sched.add_request(req)
            next_arrival += 1
        was_preempted = {rid for rid, q in live.items() if q.status == V.RequestStatus.PREEMPTED}
        so = sched.schedule()
        rec: dict[str, Any] = {"step": step}
        rec["num_scheduled_tokens"] = dict(so.num_scheduled_tokens)
        new_ids = [nr.req_id for nr in so.scheduled_new_reqs]
        cr = so.scheduled_cached_reqs
        if runner == "v2":  # MRV2: resumed requests are sent as new requests
            rec["new"] = [i for i in new_ids if i not in was_preempted]
            rec["resumed"] = [i for i in new_ids if i in was_preempted]
        else:
            rec["new"] = new_ids
            rec["resumed"] = [i for i in cr.req_ids if i in cr.resumed_req_ids]
        rec["preempted"] = sorted(so.preempted_req_ids)
        nbi = {nr.req_id: list(nr.block_ids[0]) for nr in so.scheduled_new_reqs}
        for i, rid in enumerate(cr.req_ids):
            if cr.new_block_ids[i] is not None and cr.new_block_ids[i][0]:
                nbi[rid] = list(cr.new_block_ids[i][0])
        rec["new_block_ids"] = nbi
        rec["scheduled_spec_decode_tokens"] = {i: list(d) for i, d in so.scheduled_spec_decode_tokens.items()}
        rec["num_free_blocks"] = sched.kv_cache_manager.block_pool.get_num_free_blocks()
        if batch is not None:
            rows = batch.update(so)
            nd, np_, ndt, npt = split(rows, so, threshold, require_uniform, batch)
            rec["order"] = rows
            rec["split"] = [nd, np_, ndt, npt]
            rec["num_mqa_tokens"] = ndt
            rec["num_mha_tokens"] = so.total_num_scheduled_tokens - ndt
        # Teacher-forced model output.
        req_ids, sampled, drafts_next = [], [], []
        for rid in so.num_scheduled_tokens:
            q = live[rid]
            r = reqs[rid]
            req_ids.append(rid)
            if q.is_prefill_chunk:  # a partial prefill samples nothing
                sampled.append([])
                drafts_next.append([])
                continue
            o = q.num_output_tokens
            drafts = so.scheduled_spec_decode_tokens.get(rid) or []
            accepted = 0
            if drafts and drafts[0] != -1:
                accepted = r.accepted_at(verify_steps[rid], len(drafts))
                verify_steps[rid] += 1
            # Placeholder drafts (-1, a padded one-token admission) are never accepted and, as in
            # mlasim's teacher forcing, do not use up an accepted_drafts entry.
            sampled.append([r.forced(o + j) for j in range(accepted + 1)])
            drafts_next.append([r.forced(o + accepted + 1 + j) for j in range(k)])
        mo = V.ModelRunnerOutput(req_ids=req_ids, req_id_to_index={rid: i for i, rid in enumerate(req_ids)}, sampled_token_ids=sampled)
        sched.update_from_output(so, mo)
        rec["finished"] = sorted(sched.finished_req_ids)
        if k and so.total_num_scheduled_tokens > 0:  # EngineCore.post_step
            sched.update_draft_token_ids(V.DraftTokenIds(req_ids, drafts_next))
        steps.append(rec)
        idle = idle + 1 if so.total_num_scheduled_tokens == 0 else 0
        if idle >= MAX_IDLE_STEPS or len(steps) >= MAX_STEPS:
            raise VllmStall(f"no progress for {idle} steps at step {step}" if idle else f"over {MAX_STEPS} steps")
        step += 1
    requests = []
    for r in trace.requests:
        q = live[r.id]
        requests.append(
            {
                "id": r.id,
                "status": STATUS_NAMES.get(q.status.name, q.status.name.lower()),
                "token_ids": list(q.all_token_ids),
                "num_preemptions": q.num_preemptions,
                "stop_reason": q.stop_reason,
            }
        )
    return {"steps": steps, "requests": requests}


# ---------------------------------------------------------------------------------------------
# Comparison


@dataclasses.dataclass
class Outcome:
    name: str
    category: str | None  # None: identical
    detail: str = ""
    size: tuple = ()
    yaml_path: Path | None = None
    doc: dict[str, Any] | None = None


def _short(v: Any, limit: int = 160) -> str:
    s = json.dumps(v, separators=(",", ":")) if not isinstance(v, str) else v
    return s if len(s) <= limit else s[: limit - 3] + "..."


FIELDS = (
    "num_scheduled_tokens",
    "num_scheduled_tokens.order",
    "new",
    "resumed",
    "preempted",
    "scheduled_spec_decode_tokens",
    "new_block_ids",
    "num_free_blocks",
    "routing.order",
    "routing.split",
    "routing.num_mqa_mha",
    "routing.threshold",
    "finished",
    "final.token_ids",
    "final.status",
    "final.num_preemptions",
    "final.stop_reason",
)


def compare(m: dict[str, Any], v: dict[str, Any], route: bool, ignore: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The first difference as (category, detail), or None; fields in `ignore` are skipped."""
    ms, vs = m["steps"], v["steps"]
    for i in range(min(len(ms), len(vs))):
        a, b = ms[i], vs[i]
        where = f"step {a['step']}"
        if a["step"] != b["step"]:
            return "step_index", f"{i}th step: mlasim step {a['step']} vs vllm step {b['step']}"
        checks = [
            ("num_scheduled_tokens", a["num_scheduled_tokens"], b["num_scheduled_tokens"]),
            ("num_scheduled_tokens.order", list(a["num_scheduled_tokens"]), list(b["num_scheduled_tokens"])),
            ("new", a["new"], b["new"]),
            ("resumed", a["resumed"], b["resumed"]),
            ("preempted", sorted(a["preempted"]), b["preempted"]),
            ("scheduled_spec_decode_tokens", a["scheduled_spec_decode_tokens"], b["scheduled_spec_decode_tokens"]),
            ("new_block_ids", a["new_block_ids"], b["new_block_ids"]),
            ("num_free_blocks", a["num_free_blocks"], b["num_free_blocks"]),
        ]
        if route:
            checks += [
                ("routing.order", [r["id"] for r in a["rows"]], b["order"]),
                (
                    "routing.split",
                    [a["num_decodes"], a["num_prefills"], a["num_decode_tokens"], a["num_prefill_tokens"]],
                    b["split"],
                ),
                ("routing.num_mqa_mha", [a["num_mqa_tokens"], a["num_mha_tokens"]], [b["num_mqa_tokens"], b["num_mha_tokens"]]),
            ]
        checks.append(("finished", sorted(a["finished"]), b["finished"]))
        for field, x, y in checks:
            if field in ignore:
                continue
            if x != y:
                if field == "num_scheduled_tokens" and dict(x) == dict(y):
                    continue
                return field, f"{where} {field}: mlasim {_short(x)} vs vllm {_short(y)}"
    if len(ms) != len(vs):
        return "num_steps", f"mlasim {len(ms)} steps vs vllm {len(vs)} steps"
    for a, b in zip(m["requests"], v["requests"]):
        for field in ("token_ids", "status", "num_preemptions", "stop_reason"):
            if "final." + field in ignore:
                continue
            if a.get(field) != b.get(field):
                return f"final.{field}", f"request {a['id']} {field}: mlasim {_short(a.get(field))} vs vllm {_short(b.get(field))}"
    return None


def show_steps(m: dict[str, Any], v: dict[str, Any], route: bool) -> None:
    """Both records side by side, one line per step and side (--show)."""

    def line(rec: dict[str, Any], mlasim: bool) -> str:
        parts = [_short(rec["num_scheduled_tokens"], 400)]
        for key in ("new", "resumed", "preempted", "finished"):
            if rec[key]:
                parts.append(f"{key}={_short(rec[key])}")
        if rec["scheduled_spec_decode_tokens"]:
            parts.append(f"drafts={_short(rec['scheduled_spec_decode_tokens'])}")
        if rec["new_block_ids"]:
            parts.append(f"blocks={_short(rec['new_block_ids'])}")
        parts.append(f"free={rec['num_free_blocks']}")
        if route:
            if mlasim:
                order = [r["id"] for r in rec["rows"]]
                sp = [rec["num_decodes"], rec["num_prefills"], rec["num_decode_tokens"], rec["num_prefill_tokens"]]
            else:
                order, sp = rec["order"], rec["split"]
            parts.append(f"rows={_short(order)} split={_short(sp)}")
        return " ".join(parts)

    for i in range(max(len(m["steps"]), len(v["steps"]))):
        for label, recs, is_m in (("mlasim", m["steps"], True), ("vllm  ", v["steps"], False)):
            if i < len(recs):
                print(f"  step {recs[i]['step']:3d} {label} {line(recs[i], is_m)}")
    for a, b in zip(m["requests"], v["requests"]):
        for label, r in (("mlasim", a), ("vllm  ", b)):
            print(f"  {r['id']} {label} {r['status']} preemptions={r['num_preemptions']} tokens={_short(r['token_ids'], 400)}")


def trace_size(trace: Trace) -> tuple:
    return (
        len(trace.requests),
        sum(len(r.prompt) for r in trace.requests),
        sum(min(r.max_tokens, 99) for r in trace.requests),
    )


@dataclasses.dataclass
class Options:
    mlasim: Path
    runner: str
    fallback: bool
    workdir: Path
    keep: Path | None
    ignore: frozenset[str] = frozenset()
    show: bool = False


def check_file(path: Path, opts: Options, doc: dict[str, Any] | None = None) -> Outcome:
    """mlasim and vLLM on one scenario file; `doc` is its parsed YAML when already known."""
    name = path.stem
    try:
        if doc is None:
            import yaml

            doc = yaml.safe_load(path.read_text())
        trace = resolve(doc, name, path.parent)
    except (TraceError, KeyError, TypeError, ValueError, OSError) as e:
        return Outcome(name, "tool: cannot read the scenario", f"{type(e).__name__}: {e}")
    size = trace_size(trace)
    out = _check(path, opts, trace, size)
    out.doc = doc
    return out


def _check(path: Path, opts: Options, trace: Trace, size: tuple) -> Outcome:
    name = trace.name
    # Other profiles select older scheduler rules on purpose: their traces are replayed under
    # vllm-current (vLLM 0.33.0's rules) and only the scheduler is compared.
    extra = () if trace.profile in ROUTED_PROFILES else ("--set", "engine.profile=vllm-current")
    try:
        mrun = run_mlasim(opts.mlasim, path, opts.workdir, extra, opts.fallback)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Outcome(name, "mlasim: failed to run", str(e), size)
    # vLLM's runner is chosen per process (--runner); a scenario of the other runner is compared on
    # the scheduler only.
    if trace.timed and mrun.record is not None and mrun.clock is not None:
        try:
            steps = admission_steps(trace, mrun.clock)
        except TraceError as e:
            return Outcome(name, "tool: timed arrivals", str(e), size)
        trace = dataclasses.replace(trace, requests=[dataclasses.replace(r, arrival_step=steps[r.id]) for r in trace.requests])
    # (Without mlasim's run, as when its loader rejects the scenario, vLLM admits timed requests at step 0.)
    # A scenario that leaves the backend, block size or runner to vLLM 0.33's auto choice replays
    # what mlasim resolved (checked against vLLM's selection itself by vllm_selection.py).
    if mrun.backend is not None and mrun.block_size is not None:
        trace = dataclasses.replace(
            trace,
            backend=mrun.backend,
            model_runner=mrun.model_runner or trace.model_runner,
            sched={**trace.sched, "block_size": mrun.block_size},
            sparse=trace.sparse or mrun.sparse,
        )
    route = not extra and not trace.sparse and mrun.threshold is not None and trace.model_runner == opts.runner
    # vLLM's routing runs with the threshold mlasim reports, so that the reorder and split are
    # compared on their own; a threshold vLLM would not use is reported separately.
    routing = (mrun.threshold, mrun.query_len_support != "varlen") if route else None
    vrec = None
    verr: tuple[str, str] | None = None
    try:
        vrec = replay_vllm(trace, opts.workdir, opts.runner, routing)
    except VllmRejects as e:
        verr = ("rejects", str(e))
    except VllmStall as e:
        verr = ("stall", str(e))
    except Exception as e:  # noqa: BLE001 - an assertion inside vLLM is a finding too
        import traceback

        tb = traceback.extract_tb(e.__traceback__)[-1]
        verr = ("error", f"{type(e).__name__}: {e} at {Path(tb.filename).name}:{tb.lineno} `{tb.line}`")
    if mrun.rc == 2:
        lines = [ln.strip() for ln in mrun.stderr.splitlines() if ln.strip()]
        msg = next((ln for ln in lines if "error" in ln), lines[0] if lines else "exit 2")
        msg = msg.replace(str(path), path.name)
        if verr and verr[0] == "rejects":
            return Outcome(name, None, "both reject: " + msg, size)
        if verr and verr[0] in ("error", "stall"):  # a config vLLM accepts but cannot run
            return Outcome(name, None, f"mlasim rejects; vLLM {'fails' if verr[0] == 'error' else 'stalls'}: {verr[1]}", size)
        if unrunnable_in_vllm(trace):
            return Outcome(name, REFUSED, msg, size)
        return Outcome(name, "config: mlasim rejects, vLLM accepts", msg, size)
    if mrun.record is None:
        return Outcome(name, "mlasim: failed", f"exit {mrun.rc}: " + (mrun.stderr.strip().splitlines() or [""])[-1], size)
    if verr:
        cat = {"rejects": "config: vLLM rejects, mlasim accepts", "stall": "vLLM: no progress", "error": "vLLM: error"}[verr[0]]
        return Outcome(name, cat, verr[1], size)
    # The prompts both sides replayed must be the same tokens.
    for mr, r in zip(mrun.record["requests"], trace.requests):
        if mr["id"] != r.id or mr["token_ids"][: mr["num_prompt_tokens"]] != r.prompt:
            return Outcome(name, "tool: prompt mismatch", f"request {r.id}", size)
    problem = clock_problem(trace, mrun.record, mrun.clock) if mrun.clock is not None else "no --jsonl output"
    if problem:
        return Outcome(name, "tool: clock", problem, size)
    threshold_note = None
    if route and routing != vllm_threshold(trace) and "routing.threshold" not in opts.ignore:
        t, ru = vllm_threshold(trace)
        threshold_note = (
            f"{trace.backend}, k={trace.sched['num_speculative_tokens']}: mlasim T={routing[0]} "
            f"require_uniform={routing[1]} vs vllm T={t} require_uniform={ru}"
        )
    if opts.show:
        show_steps(mrun.record, vrec, route)
    diff = compare(mrun.record, vrec, route, opts.ignore)
    if diff is None and threshold_note:
        diff = ("routing.threshold", threshold_note)
    elif diff is not None and threshold_note:
        diff = (diff[0], diff[1] + f" (also: {threshold_note})")
    if opts.keep is not None and diff is not None:
        opts.keep.mkdir(parents=True, exist_ok=True)
        (opts.keep / f"{name}.vllm.json").write_text(json.dumps(vrec, indent=1))
        (opts.keep / f"{name}.mlasim.json").write_text(json.dumps(mrun.record, indent=1))
    if route:
        note = ""
    elif extra:
        note = "scheduler only, as vllm-current"
    elif trace.sparse:
        note = "scheduler only: sparse MLA"
    elif trace.model_runner != opts.runner:
        note = f"scheduler only: model runner {trace.model_runner}, vLLM's {opts.runner}"
    else:
        note = "scheduler only: mlasim printed no routing threshold"
    if diff is None:
        return Outcome(name, None, note, size)
    return Outcome(name, diff[0], diff[1], size)


# ---------------------------------------------------------------------------------------------
# Shrinking a differing generated trace to a small one with the same first-difference category.


def _candidates(doc: dict[str, Any]):
    reqs = doc["requests"]
    for i in range(len(reqs)):  # drop a request
        if len(reqs) > 1:
            d = copy.deepcopy(doc)
            del d["requests"][i]
            yield d
    for i, r in enumerate(reqs):
        for key in ("arrival_step", "min_tokens", "ignore_eos", "stop_token_ids", "priority", "accepted_drafts"):
            if key in r:
                d = copy.deepcopy(doc)
                del d["requests"][i][key]
                yield d
        if r["max_tokens"] > 1:
            for mt in (1, r["max_tokens"] // 2, r["max_tokens"] - 1):
                if 1 <= mt < r["max_tokens"]:
                    d = copy.deepcopy(doc)
                    d["requests"][i]["max_tokens"] = mt
                    mn = d["requests"][i].get("min_tokens", 0)
                    if mn > mt:
                        d["requests"][i]["min_tokens"] = mt
                    yield d
        if "prompt" in r:
            p = r["prompt"]
            for n in sorted({1, len(p) // 2, len(p) - 1}):
                if 1 <= n < len(p):
                    for cut in (p[:n], p[len(p) - n :]):
                        d = copy.deepcopy(doc)
                        d["requests"][i]["prompt"] = cut
                        yield d
        else:  # prompt_len, with or without prompt_hash_ids
            n0 = r["prompt_len"]
            block = r.get("prompt_hash_block_size", DEFAULT_PROMPT_HASH_BLOCK_SIZE)
            for n in sorted({1, n0 // 2, n0 - 1}):
                if 1 <= n < n0:
                    d = copy.deepcopy(doc)
                    d["requests"][i]["prompt_len"] = n
                    if "prompt_hash_ids" in r:
                        d["requests"][i]["prompt_hash_ids"] = r["prompt_hash_ids"][: -(-n // block)]
                    yield d
            if "prompt_hash_ids" in r:
                d = copy.deepcopy(doc)
                del d["requests"][i]["prompt_hash_ids"]
                d["requests"][i].pop("prompt_hash_block_size", None)
                yield d
        if r.get("arrival_step", 0) > 1:
            d = copy.deepcopy(doc)
            d["requests"][i]["arrival_step"] -= 1
            yield d
        if "arrival_time" in r:  # as early as the previous one (a requests_file keeps its order)
            earlier = reqs[i - 1]["arrival_time"] if i else 0.0
            if r["arrival_time"] > earlier:
                d = copy.deepcopy(doc)
                d["requests"][i]["arrival_time"] = earlier
                yield d
        out = r.get("output", [])
        need = r["max_tokens"] + 2 * doc["scheduler"].get("num_speculative_tokens", 0) + 1
        if len(out) > need:
            d = copy.deepcopy(doc)
            d["requests"][i]["output"] = out[:need]
            yield d
    if any("arrival_time" in r for r in reqs):  # arrivals by step 0 instead of by time
        d = copy.deepcopy(doc)
        d.pop("timing", None)
        for r in d["requests"]:
            r.pop("arrival_time", None)
        yield d
    if "requests_file" in doc and all(h < 1 << 31 for r in reqs for h in r.get("prompt_hash_ids", [])):
        d = copy.deepcopy(doc)  # the requests in the YAML (prompts seeded by the loader, not lazily)
        del d["requests_file"]
        yield d
    sch = doc["scheduler"]
    for key in ("long_prefill_token_threshold",):
        if key in sch:
            d = copy.deepcopy(doc)
            del d["scheduler"][key]
            yield d
    for key, lo in (("num_gpu_blocks", 2), ("max_num_seqs", 1), ("max_num_batched_tokens", 1), ("max_model_len", 2)):
        if key in sch and sch[key] > lo:
            for v in (lo, sch[key] // 2, sch[key] - 1):
                if lo <= v < sch[key]:
                    d = copy.deepcopy(doc)
                    d["scheduler"][key] = v
                    yield d
    if sch.get("num_speculative_tokens", 0) > 1:
        d = copy.deepcopy(doc)
        d["scheduler"]["num_speculative_tokens"] = 1
        for r in d["requests"]:
            if "accepted_drafts" in r:
                r["accepted_drafts"] = [min(a, 1) for a in r["accepted_drafts"]]
        yield d
    for key, plain in (("enable_prefix_caching", False), ("policy", "fcfs"), ("enable_chunked_prefill", True)):
        if sch.get(key) not in (None, plain):
            d = copy.deepcopy(doc)
            d["scheduler"][key] = plain
            if key == "policy":
                for r in d["requests"]:
                    r.pop("priority", None)
            yield d


def shrink(outcome: Outcome, opts: Options, budget: int = 400) -> Outcome:
    best = outcome
    doc = {k: v for k, v in outcome.doc.items() if k not in ("expect", "description")}
    doc.setdefault("scheduler", {})
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in _candidates(doc):
            tries += 1
            if tries > budget:
                break
            path = opts.workdir / f"{outcome.name}_shrink.yaml"
            write_scenario(path, cand)
            res = check_file(path, opts, cand)
            if res.category == outcome.category:
                doc = cand
                best = dataclasses.replace(res, name=outcome.name, doc=cand)
                improved = True
                break
    return best


# ---------------------------------------------------------------------------------------------
# Driver


_opts: Options | None = None


def _work(item: tuple[str, Any]) -> Outcome:
    kind, payload = item
    opts = _opts
    assert opts is not None
    if kind == "file":
        return check_file(Path(payload), opts)
    seed, index, spec, keys, files = payload
    doc = generate(seed, index, spec, keys)
    if opts.runner == "v2":  # mlasim's engine.model_runner follows the runner vLLM uses here
        doc["engine"]["model_runner"] = "v2"
    # Which traces become requests_file pairs: a stream of its own, so --files changes nothing else.
    if random.Random(f"mlasim-conformance-files/{seed}/{index}/pick").random() * 100 < files:
        doc = file_trace(doc, seed, index)
    path = opts.workdir / f"{doc['name']}.yaml"
    write_scenario(path, doc, f"random trace {index} of seed {seed} (tools/conformance/vllm_conformance.py)")
    out = check_file(path, opts, doc)
    out.doc = doc
    out.yaml_path = path
    if out.category is not None and opts.keep is not None:
        keep_scenario(path, opts.keep)
    return out


def keep_scenario(path: Path, keep: Path) -> None:
    """Copies a scenario (and its requests file) into `keep`."""
    keep.mkdir(parents=True, exist_ok=True)
    for f in (path, path.with_suffix(".jsonl")):
        if f.exists():
            shutil.copy(f, keep / f.name)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="vllm_conformance.py",
        description="Compare mlasim's scheduler and routing with the real vLLM 0.33.0 Scheduler, step by step.",
    )
    ap.add_argument("--scenarios", nargs="*", metavar="PATH", help="scenario files or folders (default with no --random: scenarios/)")
    ap.add_argument("--random", type=int, default=0, metavar="N", help="also check N seeded random traces")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random traces (default 1)")
    ap.add_argument(
        "--spec",
        choices=["off", "on", "mixed"],
        default="mixed",
        help="speculative decoding in random traces: off (k=0), on (k in {1,3}), mixed (k in {0,1,3}; default)",
    )
    ap.add_argument(
        "--files",
        type=float,
        default=0,
        metavar="PCT",
        help="write PCT%% of the random traces as YAML + JSONL requests_file pairs (some with timed arrivals, "
        "some with prompt_hash_ids sharing leading blocks; default 0)",
    )
    ap.add_argument("--mlasim", metavar="PATH", help="the mlasim binary (default build-cpu/tools/mlasim/mlasim of this checkout, then build/...)")
    ap.add_argument("--keep", metavar="DIR", help="keep the YAML (and both JSON records) of differing traces in DIR")
    ap.add_argument("--shrink", action="store_true", help="shrink the smallest differing random trace of each category and print it")
    ap.add_argument("--runner", choices=["v1", "v2"], default="v2", help="model runner whose batch order is compared (default v2, vLLM 0.33's default; v1: InputBatch + reorder)")
    ap.add_argument(
        "--ignore",
        default="",
        metavar="FIELD,...",
        help="fields not compared, e.g. new_block_ids,num_free_blocks to look past a known block-id difference",
    )
    ap.add_argument("--show", action="store_true", help="print both sides' steps for every input (for a few inputs)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="parallel jobs")
    ap.add_argument("--venv", default=str(DEFAULT_VENV), help="venv with vllm==0.33.0 (default ~/vllm-venv)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only differing traces and the summary")
    args = ap.parse_args(argv)
    if args.random < 0 or args.jobs < 1 or not 0 <= args.files <= 100:
        ap.error("--random must be >= 0, -j >= 1 and --files in [0, 100]")
    ignore = frozenset(f for f in args.ignore.split(",") if f)
    if ignore - set(FIELDS):
        ap.error(f"unknown --ignore field(s) {', '.join(sorted(ignore - set(FIELDS)))}; fields: {', '.join(FIELDS)}")
    files: list[Path] = []
    paths = args.scenarios if args.scenarios is not None else ([] if args.random else [str(REPO / "scenarios")])
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            files.extend(sorted(pp.rglob("*.yaml")))
        elif pp.is_file():
            files.append(pp)
        else:
            ap.error(f"no such scenario file or folder: {p}")
    if not files and not args.random:
        ap.error("nothing to check: give --scenarios PATH... and/or --random N")

    reexec_in_venv(
        Path(args.venv),
        ("vllm",),
        f"set up the venv: python3 -m venv {args.venv} && {args.venv}/bin/pip install vllm==0.33.0  "
        "(see tools/conformance/README.md)",
    )
    mlasim = find_mlasim(args.mlasim)
    if not (mlasim.is_file() and os.access(mlasim, os.X_OK)):
        print(f"mlasim binary not found: {mlasim} (build it, or pass --mlasim PATH)", file=sys.stderr)
        return 2
    import_vllm(args.runner)

    global _opts
    workdir = Path(tempfile.mkdtemp(prefix="mlasim-conformance-"))
    keep = Path(args.keep) if args.keep else None
    _opts = Options(
        mlasim=mlasim, runner=args.runner, fallback=not args.mlasim, workdir=workdir, keep=keep, ignore=ignore, show=args.show
    )
    try:
        stamp = mlasim.stat().st_mtime
        keys = probe_keys(mlasim, workdir)
        print(f"mlasim: {mlasim}; vLLM {vllm.__version__} on the CPU; model runner {args.runner}")
        for key in sorted(set(OPTIONAL_KEYS) - keys):
            print(
                f"note: this mlasim rejects scheduler.{key}; random traces omit it "
                f"(vLLM then runs with {SCHEDULER_DEFAULTS[key]})"
            )
        items: list[tuple[str, Any]] = [("file", str(f)) for f in files]
        items += [("random", (args.seed, i, args.spec, keys, args.files)) for i in range(args.random)]
        outcomes: list[Outcome] = []
        if args.jobs > 1:
            import multiprocessing as mp

            with mp.get_context("fork").Pool(args.jobs) as pool:
                it = pool.imap(_work, items)
                for out in it:
                    outcomes.append(out)
                    _print(out, args.quiet)
        else:
            for item in items:
                out = _work(item)
                outcomes.append(out)
                _print(out, args.quiet)
        differing = [o for o in outcomes if o.category not in (None, REFUSED)]
        refused = [o for o in outcomes if o.category == REFUSED]
        if not mlasim.exists() or mlasim.stat().st_mtime != stamp:
            print(f"warning: {mlasim} was rebuilt during this run; results may mix two builds")
        print(f"{len(outcomes) - len(differing) - len(refused)} identical, {len(differing)} differing")
        if refused:
            print(f"  ({len(refused)} refused by mlasim: configurations vLLM 0.33 accepts but cannot always run; "
                  "vLLM ran these traces without reaching the failing case)")
        cats: dict[str, list[Outcome]] = {}
        for o in differing:
            cats.setdefault(o.category, []).append(o)
        for cat, outs in sorted(cats.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            smallest = min(outs, key=lambda o: o.size or (99,))
            print(f"  {len(outs):5d}  {cat}   (smallest: {smallest.name})")
        if args.shrink:
            for cat, outs in sorted(cats.items()):
                rand = [o for o in outs if o.doc is not None and "requests" in o.doc]
                if not rand:
                    continue
                smallest = min(rand, key=lambda o: o.size)
                small = shrink(smallest, _opts)
                print(f"\n== {cat}: {small.detail}")
                shrunk = workdir / f"{smallest.name}.shrunk.yaml"
                write_scenario(shrunk, small.doc, f"shrunk from {smallest.name}: {small.detail}")
                print(shrunk.read_text(), end="")
                if shrunk.with_suffix(".jsonl").exists():
                    print(f"# {shrunk.with_suffix('.jsonl').name}:\n" + shrunk.with_suffix(".jsonl").read_text(), end="")
                if keep is not None:
                    keep_scenario(shrunk, keep)
        return 0 if not differing else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _print(out: Outcome, quiet: bool) -> None:
    if out.category is None:
        if not quiet:
            print(f"{out.name}: identical" + (f" ({out.detail})" if out.detail else ""), flush=True)
    else:
        print(f"{out.name}: [{out.category}] {out.detail}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
