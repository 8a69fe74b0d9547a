"""Run a conformance script under the venv that holds vLLM 0.33.0 (and transformers).

Each script calls reexec_in_venv first: when its modules do not import under the current Python,
it re-executes itself with the venv's, once (an environment variable stops a loop), else prints
how to set the venv up and exits 2."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

DEFAULT_VENV = Path.home() / "vllm-venv"


def reexec(py: Path) -> None:
    """Runs this command again under `py`: the same module (`python -m mlasim.conformance...`), or
    the same script when one was run by its path, and arguments, with this mlasim package importable
    there (a checkout's python/ or the installed one)."""
    import __main__
    import mlasim

    package_parent = str(Path(mlasim.__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    spec = getattr(__main__, "__spec__", None)
    script = getattr(__main__, "__file__", None)
    if spec is None and script:  # a script run by path (tools/bench/vllm_side_by_side.py): the same file
        os.execv(str(py), [str(py), str(Path(script).resolve()), *sys.argv[1:]])
    module = spec.name if spec is not None else "mlasim.conformance.vllm_conformance"
    if module.endswith(".__main__"):
        module = module[: -len(".__main__")]
    os.execv(str(py), [str(py), "-m", module, *sys.argv[1:]])


def reexec_in_venv(venv: Path, modules: tuple[str, ...], not_importable: str) -> None:
    """`not_importable` is the message's tail after "<modules> not importable here (<python>); "."""
    try:
        for name in modules:
            importlib.import_module(name)
        return
    except ImportError:
        pass
    py = venv / "bin" / "python"
    if py.exists() and Path(sys.prefix).resolve() != venv.resolve() and not os.environ.get("MLASIM_CONFORMANCE_REEXEC"):
        os.environ["MLASIM_CONFORMANCE_REEXEC"] = "1"
        reexec(py)
    print(f"{'/'.join(modules)} {'is' if len(modules) == 1 else 'are'} not importable here ({sys.executable}); "
          f"{not_importable}", file=sys.stderr)
    sys.exit(2)
