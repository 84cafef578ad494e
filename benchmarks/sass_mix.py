"""The SASS instruction mix of CUDA-core kernels, FP32 against FP16 (no GPU needed; nvcc and cuobjdump).

    python benchmarks/sass_mix.py --out DIR [STENCIL:DEPTH ...]   (default Box-1D3R:16 Box-2D1R:8)

Compiles each configuration's default plan for sm_90 as tcadvisor.gpu.backend would (the same source text and
-D constants), writes ``sass-STENCIL-DEPTH-PRECISION.txt`` into DIR and prints the counts of the instructions
that matter for the packed FP16 kernels: FFMA, HFMA2 (FMA pipe) and HFMA2.MMA (MMA pipe), shared-memory
loads and stores, moves, permutes, and how many multiply-adds take their weight from a uniform register.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.gpu.backend import _source  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

OPCODE = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+(?:\.MMA)?)", re.M)


def compile_sass(plan) -> tuple[str, int | None]:
    """(SASS, registers per thread) of ``plan``'s kernel compiled for sm_90 as tcadvisor.gpu.backend compiles it
    (the same source text and -D constants)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = os.path.join(tmp, "k.cu"), os.path.join(tmp, "k.cubin")
        with open(src, "w") as f:
            f.write(_source(plan.source))
        done = subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90", "-cubin", "-o", cubin, "-Xptxas", "-v", src]
                              + [f"-D{k}={v}" for k, v in plan.defines], check=True, capture_output=True, text=True)
        regs = re.search(r"Used (\d+) registers", done.stderr)
        sass = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True, check=True).stdout
    return sass, int(regs[1]) if regs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("configs", nargs="*", default=["Box-1D3R:16", "Box-2D1R:8"])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for item in args.configs:
        name, t = item.split(":")
        for precision in ("fp32", "fp16"):
            plan = plans.plan_cuda_cores(parse_stencil(name), int(t), precision)
            sass, _ = compile_sass(plan)
            with open(os.path.join(args.out, f"sass-{name}-{t}-{precision}.txt"), "w") as f:
                f.write(sass)
            ops = collections.Counter(OPCODE.findall(sass))
            fmas = [line for line in sass.splitlines() if re.search(r"\b(FFMA|HFMA2)\b", line)]
            uniform = sum(bool(re.search(r"\bUR\d+", line)) for line in fmas)
            shown = {k: ops[k] for k in ("FFMA", "HFMA2", "HFMA2.MMA", "LDS", "STS", "MOV", "PRMT", "IMAD") if ops[k]}
            print(f"{name} t={t} {precision}: {sum(ops.values())} instructions {shown}; "
                  f"{uniform} of {len(fmas)} multiply-adds read a uniform register")
    return 0


if __name__ == "__main__":
    sys.exit(main())
