#!/usr/bin/env python3
"""The house in figures, one row per product folder (a room): source files side by side, lines,
functions over 60 lines, and fan-out (the other layers its quoted includes reach; base/formats counts
as base).

  house_figures.py ROOT [--long]   # --long also lists each function over 60 lines

Function lengths come from lizard (`pip install lizard`): first to last line of each definition.
"""
import os
import re
import sys

import lizard

SOURCE = re.compile(r"\.(h|cpp|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
PRODUCT = ("base", "config", "sim", "scenario", "attention", "kit", "engine", "report", "harness",
           "model", "output", "verify", "deploy", "formats", "tools", "emu")
SKIP = ("tools/bench", "tools/conformance", "tools/oracle")
# Subfolders that belong to their parent's layer: an include of one counts as reaching the parent.
LAYER_OF_SUBFOLDER = {"base/formats": "base", "emu/include": "emu"}


def main():
    root = sys.argv[1]
    rooms = {}
    for top in PRODUCT:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "build", "__"))]
            rel = os.path.relpath(dirpath, root)
            if rel.startswith(SKIP):
                continue
            files = sorted(f for f in filenames if SOURCE.search(f))
            if files:
                rooms[rel] = files
    names = sorted(rooms, key=len, reverse=True)

    def room_of(path):
        d = os.path.dirname(path)
        return LAYER_OF_SUBFOLDER.get(d, d) if d in rooms else None

    total = [0, 0, 0]
    longs = []
    print(f"{'room':18} {'files':>5} {'lines':>6} {'fn>60':>5} {'fan-out':>7}  reaches")
    for room in sorted(rooms):
        lines = 0
        reach = set()
        long_fns = 0
        for f in rooms[room]:
            path = os.path.join(root, room, f)
            with open(path, errors="replace") as fh:
                text = fh.read()
            lines += text.count("\n")
            for line in text.splitlines():
                m = INCLUDE.match(line)
                if m:
                    other = room_of(m.group(1))
                    if other and other != LAYER_OF_SUBFOLDER.get(room, room):
                        reach.add(other)
            for fn in lizard.analyze_file.analyze_source_code(path, text).function_list:
                length = fn.end_line - fn.start_line + 1
                if length > 60:
                    long_fns += 1
                    longs.append((length, f"{room}/{f}:{fn.start_line} {fn.name}"))
        total[0] += len(rooms[room])
        total[1] += lines
        total[2] += long_fns
        print(f"{room:18} {len(rooms[room]):5} {lines:6} {long_fns:5} {len(reach):7}  {' '.join(sorted(reach))}")
    print(f"{'product':18} {total[0]:5} {total[1]:6} {total[2]:5}")
    if "--long" in sys.argv:
        for length, where in sorted(longs, reverse=True):
            print(f"{length:4}  {where}")


if __name__ == "__main__":
    main()
