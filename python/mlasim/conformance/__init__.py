"""Checks of mlasim against the real engines, run in a venv where they are installed.

  python -m mlasim.conformance [--random N] ...   vLLM's scheduler against mlasim's
                                                  (mlasim.conformance.vllm_conformance)
  python -m mlasim.conformance.vllm_selection     vLLM's backend selection against `mlasim deploy`
  python -m mlasim.conformance.transformers_logits  transformers' model code against `mlasim export`

Each finds the mlasim command itself (MLASIM_BINARY, a checkout's build, or the one this package
installed) and re-runs itself under --venv when vLLM is not importable where it was started.
"""
