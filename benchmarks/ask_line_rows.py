"""Ask the refined model, before timing it, what launching a 1D line as rows should gain (kernels/defaults.yaml
``tensor_cores_1d_rows``; tcadvisor.gpu.plans.LaunchPlan.launches).

For the 1D configurations of ``tune_gpu_kernels.py --only tc-1d-rows``: the refined GStencils/s that ``tcadvisor
advise --json`` gives at the shipped constants of the spec, with the line as one row (a warp loads its one tile
and exits: one slice in flight per warp) and as rows (a warp streams its tiles with ``prefetch`` more in flight).
The shipped model counts 1 + ``prefetch`` slices in flight for both layouts (one slice for the line as one row
made its held-out error worse, docs/model.md "Occupancy"), so the one-row figure here divides the model's bytes in
flight q_b by 1 + ``prefetch``: the mechanism asked about, not the shipped model.

    python benchmarks/ask_line_rows.py [--gpu h100-calibrated] [--out FILE.csv]
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcadvisor import cli, model, refinement  # noqa: E402
from tcadvisor.gpu import defaults  # noqa: E402

#: (stencil, dtype, depths) of the scan, dense and sparse (the sparse kernel takes r·t ≤ 7).
CONFIGS = [("Box-1D1R", (1, 4, 16)), ("Box-1D2R", (1, 4, 16)), ("Box-1D3R", (1, 4, 11)), ("Box-1D7R", (1,))]
DTYPES = ("double", "float", "half")


_PLAN_INPUTS = refinement.plan_inputs


def _one_slice(ctx, plan=None, registers=None):
    """The model's inputs with one slice in flight per warp for a 1D line launched as one row."""
    values, plan, occ, counts = _PLAN_INPUTS(ctx, plan, registers)
    if plan.dims == 1 and plan.unit != "cuda_core" and not plan.row_width:
        ahead = plan.options["stages"] - 1 if plan.options.get("stages") else plan.options["prefetch"]
        values[model.q_b] /= 1 + ahead
    return values, plan, occ, counts


def refined(stencil: str, dtype: str, t: int, gpu: str, rows: bool) -> dict:
    """unit -> refined GStencils/s of the bundled kernels, the 1D layout forced to ``rows``."""
    real = defaults.measured()
    everywhere = {(k, p): 1 for k in ("dense", "sparse") for p in ("fp64", "tf32", "fp16")}
    patched = dataclasses.replace(real, line_rows_from=everywhere if rows else {})
    defaults.measured = lambda: patched
    refinement.plan_inputs = _PLAN_INPUTS if rows else _one_slice
    refinement._DERIVED.clear()
    try:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cli.main(["advise", stencil, "--fuse", str(t), "--dtype", dtype, "--gpu", gpu, "--json"])
    finally:
        defaults.measured = lambda: real
        refinement.plan_inputs = _PLAN_INPUTS
        refinement._DERIVED.clear()
    return {o["unit"]: o["gstencils"] for o in json.loads(buf.getvalue())["options"] if o.get("available")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h100-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rows = []
    for stencil, depths in CONFIGS:
        for dtype in DTYPES:
            for t in depths:
                one, many = (refined(stencil, dtype, t, args.gpu, r) for r in (False, True))
                for unit in ("tensor_core", "sparse_tensor_core"):
                    if unit in one and unit in many:
                        rows.append({"stencil": stencil, "dtype": dtype, "fuse": t, "unit": unit,
                                     "one_row": round(one[unit], 1), "rows": round(many[unit], 1),
                                     "gain": round(many[unit] / one[unit], 3)})
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(f"{'stencil':9} {'dtype':6} {'t':>3} {'unit':18} {'one row':>9} {'rows':>9} {'gain':>6}")
    for r in rows:
        print(f"{r['stencil']:9} {r['dtype']:6} {r['fuse']:3} {r['unit']:18} {r['one_row']:9.1f} {r['rows']:9.1f} "
              f"{r['gain']:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
