"""The 3D CUDA-core kernel's streaming loop in SASS, shared rows by residue against in order with vector loads
(``vector_loads``, K_VLD): the opcode counts of the loop body per configuration (nvcc and cuobjdump; no GPU time).

nvcc's build is not the one that runs: NVRTC (CuPy) compiles the kernels, and its ptxas allotted Box-3D1R FP32 x4
130 registers where nvcc's gave 143 (validation/results/h200-2026-11-28/cc3d-addr/); NVRTC 13's cubin was not read
by cuobjdump.  So this is a first look; the SASS a timing is explained with is Nsight Compute's source page of the
running kernel (benchmarks/gpu_session_cc3d_sass.sh).

    python benchmarks/sass_cc3d_vld.py --out DIR

Why: the scan cc3d-vld (validation/results/h100-sxm-2026-11-28/cc3d-vld/) found the vector loads 0.5-1.56x the
residue layout, and Nsight Compute on Box-3D1R FP32 x4 counted half the shared loads but 2.6 % more instructions
in all; which instructions came in their place is in the SASS.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.sass_mix import compile_sass  # noqa: E402
from benchmarks.sass_sptc_1d import loop_body  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

CASES = (("Box-3D1R", 4, "fp32"), ("Box-3D1R", 3, "fp32"), ("Box-3D1R", 2, "fp32"), ("Star-3D1R", 6, "fp32"),
         ("Box-3D1R", 3, "fp64"), ("Star-3D1R", 3, "fp16"))
SHOWN = ("FFMA", "HFMA2", "DFMA", "LDS", "STS", "LDG", "STG", "MOV", "IMAD", "IADD3", "LEA", "ISETP", "SEL", "BAR",
         "PRMT", "LOP3", "SHF")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, t, precision in CASES:
        for vld in (False, True):
            plan = plans.plan_cuda_cores(parse_stencil(name), t, precision, vector_loads=vld)
            sass, regs = compile_sass(plan)
            tag = f"{name}-t{t}-{precision}-{'vld' if vld else 'residue'}"
            with open(os.path.join(args.out, f"sass-{tag}.txt"), "w") as f:
                f.write(sass)
            body = [op for _, op in loop_body(sass, ("FFMA", "HFMA2", "DFMA"))]
            ops = collections.Counter(o.split(".")[0] for o in body)
            full = collections.Counter(o for o in body if o.split(".")[0] in ("LDS", "STS", "MOV", "IMAD"))
            shown = " ".join(f"{k}={ops[k]}" for k in SHOWN if ops[k])
            print(f"{tag}: {regs} registers, loop {len(body)} instructions: {shown}; {dict(full)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
