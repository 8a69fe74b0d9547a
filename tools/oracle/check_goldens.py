#!/usr/bin/env python3
"""An independent float64 oracle of mlasim's MLA model, checked against the logits goldens.

    python3 tools/oracle/check_goldens.py [--mlasim PATH] [--golden-dir DIR] [SCENARIO|DIR ...]
    python3 tools/oracle/check_goldens.py --against-run [--inject FAULT ...] [SCENARIO|DIR ...]

The model is tools/oracle/mla_model.py, written from docs/spec/mla.md (§2, §3, §9), not from the
C++. For each scenario (default: every scenarios/**/*.yaml whose golden/<name>/logits.npy exists,
<name> being the scenario's name as `mlasim run --json` reports it), the oracle takes the weights
from `mlasim export` (config.json + model.safetensors) and each request's tokens and drafts from
`mlasim run --dry-run --json` (token_ids = prompt + outputs; steps[].scheduled_spec_decode_tokens
the drafts a step verifies, placeholders -1 entering the model as token 0, docs/spec/scheduler.md
§9). The logits row (step, id, position) is the output at `position` of the request's tokens as
that step fed them: the computed tokens, then the step's own inputs up to `position`. Attention is
causal per request, so one forward pass serves every row whose inputs are a prefix of its tokens.

Checks (an element passes when |r - o| <= rel·|o| + floor, o the oracle's value; the reported
error of an element is |r - o| / (|o| + floor/rel), the relative error with |o| floored at
floor/rel, so the element passes exactly when its error is at most rel):
  golden vs MHA form     rel 2^-24, floor 2e-12·max|o| of the row. The golden is mlasim's fp64
                         value m rounded once to float32, |g - m| <= 2^-24·|m| (round to nearest),
                         and |m - o| is fp64 summation-order noise, at most ~1e-14 of the row's
                         largest logit (docs/spec/cpu_reference.md §5; the two forms here differ
                         by <= 2e-15), so |g - o| <= 2^-24·|o| + (1 + 2^-24)·|m - o| holds with a
                         margin of 100 or more on the noise. Any real difference (a wrong scale,
                         a dropped norm) is 1e-3 or more.
  absorbed vs MHA form   rel 1e-12, floor 1e-12·max|o|: both forms in float64 differ only by
                         associativity (~1e-15, docs/spec/mla.md §2). Every layer runs in the
                         absorbed form for sequences of at most --absorbed-max-tokens tokens; a
                         longer one (its cost grows as n² · 1088 against the MHA form's n² · 320)
                         takes the absorbed form in its last layer only, on the MHA form's earlier
                         layers.
  --against-run          mlasim's own logits from `mlasim run --device cpu --set model.dtype=fp32
                         [--inject FAULT ...] --logits-dir` (the float32 CPU backend) instead of
                         the golden: rel 1e-3, floor 1e-4, the fp32 tolerance class of
                         verify/logits_compare.cpp (mlasim passes an element within 1e-4
                         abs OR 1e-3 rel; this sum is at most twice that). Without --inject it is
                         the positive control of the mode; an injected fault that changes the
                         logits fails it.

Exit 0 when everything agrees; 1 on a disagreement (scenario, row and token of the worst element
printed); 2 on bad input (a missing or malformed file, mlasim failing). The last line is
`N scenarios, M rows, max rel E`, E the largest reported error of the main comparison.
Python 3.11 standard library and numpy only.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

try:
    import numpy as np
except ImportError:
    print("check_goldens: numpy is missing: run it with Debian's python3 and python3-numpy", file=sys.stderr)
    sys.exit(2)

sys.dont_write_bytecode = True  # importing mla_model leaves no __pycache__ in the source tree
import fp8_cache  # noqa: E402  (after the line above)
import mla_model  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ABSORBED_MAX_TOKENS = 4096
PREPARE_WORKERS = 2  # mlasim processes running ahead of the float64 forward passes


@dataclass(frozen=True)
class Bound:
    """|r - o| <= rel·|o| + floor, floor = abs + row_scale · max|o| over the row."""
    rel: float
    abs: float = 0.0
    row_scale: float = 0.0

    def describe(self) -> str:
        parts = [f"rel {self.rel:.3g}"] + ([f"abs {self.abs:g}"] if self.abs else []) + (
            [f"{self.row_scale:g}·max|row|"] if self.row_scale else [])
        return ", ".join(parts)


GOLDEN_BOUND = Bound(rel=2.0 ** -24, row_scale=2e-12)
FORMS_BOUND = Bound(rel=1e-12, row_scale=1e-12)
RUN_BOUND = Bound(rel=1e-3, abs=1e-4)
FP8_RUN_BOUND = Bound(rel=1e-2, abs=1e-2)


class BadInput(Exception):
    """A missing or malformed input: exit 2."""


@dataclass(frozen=True)
class Row:
    step: int
    id: str
    position: int

    def __str__(self) -> str:
        return f"step {self.step} id {self.id} position {self.position}"


@dataclass
class Logits:
    values: np.ndarray  # [rows, vocab]
    rows: list[Row]


@dataclass
class Comparison:
    error: float        # the largest reported error
    row: int            # where it is
    col: int
    passed: bool


@dataclass
class RunRecord:
    name: str
    tokens: dict[str, list[int]]               # request id -> token_ids (prompt + outputs)
    scheduled: dict[int, dict[str, tuple]]     # step -> id -> (q, nct)
    drafts: dict[int, dict[str, list[int]]]    # step -> id -> draft tokens verified that step
    paths: dict[int, dict[str, str]]           # step -> id -> "mqa" | "mha", the form the step ran


# ---- files ----------------------------------------------------------------------------------

def fnv1a64(data: bytes) -> str:
    """FNV-1a 64 as 16 hex digits: logits_index.json's logits_npy_fnv1a64."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def read_json(path: Path, what: str):
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise BadInput(f"{path}: cannot read {what}: {e.strerror}") from e
    except ValueError as e:
        raise BadInput(f"{path}: {what} is not JSON: {e}") from e


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only memory map (F32 or F64)."""
    try:
        with path.open("rb") as f:
            header_len = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(header_len))
        size = path.stat().st_size
        return {name: tensor_map(path, name, info, 8 + header_len, size)
                for name, info in header.items() if name != "__metadata__"}
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as e:
        raise BadInput(f"{path}: not a safetensors file as `mlasim export` writes it: {e}") from e


def tensor_map(path: Path, name: str, info: dict, data_start: int, size: int) -> np.ndarray:
    dtype = {"F32": "<f4", "F64": "<f8"}.get(info["dtype"])
    shape = tuple(int(d) for d in info["shape"])
    begin, end = (int(o) for o in info["data_offsets"])
    if dtype is None:
        raise ValueError(f"{name}: dtype {info['dtype']} (this oracle reads F32 and F64)")
    if end - begin != int(np.prod(shape)) * np.dtype(dtype).itemsize or data_start + end > size:
        raise ValueError(f"{name}: data_offsets {[begin, end]} do not fit shape {list(shape)}")
    return np.memmap(path, dtype=dtype, mode="r", offset=data_start + begin, shape=shape)


def read_logits(folder: Path) -> Logits:
    """logits.npy (float32 [rows, vocab]) and logits_index.json, checked against each other."""
    npy_path, index_path = folder / "logits.npy", folder / "logits_index.json"
    try:
        data = npy_path.read_bytes()
        values = np.load(io.BytesIO(data), allow_pickle=False)
    except OSError as e:
        raise BadInput(f"{npy_path}: cannot read: {e.strerror}") from e
    except ValueError as e:
        raise BadInput(f"{npy_path}: not a .npy file: {e}") from e
    if values.dtype != np.dtype("<f4") or values.ndim != 2:
        raise BadInput(f"{npy_path}: expected a 2-D float32 array, found {values.dtype} {list(values.shape)}")
    index = read_json(index_path, "the logits index")
    if not isinstance(index, dict) or index.get("format") != "mlasim-logits-index" or index.get("version") != 1:
        raise BadInput(f"{index_path}: expected format mlasim-logits-index, version 1")
    if index.get("vocab_size") != values.shape[1]:
        raise BadInput(f"{index_path}: vocab_size {index.get('vocab_size')}, logits.npy has {values.shape[1]} columns")
    if index.get("logits_npy_fnv1a64") != (digest := fnv1a64(data)):
        raise BadInput(f"{index_path}: logits_npy_fnv1a64 {index.get('logits_npy_fnv1a64')} is not the hash of "
                       f"logits.npy ({digest}): the two files come from different writes")
    try:
        rows = [Row(int(r["step"]), str(r["id"]), int(r["position"])) for r in index["rows"]]
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"{index_path}: rows need step, id and position: {e}") from e
    if len(rows) != values.shape[0]:
        raise BadInput(f"{index_path}: lists {len(rows)} rows, logits.npy has {values.shape[0]}")
    return Logits(values.astype(np.float64), rows)


def parse_run(path: Path) -> RunRecord:
    """The parts of `mlasim run --json` the oracle needs."""
    doc = read_json(path, "the run record")
    try:
        if doc["format"] != "mlasim-run" or doc["version"] != 1:
            raise BadInput(f"{path}: expected format mlasim-run, version 1")
        scheduled = {s["step"]: {r["id"]: (r["q"], r["nct"]) for r in s["rows"]} for s in doc["steps"]}
        drafts = {s["step"]: s["scheduled_spec_decode_tokens"] for s in doc["steps"]}
        paths = {s["step"]: {r["id"]: r["path"] for r in s["rows"]} for s in doc["steps"]}
        tokens = {r["id"]: r["token_ids"] for r in doc["requests"]}
        return RunRecord(doc["scenario"], tokens, scheduled, drafts, paths)
    except (KeyError, TypeError) as e:
        raise BadInput(f"{path}: the run record lacks {e}") from e


KV_CACHE_LINE = re.compile(r"^  kv_cache: \{format: (fp8|fp8_ds_mla), backend: ([A-Z0-9_]+), writer_input: (bf16|float32)\}$")


def golden_cache_format(golden: Path) -> fp8_cache.CacheFormat | None:
    """The fp8 KV cache a golden's meta.yaml names under reference (None: an unquantized cache)."""
    meta = golden / "meta.yaml"
    try:
        lines = meta.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{meta}: cannot read it: {e}") from e
    for line in lines:
        if line.startswith("  kv_cache:"):
            m = KV_CACHE_LINE.match(line)
            if not m:
                raise BadInput(f"{meta}: reference.kv_cache: expected {{format: fp8|fp8_ds_mla, backend: NAME, "
                               f"writer_input: bf16|float32}}, found {line.strip()!r}")
            return fp8_cache.CacheFormat(m.group(1), m.group(2), m.group(3) == "bf16")
    return None


# ---- mlasim ---------------------------------------------------------------------------------

def mlasim(binary: Path, args: list[str]) -> None:
    """Run mlasim; exit 0 or 1 (an expect: block that does not hold) is fine, anything else is bad input."""
    try:
        proc = subprocess.run([str(binary)] + args, capture_output=True, text=True)
    except OSError as e:
        raise BadInput(f"cannot run {binary}: {e.strerror}") from e
    if proc.returncode not in (0, 1):
        raise BadInput(f"`mlasim {' '.join(args)}` exited {proc.returncode}:\n{proc.stderr.strip()}")


def load_model(folder: Path, name: str) -> mla_model.Model:
    """The model `mlasim export` wrote to folder."""
    try:
        cfg = mla_model.config_from_hf(read_json(folder / "config.json", "the exported config"))
        return mla_model.Model(cfg, read_safetensors(folder / "model.safetensors"))
    except mla_model.ModelError as e:
        raise BadInput(f"{name}: mlasim export: {e}") from e


def dry_run(binary: Path, scenario: Path, folder: Path) -> RunRecord:
    mlasim(binary, ["run", str(scenario), "--dry-run", "--table", "none", "--json", str(folder / "run.json")])
    return parse_run(folder / "run.json")


def fp32_run(binary: Path, scenario: Path, faults: list[str], folder: Path) -> tuple[RunRecord, Logits]:
    """mlasim's float32 CPU backend on the scenario; no golden comparison (an empty golden folder)."""
    (folder / "no-goldens").mkdir(parents=True)
    args = ["run", str(scenario), "--device", "cpu", "--set", "model.dtype=fp32", "--table", "none",
            "--golden-dir", str(folder / "no-goldens"), "--logits-dir", str(folder / "logits"),
            "--json", str(folder / "run.json")]
    for fault in faults:
        args += ["--inject", fault]
    mlasim(binary, args)
    return parse_run(folder / "run.json"), read_logits(folder / "logits")


# ---- rows and forward passes ----------------------------------------------------------------

def row_inputs(run: RunRecord, row: Row) -> list[int]:
    """The tokens at positions 0..row.position as the row's step fed them: computed tokens, then the
    step's inputs (the request's next tokens, then its drafts; placeholder -1 is token 0)."""
    scheduled = run.scheduled.get(row.step, {}).get(row.id)
    if scheduled is None or row.id not in run.tokens:
        raise BadInput(f"{run.name}: logits row ({row}) names a request the run did not schedule in that step")
    q, nct = scheduled
    drafts = [max(t, 0) for t in run.drafts[row.step].get(row.id, [])]
    known = run.tokens[row.id]
    real = q - len(drafts)
    if not nct <= row.position < nct + q or real < 0 or nct + real > len(known):
        raise BadInput(f"{run.name}: logits row ({row}) is outside the step's tokens (nct {nct}, q {q})")
    inputs = known[:nct + real] + drafts
    return inputs[:row.position + 1]


def plan_passes(sequences: list[list[int]]) -> list[tuple[list[int], list[int]]]:
    """Forward passes (tokens, row indices): each row joins a pass whose tokens start with its own."""
    passes: list[tuple[list[int], list[int]]] = []
    for i in sorted(range(len(sequences)), key=lambda i: -len(sequences[i])):
        seq = sequences[i]
        for tokens, members in passes:
            if tokens[:len(seq)] == seq:
                members.append(i)
                break
        else:
            passes.append((seq, [i]))
    return passes


def pass_hidden(model: mla_model.Model, tokens: list[int], positions: np.ndarray,
                absorbed_max: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The final hidden states at `positions` in both forms, and whether the absorbed form ran in
    every layer (else in the last one only, on the MHA form's earlier layers)."""
    cfg = model.cfg
    if max(tokens) >= cfg.vocab_size or min(tokens) < 0:
        raise BadInput(f"a token id is outside the vocabulary of {cfg.vocab_size}")
    if cfg.index_topk is not None and not cfg.index_n_heads and len(tokens) > cfg.index_topk:
        raise BadInput(f"a sequence of {len(tokens)} tokens exceeds index_topk {cfg.index_topk}: sparse MLA's "
                       "indexer is not in docs/spec/mla.md, so the oracle checks only dense-equivalent runs")
    ids = np.asarray(tokens)
    unique = np.unique(positions)
    h_mha = mla_model.hidden_before_last_layer(model, ids, "mha")
    full = len(tokens) <= absorbed_max
    h_absorbed = mla_model.hidden_before_last_layer(model, ids, "absorbed") if full else h_mha
    at = np.searchsorted(unique, positions)
    mha = mla_model.final_hidden(model, h_mha, unique, "mha")[at]
    absorbed = mla_model.final_hidden(model, h_absorbed, unique, "absorbed")[at]
    return mha, absorbed, full


@dataclass
class OracleLogits:
    mha: np.ndarray
    absorbed: np.ndarray
    partial_absorbed_rows: int  # rows whose absorbed form ran in the last layer only


def oracle(model: mla_model.Model, run: RunRecord, rows: list[Row], absorbed_max: int) -> OracleLogits:
    """Both forms' logits at every row, one forward pass per distinct input sequence."""
    sequences = [row_inputs(run, row) for row in rows]
    hidden = np.empty((2, len(rows), model.cfg.hidden_size))  # [mha, absorbed]
    partial = 0
    for tokens, members in plan_passes(sequences):
        positions = np.array([rows[i].position for i in members])
        hidden[0, members], hidden[1, members], full = pass_hidden(model, tokens, positions, absorbed_max)
        partial += 0 if full else len(members)
    logits = mla_model.lm_head(model, hidden.reshape(2 * len(rows), -1)).reshape(2, len(rows), -1)
    return OracleLogits(logits[0], logits[1], partial)


# ---- comparison -----------------------------------------------------------------------------

def compare(actual: np.ndarray, oracle_values: np.ndarray, bound: Bound) -> Comparison:
    floor = bound.abs + bound.row_scale * np.max(np.abs(oracle_values), axis=1, keepdims=True)
    error = np.abs(actual - oracle_values) / (np.abs(oracle_values) + floor / bound.rel)
    error = np.where(np.isnan(error), np.inf, error)
    row, col = np.unravel_index(int(np.argmax(error)), error.shape)
    worst = float(error[row, col])
    return Comparison(worst, int(row), int(col), worst <= bound.rel)


def report_failure(name: str, what: str, rows: list[Row], cmp: Comparison, bound: Bound,
                   actual: np.ndarray, expected: np.ndarray) -> None:
    r, c = cmp.row, cmp.col
    print(f"FAIL {name}: {what}: max rel {cmp.error:.1e} > {bound.rel:.1e} ({bound.describe()}) at "
          f"{rows[r]} token {c}: {actual[r, c]:.9g} against {expected[r, c]:.9g}")


# ---- scenarios ------------------------------------------------------------------------------

@dataclass
class Options:
    mlasim: Path
    golden_dir: Path
    faults: list[str]
    against_run: bool
    absorbed_max: int


@dataclass
class Prepared:
    """mlasim's outputs for one scenario: the schedule, the reference logits and the exported model."""
    run: RunRecord
    reference: Logits
    what: str          # names the reference in messages
    bound: Bound
    model_dir: Path
    cache: fp8_cache.CacheFormat | None  # an fp8 KV cache: the steps are replayed in order


@dataclass
class Result:
    rows: int
    error: float          # the main comparison's largest error
    forms_error: float
    partial_absorbed_rows: int
    passed: bool


def prepare(scenario: Path, opts: Options, require_golden: bool, folder: Path) -> Prepared | None:
    """Run mlasim for one scenario; None when it has no logits golden and none is required."""
    folder.mkdir()
    run = dry_run(opts.mlasim, scenario, folder)
    golden = opts.golden_dir / run.name
    if not (golden / "logits.npy").exists():
        if require_golden:
            raise BadInput(f"{scenario}: no logits golden {golden}/logits.npy")
        return None
    cache = golden_cache_format(golden)
    if opts.against_run:
        run, reference = fp32_run(opts.mlasim, scenario, opts.faults, folder / "fp32")
        what = "mlasim fp32 run" + "".join(f" --inject {f}" for f in opts.faults)
        bound = FP8_RUN_BOUND if cache else RUN_BOUND
        if cache:  # the run sets model.dtype fp32: the cache writer's input is float32
            cache = dataclasses.replace(cache, writer_bf16=False)
    else:
        reference, what, bound = read_logits(golden), f"golden {golden}", GOLDEN_BOUND
    mlasim(opts.mlasim, ["export", str(scenario), "-o", str(folder / "model")])
    return Prepared(run, reference, what, bound, folder / "model", cache)


def verify(p: Prepared, absorbed_max: int) -> Result:
    """The oracle's logits for the reference's rows, compared; one line printed per comparison."""
    name, rows = p.run.name, p.reference.rows
    model = load_model(p.model_dir, name)
    if p.reference.values.shape[1] != model.cfg.vocab_size:
        raise BadInput(f"{name}: {p.what} has {p.reference.values.shape[1]} columns, the vocabulary is "
                       f"{model.cfg.vocab_size}")
    if p.cache:
        return verify_fp8(p, model)
    ours = oracle(model, p.run, rows, absorbed_max)
    main = compare(p.reference.values, ours.mha, p.bound)
    forms = compare(ours.absorbed, ours.mha, FORMS_BOUND)
    if not main.passed:
        report_failure(name, f"{p.what} vs the oracle's MHA form", rows, main, p.bound, p.reference.values, ours.mha)
    if not forms.passed:
        report_failure(name, "the oracle's absorbed form vs its MHA form", rows, forms, FORMS_BOUND, ours.absorbed,
                       ours.mha)
    if main.passed and forms.passed:
        print(f"ok   {name}: {len(rows)} rows, max rel {main.error:.1e} (absorbed vs MHA form {forms.error:.1e})",
              flush=True)
    return Result(len(rows), main.error, forms.error, ours.partial_absorbed_rows, main.passed and forms.passed)


def verify_fp8(p: Prepared, model: mla_model.Model) -> Result:
    """An fp8 KV cache: every step replayed in the form it ran (fp8_cache.py); one comparison."""
    name, rows = p.run.name, p.reference.rows
    steps = {step: {rid: (q, nct, p.run.paths[step][rid]) for rid, (q, nct) in ids.items()}
             for step, ids in p.run.scheduled.items()}
    try:
        ours = fp8_cache.replay_logits(model, p.cache, p.run.tokens, steps, p.run.drafts, rows)
    except fp8_cache.Unsupported as e:
        raise BadInput(f"{name}: the fp8 cache replay does not cover {e}") from e
    main = compare(p.reference.values, ours, p.bound)
    what = f"{p.what} vs the oracle's {p.cache.format} cache replay ({p.cache.backend})"
    if not main.passed:
        report_failure(name, what, rows, main, p.bound, p.reference.values, ours)
    else:
        print(f"ok   {name}: {len(rows)} rows, max rel {main.error:.1e} ({p.cache.format} cache, each step in "
              f"the form it ran)", flush=True)
    return Result(len(rows), main.error, 0.0, 0, main.passed)


def check_all(files: list[tuple[Path, bool]], opts: Options) -> list[Result]:
    """Every scenario in order; mlasim runs for the next ones (PREPARE_WORKERS at a time) meanwhile."""
    results = []
    with tempfile.TemporaryDirectory(prefix="mlasim-oracle-") as tmp:
        pool = ThreadPoolExecutor(max_workers=PREPARE_WORKERS)
        try:
            futures = [pool.submit(prepare, f, opts, required, Path(tmp) / str(i))
                       for i, (f, required) in enumerate(files)]
            for future in futures:
                prepared = future.result()
                if prepared:
                    results.append(verify(prepared, opts.absorbed_max))
                    shutil.rmtree(prepared.model_dir)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    return results


def scenario_files(paths: list[str]) -> list[tuple[Path, bool]]:
    """(scenario, golden required): files as given, directories searched for *.yaml."""
    out = []
    for p in map(Path, paths or [REPO / "scenarios"]):
        if p.is_dir():
            out += [(f, False) for f in sorted(p.rglob("*.yaml"))]
        elif p.is_file():
            out.append((p, True))
        else:
            raise BadInput(f"{p}: no such scenario file or directory")
    return out


def parse_args(argv: list[str]) -> tuple[Options, list[str]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO|DIR",
                    help="scenario files or folders (default: scenarios/ of the repository)")
    ap.add_argument("--mlasim", type=Path, default=REPO / "build/tools/mlasim/mlasim")
    ap.add_argument("--golden-dir", type=Path, default=REPO / "golden", help="the folder of <name>/logits.npy")
    ap.add_argument("--against-run", action="store_true",
                    help="compare with mlasim's own float32 CPU logits instead of the goldens")
    ap.add_argument("--inject", action="append", default=[], metavar="FAULT",
                    help="inject FAULT into that run (implies --against-run; repeatable)")
    ap.add_argument("--absorbed-max-tokens", type=int, default=ABSORBED_MAX_TOKENS,
                    help="longest sequence run in the absorbed form in every layer (default %(default)s)")
    a = ap.parse_args(argv)
    opts = Options(a.mlasim, a.golden_dir, a.inject, a.against_run or bool(a.inject), a.absorbed_max_tokens)
    return opts, a.scenarios


def main(argv: list[str]) -> int:
    opts, paths = parse_args(argv)
    try:
        if not opts.mlasim.is_file():
            raise BadInput(f"{opts.mlasim}: no mlasim binary (build it, or pass --mlasim PATH)")
        results = check_all(scenario_files(paths), opts)
    except (BadInput, OSError) as e:
        print(f"check_goldens: bad input: {e}", file=sys.stderr)
        return 2
    if not results:
        print("check_goldens: bad input: no scenario with a logits golden", file=sys.stderr)
        return 2
    rows = sum(r.rows for r in results)
    partial = sum(r.partial_absorbed_rows for r in results)
    print(f"absorbed vs MHA form: max rel {max(r.forms_error for r in results):.1e} ({FORMS_BOUND.describe()}); "
          f"{rows - partial} rows with the absorbed form in every layer, {partial} in the last layer only "
          f"(sequences over {opts.absorbed_max} tokens)")
    print(f"{len(results)} scenarios, {rows} rows, max rel {max(r.error for r in results):.1e}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
