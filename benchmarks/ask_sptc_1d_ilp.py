"""What the refined model says of the sptc-1d-ilp scan's variants before they are measured.

Each configuration of ``tune_gpu_kernels.py --only sptc-1d-ilp`` (the sparse kernel in 1D with whole windows per lane,
two accumulator chains, the alignment build, 2 slices per trip) is predicted as a recorded run of that plan would be
(tcadvisor.validate.fitting: the plan read back from a kernel description, the shipped constants), on the scan's grid.
The model has no term for the instructions a warp issues per MMA beyond its constant λ_0, so it can only tell these
variants apart by their registers (two chains: 4 more per thread); the scan asks what that constant hides.

    python benchmarks/ask_sptc_1d_ilp.py --out FILE.csv [--measured DIR/tuning.csv]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import predict_variants, scan_arguments, write_rows  # noqa: E402
from benchmarks.tune_gpu_kernels import variants_sptc_1d_ilp  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402

PRECISION = {"half": "fp16", "bfloat16": "bf16", "float": "tf32"}


def description(plan) -> str:
    """The part of the kernel's description of itself that :func:`plans.recorded_sparse_tensor_core_plan` reads."""
    return "mma.sp (asked, not run), " + plans.sparse_plan_text(plan)


def main(argv=None) -> int:
    args, measured = scan_arguments(__doc__, argv, "h100-calibrated")
    rows = predict_variants(variants_sptc_1d_ilp(), lambda st, t, p, kn: plans.plan_sparse_tensor_cores(st, t, p, **kn),
                            description, PRECISION, args.gpu, measured, base="rule")
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
