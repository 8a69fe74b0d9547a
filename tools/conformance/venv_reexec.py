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
        os.execv(str(py), [str(py), *sys.argv])
    print(f"{'/'.join(modules)} {'is' if len(modules) == 1 else 'are'} not importable here ({sys.executable}); "
          f"{not_importable}", file=sys.stderr)
    sys.exit(2)
