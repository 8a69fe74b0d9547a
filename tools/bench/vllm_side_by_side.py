#!/usr/bin/env python3
"""mlasim's replay and vLLM's real Scheduler on the same scenario, side by side: the time each takes
and whether their schedules agree step by step (issue 30's ratio).

mlasim: `mlasim run SCENARIO --dry-run --table none`, as a child, best of --reps by user+sys CPU
time (and wall). vLLM: the conformance driver (python/mlasim/conformance/conformance_vllm.py) replays the
trace mlasim resolved (`run --json --resolved`) through vLLM's Scheduler on the CPU; the time
counted is the CPU time inside `Scheduler.schedule()` and `Scheduler.update_from_output()` only
(the driver's own bookkeeping, record building and teacher forcing are left out, and Python's
garbage collector is off during the replay, both in vLLM's favour). The two step records are compared with conformance_compare.compare, routing included.

    python3 tools/bench/vllm_side_by_side.py SCENARIO [--mlasim PATH] [--reps 5] [--venv ~/vllm-venv]

Typical SCENARIO: the trace `build-cpu/tools/bench/bench_replay --reps 1 --keep` leaves
(`/tmp/bench_replay.XXXXXX/replay.yaml`). Not run in CI (vLLM is about 9 GB)."""
from __future__ import annotations

import argparse
import gc
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the checkout's mlasim package
from mlasim.conformance.venv_reexec import DEFAULT_VENV, reexec_in_venv  # noqa: E402


def mlasim_times(mlasim: Path, scenario: Path, reps: int) -> tuple[float, float]:
    """Best user+sys CPU seconds and best wall seconds of `run --dry-run --table none`."""
    cpus, walls = [], []
    for _ in range(reps):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([str(mlasim), "run", str(scenario), "--dry-run", "--table", "none"], capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"mlasim exited {proc.returncode}: {proc.stderr.strip()}")
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(cpus), min(walls)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="vllm_side_by_side.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", help="the scenario YAML to replay on both sides")
    ap.add_argument("--mlasim", metavar="PATH", help="the mlasim binary (default build-cpu/tools/mlasim/mlasim)")
    ap.add_argument("--reps", type=int, default=5, help="mlasim timings, the best kept (default 5)")
    ap.add_argument("--runner", choices=["v1", "v2"], default="v2", help="vLLM's model runner batch order compared (default v2)")
    ap.add_argument("--venv", default=str(DEFAULT_VENV), help="venv holding vllm==0.33.0 (default ~/vllm-venv)")
    args = ap.parse_args(argv)
    scenario = Path(args.scenario)
    if not scenario.is_file() or args.reps < 1:
        ap.error(f"no such scenario file: {scenario}" if not scenario.is_file() else "--reps must be >= 1")
    reexec_in_venv(Path(args.venv), ("vllm",), f"set up the venv: python3 -m venv {args.venv} && {args.venv}/bin/pip install vllm==0.33.0")
    from mlasim.conformance import conformance_vllm as cv
    from mlasim.conformance.conformance_compare import compare
    from mlasim.conformance.conformance_mlasim import find_mlasim, run_mlasim

    mlasim = find_mlasim(args.mlasim)
    version = cv.import_vllm(args.runner)
    cpu_s, wall_s = mlasim_times(mlasim, scenario, args.reps)
    work = Path(tempfile.mkdtemp(prefix="mlasim-side-by-side-"))
    mrun = run_mlasim(mlasim, scenario, work)
    if mrun.record is None or mrun.trace is None:
        sys.exit(f"mlasim --json --resolved failed: exit {mrun.rc}: {mrun.stderr.strip()}")
    steps = len(mrun.record["steps"])
    generated = sum(len(r["token_ids"]) - r["num_prompt_tokens"] for r in mrun.record["requests"])

    spent = {"schedule": 0.0, "update_from_output": 0.0}
    make = cv.make_scheduler

    def timed_scheduler(trace, tmp):  # the driver's scheduler, its two entry points timed
        sched, config = make(trace, tmp)
        for name in spent:
            inner = getattr(sched, name)

            def wrapper(*a, _inner=inner, _name=name, **kw):
                t0 = time.process_time()
                try:
                    return _inner(*a, **kw)
                finally:
                    spent[_name] += time.process_time() - t0

            setattr(sched, name, wrapper)
        return sched, config

    cv.make_scheduler = timed_scheduler
    cv.MAX_STEPS = max(cv.MAX_STEPS, steps + 1)
    e = mrun.trace.engine
    route = not mrun.trace.model["sparse_mla"] and e["model_runner"] == args.runner
    routing = (e["decode_threshold"], e["require_uniform"]) if route else None
    # The driver's records grow to millions of Python objects; with the collector on, its full
    # collections would land inside schedule() and be counted against vLLM. Frozen and off, as
    # vLLM's engine freezes its startup heap (gc.freeze) for the same reason.
    gc.collect()
    gc.freeze()
    gc.disable()
    t0 = time.process_time()
    vrec = cv.replay_vllm(mrun.trace, work, args.runner, routing)
    driver_s = time.process_time() - t0
    gc.enable()
    diff = compare(mrun.record, vrec, route)
    vllm_s = spent["schedule"] + spent["update_from_output"]
    print(f"scenario      : {scenario} ({len(mrun.trace.requests)} requests, {steps} steps, {generated} generated tokens)")
    print(f"mlasim        : {mlasim}: best of {args.reps} `run --dry-run --table none`: {cpu_s:.3f} s user+sys "
          f"({cpu_s * 1e9 / generated:.1f} ns per generated token), wall {wall_s:.3f} s")
    print(f"vLLM {version}  : Scheduler.schedule() {spent['schedule']:.2f} s + update_from_output() {spent['update_from_output']:.2f} s "
          f"= {vllm_s:.2f} s CPU ({vllm_s * 1e6 / generated:.2f} us per generated token); the whole driver {driver_s:.2f} s")
    print(f"schedules     : {'identical' if diff is None else 'DIFFERENT: ' + diff[0] + ': ' + diff[1]} "
          f"({steps} steps{', routing compared (model runner ' + args.runner + ')' if route else ''})")
    print(f"ratio         : vLLM / mlasim = {vllm_s / cpu_s:.1f}x")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if diff is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
