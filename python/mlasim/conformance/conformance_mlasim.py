"""mlasim's side of the conformance check, through its command line only: the replay and the trace
exactly as it ran (`mlasim run --dry-run --json --resolved`), random traces (`mlasim fuzz
--emit`) and shrink candidates (`mlasim shrink --candidates`). Nothing of mlasim is re-implemented
here: prompts, forced outputs, drafts, the resolved configuration and the admission steps of timed
arrivals all come from the resolved trace (docs/spec/interfaces.md "--resolved")."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from mlasim._data import data_root, default_binary

REPO = data_root()


class TraceError(Exception):
    """The tool cannot replay this input (not a difference between mlasim and vLLM)."""


@dataclasses.dataclass
class Req:
    """One request line of the resolved trace."""

    id: str
    index: int  # position in the scenario
    arrival_step: int  # the step the vLLM side adds it at: arrival_step, or for timed arrivals the admitting step
    prompt: list[int]
    max_tokens: int
    min_tokens: int
    ignore_eos: bool
    stop_token_ids: list[int]
    priority: int
    output: list[int]  # every forced output the request can sample or draft
    accepted_drafts: list[int]

    def forced(self, i: int) -> int:
        if i >= len(self.output):
            raise TraceError(f"request {self.id}: forced output {i} past the {len(self.output)} the resolved trace lists")
        return self.output[i]

    def accepted_at(self, verify_step: int, num_drafts: int) -> int:
        """Accepted drafts of a verification step; past the list every draft is accepted."""
        if verify_step < len(self.accepted_drafts):
            return max(0, min(self.accepted_drafts[verify_step], num_drafts))
        return num_drafts


@dataclasses.dataclass
class Trace:
    """The resolved trace: its header's sections as dicts, the requests in admission order."""

    name: str
    model: dict[str, Any]
    sched: dict[str, Any]
    engine: dict[str, Any]
    timed: bool
    requests: list[Req]

    @property
    def by_index(self) -> list[Req]:
        return sorted(self.requests, key=lambda r: r.index)


def read_resolved(path: Path, stopped: bool = False) -> Trace:
    """`stopped`: the run stopped where vLLM cannot go on (exit 4), so only the requests admitted
    before it are listed."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not lines or lines[0].get("format") != "mlasim-resolved-trace" or lines[0].get("version") != 1:
        raise TraceError(f"{path}: not an mlasim resolved trace (format 1)")
    h = lines[0]
    fields = [f.name for f in dataclasses.fields(Req) if f.name != "arrival_step"]
    step = "admitted_step" if h["timed_arrivals"] else "arrival_step"
    reqs = [Req(arrival_step=r[step], **{f: r[f] for f in fields}) for r in lines[1:]]
    if len(reqs) != h["num_requests"] and not (stopped and len(reqs) < h["num_requests"]):
        raise TraceError(f"{path}: {len(reqs)} requests admitted of {h['num_requests']}")
    return Trace(h["scenario"], h["model"], h["scheduler"], h["engine"], h["timed_arrivals"], reqs)


def find_mlasim(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    return default_binary()  # MLASIM_BINARY, a checkout's build-cpu/ or build/, or the installed command


@dataclasses.dataclass
class MlasimRun:
    rc: int
    record: dict[str, Any] | None  # `--json`
    trace: Trace | None  # `--resolved`
    stderr: str


def run_mlasim(binary: Path, scenario: Path, workdir: Path, extra: tuple[str, ...] = ()) -> MlasimRun:
    """`mlasim run SCENARIO --dry-run --table none --json OUT --resolved TRACE [extra]`."""
    out = workdir / (scenario.stem + ".mlasim.json")
    resolved = workdir / (scenario.stem + ".resolved.jsonl")
    for f in (out, resolved):
        f.unlink(missing_ok=True)
    cmd = [str(binary), "run", str(scenario), "--dry-run", "--table", "none", "--json", str(out), "--resolved", str(resolved)]
    proc = subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=600)
    if not out.exists() or not resolved.exists():
        return MlasimRun(proc.returncode, None, None, proc.stderr)
    record = json.loads(out.read_text())
    return MlasimRun(proc.returncode, record, read_resolved(resolved, "stopped" in record), proc.stderr)


def _mlasim(binary: Path, *args: str) -> None:
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise TraceError(f"mlasim {' '.join(args[:2])}: exit {proc.returncode}: {proc.stderr.strip()}")


def emit_traces(binary: Path, out: Path, runs: int, seed: int, fuzz_args: list[str]) -> list[Path]:
    """`mlasim fuzz --emit OUT --runs N --seed S [fuzz_args]`: the random traces, in run order."""
    _mlasim(binary, "fuzz", "--emit", str(out), "--runs", str(runs), "--seed", str(seed), *fuzz_args)
    return [out / f"fuzz_{seed}_{i}.yaml" for i in range(runs)]


def shrink_candidates(binary: Path, scenario: Path, out: Path) -> list[Path]:
    """`mlasim shrink SCENARIO --candidates OUT`: the traces one edit smaller, in the shrinker's order."""
    _mlasim(binary, "shrink", str(scenario), "--candidates", str(out))
    return sorted(out.glob("*.yaml"))
