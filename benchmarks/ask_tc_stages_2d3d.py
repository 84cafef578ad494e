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
from ask_tc_1d_stages import ask_stages  # noqa: E402
from tune_gpu_kernels import TC_STAGES_2D3D_CONFIGS, _tc_plan  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    # the knobs on the scanned MMA shape and depth only; variants beyond an SM's shared memory blank, as the scan
    # leaves them out
    write_rows(ask_stages(TC_STAGES_2D3D_CONFIGS, args.gpu, plan_of=_tc_plan), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
