"""What the refined model says of the cc1d-pipe scan's variants before they are measured.

Each configuration of ``tune_gpu_kernels.py --only cc1d-pipe`` (the 1D CUDA-core tile kernel with its next tile
copied in while this one is computed, beside the defaults) is predicted as a recorded run of that plan would be (the
plan read back from the kernel's description, the shipped constants), on the scan's grid.  The model sees the
pipelined tile only through its bytes in flight (``q_b`` counts ``prefetch`` tiles per block); it has no term for
a block's memory and compute phases following each other, which is what the change attacks (kernels/cuda_cores_1d.cu,
"Why K_PIPE"), so its answer is a lower bound on what it should gain.

    python benchmarks/ask_cc1d_pipe.py --gpu h200-calibrated --out FILE.csv [--measured DIR/tuning.csv]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import measured_runs, predict_variants, write_rows  # noqa: E402
from benchmarks.tune_gpu_kernels import variants_cc1d_pipe  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402

PRECISION = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}


def description(plan) -> str:
    """The part of the 1D kernel's description of itself that :func:`plans.recorded_cuda_core_plan` reads
    (tcadvisor.gpu.cuda_cores.CudaCoreKernel.describe, without its registers: the model takes the plan's)."""
    o = plan.options
    return (f"1D tiles of {o['nt']} threads x {o['v']} points" + (", staged" if o["stage"] else "")
            + (", next tile copied ahead" if o.get("prefetch", 1) == 2 else "")
            + f", {plan.outputs['x']} outputs, halo {plan.halo}, {plan.smem} B shared (asked, not run)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--measured", help="the scan's tuning.csv")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    measured = measured_runs(args.measured) if args.measured else {}
    rows = predict_variants(variants_cc1d_pipe(), lambda st, t, p, kn: plans.plan_cuda_cores(st, t, p, **kn),
                            description, PRECISION, args.gpu, measured)
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
