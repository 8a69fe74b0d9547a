#!/usr/bin/env python3
"""Runs mlasim.conformance.json_corpus_check (python/mlasim/conformance/json_corpus_check.py) from this checkout:
the same as `python -m mlasim.conformance.json_corpus_check` where the mlasim package is installed."""
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
runpy.run_module("mlasim.conformance.json_corpus_check", run_name="__main__", alter_sys=True)
