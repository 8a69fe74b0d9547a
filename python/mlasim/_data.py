"""Where mlasim's data is: a checkout's root (scenarios/, the build folders), or, installed from a
wheel, the package's data folder, which holds scenarios/."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

_PACKAGE = Path(__file__).resolve().parent


def checkout_root() -> "Path | None":
    """The checkout this package is imported from (python/mlasim/ in it), or None when installed."""
    root = _PACKAGE.parents[1]
    return root if (root / "CMakeLists.txt").is_file() and (root / "scenarios").is_dir() else None


def data_root() -> Path:
    """The folder holding scenarios/: the checkout's root, or the installed package's data."""
    return checkout_root() or _PACKAGE / "data"


def default_binaries() -> List[Path]:
    """The mlasim commands to try, in order: MLASIM_BINARY, a checkout's builds, the installed one."""
    out: List[Path] = []
    if os.environ.get("MLASIM_BINARY"):
        out.append(Path(os.environ["MLASIM_BINARY"]))
    root = checkout_root()
    if root:
        out += [root / "build-cpu/tools/mlasim/mlasim", root / "build/tools/mlasim/mlasim"]
    try:
        from mlasim._binary import binary
        out.append(binary())
    except FileNotFoundError:
        pass
    return out


def default_binary() -> Path:
    """The first of default_binaries() that exists (else the first, for the error to name)."""
    candidates = default_binaries() or [Path("mlasim")]
    return next((p for p in candidates if p.is_file() and os.access(p, os.X_OK)), candidates[0])
