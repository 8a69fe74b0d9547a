"""A typed API over the mlasim command: each function runs it, reads the JSON it writes and returns
dataclasses. There is no second implementation here: what the command computes is what you get.

Errors raise MlasimError with the exit code and the command's message (file:line:col where the
command names one).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from mlasim._binary import binary

PathLike = Union[str, "os.PathLike[str]"]

_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): error: ")


class MlasimError(Exception):
    """The command failed: its exit code (2 bad input, 3 an output not written, ...) and its message.

    >>> try:
    ...     route("1:0")
    ... except MlasimError as e:
    ...     print(e.returncode, "q:nct:P" in e.message)
    2 True
    """

    def __init__(self, returncode: int, message: str, command: Sequence[str]):
        self.returncode = returncode
        self.message = message.strip()
        self.command = list(command)
        first = self.message.splitlines()[0] if self.message else ""
        m = _LOCATION.match(first)
        self.file: Optional[str] = m.group("file") if m else None
        self.line: Optional[int] = int(m.group("line")) if m else None
        self.column: Optional[int] = int(m.group("column")) if m else None
        super().__init__(f"mlasim exited {returncode}: {first}")


def _run(args: Sequence[str], ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess:
    command = [str(binary())] + [str(a) for a in args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in ok:
        raise MlasimError(done.returncode, done.stderr or done.stdout, command)
    return done


def _json_of(args: Sequence[str], flag: str = "--json", ok: Sequence[int] = (0,)) -> Dict[str, Any]:
    """Runs the command with `flag FILE` appended and returns FILE's JSON."""
    with tempfile.TemporaryDirectory(prefix="mlasim-") as d:
        out = Path(d) / "out.json"
        _run(list(args) + [flag, str(out)], ok)
        return json.loads(out.read_text())


def _sets(sets: Union[Dict[str, Any], Sequence[str], None]) -> List[str]:
    if not sets:
        return []
    items = [f"{k}={v}" for k, v in sets.items()] if isinstance(sets, dict) else list(sets)
    out: List[str] = []
    for s in items:
        out += ["--set", s]
    return out


@dataclass(frozen=True)
class Split:
    """A step's split as vLLM logs it, and MLA's forward split (num_mqa_tokens + num_mha_tokens)."""

    num_decodes: int
    num_decode_tokens: int
    num_prefills: int
    num_prefill_tokens: int
    num_mqa_tokens: int
    num_mha_tokens: int

    @staticmethod
    def of(d: Dict[str, Any]) -> "Split":
        return Split(d["num_decodes"], d["num_decode_tokens"], d["num_prefills"], d["num_prefill_tokens"],
                     d["num_mqa_tokens"], d["num_mha_tokens"])


@dataclass(frozen=True)
class Row:
    """One batch row after the reorder: its query (q), computed tokens (nct), prompt length and path."""

    id: str
    q: int
    nct: int
    prompt_len: int
    region: str
    path: str  # "mqa" (the decode path) or "mha" (the prefill path)
    fresh_on_decode_path: bool
    reason: str

    @staticmethod
    def of(d: Dict[str, Any]) -> "Row":
        return Row(d["id"], d["q"], d["nct"], d["prompt_len"], d["region"], d["path"], d["fresh_on_decode_path"],
                   d.get("reason", ""))


@dataclass(frozen=True)
class Step:
    step: int
    num_scheduled_tokens: Dict[str, int]
    split: Split
    rows: List[Row]
    split_reason: str
    new: List[str]
    preempted: List[str]
    finished: List[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Request:
    id: str
    status: str
    num_prompt_tokens: int
    token_ids: List[int]
    num_preemptions: int


@dataclass(frozen=True)
class Run:
    """`mlasim run SCENARIO --json`: every step and request of the replay."""

    scenario: str
    steps: List[Step]
    requests: List[Request]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    def fresh_on_decode_path(self) -> List[Row]:
        """The rows that are fresh prefills routed to the decode path (the misrouting)."""
        return [r for s in self.steps for r in s.rows if r.fresh_on_decode_path]


def run(scenario: PathLike, *, dry_run: bool = True, sets: Union[Dict[str, Any], Sequence[str], None] = None,
        device: str = "cpu") -> Run:
    """Replays a scenario; with dry_run (the default) the scheduler and routing only, no model.

    >>> r = run("scenarios/seed/lone_one_token_prompt.yaml")
    >>> r.steps[0].split.num_mqa_tokens, r.steps[0].split.num_mha_tokens
    (1, 0)
    >>> [row.id for row in r.fresh_on_decode_path()]
    ['hello']
    >>> run("scenarios/seed/lone_one_token_prompt.yaml", sets={"engine.profile": "strict"}).fresh_on_decode_path()
    []
    """
    args = ["run", os.fspath(scenario), "--table", "none", "--device", device] + _sets(sets)
    if dry_run:
        args.append("--dry-run")
    d = _json_of(args, ok=(0, 1))  # 1: an expect: block failed; the run is written all the same
    steps = [Step(s["step"], s["num_scheduled_tokens"], Split.of(s), [Row.of(r) for r in s["rows"]],
                  s["split_reason"], s["new"], s["preempted"], s["finished"], s) for s in d["steps"]]
    requests = [Request(q["id"], q["status"], q["num_prompt_tokens"], q["token_ids"], q["num_preemptions"])
                for q in d["requests"]]
    return Run(d["scenario"], steps, requests, d)


@dataclass(frozen=True)
class Route:
    """`mlasim route --json`: a batch's reorder, split and each row's path."""

    profile: str
    backend: str
    decode_threshold: int
    order: List[int]
    split: Split
    reason: str
    rows: List[Row]
    raw: Dict[str, Any] = field(repr=False, compare=False)


def route(batch: Union[str, Sequence[Sequence[int]]], *, backend: Optional[str] = None, profile: Optional[str] = None,
          scenario: Optional[PathLike] = None, sets: Union[Dict[str, Any], Sequence[str], None] = None,
          threshold: Optional[int] = None, spec_tokens: Optional[int] = None, reorder: bool = True) -> Route:
    """Routes an explicit batch: rows as "q:nct:P,..." or [(q, nct, P), ...] in persistent-batch order.

    >>> r = route([(1, 0, 1)], backend="flashinfer-mla")   # a lone one-token prompt
    >>> r.rows[0].path, r.rows[0].fresh_on_decode_path, r.split.num_mqa_tokens
    ('mqa', True, 1)
    >>> route("1:0:1", backend="flashinfer-mla", profile="strict").rows[0].path
    'mha'
    """
    text = batch if isinstance(batch, str) else ",".join(":".join(str(x) for x in row) for row in batch)
    args = ["route", "--batch", text, "--json"]
    if scenario is not None:
        args += ["--scenario", os.fspath(scenario)] + _sets(sets)
    if backend is not None:
        args += ["--backend", backend]
    if profile is not None:
        args += ["--profile", profile]
    if threshold is not None:
        args += ["--threshold", str(threshold)]
    if spec_tokens is not None:
        args += ["--spec-tokens", str(spec_tokens)]
    if not reorder:
        args.append("--no-reorder")
    d = json.loads(_run(args).stdout)
    return Route(d["profile"], d["backend"], d["decode_threshold"], d["order"], Split.of(d), d["reason"],
                 [Row.of(r) for r in d["rows"]], d)


@dataclass(frozen=True)
class Candidate:
    name: str
    valid: bool
    reasons: List[str]


@dataclass(frozen=True)
class Deployment:
    """`mlasim deploy --json`: what vLLM 0.33 runs for a config.json on a GPU."""

    architecture: str
    use_mla: bool
    sparse: bool
    gpu: str
    backend: str
    candidates: List[Candidate]
    block_size: int
    reorder_threshold: int
    model_runner: str
    max_model_len: int
    raw: Dict[str, Any] = field(repr=False, compare=False)


def deploy(hf_config: PathLike, *, gpu: str = "h200", tp: int = 1, kv_cache_dtype: str = "auto",
           block_size: Optional[int] = None, spec_tokens: Optional[int] = None, attention_backend: str = "auto",
           max_model_len: Optional[int] = None) -> Deployment:
    """The deployment chain of a model: MLA or not, sparse or not, the backends and the one chosen.

    >>> d = deploy("scenarios/hf_configs/deepseek-v3.json", gpu="b200", tp=8)
    >>> d.architecture, d.backend, d.candidates[0].name
    ('DeepseekV3ForCausalLM', 'FLASHINFER_MLA', 'FLASHINFER_MLA')
    """
    args = ["deploy", "--hf-config", os.fspath(hf_config), "--gpu", gpu, "--tp", str(tp), "--kv-cache-dtype",
            kv_cache_dtype, "--attention-backend", attention_backend]
    if block_size is not None:
        args += ["--block-size", str(block_size)]
    if spec_tokens is not None:
        args += ["--spec-tokens", str(spec_tokens)]
    if max_model_len is not None:
        args += ["--max-model-len", str(max_model_len)]
    d = _json_of(args)
    return Deployment(d["architecture"], d["use_mla"], d["sparse"], d["gpu"], d["backend"],
                      [Candidate(c["name"], c["valid"], c["reasons"]) for c in d["candidates"]], d["block_size"],
                      d["reorder_threshold"], d["model_runner"], d["max_model_len"], d)


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    path: str
    status: str  # "pass", "fail" or "error"
    num_checks: int
    messages: List[str]


@dataclass(frozen=True)
class CheckReport:
    """`mlasim check --json`: each scenario's verdict against its goldens and expect: block."""

    passed: int
    failed: int
    scenarios: List[ScenarioResult]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.failed == 0


def check(paths: Union[PathLike, Sequence[PathLike]], *, dry_run: bool = False, golden_dir: Optional[PathLike] = None,
          jobs: int = 1, shard: Optional[str] = None, device: str = "cpu") -> CheckReport:
    """Checks scenarios against their goldens; a failed check is a report, not an exception.

    >>> r = check("scenarios/seed/lone_one_token_prompt.yaml", dry_run=True)
    >>> r.ok, r.scenarios[0].name, r.scenarios[0].status
    (True, 'lone_one_token_prompt', 'pass')
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    args = ["check"] + [os.fspath(p) for p in items] + ["-j", str(jobs), "--device", device]
    if dry_run:
        args.append("--dry-run")
    if golden_dir is not None:
        args += ["--golden-dir", os.fspath(golden_dir)]
    if shard is not None:
        args += ["--shard", shard]
    d = _json_of(args, ok=(0, 1))  # 1: a scenario failed, which the report says
    return CheckReport(d["passed"], d["failed"],
                       [ScenarioResult(s["name"], s["path"], s["status"], s["num_checks"], s["messages"])
                        for s in d["scenarios"]], d)


@dataclass(frozen=True)
class Probe:
    column: str
    num_speculative_tokens: int
    path: str
    fresh_on_decode_path: bool
    num_mqa: int
    num_mha: int


@dataclass(frozen=True)
class ReleaseCell:
    releases: str
    profile: str
    backend: str
    model_runner: str
    decode_threshold: int
    conformance: str
    probes: List[Probe]


@dataclass(frozen=True)
class Releases:
    """`mlasim releases --json`: each vLLM release x MLA backend and how the misrouting probes route."""

    cells: List[ReleaseCell]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    def cell(self, profile: str, backend: str) -> ReleaseCell:
        for c in self.cells:
            if c.profile == profile and c.backend == backend:
                return c
        raise KeyError(f"no cell for profile {profile} and backend {backend}")


def releases() -> Releases:
    """Every release profile x backend and its probes' routes.

    >>> p = releases().cell("vllm-0.33", "flashmla").probes[0]
    >>> p.column, p.path, p.fresh_on_decode_path
    ('lone 1-token prompt', 'decode', True)
    """
    d = _json_of(["releases"])
    cells = [ReleaseCell(c["releases"], c["profile"], c["backend"], c["model_runner"], c["decode_threshold"],
                         c["conformance"],
                         [Probe(p["column"], p["num_speculative_tokens"], p["path"], p["fresh_on_decode_path"],
                                p["num_mqa"], p["num_mha"]) for p in c["probes"] if p.get("scheduled", True)])
             for c in d["cells"]]
    return Releases(cells, d)
