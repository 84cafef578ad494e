"""What the refined model said, before the scans, of the dense kernel at shallow fusion in 16 bits and TF32: slices
ahead moved along (``prefetch``), the same slices in a ring of register sets (``ring``: the knob the tc-ring scan
measured at commit a2d9a64, taken back since for no gain; docs/kernels.md), and 2 or 4 x tiles per warp (``x_tiles``), each beside the configuration's
default, with the fitted constants of a given refined-terms.yaml (those shipped when it was asked).

For the configurations of ``tune_gpu_kernels.py --only tc-ring``, ``tc16-width`` and ``tc-xt-shallow``: the refined
GStencils/s the advisor reports for the dense kernel with the knobs given, beside what the scans measured.

    python benchmarks/ask_tc_shallow.py --constants models/fitted/refined-terms.yaml \\
        --measured DIR/tuning.csv [--measured ...] [--before-1d-x-tiles] [--out FILE.csv]
"""
from __future__ import annotations

import argparse
import ast
import csv
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import write_rows  # noqa: E402
from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.advisor import advise  # noqa: E402
from tcadvisor.gpu import plans, registry  # noqa: E402
from tcadvisor.gpu.commands import kernel_knobs  # noqa: E402
from tcadvisor.hardware import find_spec  # noqa: E402


def refined(stencil: str, dtype: str, t: int, gpu: str, knobs: dict, shape=None) -> float | None:
    """The advisor's refined GStencils/s of the dense kernel at depth ``t`` with ``knobs`` (none: its default).

    ``shape`` (an MmaShape): the knobs apply to that MMA shape at depth ``t`` only (the advisor weighs every shape
    and other depths too, where a plan with the knobs may not fit an SM's shared memory), and None is returned where
    the advisor then prefers another shape."""
    real = refinement.recorded_plan

    def with_knobs(ctx, description):
        if ctx.unit != "tensor_core" or not knobs or (shape is not None and (ctx.mma != shape or ctx.fuse != t)):
            return real(ctx, description)
        return plans.plan_tensor_cores(ctx.stencil, ctx.fuse, ctx.precision, ctx.mma, **knobs)

    refinement.recorded_plan = with_knobs
    refinement._DERIVED.clear()
    try:
        adv = advise(stencil, dtype, find_spec(gpu), fuse=t)
        found = next((o for o in adv.options if o.available and o.unit == "tensor_core"), None)
        if found is None or (shape is not None and str(found.mma_shape) != str(shape)):
            return None
        return found.gstencils
    finally:
        refinement.recorded_plan = real
        refinement._DERIVED.clear()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--constants", required=True, help="a refined-terms.yaml whose constants to ask with")
    ap.add_argument("--measured", action="append", required=True, help="a scan's tuning.csv (repeatable)")
    ap.add_argument("--gpu", default="h100-calibrated")
    ap.add_argument("--before-1d-x-tiles", action="store_true",
                    help="answer with the defaults of before tensor_cores_1d_x_tiles (the scans' own defaults)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if args.before_1d_x_tiles:
        import dataclasses

        from tcadvisor.gpu import defaults

        before = dataclasses.replace(defaults.measured(), tc_1d_x_tiles={})
        defaults.measured = lambda: before
    fitted = yaml.safe_load(open(args.constants))
    values = {sym: float(fitted["constants"][sym.name]["value"]) for sym in model.FITTED}
    # The knobs the dense kernel takes today (``ring``, the knob of the tc-ring scan, was taken back after it measured
    # no gain: its rows are answered only at commit a2d9a64, where that ask-model.csv was written).
    accepted = set(kernel_knobs(registry.bundled_profile("tensor_core")))
    rows = []
    with refinement.using_constants(values):
        for path in args.measured:
            runs = list(csv.DictReader(open(path, newline="")))
            base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in runs if r["options"] == "{}"}
            for r in runs:
                knobs = ast.literal_eval(r["options"])
                if r["unit"] != "tensor_core" or not set(knobs) <= accepted:
                    continue
                t = int(r["fuse"])
                pred, pred0 = refined(r["stencil"], r["dtype"], t, args.gpu, knobs), refined(r["stencil"], r["dtype"], t, args.gpu, {})
                meas0 = base[(r["stencil"], r["dtype"], r["fuse"])]
                rows.append({"scan": Path(path).parent.name, "stencil": r["stencil"], "dtype": r["dtype"], "fuse": t,
                             "knobs": r["options"], "predicted": round(pred, 1), "predicted_gain": round(pred / pred0, 3),
                             "measured": round(float(r["gstencils"]), 1),
                             "measured_gain": round(float(r["gstencils"]) / meas0, 3)})
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
