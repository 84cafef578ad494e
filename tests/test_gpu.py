"""The bundled kernels on a real GPU (marker ``gpu``; skipped cleanly without CuPy and a device).

Every case draws random positive weights (sum 1) and data in [1, 2], poisons
each sweep's output with NaN, and checks every sweep against the reference
computed from identically rounded operands, and the result against the float64
base-stencil reference (tolerances derived in tcadvisor/gpu/checking.py).
Grids are odd and not multiples of any tile.  Negative controls (a weight
perturbed by 1e-9 in FP64 / two ulps of TF32, FP16, BF16; an output shifted by
one column) must fail, for every unit and precision.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import Stencil

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRIDS = {1: "1001", 2: "37x131", 3: "7x9x70"}
DTYPES = {"cuda_core": ("double", "float", "half", "bfloat16"), "tensor_core": ("double", "float", "half", "bfloat16"),
          "sparse_tensor_core": ("float", "half", "bfloat16")}


def _cases():
    cases = []
    # CUDA cores: 1D and 2D, radius 1, 2, 4, box and star, both dtypes
    for dims in (1, 2):
        for shape in (("box",) if dims == 1 else ("box", "star")):
            for r in (1, 2, 4):
                for t in ((1, 2, 3, 8) if r <= 2 else (1, 3)):
                    for dtype in DTYPES["cuda_core"]:
                        if dtype == "bfloat16" and getattr(Stencil, shape)(dims, r).K >= 64:
                            continue  # refused: no BF16 error bound (test_bf16_refuses_stencils_whose_chain_has_no_error_bound)
                        cases.append(("cuda_core", shape, dims, r, t, dtype, GRIDS[dims], None))
    for shape in ("box", "star"):
        for r, ts in ((1, (1, 2, 4)), (2, (1, 2))):
            for t in ts:
                for dtype in DTYPES["cuda_core"]:
                    if dtype == "bfloat16" and getattr(Stencil, shape)(3, r).K >= 64:
                        continue
                    cases.append(("cuda_core", shape, 3, r, t, dtype, GRIDS[3], None))
    # the deepest tiles the 3D planner launches without spilling (kernels/compiled-resources.csv); Box-3D4R: r·t = 4
    for r, t, dtype in ((1, 5, "double"), (2, 2, "double"), (2, 3, "float"), (3, 1, "float"), (1, 11, "float"),
                        (4, 1, "double"), (4, 1, "float")):
        cases.append(("cuda_core", "box", 3, r, t, dtype, "11x13x150", None))
    # Dense Tensor Cores: every implemented MMA shape per precision, 1D/2D/3D, fused radius up to 8
    tc_shapes = {"double": ("m16n8k8", "m16n8k4", "m16n8k16", "m8n8k4"), "float": ("m16n8k8", "m16n8k4"),
                 "half": ("m16n8k16",), "bfloat16": ("m16n8k16",)}
    tc_geoms = ((1, "box", 1, 3), (1, "box", 4, 2), (2, "box", 1, 1), (2, "box", 1, 3), (2, "star", 1, 2),
                (2, "box", 2, 2), (2, "star", 4, 2), (2, "box", 1, 8), (3, "box", 1, 1), (3, "star", 1, 2),
                (3, "box", 1, 2))
    for dtype, shapes in tc_shapes.items():
        for mma in shapes:
            for dims, shape, r, t in tc_geoms:
                cases.append(("tensor_core", shape, dims, r, t, dtype, GRIDS[dims], mma))
    # Sparse Tensor Cores: every precision, 1D/2D/3D, fused radius up to 8 (7: the swap's limit with L = 16; 8: two
    # matrices per line, its even and its odd taps), in 1D to 64 (the window in 2, 3 and 5 blocks of 32 columns)
    sp_geoms = ((1, "box", 1, 3), (1, "box", 3, 2), (2, "box", 1, 1), (2, "box", 1, 3), (2, "star", 1, 2),
                (2, "box", 2, 3), (2, "star", 3, 2), (2, "box", 1, 7), (2, "box", 3, 1), (2, "star", 1, 7),
                (3, "box", 1, 1), (3, "star", 1, 2), (3, "box", 1, 2),
                (1, "box", 1, 8), (1, "box", 2, 4), (2, "box", 1, 8), (2, "star", 1, 8), (2, "box", 2, 4),
                (2, "star", 4, 2), (2, "box", 8, 1),
                (1, "box", 1, 9), (1, "box", 3, 8), (1, "box", 7, 4), (1, "box", 2, 32))
    for dtype in DTYPES["sparse_tensor_core"]:
        for dims, shape, r, t in sp_geoms:
            cases.append(("sparse_tensor_core", shape, dims, r, t, dtype, GRIDS[dims], None))
    return cases


CASES = _cases()


def _id(case):
    unit, shape, dims, r, t, dtype, grid, mma = case
    return f"{unit}-{shape}{dims}d-r{r}-t{t}-{dtype}-{grid}" + (f"-{mma}" if mma else "")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_kernel_matches_the_references(case):
    from tcadvisor.gpu.runner import run

    unit, shape, dims, r, t, dtype, grid, mma = case
    stencil = getattr(Stencil, shape)(dims, r)
    seed = abs(hash(case)) % 2**31
    res = run(stencil, dtype, unit, fuse=t, grid=grid, steps=2 * t + 1, seed=seed, mma=mma, gpu="h100",
              repeats=1, warmup=0)
    chk = res.check
    assert res.unwritten == 0
    assert chk.sweep.violations == 0, (chk.sweep.violations, chk.sweep.worst)
    assert np.isfinite(res.max_rel_error) and res.max_rel_error <= res.tolerance, (res.max_rel_error, res.tolerance)
    assert res.passed
    assert res.precision == {"double": "fp64", "float": "fp32" if unit == "cuda_core" else "tf32",
                             "half": "fp16", "bfloat16": "bf16"}[dtype]


def _probe(code: int, ordered: int = 1):
    import cupy as cp

    src = open(os.path.join(ROOT, "tests", "mma_probe.cu")).read()
    ptype = {0: "tf32", 1: "f16", 2: "bf16", 3: "f16", 4: "bf16"}[code]
    mod = cp.RawModule(code=src, options=(f"-DK_PREC={code}", f'-DPTYPE="{ptype}"', f"-DK_ORDERED={ordered}"))
    fn = mod.get_function("probe")

    def call(a_words, b_words, meta):
        d = cp.zeros(32 * 4, dtype=cp.float32)
        b = np.zeros((32, 4), dtype=np.uint32)
        b[:, :b_words.shape[1]] = b_words
        fn((1,), (32,), (cp.asarray(np.ascontiguousarray(a_words, dtype=np.uint32)), cp.asarray(b),
                         cp.asarray(np.ascontiguousarray(meta, dtype=np.uint32)), d))
        from tcadvisor.gpu import layouts

        out = np.zeros((16, 8))
        dv = d.get().reshape(32, 4)
        for lane in range(32):
            for e in range(4):
                out[layouts.acc_c(lane, e)] = dv[lane, e]
        return out
    return call


def _words16(vals: np.ndarray, precision: str) -> np.ndarray:
    """Pairs of 16-bit values (last axis, even length) packed low-first into uint32."""
    from tcadvisor.gpu.numerics import to_bf16_bits

    bits = (vals.astype(np.float16).view(np.uint16) if precision == "fp16" else to_bf16_bits(vals)).astype(np.uint32)
    return bits[..., 0::2] | (bits[..., 1::2] << 16)


def _sparse_b_words(B: np.ndarray, precision: str) -> np.ndarray:
    from tcadvisor.gpu import layouts
    from tcadvisor.gpu.numerics import round_tf32

    n = layouts.b_count(precision)
    el = np.array([[B[layouts.sparse_b(precision, lane, e)] for e in range(n)] for lane in range(32)])
    return round_tf32(el.astype(np.float32)).view(np.uint32) if precision == "tf32" else _words16(el, precision)


@pytest.mark.parametrize("code, precision", [(0, "tf32"), (1, "fp16"), (2, "bf16")])
@pytest.mark.parametrize("ordered", [0, 1])
def test_sparse_mma_operand_layouts(code, precision, ordered):
    """One mma.sp with fragments packed by tcadvisor.gpu.layouts computes A·B (small integers: exact).

    On failure the message lists where the hardware actually reads each B element
    (found with one-hot B operands), so a wrong layout can be fixed from one log.
    """
    from tcadvisor.gpu import layouts
    from tcadvisor.gpu.sparse_tensor_cores import value_words

    k, width, keep = layouts.SPARSE[precision]
    rng = np.random.default_rng(code)
    A = np.zeros((16, k))
    for m in range(16):
        for g in range(k // width):
            pos = rng.choice(width, size=keep, replace=False)
            A[m, g * width + pos] = rng.integers(1, 5, size=keep) * rng.choice([-1, 1], size=keep)
    B = rng.integers(-3, 4, size=(k, 8)).astype(float)
    values, meta = layouts.encode_sparse_a(precision, A)
    call = _probe(code, ordered)
    D = call(value_words(values, precision), _sparse_b_words(B, precision), meta)
    if not np.array_equal(D, A @ B):
        # discover the B layout: rows 0-7 of A keep the first half of every group, rows 8-15 the second
        probe_a = np.zeros((16, k))
        for m in range(16):
            for kk in range(k):
                if (kk % width < width // 2) == (m < 8):
                    probe_a[m, kk] = kk + 1
        pv, pm = layouts.encode_sparse_a(precision, probe_a)
        wrong = []
        for lane in range(32):
            for e in range(layouts.b_count(precision)):
                Bone = np.zeros((k, 8))
                Bone[layouts.sparse_b(precision, lane, e)] = 1.0
                Dp = call(value_words(pv, precision), _sparse_b_words(Bone, precision), pm)
                n = int(np.argmax(np.abs(Dp).sum(axis=0)))
                kk = int(np.abs(Dp).max()) - 1
                if (kk, n) != layouts.sparse_b(precision, lane, e):
                    wrong.append(f"lane {lane} elem {e}: assumed {layouts.sparse_b(precision, lane, e)}, hw ({kk}, {n})")
        pytest.fail(f"{precision}: D != A·B at {int(np.sum(D != A @ B))} of 128 places; B layout differences: "
                    + ("; ".join(wrong[:40]) or "none (A values or metadata layout wrong)"))


@pytest.mark.parametrize("code, precision", [(3, "fp16"), (4, "bf16")])
def test_dense16_mma_operand_layouts(code, precision):
    from tcadvisor.gpu import layouts

    rng = np.random.default_rng(code)
    A = rng.integers(-4, 5, size=(16, 16)).astype(float)
    B = rng.integers(-3, 4, size=(16, 8)).astype(float)
    a_el = np.array([[A[layouts.dense16_a(lane, e)] for e in range(8)] for lane in range(32)])
    b_el = np.array([[B[layouts.dense16_b(lane, e)] for e in range(4)] for lane in range(32)])
    D = _probe(code)(_words16(a_el, precision), _words16(b_el, precision), np.zeros(32, dtype=np.uint32))
    assert np.array_equal(D, A @ B)


@pytest.mark.parametrize("unit, dtype, fuse, sweeps", [("tensor_core", "float", 3, 1000),
                                                        ("tensor_core", "float", 4, 750),
                                                        ("sparse_tensor_core", "half", 3, 1000),
                                                        ("sparse_tensor_core", "float", 3, 1000)])
def test_long_runs_pass(unit, dtype, fuse, sweeps):
    """The issue's failing cases: a correct TF32 kernel at 1000 sweeps (t = 3) and 3000 steps (t = 4)."""
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), dtype, unit, fuse=fuse, grid="67x257", steps=fuse * sweeps, seed=4,
              repeats=1, warmup=0)
    assert res.passed, (res.check.sweep.violations, res.max_rel_error, res.tolerance)
    assert res.check.sweep.sweeps == sweeps


CONTROLS = [(unit, dtype) for unit, dtypes in DTYPES.items() for dtype in dtypes]


@pytest.mark.parametrize("unit, dtype", CONTROLS)
def test_negative_controls_fail(unit, dtype):
    """A perturbed weight and a shifted output fail the checks that the correct kernel passes."""
    import cupy as cp

    from tcadvisor.gpu import registry, runner
    from tcadvisor.gpu.checking import perturb_largest_weight

    st, t, grid = Stencil.box(2, 1), 2, (37, 131)
    prof = registry.bundled_profile(unit)
    w = runner.default_weights(st, 5)
    right = runner.make_kernel(st, prof, t, dtype, w)
    wrong = runner.make_kernel(st, prof, t, dtype, perturb_largest_weight(w, right.precision, right.numerics()))
    fields = runner.allocate_fields([right, wrong], grid, dtype)
    x0 = runner.initial_data(grid, dtype, 1)
    ok, _ = runner.checked_sweeps({t: right}, [t, t], dtype, fields, x0, w)
    assert ok.passed, (ok.sweep.violations, ok.max_rel_error, ok.tolerance)
    bad, _ = runner.checked_sweeps({t: wrong}, [t, t], dtype, fields, x0, w, models={t: right.numerics()})
    assert not bad.passed and bad.sweep.violations > 0
    # BF16 on CUDA cores rounds each of a step's 2K multiply-adds to 8 bits: its sound interval (about 18 % after
    # two steps of Box-2D1R) is wider than neighbouring values differ, so an output shifted by one column passes;
    # an output off by a quarter does not.
    coarse = unit == "cuda_core" and dtype == "bfloat16"
    shifted, _ = runner.checked_sweeps({t: right}, [t], dtype, fields, x0, w,
                                       tamper=(lambda v: 1.25 * v) if coarse else (lambda v: cp.roll(v, 1, axis=-1)))
    assert shifted.sweep.violations > 0.5 * grid[0] * grid[1]


@pytest.mark.parametrize("unit, dtype, options", [
    ("sparse_tensor_core", "half", {"prefetch": 0}), ("sparse_tensor_core", "float", {"prefetch": 2}),
    ("sparse_tensor_core", "bfloat16", {"aregs": False}), ("sparse_tensor_core", "float", {"vector_loads": False}),
    ("sparse_tensor_core", "half", {"warps": 8, "min_blocks": 2}), ("tensor_core", "half", {"vector_loads": False}),
    ("tensor_core", "bfloat16", {"prefetch": 0, "bregs": False}),
    ("tensor_core", "double", {"l2_prefetch": 4}), ("tensor_core", "float", {"l2_prefetch": 1}),
    ("sparse_tensor_core", "half", {"l2_prefetch": 2}), ("sparse_tensor_core", "float", {"l2_prefetch": 3}),
    ("sparse_tensor_core", "half", {"fixed_alignment": True}),
    ("sparse_tensor_core", "float", {"fixed_alignment": True, "vector_loads": False}),
    ("sparse_tensor_core", "bfloat16", {"fixed_alignment": False}),
    ("tensor_core", "half", {"fixed_alignment": True}), ("tensor_core", "double", {"fixed_alignment": True}),
    ("tensor_core", "float", {"fixed_alignment": True, "vector_loads": False}),
    ("tensor_core", "double", {"bregs": False, "weights_shared": True, "prefetch": 0}),
    ("tensor_core", "half", {"weights_shared": True, "l2_prefetch": 2}),
    ("tensor_core", "float", {"weights_shared": True, "warps": 8, "min_blocks": 2})])
def test_kernel_knobs_keep_results_right(unit, dtype, options):
    """The tuning knobs change the code paths (prefetch, L1 or shared-memory weights, L2 prefetch, scalar loads,
    block shape), not the result."""
    from tcadvisor.gpu.runner import run

    for st, t, grid in ((Stencil.box(2, 1), 3, "37x131"), (Stencil.box(3, 1), 1, "7x9x70")):
        res = run(st, dtype, unit, fuse=t, grid=grid, steps=2 * t, seed=8, repeats=1, warmup=0,
                  kernel_options=options)
        assert res.passed, (options, res.check.sweep.violations, res.max_rel_error)


@pytest.mark.parametrize("dtype, options", [
    ("half", {"weights_shared": True, "x_tiles": 2, "prefetch": 0, "stages": 3}),
    ("float", {"weights_shared": True, "prefetch": 1, "l2_prefetch": 3}), ("bfloat16", {"aregs": True}),
    ("half", {"weights_shared": True, "x_tiles": 4, "prefetch": 1}), ("float", {"vector_loads": False})])
def test_sparse_r_t_8_knobs_keep_results_right(dtype, options):
    """At r·t = 8 (two matrices per line) the sparse kernel's knobs -- weights in registers, L1 or shared memory,
    x tiles, stages, scalar loads -- change the code path, not the result."""
    from tcadvisor.gpu.runner import run

    for st, t, grid in ((Stencil.box(2, 1), 8, "37x300"), (Stencil.star(2, 2), 4, "29x131")):
        res = run(st, dtype, "sparse_tensor_core", fuse=t, grid=grid, steps=2 * t, seed=8, repeats=1, warmup=0,
                  kernel_options=options)
        assert res.passed and res.unwritten == 0, (options, res.check.sweep.violations, res.max_rel_error)
        assert "2 matrices per line" in res.kernel


@pytest.mark.parametrize("dtype, options", [
    ("half", {"line_rows": True}), ("half", {"line_rows": False}), ("float", {"line_rows": True, "aregs": False}),
    ("bfloat16", {"weights_shared": True}), ("half", {"stages": 3}), ("float", {"vector_loads": False}),
    ("half", {"aregs": True, "prefetch": 2})])
def test_sparse_1d_beyond_r_t_8_knobs_keep_results_right(dtype, options):
    """In 1D beyond r·t = 8 (the window in blocks of 32 columns, each line its even and odd taps) the knobs --
    the line as rows or one row, weights in registers, L1 or shared memory, stages, scalar loads -- change the code
    path, not the result, on a line of several rows and a tail."""
    from tcadvisor.gpu.runner import run

    for st, t in ((Stencil.box(1, 1), 24), (Stencil.box(1, 7), 4)):
        res = run(st, dtype, "sparse_tensor_core", fuse=t, grid="300007", steps=2 * t, seed=8, repeats=1, warmup=0,
                  kernel_options=options)
        assert res.passed and res.unwritten == 0, (options, res.check.sweep.violations, res.max_rel_error)
        assert "2 matrices per line" in res.kernel


@pytest.mark.parametrize("stencil, t, grid, options", [
    (Stencil.box(2, 1), 7, "37x300", {}), (Stencil.star(2, 1), 7, "29x131", {"x_tiles": 4, "min_blocks": 2}),
    (Stencil.box(2, 1), 3, "29x131", {"min_blocks": 4}), (Stencil.box(3, 1), 2, "9x11x77", {}),
    (Stencil.box(1, 1), 16, "300007", {})])
def test_sparse_half_accumulators_keep_results_in_their_interval(stencil, t, grid, options):
    """FP16 accumulators (SPIDER's numerics): every sweep within the interval of FP16 accumulation, the default's
    other knobs or a register cap alike; the kernel says it accumulates in FP16."""
    from tcadvisor.gpu.runner import run

    res = run(stencil, "half", "sparse_tensor_core", fuse=t, grid=grid, steps=2 * t, seed=8, repeats=1, warmup=0,
              kernel_options={"half_accumulators": True, **options})
    assert res.passed and res.unwritten == 0, (options, res.check.sweep.violations, res.max_rel_error)
    assert "FP16 accumulators" in res.kernel


@pytest.mark.parametrize("dtype, t, options", [
    ("double", 3, {"trap": True}), ("float", 2, {"prefetch": 2}), ("double", 5, {"trap": True, "prefetch": 2}),
    ("float", 3, {"v": 2, "cols": 64, "rows": 24, "trap": True, "prefetch": 2}),
    ("float", 4, {"v": 4, "cols": 128, "rows": 24, "trap": True}), ("double", 2, {"rows": 32, "prefetch": 3}),
    ("float", 4, {"v": 2, "cols": 64, "rows": 48, "trap": True, "rows_per_thread": 4}),
    ("double", 3, {"v": 2, "cols": 70, "rows": 30, "trap": True, "rows_per_thread": 3, "prefetch": 2}),
    ("float", 2, {"rows_per_thread": 2}), ("float", 4, {"vector_loads": True}), ("double", 3, {"vector_loads": True}),
    ("half", 4, {"vector_loads": False}), ("half", 2, {"vector_loads": True}),
    ("float", 3, {"v": 4, "cols": 64, "rows": 30, "rows_per_thread": 2, "trap": True, "vector_loads": True})])
def test_cuda_core_3d_knobs_keep_results_right(dtype, t, options):
    """The 3D CUDA-core kernel's knobs (trimmed rows, planes in flight, tile shape, rows per thread, shared rows
    read as vectors) on odd grids, box and star."""
    from tcadvisor.gpu.runner import run

    for st, grid in ((Stencil.box(3, 1), "9x11x77"), (Stencil.star(3, 1), "13x70x45")):
        res = run(st, dtype, "cuda_core", fuse=t, grid=grid, steps=2 * t + 1, seed=8, repeats=1, warmup=0,
                  kernel_options=options)
        assert res.passed, (options, res.check.sweep.violations, res.max_rel_error)


@pytest.mark.parametrize("dtype, t, options", [
    ("double", 3, {"async_copy": True}), ("float", 12, {"async_copy": True}),
    ("double", 7, {"async_copy": True, "rows_per_iter": 3, "v": 1, "cols": 128}),
    ("double", 12, {"direct_store": True}), ("float", 5, {"direct_store": True, "async_copy": True}),
    ("float", 8, {"direct_store": True, "rows_per_iter": 2}),
    ("double", 12, {"keep_columns": True}), ("float", 14, {"keep_columns": True, "direct_store": True}),
    ("double", 4, {"keep_columns": True, "rows_per_iter": 2, "async_copy": True}),
    ("double", 11, {"async_copy": True, "prefetch": 4}), ("float", 12, {"async_copy": True, "prefetch": 8}),
    ("double", 3, {"async_copy": True, "prefetch": 2, "rows_per_iter": 2, "direct_store": True}),
    # FP16/BF16: each strip's rows copied planar, packed as step 1 reads them
    ("half", 5, {"async_copy": True}), ("bfloat16", 12, {"async_copy": True, "prefetch": 4}),
    ("half", 9, {"async_copy": True, "prefetch": 3, "keep_columns": True, "direct_store": True}),
    ("bfloat16", 3, {"async_copy": True, "prefetch": 2, "rows_per_iter": 2}),
    ("half", 16, {"async_copy": True, "prefetch": 4, "v": 4, "cols": 1024})])
def test_cuda_core_2d_async_copies_keep_results_right(dtype, t, options):
    """Input rows copied into shared memory by cp.async (zero-filled outside the field), several iterations of
    them in flight (prefetch), outputs stored from registers, own columns kept in registers, on odd grids, 1D and
    2D, box and star, every sweep checked."""
    from tcadvisor.gpu.runner import run

    for st, grid in ((Stencil.box(2, 1), "61x203"), (Stencil.star(2, 2), "37x131"), (Stencil.box(1, 1), "999")):
        if st.radius * t > 16:
            continue
        # 1D runs the tile kernel by default; the streaming kernel's 1D path (recorded runs) takes these knobs
        knobs = {**options, "layout": "stream"} if st.dims == 1 else options
        res = run(st, dtype, "cuda_core", fuse=t, grid=grid, steps=2 * t + 1, seed=8, repeats=1, warmup=0,
                  kernel_options=knobs)
        assert res.passed, (options, res.check.sweep.violations, res.max_rel_error)


@pytest.mark.parametrize("offsets, t, dtype, grid", [
    ([(0, 0), (0, -1), (0, -2), (-1, 0), (-2, 0)], 3, "double", "61x203"),  # upwind, asymmetric
    ([(0, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)], 2, "float", "37x131"),  # diagonal only
    ([(0, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, -1), (0, 0, -2)], 2, "double", "9x11x77"),  # upwind
    ([(d, d, d) for d in (-1, 0, 1)] + [(1, -1, 1)], 3, "float", "13x70x45"),  # diagonal
    ([(0,), (-1,), (-3,), (1,)], 5, "double", "20011"), ([(0,), (-2,), (2,)], 7, "float", "30011")])  # 1D tiles
def test_cuda_cores_run_custom_stencils(offsets, t, dtype, grid):
    """Stencils that are neither box nor star run on CUDA cores with their taps compiled in (K_TAPS), every sweep
    checked against the reference."""
    from tcadvisor.gpu.runner import run

    st = Stencil.from_offsets(offsets)
    assert st.shape == "custom"
    res = run(st, dtype, "cuda_core", fuse=t, grid=grid, steps=2 * t + 1, seed=8, repeats=1, warmup=0)
    assert res.unwritten == 0 and res.check.sweep.violations == 0, (res.check.sweep.violations, res.max_rel_error)
    assert res.passed, (res.max_rel_error, res.tolerance)


@pytest.mark.parametrize("grid", ["1x1", "1x2", "2x1", "3x5", "1x1000", "1000x1"])
@pytest.mark.parametrize("unit, dtype", [("cuda_core", "double"), ("tensor_core", "double"),
                                         ("tensor_core", "half"), ("sparse_tensor_core", "half"),
                                         ("sparse_tensor_core", "float")])
def test_smallest_grids(unit, dtype, grid):
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), dtype, unit, fuse=3, grid=grid, steps=4, seed=3, repeats=1, warmup=0)
    assert res.passed, (res.check.sweep.violations, res.max_rel_error, res.unwritten)


@pytest.mark.parametrize("grid, message", [("0x10", "at least 1"), ("10", "2D"), ("10x10x10", "2D"),
                                           ("ax3", "NxM"), ("70000x70000", r"2\^31")])
def test_grids_it_cannot_take(grid, message):
    from tcadvisor.gpu.runner import run

    with pytest.raises(TcAdvisorError, match=message):
        run(Stencil.box(2, 1), "double", "cuda_core", fuse=1, grid=grid)


#: 3D at fused radius 4 (81 kernel rows: the 128-bit row masks' second word; weights in shared memory or L1), on
#: every instruction the dense kernel implements for FP64 and FP16, and fused radius 5 (121 rows) on the defaults.
DEEP_3D = ([("tensor_core", st, t, dtype, mma) for st, t in ((Stencil.star(3, 4), 1), (Stencil.box(3, 1), 4))
            for dtype, mmas in (("double", ("m16n8k16", "m16n8k8", "m16n8k4", "m8n8k4")), ("half", ("m16n8k16",)))
            for mma in mmas]
           + [("sparse_tensor_core", st, t, dtype, None) for st, t in ((Stencil.star(3, 4), 1), (Stencil.box(3, 1), 4))
              for dtype in ("half", "float")]
           + [("tensor_core", Stencil.star(3, 1), 4, "float", None),
              ("tensor_core", Stencil.box(3, 1), 5, "double", None),
              ("sparse_tensor_core", Stencil.star(3, 1), 4, "bfloat16", None),
              ("sparse_tensor_core", Stencil.box(3, 1), 5, "half", None)])


@pytest.mark.parametrize("unit, stencil, fuse, dtype, mma", DEEP_3D,
                         ids=[f"{u}-{s.name}-t{t}-{d}" + (f"-{m}" if m else "") for u, s, t, d, m in DEEP_3D])
def test_tensor_cores_run_3d_beyond_64_kernel_rows(unit, stencil, fuse, dtype, mma):
    """Star-3D4R (Devito space_order=8) unfused and Box-3D1R x4 on dense and sparse Tensor Cores, checked every
    sweep against the reference of identically rounded operands and at the end against the float64 stencil."""
    from tcadvisor.gpu.runner import run

    res = run(stencil, dtype, unit, fuse=fuse, grid="11x13x150", steps=2 * fuse + 1, seed=17, mma=mma,
              gpu="h100", repeats=1, warmup=0)
    assert res.unwritten == 0
    assert res.check.sweep.violations == 0, (res.check.sweep.violations, res.check.sweep.worst)
    assert np.isfinite(res.max_rel_error) and res.max_rel_error <= res.tolerance, (res.max_rel_error, res.tolerance)
    assert res.passed


def test_configurations_it_cannot_take():
    from tcadvisor.gpu.runner import run

    with pytest.raises(TcAdvisorError, match="would spill to local memory"):
        run(Stencil.box(3, 1), "double", "cuda_core", fuse=8, grid="16x16x16")
    with pytest.raises(TcAdvisorError, match="would spill to local memory"):
        run(Stencil.box(3, 2), "double", "cuda_core", fuse=5, grid="16x16x64")
    with pytest.raises(TcAdvisorError, match="shared memory"):
        run(Stencil.box(3, 1), "double", "cuda_core", fuse=8, grid="16x16x64",
            kernel_options={"v": 4, "cols": 64, "rows": 32})
    with pytest.raises(TcAdvisorError, match="too large for the Tensor Core kernel"):
        run(Stencil.box(2, 3), "double", "tensor_core", fuse=3, grid="64x64")
    with pytest.raises(TcAdvisorError, match="MMA shape"):
        run(Stencil.box(2, 1), "float", "tensor_core", fuse=1, grid="64x64", mma="m8n8k4")
    with pytest.raises(TcAdvisorError, match=r"r·t ≤ 8"):
        run(Stencil.box(2, 1), "half", "sparse_tensor_core", fuse=9, grid="64x64")
    with pytest.raises(TcAdvisorError, match=r"169 kernel rows; .* mask holds 128 \(3D: r·t ≤ 5\)"):
        run(Stencil.box(3, 1), "double", "tensor_core", fuse=6, grid="16x16x130")
    with pytest.raises(TcAdvisorError, match="no double variant"):
        run(Stencil.box(2, 1), "double", "sparse_tensor_core", fuse=1, grid="64x64")
    with pytest.raises(TcAdvisorError, match="an even number would be accepted"):
        run(Stencil.box(2, 1), "half", "cuda_core", fuse=4, grid="64x64",
            kernel_options={"async_copy": True, "v": 1, "cols": 256})


@pytest.mark.parametrize("unit, impl, dtype", [("tensor_core", "tcadvisor-tc", "double"),
                                               ("tensor_core", "tcadvisor-tc", "half"),
                                               ("sparse_tensor_core", "tcadvisor-sptc", "half"),
                                               ("sparse_tensor_core", "tcadvisor-sptc", "float")])
def test_kernel_alpha_is_the_models_alpha(unit, impl, dtype):
    """The α the advisor reports for the bundled profile is counted from the operands the kernel uploads."""
    from tcadvisor.advisor import AlphaChoice, advise
    from tcadvisor.gpu import registry
    from tcadvisor.gpu.runner import default_weights, make_kernel
    from tcadvisor.hardware import find_spec
    from tcadvisor.impls import find_impl

    for dims, t in ((2, 3), (3, 1), (1, 4)):
        st = Stencil.box(dims, 1)
        kern = make_kernel(st, registry.bundled_profile(unit), t, dtype, default_weights(st, 0))
        adv = advise(st, dtype, find_spec("h100"), fuse=t, impls={unit: find_impl(impl)},
                     alpha=AlphaChoice.parse("constructed"))
        opt = next(o for o in adv.options if o.unit == unit)
        assert opt.alpha == kern.alpha
        assert str(opt.mma_shape) == str(kern.mma)


def test_output_array_and_measurements():
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), "double", "cuda_core", fuse=2, grid="64x96", steps=4)
    out = res.output.get()
    assert out.shape == (64, 96) and np.all(np.isfinite(out))
    assert res.gstencils > 0 and res.bound_gstencils > 0 and 0 < res.fraction_of_bound
    assert res.executed_tflops >= res.useful_tflops * 0.999
    assert len(res.seconds_all) == 5 and res.kernel_name == "cuda_cores" and res.cuda_function
    # the ghost refresh timed alone: shorter than a sweep, which begins with one
    assert 0 < res.refresh_seconds < res.seconds / len(res.sweeps) and 0 < res.refresh_share < 1


def test_the_refresh_share_of_a_3d_run():
    """On a 3D field whose rows are long enough for the refresh to be measurable, it is a few percent of a
    memory-bound sweep (39-63 us of 300-1100 us on a 512^3 field on the H100: x-images/NOTES.md)."""
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(3, 1), "half", "tensor_core", fuse=1, grid="256x256x256", steps=4, check=False)
    assert 0.01 < res.refresh_share < 0.5


def test_bfloat16_output_is_bit_patterns():
    from tcadvisor.gpu.numerics import bf16_bits_to_float
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), "bfloat16", "sparse_tensor_core", fuse=2, grid="33x130", steps=2, repeats=1)
    out = res.output.get()
    assert out.dtype == np.uint16
    vals = bf16_bits_to_float(out)
    assert np.all((vals >= 0.99) & (vals <= 2.01))


@pytest.mark.parametrize("dtype, precision, mma", [("half", "fp16", "m16n8k32"), ("bfloat16", "bf16", "m16n8k32"),
                                                   ("float", "tf32", "m16n8k16")])
def test_cli_runs_the_sparse_kernel(dtype, precision, mma):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "tcadvisor", "run", "Box-2D1R", "--unit", "sparse_tensor_core",
                        "--dtype", dtype, "--fuse", "3", "--grid", "517x1031", "--steps", "7", "--repeats", "2",
                        "--json"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["passed"] and d["precision"] == precision and d["mma"] == mma and d["unit"] == "sparse_tensor_core"
    assert d["impl"] == "tcadvisor-sptc" and d["alpha"] == pytest.approx(7 / 32)
    assert d["sweep_violations"] == 0


@pytest.mark.parametrize("dtype, t, options", [("double", 1, {}), ("double", 8, {}), ("float", 16, {}),
                                               ("float", 3, {"stage": False}), ("double", 4, {"v": 4, "cols": 512}),
                                               ("double", 2, {"layout": "stream"})])
def test_cuda_core_1d_tiles_are_right(dtype, t, options):
    """The 1D tile kernel (kernels/cuda_cores_1d.cu), staged or not, on a grid of several tiles and a partial last
    one, every sweep checked; and the streaming kernel it replaced, still launched for recorded runs."""
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(1, 2), dtype, "cuda_core", fuse=t, grid="40009", steps=2 * t + 1, seed=4, repeats=1,
              warmup=0, kernel_options=options)
    assert res.passed, (options, res.check.sweep.violations, res.max_rel_error)
    assert ("1D tiles" in res.kernel) == (options.get("layout") != "stream")


@pytest.mark.parametrize("unit, stencil, t, dtype", [
    ("tensor_core", Stencil.box(1, 1), 1, "double"), ("tensor_core", Stencil.box(1, 2), 4, "float"),
    ("tensor_core", Stencil.box(1, 1), 16, "half"), ("tensor_core", Stencil.box(1, 3), 3, "bfloat16"),
    ("sparse_tensor_core", Stencil.box(1, 1), 3, "float"), ("sparse_tensor_core", Stencil.box(1, 7), 1, "half"),
    ("sparse_tensor_core", Stencil.from_offsets([(-3,), (0,), (2,)]), 2, "bfloat16")],
    ids=lambda v: v.name if isinstance(v, Stencil) else str(v))
def test_a_1d_line_as_rows_matches_the_line_as_one_row(unit, stencil, t, dtype):
    """A 1D line launched as rows (several rows per warp on 3 million points, and a tail launch) passes every
    sweep's check, and with the same weights and input its errors are exactly those of the line as one row (the
    same code on the same operands gives the same bits)."""
    from tcadvisor.gpu.runner import run

    results = [run(stencil, dtype, unit, fuse=t, grid="3000011", steps=2 * t + 1, seed=11, gpu="h100", repeats=1,
                   warmup=0, kernel_options={"line_rows": rows}) for rows in (True, False)]
    for res, rows in zip(results, (True, False)):
        assert res.passed and res.unwritten == 0 and res.check.sweep.violations == 0
        assert ("the line as rows" in res.kernel) == rows
    assert results[0].max_rel_error == results[1].max_rel_error


@pytest.mark.parametrize("stencil, t, dtype, stages", [
    (Stencil.box(1, 3), 16, "half", 2), (Stencil.box(1, 3), 16, "double", 3), (Stencil.box(1, 2), 8, "float", 4),
    (Stencil.box(1, 1), 12, "bfloat16", 8), (Stencil.from_offsets([(-3,), (0,), (2,)]), 5, "double", 2)],
    ids=lambda v: v.name if isinstance(v, Stencil) else str(v))
def test_dense_1d_stages_match_the_strips_read_from_the_field(stencil, t, dtype, stages):
    """The dense kernel's 1D strips staged in shared memory by cp.async (``stages``) pass every sweep's check on 3
    million points (the line as rows: many strips per warp through its stages, and a tail launch), and with the
    same weights and input their errors are exactly those of the same plan reading its strips from the field."""
    from tcadvisor.gpu.runner import run

    results = [run(stencil, dtype, "tensor_core", fuse=t, grid="3000011", steps=2 * t + 1, seed=11, gpu="h100",
                   repeats=1, warmup=0, kernel_options=knobs) for knobs in ({"stages": stages}, {"prefetch": 0})]
    for res in results:
        assert res.passed and res.unwritten == 0 and res.check.sweep.violations == 0
    assert f"{stages} stages in shared memory" in results[0].kernel and "stages" not in results[1].kernel
    assert results[0].max_rel_error == results[1].max_rel_error


@pytest.mark.parametrize("stencil, t, dtype, grid, knobs", [
    (Stencil.box(2, 1), 4, "half", "1031x2053", {"stages": 3}),
    (Stencil.star(2, 2), 1, "double", "777x1500", {"stages": 4, "x_tiles": 2}),
    (Stencil.box(2, 1), 2, "float", "513x1029", {"stages": 2, "weights_shared": True}),
    (Stencil.box(3, 1), 1, "float", "67x41x333", {"stages": 3, "inner_rows": 2}),
    (Stencil.star(3, 2), 1, "bfloat16", "45x37x300", {"stages": 4}),
    (Stencil.box(3, 1), 2, "double", "40x21x150", {"stages": 2, "inner_rows": 4})],
    ids=lambda v: v.name if isinstance(v, Stencil) else str(v))
def test_dense_2d_3d_stages_match_the_slices_read_from_the_field(stencil, t, dtype, grid, knobs):
    """The dense kernel's 2D rows and 3D slices of rows staged in shared memory by cp.async pass every sweep's check
    (partial tiles, clamped inner rows, many slices per warp through its stages), and with the same weights and input
    their errors are exactly those of the same plan reading its slices from the field."""
    from tcadvisor.gpu.runner import run

    field = {k: v for k, v in knobs.items() if k != "stages"}
    results = [run(stencil, dtype, "tensor_core", fuse=t, grid=grid, steps=2 * t + 1, seed=23, gpu="h100",
                   repeats=1, warmup=0, kernel_options=kn) for kn in (knobs, dict(field, prefetch=0))]
    for res in results:
        assert res.passed and res.unwritten == 0 and res.check.sweep.violations == 0
    assert f"{knobs['stages']} stages in shared memory" in results[0].kernel and "stages" not in results[1].kernel
    assert results[0].max_rel_error == results[1].max_rel_error
