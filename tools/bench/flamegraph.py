#!/usr/bin/env python3
"""A flame graph of `perf script` output, as an SVG, and the widest frames as text.

    perf record -F 500 --call-graph dwarf,16384 -o perf.data mlasim run replay.yaml --dry-run --table none
    perf script -i perf.data | python3 tools/bench/flamegraph.py --root mlasim::Engine::run_to_end \
        --svg flame.svg --top 25 --title "..."

Stacks are folded (root first, inlined frames kept, offsets and DSOs dropped); each frame is a box as
wide as its share of the samples, its callees stacked above it. --top prints the frames with the
most inclusive samples (each counted once per sample), the table RESULTS.md quotes."""
from __future__ import annotations

import argparse
import collections
import html
import re
import sys

ROW = 16
WIDTH = 1200


def frames_of(lines: list[str]) -> list[str]:
    """The sample's frames, root first: `addr symbol+0xoff (dso)` lines, leaf first in perf script."""
    out = []
    for line in lines:
        parts = line.strip().split(" ", 1)
        if len(parts) < 2:
            continue
        sym = re.sub(r"\+0x[0-9a-f]+$", "", re.sub(r" \([^()]*\)$", "", parts[1]).strip())
        sym = re.sub(r"\(anonymous namespace\)::", "", sym.replace(" (inlined)", ""))
        out.append(sym or "[unknown]")
    return out[::-1]


def read_stacks(stream) -> collections.Counter:
    stacks: collections.Counter = collections.Counter()
    sample: list[str] = []
    for line in stream:
        if not line.strip():
            if sample:
                stacks[tuple(frames_of(sample))] += 1
            sample = []
        elif line[0] in " \t":
            sample.append(line)
    if sample:
        stacks[tuple(frames_of(sample))] += 1
    return stacks


def build_tree(stacks: collections.Counter) -> dict:
    root: dict = {"n": 0, "kids": {}}
    for stack, n in stacks.items():
        node = root
        node["n"] += n
        for f in stack:
            node = node["kids"].setdefault(f, {"n": 0, "kids": {}})
            node["n"] += n
    return root


def colour(name: str) -> str:
    h = sum(ord(c) for c in name)
    return f"rgb({205 + h % 50},{80 + h * 7 % 120},{40 + h * 13 % 50})"


def svg(root: dict, title: str) -> str:
    boxes = []
    depth_max = 0

    def walk(node: dict, name: str, x: float, depth: int) -> None:
        nonlocal depth_max
        w = node["n"] / root["n"] * WIDTH
        if w < 0.3:
            return
        depth_max = max(depth_max, depth)
        boxes.append((x, depth, w, name, node["n"]))
        cx = x
        for kid, k in sorted(node["kids"].items()):
            walk(k, kid, cx, depth + 1)
            cx += k["n"] / root["n"] * WIDTH

    walk(root, "all", 0.0, 0)
    height = (depth_max + 1) * ROW + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" font-size="11">',
           f'<text x="4" y="16" font-size="14">{html.escape(title)}</text>']
    for x, depth, w, name, n in boxes:
        y = height - (depth + 1) * ROW
        pct = 100.0 * n / root["n"]
        label = html.escape(name)
        out.append(f'<g><title>{label} ({n} samples, {pct:.2f}%)</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" fill="{colour(name)}"/>')
        chars = int(w / 7)
        if chars >= 4:
            text = name if len(name) <= chars else name[: chars - 2] + ".."
            out.append(f'<text x="{x + 2:.2f}" y="{y + ROW - 4}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--svg", help="write the flame graph here")
    ap.add_argument("--top", type=int, default=0, help="print the N frames with the most inclusive samples")
    ap.add_argument("--title", default="mlasim", help="the graph's title")
    ap.add_argument("--root", help="start every stack at this frame (e.g. mlasim::Engine::run_to_end); samples "
                    "outside it are kept as one frame, 'outside ROOT'")
    args = ap.parse_args()
    stacks = read_stacks(sys.stdin)
    if args.root:
        rooted: collections.Counter = collections.Counter()
        for stack, n in stacks.items():
            rooted[stack[stack.index(args.root):] if args.root in stack else (f"outside {args.root}",)] += n
        stacks = rooted
    total = sum(stacks.values())
    if total == 0:
        print("no samples with call stacks in the input (perf record --call-graph dwarf)", file=sys.stderr)
        return 2
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(build_tree(stacks), f"{args.title} ({total} samples)"))
    if args.top:
        inclusive: collections.Counter = collections.Counter()
        own: collections.Counter = collections.Counter()
        for stack, n in stacks.items():
            for f in set(stack):
                inclusive[f] += n
            if stack:
                own[stack[-1]] += n
        print(f"| frame | inclusive | self |\n|---|---|---|")
        for f, n in inclusive.most_common(args.top):
            print(f"| `{f[:90]}` | {100.0 * n / total:.1f}% | {100.0 * own[f] / total:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
