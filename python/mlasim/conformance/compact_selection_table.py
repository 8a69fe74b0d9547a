#!/usr/bin/env python3
"""Compacts `vllm_selection.py --vllm-only --expect-table FILE`'s table into the form the unit tests
read (tests/data/vllm033_selection*.json): one line per cell with the fields mlasim is held to, and
each cell's candidate list as an index into `candidate_lists` (name and reasons, vLLM's words).

Usage: tools/conformance/compact_selection_table.py RAW.json OUT.json "SOURCE TEXT"
"""
from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    raw_path, out_path, source = argv
    raw = json.load(open(raw_path))
    lists: list[list] = [[]]
    cells = []
    for c in raw:
        cand = [[x["name"], x["reasons"]] for x in c.get("candidates") or []]
        if cand not in lists:
            lists.append(cand)
        cells.append({
            "config": c["config"], "gpu": c["gpu"], "kv": c["kv_cache_dtype_arg"], "tp": c["tp"],
            "block_size_arg": c["block_size_arg"], "k": c["spec_tokens"], "refused": c["refusal"] is not None,
            "backend": c.get("backend"), "block_size": c.get("block_size"), "kernel_block_size": c.get("kernel_block_size"),
            "reorder_threshold": c.get("reorder_threshold"), "query_len_support": c.get("query_len_support"),
            "model_runner": c.get("model_runner"), "kv_cache_dtype": c.get("kv_cache_dtype"), "candidates": lists.index(cand),
        })
        if "sparse_mla_force_mqa" in c:  # tables written since HY-V4's sink backend
            cells[-1]["sparse_mla_force_mqa"] = c["sparse_mla_force_mqa"]
    dump = lambda v: json.dumps(v, separators=(",", ":"))  # noqa: E731
    with open(out_path, "w") as f:
        f.write('{"format":"mlasim-vllm033-selection","version":1,\n"source":' + dump(source) + ',\n"candidate_lists":[\n')
        f.write(",\n".join(dump(x) for x in lists) + '\n],\n"cells":[\n')
        f.write(",\n".join(dump(x) for x in cells) + "\n]}\n")
    print(f"{len(cells)} cells, {len(lists)} candidate lists -> {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
