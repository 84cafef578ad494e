"""3D CUDA-core tiles that spilled, beside the tiles the planner now chooses (or its refusal), in one run.

    python benchmarks/gpu_session_cc3d_spills.py --out DIR

For every 3D corpus shape, precision and depth where the generic rule's first tile (what the planner
launched before 2026-11-26) differs from today's choice (benchmarks/ptxas_resources.py,
kernels/compiled-resources.csv): both are checked on a small odd grid (two sweeps against the float64
reference) and timed on 512^3 (median of 5 repeats of 4 sweeps), with the registers and local memory
CuPy reports for each.  A depth the planner now refuses is timed with the old tile only.  Writes
spills.csv and summary.md; prints the summary last.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402
from tcadvisor.validate.corpus import corpus_stencils  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-configs", type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from tcadvisor.gpu.backend import device_info
    from tcadvisor.gpu.runner import run

    device, date = device_info()["name"], datetime.date.today().isoformat()
    pairs = []
    for st in [s for s in corpus_stencils() if s.dims == 3] + [parse_stencil("Star-3D4R")]:
        for precision, dtype in (("fp64", "double"), ("fp32", "float")):
            for t in range(1, 9):
                start = plans.cc3d_generic_tile(st, t, precision)
                if start is None:
                    continue
                old = {"v": start[0], "cols": start[1], "rows": start[2]}
                try:
                    new_plan = plans.plan_cuda_cores(st, t, precision)
                    new = {"v": new_plan.options["v"], "cols": new_plan.tile["x"], "rows": new_plan.tile["y"]}
                except TcAdvisorError as exc:
                    new = str(exc)
                if new != old:
                    pairs.append((st, dtype, t, old, new))
    pairs = pairs[:args.max_configs]
    rows = []

    def measure(st, dtype, t, knobs, which):
        try:
            chk = run(st, dtype, "cuda_core", fuse=t, grid="13x37x261", steps=2 * t, seed=1, repeats=1, warmup=0,
                      kernel_options=knobs)
            res = run(st, dtype, "cuda_core", fuse=t, grid="512x512x512", steps=4 * t, seed=1, check=False,
                      repeats=5, warmup=1, kernel_options=knobs)
        except TcAdvisorError as exc:
            print(f"{st.name} {dtype} t={t} {which}: refused: {exc}", flush=True)
            return None
        row = {"gpu": device, "date": date, "stencil": st.name, "dtype": dtype, "fuse": t, "which": which,
               "knobs": ";".join(f"{k}={v}" for k, v in knobs.items()), "gstencils": res.gstencils,
               "correct": chk.passed, "kernel": res.kernel}
        rows.append(row)
        print(f"{st.name:>10} {dtype:>6} t={t} {which:>4} {row['knobs']:>22} {res.gstencils:8.1f} GSt/s "
              f"correct={chk.passed}  {res.kernel}", flush=True)
        return row

    table = []
    for st, dtype, t, old, new in pairs:
        a = measure(st, dtype, t, old, "old")
        b = measure(st, dtype, t, new, "new") if isinstance(new, dict) else None
        table.append((st.name, dtype, t, old, new, a, b))
        with open(os.path.join(args.out, "spills.csv"), "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["gpu"])
            wr.writeheader()
            wr.writerows(rows)
    lines = [f"# 3D CUDA-core tiles: spilling first tile vs the planner's choice ({device}, {date}, 512^3)", "",
             "| stencil | dtype | t | old tile | GSt/s | new tile | GSt/s | new/old |", "|---|---|---|---|---|---|---|---|"]
    for name, dtype, t, old, new, a, b in table:
        o = f"{old['v']}x{old['rows']}"
        n = f"{new['v']}x{new['rows']}" if isinstance(new, dict) else "refused"
        ga = f"{a['gstencils']:.1f}" if a else "–"
        gb = f"{b['gstencils']:.1f}" if b else "–"
        ratio = f"{b['gstencils'] / a['gstencils']:.2f}" if a and b else "–"
        lines.append(f"| {name} | {dtype} | {t} | v={o} | {ga} | {n} | {gb} | {ratio} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
