"""The SASS of a launch plan's kernel as the bundled kernels run it: compiled by NVRTC (CuPy's compiler) for the
GPU's architecture, then disassembled by cuobjdump.  nvcc's ptxas may differ from NVRTC's (the 3D CUDA-core kernel
at Box-3D1R FP32 x4: 143 registers from nvcc 13, 130 from NVRTC), so a loop read to explain a timing is read here.

    python benchmarks/nvrtc_sass.py UNIT STENCIL FUSE PRECISION [KNOBS-JSON] [--source DIR] > sass.txt
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu import backend, plans  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402


def nvrtc_sass(plan, source_dir: str | None = None, arch: str | None = None) -> tuple[str, int | None]:
    """(SASS, registers) of ``plan``'s kernel compiled by NVRTC with the options tcadvisor.gpu.backend passes;
    ``source_dir``: take the kernel file from there instead of kernels/ (an older version)."""
    import cupy as cp
    from cupy_backends.cuda.libs import nvrtc

    text = backend._source(plan.source)
    if source_dir:
        mine = os.path.join(source_dir, plan.source)
        if os.path.exists(mine):
            text = backend._LOCAL_INCLUDE.sub(lambda m: backend._source(m.group(1)), open(mine).read())
    if arch is None:
        major, minor = cp.cuda.Device().compute_capability[:-1], cp.cuda.Device().compute_capability[-1]
        arch = f"sm_{major}{minor}"
    options = ["-std=c++17", f"-arch={arch}"] + [f"-D{k}={v}" for k, v in plan.defines]
    prog = nvrtc.createProgram(text, "kernel.cu", [], [])
    try:
        nvrtc.compileProgram(prog, options)
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        sass = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True, check=True).stdout
        res = subprocess.run(["cuobjdump", "-res-usage", path], capture_output=True, text=True).stdout
    regs = re.search(r"REG:(\d+)", res)
    return sass, int(regs[1]) if regs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("unit")
    ap.add_argument("stencil")
    ap.add_argument("fuse", type=int)
    ap.add_argument("precision")
    ap.add_argument("knobs", nargs="?", default="{}")
    ap.add_argument("--source", help="a folder holding another version of the kernel file")
    args = ap.parse_args()
    st, knobs = parse_stencil(args.stencil), json.loads(args.knobs)
    if args.unit == "cuda_core":
        plan = plans.plan_cuda_cores(st, args.fuse, args.precision, **knobs)
    elif args.unit == "tensor_core":
        plan = plans.plan_tensor_cores(st, args.fuse, args.precision, **knobs)
    else:
        plan = plans.plan_sparse_tensor_cores(st, args.fuse, args.precision, **knobs)
    sass, regs = nvrtc_sass(plan, args.source)
    print(f"// {regs} registers", flush=True)
    print(sass)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
