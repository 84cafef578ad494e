"""The CUDA-core kernels' own source, run on the CPU: every thread emulated, checked like on a GPU.

kernels/cuda_cores_2d.cu and kernels/cuda_cores_3d.cu are compiled for the host
(tests/_host_cuda.py, tests/host_cuda/emu.h) and launched by
:class:`tcadvisor.gpu.cuda_cores.CudaCoreKernel` itself: its plan, ghost widths,
launch split along the streamed axis and argument list are the ones a GPU run
uses.  Each sweep's output must lie in the rounding interval of
:mod:`tcadvisor.gpu.checking` around the float64 reference; the same launch with
the threads of every barrier interval run in reverse order must give the same
bits (a kernel that reads shared memory written in the same interval would not);
shared memory starts as NaN and the output field is poisoned, so a read of an
unwritten slot or an output nobody wrote fails the check.
"""
from fractions import Fraction

import numpy as np
import pytest

import _host_cuda
from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import plans
from tcadvisor.gpu.checking import SweepCheck, perturb_largest_weight, sweep_interval
from tcadvisor.gpu.numerics import from_storage, to_storage
from tcadvisor.reference import random_weights
from tcadvisor.stencil import Stencil

pytestmark = pytest.mark.skipif(not _host_cuda.available(), reason="needs g++ to build the kernels for the host")

DEVICE = {"name": "host emulation", "cc": (9, 0), "sms": 16, "smem_optin": 232448, "smem_per_sm": 233472,
          "regs_per_sm": 65536}


@pytest.fixture
def host_kernels(monkeypatch):
    """CudaCoreKernel compiling and launching through the host emulation (2 resident blocks on 16 SMs, so
    that small grids are still cut into several chunks along the streamed axis)."""
    return _host_cuda.patch_cuda_core_kernels(monkeypatch, DEVICE)


run_sweep = _host_cuda.run_sweep


PRECISION = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}


def check(kernel, x, out):
    grid = x.shape[3 - kernel.stencil.dims:]
    result = SweepCheck()
    result.add(from_storage(out, kernel.dtype).reshape(grid),
               sweep_interval(kernel.numerics(), from_storage(x, kernel.dtype).reshape(grid)))
    return result


def data(shape3, dtype, seed=1):
    return to_storage(np.random.default_rng(seed).uniform(1.0, 2.0, size=shape3), dtype)


CASES_3D = [(Stencil.box(3, 1), t, dtype) for t in (1, 2, 3, 5) for dtype in ("double", "float")] + [
    (Stencil.star(3, 1), 2, "double"), (Stencil.star(3, 1), 4, "float"), (Stencil.box(3, 2), 1, "double"),
    (Stencil.box(3, 2), 2, "float")]
CASES_2D = [(Stencil.box(2, 1), t, dtype) for t in (1, 3, 8, 12) for dtype in ("double", "float")] + [
    (Stencil.star(2, 1), 9, "double"), (Stencil.box(2, 3), 2, "float"), (Stencil.box(1, 2), 4, "double")]

#: Stencils that are neither box nor star: their taps are compiled in (K_TAPS), the rest of the kernel is the same.
_RING = [(a, b) for a in range(-2, 3) for b in range(-2, 3) if (a, b) not in ((-1, 0), (1, 1), (0, 2), (2, -2))]
CUSTOM = [
    Stencil.from_offsets([(0, 0), (0, -1), (0, -2), (-1, 0), (-2, 0)], name="Upwind-2D"),  # asymmetric
    Stencil.from_offsets(_RING, name="Holes-2D"),  # a 5x5 box with holes
    Stencil.from_offsets([(0, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)], name="Diagonal-2D"),  # no axis tap but 0
    Stencil.from_offsets([(0,), (-1,), (-3,), (1,)], name="Upwind-1D"),  # asymmetric, with a hole
    Stencil.from_offsets([(0, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, -1), (0, 0, -2)], name="Upwind-3D"),
    Stencil.from_offsets([(d, d, d) for d in (-1, 0, 1)] + [(1, -1, 1)], name="Diagonal-3D"),
]
CASES_CUSTOM = [(st, t, dtype) for st in CUSTOM for t, dtype in ((1, "double"), (3 if st.dims < 3 else 2, "float"))]
#: FP16 and BF16: packed FMAs on two tiles per block (kernels/cc_values.cuh).  The grids give an odd number of
#: tiles along x (a block whose second tile lies past the grid) as well as an even one.
CASES_16 = [(Stencil.box(1, 1), 1, "half"), (Stencil.box(1, 2), 4, "bfloat16"), (Stencil.box(2, 1), 3, "half"),
            (Stencil.star(2, 1), 8, "bfloat16"), (Stencil.box(2, 2), 2, "bfloat16"), (Stencil.box(3, 1), 2, "half"),
            (Stencil.star(3, 1), 3, "bfloat16"), (CUSTOM[0], 2, "half"), (CUSTOM[3], 3, "half"),
            (CUSTOM[4], 2, "bfloat16")]


#: The knobs (the GPU scans choose among them): 3D trimmed rows, planes in flight, rows per thread, tile shapes;
#: 1D/2D input rows copied into shared memory with cp.async (deferred to the wait by the emulation), outputs
#: stored from registers, each step's own columns kept in registers.
KNOBS = [(Stencil.box(3, 1), 1, "double", {"trap": True}), (Stencil.box(3, 1), 3, "float", {"trap": True}),
            (Stencil.box(3, 1), 5, "double", {"trap": True, "prefetch": 2}),
            (Stencil.box(3, 1), 2, "double", {"prefetch": 3}), (Stencil.box(3, 1), 3, "float", {"rows": 32}),
            (Stencil.box(3, 1), 2, "double", {"v": 2, "cols": 64, "rows": 24, "trap": True}),
            (Stencil.star(3, 1), 3, "double", {"trap": True, "prefetch": 2}),
            (Stencil.box(3, 2), 2, "float", {"trap": True, "prefetch": 4, "v": 2, "cols": 32, "rows": 20}),
            (Stencil.box(3, 1), 3, "float", {"rows_per_thread": 2, "trap": True, "v": 2, "rows": 24, "prefetch": 2}),
            (Stencil.box(3, 1), 2, "double", {"rows_per_thread": 3, "rows": 18}),
            (Stencil.star(3, 1), 2, "float", {"rows_per_thread": 2, "trap": True, "prefetch": 3}),
            (Stencil.box(3, 2), 1, "double", {"rows_per_thread": 4, "rows": 24, "trap": True, "v": 2}),
            (Stencil.box(2, 1), 3, "double", {"async_copy": True}), (Stencil.box(2, 1), 12, "float", {"async_copy": True}),
            (Stencil.star(2, 1), 5, "double", {"async_copy": True, "rows_per_iter": 3}),
            (Stencil.box(1, 2), 4, "float", {"stage": False}),
            (Stencil.box(2, 1), 12, "double", {"direct_store": True}),
            (Stencil.star(2, 2), 3, "float", {"direct_store": True, "async_copy": True, "rows_per_iter": 2}),
            (Stencil.box(1, 1), 5, "double", {"v": 4, "cols": 128}),
            (Stencil.box(1, 3), 3, "float", {"v": 16, "cols": 512, "stage": True}),
            (Stencil.box(1, 2), 3, "double", {"layout": "stream", "direct_store": True}),
            (Stencil.box(2, 1), 12, "double", {"keep_columns": True, "async_copy": True, "direct_store": True}),
            (Stencil.star(2, 1), 5, "float", {"keep_columns": True, "rows_per_iter": 3}),
            (Stencil.box(2, 2), 3, "float", {"keep_columns": True, "direct_store": True, "rows_per_iter": 2}),
            (Stencil.box(1, 2), 4, "double", {"layout": "stream", "keep_columns": True}),
            (Stencil.box(2, 1), 1, "float", {"keep_columns": True}),
            # 2D input rows of several iterations in flight (K_PF): the emulation lands a group only at its wait
            (Stencil.box(2, 1), 4, "double", {"async_copy": True, "prefetch": 3}),
            (Stencil.star(2, 1), 9, "double", {"async_copy": True, "prefetch": 2, "rows_per_iter": 1,
                                               "keep_columns": True, "direct_store": True}),
            (Stencil.box(2, 2), 3, "float", {"async_copy": True, "prefetch": 4, "rows_per_iter": 2}),
            (Stencil.star(2, 1), 3, "double", {"async_copy": True, "prefetch": 8, "rows_per_iter": 1})]

CUSTOM_KNOBS = [(CUSTOM[0], 2, "double", {"keep_columns": True, "direct_store": True, "async_copy": True}),
                (CUSTOM[1], 2, "float", {"async_copy": True, "prefetch": 2}),
                (CUSTOM[4], 2, "double", {"trap": True, "prefetch": 2, "rows_per_thread": 2, "v": 2, "rows": 24})]

#: 3D shared rows in order, read as vectors (K_VLD): 2 and 4 values per load in FP32, 2 in FP64 (16 bytes),
#: scalar at V = 1, windows of one vector and of several (r = 2, V = 4: 8 values, two loads), pairs of 16-bit
#: values, a custom tap set, rows per thread and planes in flight around them.
VECTOR_LOADS = [(Stencil.box(3, 1), 3, "float", {"vector_loads": True, "v": 2, "rows_per_thread": 2, "rows": 24,
                                                 "trap": True}),
                (Stencil.box(3, 1), 2, "float", {"vector_loads": True, "v": 4, "cols": 64, "rows": 16}),
                (Stencil.box(3, 1), 2, "double", {"vector_loads": True, "v": 4, "cols": 64, "rows": 16,
                                                  "prefetch": 2}),
                (Stencil.star(3, 1), 3, "float", {"vector_loads": True}),
                (Stencil.box(3, 2), 1, "float", {"vector_loads": True, "v": 4, "cols": 32, "rows": 16}),
                (Stencil.box(3, 1), 2, "double", {"vector_loads": True, "v": 1, "cols": 32, "rows": 16}),
                (Stencil.box(3, 1), 2, "half", {"vector_loads": True, "v": 2, "cols": 64, "rows": 16,
                                                "rows_per_thread": 2, "trap": True}),
                (CUSTOM[4], 2, "float", {"vector_loads": True, "v": 4, "cols": 64, "rows": 24, "rows_per_thread": 3})]


def _ids(v):
    if isinstance(v, Stencil):
        return v.name
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items()) or "default"
    return str(v)


@pytest.mark.parametrize("stencil, fuse, dtype, options",
                         [c + ({},) for c in CASES_3D + CASES_2D + CASES_CUSTOM + CASES_16] + KNOBS + CUSTOM_KNOBS
                         + VECTOR_LOADS
                         + [(Stencil.box(1, 1), 3, "half", {"stage": False}),
                            (Stencil.box(1, 2), 3, "bfloat16", {"layout": "stream"}),
                            (Stencil.box(2, 1), 5, "half", {"keep_columns": True, "direct_store": True}),
                            (Stencil.box(3, 1), 2, "bfloat16", {"trap": True, "rows_per_thread": 2, "prefetch": 2})],
                         ids=_ids)
def test_kernel_source_runs_correctly_on_the_host(host_kernels, stencil, fuse, dtype, options):
    shape3 = (11, 29, 70) if stencil.dims == 3 else ((1, 23, 300) if stencil.dims == 2 else (1, 1, 9001))
    if dtype in ("half", "bfloat16") and stencil.dims == 2:
        shape3 = (1, 17, 1100)  # 3 strips: a block with both, one whose second strip lies past the grid
    precision = PRECISION[dtype]
    kernel = host_kernels(stencil, fuse, dtype, precision, random_weights(stencil.mask(), np.random.default_rng(3)),
                          **options)
    x = data(shape3, dtype)
    out = run_sweep(kernel, x)
    assert np.isfinite(from_storage(out, dtype)).all(), "outputs not written or NaN"
    result = check(kernel, x, out)
    assert result.passed, f"{result.violations} outputs outside the rounding interval (worst {result.worst:.2e})"
    launches = kernel.kernel.launches
    if stencil.dims == 1:  # 1D: tiles along the row
        assert launches[-1][0][0] > 1, "the test grid should be cut into several tiles"
    else:
        assert launches[-1][0][2 if stencil.dims == 3 else 1] > 1, "the test grid should be cut into several chunks"
    # The FLOPs the plan says the sweep executes (the refined model's and the report's "executed" figure)
    # are the FMAs the kernel ran, counted per thread.
    assert 2 * kernel.kernel.fmas == kernel.executed_flops(shape3)
    again = run_sweep(kernel, x, reverse=True)
    assert np.array_equal(out.view(np.uint8), again.view(np.uint8)), "result depends on the order of threads or blocks (a race)"


@pytest.mark.parametrize("stencil, fuse, dtype, options", [
    (Stencil.box(2, 1), 7, "double", {}), (Stencil.star(2, 1), 4, "float", {"rows_per_iter": 2}),
    (Stencil.box(2, 2), 3, "double", {"async_copy": True, "direct_store": True})], ids=_ids)
def test_kept_columns_give_the_same_bits(host_kernels, stencil, fuse, dtype, options):
    """keep_columns only moves where a step reads its own columns from (registers instead of shared memory) and
    the order of the steps within an iteration: every FMA sees the same operands in the same order, so the
    output is bit for bit the same -- and the kernel reads fewer shared-memory values."""
    precision = PRECISION[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(5))
    x = data((1, 23, 300), dtype)
    plain = host_kernels(stencil, fuse, dtype, precision, w, **options)
    kept = host_kernels(stencil, fuse, dtype, precision, w, keep_columns=True, **options)
    assert "own columns kept in registers" in kept.describe() and dict(kept.plan.defines)["K_KEEP"] == 1
    assert np.array_equal(run_sweep(plain, x).view(np.uint8), run_sweep(kept, x).view(np.uint8))


@pytest.mark.parametrize("stencil, fuse, dtype, options", VECTOR_LOADS, ids=_ids)
def test_vector_loads_give_the_same_bits(host_kernels, stencil, fuse, dtype, options):
    """vector_loads changes only where a shared row's values sit and how many at a time a thread reads them:
    every FMA sees the same operands in the same order, so the output is the residue layout's bit for bit; the
    plan sizes the planes as the kernel lays them out (the wrapper compares the two), and the description
    names the layout so that a recorded run reads back its plan."""
    precision = PRECISION[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(6))
    x = data((11, 29, 70), dtype)
    plain_options = {**options, "vector_loads": False}  # given: a depth of cc3d_vector_loads takes them by default
    plain = host_kernels(stencil, fuse, dtype, precision, w, **plain_options)
    vec = host_kernels(stencil, fuse, dtype, precision, w, **options)
    assert dict(vec.plan.defines)["K_VLD"] == 1 and "K_VLD" not in dict(plain.plan.defines)
    assert "rows read as vectors" in vec.describe() and "vectors" not in plain.describe()
    assert np.array_equal(run_sweep(plain, x).view(np.uint8), run_sweep(vec, x).view(np.uint8))
    again = plans.recorded_cuda_core_plan(stencil, fuse, precision, vec.describe())
    assert again.defines == vec.plan.defines and again.smem == vec.plan.smem


@pytest.mark.parametrize("stencil, fuse, dtype", [(Stencil.box(3, 1), 3, "double"), (Stencil.box(2, 1), 4, "float"),
                                                  (CUSTOM[0], 2, "double"), (CUSTOM[5], 2, "float"),
                                                  (Stencil.box(1, 2), 4, "double"), (CUSTOM[3], 3, "float"),
                                                  (Stencil.box(2, 1), 2, "half"), (Stencil.box(1, 1), 2, "bfloat16"),
                                                  (Stencil.star(3, 1), 2, "half")], ids=_ids)
def test_negative_control_fails_the_same_check(host_kernels, stencil, fuse, dtype):
    """A kernel running a weight perturbed as the GPU negative controls do is caught by the same check."""
    precision = PRECISION[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(3))
    good = host_kernels(stencil, fuse, dtype, precision, w)
    x = data({3: (11, 29, 70), 2: (1, 23, 300), 1: (1, 1, 9001)}[stencil.dims], dtype)
    bad_out = None
    try:
        good.set_weights(perturb_largest_weight(w, precision, good.numerics()))
        bad_out = run_sweep(good, x)
    finally:
        good.set_weights(good.uploaded_weights())
    assert not check(good, x, bad_out).passed
    assert check(good, x, run_sweep(good, x)).passed


def test_shared_memory_layout_is_the_planners(host_kernels):
    """The constructor compares the layout the compiled source exports with the plan's; both must agree."""
    for stencil, t, dtype, precision in [(Stencil.box(3, 1), 4, "float", "fp32"), (Stencil.box(2, 2), 3, "double", "fp64")]:
        k = host_kernels(stencil, t, dtype, precision, random_weights(stencil.mask(), np.random.default_rng(0)))
        name = "k_planebuf" if stencil.dims == 3 else "k_rowbuf"
        assert k._const_int(name) == k.plan.options[name.removeprefix("k_")] > 0


def test_emulation_sees_a_race():
    """The reversed thread order exposes a read of shared memory written by another thread without a barrier."""
    import ctypes
    import os
    import subprocess
    import tempfile

    source = r'''
#include "emu.h"
extern "C" void racy(float* out) {
    static float buf[64];
    buf[threadIdx.x] = float(threadIdx.x);
    out[threadIdx.x] = buf[(threadIdx.x + 1) % 64];   // no __syncthreads() between write and read
}
extern "C" void fenced(float* out) {
    static float buf[64];
    buf[threadIdx.x] = float(threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = buf[(threadIdx.x + 1) % 64];
}
extern "C" int go(int which, float* out, int reverse) {
    void* argv[] = {&out};
    return emu::launch(which ? fenced : racy, dim3{1, 1, 1}, dim3{64, 1, 1}, 0, argv, reverse);
}
'''
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = os.path.join(tmp, "race.cpp"), os.path.join(tmp, "race.so")
        with open(src, "w") as fh:
            fh.write(source)
        subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-shared", f"-I{_host_cuda.EMU_DIR}", "-o", lib, src],
                       check=True, capture_output=True)
        so = ctypes.CDLL(lib)
        outs = {}
        for which in (0, 1):
            for rev in (0, 1):
                a = np.zeros(64, np.float32)
                assert so.go(which, a.ctypes.data_as(ctypes.c_void_p), rev) == 0
                outs[which, rev] = a
    expected = (np.arange(64) + 1) % 64
    assert np.array_equal(outs[1, 0], expected) and np.array_equal(outs[1, 1], expected)
    assert not np.array_equal(outs[0, 0], outs[0, 1])


def test_too_wide_halo_is_refused_before_compiling(host_kernels):
    with pytest.raises(TcAdvisorError, match="too wide"):
        host_kernels(Stencil.box(3, 4), 8, "double", "fp64", random_weights(Stencil.box(3, 4).mask(),
                                                                         np.random.default_rng(0)),
                     v=4, cols=64, rows=32)
    with pytest.raises(TcAdvisorError, match="would spill to local memory"):  # the planner's own tiles
        host_kernels(Stencil.box(3, 4), 8, "double", "fp64", random_weights(Stencil.box(3, 4).mask(),
                                                                         np.random.default_rng(0)))


def test_trimmed_rows_cut_the_fmas_as_counted_by_hand(host_kernels):
    """Box-3D1R x3 on 16 x 16 threads (2 rows per warp): step s computes rows [s, 16 - s), i.e. 14 + 12 + 10
    of 3 x 16 rows per thread; whole warps skip 0, 2 and 2 of their 8 pairs of rows."""
    from tcadvisor.gpu.plans import computed_rows

    st = Stencil.box(3, 1)
    w = random_weights(st.mask(), np.random.default_rng(3))
    full = host_kernels(st, 3, "double", "fp64", w, trap=False)
    trim = host_kernels(st, 3, "double", "fp64", w, trap=True)
    assert computed_rows(trim.plan, per_warp=False) == Fraction(36, 48)
    assert computed_rows(trim.plan, per_warp=True) == Fraction(40, 48)
    x = data((11, 29, 70), "double")
    a, b = run_sweep(full, x), run_sweep(trim, x)
    assert np.array_equal(a, b)  # the same operations on every row that reaches an output
    assert trim.kernel.fmas * 48 == full.kernel.fmas * 36


def test_rows_per_thread_trim_in_whole_threads_as_counted_by_hand(host_kernels):
    """Box-3D1R x3, 64 x 16 tile, 2 rows per thread (16 x 8 threads, 2 thread rows = 4 tile rows per warp): a
    thread computes step s if either of its rows lies in [s, 16 - s): 16 + 12 + 12 of 3 x 16 rows per thread;
    every warp has a row inside at every step (48 of 48).  Same bits as one row per thread, 2 rows per thread."""
    from tcadvisor.gpu.plans import computed_rows

    st = Stencil.box(3, 1)
    w = random_weights(st.mask(), np.random.default_rng(3))
    one = host_kernels(st, 3, "double", "fp64", w, trap=True)
    two = host_kernels(st, 3, "double", "fp64", w, trap=True, rows_per_thread=2)
    assert two.plan.block == (16, 8, 1) and two.plan.tile == {"x": 64, "y": 16}
    assert computed_rows(two.plan, per_warp=False) == Fraction(40, 48)
    assert computed_rows(two.plan, per_warp=True) == 1
    x = data((11, 29, 70), "double")
    assert np.array_equal(run_sweep(one, x), run_sweep(two, x))
    assert two.kernel.fmas * 36 == one.kernel.fmas * 40


@pytest.mark.parametrize("stencil, fuse, dtype, options", [
    (Stencil.box(2, 1), 6, "double", {"rows_per_iter": 2}), (Stencil.star(2, 1), 11, "double", {"rows_per_iter": 1}),
    (Stencil.box(2, 2), 3, "float", {"direct_store": True})], ids=_ids)
def test_rows_in_flight_give_the_same_bits(host_kernels, stencil, fuse, dtype, options):
    """prefetch only moves when the input rows are copied (K_PF iterations ahead instead of one) and where they
    wait (a ring of K_PF + 1 buffers): every FMA sees the same operands, so the output is bit for bit the same; the
    shared memory grows by the extra input buffers alone."""
    precision = PRECISION[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(7))
    x = data((1, 23, 300), dtype)
    one = host_kernels(stencil, fuse, dtype, precision, w, async_copy=True, prefetch=1, **options)
    for pf in (2, 3, 8):
        ahead = host_kernels(stencil, fuse, dtype, precision, w, async_copy=True, prefetch=pf, **options)
        assert f"rows copied asynchronously, {pf} iterations ahead" in ahead.describe()
        assert dict(ahead.plan.defines)["K_PF"] == pf and "K_PF" not in dict(one.plan.defines)
        rowbytes = one.plan.options["nr"] * one.plan.options["rowbuf"] * (8 if dtype == "double" else 4)
        assert ahead.plan.smem - one.plan.smem == (pf - 1) * rowbytes
        assert np.array_equal(run_sweep(one, x).view(np.uint8), run_sweep(ahead, x).view(np.uint8))


#: FP16/BF16 input rows copied by cp.async: each strip's row lands planar and step 1 packs its window (odd and even
#: radii, several rows per iteration, iterations ahead, kept columns, direct stores, a custom stencil, 1D as a row).
PAIR_COPIES = [(Stencil.box(2, 1), 5, "half", {}), (Stencil.star(2, 1), 9, "bfloat16", {"prefetch": 3}),
               (Stencil.box(2, 2), 3, "half", {"rows_per_iter": 2, "prefetch": 2}),
               (Stencil.star(2, 3), 2, "bfloat16", {"v": 4, "cols": 256}),
               (Stencil.box(2, 1), 11, "half", {"keep_columns": True, "direct_store": True, "prefetch": 4}),
               (CUSTOM[0], 3, "half", {"prefetch": 2}), (Stencil.box(1, 3), 4, "half", {"layout": "stream"})]


@pytest.mark.parametrize("stencil, fuse, dtype, options", PAIR_COPIES, ids=_ids)
def test_pair_copies_give_the_same_bits(host_kernels, stencil, fuse, dtype, options):
    """async_copy with FP16/BF16 changes only how the input rows reach shared memory (each strip's 16-bit row copied
    as it lies, packed into words as step 1 reads them) and, with prefetch, when: every FMA sees the same operands,
    so the output is the register path's bit for bit, correct, and the same with the threads reversed."""
    precision = PRECISION[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(8))
    x = data((1, 17, 1100) if stencil.dims == 2 else (1, 1, 1100), dtype)  # a block whose second strip is past the grid
    regs_options = {k: v for k, v in options.items() if k != "prefetch"}
    regs = host_kernels(stencil, fuse, dtype, precision, w, async_copy=False, **regs_options)
    copied = host_kernels(stencil, fuse, dtype, precision, w, async_copy=True, **options)
    assert "rows copied asynchronously" in copied.describe() and dict(copied.plan.defines)["K_ASYNC"] == 1
    out = run_sweep(copied, x)
    assert check(copied, x, out).passed
    assert np.array_equal(run_sweep(regs, x).view(np.uint8), out.view(np.uint8))
    assert np.array_equal(run_sweep(copied, x, reverse=True).view(np.uint8), out.view(np.uint8))
    again = plans.recorded_cuda_core_plan(stencil, fuse, precision, copied.describe())
    assert again.defines == copied.plan.defines and again.smem == copied.plan.smem


@pytest.mark.parametrize("stencil, fuse, options, right, wrong", [
    # lane 1 copied from lane 0's strip
    (Stencil.box(2, 1), 3, {}, "reinterpret_cast<const real*>(src_ + TXO + 2 * j_)", "reinterpret_cast<const real*>(src_ + 2 * j_)"),
    # an odd radius's window read from the even half before it
    (Stencil.star(2, 1), 3, {}, "const int p = (RX & 1) + j;", "const int p = j;"),
    # the first rows read before they landed (one step: at depth their share of the first outputs is below rounding)
    (Stencil.box(2, 2), 1, {"prefetch": 3}, "copy_async_wait_group<K_PF - 1>();  // the first rows",
     "copy_async_wait_group<K_PF>();  // the first rows"),
], ids=["lane 1's source", "odd window", "first rows' wait"])
def test_broken_pair_copies_are_caught(host_kernels, monkeypatch, stencil, fuse, options, right, wrong):
    """The pairs' copies compiled with one thing broken: the check fails in at least one thread order (the emulation
    lands a copy only at its thread's wait)."""
    from tcadvisor.data import data_dir
    from tcadvisor.gpu import cuda_cores

    w = random_weights(stencil.mask(), np.random.default_rng(9))
    x = data((1, 17, 1100), "half")
    good = host_kernels(stencil, fuse, "half", "fp16", w, async_copy=True, **options)
    assert check(good, x, run_sweep(good, x)).passed
    source = (data_dir("kernels") / "cuda_cores_2d.cu").read_text()
    broken = source.replace(right, wrong)
    assert broken != source
    monkeypatch.setattr(cuda_cores, "module", lambda filename, defines: _host_cuda.compile_module(
        filename, defines, "cc_stream2d", text=broken))
    bad = host_kernels(stencil, fuse, "half", "fp16", w, async_copy=True, **options)
    caught = [not check(bad, x, out).passed or not np.isfinite(from_storage(out, "half")).all()
              for out in (run_sweep(bad, x), run_sweep(bad, x, reverse=True))]
    assert any(caught)


@pytest.mark.parametrize("options, message", [
    ({"trap": True}, "options of the 3D CUDA-core kernel"), ({"prefetch": 5}, "1 to 4 input planes"),
    ({"prefetch": 2, "async_copy": False, "dims": 2}, "only when it copies them asynchronously"),
    ({"prefetch": 9, "async_copy": True, "dims": 2}, "1 to 8 iterations of input rows"),
    ({"rows_per_thread": 5}, "1 to 4 rows"), ({"rows_per_thread": 3, "rows": 16}, "whole columns and rows")])
def test_knobs_outside_their_kernel_are_refused(options, message):
    from tcadvisor.gpu.plans import plan_cuda_cores

    options = dict(options)
    dims = options.pop("dims", 2 if "trap" in options else 3)
    with pytest.raises(TcAdvisorError, match=message):
        plan_cuda_cores(Stencil.box(dims, 1), 2, "fp64", **options)


@pytest.mark.parametrize("stencil, fuse, dtype, options",
                         [(Stencil.box(3, 1), t, d, {}) for t in (1, 3, 4) for d in ("double", "float")]
                         + [(Stencil.box(2, 1), t, "double", {}) for t in (3, 9, 12)] + KNOBS, ids=_ids)
def test_the_kernel_description_reads_back_to_its_plan(host_kernels, stencil, fuse, dtype, options):
    """Result files keep only the line a kernel prints about itself; plans.recorded_cuda_core_plan must recover
    the configuration from it (rows per thread, trimmed rows, planes in flight, copies and direct stores)."""
    from tcadvisor.gpu.plans import recorded_cuda_core_plan

    precision = PRECISION[dtype]
    kernel = host_kernels(stencil, fuse, dtype, precision, random_weights(stencil.mask(), np.random.default_rng(3)),
                          **options)
    assert recorded_cuda_core_plan(stencil, fuse, precision, kernel.describe()) == kernel.plan, kernel.describe()


@pytest.mark.parametrize("stencil", [st for st in CUSTOM if st.dims > 1]
                         + [Stencil.from_offsets([(0, 40), (-3, -40), (1, 0)], name="Wide-2D")], ids=_ids)
def test_the_tap_set_is_the_stencils_support(stencil):
    """K_TAPS of the 2D and 3D kernels ('_' and a row's bitmask of columns in hex, per kernel row: one identifier,
    which nvcc does not split at commas) decodes to the stencil's mask, in the layout of the uploaded weights; box
    and star plans carry none (their code is the built-in predicate, as before tap sets existed)."""
    from tcadvisor.gpu.plans import plan_cuda_cores

    for plain in (Stencil.box(stencil.dims, 1), Stencil.star(stencil.dims, 2)):
        assert "K_TAPS" not in dict(plan_cuda_cores(plain, 2, "fp64").defines)
    text = dict(plan_cuda_cores(stencil, 1, "fp64").defines)["K_TAPS"]
    assert text.isidentifier() and text[0] == "_"
    mask = stencil.mask()
    side = mask.shape[-1]
    rows = [int(row, 16) for row in text[1:].split("_")]
    assert len(rows) == mask.size // side and all(len(row) == -(-side // 4) for row in text[1:].split("_"))
    decoded = np.array([[(row >> b) & 1 for b in range(side)] for row in rows], dtype=bool).reshape(mask.shape)
    assert np.array_equal(decoded, mask)


def test_1d_tiles_are_the_planners(host_kernels):
    """The 1D kernel's tiles: the halo r·t either side, outputs whole 16-byte vectors, refusals of the streaming
    kernel's knobs in one line; ``layout="stream"`` still plans the 2D kernel on one row (recorded 1D runs)."""
    st = Stencil.box(1, 2)
    k = host_kernels(st, 6, "float", "fp32", random_weights(st.mask(), np.random.default_rng(0)))
    assert k.plan.source == "cuda_cores_1d.cu" and k.tile1d
    assert k.cols == 256 * 16 and k.txo == (4096 - 2 * 12 - 3) // 4 * 4 == 4068
    assert "1D tiles of 256 threads x 16 points, staged" in k.describe()
    with pytest.raises(TcAdvisorError, match="async_copy: the 1D CUDA-core kernel takes v, cols and stage only"):
        host_kernels(st, 2, "double", "fp64", random_weights(st.mask(), np.random.default_rng(0)), async_copy=True)
    stream = host_kernels(st, 2, "double", "fp64", random_weights(st.mask(), np.random.default_rng(0)),
                          layout="stream")
    assert stream.plan.source == "cuda_cores_2d.cu" and not stream.tile1d


@pytest.mark.parametrize("dtype, gx_extra", [("double", 1), ("float", 3), ("float", 6)])
def test_1d_tiles_on_wider_ghosts(host_kernels, dtype, gx_extra):
    """A field shared with a deeper sweep has wider ghosts than the kernel's halo (runner.allocate_fields merges
    geometries, as for the last, shallower sweep of 11 steps at t = 4); the tiles then start at the whole vector
    before their first point, and the sweep is still right."""
    from tcadvisor.gpu.fields import Geometry

    st = Stencil.box(1, 1)
    precision = PRECISION[dtype]
    k = host_kernels(st, 3, dtype, precision, random_weights(st.mask(), np.random.default_rng(2)))
    x = data((1, 1, 9001), dtype)
    own = k.geometry(x.shape)
    wide = Geometry(0, 0, own.gx + gx_extra, own.pitch + 64)
    fin = _host_cuda.HostField(x.shape, x.dtype, wide)
    fout = _host_cuda.HostField(x.shape, x.dtype, wide)
    fin.interior[...] = x
    fin.refresh()
    fout.data[...] = np.nan
    k.sweep(fin, fout)
    out = fout.interior.copy()
    assert np.isfinite(out).all()
    assert check(k, x, out).passed


def test_1d_stencils_too_wide_for_the_tile_stream_their_row(host_kernels):
    """A 1D stencil whose edges do not fit the tile's static shared memory (r = 16 in FP64: 64 threads need
    64 KiB) runs the streaming kernel on its one row instead of being refused; asked for explicitly, the tile
    refuses in one line."""
    st = Stencil.box(1, 16)
    w = random_weights(st.mask(), np.random.default_rng(1))
    k = host_kernels(st, 2, "double", "fp64", w)
    assert k.plan.source == "cuda_cores_2d.cu" and not k.tile1d
    x = data((1, 1, 3001), "double")
    assert check(k, x, run_sweep(k, x)).passed
    with pytest.raises(TcAdvisorError, match="the 1D CUDA-core kernel's tile"):
        host_kernels(st, 2, "double", "fp64", w, layout="tile")


@pytest.mark.parametrize("stencil, fuse, dtype", [(Stencil.box(2, 1), 2, "half"), (Stencil.star(2, 2), 3, "bfloat16"),
                                                  (Stencil.box(3, 1), 2, "bfloat16")], ids=_ids)
def test_pairs_on_fields_with_odd_ghost_offsets_give_the_same_bits(host_kernels, monkeypatch, stencil, fuse, dtype):
    """FP16/BF16 with 32-bit accesses of two columns per lane (K_VEC2) need each strip or tile to start at an even
    padded column: on a field whose ghosts are one column wider (a deeper sweep's field), the kernel starts it one
    column early.  The same operations on every output, so the same bits, and every output written."""
    from tcadvisor.gpu.fields import Geometry

    kernel = host_kernels(stencil, fuse, dtype, PRECISION[dtype], random_weights(stencil.mask(), np.random.default_rng(4)))
    assert dict(kernel.plan.defines).get("K_VEC2") == 1
    x = data((11, 29, 70) if stencil.dims == 3 else (1, 17, 1100), dtype)
    even = run_sweep(kernel, x)
    plain = kernel.geometry
    monkeypatch.setattr(kernel, "geometry", lambda shape3: (lambda g: Geometry(g.gz, g.gy, g.gx + 1, g.pitch + 32))(
        plain(shape3)))
    odd = run_sweep(kernel, x)
    assert kernel.geometry(x.shape).gx % 2 != plain(x.shape).gx % 2
    assert check(kernel, x, odd).passed
    assert np.array_equal(even.view(np.uint8), odd.view(np.uint8))


def test_bf16_refuses_stencils_whose_chain_has_no_error_bound():
    """2K roundings to BF16 per step: from K = 64 taps the bound γ_2K reaches 100 % and no check could tell a
    right result from a wrong one, so the kernel (and with it the advisor) refuses; FP16 goes to K = 511."""
    from tcadvisor.gpu.cuda_cores import CudaCoreKernel

    assert CudaCoreKernel.unsupported(Stencil.box(2, 3), 1, "bfloat16", "bf16") is None  # K = 49
    why = CudaCoreKernel.unsupported(Stencil.box(2, 4), 1, "bfloat16", "bf16")  # K = 81
    assert why.startswith("Box-2D4R has 81 taps") and "at most 63 taps in BF16" in why
    assert CudaCoreKernel.unsupported(Stencil.box(3, 3), 1, "half", "fp16") is None  # K = 343
    with pytest.raises(TcAdvisorError, match="no error bound below 100 %"):
        CudaCoreKernel(Stencil.box(3, 2), 1, "bfloat16", "bf16", np.ones((5, 5, 5)) / 125)
