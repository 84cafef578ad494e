"""Tuning sweep of the bundled kernels' knobs, one process, one table.

Every variant is first checked against the float64 reference on an odd small
grid, then timed on the large grid (median of repeats, CUDA events).  Used to
choose the defaults in tcadvisor/gpu/cuda_cores.py and tensor_cores.py; the
results of each run are kept under validation/results/.

    python benchmarks/tune_gpu_kernels.py --out DIR [--only SCAN]   (SCAN: a key of SCANS below)
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.stencil import Stencil, parse_stencil  # noqa: E402

#: Custom stencils of the validation corpus (validation/suites/corpus.yaml), by the corpus's names.
UPWIND_2D = Stencil.from_offsets([(-2, 0), (-1, 0), (0, -2), (0, -1), (0, 0)], name="upwind-2d")
DIAGONAL_3D = Stencil.from_offsets([(a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)] + [(0, 0, 0)],
                                   name="diagonal-3d")
UPWIND_3D = Stencil.from_offsets([(-2, 0, 0), (-1, 0, 0), (0, -2, 0), (0, -1, 0), (0, 0, -2), (0, 0, -1), (0, 0, 0)],
                                 name="upwind-3d")
#: Where a scan's ``source`` option takes the kernel files of another commit from (written by the session
#: script with ``git show COMMIT:kernels/FILE``; ignored by git).
OTHER_SOURCES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "kernels-at")


def variants(only):
    out = []
    if only in (None, "cc"):
        for t in range(1, 9):
            for v, cols, nr in ((2, 256, 2), (2, 256, 4), (1, 128, 8), (2, 512, 4), (2, 256, 8), (4, 512, 2)):
                out.append(("Box-2D1R", "double", "10240x10240", "cuda_core", t, None,
                            {"v": v, "cols": cols, "rows_per_iter": nr}))
        for t in range(1, 11):
            for v, cols, nr in ((4, 1024, 2), (4, 1024, 4), (2, 512, 4), (4, 512, 4), (2, 512, 2)):
                out.append(("Box-2D1R", "float", "10240x10240", "cuda_core", t, None,
                            {"v": v, "cols": cols, "rows_per_iter": nr}))
    if only in (None, "tc"):
        knobs = ((True, 1, 4, 1), (True, 2, 4, 1), (True, 1, 8, 1), (True, 1, 2, 1))
        for dtype in ("double", "float"):
            for t in (1, 2, 3, 4):
                shapes = (None,) if dtype == "float" else ((None, "m16n8k4") if t <= 2 else (None, "m16n8k16"))
                for mma in shapes:
                    for bregs, pf, warps, mb in knobs:
                        out.append(("Box-2D1R", dtype, "10240x10240", "tensor_core", t, mma,
                                    {"bregs": bregs, "prefetch": pf, "warps": warps, "min_blocks": mb}))
        for dtype in ("double", "float"):
            for t in (1, 2):
                for mma in ((None, "m16n8k4") if dtype == "double" else (None,)):
                    for bregs, pf, warps, mb in ((True, 1, 4, 1), (False, 0, 4, 1), (True, 0, 4, 1), (False, 0, 8, 1)):
                        out.append(("Box-3D1R", dtype, "512x512x512", "tensor_core", t, mma,
                                    {"bregs": bregs, "prefetch": pf, "warps": warps, "min_blocks": mb}))
    return out


CC3D_CANDIDATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation", "results",
                               "cc3d-plan-2026-11-23", "candidates.csv")


def variants_cc3d(path=CC3D_CANDIDATES):
    """The 3D CUDA-core configurations benchmarks/plan_cc3d.py marked for the scan (compiled and predicted
    without a GPU; by default validation/results/cc3d-plan-2026-11-23/candidates.csv)."""
    out = []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["scan"] != "True":
                continue
            dtype = {"fp64": "double", "fp32": "float"}[row["precision"]]
            opts = {"v": int(row["v"]), "cols": int(row["cols"]), "rows": int(row["rows"]),
                    "trap": row["trap"] == "True", "prefetch": int(row["prefetch"])}
            if int(row.get("rows_per_thread") or 1) != 1:
                opts["rows_per_thread"] = int(row["rows_per_thread"])
            out.append(("Box-3D1R", dtype, "512x512x512", "cuda_core", int(row["fuse"]), None, opts))
    return out


def variants_cc_deep():
    """CUDA cores at deep fusion, where shared memory per block (t + 1 steps x 2 x rows per iteration) limits
    the resident warps: narrower strips and one row per iteration trade ILP for occupancy."""
    out = []
    for t in (7, 9, 11, 13):
        for v, cols, nr in ((2, 256, 2), (2, 256, 1), (1, 128, 2), (1, 128, 1), (2, 512, 1)):
            out.append(("Box-2D1R", "double", "10240x10240", "cuda_core", t, None,
                        {"v": v, "cols": cols, "rows_per_iter": nr}))
    for t in (8, 10, 12, 14):
        for v, cols, nr in ((2, 512, 2), (4, 1024, 2), (2, 512, 1), (4, 1024, 1), (1, 256, 2)):
            out.append(("Box-2D1R", "float", "10240x10240", "cuda_core", t, None,
                        {"v": v, "cols": cols, "rows_per_iter": nr}))
    return out


def variants_cc_async():
    """2D CUDA cores with the next input rows copied into shared memory by cp.async (K_ASYNC) against the
    register path, at the default tile, at the depths the 2026-11-24 benchmark measured best and a few more."""
    out = []
    cases = (("Box-2D1R", "double", (2, 4, 7, 10, 12, 13)), ("Box-2D1R", "float", (3, 6, 8, 10, 14, 16)),
             ("Star-2D1R", "double", (6, 9)), ("Star-2D1R", "float", (10, 14)), ("Box-2D2R", "double", (3, 6)),
             ("Box-2D2R", "float", (4, 8)), ("Box-2D3R", "double", (2,)), ("Box-2D3R", "float", (5,)))
    for name, dtype, depths in cases:
        for t in depths:
            for asy in (False, True):
                out.append((name, dtype, "10240x10240", "cuda_core", t, None, {"async_copy": asy}))
    return out


def variants_cc_async_fp64():
    """After variants_cc_async (FP64 radius 1 gained at most depths, FP32 and radius 2 mostly lost): every depth
    of Box-2D1R and Star-2D1R in FP64, both ways."""
    return [(name, "double", "10240x10240", "cuda_core", t, None, {"async_copy": asy})
            for name in ("Box-2D1R", "Star-2D1R") for t in range(1, 17) for asy in (False, True)]


def variants_cc_async_tiles():
    """With rows copied asynchronously no registers hold the next rows, so more rows per iteration cost only
    shared memory: strip widths and rows per iteration at the FP64 depths near the best, Box-2D1R and
    Star-2D1R; FP32 at its best depths with the async copies as well."""
    out = []
    for name in ("Box-2D1R", "Star-2D1R"):
        for t in (9, 10, 11, 12):
            for v, cols, nr in ((2, 256, 1), (2, 256, 2), (1, 128, 1), (1, 128, 2), (2, 512, 1), (2, 128, 1)):
                out.append((name, "double", "10240x10240", "cuda_core", t, None,
                            {"v": v, "cols": cols, "rows_per_iter": nr, "async_copy": True}))
    for t in (14, 16):
        for v, cols, nr in ((4, 1024, 1), (4, 1024, 2), (2, 512, 1), (2, 512, 2)):
            out.append(("Box-2D1R", "float", "10240x10240", "cuda_core", t, None,
                        {"v": v, "cols": cols, "rows_per_iter": nr, "async_copy": True}))
    return out


def variants_cc_strips_fp64():
    """Box-2D1R FP64 with the async copies at t = 10..13: strip widths between and beyond 256 and 512 columns
    (the 2026-11-24 benchmark's best, 895 at t = 12 with 512, sits just under the issue's 900)."""
    return [("Box-2D1R", "double", "10240x10240", "cuda_core", t, None,
             {"v": 2, "cols": cols, "rows_per_iter": 1, "async_copy": True})
            for t in (10, 11, 12, 13) for cols in (320, 384, 448, 512, 640, 768)]


def variants_cc_direct():
    """2D CUDA cores storing the last step's rows from registers (K_DIRECT) against staging them in shared
    memory, at the defaults otherwise (the FP64 copies included), over the depths near each curve's best."""
    return _cc2d_both_ways("direct_store", fp32_depths=(6, 8, 10, 12, 14, 15, 16))


def _cc2d_both_ways(knob, fp32_depths):
    """2D CUDA cores with ``knob`` off and on, same run, at the defaults otherwise: Box-2D1R and Star-2D1R FP64 at
    t = 4..16 and FP32 at ``fp32_depths``, Box-2D2R at t = 3, 4, 6, 8 and Box-2D3R at t = 2, 5 in both."""
    cases = ((("Box-2D1R", "Star-2D1R"), "double", range(4, 17)),
             (("Box-2D1R", "Star-2D1R"), "float", fp32_depths),
             (("Box-2D2R",), "double", (3, 4, 6, 8)), (("Box-2D2R",), "float", (3, 4, 6, 8)),
             (("Box-2D3R",), "double", (2, 5)), (("Box-2D3R",), "float", (2, 5)))
    return [(name, dtype, "10240x10240", "cuda_core", t, None, {knob: on})
            for names, dtype, depths in cases for name in names for t in depths for on in (False, True)]


def variants_sptc():
    """Sparse Tensor Core kernel: slices loaded ahead, weights in registers or L1, warps and register caps,
    on the issue's performance cases (Box-2D3R and Box-2D1R fused x3, FP16 and TF32)."""
    out = []
    for name, t in (("Box-2D3R", 1), ("Box-2D1R", 3)):
        for dtype in ("half", "float"):
            for opts in ({"prefetch": 0}, {"prefetch": 1}, {"prefetch": 2}, {"prefetch": 0, "unroll": 2},
                         {"prefetch": 1, "unroll": 2}, {"prefetch": 1, "aregs": False}, {"prefetch": 2, "aregs": False},
                         {"prefetch": 1, "warps": 2}, {"prefetch": 1, "min_blocks": 4}, {"aregs": False}):
                out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, opts))
    return out


def variants_tc_loads():
    """Vector vs scalar A loads and register caps (K_MINB) for the 2D Tensor Core kernel."""
    out = []
    for dtype, t, mma in (("float", 3, None), ("float", 2, None), ("float", 4, None), ("double", 3, None),
                          ("double", 3, "m16n8k8"), ("double", 2, None)):
        for vec in (True, False):
            for mb in ((1, 4, 5) if dtype == "float" else (1, 3, 4)):
                out.append(("Box-2D1R", dtype, "10240x10240", "tensor_core", t, mma,
                            {"vector_loads": vec, "min_blocks": mb}))
    return out


def variants_tc_mem():
    """Dense Tensor Cores with the two memory knobs (kernels/tensor_cores.cu K_L2PF, K_BSMEM) against the defaults
    of the time, same run: input rows prefetched into L2 some slices ahead (``l2_prefetch``; the memory-bound
    shallow depths, where a warp keeps too few bytes in flight) and weight fragments read from shared memory
    (``weights_shared``; the deep and 3D configurations, whose L1 weights the compiler hoists into 255 registers
    and spills)."""
    out = []
    b2 = "10240x10240"
    for mma, t in (("m16n8k4", 1), ("m16n8k4", 2), ("m16n8k16", 3), ("m16n8k16", 4)):
        for opts in ({}, {"l2_prefetch": 2}, {"l2_prefetch": 4}, {"l2_prefetch": 8}, {"l2_prefetch": 16}):
            out.append(("Box-2D1R", "double", b2, "tensor_core", t, mma, opts))
    for opts in ({"prefetch": 2}, {"prefetch": 2, "l2_prefetch": 4}, {"prefetch": 0, "l2_prefetch": 4},
                 {"prefetch": 0, "l2_prefetch": 8}, {"weights_shared": True},
                 {"weights_shared": True, "l2_prefetch": 4}, {"weights_shared": True, "l2_prefetch": 8},
                 {"weights_shared": True, "min_blocks": 4, "l2_prefetch": 4},
                 {"weights_shared": True, "prefetch": 2, "l2_prefetch": 4}, {"warps": 8, "l2_prefetch": 4}):
        out.append(("Box-2D1R", "double", b2, "tensor_core", 3, "m16n8k16", opts))
    for dtype, t in (("float", 3), ("float", 4), ("half", 4), ("half", 3)):
        for opts in ({}, {"l2_prefetch": 4}, {"l2_prefetch": 8}):
            out.append(("Box-2D1R", dtype, b2, "tensor_core", t, None, opts))
    for t in (5, 6, 7, 8):
        for opts in ({}, {"weights_shared": True, "prefetch": 0}, {"weights_shared": True, "prefetch": 1},
                     {"weights_shared": True, "prefetch": 1, "l2_prefetch": 4}):
            out.append(("Box-2D1R", "double", b2, "tensor_core", t, None, opts))
    b3 = "512x512x512"
    for opts in ({}, {"l2_prefetch": 2}, {"l2_prefetch": 4}):
        out.append(("Box-3D1R", "double", b3, "tensor_core", 1, None, opts))
    for opts in ({}, {"weights_shared": True, "prefetch": 0}, {"weights_shared": True, "prefetch": 0, "min_blocks": 4},
                 {"weights_shared": True, "prefetch": 1}, {"weights_shared": True, "prefetch": 0, "l2_prefetch": 2},
                 {"weights_shared": True, "prefetch": 0, "warps": 8}, {"weights_shared": True, "prefetch": 0,
                                                                        "warps": 8, "min_blocks": 2}):
        out.append(("Box-3D1R", "double", b3, "tensor_core", 2, None, opts))
    for opts in ({}, {"weights_shared": True}, {"weights_shared": True, "prefetch": 1}):
        out.append(("Box-3D1R", "double", b3, "tensor_core", 3, None, opts))
    for dtype, t in (("float", 2), ("half", 2), ("half", 3), ("float", 3)):
        for opts in ({}, {"weights_shared": True}, {"weights_shared": True, "prefetch": 1}):
            out.append(("Box-3D1R", dtype, b3, "tensor_core", t, None, opts))
    return out


def variants_tc_mem2():
    """After variants_tc_mem (L2 prefetch 2 slices ahead: Box-2D1R FP64 x3 443 -> 502; shared-memory weights with
    one slice of A loaded ahead: FP64 t = 5..8 +23-45 %, Box-3D1R FP64 x2 134 -> 158): the prefetch distance near
    its best at every shallow depth and precision, the shared-memory weights with the L2 prefetch at depth, and the
    3D kernel's occupancy with them, to choose the defaults."""
    out = []
    b2, b3 = "10240x10240", "512x512x512"
    for dtype, depths in (("double", (1, 2, 3, 4)), ("float", (1, 2, 3, 4)), ("half", (1, 2, 3, 4)),
                          ("bfloat16", (4,))):
        for t in depths:
            for l2 in (0, 1, 2, 3, 4, 6):
                out.append(("Box-2D1R", dtype, b2, "tensor_core", t, None, {"l2_prefetch": l2} if l2 else {}))
    for opts in ({"l2_prefetch": 2, "warps": 8}, {"l2_prefetch": 2, "warps": 2}, {"l2_prefetch": 3, "prefetch": 2},
                 {"l2_prefetch": 2, "min_blocks": 3}):
        out.append(("Box-2D1R", "double", b2, "tensor_core", 3, None, opts))
    for dtype, depths in (("double", (5, 6, 7, 8)), ("float", (5, 6, 7)), ("half", (5, 6, 7))):
        for t in depths:
            for opts in ({}, {"weights_shared": True, "prefetch": 1},
                         {"weights_shared": True, "prefetch": 1, "l2_prefetch": 1},
                         {"weights_shared": True, "prefetch": 1, "l2_prefetch": 2},
                         {"weights_shared": True, "prefetch": 2}):
                out.append(("Box-2D1R", dtype, b2, "tensor_core", t, None, opts))
    for dtype, t in (("double", 1), ("float", 1), ("half", 1)):
        for opts in ({}, {"l2_prefetch": 1}, {"l2_prefetch": 2}):
            out.append(("Box-3D1R", dtype, b3, "tensor_core", t, None, opts))
    for dtype, t in (("double", 2), ("float", 2), ("half", 2), ("double", 3), ("float", 3), ("half", 3)):
        for opts in ({}, {"weights_shared": True, "prefetch": 1},
                     {"weights_shared": True, "prefetch": 1, "l2_prefetch": 1},
                     {"weights_shared": True, "prefetch": 1, "l2_prefetch": 2},
                     {"weights_shared": True, "prefetch": 1, "min_blocks": 3},
                     {"weights_shared": True, "prefetch": 1, "warps": 8},
                     {"weights_shared": True, "prefetch": 1, "warps": 2},
                     {"weights_shared": True, "prefetch": 0, "warps": 8, "l2_prefetch": 2}):
            out.append(("Box-3D1R", dtype, b3, "tensor_core", t, None, opts))
    for name, dtype, t in (("Box-2D2R", "double", 2), ("Box-2D3R", "double", 1), ("Box-2D3R", "double", 2),
                           ("Star-2D1R", "double", 3), ("Box-2D2R", "half", 2), ("Box-2D3R", "float", 1)):
        for opts in ({}, {"l2_prefetch": 2}, {"l2_prefetch": 4}, {"weights_shared": True, "prefetch": 1},
                     {"weights_shared": True, "prefetch": 1, "l2_prefetch": 2}):
            out.append((name, dtype, b2, "tensor_core", t, None, opts))
    return out


def variants_tc_shapes():
    """After variants_tc_mem2: the FP64 instruction shapes with the new memory knobs, at the depths the issue
    sets targets for (Box-3D1R x1, x2 short of 170 GStencils/s; Box-2D1R x3, x4)."""
    out = []
    for mma in ("m16n8k4", "m16n8k8", "m16n8k16"):
        for opts in ({"weights_shared": True, "prefetch": 1}, {"weights_shared": True, "prefetch": 0},
                     {"weights_shared": True, "prefetch": 1, "warps": 2}):
            out.append(("Box-3D1R", "double", "512x512x512", "tensor_core", 2, mma, opts))
        out.append(("Box-3D1R", "double", "512x512x512", "tensor_core", 1, mma, {"l2_prefetch": 2}))
        for t in (3, 4):
            out.append(("Box-2D1R", "double", "10240x10240", "tensor_core", t, mma, {"l2_prefetch": 2}))
    return out


def variants_cc_keep():
    """2D CUDA cores keeping each step's own columns in registers (K_KEEP: the next step reads only its halo
    columns from shared memory) against the defaults otherwise, same run, at the depths near each curve's best."""
    return _cc2d_both_ways("keep_columns", fp32_depths=range(6, 17))


def variants_cc_keep_strips():
    """After variants_cc_keep: strip widths with the kept columns near the FP64 best depths, Star-2D1R (its
    fraction of bound, 55 %, just under Box-2D1R's 57 %) and Box-2D1R."""
    return [(name, "double", "10240x10240", "cuda_core", t, None,
             {"v": v, "cols": cols, "rows_per_iter": 1, "keep_columns": True})
            for name in ("Star-2D1R", "Box-2D1R") for t in (9, 10, 11, 12, 13)
            for v, cols in ((2, 256), (2, 512), (1, 128), (2, 384), (1, 256))]


def variants_l2_check():
    """The default configurations that prefetch into L2, dense and sparse, at their defaults: re-timed after a
    refactor of kernels/l2_prefetch.cuh, against the same configurations in a kernel benchmark."""
    b2, b3 = "10240x10240", "512x512x512"
    dense = [("Box-2D1R", "double", b2, t) for t in (2, 3, 4)] + [("Box-2D1R", "float", b2, t) for t in (1, 3, 4)] + [
        ("Box-2D1R", "half", b2, t) for t in (3, 4)] + [("Box-3D1R", "double", b3, 1)]
    sparse = [("Box-2D1R", "float", b2, t) for t in (1, 3, 5, 7)] + [("Box-2D1R", "half", b2, t) for t in (4, 5, 6)] + [
        ("Box-3D1R", "half", b3, t) for t in (1, 3)]
    return ([(n, d, g, "tensor_core", t, None, {}) for n, d, g, t in dense]
            + [(n, d, g, "sparse_tensor_core", t, None, {}) for n, d, g, t in sparse])


def variants_sptc_l2():
    """The Sparse Tensor Core kernel with its input rows prefetched into L2 (``l2_prefetch``, as the dense kernel
    since tc-mem) against its defaults, same run: every precision and depth of Box-2D1R, and the other
    stencils at their depths."""
    out = []
    for dtype in ("half", "float", "bfloat16"):
        for t in range(1, 8):
            for l2 in (0, 1, 2, 3, 4):
                out.append(("Box-2D1R", dtype, "10240x10240", "sparse_tensor_core", t, None,
                            {"l2_prefetch": l2} if l2 else {}))
    for name, grid, depths in (("Box-2D2R", "10240x10240", (1, 2, 3)), ("Box-2D3R", "10240x10240", (1, 2)),
                               ("Box-3D1R", "512x512x512", (1, 2, 3))):
        for dtype in ("half", "float"):
            for t in depths:
                for l2 in (0, 1, 2):
                    out.append((name, dtype, grid, "sparse_tensor_core", t, None, {"l2_prefetch": l2} if l2 else {}))
    return out


def variants_sptc3d():
    """The Sparse Tensor Core kernel in 3D: weight fragments in shared memory and two inner rows per warp against
    its defaults, the dense kernel's default beside each in the same run (issue 21, target 3)."""
    out = []
    knobs = ({}, {"weights_shared": True}, {"inner_rows": 2}, {"weights_shared": True, "inner_rows": 2})
    for dtype in ("half", "float"):
        for name, depths in (("Box-3D1R", (1, 2, 3, 4, 5)), ("Star-3D1R", (1, 2, 3, 4, 5)), ("Box-3D2R", (1, 2)),
                             ("Star-3D2R", (1, 2))):
            for t in depths:
                out.append((name, dtype, "512x512x512", "tensor_core", t, None, {}))
                for opts in knobs:
                    out.append((name, dtype, "512x512x512", "sparse_tensor_core", t, None, opts))
                if dtype == "float":  # TF32 loads 2 slices ahead by default: with two rows, one may fit better
                    out.append((name, dtype, "512x512x512", "sparse_tensor_core", t, None,
                                {"weights_shared": True, "inner_rows": 2, "prefetch": 1}))
    return out


def variants_sptc3d_shape():
    """Second round of sptc3d: the shared-memory, two-row kernel with other block shapes, register caps and slices
    ahead, beside the first round's best in the same run; in 2D, shared-memory weights against the defaults."""
    out = []
    ws = {"weights_shared": True, "inner_rows": 2}
    for dtype in ("half", "float"):
        for name, depths in (("Box-3D1R", (1, 2, 3, 4, 5)), ("Star-3D1R", (1, 2, 3, 4, 5)), ("Box-3D2R", (1, 2)),
                             ("Star-3D2R", (1, 2))):
            for t in depths:
                for extra in ({}, {"warps": 2}, {"warps": 8}, {"min_blocks": 2}, {"prefetch": 0}, {"prefetch": 1},
                              {"prefetch": 2}):
                    out.append((name, dtype, "512x512x512", "sparse_tensor_core", t, None, {**ws, **extra}))
        for name, depths in (("Box-2D1R", (1, 2, 3, 4, 5, 6, 7)), ("Star-2D1R", (1, 3, 5, 7)), ("Box-2D3R", (1, 2))):
            for t in depths:
                for opts in ({}, {"weights_shared": True}):
                    out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, opts))
    return out


def variants_sptc3d_ir4():
    """Third round of sptc3d: four inner rows per warp against the chosen two-row defaults, same run."""
    out = []
    for dtype in ("half", "float"):
        for name, depths in (("Box-3D1R", (1, 2, 3, 4, 5)), ("Star-3D1R", (1, 2, 3, 4, 5)), ("Box-3D2R", (1, 2)),
                             ("Star-3D2R", (1, 2))):
            for t in depths:
                out.append((name, dtype, "512x512x512", "sparse_tensor_core", t, None, {}))
                for pf in (0, 1):
                    out.append((name, dtype, "512x512x512", "sparse_tensor_core", t, None,
                                {"weights_shared": True, "inner_rows": 4, "prefetch": pf}))
    return out


def variants_tc_vectors():
    """The dense Tensor Core kernel with its shared-memory weight fragments read as vectors (the default since
    2026-11-26) against word by word (``shared_words``, before), every default plan that keeps them in shared
    memory among these, same run."""
    out = []
    for dtype in ("half", "float", "double"):
        for name, grid, depths in (("Box-3D1R", "512x512x512", (2, 3, 4, 5)), ("Star-3D1R", "512x512x512", (2, 3, 4, 5)),
                                   ("Star-3D3R", "512x512x512", (1,)), ("Box-3D2R", "512x512x512", (1, 2)),
                                   ("Box-2D1R", "10240x10240", (5, 6, 7, 8))):
            for t in depths:
                for opts in ({}, {"shared_words": True}):
                    out.append((name, dtype, grid, "tensor_core", t, None, opts))
    return out


def variants_sptc2d():
    """The Sparse Tensor Core kernel in 1D/2D with 2 or 4 adjacent x tiles per warp (``x_tiles``: each weight
    fragment read serves that many MMAs), with the weights in L1 or shared memory and other slices ahead, against
    its defaults in the same run; each variant keeps the configuration's default L2 prefetch.  Beside them, the
    2D sparse and 3D dense configurations slower in the evening's corpus than in the morning's, each with the
    kernel file of the morning (``source``: commit 0496040) and the dense weights word by word."""
    from tcadvisor.gpu import defaults

    l2 = defaults.measured().sptc_l2
    out = []

    def add(name, dtype, grid, t, knobs):
        st = parse_stencil(name) if isinstance(name, str) else name
        prec = {"half": "fp16", "bfloat16": "fp16", "float": "tf32"}[dtype]
        pf2 = l2.get((st.dims, prec, st.radius * t), 0)
        for k in knobs:
            out.append((name, dtype, grid, "sparse_tensor_core", t, None,
                        dict(k, l2_prefetch=pf2) if k and pf2 else dict(k)))

    xt2, xt2s, xt4s = {"x_tiles": 2}, {"x_tiles": 2, "weights_shared": True}, {"x_tiles": 4, "weights_shared": True}
    g2 = "10240x10240"
    for t in range(1, 8):
        add("Box-2D1R", "half", g2, t, ({}, xt2, xt2s, xt4s, dict(xt2, prefetch=0), dict(xt2s, prefetch=2)))
        add("Box-2D1R", "float", g2, t, ({}, xt2, xt2s, xt4s, dict(xt2, prefetch=1), dict(xt2s, prefetch=1)))
    for dtype in ("half", "float"):
        for t in (1, 2, 3):
            add("Box-2D2R", dtype, g2, t, ({}, xt2, xt2s, xt4s))
        for t in (1, 2):
            add("Box-2D3R", dtype, g2, t, ({}, xt2, xt2s, xt4s))
    for t in (3, 6):
        add("Box-2D1R", "bfloat16", g2, t, ({}, xt2, xt2s))
    add(UPWIND_2D, "half", g2, 2, ({}, xt2, xt2s))
    morning = {"source": "0496040"}
    for name, dtype, t in ((UPWIND_2D, "half", 2), ("Box-2D1R", "float", 7), ("Star-2D1R", "float", 7)):
        add(name, dtype, g2, t, ({}, ))
        out.append((name, dtype, g2, "sparse_tensor_core", t, None, dict(morning)))
    for dtype in ("half", "bfloat16"):
        for opts in ({}, {"shared_words": True}, {"weights_shared": False}):
            out.append((DIAGONAL_3D, dtype, "512x512x512", "tensor_core", 2, None, opts))
    return out


def variants_sptc2d_grid():
    """Second round of sptc2d (the first showed gains of up to 1.33x and losses of up to 3x between neighbouring
    knobs): every combination of x tiles (1, 2, 4), weights in L1/registers or shared memory, slices ahead and the
    L2 prefetch (none or the configuration's default) for the 2D boxes of fused radius 1-7, FP16 and TF32."""
    from tcadvisor.gpu import defaults

    l2 = defaults.measured().sptc_l2
    out = []
    for dtype, prec, pfs in (("half", "fp16", (0, 1, 2)), ("float", "tf32", (1, 2))):
        for name, depths in (("Box-2D1R", range(1, 8)), ("Box-2D2R", (1, 2, 3)), ("Box-2D3R", (1, 2))):
            st = parse_stencil(name)
            for t in depths:
                pf2 = l2.get((2, prec, st.radius * t), 0)
                out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, {}))
                for xt in (1, 2, 4):
                    for ws in (False, True):
                        for pf in pfs:
                            for l2pf in sorted({0, pf2}):
                                out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None,
                                            {"x_tiles": xt, "weights_shared": ws, "prefetch": pf,
                                             "l2_prefetch": l2pf}))
    morning = {"source": "0496040"}
    for name, dtype, t in ((UPWIND_2D, "half", 2), ("Box-2D1R", "float", 7), ("Star-2D1R", "float", 7)):
        for opts in ({}, morning, {}, morning):
            out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, dict(opts)))
    for dtype in ("half", "bfloat16"):
        for opts in ({}, {"shared_words": True}, {"weights_shared": False}):
            out.append((DIAGONAL_3D, dtype, "512x512x512", "tensor_core", 2, None, opts))
    return out


def variants_sptc2d_shape():
    """Third round of sptc2d: the chosen 2D defaults (kernels/defaults.yaml sparse_tensor_cores) with other block
    shapes, a register cap and two slices per trip, against themselves in the same run."""
    from tcadvisor.gpu import defaults

    chosen = defaults.measured().sptc
    out = []
    for dtype, prec in (("half", "fp16"), ("float", "tf32")):
        for name, depths in (("Box-2D1R", range(1, 8)), ("Box-2D2R", (2, 3))):
            st = parse_stencil(name)
            for t in depths:
                knobs = chosen.get((2, prec, st.radius * t))
                if knobs is None:
                    continue
                out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, {}))
                for extra in ({"warps": 2}, {"warps": 8}, {"min_blocks": 2}, {"unroll": 2}):
                    out.append((name, dtype, "10240x10240", "sparse_tensor_core", t, None, {**knobs, **extra}))
    return out


def variants_cc_ab():
    """The CUDA-core configurations of kernels-7 more than 3 % slower than in kernels-6 (2026-11-24), each with
    today's kernel file and with that of 2026-11-24 (``source``: commit 413caf3, the last CUDA-core change before
    kernels-6), alternating, twice: the code or the machine?"""
    out = []
    for name, dtype, grid, t in (("Star-2D1R", "float", "10240x10240", 11), ("Star-2D1R", "float", "10240x10240", 13),
                                 ("Box-2D1R", "float", "10240x10240", 15), ("Box-2D1R", "float", "10240x10240", 16),
                                 ("Box-2D3R", "float", "10240x10240", 3), ("Box-2D1R", "double", "10240x10240", 3),
                                 ("Box-3D1R", "float", "512x512x512", 3), ("Box-3D1R", "double", "512x512x512", 1)):
        for _ in range(2):
            for opts in ({}, {"source": "413caf3"}):
                out.append((name, dtype, grid, "cuda_core", t, None, dict(opts)))
    return out


def variants_cc_bisect():
    """Which CUDA-core commit of 2026-11-26 cost the FP32 depths cc-ab found slower: the three worst with the kernel
    files of 413caf3 (2026-11-24), 53fc223 (custom tap sets), 5308c1a (FP16/BF16 pairs), 4230aa8 (K_VEC2) and
    today's, alternating, twice."""
    out = []
    for name, dtype, grid, t in (("Star-2D1R", "float", "10240x10240", 11), ("Box-2D1R", "float", "10240x10240", 16),
                                 ("Box-3D1R", "float", "512x512x512", 3)):
        for _ in range(2):
            for source in (None, "413caf3", "53fc223", "5308c1a", "4230aa8"):
                out.append((name, dtype, grid, "cuda_core", t, None, {"source": source} if source else {}))
    return out


def variants_cc_fix():
    """The CUDA-core kernels with their loads and stores indexed as on 2026-11-24 (load_lanes_at, store_lanes_at;
    commit 5e8cafb, reverted since) against today's files (those of d937495, the same code) and 53fc223's (before
    the FP16/BF16 pairs; FP32/FP64 only), alternating, twice: the configurations cc-ab found slower, others as
    controls, and FP16/BF16 pairs.  (Recorded in cc-ab/tuning-fix.csv while 5e8cafb was today's: there its rows
    carry no source and today's carry d937495.)"""
    out = []
    wide = (("Star-2D1R", "float", 11), ("Star-2D1R", "float", 13), ("Box-2D1R", "float", 15),
            ("Box-2D1R", "float", 16), ("Box-2D3R", "float", 3), ("Box-2D1R", "double", 3), ("Box-2D1R", "float", 6),
            ("Box-2D1R", "float", 8), ("Box-2D1R", "double", 11), ("Star-2D1R", "double", 11),
            ("Star-2D1R", "float", 16), ("Box-2D2R", "float", 8), ("Box-2D1R", "half", 1), ("Box-2D1R", "half", 10),
            ("Star-2D1R", "bfloat16", 4))
    deep = (("Box-3D1R", "float", 3), ("Box-3D1R", "double", 1), ("Box-3D1R", "double", 3), ("Box-3D1R", "float", 4),
            ("Box-3D1R", "half", 2), ("Star-3D1R", "float", 2))
    for grid, configs in (("10240x10240", wide), ("512x512x512", deep)):
        for name, dtype, t in configs:
            sources = ("5e8cafb", None) + (("53fc223",) if dtype in ("float", "double") else ())
            for _ in range(2):
                for source in sources:
                    out.append((name, dtype, grid, "cuda_core", t, None, {"source": source} if source else {}))
    return out


def variants_cc_fp32_deep():
    """2D CUDA cores in FP32 around the best depths (Box-2D1R 1561 GStencils/s at t = 15, 2.5 % under the
    issue's 1600): strip widths, columns per thread and the direct stores at t = 12..18."""
    out = []
    for t in (12, 13, 14, 15, 16, 17, 18):
        for v, cols in ((4, 1024), (4, 512), (2, 512), (4, 768), (2, 256)):
            for d in (False, True):
                out.append(("Box-2D1R", "float", "10240x10240", "cuda_core", t, None,
                            {"v": v, "cols": cols, "rows_per_iter": 1, "direct_store": d}))
    return out


def variants_tc_xt():
    """The dense Tensor Core kernel in 2D with 2 or 4 adjacent x tiles per warp (``x_tiles``: each weight fragment
    read serves that many MMAs), FP16 and TF32, where Nsight Compute showed the weight fragments' shared-memory
    traffic binding it (fused radius 3-8): each depth's defaults, then x tiles with the defaults' other knobs,
    with the weights in shared memory (one and no slice ahead, no L2 prefetch) and, where the defaults put them
    in shared memory, in registers or L1 -- same run."""
    from tcadvisor.gpu import defaults

    measured = defaults.measured().tc
    out = []
    for dtype, prec in (("half", "fp16"), ("float", "tf32")):
        for name, depths in (("Box-2D1R", range(3, 9)), ("Box-2D2R", (2, 3, 4)), ("Box-2D3R", (2,))):
            st = parse_stencil(name)
            for t in depths:
                entry = measured.get((2, prec, st.radius * t))
                mma, base = (entry[0], dict(entry[1])) if entry else (None, {})
                ws, pf, l2 = base.get("weights_shared", False), base.get("prefetch", 1), base.get("l2_prefetch", 0)
                out.append((name, dtype, "10240x10240", "tensor_core", t, mma, {}))
                for xt in (2, 4):
                    knobs = [dict(base, x_tiles=xt, weights_shared=ws, prefetch=pf, l2_prefetch=l2),
                             {"x_tiles": xt, "weights_shared": True, "prefetch": 1, "l2_prefetch": 0}]
                    if xt == 2:
                        knobs.append({"x_tiles": xt, "weights_shared": True, "prefetch": 0, "l2_prefetch": 0})
                        if ws:
                            knobs.append({"x_tiles": xt, "weights_shared": False, "prefetch": pf, "l2_prefetch": 2})
                    seen = []
                    for k in knobs:
                        if k not in seen:
                            seen.append(k)
                            out.append((name, dtype, "10240x10240", "tensor_core", t, mma, k))
    return out


def variants_tc_ir():
    """The dense Tensor Core kernel in 3D with 2 or 4 adjacent inner rows per warp (``inner_rows``: each weight
    fragment read serves that many MMAs), FP16, TF32 and FP64 (Nsight Compute on Box-3D1R FP16 t = 3: L1 86 %,
    shared-memory wavefronts 71 %, tensor pipe 33 %): each depth's defaults, then inner rows with the defaults'
    other knobs, with the weights in shared memory (one and no slice ahead) -- same run."""
    from tcadvisor.gpu import defaults

    measured = defaults.measured().tc
    out = []
    cases = [("Box-3D1R", "half", "fp16", (1, 2, 3)), ("Star-3D1R", "half", "fp16", (1, 2, 3)),
             ("Box-3D2R", "half", "fp16", (1,)), ("Box-3D1R", "float", "tf32", (1, 2, 3)),
             ("Star-3D1R", "float", "tf32", (2,)), ("Box-3D1R", "double", "fp64", (1, 2, 3)),
             (DIAGONAL_3D, "half", "fp16", (2,))]
    for name, dtype, prec, depths in cases:
        st = parse_stencil(name) if isinstance(name, str) else name
        for t in depths:
            entry = measured.get((3, prec, st.radius * t))
            mma, base = (entry[0], dict(entry[1])) if entry else (None, {})
            ws = base.get("weights_shared", False)
            out.append((name, dtype, "512x512x512", "tensor_core", t, mma, {}))
            knobs = [dict(base, inner_rows=2), dict(base, inner_rows=4),
                     {"inner_rows": 2, "weights_shared": True, "prefetch": 1},
                     {"inner_rows": 2, "weights_shared": True, "prefetch": 0}]
            seen = []
            for k in knobs:
                k = dict(k, weights_shared=k.get("weights_shared", ws)) if "prefetch" not in k else k
                if k not in seen:
                    seen.append(k)
                    out.append((name, dtype, "512x512x512", "tensor_core", t, mma, k))
    return out


def variants_sptc_stages(dims):
    """The Sparse Tensor Core kernel with its input slices staged in shared memory by cp.async (``stages``: 2, 3,
    4 or 6, in place of the slices ahead in registers), each configuration's other default knobs kept, against its
    defaults in the same run; in 2D also one x tile per warp with shared-memory weights (167 registers: three
    blocks per SM) and two tiles with shared-memory weights, both with 3 stages, and the latter with one slice
    ahead in registers instead (the control).  Nsight Compute's stall samples of
    Box-2D1R x7 FP16 (validation/results/h100-sxm-2026-11-27/stalls/) put 12 % of all samples on the move of the
    slice loaded two slices earlier, waiting for its load (and the next slice's)."""
    from tcadvisor.gpu import defaults

    chosen = defaults.measured().sptc
    l2 = defaults.measured().sptc_l2
    out = []
    g2, g3 = "10240x10240", "512x512x512"
    cases = ([("Box-2D1R", range(1, 8)), ("Box-2D2R", (1, 2, 3)), ("Box-2D3R", (1, 2))] if dims == 2 else
             [("Box-3D1R", (1, 2, 3, 4)), ("Star-3D1R", (1, 2, 3)), ("Box-3D2R", (1,))])
    for dtype, prec in (("half", "fp16"), ("float", "tf32")):
        for name, depths in cases:
            st = parse_stencil(name)
            for t in depths:
                R = st.radius * t
                base = dict(chosen.get((dims, prec, R)) or {})
                if not base and dims == 2:
                    base = {"l2_prefetch": l2.get((2, prec, R), 0)}
                base.pop("prefetch", None)
                grid = g2 if dims == 2 else g3
                out.append((name, dtype, grid, "sparse_tensor_core", t, None, {}))
                for n in (2, 3, 4, 6):
                    out.append((name, dtype, grid, "sparse_tensor_core", t, None, dict(base, prefetch=0, stages=n)))
                if dims == 2:
                    for xt in (1, 2):
                        out.append((name, dtype, grid, "sparse_tensor_core", t, None,
                                    {"x_tiles": xt, "weights_shared": True, "prefetch": 0, "stages": 3,
                                     "l2_prefetch": base.get("l2_prefetch", 0)}))
                    # the same two tiles with shared-memory weights and one slice ahead in registers: the control
                    out.append((name, dtype, grid, "sparse_tensor_core", t, None,
                                {"x_tiles": 2, "weights_shared": True, "prefetch": 1,
                                 "l2_prefetch": base.get("l2_prefetch", 0)}))
    return out


def variants_tc_1d_deep():
    """The dense Tensor Core kernel in 1D beyond r·t = 8, which only the 2D/3D pending accumulators had bounded
    (tensor_cores.MAX_FUSED_RADIUS_1D): Box-1D1R/2R/3R in every precision at depths up to t = 16, with the depths
    the corpus had measured below the old limit as the baseline, and the CUDA-core kernel at t = 16 (its measured
    best in the corpus) beside them -- same run.  The refined model predicts throughput growing about linearly
    with t (memory-bound: K_pad = 2·r·t + 8 MACs per output against t steps per sweep)."""
    out = []
    depths = {"Box-1D1R": (4, 8, 10, 12, 16), "Box-1D2R": (2, 4, 6, 8, 12, 16), "Box-1D3R": (1, 2, 4, 6, 8, 11, 16)}
    for dtype in ("double", "float", "half", "bfloat16"):
        for name, ts in depths.items():
            for t in ts:
                out.append((name, dtype, "134217728", "tensor_core", t, None, {}))
            out.append((name, dtype, "134217728", "cuda_core", 16, None, {}))
    return out


def variants_sptc3d_r2():
    """The Sparse Tensor Core kernel in 3D TF32 at fused radius 2 with its input slices staged (2 stages, the entry
    of the sptc-stages scan) against the entry of before (one slice ahead in registers), on the corpus's 3D shapes of
    that radius -- the corpus had upwind-3d t = 1 at 0.86x with the stages."""
    out = []
    for name, t in (("upwind-3d", 1), ("Box-3D2R", 1), ("Star-3D2R", 1), ("Box-3D1R", 2), ("Star-3D1R", 2),
                    ("diagonal-3d", 2)):
        st = UPWIND_3D if name == "upwind-3d" else DIAGONAL_3D if name == "diagonal-3d" else name
        for knobs in ({"weights_shared": True, "inner_rows": 4, "prefetch": 1},
                      {"weights_shared": True, "inner_rows": 4, "prefetch": 0, "stages": 2}):
            out.append((st, "float", "512x512x512", "sparse_tensor_core", t, None, knobs))
    return out


def variants_tc_1d_rows():
    """Both Tensor Core kernels in 1D with the line launched as rows of one block's warp tiles (a warp streams many
    tiles, the next one in flight) against the line as one row (a warp computes one tile and exits), side by side
    at the defaults otherwise; where the default loads nothing ahead (deep FP64/TF32), rows with one slice ahead
    too; a grid one point short of 2^27 (a tail launch of 511 points); the CUDA-core kernel at t = 16 beside them.
    The refined model, asked first (benchmarks/ask_line_rows.py), predicts 1.13-1.48x where a slice is loaded
    ahead, nothing where none is."""
    from tcadvisor.gpu import plans
    from tcadvisor.hardware import find_spec
    from tcadvisor.validate.corpus import default_mma

    spec = find_spec("h100-calibrated")
    out = []
    dense = {"Box-1D1R": (1, 4, 16), "Box-1D2R": (1, 4, 16), "Box-1D3R": (1, 4, 11)}
    sparse = {"Box-1D1R": (1, 3, 7), "Box-1D2R": (1, 3), "Box-1D3R": (1, 2), "Box-1D7R": (1,)}
    precision = {"double": "fp64", "float": "tf32", "half": "fp16"}
    for dtype in ("double", "float", "half"):
        for name, ts in dense.items():
            st = parse_stencil(name)
            for t in ts:
                for rows in (False, True):
                    out.append((name, dtype, "134217728", "tensor_core", t, None, {"line_rows": rows}))
                mma = default_mma("tensor_core", st, t, precision[dtype], spec)
                plan = plans.plan_tensor_cores(st, t, precision[dtype], mma)
                if plan.options["prefetch"] == 0:
                    out.append((name, dtype, "134217728", "tensor_core", t, None,
                                {"line_rows": True, "prefetch": 1, "weights_shared": plan.options["weights_shared"],
                                 "l2_prefetch": plan.options["l2_prefetch"]}))
        if dtype != "double":
            for name, ts in sparse.items():
                for t in ts:
                    for rows in (False, True):
                        out.append((name, dtype, "134217728", "sparse_tensor_core", t, None, {"line_rows": rows}))
        out.append(("Box-1D1R", dtype, "134217728", "cuda_core", 16, None, {}))
    for unit, t in (("tensor_core", 1), ("tensor_core", 16), ("sparse_tensor_core", 1)):
        for rows in (False, True):
            out.append(("Box-1D1R", "half", "134217727", unit, t, None, {"line_rows": rows}))
    return out


def variants_tc_1d_rows_edge():
    """The dense kernel in FP64 and TF32 between r·t = 1 and 8, where tc-1d-rows found the rows slower (r·t ≤ 4:
    0.86-0.98x on the H200) and faster (r·t ≥ 8), both layouts side by side."""
    out = []
    for dtype in ("double", "float"):
        for name, t in (("Box-1D1R", 2), ("Box-1D1R", 3), ("Box-1D1R", 5), ("Box-1D1R", 6), ("Box-1D1R", 7),
                        ("Box-1D2R", 2), ("Box-1D2R", 3), ("Box-1D3R", 2)):
            for rows in (False, True):
                out.append((name, dtype, "134217728", "tensor_core", t, None, {"line_rows": rows}))
    return out


def variants_sptc_r8():
    """The Sparse Tensor Core kernel at r·t = 8, where each line is two matrices (its even and its odd taps) on the
    same input fragments: the planner's rule and the knobs the R = 5-7 scans chose (shared-memory weights, x tiles,
    stages, slices ahead, the L2 prefetch), for Box-2D1R x8, Box-2D2R x4, Box-2D4R x2 and Star-2D1R x8 in FP16
    and TF32 on 10240^2; beside them the sparse kernel at r·t = 7 of the same stencils (the old limit) and the dense
    kernel at the same depth, same run.  1D: Box-1D1R x8, Box-1D2R x4, Box-1D8R x1 on 2^27 points, one row and
    rows."""
    out = []
    g2, g1 = "10240x10240", "134217728"
    twod = (("Box-2D1R", 8, 7), ("Box-2D2R", 4, None), ("Box-2D4R", 2, None), ("Star-2D1R", 8, 7))
    knobs = [{}, {"weights_shared": True, "prefetch": 1}, {"weights_shared": True, "prefetch": 0, "stages": 3},
             {"weights_shared": True, "x_tiles": 2, "prefetch": 1},
             {"weights_shared": True, "x_tiles": 2, "prefetch": 0, "stages": 3}]
    for dtype in ("half", "float"):
        for name, t, t7 in twod:
            for i, kn in enumerate(knobs):
                out.append((name, dtype, g2, "sparse_tensor_core", t, None, dict(kn)))
                if dtype == "float" and i in (1, 4):  # TF32 gained from the L2 prefetch at every R = 1-7
                    out.append((name, dtype, g2, "sparse_tensor_core", t, None, dict(kn, l2_prefetch=3)))
            if t7:
                out.append((name, dtype, g2, "sparse_tensor_core", t7, None, {}))
            out.append((name, dtype, g2, "tensor_core", t, None, {}))
        for name, t in (("Box-1D1R", 8), ("Box-1D2R", 4), ("Box-1D8R", 1)):
            for rows in (False, True):
                out.append((name, dtype, g1, "sparse_tensor_core", t, None, {"line_rows": rows}))
            out.append((name, dtype, g1, "tensor_core", t, None, {}))
    return out


def variants_sptc_align():
    """The Sparse Tensor Core kernel compiled for its fields' alignment (K_ALIGN) against the kernel of before, whose
    loads and stores took the alignment from a run-time flag and kept both paths in the streaming loop (Nsight's SASS
    of Box-2D1R x7 FP16: the 8 scalar loads of the unaligned path, predicated off, with their packing and addresses,
    in a loop of 228 instructions per 30 mma.sp), side by side at each configuration's defaults: 2D Box-2D1R x1-x8
    and Box-2D2R x1-x3, 3D Box-3D1R x1-x3 and Star-3D1R x2, 1D Box-1D1R x1, x4 and x8, FP16 and TF32.  The kernel
    of before comes from ``build/kernels-at/before-align/`` (``git show f1603d9:kernels/sparse_tensor_cores.cu``),
    which must travel with the run."""
    out = []
    cases = ([("Box-2D1R", t, "10240x10240") for t in range(1, 9)] + [("Box-2D2R", t, "10240x10240") for t in (1, 2, 3)]
             + [("Box-3D1R", t, "512x512x512") for t in (1, 2, 3)] + [("Star-3D1R", 2, "512x512x512")]
             + [("Box-1D1R", t, "134217728") for t in (1, 4, 8)])
    for dtype in ("half", "float"):
        for name, t, grid in cases:
            for source in ("before-align", None):
                out.append((name, dtype, grid, "sparse_tensor_core", t, None, {"source": source} if source else {}))
    return out


def variants_tc_align():
    """The dense Tensor Core kernel compiled for its fields' alignment (``fixed_alignment``, K_ALIGN) beside the same
    configuration with the run-time flag, whose streaming loop issued the scalar path's loads and addresses predicated
    off (SASS of Box-3D1R x2 FP16: 64 16-bit loads beside the 16 vector loads per slice; h200-2026-11-27/tc3d-order/),
    at each configuration's defaults: 3D Box and Star of radius 1 at every depth, of radius 2 at t = 1-2, Box-3D3R
    x1; 2D Box-2D1R x1, x2, x4, x6, x8, Star-2D1R x3, Box-2D2R x2 and x4, Box-2D3R x2; 1D Box-1D1R x1, x4, x16,
    Box-1D2R x16 and Box-1D3R x16; FP16, TF32 and (3D, and 2D R = 1) FP64; BF16 at two."""
    cases = ([("Box-3D1R", t, "512x512x512") for t in range(1, 6)] + [("Star-3D1R", t, "512x512x512") for t in range(1, 5)]
             + [("Box-3D2R", 1, "512x512x512"), ("Box-3D2R", 2, "512x512x512"), ("Star-3D2R", 1, "512x512x512"),
                ("Star-3D2R", 2, "512x512x512"), ("Box-3D3R", 1, "512x512x512")]
             + [("Box-2D1R", t, "10240x10240") for t in (1, 2, 4, 6, 8)]
             + [("Star-2D1R", 3, "10240x10240"), ("Box-2D2R", 2, "10240x10240"), ("Box-2D2R", 4, "10240x10240"),
                ("Box-2D3R", 2, "10240x10240")]
             + [("Box-1D1R", t, "134217728") for t in (1, 4, 16)] + [("Box-1D2R", 16, "134217728"),
                                                                     ("Box-1D3R", 16, "134217728")])
    out = []
    for dtype in ("half", "float", "double"):
        for name, t, grid in cases:
            if dtype == "double" and not ("3D" in name or name == "Box-2D1R"):
                continue
            for fixed in (False, True):
                out.append((name, dtype, grid, "tensor_core", t, None, {"fixed_alignment": fixed}))
    for name, t, grid in (("Box-3D1R", 2, "512x512x512"), ("Box-2D1R", 4, "10240x10240")):
        for fixed in (False, True):
            out.append((name, "bfloat16", grid, "tensor_core", t, None, {"fixed_alignment": fixed}))
    return out


def variants_tc3d_align():
    """3D FP16 at r·t = 1-3, where the alignment build alone lost (tc-align: 0.90-1.00x at r·t = 2-3) or split by
    stencil (r·t = 1): the build beside the default, with the knobs around it changed one at a time (inner rows 1, 2
    or 4, slices ahead 0-2, warps per block, weights in registers, L1 or shared memory), since the default entries
    were measured with the run-time flag's loop.  Box-3D1R and Star-3D1R x1-x3, Box-3D2R and Star-3D2R x1, Box-3D3R x1."""
    out = []
    cases = [("Box-3D1R", t) for t in (1, 2, 3)] + [("Star-3D1R", t) for t in (1, 2, 3)] + [
        ("Box-3D2R", 1), ("Star-3D2R", 1), ("Box-3D3R", 1)]
    for name, t in cases:
        base = _tc_default_knobs(name, "half", t)
        out.append((name, "half", "512x512x512", "tensor_core", t, None, {}))
        changes = [{}, {"inner_rows": 2}, {"inner_rows": 1}, {"prefetch": 0}, {"prefetch": 1}, {"prefetch": 2},
                   {"warps": 8}, {"warps": 2}]
        if base.get("weights_shared"):
            changes += [{"weights_shared": False, "bregs": False}, {"shared_words": not base.get("shared_words")}]
        else:
            changes += [{"weights_shared": True, "shared_words": False, "bregs": False}]
        seen = []
        for ch in changes:
            knobs = dict(base, **ch, fixed_alignment=True)
            if knobs.get("weights_shared"):
                knobs.pop("bregs", None)
            if knobs in seen:
                continue
            seen.append(knobs)
            out.append((name, "half", "512x512x512", "tensor_core", t, None, knobs))
    return out


def variants_cc3d_vld():
    """The 3D CUDA-core kernel with its shared rows in order and read as 8- or 16-byte vectors (``vector_loads``,
    K_VLD) beside the residue layout of before, at each configuration's defaults: the FP32 kernel issues an
    instruction in 79 % of its cycles with the FMA pipe at 59 % (h100-sxm-2026-11-24/ncu-profiles.txt), and the
    refined model, with the loads per update halved, predicts Box-3D1R FP32 1.03-1.05x and Star-3D1R FP32 up to
    1.18x (t = 6).  Box-3D1R and Star-3D1R FP32/FP64 x1-x7 and FP16 x1-x5, Box-3D2R and Star-3D2R FP32 x1-x3 and
    FP64 x1-x2, diagonal-3d and upwind-3d FP32 x1-x3; and FP32 radius 1 at t = 3-6 with four columns per thread
    (16-byte loads), two rows each, which the residue layout's scalar loads had not favoured."""
    g3 = "512x512x512"
    cases = ([(st, dtype, t) for st in ("Box-3D1R", "Star-3D1R") for dtype in ("float", "double")
              for t in range(1, 8)]
             + [(st, "half", t) for st in ("Box-3D1R", "Star-3D1R") for t in range(1, 6)]
             + [(st, "float", t) for st in ("Box-3D2R", "Star-3D2R") for t in (1, 2, 3)]
             + [(st, "double", t) for st in ("Box-3D2R", "Star-3D2R") for t in (1, 2)]
             + [(st, "float", t) for st in (DIAGONAL_3D, UPWIND_3D) for t in (1, 2, 3)])
    out = []
    for st, dtype, t in cases:
        for vld in (False, True):
            out.append((st, dtype, g3, "cuda_core", t, None, {"vector_loads": True} if vld else {}))
    for st in ("Box-3D1R", "Star-3D1R"):
        for t, rows in ((3, 30), (4, 48), (5, 42), (6, 40)):
            out.append((st, "float", g3, "cuda_core", t, None,
                        {"v": 4, "cols": 64, "rows": rows, "rows_per_thread": 2, "trap": True, "vector_loads": True}))
    return out


def variants_cc3d_addr():
    """After cc3d-vld (vector loads 0.5-1.56x; the SASS of Box-3D1R FP32 x4, sass-cc3d-vld/, showed the loop
    recomputing each step's shared-memory thread base and each row's 64-bit global address per plane: about 180
    of its 1187 instructions beside 864 FFMA): the kernel with those hoisted (one thread base, the two plane
    buffers chosen once per iteration, row offsets computed once) beside the file of before (``source``:
    before-cc3d, commit 2b1b916's kernels/cuda_cores_3d.cu, written by the session script) and with the vector
    loads, at each configuration's defaults: the cases of cc3d-vld."""
    out = []
    for st, dtype, grid, unit, t, mma, knobs in variants_cc3d_vld():
        if knobs.get("v"):
            continue
        if not knobs:
            out.append((st, dtype, grid, unit, t, mma, {"source": "before-cc3d"}))
        out.append((st, dtype, grid, unit, t, mma, knobs))
    return out


def variants_cc3d_parts():
    """After cc3d-addr (the hoisted addresses 0.76-1.54x the file of before; Nsight Compute's executed SASS,
    cc3d-sass/: more IMAD, ISETP, SHF and constant loads in FP32, uniform-register moves in FP64): each half of
    that change alone, residue layout, beside the file of before and both halves -- the global row offsets
    computed once (``source``: rowhoist), the shared-memory thread base and the two plane buffers chosen once per
    iteration (smembase); the files are written by benchmarks/cc3d_variants.sh into build/kernels-at/."""
    cases = [("Box-3D1R", "float", t) for t in (2, 3, 4, 5)] + [("Star-3D1R", "float", 4), ("Star-3D1R", "float", 6),
             ("Box-3D1R", "double", 2), ("Box-3D1R", "double", 3), ("Box-3D1R", "half", 2), ("Box-3D1R", "half", 4),
             ("Star-3D1R", "half", 3), ("Star-3D1R", "half", 4), (UPWIND_3D, "float", 1), ("Box-3D2R", "float", 3)]
    out = []
    for st, dtype, t in cases:
        for source in ("before-cc3d", "rowhoist", "smembase", None):
            out.append((st, dtype, "512x512x512", "cuda_core", t, None, {"source": source} if source else {}))
    return out


def variants_cc3d_pairs():
    """After cc3d-parts (the row offsets computed once: FP16 1.02-1.35x, FP32/FP64 0.96-1.02x; so only the FP16/BF16
    pairs' loop takes them): the kernel of today beside the file of before (``source``: before-cc3d), with and
    without the vector loads, for the 3D FP16 cases of cc3d-vld and Box-3D1R and Star-3D1R at t = 6-7.  (A first
    run, h200-2026-11-28/cc3d-pairs-macro/, had the offsets written into one product per row and the measured
    form beside, ``source``: rowhoist: 0.94-1.02x against 1.00-1.35x; today's file preprocesses to the measured
    form's tokens for FP16/BF16 and to the file of before's for FP32/FP64.)"""
    cases = ([(st, t) for st in ("Box-3D1R", "Star-3D1R") for t in range(1, 8)]
             + [(st, t) for st in ("Box-3D2R", "Star-3D2R") for t in (1, 2, 3)]
             + [(st, t) for st in (DIAGONAL_3D, UPWIND_3D) for t in (1, 2, 3)])
    out = []
    for st, t in cases:
        for knobs in ({"source": "before-cc3d"}, {}, {"vector_loads": True}):
            out.append((st, "half", "512x512x512", "cuda_core", t, None, knobs))
    return out


def write_unrolled_variant():
    """build/kernels-at/unroll2/tensor_cores.cu: today's kernels/tensor_cores.cu with ``#pragma unroll 2`` on the
    streaming loop (the experiment of ``--only tc-1d-rows-ahead``; not a bundled kernel)."""
    from tcadvisor.data import data_dir

    text = (data_dir("kernels") / "tensor_cores.cu").read_text()
    loop = "    for (int j = S0 - RS; j < S1 + RS; ++j) {\n#if L2PF > 0\n"
    if text.count(loop) != 1:
        raise TcAdvisorError("kernels/tensor_cores.cu: the streaming loop to unroll is not where it was")
    os.makedirs(os.path.join(OTHER_SOURCES, "unroll2"), exist_ok=True)
    with open(os.path.join(OTHER_SOURCES, "unroll2", "tensor_cores.cu"), "w") as f:
        f.write(text.replace(loop, "#pragma unroll 2\n" + loop))


def variants_tc_1d_rows_ahead():
    """Where the 1D rows lose (tc-1d-rows: dense FP64/TF32 at small r·t, sparse TF32), ways to keep the next slice's
    loads in flight without moving the prefetched registers into place at every slice: the dense kernel's streaming
    loop unrolled by two (``source: unroll2``, build/kernels-at/unroll2/tensor_cores.cu: kernels/tensor_cores.cu
    with ``#pragma unroll 2`` on that loop, so that two register sets take turns), the L2 prefetch of the next
    rows, and for the sparse kernel its own K_UNROLL and shared-memory stages; each beside one row and rows as
    they are, same run.  FP16 and deep FP64 rows with the unrolled loop check that it costs nothing where the
    rows already win.  Measured (validation/results/h100-sxm-2026-11-27/tc-1d-rows-ahead): none closes the gap."""
    write_unrolled_variant()
    out = []
    for dtype in ("double", "float"):
        for name, t in (("Box-1D1R", 1), ("Box-1D1R", 2), ("Box-1D1R", 4), ("Box-1D1R", 6), ("Box-1D2R", 4),
                        ("Box-1D3R", 4)):
            for knobs in ({"line_rows": False}, {"line_rows": True}, {"line_rows": True, "source": "unroll2"},
                          {"line_rows": False, "source": "unroll2"}, {"line_rows": True, "l2_prefetch": 2}):
                out.append((name, dtype, "134217728", "tensor_core", t, None, knobs))
    for dtype, name, t in (("half", "Box-1D1R", 1), ("half", "Box-1D1R", 16), ("double", "Box-1D1R", 16)):
        for knobs in ({"line_rows": True}, {"line_rows": True, "source": "unroll2"}):
            out.append((name, dtype, "134217728", "tensor_core", t, None, knobs))
    for name, t in (("Box-1D1R", 1), ("Box-1D1R", 3), ("Box-1D1R", 7), ("Box-1D2R", 3)):
        for knobs in ({"line_rows": False}, {"line_rows": True}, {"line_rows": True, "unroll": 2},
                      {"line_rows": True, "aregs": True, "prefetch": 0, "stages": 2},
                      {"line_rows": True, "aregs": True, "prefetch": 0, "stages": 3},
                      {"line_rows": True, "aregs": True, "prefetch": 2, "l2_prefetch": 2}):
            out.append((name, "float", "134217728", "sparse_tensor_core", t, None, knobs))
    return out


def variants_sptc_1d_deep():
    """The Sparse Tensor Core kernel in 1D beyond r·t = 8 (the line's window in blocks of 32 columns, each line its
    even and its odd taps): the planner's rule, weights in shared memory, 3 stages, and weights in registers (FP16) or
    read from L1 (TF32, whose rule holds them in registers), for Box-1D1R x8, x12, x16, x32, x64, Box-1D2R x8, x16 and
    Box-1D3R x8, x16 in FP16 and TF32 on 2^27 points (the line as rows, the measured 1D default from r·t = 8), with
    the dense kernel at the same depth beside; and SPIDER's 15-point step fused (Box-1D7R x1, x2, x4, x8, x9, FP16)
    with the dense and CUDA-core kernels beside."""
    out = []
    g1 = "134217728"
    cases = [("Box-1D1R", t) for t in (8, 12, 16, 32, 64)] + [("Box-1D2R", t) for t in (8, 16)] + \
            [("Box-1D3R", t) for t in (8, 16)]
    for dtype in ("half", "float"):
        other_aregs = {"aregs": dtype == "half"}
        for name, t in cases:
            for kn in ({}, {"weights_shared": True}, {"stages": 3, "prefetch": 0}, other_aregs):
                out.append((name, dtype, g1, "sparse_tensor_core", t, None, dict(kn)))
            out.append((name, dtype, g1, "tensor_core", t, None, {}))
    for t in (1, 2, 4, 8, 9):
        for kn in ({}, {"weights_shared": True}, {"stages": 3, "prefetch": 0}):
            out.append(("Box-1D7R", "half", g1, "sparse_tensor_core", t, None, dict(kn)))
        out.append(("Box-1D7R", "half", g1, "tensor_core", t, None, {}))
        out.append(("Box-1D7R", "half", g1, "cuda_core", t, None, {}))
    return out


def variants_sptc_1d_odd():
    """The Sparse Tensor Core kernel in 1D at odd fused radii beyond 8, built for r·t + 1 with its line padded by
    zeros (even_window: an even ghost width, so outputs stored in pairs) against built for r·t (scalar stores), side
    by side: the corpus had Box-1D1R x9 and x11 and Box-1D3R x3 and x11 FP16 at 305-323 million points per second
    and sweep against 460-507 at the even r·t of as many window blocks.  FP16 at r·t = 9, 11, 13, 21, 25, 33, 63,
    BF16 and TF32 at some, 2^27 points; the even r·t 10 and 12 beside them."""
    out = []
    g1 = "134217728"
    cases = [("Box-1D1R", "half", t) for t in (9, 11, 13, 25, 33)] + [("Box-1D3R", "half", t) for t in (3, 11)] + \
            [("Box-1D7R", "half", t) for t in (3, 9)] + [("Box-1D1R", "bfloat16", 11)] + \
            [("Box-1D1R", "float", t) for t in (9, 11, 25)] + [("Box-1D3R", "float", 11)]
    for name, dtype, t in cases:
        for even in (True, False):
            out.append((name, dtype, g1, "sparse_tensor_core", t, None, {"even_window": even}))
    for dtype in ("half", "float"):
        for t in (10, 12):
            out.append(("Box-1D1R", dtype, g1, "sparse_tensor_core", t, None, {}))
    return out


def variants_sptc_1d_ilp():
    """The Sparse Tensor Core kernel in 1D beyond r·t = 8, where Nsight Compute found it bound by the instructions it
    issues (sptc-1d-deep-ncu: 24 instructions per mma.sp at r·t = 64): each lane loading its whole window instead of
    taking half by shuffle (whole_windows), two accumulator chains (two_chains), the build for the fields' alignment
    (fixed_alignment, which the 1D rules never took) and 2 slices per trip (unroll: the slice loaded ahead renamed
    instead of moved), alone and together, against the planner's rule, side by side on 2^27 points: Box-1D1R x12, x16,
    x32, x64, Box-1D2R x16, Box-1D3R x16, Box-1D7R x8 in FP16, Box-1D1R x16, x32, x64 in TF32, Box-1D1R x32 in BF16,
    and Box-1D1R x4, x8 FP16 (r·t ≤ 8, one window block)."""
    out = []
    g1 = "134217728"
    cases = [("Box-1D1R", "half", t) for t in (4, 8, 12, 16, 32, 64)] + [("Box-1D2R", "half", 16),
                                                                         ("Box-1D3R", "half", 16),
                                                                         ("Box-1D7R", "half", 8)] + \
        [("Box-1D1R", "float", t) for t in (16, 32, 64)] + [("Box-1D1R", "bfloat16", 32)]
    knobs = ({}, {"whole_windows": True}, {"two_chains": True}, {"fixed_alignment": True}, {"unroll": 2},
             {"whole_windows": True, "two_chains": True},
             {"whole_windows": True, "two_chains": True, "fixed_alignment": True},
             {"whole_windows": True, "two_chains": True, "fixed_alignment": True, "unroll": 2})
    for name, dtype, t in cases:
        for kn in knobs:
            out.append((name, dtype, g1, "sparse_tensor_core", t, None, dict(kn)))
    return out


def variants_sptc_1d_ilp2():
    """After sptc-1d-ilp (the alignment build alone 1.11-1.24x in FP16 from r·t = 32, with whole windows and two
    chains 1.26-1.30x; TF32 with its stages slower with whole windows): which of the three carries the gain, from which
    r·t (FP16 and BF16 at r·t = 6-64, odd ones built even), and TF32 with and without stages, side by side on 2^27
    points."""
    out = []
    g1 = "134217728"
    A, W, C = {"fixed_alignment": True}, {"whole_windows": True}, {"two_chains": True}
    half = [("Box-1D1R", "half", t) for t in (8, 9, 12, 16, 24, 32, 48, 64)] + \
        [("Box-1D2R", "half", 16), ("Box-1D3R", "half", 2), ("Box-1D3R", "half", 16), ("Box-1D7R", "half", 1),
         ("Box-1D7R", "half", 8), ("Box-1D7R", "half", 9), ("Box-1D1R", "bfloat16", 16), ("Box-1D1R", "bfloat16", 64)]
    for name, dtype, t in half:
        for kn in ({}, A, {**A, **W}, {**A, **C}, {**A, **W, **C}, {**A, **W, **C, "unroll": 2}):
            out.append((name, dtype, g1, "sparse_tensor_core", t, None, dict(kn)))
    tf32 = [("Box-1D1R", "float", t) for t in (12, 16, 24, 32, 48, 64)] + [("Box-1D2R", "float", 16),
                                                                          ("Box-1D3R", "float", 11)]
    for name, dtype, t in tf32:
        for kn in ({}, A, {**A, **C}, {"stages": 0, **A, **W, **C}, {"stages": 0, "prefetch": 1, **A, **W, **C},
                   {"stages": 3, "prefetch": 0, **A, **C}, {"stages": 0, **A, **C}):
            out.append((name, dtype, g1, "sparse_tensor_core", t, None, dict(kn)))
    return out


def variants_sptc_whole_2d3d():
    """Whole windows per lane (no shuffle for the upper half) in 2D and 3D against each configuration's defaults,
    side by side: in 1D beyond r·t = 8 it was what the alignment build needed to gain 1.07-1.28x (sptc-1d-ilp2); in
    2D and 3D the kernel issues more MMAs per loaded vector.  Box-2D1R FP16 x1-x7 and TF32 x3, x5, x7 on 10240^2,
    Box-3D1R FP16 x1-x3 and TF32 x1, x2, Star-3D1R FP16 x2, x3 on 512^3."""
    out = []
    g2, g3 = "10240x10240", "512x512x512"
    cases = [("Box-2D1R", "half", g2, t) for t in range(1, 8)] + [("Box-2D1R", "float", g2, t) for t in (3, 5, 7)] + \
        [("Box-3D1R", "half", g3, t) for t in (1, 2, 3)] + [("Box-3D1R", "float", g3, t) for t in (1, 2)] + \
        [("Star-3D1R", "half", g3, t) for t in (2, 3)]
    for name, dtype, grid, t in cases:
        for kn in ({}, {"whole_windows": True}):
            out.append((name, dtype, grid, "sparse_tensor_core", t, None, dict(kn)))
    return out


def variants_sptc3d_whole():
    """Whole windows per lane in 3D, where Box-3D1R FP16 x2 gained 1.16x (sptc-whole-2d3d; Nsight: a third of its
    stall samples on the shuffles that wait for the window loads), with the slices loaded ahead as measured (each
    configuration's entry of ``sparse_tensor_cores`` in kernels/defaults.yaml, given in full) and with one slice
    ahead more or fewer, side by side on 512^3: Box-3D1R and Star-3D1R x1-x4, Box-3D2R and Star-3D2R x1-x2,
    Box-3D3R x1, FP16 and TF32."""
    from tcadvisor.gpu import defaults

    out = []
    g3 = "512x512x512"
    cases = [(n, t) for n in ("Box-3D1R", "Star-3D1R") for t in (1, 2, 3, 4)] + \
        [(n, t) for n in ("Box-3D2R", "Star-3D2R") for t in (1, 2)] + [("Box-3D3R", 1)]
    for dtype, precision in (("half", "fp16"), ("float", "tf32")):
        for name, t in cases:
            R = parse_stencil(name).radius * t
            base = dict(defaults.measured().sptc.get((3, precision, R), {}))
            flipped = dict(base, prefetch=1 - int(base.get("prefetch", 1) > 0))
            for kn in ({}, {"whole_windows": True}, dict(flipped, whole_windows=True), flipped):
                out.append((name, dtype, g3, "sparse_tensor_core", t, None, dict(kn)))
    return out


def variants_sptc_occupancy():
    """A register cap (``min_blocks``: __launch_bounds__ asks the compiler for 3 or 4 resident blocks of 4 warps,
    168 or 128 registers) against each configuration's measured entry of ``sparse_tensor_cores`` in
    kernels/defaults.yaml (given in full), side by side.  Stall samples of Box-2D1R FP16 x7 at its entry
    (sptc-stalls-now/: 224 registers, 2 blocks of 4 warps per SM, 55 % of the samples "wait" between the 30
    independent mma.sp of a slice) say the warps are too few to keep the tensor pipe busy; nvcc for sm_90 fits
    that configuration in 168 registers without spilling.  2D on 10240^2: Box-2D1R x1-x8, Star-2D1R x3, x5, x7,
    Box-2D2R x2, x3, Box-2D3R x2; 3D on 512^3: Box-3D1R x1-x4, Star-3D1R x2, x3, Box-3D2R x1, x2; FP16 and TF32."""
    from tcadvisor.gpu import defaults

    out = []
    cases = [("Box-2D1R", t) for t in range(1, 9)] + [("Star-2D1R", t) for t in (3, 5, 7)] + \
        [("Box-2D2R", 2), ("Box-2D2R", 3), ("Box-2D3R", 2)] + [("Box-3D1R", t) for t in (1, 2, 3, 4)] + \
        [("Star-3D1R", 2), ("Star-3D1R", 3), ("Box-3D2R", 1), ("Box-3D2R", 2)]
    for dtype, precision in (("half", "fp16"), ("float", "tf32")):
        for name, t in cases:
            st = parse_stencil(name)
            grid = "10240x10240" if st.dims == 2 else "512x512x512"
            base = dict(defaults.measured().sptc.get((st.dims, precision, st.radius * t), {}))
            for kn in ({}, dict(base, min_blocks=3), dict(base, min_blocks=4)):
                out.append((name, dtype, grid, "sparse_tensor_core", t, None, kn))
    return out


def variants_sptc_half_acc():
    """FP16 accumulators (``half_accumulators``: two registers per accumulator fragment instead of four, SPIDER's
    numerics) against each FP16 configuration's measured entry (given in full), with and without a register cap of
    3 or 4 blocks per SM, side by side.  At Box-2D1R x7 nvcc for sm_90 compiles the entry to 224 registers, to 171 with
    FP16 accumulators and to 128 with them and 4 blocks (no spill).  2D on 10240^2: Box-2D1R x1-x8, Star-2D1R x3, x5,
    x7 (at r·t = 7 also 4 x tiles); 3D on 512^3: Box-3D1R x1-x4, Star-3D1R x2, x3."""
    from tcadvisor.gpu import defaults

    out = []
    cases = [("Box-2D1R", t) for t in range(1, 9)] + [("Star-2D1R", t) for t in (3, 5, 7)] + \
        [("Box-3D1R", t) for t in (1, 2, 3, 4)] + [("Star-3D1R", 2), ("Star-3D1R", 3)]
    for name, t in cases:
        st = parse_stencil(name)
        grid = "10240x10240" if st.dims == 2 else "512x512x512"
        R = st.radius * t
        base = dict(defaults.measured().sptc.get((st.dims, "fp16", R), {}))
        half = dict(base, half_accumulators=True)
        kns = [{}, dict(base, min_blocks=3), half, dict(half, min_blocks=3), dict(half, min_blocks=4)]
        if st.dims == 2 and R == 7:
            kns += [dict(half, x_tiles=4), dict(half, x_tiles=4, min_blocks=2)]
        for kn in kns:
            out.append((name, "half", grid, "sparse_tensor_core", t, None, kn))
    return out


def variants_sptc3d_fp16_r2():
    """3D FP16 at fused radius 2 (Box-3D1R x2 at 46 % of its bound, the issue's target 3 asks 50 %) around its entry
    (weights in shared memory, 4 inner rows, one slice ahead, the alignment build, whole windows: 188 registers, two
    blocks of 4 warps per SM): 2 inner rows with 1-4 blocks per SM, 2 or 8 warps per block, no slice ahead with and
    without 3 blocks, 2 or 3 stages; Box-3D1R x2, Star-3D1R x2 and Box-3D2R x1 on 512^3."""
    from tcadvisor.gpu import defaults

    base = dict(defaults.measured().sptc[(3, "fp16", 2)])
    kns = [{}, dict(base, inner_rows=2), dict(base, inner_rows=2, min_blocks=3), dict(base, inner_rows=2, min_blocks=4),
           dict(base, warps=2), dict(base, warps=8), dict(base, prefetch=0), dict(base, prefetch=0, min_blocks=3),
           dict(base, prefetch=0, stages=2), dict(base, prefetch=0, stages=3)]
    return [(name, "half", "512x512x512", "sparse_tensor_core", t, None, kn)
            for name, t in (("Box-3D1R", 2), ("Star-3D1R", 2), ("Box-3D2R", 1)) for kn in kns]


def _tc_default_knobs(name, dtype, t):
    """The knobs that rebuild the dense kernel's default plan of ``name`` x ``t`` (its measured entry or rules) when
    given explicitly, so that a scan can change one of them and keep the others."""
    st = parse_stencil(name)
    plan = _tc_plan(name, dtype, t, {})
    o = plan.options
    knobs = {"bregs": o["bregs"], "weights_shared": o["weights_shared"], "prefetch": o["prefetch"],
             "warps": o["wx"] * o["wi"], "l2_prefetch": o["l2_prefetch"], "min_blocks": o["min_blocks"]}
    if o["weights_shared"]:
        knobs.pop("bregs")
        knobs["shared_words"] = o["shared_words"]
    if o["ir"] > 1:
        knobs["inner_rows" if st.dims == 3 else "x_tiles"] = o["ir"]
    if o["stages"]:
        knobs["stages"] = o["stages"]
    again = _tc_plan(name, dtype, t, knobs)
    assert again.defines == plan.defines, (name, dtype, t, knobs)
    return knobs


def variants_tc16_width():
    """What the ring did not explain (tc-ring, run at commit a2d9a64, where the dense kernel had the knob ``ring``:
    the slices ahead in a ring of register sets instead of moved along; it gained nothing and was taken back): why the
    dense kernel reads DRAM below the copy bandwidth at shallow fusion in 16 bits.  Wider work per warp and per block
    at the same slices ahead: 2 or 4 x tiles per warp and 2 or 8 warps per block in 2D (FP16 and TF32), 2 to 16 warps
    (a block's row of 256 to 2048 points) and the line as one row in 1D, 1 or 2 inner rows and 2 or 8 warps in 3D;
    each beside its default in the same run."""
    grids = {1: "134217728", 2: "10240x10240", 3: "512x512x512"}
    out = []

    def add(name, dtype, t, changes):
        base = _tc_default_knobs(name, dtype, t)
        for ch in changes:
            out.append((name, dtype, grids[parse_stencil(name).dims], "tensor_core", t, None,
                        dict(base, **ch) if ch else {}))

    wide2d = [{}, {"x_tiles": 2}, {"x_tiles": 4}, {"warps": 2}, {"warps": 8}, {"x_tiles": 4, "warps": 2},
              {"x_tiles": 2, "warps": 8}]
    for name, t in (("Box-2D1R", 1), ("Box-2D1R", 2), ("Box-2D2R", 1), ("Star-2D1R", 1)):
        add(name, "half", t, wide2d)
    add("Box-2D1R", "float", 1, [{}, {"x_tiles": 2}, {"x_tiles": 4}])
    for name in ("Box-1D1R", "Box-1D2R"):
        out.append((name, "half", grids[1], "tensor_core", 1, None, {}))
        for w in (2, 8, 16):
            out.append((name, "half", grids[1], "tensor_core", 1, None, {"warps": w, "line_rows": True}))
        out.append((name, "half", grids[1], "tensor_core", 1, None, {"line_rows": False}))
    add("Box-3D1R", "half", 1, [{}, {"inner_rows": 2}, {"inner_rows": 1}, {"warps": 8}, {"warps": 2}])
    return out


def variants_tc_xt_shallow():
    """x tiles at the fused radii the tc-xt scan left out (R = 1 and 2 in 2D), after tc16-width measured four x tiles
    1.09-1.13x at Box-2D1R FP16 t = 1-2 (the refined model, asked first: 1.14x and 1.13x): every 2D precision at
    R = 1 and 2 on Box and Star stencils, 2 or 4 x tiles beside the default, in FP16 also with the L2 prefetch or two
    slices ahead; R = 3 in FP16 with four tiles beside its entry's two."""
    out = []

    def add(name, dtype, t, changes):
        base = _tc_default_knobs(name, dtype, t)
        for ch in changes:
            out.append((name, dtype, "10240x10240", "tensor_core", t, None, dict(base, **ch) if ch else {}))

    for name, t in (("Box-2D1R", 1), ("Star-2D1R", 1), ("Box-2D1R", 2), ("Box-2D2R", 1), ("Star-2D1R", 2)):
        add(name, "half", t, [{}, {"x_tiles": 2}, {"x_tiles": 4}, {"x_tiles": 4, "l2_prefetch": 1},
                              {"x_tiles": 4, "l2_prefetch": 2}, {"x_tiles": 4, "prefetch": 2}])
        add(name, "float", t, [{}, {"x_tiles": 2}, {"x_tiles": 4}, {"x_tiles": 4, "l2_prefetch": 0}])
    for t in (1, 2):
        add("Box-2D1R", "bfloat16", t, [{}, {"x_tiles": 4}])
        add("Box-2D1R", "double", t, [{}, {"x_tiles": 2}, {"x_tiles": 4}])
    for name, t in (("Box-2D1R", 3), ("Box-2D3R", 1)):
        add(name, "half", t, [{}, {"x_tiles": 4}])
    return out


def variants_tc_xt_1d():
    """x tiles in 1D (the dense kernel's K_XT, allowed in 1D since this scan): a warp's 2 or 4 adjacent tiles of a
    row, with and without the L2 prefetch of 2 slices, beside each configuration's default (its rules: the line as
    rows from the radius tensor_cores_1d_rows names), on 2^27 points.  Fused radii R = 1-4, 6, 8, 12, 16, 24 and 32
    in FP16, TF32 and FP64, each on Box-1D1R x R and where R allows on Box-1D2R x R/2 and Box-1D3R x R/3; BF16 at
    R = 1 and 8 (it takes FP16's entries)."""
    out = []
    changes = [{}, {"x_tiles": 2}, {"x_tiles": 4}, {"x_tiles": 4, "l2_prefetch": 2}]
    for R in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32):
        shapes = [("Box-1D1R", R)] + [(f"Box-1D{r}R", R // r) for r in (2, 3) if R % r == 0]
        for dtype in ("half", "float", "double") + (("bfloat16",) if R in (1, 8) else ()):
            for name, t in shapes[:2]:
                base = _tc_default_knobs(name, dtype, t)
                for ch in changes:
                    out.append((name, dtype, "134217728", "tensor_core", t, None, dict(base, **ch) if ch else {}))
    return out


def variants_tc_xt_1d_deep():
    """tc-xt-1d beyond the radii it scanned (R = 40, 48 and 64, to the kernel's limit): the rules of
    tensor_cores_1d_x_tiles at R = 32 (FP16 four x tiles with 2 slices into L2, TF32 the same) beside one tile, on
    Box-1D1R x R and Box-1D2R x R/2, FP16 and TF32, 2^27 points."""
    out = []
    for R in (40, 48, 64):
        for dtype in ("half", "float"):
            for name, t in (("Box-1D1R", R), ("Box-1D2R", R // 2)):
                base = _tc_default_knobs(name, dtype, t)
                base.pop("x_tiles", None)
                base["l2_prefetch"] = 0
                for ch in ({}, {"x_tiles": 4, "l2_prefetch": 2}, {"x_tiles": 2}):
                    out.append((name, dtype, "134217728", "tensor_core", t, None, dict(base, **ch)))
    return out


def variants_cc_prefetch():
    """2D CUDA cores with the input rows of 2 or 3 iterations in flight (K_PF: cp.async groups into a ring of
    buffers) beside the defaults, same run.  Asked first: the refined model, with the bytes in flight per block
    doubled, predicts 1.13-1.42x wherever its DRAM side binds (Star-2D1R FP64 t = 8-12 on the H200: 1.17-1.42x;
    t <= 4 in both precisions: 1.18-1.29x) and nothing where its compute side does (Box-2D1R FP32 t >= 5).
    FP64 Box-2D1R and Star-2D1R at every depth, FP32 at even depths (its default loads through registers: the
    copies alone are timed too), Box-2D2R at a few."""
    out = []
    g2 = "10240x10240"
    ahead = ({"async_copy": True, "prefetch": 2}, {"async_copy": True, "prefetch": 3})
    for name in ("Box-2D1R", "Star-2D1R"):
        for t in range(1, 17):
            for kn in ({},) + ahead:
                out.append((name, "double", g2, "cuda_core", t, None, dict(kn)))
        for t in (2, 4, 6, 8, 10, 12, 14, 16):
            for kn in ({}, {"async_copy": True}) + ahead:
                out.append((name, "float", g2, "cuda_core", t, None, dict(kn)))
    for dtype, depths in (("double", (2, 4, 8)), ("float", (4, 8))):
        for t in depths:
            for kn in ({},) + ahead:
                out.append(("Box-2D2R", dtype, g2, "cuda_core", t, None, dict(kn)))
    return out


def variants_cc_prefetch2(reverse=False):
    """After cc-prefetch (one run, median of 3: Star-2D1R FP64 t >= 8 gained 1.01-1.08x with 3 iterations ahead,
    Box-2D1R FP64 within -3/+6 %, FP32 Star-2D1R t = 10 and 12 1.28x and 1.15x, FP32 t <= 6 lost with any
    copy): the depths where a default could change, again, with 4 iterations ahead too; ``reverse`` times each
    configuration's variants in the opposite order (a second pass, to see the order's and the run's noise)."""
    out = []
    g2 = "10240x10240"
    for name in ("Box-2D1R", "Star-2D1R"):
        for t in range(5, 17):
            kns = [{}] + [{"async_copy": True, "prefetch": n} for n in (2, 3, 4)]
            for kn in (kns[::-1] if reverse else kns):
                out.append((name, "double", g2, "cuda_core", t, None, dict(kn)))
        for t in range(8, 17):
            kns = [{}, {"async_copy": True}] + [{"async_copy": True, "prefetch": n} for n in (2, 3, 4)]
            for kn in (kns[::-1] if reverse else kns):
                out.append((name, "float", g2, "cuda_core", t, None, dict(kn)))
    return out


def variants_cc_prefetch3():
    """After cc-prefetch2 (both orders within 1 %: 4 iterations ahead the best of 2-4 at most depths, still rising
    at some): 4, 6 and 8 iterations ahead at the depths where 4 gained, FP64 from t = 7 and FP32 from t = 11,
    Box-2D1R and Star-2D1R, with the defaults beside."""
    out = []
    for name in ("Box-2D1R", "Star-2D1R"):
        for dtype, depths in (("double", range(7, 17)), ("float", range(11, 17))):
            for t in depths:
                for kn in ({},) + tuple({"async_copy": True, "prefetch": n} for n in (4, 6, 8)):
                    out.append((name, dtype, "10240x10240", "cuda_core", t, None, dict(kn)))
    return out


def variants_cc_pairs_async():
    """FP16/BF16 pairs on 2D CUDA cores with their input rows copied by cp.async (each strip's 16-bit row landed
    planar, packed as step 1 reads it) and several iterations of them in flight, beside the defaults (registers),
    same run.  Nsight Compute (h200-2026-11-28/pairs-ncu/): the pairs' default at Box-2D1R FP16 x16 issues in 53 %
    of cycles with 1.32 long-scoreboard stalls per issue (FP32 with 4 iterations ahead: 72 %, 0.03).  The default
    strips, FP32's deep strip (4 columns, 1024) and two between, with one and four iterations ahead; Box-2D1R and
    Star-2D1R FP16 at 2-16, BF16 at two depths."""
    out = []
    g2 = "10240x10240"
    kns = [{}, {"async_copy": True}, {"async_copy": True, "prefetch": 4},
           {"v": 4, "cols": 1024}, {"v": 4, "cols": 1024, "async_copy": True},
           {"v": 4, "cols": 1024, "async_copy": True, "prefetch": 4},
           {"v": 2, "cols": 512, "async_copy": True, "prefetch": 4}, {"v": 4, "cols": 512, "async_copy": True, "prefetch": 4},
           {"v": 4, "cols": 256, "async_copy": True, "prefetch": 4}]
    for name in ("Box-2D1R", "Star-2D1R"):
        for t in (2, 3, 4, 6, 8, 10, 12, 16):
            for kn in kns:
                out.append((name, "half", g2, "cuda_core", t, None, dict(kn)))
    for t in (8, 16):
        for kn in kns[:3] + kns[5:6]:
            out.append(("Box-2D1R", "bfloat16", g2, "cuda_core", t, None, dict(kn)))
    return out


def variants_cc_ahead_radii():
    """After cc-pairs-async (radius 1): the copies with 1 and 4 iterations of input rows ahead at radii 2-4, box and
    star, beside each configuration's default, same run: FP16 (whose pairs load through registers there; FP32's deep
    strip of 4 columns and 512 too), FP32 and FP64 (whose rows ahead are radius 1's rule only)."""
    out = []
    g2 = "10240x10240"
    depths = {2: (2, 3, 4, 6, 8), 3: (2, 3, 4, 5), 4: (2, 3, 4)}
    for r, ts in depths.items():
        for shape in ("Box", "Star"):
            name = f"{shape}-2D{r}R"
            for t in ts:
                for dtype in ("half", "float", "double"):
                    kns = [{}, {"async_copy": True, "prefetch": 4}]
                    if dtype != "double":
                        kns.insert(1, {"async_copy": True})
                    if dtype == "half":
                        kns.append({"v": 4, "cols": 512, "async_copy": True, "prefetch": 4})
                    for kn in kns:
                        out.append((name, dtype, g2, "cuda_core", t, None, dict(kn)))
    return out


def variants_cc_ahead_deep():
    """After cc-ahead-radii (FP32 and FP64 at radii 2-4 gained little or lost with the copies at t <= 6, but
    Star-2D2R x8 gained 1.14x in FP32 and 1.50x in FP64, Box-2D2R 1.04x and 1.02x): the deeper depths that scan did
    not reach, radius 2 at t = 6-12 and radius 3 at t = 4-8, with 2, 4 and 6 iterations ahead beside the defaults,
    box and star, FP32 and FP64 -- enough to say from which depth a rule holds, or that none does."""
    out = []
    g2 = "10240x10240"
    for r, depths in ((2, (6, 7, 8, 10, 12)), (3, (4, 5, 6, 8))):
        for shape in ("Box", "Star"):
            for t in depths:
                for dtype in ("float", "double"):
                    for kn in ({},) + tuple({"async_copy": True, "prefetch": n} for n in (2, 4, 6)):
                        out.append((f"{shape}-2D{r}R", dtype, g2, "cuda_core", t, None, dict(kn)))
    return out


def variants_cc1d_points():
    """The 1D CUDA-core tile kernel at depth with more points per thread beside the defaults (FP32 and the FP16/BF16
    pairs 16, FP64 8, 256 threads): Nsight Compute put the default FP32 x16 at 0.78 instructions issued per
    scheduler and cycle with 768 of its 1200 SASS instructions FFMA, the rest each tile's set-up and store path
    (validation/results/h200-2026-12-01/NOTES.md), which twice the points per thread pays once for twice the FMAs.
    Box-1D1R-1D3R at t = 8, 12 and 16 on 2^27 points, FP64, FP32 and FP16; 128 and 256 threads of twice the points."""
    out = []
    for r in (1, 2, 3):
        for dtype, v in (("double", 8), ("float", 16), ("half", 16)):
            for t in (8, 12, 16):
                for kn in ({}, {"v": 2 * v, "cols": 128 * 2 * v}, {"v": 2 * v, "cols": 256 * 2 * v}):
                    out.append((f"Box-1D{r}R", dtype, "134217728", "cuda_core", t, None, dict(kn)))
    return out


#: The 1D dense configurations the ``tc-1d-stages`` scan times: (stencil, depths), fused radii 2 to 48.
TC_1D_STAGES_CONFIGS = (("Box-1D1R", (4, 16)), ("Box-1D2R", (2, 8, 16)), ("Box-1D3R", (4, 8, 16)))
TC_1D_STAGES = (2, 3, 4)


def variants_tc_1d_stages():
    """The dense kernel's strips of a 1D line staged in shared memory by cp.async (``stages``, K_STAGES) against
    its default, same run: where the bytes a warp keeps in flight are the slices loaded ahead into registers, a
    staged strip holds its bytes once and costs no register (kernels/tensor_cores.cu, "Why K_STAGES").  Each
    configuration's default knobs (``_tc_default_knobs``) with 2, 3 or 4 stages and nothing ahead in registers;
    FP64, TF32 and FP16 on 2^27 points, BF16 at the deepest depth of each stencil."""
    out = []
    for name, depths in TC_1D_STAGES_CONFIGS:
        for dtype in ("double", "float", "half", "bfloat16"):
            for t in depths if dtype != "bfloat16" else depths[-1:]:
                base = _tc_default_knobs(name, dtype, t)
                for kn in [{}] + [dict(base, prefetch=0, stages=s) for s in TC_1D_STAGES]:
                    out.append((name, dtype, "134217728", "tensor_core", t, None, kn))
    return out


#: The 2D and 3D dense configurations the ``tc-stages-2d3d`` scan times: (stencil, depths), the shallow depths where
#: the corpus's runs read DRAM at 29-66 % of its bandwidth and the refined model said 1.1-1.7x for staged slices.
TC_STAGES_2D3D_CONFIGS = (("Box-2D1R", (1, 2, 4)), ("Star-2D1R", (1, 2, 4)), ("Box-2D2R", (1, 2)), ("Star-2D2R", (2,)),
                          ("Box-2D3R", (1,)), ("Box-3D1R", (1, 2)), ("Star-3D1R", (1, 2)), ("Star-3D2R", (1, 2)),
                          ("Star-3D3R", (1,)))


def variants_tc_stages_2d3d():
    """The dense kernel's slices staged in shared memory in 2D (a row per slice) and 3D (a slice's ni + ir - 1 rows)
    against its default, same run: at shallow fusion the slice ahead in registers (prefetch 1) is a second set of A
    fragments beside the pending accumulators, and the registers leave 2 blocks per SM (kernels/tensor_cores.cu,
    "Why K_STAGES").  Each configuration's default knobs (``_tc_default_knobs``) with 2, 3 or 4 stages and nothing
    ahead in registers (where the default asks the L2 for slices ahead, also 4 stages without that); FP64, TF32 and
    FP16 on 10240^2 and 512^3 points.  A variant whose block needs more than an
    SM's 227 KiB of shared memory (Star-3D2R FP64 x2 with 4 stages beside its weights) is left out."""
    out = []
    for name, depths in TC_STAGES_2D3D_CONFIGS:
        grid = "512x512x512" if "3D" in name else "10240x10240"
        for dtype in ("double", "float", "half"):
            for t in depths:
                base = _tc_default_knobs(name, dtype, t)
                kns = [{}] + [dict(base, prefetch=0, stages=s) for s in TC_1D_STAGES]
                if base.get("l2_prefetch"):  # the stages' slices in flight in place of the L2 prefetch's
                    kns.append(dict(base, prefetch=0, stages=4, l2_prefetch=0))
                for kn in kns:
                    if kn and _tc_plan(name, dtype, t, kn).smem > 227 * 1024:
                        continue
                    out.append((name, dtype, grid, "tensor_core", t, None, kn))
    return out


#: The 3D dense configurations of the ``tc-stages-3d-warps`` scan: (stencil, depths) two stencils per fused radius r·t
#: = 1-4 (the stage entries are per fused radius), FP64 only at r·t <= 2 (at 3-4 it is bound by its MMAs and meets
#: its own-roofline target).
TC_STAGES_3D_CONFIGS = (("Box-3D1R", (1, 2, 3, 4)), ("Star-3D1R", (1, 2, 3, 4)), ("Box-3D2R", (1, 2)),
                        ("Star-3D2R", (1, 2)), ("Box-3D3R", (1,)), ("Star-3D3R", (1,)))


def tc_stages_3d_variants(name, dtype, t):
    """The knob sets the ``tc-stages-3d-warps`` scan times beside the default of one configuration: 2, 3 or 4 stages
    (nothing ahead in registers, nothing asked of the L2) with 2 or 4 warps per block, and 8 where the default has 8,
    each whose block fits an SM's 227 KiB.  Fewer warps per block divide a block's stages between fewer warps, so
    that a staged 3D block keeps within the 99 KiB every GPU the specs model lets a block have (3D TF32 at r·t = 3
    staged 1.30-1.55x with its 8 warps, at 112-199 KiB: h200-2026-12-02/tc-stages-2d3d/lean-run), while the SM
    holds as many warps as the registers allow in more, smaller blocks."""
    base = _tc_default_knobs(name, dtype, t)
    out = []
    for w in sorted({2, 4, base.get("warps", 4)}):
        for s in TC_1D_STAGES:
            kn = dict(base, prefetch=0, stages=s, warps=w, l2_prefetch=0)
            if _tc_plan(name, dtype, t, kn).smem <= 227 * 1024:
                out.append(kn)
    return out


def tc_stages_3d_configurations():
    """(stencil, dtype, depth) of the ``tc-stages-3d-warps`` scan: TC_STAGES_3D_CONFIGS in FP16 and TF32, FP64 at
    r·t <= 2."""
    return [(name, dtype, t) for name, depths in TC_STAGES_3D_CONFIGS for dtype in ("double", "float", "half")
            for t in depths if dtype != "double" or int(name[-2]) * t <= 2]


def variants_tc_stages_3d_warps():
    """The dense kernel's 3D slices staged in shared memory at every fused radius 1-4, with 2, 4 (or the default's 8)
    warps per block, beside each configuration's default in the same run (``tc_stages_3d_variants``) on 512^3
    points."""
    return [(name, dtype, "512x512x512", "tensor_core", t, None, kn) for name, dtype, t in tc_stages_3d_configurations()
            for kn in [{}] + tc_stages_3d_variants(name, dtype, t)]


def variants_tc_stages_lean():
    """The staged dense kernel as compiled today beside the kernel file of commit 1c6b82c (``source``:
    build/kernels-at/1c6b82c/tensor_cores.cu), the same plans, alternating, twice.  Today's stages copy a count of
    chunks fixed per launch from a pointer advanced by a slice pitch, and the 16-bit path reads a lane's 8 bytes as
    two 4-byte loads into the registers the MMA reads (the 8-byte loads had filled register pairs that 84 moves per
    slice rearranged; static SASS of the streaming loop, Box-2D2R FP16 x2 with 4 x tiles: 416 -> 340 instructions
    for 36 MMAs; Box-2D1R TF32 x4 161 -> 137; Box-1D3R FP16 x16 147 -> 130).  The plans do not change, so the
    refined model says 1.00x."""
    configs = [("Box-2D2R", "half", "10240x10240", 2, 4), ("Box-2D1R", "half", "10240x10240", 2, 4),
               ("Box-2D1R", "float", "10240x10240", 4, 2), ("Box-2D1R", "double", "10240x10240", 1, 2),
               ("Box-3D1R", "half", "512x512x512", 1, 3), ("Box-1D3R", "half", "134217728", 16, None),
               ("Box-1D3R", "bfloat16", "134217728", 16, None), ("Box-1D3R", "double", "134217728", 16, None),
               ("Box-1D2R", "float", "134217728", 8, None)]
    out = []
    for name, dtype, grid, t, stages in configs:
        base = _tc_default_knobs(name, dtype, t)
        kn = dict(base, prefetch=0, stages=stages) if stages else base
        for _ in range(2):
            for src in (None, "1c6b82c"):
                out.append((name, dtype, grid, "tensor_core", t, None, dict(kn, source=src) if src else kn))
    return out


def _tc_plan(name, dtype, t, knobs):
    """The dense kernel's plan of ``name`` x ``t`` with ``knobs`` on its least-padding MMA shape."""
    from tcadvisor.gpu import plans
    from tcadvisor.gpu.tensor_cores import SHAPES
    from tcadvisor.mma import MmaShape
    from tcadvisor.transforms import least_padding_shape

    st = parse_stencil(name)
    prec = {"double": "fp64", "float": "tf32", "half": "fp16", "bfloat16": "bf16"}[dtype]
    shape = least_padding_shape("rowband", st.fused_mask(t), tuple(MmaShape.parse(s) for s in SHAPES[prec]))
    return plans.plan_tensor_cores(st, t, prec, shape, **knobs)


def variants_tc_1d_stages_occupancy():
    """After ``tc-1d-stages``: the staged 1D kernel in FP64 and TF32 at depth holds 2-3 blocks per SM by its
    registers (Nsight on Box-1D3R FP64 x16 with 3 stages: 190 registers, 12.5 % occupancy, DRAM 51 %).  Its weight
    fragments in shared memory (as vectors) free a register per weight word; more stages keep more strips in
    flight per warp; TF32 with one x tile per warp holds a quarter of the A fragments.  Each beside today's default
    (3 stages), same run, at r·t = 16-48 on 2^27 points."""
    out = []
    for name, t in (("Box-1D1R", 16), ("Box-1D2R", 8), ("Box-1D2R", 16), ("Box-1D3R", 8), ("Box-1D3R", 16)):
        for dtype in ("double", "float"):
            base = _tc_default_knobs(name, dtype, t)
            shared = {k: v for k, v in base.items() if k != "bregs"}
            kns = [{}, dict(shared, weights_shared=True), dict(shared, weights_shared=True, stages=4),
                   dict(base, stages=6)]
            if base.get("x_tiles"):
                kns.append({k: v for k, v in base.items() if k != "x_tiles"})
            out += [(name, dtype, "134217728", "tensor_core", t, None, kn) for kn in kns]
    return out


def variants_cc1d_codegen():
    """The 1D CUDA-core tile kernel as compiled today beside the kernel file of commit 12c6720 (``source``:
    build/kernels-at/12c6720/cuda_cores_1d.cu, copied there from git before the run), the same launch plans,
    alternating, twice.  Today's file stores whole vectors with one instruction each (nvcc had split them into
    scalar stores), takes the vectors that straddle a tile's output edge out of line (nvcc had computed all their
    per-element conditions at every block's start) and finds each vector's staging slot without a division:
    about 0.1-0.3 of the instructions per FMA fewer in the static SASS at depth, where Nsight Compute put the
    kernel at its instruction issue (validation/results/h200-2026-12-01/NOTES.md).  The plans do not change, so
    the refined model predicts 1.00x throughout.  Box-1D1R-1D3R at t = 1, 4, 8, 16 on 2^27 points in FP64, FP32
    and FP16, BF16 on Box-1D2R."""
    configs = [(f"Box-1D{r}R", dtype, t) for r in (1, 2, 3) for dtype in ("double", "float", "half")
               for t in (1, 4, 8, 16)]
    configs += [("Box-1D2R", "bfloat16", t) for t in (1, 16)]
    return _cc1d_sources_alternating(configs, ("12c6720",))


def _cc1d_sources_alternating(configs, commits):
    """Each 1D CUDA-core configuration (stencil, dtype, depth) on 2^27 points with today's kernel files and with
    those of each commit (``source``: build/kernels-at/COMMIT/), one after the other, twice."""
    out = []
    for name, dtype, t in configs:
        for _ in range(2):
            for kn in ({},) + tuple({"source": c} for c in commits):
                out.append((name, dtype, "134217728", "cuda_core", t, None, dict(kn)))
    return out


def variants_cc1d_points_again(depths=(4, 8, 12, 16)):
    """`cc1d-points` again after the tile kernel's code generation changed (``cc1d-codegen``: 72 registers where
    95 were, fewer instructions per tile), with the generic tile named, so that `tile1d_deep` is chosen against it
    on today's code: Box-1D1R-1D3R at the ``depths`` (``cc1d-points-final``: t = 10 too) on 2^27 points in FP64, FP32
    and FP16, the defaults beside
    256 threads of the generic points per thread (FP64 8, FP32 and FP16 16), 128 and 256 threads of twice as many."""
    out = []
    for r in (1, 2, 3):
        for dtype, v in (("double", 8), ("float", 16), ("half", 16)):
            for t in depths:
                for kn in ({}, {"v": v, "cols": 256 * v}, {"v": 2 * v, "cols": 128 * 2 * v},
                           {"v": 2 * v, "cols": 256 * 2 * v}):
                    out.append((f"Box-1D{r}R", dtype, "134217728", "cuda_core", t, None, dict(kn)))
    return out


def variants_cc1d_codegen2():
    """Today's 1D tile kernel file (the straddling vectors inline again, their conditions in domain points) beside
    that of d52938a (the same vectors through an out-of-line function, whose call convention cost registers:
    Box-1D3R FP16 x2 58 -> 72, and lost 5 % in the corpus) and that of 12c6720 (before either), the same plans,
    alternating, twice: Box-1D1R-1D3R at t = 1, 2, 4, 16 on 2^27 points in FP64, FP32 and FP16, BF16 on Box-1D3R
    at t = 2."""
    configs = [(f"Box-1D{r}R", dtype, t) for r in (1, 2, 3) for dtype in ("double", "float", "half")
               for t in (1, 2, 4, 16)] + [("Box-1D3R", "bfloat16", 2)]
    return _cc1d_sources_alternating(configs, ("d52938a", "12c6720"))


#: A radius-1 3D shape no suite, scan or issue lists (centre, 6 faces and 12 edges: the D3Q19 lattice's
#: neighbourhood), held out of the cc3d-nonbox choice with diagonal-3d.
FACE_EDGE_3D = Stencil.from_offsets([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
                                     if abs(a) + abs(b) + abs(c) <= 2], name="face-edge-3d")
#: Tiles every radius-1 depth of the cc3d-nonbox scan also tries: fewer threads per block and planes in flight,
#: for stencils whose few FMAs per point leave the box's large tiles waiting on memory.
CC3D_SMALL_TILES = ((2, 64, 16, 1, 2), (2, 64, 16, 2, 2), (2, 64, 24, 2, 2), (2, 68, 24, 2, 1), (2, 64, 32, 1, 2),
                    (2, 130, 18, 2, 2), (4, 64, 24, 1, 2), (2, 64, 24, 1, 3), (2, 64, 32, 2, 2), (4, 68, 20, 2, 2))
CC3D_BOX_SCANS = ("h100-sxm-2026-11-24/cc3d-wide/tuning-double.csv", "h100-sxm-2026-11-24/cc3d-wide/tuning-float.csv",
                  "h100-sxm-2026-11-24/cc3d-focus/tuning-float.csv")


def cc3d_nonbox_candidates(dtype, t, best_box=6):
    """The radius-1 3D CUDA-core tiles (v, cols, rows, rows per thread, planes in flight) the cc3d-nonbox scan
    times at one storage type and depth: the ``best_box`` fastest distinct tiles Box-3D1R measured in the scans
    that made ``cc3d_radius1`` (FP32's for the FP16/BF16 pairs), and :data:`CC3D_SMALL_TILES`; those the planner
    refuses (rows or columns too few for the halo) are left out."""
    import ast

    from tcadvisor.gpu import plans

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation", "results")
    measured = {}
    for name in CC3D_BOX_SCANS:
        with open(os.path.join(root, name)) as f:
            for row in csv.DictReader(f):
                if row["correct"] != "True" or int(row["fuse"]) != t:
                    continue
                if row["dtype"] != ("double" if dtype == "double" else "float"):
                    continue
                o = ast.literal_eval(row["options"])
                if not o.get("trap"):
                    continue
                tile = (o["v"], o["cols"], o["rows"], o.get("rows_per_thread", 1), o.get("prefetch", 1))
                measured[tile] = max(measured.get(tile, 0.0), float(row["gstencils"]))
    ranked = sorted(measured, key=measured.get, reverse=True)[:best_box]
    precision = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}[dtype]
    out = []
    for tile in list(ranked) + [x for x in CC3D_SMALL_TILES if x not in ranked]:
        v, cols, rows, w, pf = tile
        try:
            plan = plans.plan_cuda_cores(Stencil.star(3, 1), t, precision, v=v, cols=cols, rows=rows, trap=True,
                                         prefetch=pf, rows_per_thread=w)
        except TcAdvisorError:
            continue
        if plan.smem > plans.BLOCK_SMEM_LIMIT:
            continue
        out.append(tile)
    return out


def _cc3d_knobs(tile):
    v, cols, rows, w, pf = tile
    return {"v": v, "cols": cols, "rows": rows, "trap": True, "prefetch": pf, "rows_per_thread": w}


CC3D_NONBOX_DEPTHS = {"double": range(1, 8), "float": range(1, 8), "half": range(1, 7)}


def variants_cc3d_nonbox():
    """The radius-1 3D CUDA-core tiles for stencils that are not the 27-point box: ``cc3d_radius1`` was measured
    on Box-3D1R alone, and Star-3D1R on that tile ran slower at t = 2 than at t = 1 on the H200 (FP32 303 against
    308 GStencils/s, 615 at t = 3; the H100 alike).  Star-3D1R at every depth and storage type, the default
    and each of :func:`cc3d_nonbox_candidates`; the choice is made on these runs alone (cc3d-nonbox-heldout)."""
    return _cc3d_tile_scan("Star-3D1R", CC3D_NONBOX_DEPTHS)


def _cc3d_tile_scan(stencil, depths_by_dtype):
    """``stencil`` on 512^3 at each storage type and depth: its default, then each of :func:`cc3d_nonbox_candidates`."""
    out = []
    for dtype, depths in depths_by_dtype.items():
        for t in depths:
            out.append((stencil, dtype, "512x512x512", "cuda_core", t, None, {}))
            for tile in cc3d_nonbox_candidates(dtype, t):
                out.append((stencil, dtype, "512x512x512", "cuda_core", t, None, _cc3d_knobs(tile)))
    return out


def _cc3d_picks_on(picks, shapes):
    """Each shape at its default and at each (dtype, t) pick's tile, side by side."""
    out = []
    for (dtype, t), tile in sorted(picks.items()):
        for st in shapes:
            out.append((st, dtype, "512x512x512", "cuda_core", t, None, {}))
            out.append((st, dtype, "512x512x512", "cuda_core", t, None, _cc3d_knobs(tile)))
    return out


def print_cc3d_tile_tables(scan_csv, heldout_csv, stencil):
    """The two tables a cc3d tile session prints last: per storage type and depth, the scanned stencil's default
    and the best of the scan over it; then each held-out run at the pick over its default."""
    with open(scan_csv) as f:
        rows = list(csv.DictReader(f))
    base = {(r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
    print(f"{stencil}: default, best of the scan over it, its tile")
    for key, b in sorted(base.items()):
        mine = [r for r in rows if (r["dtype"], r["fuse"]) == key and r["correct"] == "True"]
        best = max(mine, key=lambda r: float(r["gstencils"]))
        print(f"{key[0]:6} t={key[1]} {b:7.1f} {float(best['gstencils']) / b:.3f} {best['options']}")
    with open(heldout_csv) as f:
        held = list(csv.DictReader(f))
    print("held out: pick over default")
    hb = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in held if r["options"] == "{}"}
    for r in held:
        if r["options"] != "{}":
            k = (r["stencil"], r["dtype"], r["fuse"])
            b = hb.get(k, float("nan"))
            print(f"{k[0]:14} {k[1]:6} t={k[2]} {b:7.1f} {float(r['gstencils']) / b:.3f} correct={r['correct']}")


def cc3d_nonbox_picks(tuning_csv, margin=0.02, stencil="Star-3D1R"):
    """(dtype, t) -> the tile ``stencil`` measured fastest in a cc3d-nonbox (or cc3d-box-h200) table, where it beat
    the default by more than ``margin`` (the scans' 2 % run-to-run noise); depths without such a tile keep the
    default."""
    import ast

    with open(tuning_csv) as f:
        rows = [r for r in csv.DictReader(f) if r["correct"] == "True" and r["stencil"] == stencil]
    picks = {}
    for key in {(r["dtype"], int(r["fuse"])) for r in rows}:
        mine = [r for r in rows if (r["dtype"], int(r["fuse"])) == key]
        base = [float(r["gstencils"]) for r in mine if r["options"] == "{}"]
        best = max(mine, key=lambda r: float(r["gstencils"]))
        if base and best["options"] != "{}" and float(best["gstencils"]) > (1 + margin) * base[0]:
            o = ast.literal_eval(best["options"])
            picks[key] = (o["v"], o["cols"], o["rows"], o["rows_per_thread"], o["prefetch"])
    return picks


def variants_cc3d_nonbox_heldout():
    """After cc3d-nonbox: diagonal-3d (9 points) and :data:`FACE_EDGE_3D` (19), neither seen by the choice, at
    the default and at Star-3D1R's pick of each depth (the table of $CC3D_NONBOX_TABLE), and Box-3D1R at the
    pick beside its own default (does the box lose what the star gains?)."""
    return _cc3d_picks_on(cc3d_nonbox_picks(os.environ["CC3D_NONBOX_TABLE"]), (DIAGONAL_3D, FACE_EDGE_3D, "Box-3D1R"))


#: Radius-1 3D shapes held out of the cc3d_radius1_few_points choice (kernels/defaults.yaml) and of every scan
#: before it: first-order backward differences along each axis (4 points), the D3Q15 lattice's neighbourhood
#: (centre, 6 faces, 8 corners: 15 points, between the 9 and 19 the table's cut-offs came from) and the box
#: without its faces (centre, 12 edges, 8 corners: 21 points, above every cut-off, so it keeps the box's tile).
BACKWARD_3D = Stencil.from_offsets([(0, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, -1)], name="backward-3d")
FACE_CORNER_3D = Stencil.from_offsets([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
                                       if abs(a) + abs(b) + abs(c) in (0, 1, 3)], name="face-corner-3d")
EDGE_CORNER_3D = Stencil.from_offsets([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
                                       if abs(a) + abs(b) + abs(c) != 1], name="edge-corner-3d")


def _plan_knobs_3d(plan):
    """The knobs that rebuild a 3D CUDA-core plan: what a scan passes to time a default explicitly."""
    o = plan.options
    return {"v": o["v"], "cols": plan.tile["x"], "rows": o["by"], "trap": o["trap"], "prefetch": o["prefetch"],
            "rows_per_thread": o["w"], "vector_loads": o["vector_loads"]}


def variants_cc3d_few_points_check():
    """After cc3d_radius1_few_points landed: each of its entries timed on :data:`BACKWARD_3D`,
    :data:`FACE_CORNER_3D` and :data:`EDGE_CORNER_3D`, at the entry's tile and at the tile the shape took before
    the table (the box's ``cc3d_radius1``, with its vector layout where ``cc3d_vector_loads`` lists it), both
    given as knobs: does the cut-off by points hold on shapes it never saw, on both sides of it?"""
    import dataclasses
    from unittest import mock

    from tcadvisor.gpu import defaults, plans

    table = defaults.measured()
    before = dataclasses.replace(table, cc3d_few_points={})
    names = {"fp64": "double", "fp32": "float", "fp16": "half"}
    out = []
    for (precision, t), (_, tile) in sorted(table.cc3d_few_points.items()):
        for st in (BACKWARD_3D, FACE_CORNER_3D, EDGE_CORNER_3D):
            with mock.patch.object(defaults, "measured", lambda: before):
                old = _plan_knobs_3d(plans.plan_cuda_cores(st, t, precision))
            new = dict(_cc3d_knobs(tile), vector_loads=False)
            for knobs in (old, new):
                out.append((st, names[precision], "512x512x512", "cuda_core", t, None, knobs))
    return out


#: A radius-1 3D shape of 25 points (the box without two opposite corners), held out of the cc3d-box-h200 choice
#: with :data:`EDGE_CORNER_3D`: both above every cut-off of cc3d_radius1_few_points, so both take the box's tiles.
BOX_LESS_TWO_CORNERS_3D = Stencil.from_offsets([(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
                                                if (a, b, c) not in ((1, 1, 1), (-1, -1, -1))], name="box-25-3d")
CC3D_BOX_DEPTHS = {"double": range(1, 8), "float": range(1, 8), "half": range(1, 8)}


def variants_cc3d_box_h200():
    """Box-3D1R's own radius-1 3D tiles, again, on the H200: ``cc3d_radius1`` was measured on an H100 (FP16/BF16
    borrow FP32's tiles beyond t = 3), and on the H200 Star-3D1R's tiles ran Box-3D1R 1.03-1.08x faster at FP32
    t = 3 and FP16 t = 3, 5, 6 (h200-2026-12-02/cc3d-nonbox/heldout).  Each depth and storage type: the default and
    each of :func:`cc3d_nonbox_candidates` (the box's six best of the H100 scans and the small tiles); the choice is
    made on these runs alone (cc3d-box-h200-heldout)."""
    return _cc3d_tile_scan("Box-3D1R", CC3D_BOX_DEPTHS)


def variants_cc3d_box_h200_heldout():
    """After cc3d-box-h200: :data:`EDGE_CORNER_3D` (21 points) and :data:`BOX_LESS_TWO_CORNERS_3D` (25), which no
    scan saw and which take the box's tiles, at their default and at Box-3D1R's pick of each depth (the table of
    $CC3D_BOX_TABLE)."""
    return _cc3d_picks_on(cc3d_nonbox_picks(os.environ["CC3D_BOX_TABLE"], stencil="Box-3D1R"),
                          (EDGE_CORNER_3D, BOX_LESS_TWO_CORNERS_3D))


#: The scans by name (--only): each a function of the parsed arguments giving the configurations to time.
SCANS = {
    "cc": lambda args: variants("cc"), "tc": lambda args: variants("tc"),
    "cc-deep": lambda args: variants_cc_deep(), "cc-async": lambda args: variants_cc_async(),
    "cc-async-fp64": lambda args: variants_cc_async_fp64(), "cc-async-tiles": lambda args: variants_cc_async_tiles(),
    "cc-strips-fp64": lambda args: variants_cc_strips_fp64(), "cc-direct": lambda args: variants_cc_direct(),
    "cc-fp32-deep": lambda args: variants_cc_fp32_deep(), "cc-keep": lambda args: variants_cc_keep(),
    "cc-keep-strips": lambda args: variants_cc_keep_strips(), "l2-check": lambda args: variants_l2_check(), "cc3d": lambda args: variants_cc3d(args.candidates),
    "tc-loads": lambda args: variants_tc_loads(), "tc-mem": lambda args: variants_tc_mem(),
    "tc-mem2": lambda args: variants_tc_mem2(), "tc-shapes": lambda args: variants_tc_shapes(),
    "sptc": lambda args: variants_sptc(), "sptc-l2": lambda args: variants_sptc_l2(),
    "sptc3d": lambda args: variants_sptc3d(), "sptc3d-shape": lambda args: variants_sptc3d_shape(),
    "sptc3d-ir4": lambda args: variants_sptc3d_ir4(), "tc-vectors": lambda args: variants_tc_vectors(),
    "sptc2d": lambda args: variants_sptc2d(), "sptc2d-grid": lambda args: variants_sptc2d_grid(),
    "sptc2d-shape": lambda args: variants_sptc2d_shape(), "cc-ab": lambda args: variants_cc_ab(),
    "cc1d-points": lambda args: variants_cc1d_points(), "cc1d-codegen": lambda args: variants_cc1d_codegen(),
    "cc1d-points-again": lambda args: variants_cc1d_points_again(),
    "cc1d-codegen2": lambda args: variants_cc1d_codegen2(),
    "cc1d-points-final": lambda args: variants_cc1d_points_again((4, 8, 10, 12, 16)),
    "cc-bisect": lambda args: variants_cc_bisect(), "cc-fix": lambda args: variants_cc_fix(),
    "tc-xt": lambda args: variants_tc_xt(), "tc-ir": lambda args: variants_tc_ir(),
    "sptc-stages-2d": lambda args: variants_sptc_stages(2), "sptc-stages-3d": lambda args: variants_sptc_stages(3),
    "tc-1d-deep": lambda args: variants_tc_1d_deep(), "sptc3d-r2": lambda args: variants_sptc3d_r2(),
    "tc-1d-rows": lambda args: variants_tc_1d_rows(), "tc-1d-rows-edge": lambda args: variants_tc_1d_rows_edge(),
    "tc-1d-rows-ahead": lambda args: variants_tc_1d_rows_ahead(), "sptc-r8": lambda args: variants_sptc_r8(),
    "sptc-align": lambda args: variants_sptc_align(), "sptc-1d-deep": lambda args: variants_sptc_1d_deep(),
    "sptc-1d-odd": lambda args: variants_sptc_1d_odd(), "sptc-1d-ilp": lambda args: variants_sptc_1d_ilp(),
    "sptc-1d-ilp2": lambda args: variants_sptc_1d_ilp2(), "sptc-whole-2d3d": lambda args: variants_sptc_whole_2d3d(),
    "sptc3d-whole": lambda args: variants_sptc3d_whole(),
    "sptc-occupancy": lambda args: variants_sptc_occupancy(),
    "sptc-half-acc": lambda args: variants_sptc_half_acc(),
    "sptc3d-fp16-r2": lambda args: variants_sptc3d_fp16_r2(),
    "tc16-width": lambda args: variants_tc16_width(),
    "tc-xt-shallow": lambda args: variants_tc_xt_shallow(),
    "tc-xt-1d": lambda args: variants_tc_xt_1d(),
    "tc-xt-1d-deep": lambda args: variants_tc_xt_1d_deep(),
    "tc-align": lambda args: variants_tc_align(),
    "tc3d-align": lambda args: variants_tc3d_align(),
    "cc3d-vld": lambda args: variants_cc3d_vld(),
    "cc3d-addr": lambda args: variants_cc3d_addr(),
    "cc3d-parts": lambda args: variants_cc3d_parts(),
    "cc3d-pairs": lambda args: variants_cc3d_pairs(),
    "cc-prefetch": lambda args: variants_cc_prefetch(),
    "cc-prefetch2": lambda args: variants_cc_prefetch2(), "cc-prefetch3": lambda args: variants_cc_prefetch3(), "cc-prefetch2-reversed": lambda args: variants_cc_prefetch2(True),
    "cc-pairs-async": lambda args: variants_cc_pairs_async(), "cc-ahead-radii": lambda args: variants_cc_ahead_radii(),
    "cc-ahead-deep": lambda args: variants_cc_ahead_deep(),
    "tc-1d-stages": lambda args: variants_tc_1d_stages(),
    "tc-1d-stages-occupancy": lambda args: variants_tc_1d_stages_occupancy(),
    "tc-stages-2d3d": lambda args: variants_tc_stages_2d3d(),
    "tc-stages-lean": lambda args: variants_tc_stages_lean(),
    "tc-stages-3d-warps": lambda args: variants_tc_stages_3d_warps(),
    "cc3d-nonbox": lambda args: variants_cc3d_nonbox(),
    "cc3d-nonbox-heldout": lambda args: variants_cc3d_nonbox_heldout(),
    "cc3d-few-points-check": lambda args: variants_cc3d_few_points_check(),
    "cc3d-box-h200": lambda args: variants_cc3d_box_h200(),
    "cc3d-box-h200-heldout": lambda args: variants_cc3d_box_h200_heldout(),
}


def kernel_source(commit):
    """Compile the kernels of the next run from ``build/kernels-at/COMMIT/`` (None: today's ``kernels/``): the
    backend's caches are cleared so that no module of the other source is reused."""
    from pathlib import Path

    from tcadvisor.data import data_dir as today
    from tcadvisor.gpu import backend

    backend.module.cache_clear()
    backend._source.cache_clear()
    if commit is None:
        backend.data_dir = today
        return
    root = os.path.join(OTHER_SOURCES, commit)
    if not os.path.isdir(root):
        raise TcAdvisorError(f"no kernel files of {commit} under {root}")

    class _Kernels(type(Path())):
        """build/kernels-at/COMMIT for the files kept there, today's kernels/ for the others."""

        def __truediv__(self, name):
            mine = Path(root) / name
            return mine if mine.exists() else today("kernels") / name

    backend.data_dir = lambda what: _Kernels(root) if what == "kernels" else today(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=sorted(SCANS), help="one scan (default: the CUDA-core and Tensor Core basics)")
    ap.add_argument("--sweeps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--candidates", default=CC3D_CANDIDATES, help="with --only cc3d: plan_cc3d.py's candidates.csv")
    ap.add_argument("--dtype", choices=["double", "float", "half", "bfloat16"], help="time this storage type only")
    args = ap.parse_args()
    from tcadvisor.gpu.backend import cupy
    from tcadvisor.gpu.runner import run

    cp = cupy()
    os.makedirs(args.out, exist_ok=True)
    small = {1: "20011", 2: "61x203", 3: "9x11x77"}
    chosen = SCANS[args.only](args) if args.only else variants(None)
    chosen = [c for c in chosen if args.dtype in (None, c[1])]
    # Rows are written as they are measured, so a run cut off at its time limit still leaves a table.
    table = open(os.path.join(args.out, "tuning.csv"), "w", newline="")
    writer = None
    for name, dtype, grid, unit, t, mma, opts in chosen:
        st = parse_stencil(name) if isinstance(name, str) else name
        opts = dict(opts)
        source = opts.pop("source", None)
        try:
            kernel_source(source)
            chk = run(st, dtype, unit, fuse=t, grid=small[st.dims], steps=2 * t + 1, seed=5, mma=mma,
                      kernel_options=opts, gpu="h100-measured")
            res = run(st, dtype, unit, fuse=t, grid=grid, steps=t * args.sweeps, seed=1, mma=mma, check=False,
                      repeats=args.repeats, kernel_options=opts, gpu="h100-measured")
        except (TcAdvisorError, RuntimeError) as exc:
            print(f"skip {st.name} {dtype} {unit} t={t} {mma} {opts}: {str(exc).splitlines()[0]}", flush=True)
            continue
        row = {"stencil": st.name, "dtype": dtype, "unit": unit, "fuse": t, "mma": mma or "",
               "options": dict(opts, source=source) if source else opts,
               "gstencils": res.gstencils, "fraction": res.fraction_of_bound, "correct": chk.passed,
               "err": chk.max_rel_error, "kernel": res.kernel}
        if writer is None:
            writer = csv.DictWriter(table, fieldnames=list(row))
            writer.writeheader()
        writer.writerow(row)
        table.flush()
        print(f"{st.name} {dtype:6} {unit:11} t={t} {mma or '':8} {str(row['options']):55} {res.gstencils:8.1f} GSt/s "
              f"{100 * (res.fraction_of_bound or float('nan')):5.1f}% correct={chk.passed} | {res.kernel}", flush=True)
        del res, chk
        cp.get_default_memory_pool().free_all_blocks()
    table.close()


if __name__ == "__main__":
    main()
