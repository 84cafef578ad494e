"""What the refined model says of the cc-pairs-async scan's variants before they are measured.

Each configuration of ``tune_gpu_kernels.py --only cc-pairs-async`` (FP16/BF16 pairs on the 2D CUDA-core kernel with
their input rows copied by cp.async, several iterations ahead, and wider strips) is predicted as a recorded run of
that plan would be (the plan read back from the kernel's description, the shipped constants), on the scan's grid.

    python benchmarks/ask_cc2d_pairs.py --gpu h200-calibrated --out FILE.csv [--measured DIR/tuning.csv]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import predict_variants, scan_arguments, write_rows  # noqa: E402
from benchmarks.tune_gpu_kernels import variants_cc_pairs_async  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402

PRECISION = {"half": "fp16", "bfloat16": "bf16"}


def description(plan) -> str:
    """The part of the CUDA-core kernel's description of itself that :func:`plans.recorded_cuda_core_plan` reads
    (tcadvisor.gpu.cuda_cores.CudaCoreKernel.describe, without its registers: the model takes the plan's)."""
    o = plan.options
    return (f"{o['nt']} threads x {o['v']} columns, {o['nr']} rows/iteration"
            + (", rows copied asynchronously" if o["async"] else "")
            + (f", {o['prefetch']} iterations ahead" if o["prefetch"] != 1 else "")
            + (", outputs stored from registers" if o["direct"] else "")
            + (", own columns kept in registers" if o["keep"] else "")
            + f", halo {plan.halo}, {plan.smem // 1024} KiB shared (asked, not run)")


def main(argv=None) -> int:
    args, measured = scan_arguments(__doc__, argv, "h200-calibrated")
    rows = predict_variants(variants_cc_pairs_async(), lambda st, t, p, kn: plans.plan_cuda_cores(st, t, p, **kn),
                            description, PRECISION, args.gpu, measured)
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
