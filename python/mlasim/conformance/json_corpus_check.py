#!/usr/bin/env python3
"""Checks tests/data/json_corpus/'s labels against Python's json module, the reader vLLM's
config.json goes through (transformers: open(path, encoding="utf-8"), then json.loads).

  y_*.json  Python reads it (and so does mlasim: tests/base/test_json_document.cpp)
  n_*.json  Python refuses it (a decode error or a JSONDecodeError), as mlasim does
  i_*.json  Python reads it and mlasim refuses it: the differences scenario/hf_config.h documents

Usage: tools/conformance/json_corpus_check.py [CORPUS_DIR]; exit 0 when every label holds.
"""
import json
import pathlib
import sys


from mlasim._data import data_root


def python_reads(path: pathlib.Path) -> bool:
    try:
        json.loads(path.read_bytes().decode("utf-8"))
        return True
    except (UnicodeDecodeError, ValueError):
        return False


def main() -> int:
    root = data_root()  # the corpus is a checkout's (tests/data/json_corpus)
    corpus = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "data" / "json_corpus"
    files = sorted(corpus.glob("*.json"))
    wrong = []
    for f in files:
        want = {"y": True, "n": False, "i": True}.get(f.name[0])
        if want is None:
            wrong.append(f"{f.name}: the name starts with neither y_, n_ nor i_")
        elif python_reads(f) != want:
            wrong.append(f"{f.name}: Python's json {'refuses' if want else 'reads'} it")
    for line in wrong:
        print(line)
    print(f"{len(files) - len(wrong)} of {len(files)} labels agree with Python {sys.version.split()[0]}'s json")
    return 1 if wrong or not files else 0


if __name__ == "__main__":
    sys.exit(main())
