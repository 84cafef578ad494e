"""A ``tune_gpu_kernels.py`` scan that ran each configuration with today's kernel files and with those of other
commits (``source`` in its options), alternating: per configuration the median of each side, today over each other,
and the geometric mean per precision (no GPU needed).

    python benchmarks/summarize_source_ab.py DIR/tuning.csv > DIR/summary.md
"""
from __future__ import annotations

import ast
import csv
import math
import statistics
import sys
from collections import defaultdict


def sides(path: str):
    """{(stencil, dtype, depth): {source or 'today': [GStencils/s, ...]}} and whether every row was correct."""
    by = defaultdict(lambda: defaultdict(list))
    correct = True
    for r in csv.DictReader(open(path, newline="")):
        source = ast.literal_eval(r["options"] or "{}").get("source") or "today"
        by[(r["stencil"], r["dtype"], int(r["fuse"]))][source].append(float(r["gstencils"]))
        correct = correct and r["correct"] == "True"
    return by, correct


def main(path: str) -> int:
    by, correct = sides(path)
    others = sorted({k for runs in by.values() for k in runs if k != "today"})
    print(f"# Today's kernel files over other commits', same plans, alternating ({path})\n")
    print(f"Every configuration checked before it was timed: {'all correct' if correct else 'NOT ALL CORRECT'}.\n")
    print("| stencil | dtype | t | today | " + " | ".join(f"{o} | today / {o}" for o in others) + " | runs |")
    print("|---|---|---|---|" + "---|---|" * len(others) + "---|")
    ratios = defaultdict(list)  # (dtype, other commit) -> today / other
    for (stencil, dtype, t), runs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        if "today" not in runs or any(o not in runs for o in others):
            continue
        today = statistics.median(runs["today"])
        cells = []
        for o in others:
            other = statistics.median(runs[o])
            ratios[dtype, o].append(today / other)
            cells.append(f"{other:.0f} | {today / other:.3f}")
        print(f"| {stencil} | {dtype} | {t} | {today:.0f} | " + " | ".join(cells) + " | "
              + " + ".join(str(len(runs[k])) for k in ["today"] + others) + " |")
    print("\n| dtype | over | configurations | geometric mean | lowest | highest |\n|---|---|---|---|---|---|")
    for (dtype, o), rs in ratios.items():
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"| {dtype} | {o} | {len(rs)} | {g:.3f} | {min(rs):.3f} | {max(rs):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
