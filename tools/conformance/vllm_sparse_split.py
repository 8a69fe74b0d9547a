#!/usr/bin/env python3
"""Runs mlasim.conformance.vllm_sparse_split (python/mlasim/conformance/vllm_sparse_split.py) from this checkout:
the same as `python -m mlasim.conformance.vllm_sparse_split` where the mlasim package is installed."""
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
runpy.run_module("mlasim.conformance.vllm_sparse_split", run_name="__main__", alter_sys=True)
