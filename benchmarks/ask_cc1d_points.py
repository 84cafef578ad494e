"""What the refined model says of the cc1d-points-again scan's tiles, with the constants shipped before its refit.

Each configuration of ``tune_gpu_kernels.py --only cc1d-points-again`` (the 1D CUDA-core tile at t = 4-16 with 256
threads of the rule's points per thread and 128 or 256 threads of twice as many) is predicted as a recorded run of
that plan would be, beside what the scan measured, each over the rule's tile (256 threads of 8 points in FP64, 16 in
FP32 and FP16): does the model see what more points per thread do to a tile's instructions?

    python benchmarks/ask_cc1d_points.py --gpu h200-calibrated --measured DIR/tuning.csv --out FILE.csv
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import predict_variants, scan_arguments, write_rows  # noqa: E402
from benchmarks.tune_gpu_kernels import variants_cc1d_points_again  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402

PRECISION = {"double": "fp64", "float": "fp32", "half": "fp16"}
RULE_POINTS = {"double": 8, "float": 16, "half": 16}


def description(plan) -> str:
    """The part of the 1D tile kernel's description of itself that :func:`plans.recorded_cuda_core_plan` reads
    (tcadvisor.gpu.cuda_cores.CudaCoreKernel.describe, without its registers)."""
    o = plan.options
    return (f"1D tiles of {o['nt']} threads x {o['v']} points{', staged' if o.get('stage') else ''}, "
            f"{plan.outputs['x']} outputs, halo {plan.halo}, {plan.smem} B shared (asked, not run)")


def main(argv=None) -> int:
    args, measured = scan_arguments(__doc__, argv, "h200-calibrated")
    fits = [c for c in variants_cc1d_points_again() if _plans(c)]  # the tiles the planner refuses the scan skipped
    rows = predict_variants(fits, lambda st, t, p, kn: plans.plan_cc_tile1d(st, t, p, **kn), description, PRECISION,
                            args.gpu, measured)
    rule = {(r["stencil"], r["dtype"], r["fuse"]): r for r in rows
            if r["options"] == str({"v": RULE_POINTS[r["dtype"]], "cols": 256 * RULE_POINTS[r["dtype"]]})}
    for r in rows:
        b = rule[(r["stencil"], r["dtype"], r["fuse"])]
        r["predicted_vs_rule"] = round(r["predicted"] / b["predicted"], 3)
        both = r["measured"] != "" and b["measured"] != ""
        r["measured_vs_rule"] = round(r["measured"] / b["measured"], 3) if both else ""
    write_rows(rows, args.out)
    return 0


def _plans(config) -> bool:
    """Whether the planner takes the scan configuration's tile (it refuses those past the static shared memory)."""
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.stencil import parse_stencil

    name, dtype, _grid, _unit, t, _mma, kn = config
    try:
        plans.plan_cc_tile1d(parse_stencil(name), t, PRECISION[dtype], **kn)
    except TcAdvisorError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
