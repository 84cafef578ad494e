"""Per fused radius, the sptc-stages scans against each configuration's defaults (no GPU): summary.md.

    python benchmarks/summarize_sptc_stages.py validation/results/h100-sxm-2026-11-27/sptc-stages

Reads tuning-2d.csv and tuning-3d.csv (benchmarks/tune_gpu_kernels.py --only sptc-stages-2d / -3d), and for every
(dimensions, precision, fused radius) gives each variant's ratio to the defaults of the same run per stencil and
their geometric mean.  A variant is chosen where its geometric mean is above 1.015 and no scanned stencil of that
radius loses more than 2 % with it (the defaults are keyed by fused radius, not by stencil).
"""
from __future__ import annotations

import ast
import csv
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.stencil import parse_stencil  # noqa: E402

PREC = {"half": "fp16", "bfloat16": "fp16", "float": "tf32"}


def main(folder: str) -> int:
    ratios = defaultdict(lambda: defaultdict(list))
    for dims in (2, 3):
        path = os.path.join(folder, f"tuning-{dims}d.csv")
        rows = list(csv.DictReader(open(path)))
        base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
        for r in rows:
            if r["options"] == "{}" or r["correct"] != "True":
                continue
            st = parse_stencil(r["stencil"])
            key = (dims, PREC[r["dtype"]], st.radius * int(r["fuse"]))
            ratios[key][r["options"]].append((r["stencil"], int(r["fuse"]),
                                               float(r["gstencils"]) / base[(r["stencil"], r["dtype"], r["fuse"])]))
    lines = ["# Input slices staged in shared memory (stages) against the defaults, per fused radius", "",
             f"Written by `benchmarks/summarize_sptc_stages.py` from `{folder}` (every row checked against the",
             "float64 reference).  Best: the variant of the highest geometric mean over the stencils of that radius;",
             "chosen where that mean is above 1.015 and no stencil loses more than 2 %.", "",
             "| dims | precision | R | best variant | geometric mean | per stencil | chosen |", "|---|---|---|---|---|---|---|"]
    for key in sorted(ratios):
        gm, opts, per = max(((math.exp(sum(math.log(x) for *_, x in v) / len(v)), o, v)
                             for o, v in ratios[key].items()), key=lambda z: z[0])
        chosen = gm > 1.015 and min(x for *_, x in per) >= 0.98
        knobs = ", ".join(f"{k} {v}" for k, v in ast.literal_eval(opts).items())
        each = "; ".join(f"{s} t = {t}: {x:.3f}" for s, t, x in per)
        lines.append(f"| {key[0]} | {key[1].upper()} | {key[2]} | {knobs} | {gm:.3f} | {each} | "
                     f"{'yes' if chosen else 'no'} |")
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
