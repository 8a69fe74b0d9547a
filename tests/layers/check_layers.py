#!/usr/bin/env python3
"""The layering of docs/design.md checked on the sources: every quoted include names a file of the
same layer or of one the layer may use, the includes between files form no cycle, and no product
folder holds more than MAX_FILES source files side by side.

  check_layers.py ROOT            # exit 1 naming each include that runs up a layer, each cycle, each crowded folder
  check_layers.py ROOT --report   # also: lines per top-level folder, share of the product's lines
  check_layers.py --self-test     # the checker on a made-up tree with one upward include, one cycle, one crowded folder
"""
import os
import re
import sys

# Top-down: each layer may include itself and the layers listed for it (docs/design.md "Layers").
LAYERS = {
    "tools/mlasim": {"tools/import", "tools/fuzz", "deploy", "harness", "verify", "output", "engine", "kit",
                     "attention/cuda", "attention/cpu", "attention", "model", "scenario", "sim", "config", "base"},
    "tools/fuzz": {"harness", "verify", "output", "engine", "kit", "attention/cpu", "attention", "model", "scenario",
                   "sim", "config", "base"},
    "tools/import": {"scenario", "sim", "config", "base"},
    "deploy": {"engine", "attention/cpu", "attention", "model", "scenario", "sim", "config", "base"},
    "harness": {"verify", "output", "engine", "kit", "attention/cpu", "attention", "model", "scenario", "sim",
                "config", "base"},
    "verify": {"output", "engine", "kit", "attention/cpu", "attention", "model", "scenario", "sim", "config", "base"},
    "output": {"engine", "attention/cpu", "attention", "model", "scenario", "sim", "config", "base"},
    "engine": {"attention/cpu", "attention", "model", "scenario", "sim", "config", "base"},
    "kit/cuda": {"kit", "attention/cuda", "attention", "model", "sim", "config", "base"},
    "kit": {"model", "config", "base"},
    "attention/cuda": {"attention", "model", "sim", "config", "base"},
    "attention/cpu": {"attention", "model", "sim", "config", "base"},
    "attention": {"model", "sim", "config", "base"},
    "model": {"config", "base"},
    "scenario": {"sim", "config", "base"},
    "sim": {"config", "base"},
    "config": {"base"},
    "base": set(),
}
# Programs and tests over the layers: they may include any layer.
TOP = ("tools/bench", "tests", "emu")
# No product folder holds more source files side by side than this.
MAX_FILES = 40
PRODUCT = ("base", "config", "sim", "model", "scenario", "attention", "kit", "engine", "output", "verify", "harness",
           "deploy", "tools", "emu")
SOURCE = re.compile(r"\.(h|cpp|cu|cuh|py)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    for name in sorted(list(LAYERS) + list(TOP), key=len, reverse=True):
        if path == name or path.startswith(name + "/"):
            return name
    return None


def sources(root):
    for folder in PRODUCT + ("tests",):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "build", "__"))]
            for f in filenames:
                if SOURCE.search(f):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        files = {
            "sim/up.h": '#include "engine/engine.h"\n',  # runs up a layer
            "engine/engine.h": '#include "sim/ok.h"\n',
            "sim/ok.h": '#include "base/x.h"\n',
            "base/x.h": '#include "base/y.h"\n',  # x -> y -> x: a cycle
            "base/y.h": '#include "base/x.h"\n',
        }
        files.update({f"config/f{i}.h": "" for i in range(MAX_FILES + 1)})  # one file too many
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        problems, _ = check(root)
    want = ["sim/up.h:1: sim includes engine/engine.h (engine), a layer it may not use",
            f"config: {MAX_FILES + 1} source files side by side, more than {MAX_FILES}",
            "include cycle: base/x.h -> base/y.h -> base/x.h"]
    if problems != want:
        print("self-test failed: got", problems)
        return 1
    print("self-test: the upward include, the crowded folder and the cycle were all found")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    root = sys.argv[1]
    problems, lines = check(root)
    if "--report" in sys.argv:
        product = sum(v for k, v in lines.items() if k in PRODUCT)
        for k in sorted(lines, key=lambda k: -lines[k]):
            share = f"{100.0 * lines[k] / product:5.1f}%" if k in PRODUCT else "  (tests)"
            print(f"{k:10} {lines[k]:7} {share}")
        print(f"{'product':10} {product:7}")
    for p in problems:
        print(p)
    print(f"layers: {len(lines)} folders, {len(problems)} problems")
    return 1 if problems else 0


def check(root):
    problems = []
    graph = {}
    lines = {}
    per_folder = {}
    for path in sorted(sources(root)):
        if not path.startswith(("tests", "tools/bench", "tools/conformance", "tools/oracle")) and not path.endswith(".py"):
            folder = os.path.dirname(path)
            per_folder[folder] = per_folder.get(folder, 0) + 1
        src = layer_of(path)
        text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read().splitlines()
        top = path.split("/")[0]
        lines[top] = lines.get(top, 0) + len(text)
        if path.endswith(".py"):
            continue
        deps = graph.setdefault(path, [])
        for number, line in enumerate(text, 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue
            target = m.group(1)
            if not os.path.exists(os.path.join(root, target)):
                continue  # an emulator header or a generated file
            deps.append(target)
            dst = layer_of(target)
            if src is None or src in TOP or dst == src or dst in LAYERS.get(src, ()):
                continue
            problems.append(f"{path}:{number}: {src} includes {target} ({dst}), a layer it may not use")
    # A room holds at most MAX_FILES source files side by side (docs/design.md).
    for folder, count in sorted(per_folder.items()):
        if count > MAX_FILES:
            problems.append(f"{folder}: {count} source files side by side, more than {MAX_FILES}")
    # Cycles among the files (an include cycle is a cycle of this graph).
    state = {}
    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                problems.append("include cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2
    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return problems, lines


if __name__ == "__main__":
    sys.exit(main())
