#!/usr/bin/env python3
"""Runs mlasim.conformance.compact_selection_table (python/mlasim/conformance/compact_selection_table.py) from this checkout:
the same as `python -m mlasim.conformance.compact_selection_table` where the mlasim package is installed."""
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
runpy.run_module("mlasim.conformance.compact_selection_table", run_name="__main__", alter_sys=True)
