"""The compiler's report (registers, spill bytes) for the tiles the 3D CUDA-core planner tries and the 1D dense
Tensor Core kernels: no GPU needed.

    python benchmarks/ptxas_resources.py [--out kernels/compiled-resources.csv] [--workers 4]

For every 3D shape of the corpus (tcadvisor.validate.corpus.corpus_stencils), Star-3D4R (a Devito
``space_order=8`` operator) and Box-3D4R, in FP64, FP32, FP16 and BF16, at every depth the generic rule plans
(:func:`tcadvisor.gpu.plans.cc3d_generic_tile`; radius-1 depths of CC3D_DEFAULTS are measured
configurations and skipped, but for the FP32 tiles FP16/BF16 borrow: those are compiled first, and where they
spill the generic rule goes on), the candidate tiles of :func:`tcadvisor.gpu.plans.cc3d_tile_candidates`
are compiled in the planner's order with nvcc for sm_90 (``-Xptxas -v``, the options NVRTC gets from
tcadvisor.gpu.backend.module) until one does not spill (at most plans.SPILL_TOLERANCE bytes); a depth where every candidate spills ends the
shape's scan; where kernels/defaults.yaml reads the depth's shared rows as vectors (cc3d_vector_loads), the
chosen tile's build with them too.  Then the dense Tensor Core kernel's default plan in 1D at every fused radius it takes (1 to
tensor_cores.MAX_FUSED_RADIUS_1D) in FP64, TF32, FP16 and BF16, with the instruction it picks on an H100: in
1D its register count grows with the K chunks, faster in 16-bit than the planner's estimate (FP16 at r·t = 64:
156 registers against an estimate of 82), and a warp computes one tile and exits, so the resident warps set the
bytes in flight.  The table is what :func:`tcadvisor.gpu.plans.compiled_resources` reads: the 3D CUDA-core planner
takes the first tile that does not spill, and the dense Tensor Core kernel's occupancy (planner and refined model)
takes the compiler's count over the register estimate wherever its configuration is listed.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.gpu.backend import _source  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402
from tcadvisor.validate.corpus import corpus_stencils  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nvcc_version() -> str:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return f"nvcc {m[2]}" if m else "nvcc"


def compile_report(plan, workdir: str) -> tuple[int, int]:
    """(registers, spill store bytes) of one plan's kernel compiled for sm_90."""
    src = _source(plan.source)
    key = hashlib.sha1((src + repr(plan.defines)).encode()).hexdigest()[:16]
    path = os.path.join(workdir, f"{key}.cu")
    with open(path, "w") as f:
        f.write(src)
    cmd = ["nvcc", "-std=c++17", "-arch=sm_90", "-cubin", "-o", os.path.join(workdir, f"{key}.cubin"),
           "-Xptxas", "-v", path] + [f"-D{k}={v}" for k, v in plan.defines]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900).stderr
    regs = re.search(r"Used (\d+) registers", out)
    spill = re.search(r"(\d+) bytes spill stores", out)
    if not regs:
        raise RuntimeError(f"nvcc failed on {plan.defines}: {out[-800:]}")
    return int(regs[1]), int(spill[1]) if spill else 0


def scan(stencil, precision, workdir, known):
    """Rows for one shape and precision, depth by depth, until a depth where every candidate spills (``known``:
    reports of an earlier table, reused for the same source file and constants)."""
    rows = []

    def record(plan, t, tile):
        key = (plan.source, plans.defines_key(plan.defines))
        regs, spill = known[key] if key in known else compile_report(plan, workdir)
        rows.append({"source": plan.source, "defines": plans.defines_key(plan.defines), "registers": regs,
                     "spill_bytes": spill, "stencil": stencil.name, "precision": precision, "fuse": t, "tile": tile})
        print(f"{stencil.name} {precision} t={t} {tile}: {regs} registers, {spill} B spilled", flush=True)
        return spill

    def vector_build(t):
        """Where kernels/defaults.yaml reads this depth's shared rows as vectors: the build of the tile chosen in
        the residue layout with them (the planner keeps them unless this build spills)."""
        if plans.cc3d_vector_loads_default(stencil, t, precision):
            try:
                plan = plans.plan_cuda_cores(stencil, t, precision, vector_loads=True)
            except TcAdvisorError:
                return
            o = plan.options
            record(plan, t, f"v={o['v']} cols={plan.tile['x']} rows={o['by']} (rows read as vectors)")

    for t in range(1, 17):
        # FP16/BF16 pairs borrowing FP32's measured tile: compiled first; where it spills, the generic rule decides
        borrowed = plans.cc3d_borrowed_table_plan(stencil, t, precision)
        if borrowed is not None:
            o = borrowed.options
            if record(borrowed, t, f"v={o['v']} cols={borrowed.tile['x']} rows={o['by']} (FP32's)") <= plans.SPILL_TOLERANCE:
                vector_build(t)
                continue
            start = plans.cc3d_generic_start(stencil, t)
        else:
            start = plans.cc3d_generic_tile(stencil, t, precision)
            if start is None:
                vector_build(t)
                continue
        found = False
        try:
            for v, by, plan in plans.cc3d_tile_candidates(stencil, t, precision, *start):
                spill = record(plan, t, f"v={v} cols={start[1]} rows={by}")
                if spill <= plans.SPILL_TOLERANCE:
                    found = True
                    vector_build(t)
                    break
        except TcAdvisorError:
            pass
        if not found:
            break
    return rows


def tc1d_rows(workdir, known, pool):
    """The dense Tensor Core kernel's default plan in 1D at every fused radius it takes, in every precision
    (compiled on ``pool``)."""
    from tcadvisor.gpu.tensor_cores import MAX_FUSED_RADIUS_1D
    from tcadvisor.hardware import find_spec
    from tcadvisor.stencil import Stencil
    from tcadvisor.validate.corpus import default_mma

    spec, st, rows = find_spec("h100"), Stencil.box(1, 1), []
    todo = [(precision, R, plans.plan_tensor_cores(st, R, precision,
                                                   default_mma("tensor_core", st, R, precision, spec)))
            for precision in ("fp64", "tf32", "fp16", "bf16") for R in range(1, MAX_FUSED_RADIUS_1D + 1)]

    def report(plan):
        key = (plan.source, plans.defines_key(plan.defines))
        return known[key] if key in known else compile_report(plan, workdir)

    for (precision, R, plan), (regs, spill) in zip(todo, pool.map(lambda job: report(job[2]), todo)):
        rows.append({"source": plan.source, "defines": plans.defines_key(plan.defines), "registers": regs,
                     "spill_bytes": spill, "stencil": f"1D r·t = {R}", "precision": precision, "fuse": 1,
                     "tile": str(plan.mma)})
        print(f"1D r·t = {R} {precision} {plan.mma}: {regs} registers, {spill} B spilled", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "kernels", plans.COMPILED_RESOURCES))
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--fresh", action="store_true", help="compile every configuration, even those the table lists "
                                                          "(needed after a change of kernels/cuda_cores_3d.cu)")
    args = ap.parse_args()
    # Star-3D4R: a Devito space_order=8 operator; Box-3D4R: r·t = 4 in 3D (issue 21 asks every unit to reach it),
    # whose FP64 tile the register estimate alone refused though nvcc spills nothing at t = 1.
    shapes = [s for s in corpus_stencils() if s.dims == 3] + [parse_stencil("Star-3D4R"), parse_stencil("Box-3D4R")]
    # Reports of the table being replaced are reused where its kernel source is unchanged (the key holds the
    # constants only): --fresh compiles everything again.
    known = {} if args.fresh else dict(plans.compiled_resources())
    with tempfile.TemporaryDirectory() as workdir, cf.ThreadPoolExecutor(args.workers) as ex:
        jobs = [ex.submit(scan, s, p, workdir, known) for s in shapes for p in plans.CC_VALUES]
        rows = [r for j in jobs for r in j.result()]
        rows += tc1d_rows(workdir, known, ex)
    rows.sort(key=lambda r: (r["source"], r["stencil"], r["precision"], r["fuse"], r["defines"]))
    cols = ["source", "defines", "registers", "spill_bytes", "stencil", "precision", "fuse", "tile"]
    with open(args.out, "w") as f:
        f.write(f"# {nvcc_version()} for sm_90 (-Xptxas -v), written by benchmarks/ptxas_resources.py; read by\n"
                "# tcadvisor.gpu.plans.compiled_resources: the 3D CUDA-core planner takes the first tile that does\n"
                "# not spill; the dense Tensor Core kernel's occupancy takes these counts over the register estimate.\n")
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(f'"{r[c]}"' if c in ("defines", "tile") else str(r[c]) for c in cols) + "\n")
    print(f"{len(rows)} configurations, {sum(r['spill_bytes'] > 0 for r in rows)} spilling, in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
