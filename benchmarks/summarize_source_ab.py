"""A ``tune_gpu_kernels.py`` scan that ran each configuration with today's kernel files and with those of another
commit (``source`` in its options), alternating: per configuration the median of each side, today over the other,
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
    print(f"# Today's kernel files over another commit's, same plans, alternating ({path})\n")
    print(f"Every configuration checked before it was timed: {'all correct' if correct else 'NOT ALL CORRECT'}.\n")
    print("| stencil | dtype | t | today | other | other commit | today / other | runs |\n|---|---|---|---|---|---|---|---|")
    per_dtype = defaultdict(list)
    for (stencil, dtype, t), runs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        others = [k for k in runs if k != "today"]
        if "today" not in runs or len(others) != 1:
            continue
        today, other = statistics.median(runs["today"]), statistics.median(runs[others[0]])
        per_dtype[dtype].append(today / other)
        print(f"| {stencil} | {dtype} | {t} | {today:.0f} | {other:.0f} | {others[0]} | {today / other:.3f} | "
              f"{len(runs['today'])} + {len(runs[others[0]])} |")
    print("\n| dtype | configurations | geometric mean | lowest | highest |\n|---|---|---|---|---|")
    for dtype, rs in per_dtype.items():
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"| {dtype} | {len(rs)} | {g:.3f} | {min(rs):.3f} | {max(rs):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
