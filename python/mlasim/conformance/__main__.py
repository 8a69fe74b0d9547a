"""`python -m mlasim.conformance ARGS`: vllm_conformance (vLLM's scheduler against mlasim's)."""
import sys

from .vllm_conformance import main

sys.exit(main(sys.argv[1:]))
