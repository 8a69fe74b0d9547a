"""The Python package as a user meets it after `pip install`: the command on PATH, `python -m
mlasim`, and the typed API's values (exact, from the command's own JSON) and errors."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mlasim

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "scenarios" / "seed"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_the_command_is_on_the_environments_path():
    exe = mlasim.binary()
    assert exe.name == "mlasim" and os.access(exe, os.X_OK)
    if "MLASIM_BINARY" not in os.environ:  # installed: in the venv's bin/, which is on its PATH
        assert exe.parent == Path(sys.executable).parent
        assert shutil.which("mlasim", path=str(Path(sys.executable).parent)) == str(exe)


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "mlasim", "version"], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.startswith("mlasim 0.1.0")
    bad = subprocess.run([sys.executable, "-m", "mlasim", "route", "--batch", "1:0"], capture_output=True, text=True)
    assert bad.returncode == 2


def test_run_reports_the_misrouting_and_strict_does_not():
    r = mlasim.run(SEED / "lone_one_token_prompt.yaml")
    assert r.scenario == "lone_one_token_prompt"
    assert [s.step for s in r.steps] == [0, 1, 2]
    first = r.steps[0]
    assert first.split == mlasim.Split(1, 1, 0, 0, 1, 0)
    assert first.rows == [mlasim.Row("hello", 1, 0, 1, "prefill", "mqa", True, first.rows[0].reason)]
    assert [(row.id, s.step) for s in r.steps for row in s.rows if row.fresh_on_decode_path] == [("hello", 0)]
    assert r.requests[0].status == "finished_length_capped" and r.requests[0].num_prompt_tokens == 1
    strict = mlasim.run(SEED / "lone_one_token_prompt.yaml", sets={"engine.profile": "strict"})
    assert strict.steps[0].split.num_mha_tokens == 1 and strict.fresh_on_decode_path() == []


def test_route_a_batch():
    # FlashMLA (T = 128, uniform query lengths): the leading one-token prompt is a decode of the
    # split, on the decode path; the 3-token prompt after it a prefill.
    r = mlasim.route([(1, 0, 1), (3, 0, 3)], backend="flashmla")
    assert (r.profile, r.backend, r.decode_threshold) == ("vllm-0.33", "flashmla", 128)
    assert [(row.path, row.fresh_on_decode_path) for row in r.rows] == [("mqa", True), ("mha", False)]
    assert r.split == mlasim.Split(1, 1, 1, 3, 1, 3)
    assert mlasim.route("1:0:1", backend="flashmla", profile="strict").split.num_mha_tokens == 1


def test_deploy_a_config():
    d = mlasim.deploy(ROOT / "scenarios" / "hf_configs" / "deepseek-v3.json", gpu="h200", tp=8)
    assert (d.architecture, d.use_mla, d.sparse, d.backend) == ("DeepseekV3ForCausalLM", True, False, "FLASH_ATTN_MLA")
    assert d.candidates[0] == mlasim.api.Candidate("FLASH_ATTN_MLA", True, [])
    assert (d.block_size, d.reorder_threshold, d.model_runner) == (16, 512, "v2")


def test_check_reports_pass_and_fail(tmp_path):
    r = mlasim.check([SEED / "lone_one_token_prompt.yaml", SEED / "lone_five_token_prompt.yaml"], dry_run=True)
    assert (r.passed, r.failed, r.ok) == (2, 0, True)
    assert [s.name for s in r.scenarios] == ["lone_five_token_prompt", "lone_one_token_prompt"]
    edited = tmp_path / "lone_one_token_prompt.yaml"
    edited.write_text((SEED / "lone_one_token_prompt.yaml").read_text().replace("num_mqa_tokens: 1", "num_mqa_tokens: 2"))
    failed = mlasim.check(edited, dry_run=True)
    assert (failed.passed, failed.failed, failed.scenarios[0].status) == (0, 1, "fail")


def test_releases_cells():
    r = mlasim.releases()
    cell = r.cell("vllm-0.33", "flashmla")
    assert [(p.column, p.path, p.fresh_on_decode_path, p.num_mqa, p.num_mha) for p in cell.probes[:3]] == [
        ("lone 1-token prompt", "decode", True, 1, 0), ("lone 5-token prompt", "decode", True, 5, 0),
        ("1-token prompt behind a decode", "decode", True, 2, 0)]
    with pytest.raises(KeyError):
        r.cell("strict", "flashmla")  # strict is no release


def test_errors_carry_the_exit_code_and_the_place(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: bad\nrequests:\n  - {id: a, prompt_len: 0}\n")
    with pytest.raises(mlasim.MlasimError) as e:
        mlasim.run(bad)
    assert e.value.returncode == 2
    assert e.value.file == str(bad) and e.value.line == 4
    assert "prompt_len" in e.value.message
    with pytest.raises(mlasim.MlasimError) as e:
        mlasim.route("1:0")
    assert e.value.returncode == 2 and e.value.file is None


def test_merge_through_python_dash_m(tmp_path):
    for i in range(3):
        subprocess.run([sys.executable, "-m", "mlasim", "check", "scenarios/seed", "--dry-run", "--shard", f"{i}/3",
                        "--json", str(tmp_path / f"s{i}.json")], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "mlasim", "check", "scenarios/seed", "--dry-run", "--json",
                    str(tmp_path / "all.json")], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "mlasim", "merge"] + [str(tmp_path / f"s{i}.json") for i in range(3)] +
                   ["-o", str(tmp_path / "m.json")], check=True, capture_output=True)
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "all.json").read_bytes()
    assert json.loads((tmp_path / "m.json").read_text())["passed"] == len(list(SEED.glob("*.yaml")))


def test_fuzz_shards_merge_into_one_campaigns_report(tmp_path):
    campaign = [sys.executable, "-m", "mlasim", "fuzz", "--seed", "3", "--runs", "300", "--vary", "all", "--set",
                "engine.profile=vllm-current", "--set", "engine.attention_backend=flashinfer-mla"]
    subprocess.run(campaign + ["--json", str(tmp_path / "all.json")], capture_output=True)
    for i in range(3):
        subprocess.run(campaign + ["--shard", f"{i}/3", "--json", str(tmp_path / f"f{i}.json")], capture_output=True)
    subprocess.run([sys.executable, "-m", "mlasim", "merge"] + [str(tmp_path / f"f{i}.json") for i in range(3)] +
                   ["-o", str(tmp_path / "m.json")], check=True, capture_output=True)
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "all.json").read_bytes()
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["violation"]["property"] == "no_fresh_prefill_on_decode_path"
    assert report["runs"] == report["violation"]["run"] + 1
