"""The Tensor Core kernels' own source, run on the CPU: every thread emulated, every warp MMA computed on the host.

kernels/tensor_cores.cu and kernels/sparse_tensor_cores.cu are compiled for the host
(tests/_host_cuda.py, tests/host_cuda/emu.h: mma.sync, mma.sp and shfl.sync are warp
collectives there, decoded with the PTX ISA's fragment layouts) and launched by
:class:`~tcadvisor.gpu.tensor_cores.TensorCoreKernel` and
:class:`~tcadvisor.gpu.sparse_tensor_cores.SparseTensorCoreKernel` themselves: their plan,
operands, ghost widths, launch split along the streamed axis and argument list are the
ones a GPU run uses.  The compile-time row masks (K_ROWMASK / K_LINEMASK and, beyond 64
rows, their _HI words) decide which kernel rows the code multiplies, so a wrong bit
drops or adds a row and fails the check.  Each sweep's output must lie in the rounding
interval of :mod:`tcadvisor.gpu.checking` around the float64 reference, the output
field starts poisoned (NaN), the same launch with threads and blocks in reverse order
must give the same bits, and the MMAs executed must be what the plan counts.
"""
import types
from fractions import Fraction

import numpy as np
import pytest

import _host_cuda
from tcadvisor.data import data_dir
from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import sparse_tensor_cores, tensor_cores
from tcadvisor.gpu.checking import SweepCheck, perturb_largest_weight, sweep_interval
from tcadvisor.gpu.numerics import from_storage, to_storage
from tcadvisor.reference import random_weights
from tcadvisor.stencil import Stencil

pytestmark = pytest.mark.skipif(not _host_cuda.available(), reason="needs g++ to build the kernels for the host")

DEVICE = {"name": "host emulation", "cc": (9, 0), "sms": 16, "smem_optin": 232448, "smem_per_sm": 233472,
          "regs_per_sm": 65536}
PRECISION = {"tensor_core": {"double": "fp64", "float": "tf32", "half": "fp16", "bfloat16": "bf16"},
             "sparse_tensor_core": {"float": "tf32", "half": "fp16", "bfloat16": "bf16"}}
FUNCTION = {"tensor_cores.cu": "tc_stream", "sparse_tensor_cores.cu": "sptc_stream"}


@pytest.fixture
def host_tc(monkeypatch):
    """The Tensor Core kernel classes compiling and launching through the host emulation (one resident block on
    16 SMs, so that small grids are cut into several chunks along the streamed axis)."""
    fake_cupy = types.SimpleNamespace(asarray=np.ascontiguousarray)
    for mod in (tensor_cores, sparse_tensor_cores):
        monkeypatch.setattr(mod, "module", lambda f, defines: _host_cuda.compile_module(f, defines, FUNCTION[f]))
        monkeypatch.setattr(mod, "device_info", lambda: DEVICE)
        monkeypatch.setattr(mod, "cupy", lambda: fake_cupy)
        monkeypatch.setattr(mod, "blocks_per_sm", lambda kernel, threads, smem: 1)

    def make(unit, stencil, fuse, dtype, weights, **options):
        cls = tensor_cores.TensorCoreKernel if unit == "tensor_core" else sparse_tensor_cores.SparseTensorCoreKernel
        return cls(stencil, fuse, dtype, PRECISION[unit][dtype], weights, **options)

    return make


run_sweep = _host_cuda.run_sweep


def check(kernel, x, out):
    grid = x.shape[3 - kernel.stencil.dims:]
    result = SweepCheck()
    result.add(from_storage(out, kernel.dtype).reshape(grid),
               sweep_interval(kernel.numerics(), from_storage(x, kernel.dtype).reshape(grid)))
    return result


def data(shape3, dtype, seed=1):
    return to_storage(np.random.default_rng(seed).uniform(1.0, 2.0, size=shape3), dtype)


def checked_sweep(kernel, shape3, dtype):
    """One sweep of random data on ``shape3``: none of the outputs NaN, every one in its rounding interval, every
    MMA counted.  Returns (input, output)."""
    x = data(shape3, dtype)
    out = run_sweep(kernel, x)
    assert np.isfinite(from_storage(out, dtype)).all()
    result = check(kernel, x, out)
    assert result.passed, f"{result.violations} outputs outside the rounding interval (worst {result.worst:.2e})"
    assert 2 * kernel.kernel.fmas == kernel.executed_flops(shape3)
    return x, out


#: 3D at fused radius 4 (81 kernel rows: the masks' second word) and 5 (121), and below 64 rows for comparison.
#: Star-3D4R x1 has 17 non-empty rows, Star-3D1R x4 41 (|p| + |a| ≤ 4), Box-3D1R x4 all 81.
CASES = [
    ("tensor_core", Stencil.star(3, 4), 1, "double"), ("tensor_core", Stencil.box(3, 1), 4, "double"),
    ("tensor_core", Stencil.star(3, 4), 1, "half"), ("tensor_core", Stencil.box(3, 1), 4, "half"),
    ("tensor_core", Stencil.star(3, 1), 4, "float"), ("tensor_core", Stencil.star(3, 1), 4, "bfloat16"),
    ("sparse_tensor_core", Stencil.star(3, 4), 1, "half"), ("sparse_tensor_core", Stencil.box(3, 1), 4, "half"),
    ("sparse_tensor_core", Stencil.star(3, 4), 1, "float"), ("sparse_tensor_core", Stencil.box(3, 1), 4, "float"),
    ("sparse_tensor_core", Stencil.star(3, 1), 4, "bfloat16"),
    ("tensor_core", Stencil.box(3, 1), 5, "half"), ("sparse_tensor_core", Stencil.box(3, 1), 5, "half"),
    ("tensor_core", Stencil.box(3, 1), 2, "double"), ("sparse_tensor_core", Stencil.box(3, 1), 2, "float"),
    ("tensor_core", Stencil.box(2, 1), 3, "half"), ("sparse_tensor_core", Stencil.box(2, 1), 3, "float"),
]
#: Knobs a GPU scan may choose for these depths: weights in L1 or shared memory, other shapes, slices ahead.
KNOBS = [
    ("tensor_core", Stencil.star(3, 4), 1, "double", {"mma": "m16n8k4", "weights_shared": False, "prefetch": 1}),
    ("tensor_core", Stencil.star(3, 1), 4, "double", {"mma": "m8n8k4"}),
    ("tensor_core", Stencil.star(3, 4), 1, "float", {"mma": "m16n8k4", "weights_shared": True, "warps": 2}),
    ("sparse_tensor_core", Stencil.star(3, 4), 1, "half", {"aregs": True, "prefetch": 2}),
    # Dense weight fragments in shared memory word by word, the layout of before the vectors (kept for scans).
    ("tensor_core", Stencil.box(3, 1), 2, "double", {"weights_shared": True, "shared_words": True}),
    ("tensor_core", Stencil.box(2, 1), 5, "half", {"weights_shared": True, "shared_words": True}),
    # Sparse weight fragments in shared memory (only the non-empty lines: Star-3D1R x4 keeps 41 of 81, across
    # both mask words) and two inner rows per warp (the test grid's 5 inner rows: the last warp's second row is
    # past the grid, its input rows clamped and its outputs not stored).
    ("sparse_tensor_core", Stencil.box(3, 1), 2, "half", {"weights_shared": True, "inner_rows": 2}),
    ("sparse_tensor_core", Stencil.star(3, 1), 4, "float", {"weights_shared": True}),
    ("sparse_tensor_core", Stencil.box(3, 1), 2, "float", {"inner_rows": 2}),
    ("sparse_tensor_core", Stencil.star(3, 4), 1, "bfloat16", {"weights_shared": True, "inner_rows": 2,
                                                              "l2_prefetch": 1}),
    ("sparse_tensor_core", Stencil.box(3, 1), 1, "half", {"aregs": True, "inner_rows": 2}),
    ("sparse_tensor_core", Stencil.box(3, 1), 1, "float", {"weights_shared": True, "inner_rows": 4, "prefetch": 0}),
    ("sparse_tensor_core", Stencil.star(3, 1), 2, "half", {"weights_shared": True, "inner_rows": 4}),
    # 2D: two or four adjacent x tiles per warp (the test grid's 150 columns: a warp's second tile is partial, its
    # third and fourth start past the grid, their windows clamped to the second's and their outputs not stored).
    ("sparse_tensor_core", Stencil.box(2, 1), 3, "half", {"weights_shared": True, "x_tiles": 2}),
    ("sparse_tensor_core", Stencil.star(2, 1), 2, "float", {"x_tiles": 4}),
    ("sparse_tensor_core", Stencil.box(2, 2), 2, "bfloat16", {"aregs": True, "x_tiles": 2, "l2_prefetch": 1}),
    ("sparse_tensor_core", Stencil.box(2, 1), 7, "half", {"x_tiles": 2, "prefetch": 2}),
    # Input slices staged in shared memory by cp.async (the emulation lands a copy only at its thread's wait for
    # the group, so a slice read before its wait, or another lane's half read before the warp's barrier, is the
    # previous slice or NaN): 2D x tiles, 3D inner rows beside shared-memory weights, TF32, an unaligned field.
    ("sparse_tensor_core", Stencil.box(2, 1), 7, "half", {"x_tiles": 2, "stages": 4}),
    ("sparse_tensor_core", Stencil.star(2, 1), 2, "float", {"x_tiles": 4, "stages": 2, "l2_prefetch": 1}),
    ("sparse_tensor_core", Stencil.box(3, 1), 2, "half", {"weights_shared": True, "inner_rows": 4, "stages": 3}),
    ("sparse_tensor_core", Stencil.box(3, 1), 1, "float", {"inner_rows": 2, "stages": 5}),
    ("sparse_tensor_core", Stencil.box(2, 2), 1, "bfloat16", {"stages": 3, "vector_loads": False}),
    # Dense, 2D: two or four x tiles per warp (150 columns: the second tile partial, the third and fourth past the
    # grid, computed on the row's padding and not stored), with weights in registers, L1 and shared memory.
    ("tensor_core", Stencil.box(2, 1), 3, "half", {"x_tiles": 2}),
    ("tensor_core", Stencil.star(2, 1), 2, "float", {"x_tiles": 4, "weights_shared": True}),
    ("tensor_core", Stencil.box(2, 1), 2, "double", {"x_tiles": 2, "l2_prefetch": 1}),
    ("tensor_core", Stencil.box(2, 2), 2, "bfloat16", {"x_tiles": 4, "weights_shared": True, "prefetch": 2}),
    ("tensor_core", Stencil.box(2, 1), 1, "double", {"mma": "m8n8k4", "x_tiles": 2, "prefetch": 0}),
    ("tensor_core", Stencil.box(2, 1), 7, "half", {"x_tiles": 2, "weights_shared": True, "bregs": False}),
    # Dense, 3D: two or four inner rows per warp (5 inner rows: the last warp's second, third and fourth rows past
    # the grid, their input rows clamped to the last ghost row and their outputs not stored).
    ("tensor_core", Stencil.box(3, 1), 2, "half", {"inner_rows": 2, "weights_shared": True}),
    ("tensor_core", Stencil.star(3, 1), 2, "float", {"inner_rows": 4}),
    ("tensor_core", Stencil.box(3, 1), 1, "double", {"inner_rows": 2, "l2_prefetch": 1}),
    ("tensor_core", Stencil.star(3, 2), 1, "bfloat16", {"inner_rows": 2, "weights_shared": True,
                                                       "shared_words": True}),
    ("tensor_core", Stencil.box(3, 1), 3, "half", {"inner_rows": 4, "weights_shared": True, "prefetch": 0}),
]


def _ids(v):
    if isinstance(v, Stencil):
        return v.name
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items())
    return str(v)


@pytest.mark.parametrize("unit, stencil, fuse, dtype, options", [c + ({},) for c in CASES] + KNOBS, ids=_ids)
def test_tensor_core_kernel_source_runs_correctly_on_the_host(host_tc, unit, stencil, fuse, dtype, options):
    from tcadvisor.mma import MmaShape

    if "mma" in options:
        options = dict(options, mma=MmaShape.parse(options["mma"]))
    shape3 = (6, 5, 100) if stencil.dims == 3 else (1, 13, 150)
    kernel = host_tc(unit, stencil, fuse, dtype, random_weights(stencil.mask(), np.random.default_rng(3)), **options)
    rows = (2 * stencil.radius * fuse + 1) ** (stencil.dims - 1)
    assert ("K_ROWMASK_HI" in dict(kernel.plan.defines) or "K_LINEMASK_HI" in dict(kernel.plan.defines)) == (rows > 64)
    x = data(shape3, dtype)
    out = run_sweep(kernel, x)
    values = from_storage(out, dtype)
    assert np.isfinite(values).all(), f"{np.count_nonzero(~np.isfinite(values))} outputs not written or NaN"
    result = check(kernel, x, out)
    assert result.passed, f"{result.violations} outputs outside the rounding interval (worst {result.worst:.2e})"
    launch = kernel.kernel.launches[-1]
    assert launch[0][2] > 1, "the test grid should be cut into several chunks along the streamed axis"
    # Every MMA issued, as the plan counts it (the refined model's and the report's executed FLOPs): the emulation
    # adds m·n·k / 32 multiply-adds per lane and MMA.
    assert 2 * kernel.kernel.fmas == kernel.executed_flops(shape3)
    again = run_sweep(kernel, x, reverse=True)
    assert np.array_equal(out.view(np.uint8), again.view(np.uint8)), "result depends on the order of threads or blocks"


@pytest.mark.parametrize("unit, stencil, fuse, dtype", [
    ("tensor_core", Stencil.star(3, 4), 1, "double"), ("tensor_core", Stencil.box(3, 1), 4, "half"),
    ("sparse_tensor_core", Stencil.star(3, 4), 1, "half"), ("sparse_tensor_core", Stencil.box(3, 1), 4, "float")],
    ids=_ids)
def test_negative_control_fails_the_same_check(host_tc, unit, stencil, fuse, dtype):
    """The kernel built with its largest weight perturbed as the GPU negative controls do is caught by the check
    of the unperturbed configuration."""
    w = random_weights(stencil.mask(), np.random.default_rng(3))
    good = host_tc(unit, stencil, fuse, dtype, w)
    bad = host_tc(unit, stencil, fuse, dtype, perturb_largest_weight(w, good.precision))
    x = data((6, 5, 100), dtype)
    assert check(good, x, run_sweep(good, x)).passed
    assert not check(good, x, run_sweep(bad, x)).passed


def test_a_row_left_out_of_the_mask_is_caught(host_tc):
    """A row of the mask's second word (p = 8, a = 4 of Star-3D4R: bit 76) cleared in the compiled defines: the
    kernel skips that row and the check fails -- the high word is what decides it."""
    st = Stencil.star(3, 4)
    kernel = host_tc("tensor_core", st, 1, "double", random_weights(st.mask(), np.random.default_rng(3)))
    defines = dict(kernel.plan.defines)
    hi = int(defines["K_ROWMASK_HI"].removesuffix("ULL"), 16)
    assert hi >> (76 - 64) & 1
    cut = tuple((k, f"{hi & ~(1 << 12):#x}ULL" if k == "K_ROWMASK_HI" else v) for k, v in kernel.plan.defines)
    x = data((6, 5, 100), "double")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    kernel.kernel = _host_cuda.compile_module("tensor_cores.cu", cut, "tc_stream").get_function("tc_stream")
    assert not check(kernel, x, run_sweep(kernel, x)).passed


def _compile_broken(kernel, source_file: str, function: str, right: str, wrong: str) -> None:
    """Replace ``kernel``'s compiled code with its source file's, ``right`` replaced by ``wrong`` (which must occur)."""
    source = (data_dir("kernels") / source_file).read_text()
    broken = source.replace(right, wrong)
    assert broken != source
    kernel.kernel = _host_cuda.compile_module(source_file, kernel.plan.defines, function,
                                              text=broken).get_function(function)


@pytest.mark.parametrize("stencil, shape3, knobs, right, wrong", [
    # the second x tile's inputs read 8 columns short of TILE_X
    (Stencil.box(2, 1), (1, 13, 150), {"x_tiles": 2},
     "LOAD_A1(j_, dst_[x_], x_ * TILE_X)", "LOAD_A1(j_, dst_[x_], x_ * (TILE_X - 8))"),
    # every inner row multiplying the first row's inputs
    (Stencil.box(3, 1), (6, 5, 100), {"inner_rows": 2}, "af[x_][a_ + r_][c_]", "af[x_][a_][c_]"),
], ids=["x tile step", "inner row offset"])
def test_a_wrong_line_offset_is_caught(host_tc, stencil, shape3, knobs, right, wrong):
    """The dense kernel compiled with one line's input offset broken: the check fails (the offsets of every line,
    not only the first, are what the host test verifies)."""
    kernel = host_tc("tensor_core", stencil, 2, "half", random_weights(stencil.mask(), np.random.default_rng(3)),
                     **knobs)
    x = data(shape3, "half")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    _compile_broken(kernel, "tensor_cores.cu", "tc_stream", right, wrong)
    assert not check(kernel, x, run_sweep(kernel, x)).passed


@pytest.mark.parametrize("right, wrong", [
    # one group too many left in flight: the slice is read before its copies landed
    ("wait_copies<BSTAGES - 1>();", "wait_copies<BSTAGES>();"),
    # no barrier after the wait: a lane reads its neighbour's half before the neighbour's copies landed
    ("        __syncwarp();  // and so have the other lanes' copies of it\n", ""),
    # the slice refilled into the stage being read
    ("stage_b(stages + fill * STAGE_VECS,", "stage_b(stages + now * STAGE_VECS,"),
], ids=["wait one group short", "no warp barrier", "refill the stage in use"])
def test_a_broken_slice_stage_is_caught(host_tc, right, wrong):
    """The sparse kernel's shared-memory stages (``stages``) compiled with their synchronisation broken: the check
    fails, in at least one of the two thread orders the emulation runs (its copies land only at their thread's
    wait, so a read too early sees the previous slice or NaN)."""
    st = Stencil.box(2, 1)
    kernel = host_tc("sparse_tensor_core", st, 2, "half", random_weights(st.mask(), np.random.default_rng(3)),
                     x_tiles=2, stages=3)
    x = data((1, 13, 150), "half")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    _compile_broken(kernel, "sparse_tensor_cores.cu", "sptc_stream", right, wrong)
    caught = [not check(kernel, x, out).passed or not np.isfinite(from_storage(out, "half")).all()
              for out in (run_sweep(kernel, x), run_sweep(kernel, x, reverse=True))]
    assert any(caught)


#: 1D at fused radii only 1D allows (tensor_cores.MAX_FUSED_RADIUS_1D): up to 64, the last r·t the 1D limit takes,
#: with a grid of 700 points (five full tiles of 128 and a partial one) and a ghost layer of r·t on each side.
DEEP_1D = [(Stencil.box(1, 1), 16, "half"), (Stencil.box(1, 3), 16, "double"), (Stencil.box(1, 2), 32, "float"),
           (Stencil.box(1, 1), 9, "bfloat16"), (Stencil.box(1, 4), 3, "double"),
           (Stencil.from_offsets([(-3,), (0,), (2,)]), 21, "half")]


@pytest.mark.parametrize("stencil, fuse, dtype", DEEP_1D, ids=_ids)
def test_deep_1d_fusion_runs_correctly_on_the_host(host_tc, stencil, fuse, dtype):
    """In 1D nothing is pending between slices, so the dense kernel takes r·t up to 64 there (8 in 2D and 3D):
    each sweep is checked against the float64 reference, every output written, every MMA counted."""
    assert stencil.radius * fuse > tensor_cores.MAX_FUSED_RADIUS
    kernel = host_tc("tensor_core", stencil, fuse, dtype, random_weights(stencil.mask(), np.random.default_rng(5)))
    x, _ = checked_sweep(kernel, (1, 1, 700), dtype)
    w = random_weights(stencil.mask(), np.random.default_rng(5))
    bad = host_tc("tensor_core", stencil, fuse, dtype, perturb_largest_weight(w, kernel.precision))
    assert not check(kernel, x, run_sweep(bad, x)).passed


@pytest.mark.parametrize("stencil, fuse, limit", [(Stencil.box(1, 1), 65, 64), (Stencil.box(1, 3), 22, 64),
                                                  (Stencil.box(2, 1), 9, 8), (Stencil.star(3, 2), 5, 8)], ids=_ids)
def test_the_dense_kernel_refuses_beyond_its_limit_per_dimension(host_tc, stencil, fuse, limit):
    w = random_weights(stencil.mask(), np.random.default_rng(5))
    with pytest.raises(TcAdvisorError, match=rf"^fused radius r·t = {stencil.radius * fuse} is too large for the Tensor "
                                        rf"Core kernel \(at most {limit}\)$"):
        host_tc("tensor_core", stencil, fuse, "double", w)


#: A 1D line launched as rows: 16 blocks of 512 points side by side in the emulation (16 resident blocks), so
#: rows of 8192: three rows and a tail (24876), rows only (16384), a tail only (300 and 4113, fewer points than
#: one row), and a deep fused radius.
LINE_ROWS = [("tensor_core", Stencil.box(1, 1), 3, "half", 24876), ("tensor_core", Stencil.box(1, 2), 4, "double", 16384),
             ("tensor_core", Stencil.box(1, 2), 16, "float", 9000),
             ("sparse_tensor_core", Stencil.box(1, 1), 3, "half", 24876),
             ("sparse_tensor_core", Stencil.from_offsets([(-3,), (0,), (2,)]), 2, "float", 300),
             ("sparse_tensor_core", Stencil.box(1, 7), 1, "bfloat16", 4096 + 17)]


@pytest.mark.parametrize("unit, stencil, fuse, dtype, n", LINE_ROWS, ids=_ids)
def test_a_1d_line_as_rows_runs_correctly_on_the_host(host_tc, unit, stencil, fuse, dtype, n):
    """The rows' halos are their neighbours in the line: every output in the rounding interval, bit for bit what
    the line as one row gives (the same code and operands), every MMA of both launches counted; a perturbed
    weight fails the same check."""
    w = random_weights(stencil.mask(), np.random.default_rng(7))
    rows = host_tc(unit, stencil, fuse, dtype, w, line_rows=True)
    one = host_tc(unit, stencil, fuse, dtype, w, line_rows=False)
    # a block's row: its 4 warps' tiles of 128 points, times the x tiles the defaults give in 1D
    # (tensor_cores_1d_x_tiles: the dense kernel's TF32 and FP16 take four)
    block = 512 * rows.plan.options["ir"]
    assert rows.plan.row_width == block and one.plan.row_width == 0
    launches = rows.plan.launches((1, 1, n), 16)
    width = 16 * block if n >= 16 * block else n // block * block
    assert sum(ln.nx * ln.ns for ln in launches) == n
    assert len(launches) == (n >= block) + (width == 0 or n % width > 0)
    if n >= block:
        assert launches[0].nx == launches[0].row_pitch == width and launches[0].ns == n // width
        assert launches[0].grid == (width // block, 1, 1) and launches[0].per == n // width
    x = data((1, 1, n), dtype)
    out = run_sweep(rows, x)
    assert len(rows.kernel.launches) == len(launches)
    assert np.isfinite(from_storage(out, dtype)).all()
    result = check(rows, x, out)
    assert result.passed, f"{result.violations} outputs outside the rounding interval (worst {result.worst:.2e})"
    assert 2 * rows.kernel.fmas == rows.executed_flops((1, 1, n))
    assert np.array_equal(out.view(np.uint8), run_sweep(one, x).view(np.uint8))
    assert np.array_equal(out.view(np.uint8), run_sweep(rows, x, reverse=True).view(np.uint8))
    bad = host_tc(unit, stencil, fuse, dtype, perturb_largest_weight(w, rows.precision), line_rows=True)
    assert not check(rows, x, run_sweep(bad, x)).passed


@pytest.mark.parametrize("stencil, fuse, dtype, x_tiles, n", [
    (Stencil.box(1, 1), 1, "half", 4, 3 * 2048 + 300), (Stencil.box(1, 2), 3, "bfloat16", 2, 16 * 1024 + 17),
    (Stencil.box(1, 1), 2, "float", 4, 2048 * 5 + 129), (Stencil.box(1, 3), 1, "double", 2, 700)], ids=_ids)
def test_a_1d_line_with_x_tiles_runs_correctly_on_the_host(host_tc, stencil, fuse, dtype, x_tiles, n):
    """The dense kernel in 1D with 2 or 4 x tiles per warp: as rows (a block's row its warps' tiles side by side,
    the rest of the line a second launch of one row, whose last warp's tiles start past the line) and as one row,
    every output in its rounding interval and bit for bit what one tile per warp gives, every MMA counted."""
    w = random_weights(stencil.mask(), np.random.default_rng(7))
    one_tile = host_tc("tensor_core", stencil, fuse, dtype, w, line_rows=True, x_tiles=1)
    assert one_tile.plan.row_width == 512
    for line_rows in (True, False):
        kernel = host_tc("tensor_core", stencil, fuse, dtype, w, line_rows=line_rows, x_tiles=x_tiles)
        assert kernel.plan.row_width == (512 * x_tiles if line_rows else 0)
        assert dict(kernel.plan.defines)["K_XT"] == x_tiles
        x = data((1, 1, n), dtype)
        out = run_sweep(kernel, x)
        assert np.isfinite(from_storage(out, dtype)).all()
        result = check(kernel, x, out)
        assert result.passed, f"{result.violations} outputs outside the rounding interval (worst {result.worst:.2e})"
        assert 2 * kernel.kernel.fmas == kernel.executed_flops((1, 1, n))
        assert np.array_equal(out.view(np.uint8), run_sweep(one_tile, x).view(np.uint8))


def test_rows_are_a_1d_layout():
    """Asked of a 2D stencil, the rows layout is refused in one line (it has a streamed axis already)."""
    from tcadvisor.gpu import plans
    from tcadvisor.mma import MmaShape

    with pytest.raises(TcAdvisorError, match=r"^line_rows: the Tensor Core kernel lays a 1D line out as rows; "
                                             r"this stencil is 2D$"):
        plans.plan_tensor_cores(Stencil.box(2, 1), 1, "fp16", MmaShape.parse("m16n8k16"), line_rows=True)


#: The sparse kernel at r·t = 8, where each line is two matrices (its even and its odd taps) multiplied by the same
#: input fragments: 1D and 2D, box, star and a custom stencil, every precision, weights in registers, L1 and shared
#: memory, x tiles, slices ahead and stages.  (3D stops at r·t = 5 by the line mask.)
SPARSE_R8 = [
    (Stencil.box(2, 1), 8, "half", {}), (Stencil.box(2, 2), 4, "float", {}), (Stencil.star(2, 4), 2, "bfloat16", {}),
    (Stencil.box(2, 8), 1, "half", {"weights_shared": True, "x_tiles": 2}),
    (Stencil.box(2, 1), 8, "float", {"x_tiles": 2, "stages": 3}),
    (Stencil.box(2, 4), 2, "half", {"aregs": True, "prefetch": 2}),
    (Stencil.from_offsets([(0, -2), (1, 0), (-2, 1), (0, 0)]), 4, "half", {"x_tiles": 4}),
    (Stencil.box(1, 1), 8, "half", {}), (Stencil.box(1, 8), 1, "float", {}), (Stencil.box(1, 2), 4, "bfloat16", {}),
]


@pytest.mark.parametrize("stencil, fuse, dtype, options", SPARSE_R8, ids=_ids)
def test_the_sparse_kernel_runs_r_t_8_as_two_matrices_per_line(host_tc, stencil, fuse, dtype, options):
    """Every output of a sweep in its rounding interval, none left NaN, the same bits with threads and blocks
    reversed, both halves' MMAs counted (twice the instructions per line of r·t = 7, what α = 17/64 per full line
    counts), and a perturbed weight failing the same check."""
    assert stencil.radius * fuse == 8
    w = random_weights(stencil.mask(), np.random.default_rng(11))
    kernel = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, **options)
    assert kernel.ka == 2 * kernel.kc and "2 matrices per line" in kernel.describe()
    x, out = checked_sweep(kernel, (1, 13, 150) if stencil.dims == 2 else (1, 1, 700), dtype)
    assert kernel.alpha == Fraction(int(np.count_nonzero(kernel.fused)), kernel.nonzero_lines * 64)
    again = run_sweep(kernel, x, reverse=True)
    assert np.array_equal(out.view(np.uint8), again.view(np.uint8))
    # The kernel's own rounding model sizes the control where 289 FP16 taps widen the interval (Box-2D8R).
    bad_w = perturb_largest_weight(w, kernel.precision, kernel.numerics())
    bad = host_tc("sparse_tensor_core", stencil, fuse, dtype, bad_w, **options)
    assert not check(kernel, x, run_sweep(bad, x)).passed


def test_a_half_left_out_at_r_t_8_is_caught(host_tc):
    """The kernel compiled to issue only the first matrix of each line (its even taps): the check fails, so the
    second half's MMAs are what the test above verifies."""
    st = Stencil.box(2, 1)
    kernel = host_tc("sparse_tensor_core", st, 8, "half", random_weights(st.mask(), np.random.default_rng(3)))
    _compile_broken(kernel, "sparse_tensor_cores.cu", "sptc_stream", "hv_ < HALVES; ++hv_", "hv_ < 1; ++hv_")
    x = data((1, 13, 150), "half")
    assert not check(kernel, x, run_sweep(kernel, x)).passed


@pytest.mark.parametrize("stencil, fuse", [(Stencil.box(2, 1), 9), (Stencil.box(3, 1), 9), (Stencil.star(2, 9), 1)],
                         ids=_ids)
def test_the_sparse_kernel_refuses_beyond_r_t_8_in_2d_and_3d(host_tc, stencil, fuse):
    w = random_weights(stencil.mask(), np.random.default_rng(5))
    with pytest.raises(TcAdvisorError, match=rf"^fused radius r·t = {stencil.radius * fuse} is too large for the Sparse "
                                        r"Tensor Core kernel: with L = 16 outputs per line the strided swap allows "
                                        rf"r·t ≤ 8 in {stencil.dims}D \(two matrices per line at 8\)$"):
        host_tc("sparse_tensor_core", stencil, fuse, "half", w)


@pytest.mark.parametrize("stencil, fuse", [(Stencil.box(1, 1), 65), (Stencil.box(1, 3), 22)], ids=_ids)
def test_the_sparse_kernel_refuses_beyond_r_t_64_in_1d(host_tc, stencil, fuse):
    w = random_weights(stencil.mask(), np.random.default_rng(5))
    with pytest.raises(TcAdvisorError, match=rf"^fused radius r·t = {stencil.radius * fuse} is too large for the Sparse "
                                        r"Tensor Core kernel \(at most 64 in 1D\)$"):
        host_tc("sparse_tensor_core", stencil, fuse, "half", w)


#: The sparse kernel in 1D beyond r·t = 8: the line's window of 16 + 2R columns in blocks of 32 (2 at r·t = 9-24,
#: 3 at 25-40, 5 at 64), each line its even and odd taps; one row and rows, every precision, weights in registers,
#: L1 and shared memory, slices ahead and stages, a custom stencil.
SPARSE_1D_DEEP = [
    (Stencil.box(1, 1), 9, "half", {}), (Stencil.box(1, 2), 8, "float", {}), (Stencil.box(1, 3), 8, "bfloat16", {}),
    (Stencil.box(1, 1), 25, "half", {"line_rows": True}), (Stencil.box(1, 4), 16, "float", {"line_rows": True}),
    (Stencil.box(1, 1), 64, "half", {"weights_shared": True}), (Stencil.box(1, 2), 20, "float", {"aregs": True}),
    (Stencil.box(1, 3), 12, "half", {"stages": 3}), (Stencil.box(1, 1), 16, "float", {"prefetch": 2}),
    (Stencil.from_offsets([(-3,), (0,), (2,)]), 13, "half", {}),
]


@pytest.mark.parametrize("stencil, fuse, dtype, options", SPARSE_1D_DEEP, ids=_ids)
def test_the_sparse_kernel_runs_1d_beyond_r_t_8_in_window_blocks(host_tc, stencil, fuse, dtype, options):
    """Every output of a sweep in its rounding interval, none left NaN, the same bits with threads and blocks
    reversed, every MMA of every block and half counted (α = P / (2 · 32 · blocks)), and a perturbed weight failing
    the same check."""
    R = stencil.radius * fuse
    assert 8 < R <= 64
    w = random_weights(stencil.mask(), np.random.default_rng(13))
    kernel = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, **options)
    blocks = -(-(16 + 2 * R) // 32)
    assert kernel.ka == 2 * kernel.kc == 2 * blocks * (2 if dtype == "float" else 1)
    # an odd r·t is built as r·t + 1, its line padded with zeros (even ghost width: pair stores), same blocks
    assert dict(kernel.plan.defines)["K_R"] == kernel.R == R + R % 2
    assert ("built for r·t" in kernel.describe()) == bool(R % 2)
    x, out = checked_sweep(kernel, (1, 1, 20000 if options.get("line_rows") else 700), dtype)
    assert kernel.alpha == Fraction(int(np.count_nonzero(kernel.fused)), 2 * 32 * blocks)
    again = run_sweep(kernel, x, reverse=True)
    assert np.array_equal(out.view(np.uint8), again.view(np.uint8))
    bad_w = perturb_largest_weight(w, kernel.precision, kernel.numerics())
    bad = host_tc("sparse_tensor_core", stencil, fuse, dtype, bad_w, **options)
    assert not check(kernel, x, run_sweep(bad, x)).passed


@pytest.mark.parametrize("dtype", ["half", "float"])
def test_an_odd_fused_radius_built_with_and_without_its_padded_line(host_tc, dtype):
    """Box-1D1R x11 (r·t = 11) built as r·t 12 (the default: even ghost width, pair stores) and as 11 (scalar
    stores): both right, the same α, and the recorded description gives back each plan."""
    from tcadvisor.gpu import plans

    st = Stencil.box(1, 1)
    w = random_weights(st.mask(), np.random.default_rng(17))
    x = data((1, 1, 700), dtype)
    built = {}
    for even in (True, False):
        kernel = host_tc("sparse_tensor_core", st, 11, dtype, w, even_window=even)
        assert kernel.R == (12 if even else 11) and (kernel.geometry((1, 1, 700)).gx % 2 == 0) == even
        assert check(kernel, x, run_sweep(kernel, x)).passed
        again = plans.recorded_sparse_tensor_core_plan(st, 11, kernel.precision, kernel.describe())
        assert again.defines == kernel.plan.defines
        built[even] = kernel
    assert built[True].alpha == built[False].alpha == Fraction(23, 128)


#: Each lane loading its whole window (K_WHOLE) and two accumulator chains (K_ACC2, 1D only), on one row, as rows,
#: with slices ahead, stages and shared-memory weights, and (K_WHOLE) in 2D.
SPARSE_ILP = [
    (Stencil.box(1, 1), 16, "half", {}), (Stencil.box(1, 1), 32, "float", {"stages": 3}),
    (Stencil.box(1, 2), 13, "bfloat16", {"line_rows": True, "aregs": True}),
    (Stencil.box(1, 1), 64, "half", {"weights_shared": True, "fixed_alignment": True, "unroll": 2}),
    (Stencil.box(1, 1), 3, "half", {}), (Stencil.box(2, 1), 3, "half", {}),
    (Stencil.box(2, 1), 2, "float", {"stages": 2}),
]


@pytest.mark.parametrize("stencil, fuse, dtype, options", SPARSE_ILP, ids=_ids)
def test_whole_windows_and_two_chains_give_the_same_outputs(host_tc, stencil, fuse, dtype, options):
    """Whole windows per lane: the very bits of the shuffled halves; two accumulator chains (1D): every output in
    its rounding interval (the sum in another order), every MMA counted; each plan given back by its description."""
    from tcadvisor.gpu import plans

    w = random_weights(stencil.mask(), np.random.default_rng(29))
    n = 20000 if options.get("line_rows") else 700
    shape3 = (1, 1, n) if stencil.dims == 1 else (1, 70, 300)
    off = {"whole_windows": False, "two_chains": False}  # both off, whatever the planner's rule would choose
    base = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, **options, **off)
    assert "K_WHOLE" not in dict(base.plan.defines) and "K_ACC2" not in dict(base.plan.defines)
    x, out = checked_sweep(base, shape3, dtype)
    variants = [{"whole_windows": True}] + ([{"two_chains": True}, {"whole_windows": True, "two_chains": True}]
                                           if stencil.dims == 1 else [])
    for extra in variants:
        kernel = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, **options, **{**off, **extra})
        defines = dict(kernel.plan.defines)
        assert defines.get("K_WHOLE", 0) == int("whole_windows" in extra)
        assert defines.get("K_ACC2", 0) == int("two_chains" in extra)
        _, got = checked_sweep(kernel, shape3, dtype)
        if "two_chains" not in extra:
            assert np.array_equal(out.view(np.uint8), got.view(np.uint8))
        again = plans.recorded_sparse_tensor_core_plan(stencil, fuse, kernel.precision, kernel.describe())
        assert again.defines == kernel.plan.defines


@pytest.mark.parametrize("precision", ["fp16", "bf16", "tf32"])
def test_the_1d_rules_beyond_r_t_8_build_lean_slices(precision):
    """The planner's 1D rules (plans.SPTC_1D_DEEP_FROM, from sptc-1d-ilp2): beyond r·t = 8 the kernel is built for
    its fields' alignment with whole windows per lane, and TF32 with one slice ahead and two accumulator chains
    instead of stages; at r·t = 8 (one window block) none of it; a knob given keeps the rule out."""
    from tcadvisor.gpu import plans

    st = Stencil.box(1, 1)
    deep = dict(plans.plan_sparse_tensor_cores(st, 9, precision).defines)
    assert deep.get("K_WHOLE") == 1 and "K_ALIGN" in deep and "K_BSTAGES" not in deep
    assert (deep.get("K_ACC2") == 1 and deep["K_PF"] == 1) if precision == "tf32" else "K_ACC2" not in deep
    assert dict(plans.plan_sparse_tensor_cores(st, 64, precision).defines).get("K_WHOLE") == 1
    shallow = dict(plans.plan_sparse_tensor_cores(st, 8, precision).defines)
    assert not {"K_WHOLE", "K_ACC2", "K_ALIGN"} & set(shallow)
    given = dict(plans.plan_sparse_tensor_cores(st, 32, precision, prefetch=2).defines)
    assert not {"K_WHOLE", "K_ACC2", "K_ALIGN"} & set(given)


def test_two_chains_left_unsummed_are_caught(host_tc):
    """The kernel compiled without adding the second accumulator set before the store: the check fails, so the
    test above verifies the odd MMAs' partial sums reach the outputs."""
    st = Stencil.box(1, 1)
    kernel = host_tc("sparse_tensor_core", st, 16, "half", random_weights(st.mask(), np.random.default_rng(31)),
                     two_chains=True)
    _compile_broken(kernel, "sparse_tensor_cores.cu", "sptc_stream", "done[h][e] += done2[h][e];", "(void)0;")
    x = data((1, 1, 700), "half")
    assert not check(kernel, x, run_sweep(kernel, x)).passed


def test_two_chains_are_refused_beyond_1d():
    from tcadvisor.gpu import plans

    with pytest.raises(TcAdvisorError, match=r"^two_chains: the sparse kernel splits the MMAs of a slice over two "
                                             r"accumulator sets in 1D only \(one chain per output slice\); this "
                                             r"stencil is 2D$"):
        plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 3, "fp16", two_chains=True)


def test_a_window_block_left_out_is_caught(host_tc):
    """The kernel compiled with one block of 32 window columns where r·t = 16 needs two: the check fails, so the
    second block's loads and MMAs are what the test above verifies."""
    st = Stencil.box(1, 1)
    kernel = host_tc("sparse_tensor_core", st, 16, "half", random_weights(st.mask(), np.random.default_rng(3)))
    _compile_broken(kernel, "sparse_tensor_cores.cu", "sptc_stream", "#define KC (NB * KCB)", "#define KC (1 * KCB)")
    x = data((1, 1, 700), "half")
    assert not check(kernel, x, run_sweep(kernel, x)).passed


@pytest.mark.parametrize("stencil, fuse, dtype", [(Stencil.box(2, 1), 2, "half"), (Stencil.box(2, 1), 3, "float"),
                                                  (Stencil.box(3, 1), 2, "bfloat16")], ids=_ids)
def test_the_sparse_kernel_runs_fields_aligned_otherwise_on_a_variant(host_tc, stencil, fuse, dtype):
    """The sparse kernel compiled for its own fields' alignment (``fixed_alignment``, K_ALIGN) gives the bits of the
    run-time flag; a field reported otherwise (here: neither vector loads nor pair stores) runs a variant compiled
    for it, with the same bits."""
    w = random_weights(stencil.mask(), np.random.default_rng(9))
    flag = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, fixed_alignment=False)
    assert "K_ALIGN" not in dict(flag.plan.defines) and flag.plan.options["align"] is None
    kernel = host_tc("sparse_tensor_core", stencil, fuse, dtype, w, fixed_alignment=True)
    assert dict(kernel.plan.defines)["K_ALIGN"] == kernel.plan.options["align"] == 1 | ((fuse % 2 == 0) << 1)
    assert "compiled for its fields' alignment" in kernel.describe()
    shape3 = (6, 5, 100) if stencil.dims == 3 else (1, 13, 150)
    x = data(shape3, dtype)
    own = run_sweep(kernel, x)
    assert np.array_equal(own.view(np.uint8), run_sweep(flag, x).view(np.uint8))
    assert kernel.compiled_for(kernel.plan.options["align"]) is kernel.kernel
    kernel.alignment = lambda f: 0
    other = run_sweep(kernel, x)
    assert dict(kernel._variants) and 0 in kernel._variants
    assert np.array_equal(own.view(np.uint8), other.view(np.uint8))


@pytest.mark.parametrize("stencil, fuse, dtype", [(Stencil.box(3, 1), 2, "half"), (Stencil.box(2, 1), 3, "double"),
                                                  (Stencil.star(3, 1), 1, "float"), (Stencil.box(1, 2), 5, "bfloat16")],
                         ids=_ids)
def test_the_dense_kernel_runs_fields_aligned_otherwise_on_a_variant(host_tc, stencil, fuse, dtype):
    """The dense kernel compiled for its own fields' alignment (``fixed_alignment``, K_ALIGN = 3: vector loads and
    pair stores, which its even ghost width gives) gives the bits of the run-time flag; a field reported otherwise
    (neither) runs a variant compiled for it, with the same bits, and a kernel without vector loads asks for one."""
    w = random_weights(stencil.mask(), np.random.default_rng(11))
    flag = host_tc("tensor_core", stencil, fuse, dtype, w, fixed_alignment=False)
    assert "K_ALIGN" not in dict(flag.plan.defines) and flag.plan.options["align"] is None
    assert "alignment" not in flag.describe()
    kernel = host_tc("tensor_core", stencil, fuse, dtype, w, fixed_alignment=True)
    assert dict(kernel.plan.defines)["K_ALIGN"] == kernel.plan.options["align"] == 3
    assert "compiled for its fields' alignment" in kernel.describe()
    shape3 = (6, 5, 100) if stencil.dims == 3 else (1, 13, 150) if stencil.dims == 2 else (1, 1, 900)
    x = data(shape3, dtype)
    own = run_sweep(kernel, x)
    assert not kernel._variants  # its own fields: the plan's build
    assert np.array_equal(own.view(np.uint8), run_sweep(flag, x).view(np.uint8))
    kernel.alignment = lambda f: 0
    other = run_sweep(kernel, x)
    assert set(kernel._variants) == {0}
    assert np.array_equal(own.view(np.uint8), other.view(np.uint8))
    scalar = host_tc("tensor_core", stencil, fuse, dtype, w, fixed_alignment=True, vector_loads=False)
    assert np.array_equal(own.view(np.uint8), run_sweep(scalar, x).view(np.uint8))
    assert set(scalar._variants) == {2}


def test_a_recorded_dense_description_gives_back_its_alignment_build():
    """A recorded dense run's description names the alignment build; the plan read back from it has it, and one
    recorded before it (no such words) has the run-time flag."""
    from tcadvisor.gpu import plans
    from tcadvisor.mma import MmaShape

    st = Stencil.box(3, 1)
    built = plans.plan_tensor_cores(st, 2, "fp16", MmaShape.parse("m16n8k16"), fixed_alignment=True)
    text = ("m16n8k16 FP16, α = 5/16 (0.312), 1 K-chunk(s) x 25 kernel rows, 4 warps/block, 4 inner rows per warp, "
            "weights in shared memory as vectors, prefetch 1, compiled for its fields' alignment, min 1 blocks/SM, "
            "216 registers")
    back = plans.recorded_tensor_core_plan(st, 2, "fp16", text)
    assert back.options["align"] == built.options["align"] == 3 and dict(back.defines)["K_ALIGN"] == 3
    before = plans.recorded_tensor_core_plan(st, 2, "fp16", text.replace("compiled for its fields' alignment, ", ""))
    assert before.options["align"] is None and "K_ALIGN" not in dict(before.defines)


#: FP16 accumulators (K_ACC16) in 1D, 2D with x tiles and stages, 3D with inner rows, and a register cap.
SPARSE_HALF_ACC = [
    (Stencil.box(1, 1), 16, {}), (Stencil.box(2, 1), 3, {"x_tiles": 2, "stages": 3, "weights_shared": True}),
    (Stencil.box(2, 2), 2, {"min_blocks": 4}), (Stencil.box(3, 1), 1, {"inner_rows": 2, "prefetch": 1}),
]


@pytest.mark.parametrize("stencil, fuse, options", SPARSE_HALF_ACC, ids=_ids)
def test_half_accumulators_stay_in_their_rounding_interval(host_tc, stencil, fuse, options):
    """FP16 accumulators: every output in the interval of FP16 accumulation, within a few FP16 ulps of the FP32
    accumulators' output (the same products, each MMA's sum rounded to FP16), every MMA counted; the plan given back by
    its description, register cap included."""
    from tcadvisor.gpu import plans

    w = random_weights(stencil.mask(), np.random.default_rng(37))
    shape3 = {1: (1, 1, 700), 2: (1, 70, 300), 3: (9, 11, 150)}[stencil.dims]
    kernel = host_tc("sparse_tensor_core", stencil, fuse, "half", w, **options, half_accumulators=True)
    assert dict(kernel.plan.defines)["K_ACC16"] == 1
    assert kernel.numerics().stages[0].u_acc == 2.0**-10
    x, out = checked_sweep(kernel, shape3, "half")
    wide = host_tc("sparse_tensor_core", stencil, fuse, "half", w, **options)
    assert "K_ACC16" not in dict(wide.plan.defines) and wide.numerics().stages[0].u_acc == 2.0**-23
    ref = from_storage(run_sweep(wide, x), "half")
    got = from_storage(out, "half")
    lines = kernel.nonzero_lines * kernel.ka
    assert np.abs(got - ref).max() <= (lines + 1) * 2.0**-10 * np.abs(ref).max()
    again = plans.recorded_sparse_tensor_core_plan(stencil, fuse, "fp16", kernel.describe())
    assert again.defines == kernel.plan.defines


def test_half_accumulators_stored_in_the_wrong_order_are_caught(host_tc):
    """Negative control: the kernel storing row g + 8's FP16 accumulator where row g's belongs fails the check."""
    st = Stencil.box(2, 1)
    kernel = host_tc("sparse_tensor_core", st, 2, "half", random_weights(st.mask(), np.random.default_rng(41)),
                     half_accumulators=True)
    _compile_broken(kernel, "sparse_tensor_cores.cu", "sptc_stream",
                    ": (done[hr][0] & 0xFFFFu) | (done[hr][1] << 16);", ": (done[hr][1] & 0xFFFFu) | (done[hr][0] << 16);")
    x = data((1, 70, 300), "half")
    assert not check(kernel, x, run_sweep(kernel, x)).passed


@pytest.mark.parametrize("precision, options, message", [
    ("bf16", {}, r"^half_accumulators: mma\.sp accumulates in FP16 with FP16 operands only, not BF16$"),
    ("tf32", {}, r"^half_accumulators: mma\.sp accumulates in FP16 with FP16 operands only, not TF32$"),
    ("fp16", {"two_chains": True}, r"^half_accumulators and two_chains: the second accumulator chain is added in "
                                   r"FP32; give one of them$"),
])
def test_half_accumulators_are_refused_where_the_kernel_has_none(precision, options, message):
    from tcadvisor.gpu import plans

    with pytest.raises(TcAdvisorError, match=message):
        plans.plan_sparse_tensor_cores(Stencil.box(1, 1), 16, precision, half_accumulators=True, **options)


def test_half_accumulators_alone_take_their_measured_configuration():
    """half_accumulators as the only knob: the FP16 entry of kernels/defaults.yaml with what measured best with FP16
    accumulators over it (sparse_tensor_cores_half_accumulators: 2D r·t = 7 four x tiles and one block per SM, where
    the FP32 entry has two and three), the entry as it is where that table names nothing (2D r·t = 5); another knob
    given keeps both tables out."""
    from tcadvisor.gpu import plans

    st = Stencil.box(2, 1)
    fp32_7 = dict(plans.plan_sparse_tensor_cores(st, 7, "fp16").defines)
    half_7 = dict(plans.plan_sparse_tensor_cores(st, 7, "fp16", half_accumulators=True).defines)
    assert (fp32_7["K_IR"], fp32_7["K_MINB"], "K_ACC16" in fp32_7) == (2, 3, False)
    assert (half_7["K_IR"], half_7["K_MINB"], half_7["K_ACC16"]) == (4, 1, 1)
    assert {k: v for k, v in half_7.items() if k not in ("K_IR", "K_MINB", "K_ACC16")} == \
        {k: v for k, v in fp32_7.items() if k not in ("K_IR", "K_MINB")}
    fp32_5 = dict(plans.plan_sparse_tensor_cores(st, 5, "fp16").defines)
    half_5 = dict(plans.plan_sparse_tensor_cores(st, 5, "fp16", half_accumulators=True).defines)
    assert half_5 == {**fp32_5, "K_ACC16": 1}
    given = dict(plans.plan_sparse_tensor_cores(st, 7, "fp16", half_accumulators=True, prefetch=1).defines)
    assert "K_IR" not in given and given["K_MINB"] == 1 and "K_BSTAGES" not in given


#: The dense kernel's 1D strips staged in shared memory (``stages``): every precision, one tile or x tiles per warp,
#: the line as one row or as rows (three rows and a tail: each warp streams several strips through its stages),
#: weights in registers or in shared memory (the stages after them), an odd fused radius and a custom stencil.
STAGED_1D = [
    (Stencil.box(1, 3), 16, "half", 3, {}, 900),
    (Stencil.box(1, 1), 3, "bfloat16", 2, {"line_rows": True}, 24876),
    (Stencil.box(1, 2), 5, "float", 4, {"line_rows": True, "x_tiles": 4}, 3 * 32768 + 77),
    (Stencil.box(1, 1), 2, "double", 8, {"line_rows": True, "x_tiles": 2}, 3 * 16384 + 5),
    (Stencil.box(1, 3), 3, "double", 3, {"weights_shared": True}, 700),
    (Stencil.from_offsets([(-3,), (0,), (2,)]), 7, "half", 2, {"line_rows": True}, 9000),
]


@pytest.mark.parametrize("stencil, fuse, dtype, stages, knobs, n", STAGED_1D, ids=_ids)
def test_staged_1d_strips_give_the_bits_of_the_strips_read_from_the_field(host_tc, stencil, fuse, dtype, stages,
                                                                          knobs, n):
    """Strips copied by cp.async into a warp's stages and read from there: every output in its rounding interval,
    bit for bit what the same plan reading its strips from the field gives (and in the reversed thread order),
    every MMA counted, the stages' bytes in the block's shared memory and named in the kernel's description; a
    perturbed weight fails the same check."""
    w = random_weights(stencil.mask(), np.random.default_rng(13))
    staged = host_tc("tensor_core", stencil, fuse, dtype, w, stages=stages, **knobs)
    field = host_tc("tensor_core", stencil, fuse, dtype, w, prefetch=0, **knobs)
    assert dict(staged.plan.defines)["K_STAGES"] == stages and "K_STAGES" not in dict(field.plan.defines)
    assert staged.prefetch == 0 and f"{stages} stages in shared memory" in staged.describe()
    strip = staged.tile_x - 8 + staged.construction.details["K_pad"]
    assert staged.smem - field.smem == 4 * stages * ((strip * x_bytes(dtype) + 30) // 16 * 16)
    x, out = checked_sweep(staged, (1, 1, n), dtype)
    assert np.array_equal(out.view(np.uint8), run_sweep(field, x).view(np.uint8))
    assert np.array_equal(out.view(np.uint8), run_sweep(staged, x, reverse=True).view(np.uint8))
    bad = host_tc("tensor_core", stencil, fuse, dtype, perturb_largest_weight(w, staged.precision), stages=stages,
                  **knobs)
    assert not check(staged, x, run_sweep(bad, x)).passed


#: The dense kernel's slices staged in 2D and 3D: a slice is one input row (2D, the warp's x tiles side by side) or its
#: ni + ir - 1 rows (3D, the rows past the grid clamped to the last), each a row of the stage; weights in registers,
#: L1 or shared memory, x tiles and inner rows, every precision, an asymmetric custom stencil; grids of partial tiles
#: and several slices per warp (each warp streams more slices than it has stages).
STAGED_2D3D = [
    (Stencil.box(2, 1), 4, "half", 3, {}, (1, 37, 150)),
    (Stencil.star(2, 1), 2, "float", 4, {"x_tiles": 2}, (1, 29, 300)),
    (Stencil.box(2, 2), 1, "double", 2, {"weights_shared": True}, (1, 23, 150)),
    (Stencil.from_offsets([(0, -2), (1, 0), (-2, 1), (0, 0)]), 3, "bfloat16", 5, {"x_tiles": 4}, (1, 21, 150)),
    (Stencil.box(3, 1), 1, "float", 3, {"inner_rows": 2}, (9, 5, 150)),
    (Stencil.star(3, 2), 1, "half", 2, {}, (11, 6, 140)),
    (Stencil.box(3, 1), 2, "bfloat16", 3, {"inner_rows": 4, "weights_shared": True}, (10, 7, 130)),
    (Stencil.star(3, 1), 2, "double", 4, {"mma": "m16n8k4"}, (9, 4, 150)),
]


@pytest.mark.parametrize("stencil, fuse, dtype, stages, knobs, shape3", STAGED_2D3D, ids=_ids)
def test_staged_2d_3d_slices_give_the_bits_of_the_slices_read_from_the_field(host_tc, stencil, fuse, dtype, stages,
                                                                             knobs, shape3):
    """2D rows and 3D slices of rows copied by cp.async into a warp's stages and read from there: every output in
    its rounding interval, bit for bit what the same plan reading its slices from the field gives (and in the
    reversed thread order), every MMA counted, a stage per slice of ni + ir - 1 rows in the block's shared memory;
    a perturbed weight fails the same check."""
    from tcadvisor.mma import MmaShape

    knobs = {k: MmaShape.parse(v) if k == "mma" else v for k, v in knobs.items()}
    w = random_weights(stencil.mask(), np.random.default_rng(19))
    staged = host_tc("tensor_core", stencil, fuse, dtype, w, stages=stages, **knobs)
    field = host_tc("tensor_core", stencil, fuse, dtype, w, prefetch=0, **knobs)
    assert dict(staged.plan.defines)["K_STAGES"] == stages and "K_STAGES" not in dict(field.plan.defines)
    assert staged.prefetch == 0 and f"{stages} stages in shared memory" in staged.describe()
    strip = staged.tile_x - 8 + staged.construction.details["K_pad"]
    rows = 1 if stencil.dims == 2 else 2 * stencil.radius * fuse + knobs.get("inner_rows", 1)
    warps = staged.plan.options["wx"] * staged.plan.options["wi"]
    assert staged.smem - field.smem == warps * stages * rows * ((strip * x_bytes(dtype) + 30) // 16 * 16)
    x, out = checked_sweep(staged, shape3, dtype)
    assert np.array_equal(out.view(np.uint8), run_sweep(field, x).view(np.uint8))
    assert np.array_equal(out.view(np.uint8), run_sweep(staged, x, reverse=True).view(np.uint8))
    bad = host_tc("tensor_core", stencil, fuse, dtype, perturb_largest_weight(w, staged.precision), stages=stages,
                  **knobs)
    assert not check(staged, x, run_sweep(bad, x)).passed


@pytest.mark.parametrize("stencil, fuse, right, wrong", [
    # every row of a staged 3D slice read from the stage's first row
    (Stencil.box(3, 1), 1, "#define STAGE_ROW_OFF(a_) ((a_) * (STAGE_BYTES / (int)sizeof(real)))",
     "#define STAGE_ROW_OFF(a_) (0)"),
    # every row of a 3D slice copied into the stage's first row (the others never written: NaN)
    (Stencil.box(3, 1), 1, "stage_strip((stage_) + a_ * STAGE_BYTES,", "stage_strip((stage_),"),
    # a 2D slice staged from the row before its own
    (Stencil.box(2, 1), 2, "STAGE_SLICE(stages + fill * (NROWS_IN * STAGE_BYTES), fill_from);",
     "STAGE_SLICE(stages + fill * (NROWS_IN * STAGE_BYTES), fill_from - slice_bytes);"),
    # the next slice copied into the stage being read
    (Stencil.box(2, 1), 2, "STAGE_SLICE(stages + fill * (NROWS_IN * STAGE_BYTES), fill_from);",
     "STAGE_SLICE(stages + now * (NROWS_IN * STAGE_BYTES), fill_from);"),
    # the copies' chunk count one short
    (Stencil.box(2, 1), 1, "const int chunks = (skew + STRIP_BYTES + 15) >> 4;",
     "const int chunks = ((skew + STRIP_BYTES + 15) >> 4) - 1;"),
], ids=["3D rows read from one", "3D rows copied into one", "2D slice one row early", "refill the stage in use",
        "a chunk short"])
def test_a_broken_2d_3d_stage_is_caught(host_tc, stencil, fuse, right, wrong):
    """The dense kernel's 2D/3D stages compiled with a slice's rows, its order or its copies broken: the check fails
    (or outputs are NaN: a stage's bytes nobody copied) in at least one of the two thread orders."""
    kernel = host_tc("tensor_core", stencil, fuse, "float", random_weights(stencil.mask(), np.random.default_rng(5)),
                     stages=3)
    x = data((7, 6, 140) if stencil.dims == 3 else (1, 19, 140), "float")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    _compile_broken(kernel, "tensor_cores.cu", "tc_stream", right, wrong)
    caught = [not check(kernel, x, out).passed or not np.isfinite(from_storage(out, "float")).all()
              for out in (run_sweep(kernel, x), run_sweep(kernel, x, reverse=True))]
    assert any(caught)


def test_a_2d_stage_ignoring_its_skew_is_caught(host_tc):
    """A 2D stage read from its start where the field has the strip past a 16-byte boundary (a wider ghost layer):
    the check fails."""
    st = Stencil.box(2, 1)
    kernel = _wider_ghosts(host_tc("tensor_core", st, 2, "half", random_weights(st.mask(), np.random.default_rng(4)),
                                   stages=2), 1)
    x = data((1, 15, 140), "half")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    _compile_broken(kernel, "tensor_cores.cu", "tc_stream", "stages + now * (NROWS_IN * STAGE_BYTES) + skew);",
                    "stages + now * (NROWS_IN * STAGE_BYTES));")
    kernel.compiled_for = lambda align: kernel.kernel
    assert not check(kernel, x, run_sweep(kernel, x)).passed


def x_bytes(dtype: str) -> int:
    return {"double": 8, "float": 4, "half": 2, "bfloat16": 2}[dtype]


def _wider_ghosts(kernel, extra: int):
    """``kernel`` run on fields of ``extra`` more ghost columns than its own (as when it shares fields with a kernel
    of a wider halo): its strips then start ``extra`` elements past their 16-byte boundaries."""
    import dataclasses

    own = kernel.geometry
    kernel.geometry = lambda shape3: dataclasses.replace(own(shape3), gx=own(shape3).gx + extra,
                                                         pitch=own(shape3).pitch + 32)
    return kernel


@pytest.mark.parametrize("dtype, extra", [("half", 1), ("half", 4), ("float", 1), ("double", 1)], ids=_ids)
def test_staged_strips_off_their_16_byte_boundary(host_tc, dtype, extra):
    """A field whose strips start off their 16-byte boundaries (a wider ghost layer): the stage holds the strip as far
    past its start as the field has it past the boundary, so the fragments read the same values (vector loads where
    the field's alignment allows them, the variant compiled for it otherwise); bits as read from the field."""
    st = Stencil.box(1, 2)
    w = random_weights(st.mask(), np.random.default_rng(17))
    staged = _wider_ghosts(host_tc("tensor_core", st, 3, dtype, w, stages=3, line_rows=True), extra)
    field = _wider_ghosts(host_tc("tensor_core", st, 3, dtype, w, prefetch=0, line_rows=True), extra)
    x, out = checked_sweep(staged, (1, 1, 20000), dtype)
    assert np.array_equal(out.view(np.uint8), run_sweep(field, x).view(np.uint8))


def test_staged_kernel_refuses_a_pitch_of_partial_16_byte_chunks(host_tc):
    """The stages keep one 16-byte skew for every slice and row, so a field whose row pitch is not a whole number of
    16-byte chunks (here 2 halves more) is refused in one line naming the pitches, not computed wrong."""
    import dataclasses

    st = Stencil.box(2, 1)
    kernel = host_tc("tensor_core", st, 1, "half", random_weights(st.mask(), np.random.default_rng(2)), stages=2)
    own = kernel.geometry
    kernel.geometry = lambda shape3: dataclasses.replace(own(shape3), pitch=own(shape3).pitch + 2)
    pitch = own((1, 9, 140)).pitch + 2
    with pytest.raises(TcAdvisorError, match=rf"^stages 2: the staged Tensor Core kernel needs row and slice pitches "
                                             rf"of whole 16-byte chunks; this field's are \d+ and {pitch} elements "
                                             rf"of 2 bytes$"):
        run_sweep(kernel, data((1, 9, 140), "half"))


@pytest.mark.parametrize("right, wrong, extra", [
    # one group too many left in flight: the strip is read before its copies landed
    ("wait_copies<STAGES - 1>();", "wait_copies<STAGES>();", 0),
    # no barrier after the wait: a lane reads the chunks its neighbours copied before they landed
    ("        __syncwarp();               // and so have the other lanes' copies of it\n", "", 0),
    # the next strip copied into the stage being read
    ("stage_strip(stages + fill * STAGE_BYTES,", "stage_strip(stages + now * STAGE_BYTES,", 0),
    # the strip taken from the stage's start, where the field has it past a 16-byte boundary
    ("return reinterpret_cast<const real*>(stage + (reinterpret_cast<unsigned long long>(p) & 15ULL));",
     "return reinterpret_cast<const real*>(stage);", 1),
], ids=["wait one group short", "no warp barrier", "refill the stage in use", "strip offset ignored"])
def test_a_broken_strip_stage_is_caught(host_tc, right, wrong, extra):
    """The dense kernel's stages compiled with their synchronisation or their offset broken: the check fails in at
    least one of the two thread orders (the emulation lands a copy only at its thread's wait, and a stage nobody
    copied into holds NaN), or the emulation refuses a thread that ends with copies it never waited for."""
    st = Stencil.box(1, 1)
    kernel = _wider_ghosts(host_tc("tensor_core", st, 2, "half", random_weights(st.mask(), np.random.default_rng(3)),
                                   stages=2, line_rows=True), extra)
    x = data((1, 1, 24876), "half")
    assert check(kernel, x, run_sweep(kernel, x)).passed
    _compile_broken(kernel, "tensor_cores.cu", "tc_stream", right, wrong)
    kernel.compiled_for = lambda align: kernel.kernel
    caught = []
    for reverse in (False, True):
        try:
            out = run_sweep(kernel, x, reverse=reverse)
        except RuntimeError as exc:  # the emulation's own catch: a thread left copies it never waited for
            assert "asynchronous copies it never waited for" in str(exc)
            caught.append(True)
            continue
        caught.append(not check(kernel, x, out).passed or not np.isfinite(from_storage(out, "half")).all())
    assert any(caught)
