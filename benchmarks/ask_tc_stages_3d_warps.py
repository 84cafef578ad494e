"""Ask the refined model, before timing it, what the dense kernel's 3D slices staged in shared memory with 2, 4 (or 8)
warps per block should gain beside each default (the scan ``tune_gpu_kernels.py --only tc-stages-3d-warps``).

For each knob set of ``tune_gpu_kernels.tc_stages_3d_variants``: the refined GStencils/s the advisor reports for the
dense kernel with it on the default's MMA shape and depth, over the default's, and the block's shared memory (a
default stays within 99 KiB, plans.B_SMEM_LIMIT).  The knob sets are built on today's defaults: the committed
tc-stages-3d-warps/ask-model.csv was written at commit 4ba0c40, before the scan's results became defaults.

    python benchmarks/ask_tc_stages_3d_warps.py [--gpu h200-calibrated] [--out FILE.csv]
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
from tune_gpu_kernels import _tc_plan, tc_stages_3d_configurations, tc_stages_3d_variants  # noqa: E402


def ask(gpu: str) -> list[dict]:
    rows = []
    for name, dtype, t in tc_stages_3d_configurations():
        plan = _tc_plan(name, dtype, t, {})
        default = refined(name, dtype, t, gpu, {})
        for kn in tc_stages_3d_variants(name, dtype, t):
            got = refined(name, dtype, t, gpu, kn, shape=plan.mma)
            rows.append({"stencil": name, "dtype": dtype, "fuse": t, "default": round(default, 1),
                         "default_warps": plan.warps, "default_stages": plan.options["stages"],
                         "warps": kn["warps"], "stages": kn["stages"],
                         "smem_kib": round(_tc_plan(name, dtype, t, kn).smem / 1024, 1),
                         "predicted": "" if got is None else round(got, 1),
                         "gain": "" if got is None else round(got / default, 3)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    write_rows(ask(args.gpu), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
