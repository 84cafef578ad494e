"""Side-by-side ratios of a ``tune_gpu_kernels.py --only tc-align`` scan: the dense kernel compiled for its fields'
alignment over the same configuration with the run-time flag (no GPU needed).

    python benchmarks/summarize_tc_align.py DIR/tuning.csv > DIR/summary.md
"""
from __future__ import annotations

import csv
import json
import math
import sys
from collections import defaultdict


def main(path: str) -> int:
    rows = list(csv.DictReader(open(path, newline="")))
    pairs = defaultdict(dict)
    for r in rows:
        fixed = json.loads(r["options"].replace("'", '"').replace("True", "true").replace("False", "false"))
        pairs[(r["stencil"], r["dtype"], int(r["fuse"]))][fixed.get("fixed_alignment", False)] = r
    print(f"# The dense kernel compiled for its fields' alignment over the run-time flag ({path})\n")
    print("| stencil | dtype | t | flag GStencils/s | aligned build | ratio | both correct |")
    print("|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for (name, dtype, t), p in sorted(pairs.items(), key=lambda kv: (kv[0][1], kv[0][0][-3:], kv[0][0], kv[0][2])):
        if False not in p or True not in p:
            continue
        a, b = float(p[False]["gstencils"]), float(p[True]["gstencils"])
        ok = p[False]["correct"] == "True" and p[True]["correct"] == "True"
        print(f"| {name} | {dtype} | {t} | {a:.1f} | {b:.1f} | {b / a:.3f} | {ok} |")
        by[(name[-4:-2], dtype)].append(b / a)
    print("\n| dims | dtype | configurations | geometric mean | min | max |\n|---|---|---|---|---|---|")
    for (dims, dtype), v in sorted(by.items()):
        g = math.exp(sum(math.log(x) for x in v) / len(v))
        print(f"| {dims} | {dtype} | {len(v)} | {g:.3f} | {min(v):.3f} | {max(v):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
