"""Per configuration of a ``tune_gpu_kernels.py`` scan, every variant over the one with no knobs given (the default),
best first (no GPU needed).

    python benchmarks/summarize_knob_scan.py DIR/tuning.csv > DIR/summary.md
"""
from __future__ import annotations

import csv
import sys
from collections import defaultdict


def by_configuration(path: str):
    """(stencil, dtype, depth), that configuration's default row and all its rows, for every configuration of the
    scan that timed its default (no knobs given)."""
    by = defaultdict(list)
    for r in csv.DictReader(open(path, newline="")):
        by[(r["stencil"], r["dtype"], int(r["fuse"]))].append(r)
    for key, rs in by.items():
        base = next((r for r in rs if r["options"] in ("{}", "")), None)
        if base is not None:
            yield key, base, rs


def main(path: str) -> int:
    print(f"# Variants over each configuration's default ({path})\n")
    for key, base, rs in by_configuration(path):
        b = float(base["gstencils"])
        print(f"## {key[0]} {key[1]} t = {key[2]}: default {b:.1f} GStencils/s ({base['kernel']})\n")
        print("| ratio | GStencils/s | correct | knobs |\n|---|---|---|---|")
        for r in sorted(rs, key=lambda r: -float(r["gstencils"])):
            print(f"| {float(r['gstencils']) / b:.3f} | {float(r['gstencils']):.1f} | {r['correct']} | {r['options']} |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
