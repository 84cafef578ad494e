"""Ask the refined model, before timing it, what staging the dense kernel's 1D strips in shared memory should gain
(``stages``, K_STAGES of kernels/tensor_cores.cu; the scan ``tune_gpu_kernels.py --only tc-1d-stages``).

For each configuration of the scan: the refined GStencils/s the advisor reports for the dense kernel at its default
and with 2, 3 or 4 stages (nothing ahead in registers), and which term binds.  The model counts a staged kernel's
slices in flight as stages - 1 (as the sparse kernel's stages: refinement.plan_inputs) and its registers by the
planner's estimate where the compiler's count is not in kernels/compiled-resources.csv.

    python benchmarks/ask_tc_1d_stages.py [--gpu h200-calibrated] [--out FILE.csv]
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
from tune_gpu_kernels import TC_1D_STAGES, TC_1D_STAGES_CONFIGS, _tc_default_knobs  # noqa: E402


def ask_stages(configs, gpu: str, plan_of=None) -> list[dict]:
    """Per configuration (stencil, depths) and dtype: the refined GStencils/s at its default and with each count of
    TC_1D_STAGES (nothing ahead in registers), and each over the default.  ``plan_of`` (name, dtype, t, knobs) ->
    plan: where given, the knobs apply to that plan's MMA shape at that depth only, and a variant whose block needs
    more than an SM's 227 KiB of shared memory is left blank (as the scans leave it out)."""
    rows = []
    for name, depths in configs:
        for dtype in ("double", "float", "half"):
            for t in depths:
                base = _tc_default_knobs(name, dtype, t)
                default = refined(name, dtype, t, gpu, {})
                row = {"stencil": name, "dtype": dtype, "fuse": t, "default": round(default, 1)}
                for s in TC_1D_STAGES:
                    knobs = dict(base, prefetch=0, stages=s)
                    staged = None
                    if plan_of is None:
                        staged = refined(name, dtype, t, gpu, knobs)
                    elif plan_of(name, dtype, t, knobs).smem <= 227 * 1024:
                        staged = refined(name, dtype, t, gpu, knobs, shape=plan_of(name, dtype, t, {}).mma)
                    row[f"stages_{s}"] = "" if staged is None else round(staged, 1)
                    row[f"gain_{s}"] = "" if staged is None else round(staged / default, 3)
                rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    write_rows(ask_stages(TC_1D_STAGES_CONFIGS, args.gpu), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
