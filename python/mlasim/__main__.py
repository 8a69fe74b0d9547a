"""`python -m mlasim ARGS`: runs the mlasim command with ARGS (its exit code, its output)."""
from __future__ import annotations

import os
import sys

from mlasim._binary import binary


def main() -> None:
    exe = str(binary())
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
