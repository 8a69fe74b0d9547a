"""mlasim.conformance.venv_reexec: a command whose modules do not import re-executes itself once
under the venv's Python, as the same script when run by its path (tools/bench/vllm_side_by_side.py)
and as the same module when run with -m, then names what is missing and exits 2."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mlasim.conformance.venv_reexec import reexec_in_venv
    print("started", sys.argv[1:], flush=True)
    reexec_in_venv(Path(sys.argv[1]), ("no_such_module_for_this_test",), "install it")
    """
)


def _fake_venv(tmp_path: Path) -> Path:
    # A "venv" whose python is this interpreter: the module is as missing there as here.
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    return venv


def _env() -> dict:
    env = dict(os.environ)
    env.pop("MLASIM_CONFORMANCE_REEXEC", None)
    return env


def test_a_script_run_by_its_path_runs_again_as_that_script(tmp_path):
    venv = _fake_venv(tmp_path)
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(venv)], capture_output=True, text=True, env=_env())
    assert proc.returncode == 2
    # Once here, once under the venv's python (the same file, the same arguments), then the message.
    assert proc.stdout.splitlines() == [f"started ['{venv}']", f"started ['{venv}']"]
    assert "no_such_module_for_this_test is not importable here" in proc.stderr
    assert proc.stderr.rstrip().endswith("install it")


def test_a_module_run_with_dash_m_runs_again_as_that_module(tmp_path):
    venv = _fake_venv(tmp_path)
    package = tmp_path / "probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(SCRIPT)
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-m", "probe_pkg.probe", str(venv)], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == [f"started ['{venv}']", f"started ['{venv}']"]
