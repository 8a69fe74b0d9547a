"""Where the mlasim command is: the one this package installed, else one on PATH.

MLASIM_BINARY overrides both (a build folder's tools/mlasim/mlasim, say).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Optional


def _installed() -> Optional[Path]:
    """The command the wheel put in the environment's scripts folder, from the package's record."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        files = metadata.files("mlasim") or []
        dist = metadata.distribution("mlasim")
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == "mlasim" and len(f.parts) > 1 and f.parts[-2] in ("bin", "Scripts"):
            path = Path(dist.locate_file(f)).resolve()
            if os.access(path, os.X_OK):
                return path
    return None


def binary() -> Path:
    """The mlasim executable this package runs.

    >>> binary().name
    'mlasim'
    """
    given = os.environ.get("MLASIM_BINARY")
    if given:
        path = Path(given)
        if not os.access(path, os.X_OK):
            raise FileNotFoundError(f"MLASIM_BINARY={given}: not an executable file")
        return path
    found = _installed() or (Path(shutil.which("mlasim")) if shutil.which("mlasim") else None)
    if found is None:
        raise FileNotFoundError(
            "the mlasim command is not installed: `pip install mlasim` (or `pip install .` in a checkout) "
            "builds it; MLASIM_BINARY=PATH names a built one")
    return found
