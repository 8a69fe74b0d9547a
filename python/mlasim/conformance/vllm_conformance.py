#!/usr/bin/env python3
"""Replays traces through mlasim and through a real vLLM release's scheduler (on the CPU; 0.33.0
unless --venv names another release's venv) and reports, per trace, `identical` or the first difference (tools/conformance/README.md).

mlasim writes the trace exactly as it replayed it (`mlasim run --resolved`); the vLLM side replays
that file (conformance_vllm.py) and the records are compared (conformance_compare.py). Random
traces come from `mlasim fuzz --emit`, shrink candidates from `mlasim shrink --candidates`.
Optional, not run in CI; runs under the Python of a venv holding vllm==0.33.0 (default
~/vllm-venv: the script re-executes itself there when `import vllm` fails).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from .venv_reexec import DEFAULT_VENV, reexec_in_venv

from . import conformance_vllm as cv
from .conformance_compare import FIELDS, Outcome, compare, show_steps
from .conformance_families import BLOCK_SIZE as FAMILY_BLOCK_SIZE, FAMILIES
from .conformance_family_traces import family_trace
from .conformance_mlasim import REPO, TraceError, emit_traces, find_mlasim, run_mlasim, shrink_candidates

ALIASES = {"vllm-current": "vllm-0.33"}  # mlasim's profile aliases
# mlasim fuzz's knobs drawn by default: all but the engine profile (others are replayed as vllm-current).
DEFAULT_VARY = "backend,spec,chunked,thresholds,budgets,blocks,prefix-caching,decode-threshold,policy,sampling,spec-method,reserve"


class Options:
    def __init__(self, args: argparse.Namespace, mlasim: Path, workdir: Path, profile: str):
        self.mlasim, self.workdir, self.runner = mlasim, workdir, args.runner
        self.profile = profile  # the mlasim profile reproducing the installed release
        self.keep = Path(args.keep) if args.keep else None
        self.ignore = frozenset(f for f in args.ignore.split(",") if f)
        self.show = args.show
        self.family = args.family  # a hybrid model family: its KV cache groups on every trace


# A profile whose release refuses what later releases run (SchedulerRules v1_runs_mtp,
# priority_supported) -> the profile that accepts the same trace, to hand vLLM the trace mlasim
# refused.
# For a trace mlasim refuses as the release's profile, the nearest profile that accepts it: 0.8's
# refusals (priorities, MTP on V1) are 0.11's features; vLLM 0.33's start-up check of the pool
# against max_model_len is not modelled for 0.14-0.18 (docs/spec/scheduler.md §9).
ACCEPTING_PROFILE = {"vllm-2025-early": "vllm-0.11", "vllm-0.33": "vllm-3region", "strict": "vllm-3region"}


def both_refuse(path: Path, opts: Options, name: str, workdir: Path, why: str) -> Outcome | None:
    """When mlasim refuses the trace as the release's profile: whether vLLM refuses it too. The
    trace is resolved as the nearest profile that accepts it and handed to vLLM; identical when
    vLLM's own checks refuse it."""
    accepting = ACCEPTING_PROFILE.get(opts.profile)
    if accepting is None:
        return None
    try:
        mrun = run_mlasim(opts.mlasim, path, workdir, ("--set", f"engine.profile={accepting}", "--set", "engine.model_runner=auto"))
    except (OSError, TraceError):
        return None
    if mrun.trace is None:
        return None
    try:
        cv.replay_vllm(mrun.trace, workdir, opts.runner, None)
    except cv.VllmRejects as ex:
        return Outcome(name, None, f"both refuse: mlasim: {why.split('error: ', 1)[-1][:90]}; vLLM: {ex}", path=path)
    except Exception:  # noqa: BLE001 - vLLM ran it (or failed later): mlasim alone refuses
        return None
    return None


def check(path: Path, opts: Options, name: str | None = None) -> Outcome:
    """mlasim and vLLM on one scenario file."""
    name = name or path.stem
    workdir = opts.workdir / f"w{os.getpid()}"
    workdir.mkdir(exist_ok=True)
    try:
        if opts.family and "kv_cache_groups:" not in path.read_text():
            path = family_trace(path, opts.family, opts, workdir)
        mrun = run_mlasim(opts.mlasim, path, workdir)
        # Other profiles select other releases' rules on purpose: replayed with the installed
        # release's profile.
        other = mrun.trace is not None and ALIASES.get(mrun.trace.engine["profile"], mrun.trace.engine["profile"]) != opts.profile
        if other:
            extra = ("--set", f"engine.profile={opts.profile}")
            if opts.runner == "v1":  # a release before model runner V2: the profile's own runner
                extra += ("--set", "engine.model_runner=auto")
            mrun = run_mlasim(opts.mlasim, path, workdir, extra)
    except (OSError, TraceError) as e:
        return Outcome(name, "mlasim: failed to run", str(e), path=path)
    if mrun.rc == 2:
        lines = [ln.strip() for ln in mrun.stderr.splitlines() if ln.strip()]
        why = (lines or ["exit 2"])[0].replace(str(path), path.name)
        return both_refuse(path, opts, name, workdir, why) or Outcome(name, "config: mlasim rejects", why, path=path)
    if mrun.record is None or mrun.trace is None:
        return Outcome(name, "mlasim: failed", f"exit {mrun.rc}: " + (mrun.stderr.strip().splitlines() or [""])[-1], path=path)
    trace = mrun.trace
    size = (len(trace.requests), sum(len(r.prompt) for r in trace.requests), sum(min(r.max_tokens, 99) for r in trace.requests))
    # A run stopped where vLLM cannot go on lists only the requests finished before it.
    by_id = {r.id: r for r in trace.by_index}
    if not mrun.record.get("stopped") and [mr["id"] for mr in mrun.record["requests"]] != list(by_id):
        return Outcome(name, "tool: prompt mismatch", "the run's requests are not the trace's", size, path)
    for mr in mrun.record["requests"]:
        r = by_id.get(mr["id"])
        if r is None or mr["token_ids"][: mr["num_prompt_tokens"]] != r.prompt:
            return Outcome(name, "tool: prompt mismatch", f"request {mr['id']}", size, path)
    # vLLM's runner is chosen per process (--runner): a scenario of the other runner or a sparse
    # one (vLLM's sparse forward needs the DSA model) gets its scheduler compared only.
    e = trace.engine
    route = not trace.model["sparse_mla"] and e["model_runner"] == opts.runner
    # vLLM's routing runs with mlasim's threshold, so that the reorder and split are compared on
    # their own; a threshold vLLM would not use is reported apart (routing.threshold).
    routing = (e["decode_threshold"], e["require_uniform"]) if route else None
    stopped = mrun.record.get("stopped")  # exit 4: mlasim stopped where it says vLLM cannot go on

    def both_stopped(agreed, ex):
        # Both sides stopped: at the same step, with the same requests in the same states.
        if stopped["step"] != ex.step:
            return Outcome(name, "stopped.step", f"mlasim stops at step {stopped['step']}, vLLM at step {ex.step}", size, path)
        diff = compare_stopped(mrun.record, ex, route, opts.ignore)
        if diff is not None:
            return Outcome(name, diff[0], diff[1], size, path)
        return Outcome(name, None, agreed, size, path)

    try:
        vrec = cv.replay_vllm(trace, workdir, opts.runner, routing)
    except cv.VllmRejects as ex:
        return Outcome(name, "config: vLLM rejects, mlasim accepts", str(ex), size, path)
    except cv.VllmStall as ex:
        if not (stopped and "no progress" in stopped["reason"]):
            return Outcome(name, "vLLM: no progress", str(ex), size, path)
        return both_stopped(f"both make no progress after step {ex.step}: {ex}", ex)
    except cv.VllmStops as ex:
        if not stopped:
            return Outcome(name, "vLLM: error", str(ex), size, path)
        return both_stopped(f"both stop at step {ex.step}: {ex.what}", ex)
    except Exception as ex:  # noqa: BLE001 - an assertion inside vLLM is a finding too
        tb = traceback.extract_tb(ex.__traceback__)[-1]
        return Outcome(name, "vLLM: error", f"{type(ex).__name__}: {ex} at {Path(tb.filename).name}:{tb.lineno} `{tb.line}`", size, path)
    if stopped:
        return Outcome(name, "stopped.step", f"mlasim stops at step {stopped['step']} ({stopped['reason'][:80]}), vLLM runs on", size, path)
    if opts.show:
        show_steps(mrun.record, vrec, route)
    diff = compare(mrun.record, vrec, route, opts.ignore)
    if diff is None and route and routing != cv.vllm_threshold(trace) and "routing.threshold" not in opts.ignore:
        t, ru = cv.vllm_threshold(trace)
        diff = ("routing.threshold", f"{e['attention_backend']}, k={trace.sched['num_speculative_tokens']}: mlasim T={routing[0]} "
                f"require_uniform={routing[1]} vs vllm T={t} require_uniform={ru}")
    if diff is not None:
        if opts.keep is not None:
            opts.keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, opts.keep / f"{name}.yaml")
            (opts.keep / f"{name}.vllm.json").write_text(json.dumps(vrec, indent=1))
            (opts.keep / f"{name}.mlasim.json").write_text(json.dumps(mrun.record, indent=1))
        return Outcome(name, diff[0], diff[1], size, path)
    if route:
        note = f"as {opts.profile}" if other else ""
    elif trace.model["sparse_mla"]:
        note = "scheduler only: sparse MLA"
    else:
        note = f"scheduler only: model runner {e['model_runner']}, vLLM's {opts.runner}"
    linear = sum(1 for st in vrec["steps"] if "linear_attention" in st) if route else 0
    return Outcome(name, None, note, size, path, linear)


def compare_stopped(record: dict, ex: cv.VllmStops | cv.VllmStall, route: bool, ignore: set[str]) -> tuple[str, str] | None:
    """Both stopped at the same step: the steps before it, then the requests unfinished there
    (ids, then per request token_ids, status, num_preemptions, stop_reason, num_computed_tokens)."""
    unfinished = [r for r in record["requests"] if not r["status"].startswith("finished")]
    diff = compare({"steps": record["steps"], "requests": unfinished}, {"steps": ex.steps, "requests": ex.requests}, route, ignore)
    if diff is not None:
        return diff
    if [r["id"] for r in unfinished] != [r["id"] for r in ex.requests]:
        return "stopped.unfinished", f"mlasim {[r['id'] for r in unfinished]} vs vllm {[r['id'] for r in ex.requests]}"
    for a, b in zip(unfinished, ex.requests):
        if a.get("num_computed_tokens") != b.get("num_computed_tokens") and "stopped.num_computed_tokens" not in ignore:
            return ("stopped.num_computed_tokens",
                    f"request {a['id']}: mlasim {a.get('num_computed_tokens')} vs vllm {b.get('num_computed_tokens')}")
    return None


def shrink(outcome: Outcome, opts: Options, budget: int = 400) -> Outcome:
    """The smallest trace `mlasim shrink --candidates` reaches, one edit at a time, whose first
    difference stays in `outcome`'s category."""
    best, tries, improved = outcome, 0, True
    while improved and tries < budget:
        improved = False
        out = opts.workdir / f"cand_{tries}"
        try:
            candidates = shrink_candidates(opts.mlasim, best.path, out)
        except TraceError:
            break
        for cand in candidates:
            tries += 1
            res = check(cand, opts, outcome.name)
            if res.category == outcome.category:
                kept = opts.workdir / f"{outcome.name}_shrunk_{tries}.yaml"
                shutil.copy(cand, kept)
                best, improved = Outcome(res.name, res.category, res.detail, res.size, kept), True
                break
            if tries >= budget:
                break
        shutil.rmtree(out, ignore_errors=True)
    return best


_opts: Options | None = None


def _work(path: str) -> Outcome:
    return check(Path(path), _opts)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="vllm_conformance.py",
        description="Compare mlasim's scheduler and routing with a real vLLM release's Scheduler (0.33.0 by default), "
        "step by step, under the mlasim profile that reproduces that release.",
    )
    ap.add_argument("--scenarios", nargs="*", metavar="PATH", help="scenario files or folders (default with no --random: scenarios/)")
    ap.add_argument("--random", type=int, default=0, metavar="N", help="also check N random traces from `mlasim fuzz --emit`")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random traces (default 1)")
    ap.add_argument("--vary", default=DEFAULT_VARY, metavar="KNOB,...", help=f"mlasim fuzz knobs to draw (default {DEFAULT_VARY})")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="mlasim fuzz --set for the random traces (repeatable)")
    ap.add_argument("--mlasim", metavar="PATH", help="the mlasim binary (default build-cpu/tools/mlasim/mlasim of this checkout, then build/...)")
    ap.add_argument("--keep", metavar="DIR", help="keep the YAML and both JSON records of differing traces in DIR")
    ap.add_argument("--shrink", action="store_true", help="shrink the smallest differing trace of each category and print it")
    ap.add_argument("--runner", choices=["v1", "v2"], help="model runner whose batch order is compared (default v2 where the "
                    "release has it, as vLLM 0.33's default; v1: InputBatch + reorder, the only one before 0.33)")
    ap.add_argument("--ignore", default="", metavar="FIELD,...", help="fields not compared, e.g. new_block_ids,num_free_blocks")
    ap.add_argument("--show", action="store_true", help="print both sides' steps for every input (for a few inputs)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="parallel jobs")
    ap.add_argument("--profile", choices=["strict"], help="check this profile instead of the release's own: strict is "
                    "vLLM 0.33.0's split with treat_short_extends_as_decodes=False (needs the 0.33 venv)")
    ap.add_argument("--venv", default=str(DEFAULT_VENV), help="venv holding the vLLM release to check (default ~/vllm-venv: "
                    "vllm==0.33.0); tools/conformance/README.md lists the releases and their profiles")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only differing traces and the summary")
    ap.add_argument("--family", choices=FAMILIES, help="give every trace the KV cache groups vLLM 0.33 plans for this "
                    "hybrid model family (tools/conformance/conformance_families.py), its pool drawn anew; random "
                    "traces use the family's block size")
    args = ap.parse_args(argv)
    if args.random < 0 or args.jobs < 1:
        ap.error("--random must be >= 0 and -j >= 1")
    unknown = {f for f in args.ignore.split(",") if f} - set(FIELDS)
    if unknown:
        ap.error(f"unknown --ignore field(s) {', '.join(sorted(unknown))}; fields: {', '.join(FIELDS)}")
    files: list[Path] = []
    for p in args.scenarios if args.scenarios is not None else ([] if args.random else [str(REPO / "scenarios")]):
        pp = Path(p)
        if not pp.exists():
            ap.error(f"no such scenario file or folder: {p}")
        files.extend(sorted(pp.rglob("*.yaml")) if pp.is_dir() else [pp])
    if not files and not args.random:
        ap.error("nothing to check: give --scenarios PATH... and/or --random N")
    reexec_in_venv(Path(args.venv), ("vllm",), f"set up the venv: python3 -m venv {args.venv} && {args.venv}/bin/pip install "
                   "vllm==0.33.0  (see tools/conformance/README.md)")
    mlasim = find_mlasim(args.mlasim)
    if not (mlasim.is_file() and os.access(mlasim, os.X_OK)):
        print(f"mlasim binary not found: {mlasim} (build it, or pass --mlasim PATH)", file=sys.stderr)
        return 2
    release = cv.Release()
    if release.profile is None:
        print(f"vLLM {release.version}: no mlasim profile reproduces this release (tools/conformance/README.md lists them)", file=sys.stderr)
        return 2
    if args.profile:
        if release.profile != "vllm-0.33":
            ap.error(f"--profile {args.profile} is checked against vLLM 0.33.0, not {release.version}")
        release.profile = args.profile
        cv.TREAT_SHORT_EXTENDS_AS_DECODES = False
    if args.runner is None:
        args.runner = release.default_runner
    elif args.runner == "v2" and release.default_runner != "v2":
        ap.error(f"vLLM {release.version} runs model runner V1 (mlasim's profile {release.profile} has only V1)")
    version = cv.import_vllm(args.runner)
    cv.FAMILY = args.family
    global _opts
    workdir = Path(tempfile.mkdtemp(prefix="mlasim-conformance-"))
    _opts = opts = Options(args, mlasim, workdir, release.profile)
    try:
        print(f"mlasim: {mlasim}; vLLM {version} on the CPU, profile {release.profile}; model runner {args.runner}")
        if args.random:
            vary = [k for k in args.vary.split(",") if k]
            if not release.has_scheduler_option("scheduler_reserve_full_isl"):
                vary = [k for k in vary if k != "reserve"]  # an mlasim override this release cannot take
            fuzz_args = [a for k in vary for a in ("--vary", k)]
            fuzz_args += ["--set", f"engine.profile={release.profile}"]
            if args.family:  # the family's attention block size; the pool is drawn per trace (family_trace)
                fuzz_args += ["--set", f"scheduler.block_size={FAMILY_BLOCK_SIZE[args.family]}"]
            fuzz_args += [a for s in args.set for a in ("--set", s)]
            if args.runner == "v1":  # random traces follow the runner vLLM uses here
                fuzz_args += ["--set", "engine.model_runner=v1"]
            try:
                files += emit_traces(mlasim, workdir / "random", args.random, args.seed, fuzz_args)
            except TraceError as e:
                print(e, file=sys.stderr)
                return 2
        outcomes: list[Outcome] = []
        if args.jobs > 1:
            import multiprocessing as mp

            with mp.get_context("fork").Pool(args.jobs) as pool:
                for out in pool.imap(_work, [str(f) for f in files]):
                    outcomes.append(out)
                    _print(out, args.quiet)
        else:
            for f in files:
                outcomes.append(check(f, opts))
                _print(outcomes[-1], args.quiet)
        differing = [o for o in outcomes if o.category is not None]
        print(f"{len(outcomes) - len(differing)} identical, {len(differing)} differing")
        if any(o.linear_steps for o in outcomes):
            print(f"  linear-attention (KDA) split compared on {sum(1 for o in outcomes if o.linear_steps)} traces, "
                  f"{sum(o.linear_steps for o in outcomes)} steps")
        cats: dict[str, list[Outcome]] = {}
        for o in differing:
            cats.setdefault(o.category, []).append(o)
        for cat, outs in sorted(cats.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(outs):5d}  {cat}   (smallest: {min(outs, key=lambda o: o.size or (99,)).name})")
        if args.shrink:
            for cat, outs in sorted(cats.items()):
                small = shrink(min(outs, key=lambda o: o.size or (99,)), opts)
                print(f"\n== {cat}: {small.name}: {small.detail}\n" + small.path.read_text(), end="")
                if opts.keep is not None:
                    opts.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(small.path, opts.keep / f"{small.name}.shrunk.yaml")
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
