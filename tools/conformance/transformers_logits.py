#!/usr/bin/env python3
"""Runs mlasim.conformance.transformers_logits (python/mlasim/conformance/transformers_logits.py) from this checkout:
the same as `python -m mlasim.conformance.transformers_logits` where the mlasim package is installed."""
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
runpy.run_module("mlasim.conformance.transformers_logits", run_name="__main__", alter_sys=True)
