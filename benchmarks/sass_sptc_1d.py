"""The SASS of the Sparse Tensor Core kernel's streaming loop in 1D, per knob (nvcc and cuobjdump; no GPU needed).

    python benchmarks/sass_sptc_1d.py --out DIR

For Box-1D1R x64 and x16 FP16 and x32 TF32 (the line as rows, the planner's rule) with each knob of the sptc-1d-ilp
scan (whole windows per lane, two accumulator chains, the alignment build, 2 slices per trip): the kernel compiled
for sm_90 as tcadvisor.gpu.backend would (the same source and -D constants), its SASS in DIR, and the static count of
the instructions in the streaming loop -- the body of the backward branch that holds the mma.sp (HMMA.SP) -- per
mma.sp, by opcode.  Nsight Compute (benchmarks/gpu_session_sptc_1d_deep_ncu.sh) found these kernels bound by the
instructions they issue: 113 + 31 per window block per slice at the rule.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.sass_mix import compile_sass  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)([.A-Z0-9_]*)\s*(.*?);", re.M)
KNOBS = ({}, {"whole_windows": True}, {"two_chains": True}, {"fixed_alignment": True}, {"unroll": 2},
         {"whole_windows": True, "two_chains": True, "fixed_alignment": True},
         {"whole_windows": True, "two_chains": True, "fixed_alignment": True, "unroll": 2})
CASES = (("Box-1D1R", 64, "fp16"), ("Box-1D1R", 16, "fp16"), ("Box-1D1R", 32, "tf32"))


def loop_body(sass: str, holding: tuple[str, ...] = ("HMMA", "DMMA")) -> list[tuple[int, str]]:
    """(address, opcode) of the instructions of the largest backward branch's body that holds an instruction named
    in ``holding`` (default the MMAs -- HMMA: the sparse and 16-bit/TF32 dense kernels; DMMA: the dense FP64 kernel;
    the CUDA-core kernels' FMAs for benchmarks/sass_cc3d_vld.py)."""
    ins = [(int(m[1], 16), m[3] + m[4], m[5]) for m in LINE.finditer(sass)]
    best = []
    for addr, op, args in ins:
        if op.startswith("BRA"):
            t = re.search(r"0x([0-9a-f]+)", args)
            if t and int(t[1], 16) < addr:
                body = [(a, o) for a, o, _ in ins if int(t[1], 16) <= a <= addr]
                if any(o.startswith(holding) for _, o in body) and (not best or len(body) > len(best)):
                    best = body
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, t, precision in CASES:
        for kn in KNOBS:
            plan = plans.plan_sparse_tensor_cores(parse_stencil(name), t, precision, **kn)
            tag = f"{name}-{t}-{precision}-" + ("-".join(sorted(kn)) or "rule")
            sass, regs = compile_sass(plan)
            with open(os.path.join(args.out, f"sass-{tag}.txt"), "w") as f:
                f.write(sass)
            body = loop_body(sass)
            ops = collections.Counter(o.split(".")[0] for _, o in body)
            mmas = sum(1 for _, o in body if o.startswith("HMMA"))
            top = ", ".join(f"{k} {v}" for k, v in ops.most_common(9))
            print(f"{name} x{t} {precision} {str(kn):90} regs {regs if regs else '?':>3}: loop {len(body)} "
                  f"instructions, {mmas} mma.sp, {len(body) / max(mmas, 1):.1f} per mma.sp | {top}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
