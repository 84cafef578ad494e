"""Ask the refined model, before timing it, what staging the dense kernel's 2D rows and 3D slices in shared memory
should gain (``stages``, K_STAGES of kernels/tensor_cores.cu; the scan ``tune_gpu_kernels.py --only tc-stages-2d3d``).

For each configuration of the scan: the refined GStencils/s the advisor reports for the dense kernel at its default
and with 2, 3 or 4 stages (nothing ahead in registers).  The model counts a staged kernel's slices in flight as
stages - 1 (refinement.plan_inputs), its stage copies among the instructions per MMA, and its registers by the
planner's estimate where the compiler's count is not in kernels/compiled-resources.csv.

    python benchmarks/ask_tc_stages_2d3d.py [--gpu h200-calibrated] [--out FILE.csv]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ask_sptc_r8 import write_rows  # noqa: E402
from ask_tc_shallow import refined  # noqa: E402
from tune_gpu_kernels import TC_1D_STAGES, TC_STAGES_2D3D_CONFIGS, _tc_default_knobs, _tc_plan  # noqa: E402


def refined_on_shape(stencil: str, dtype: str, t: int, gpu: str, knobs: dict) -> float | None:
    """The refined GStencils/s of the dense kernel with ``knobs`` on the MMA shape the scan runs (the least-padding
    one) and depth: the advisor weighs every shape and other depths, where the staged plan may not fit an SM's shared
    memory, so the knobs apply to the scanned ones only; None where the advisor then prefers another shape."""
    from tcadvisor import refinement
    from tcadvisor.advisor import advise
    from tcadvisor.gpu import plans
    from tcadvisor.hardware import find_spec

    shape = _tc_plan(stencil, dtype, t, {}).mma
    real = refinement.recorded_plan

    def with_knobs(ctx, description):
        if ctx.unit != "tensor_core" or ctx.mma != shape or ctx.fuse != t:
            return real(ctx, description)
        return plans.plan_tensor_cores(ctx.stencil, ctx.fuse, ctx.precision, ctx.mma, **knobs)

    refinement.recorded_plan = with_knobs
    refinement._DERIVED.clear()
    try:
        adv = advise(stencil, dtype, find_spec(gpu), fuse=t)
        found = next(o for o in adv.options if o.available and o.unit == "tensor_core")
        return found.gstencils if str(found.mma_shape) == str(shape) else None
    finally:
        refinement.recorded_plan = real
        refinement._DERIVED.clear()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rows = []
    for name, depths in TC_STAGES_2D3D_CONFIGS:
        for dtype in ("double", "float", "half"):
            for t in depths:
                base = _tc_default_knobs(name, dtype, t)
                default = refined(name, dtype, t, args.gpu, {})
                row = {"stencil": name, "dtype": dtype, "fuse": t, "default": round(default, 1)}
                for s in TC_1D_STAGES:
                    knobs = dict(base, prefetch=0, stages=s)
                    if _tc_plan(name, dtype, t, knobs).smem > 227 * 1024:  # left out of the scan: never resident
                        row[f"stages_{s}"] = row[f"gain_{s}"] = ""
                        continue
                    staged = refined_on_shape(name, dtype, t, args.gpu, knobs)
                    row[f"stages_{s}"] = "" if staged is None else round(staged, 1)
                    row[f"gain_{s}"] = "" if staged is None else round(staged / default, 3)
                rows.append(row)
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
