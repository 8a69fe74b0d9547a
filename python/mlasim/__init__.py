"""mlasim: vLLM's V1 scheduler and MLA's prefill/decode routing replayed, from Python.

The functions run the mlasim command this package installed and return its JSON as dataclasses
(mlasim.api); `python -m mlasim ARGS` runs the command itself, `python -m mlasim.conformance`
checks the vLLM installed beside it against mlasim.
"""
from mlasim._binary import binary
from mlasim.api import (CheckReport, Deployment, MlasimError, Releases, Route, Row, Run, Split, check, deploy,
                        releases, route, run)

__all__ = ["binary", "run", "route", "deploy", "check", "releases", "MlasimError", "Run", "Route", "Deployment",
           "CheckReport", "Releases", "Row", "Split"]
__version__ = "0.1.0"
