"""tcadvisor.apply on the CPU: the CUDA-core kernels' own source under the host emulation, on NumPy arrays.

The fixture is tests/test_cuda_cores_host.py's (CudaCoreKernel compiling and launching through
tests/_host_cuda.py), and apply's fields are :class:`_host_cuda.HostField` on NumPy.  Every result is
compared with a straightforward reference: ``scipy.ndimage.correlate`` in float64, one step at a time
(``mode="wrap"`` for periodic, ``mode="constant"`` with the boundary value for fixed values).
"""
import numpy as np
import pytest
from scipy import ndimage

import _host_cuda
import tcadvisor
from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import applying, runner
from tcadvisor.reference import random_weights
from tcadvisor.stencil import Stencil

pytestmark = pytest.mark.skipif(not _host_cuda.available(), reason="needs g++ to build the kernels for the host")

DEVICE = {"name": "host emulation", "cc": (9, 0), "sms": 16, "smem_optin": 232448, "smem_per_sm": 233472,
          "regs_per_sm": 65536}


@pytest.fixture
def host(monkeypatch):
    """apply() running the CUDA-core kernels through the host emulation on NumPy fields."""

    _host_cuda.patch_cuda_core_kernels(monkeypatch, DEVICE)
    monkeypatch.setattr(runner, "device_info", lambda: DEVICE)
    monkeypatch.setattr(applying, "_backend", lambda: (np, _host_cuda.HostField))
    applying._cached_configuration.cache_clear()  # every test asks the advisor afresh
    return applying


def reference(u, w, steps, boundary):
    """``steps`` float64 steps of scipy.ndimage.correlate (w's centre at its middle, as tcadvisor's convention)."""
    x = np.asarray(u, dtype=np.float64)
    for _ in range(steps):
        if boundary == "periodic":
            x = ndimage.correlate(x, w, mode="wrap")
        else:
            x = ndimage.correlate(x, w, mode="constant", cval=boundary[1])
    return x


def mixed_weights(stencil, seed):
    """Weights of both signs on the support, Σ|w| = 1 (values stay bounded; cancellation is exercised)."""
    rng = np.random.default_rng(seed)
    w = np.where(stencil.mask(), rng.uniform(-1, 1, stencil.mask().shape), 0.0)
    w[(stencil.radius,) * stencil.dims] = 1.0
    return w / np.abs(w).sum()


TOL = {np.float64: 1e-12, np.float32: 2e-5}

CASES = [  # stencil, grid, fuse, steps (a remainder sweep where steps % fuse)
    (Stencil.box(1, 1), (301,), 4, 11), (Stencil.box(1, 2), (157,), 3, 7),
    (Stencil.box(2, 1), (23, 45), 3, 7), (Stencil.star(2, 2), (29, 31), 2, 5),
    (Stencil.box(3, 1), (9, 11, 20), 2, 5), (Stencil.star(3, 1), (10, 9, 17), 3, 6),
    (Stencil.from_offsets([(0, 0), (0, -1), (0, -2), (-1, 0), (-2, 0)], name="Upwind-2D"), (21, 30), 3, 8),
]
BOUNDARIES = ["periodic", ("constant", 0.0), ("constant", 1.75)]


def _ids(v):
    if isinstance(v, Stencil):
        return v.name
    return "x".join(map(str, v)) if isinstance(v, tuple) and all(isinstance(a, int) for a in v) else str(v)


@pytest.mark.parametrize("boundary", BOUNDARIES, ids=str)
@pytest.mark.parametrize("stencil, grid, fuse, steps", CASES, ids=_ids)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_apply_matches_the_reference(host, stencil, grid, fuse, steps, boundary, dtype):
    w = mixed_weights(stencil, 1)
    u = np.random.default_rng(2).uniform(-2, 2, grid).astype(dtype)
    res = tcadvisor.apply(u, stencil, steps, w, unit="cuda_core", fuse=fuse, boundary=boundary, check=True)
    assert res.output.dtype == u.dtype and res.output.shape == u.shape and isinstance(res.output, np.ndarray)
    assert res.sweeps == runner.sweep_plan(steps, fuse) and res.fuse == fuse and res.unit == "cuda_core"
    assert res.check is not None and res.check.passed and res.check.sweep.sweeps == len(res.sweeps)
    ref = reference(u, w, steps, boundary)
    err = np.max(np.abs(res.output - ref)) / np.max(np.abs(ref))
    assert err < TOL[dtype], err
    # unchecked runs give the same bits (the check only reads)
    again = tcadvisor.apply(u, stencil, steps, w, unit="cuda_core", fuse=fuse, boundary=boundary)
    assert again.check is None and np.array_equal(again.output.view(np.uint8), res.output.view(np.uint8))


@pytest.mark.parametrize("grid", [(64,), (40, 33), (12, 14, 16)], ids=_ids)
def test_fused_sweeps_without_the_band_fix_are_wrong_and_the_check_says_so(host, monkeypatch, grid):
    """The negative control: ghosts filled with c but the band not recomputed.  The kernel's values within
    r·(t−1) of a face are then those of ghosts that evolved, not of the fixed-value problem: far from the
    reference there, exact elsewhere -- and check=True refuses the run in one line."""
    st = Stencil.box(len(grid), 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    u = np.random.default_rng(1).uniform(1, 2, grid)
    t, c = 4, 0.0
    monkeypatch.setattr(applying, "redo_band", lambda *args: None)
    out = tcadvisor.apply(u, st, t, w, unit="cuda_core", fuse=t, boundary=("constant", c)).output
    ref = reference(u, w, t, ("constant", c))
    band = applying.band_mask(grid, st.radius * (t - 1))
    assert np.max(np.abs(out - ref)[~band]) < 1e-13  # the inner points: exact from the kernel
    assert np.min(np.abs(out - ref)[tuple(0 for _ in grid)]) > 1e-3  # the corner: not the fixed-value problem
    with pytest.raises(TcAdvisorError, match=r"^check failed: \d+ of \d+ outputs over 1 sweep fell outside"):
        tcadvisor.apply(u, st, t, w, unit="cuda_core", fuse=t, boundary=("constant", c), check=True)


def test_a_wrong_weight_fails_the_check(host, monkeypatch):
    """The check sees a kernel that runs other weights than the reference's (1e-9 on the largest, FP64)."""
    from tcadvisor.gpu.checking import perturb_largest_weight

    st = Stencil.box(2, 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    real = runner.make_kernel

    def tampered(stencil, profile, fuse, dtype, weights, *args, **kwargs):
        k = real(stencil, profile, fuse, dtype, weights, *args, **kwargs)
        k.set_weights(perturb_largest_weight(weights, "fp64"))
        return k

    monkeypatch.setattr(runner, "make_kernel", tampered)
    u = np.random.default_rng(1).uniform(1, 2, (23, 45))
    for boundary in ("periodic", ("constant", 0.5)):
        with pytest.raises(TcAdvisorError, match="^check failed"):
            tcadvisor.apply(u, st, 6, w, unit="cuda_core", fuse=3, boundary=boundary, check=True)


def test_stencil_from_a_weight_array_carries_its_weights_and_dtype(host):
    w = np.array([[0, .1, 0], [.15, .5, .1], [0, .15, 0]], dtype=np.float32)
    u = np.random.default_rng(3).uniform(0, 1, (30, 41))
    res = tcadvisor.apply(u, w, 6, unit="cuda_core", fuse=2, boundary=("constant", -1.0), check=True)
    assert np.array_equal(res.weights, w.astype(np.float64))
    assert any("float; the array is double, which is what runs" in n for n in res.notes), res.notes
    ref = reference(u, w.astype(np.float64), 6, ("constant", -1.0))
    assert np.max(np.abs(res.output - ref)) < 1e-13
    # the same weights again are accepted; different ones are refused
    tcadvisor.apply(u, w, 2, w, unit="cuda_core", fuse=2)
    with pytest.raises(TcAdvisorError, match=r"^weights= differ from the weights .* carries"):
        tcadvisor.apply(u, w, 2, w * 2, unit="cuda_core", fuse=2)


def test_update_function_and_mapping(host):
    """An update function (probed on an array of u's dimensionality) and a mapping {offset: weight}."""
    def step(x):
        return 0.5 * x + 0.25 * np.roll(x, 1, axis=0) + 0.25 * np.roll(x, -1, axis=1)

    u = np.random.default_rng(4).uniform(0, 1, (26, 35))
    res = tcadvisor.apply(u, step, 5, unit="cuda_core", fuse=5, check=True)
    x = u.copy()
    for _ in range(5):
        x = step(x)
    assert np.max(np.abs(res.output - x)) < 1e-13
    res = tcadvisor.apply(u[0], {(-1,): 0.25, (0,): 0.5, (1,): 0.25}, 9, unit="cuda_core", fuse=4,
                          boundary=("constant", 0.0))
    assert np.max(np.abs(res.output - reference(u[0], np.array([.25, .5, .25]), 9, ("constant", 0.0)))) < 1e-13


def test_the_advisor_chooses_the_depth_and_says_so(host):
    """unit given, fuse not: the advisor's best depth for that unit on this grid and number of steps."""
    st = Stencil.box(2, 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    u = np.random.default_rng(1).uniform(1, 2, (64, 96))
    res = tcadvisor.apply(u, st, 20, w, unit="cuda_core", boundary=("constant", 1.0), check=True,
                          gpu="H100")
    advice = tcadvisor.advise(st, "double", "H100", grid=(64, 96), steps=20)
    assert res.fuse == advice.best["cuda_core"].fuse and res.advice is not None
    assert res.chosen.startswith("the advisor's best depth for unit='cuda_core' for 64x96, 20 steps on ")
    assert f"fused t = {res.fuse}" in res.describe() and "constant 1 boundary" in res.describe()
    assert np.max(np.abs(res.output - reference(u, w, 20, ("constant", 1.0)))) < 1e-12


def test_small_grids_fall_back_to_unfused_sweeps_under_fixed_values(host):
    """An extent below 2·r·t: the band would be everything, so the sweeps run at t = 1 (and the result says so);
    periodic fields keep the depth, whatever their size."""
    st = Stencil.box(2, 2)
    w = mixed_weights(st, 5)
    u = np.random.default_rng(6).uniform(-1, 1, (7, 40))
    res = tcadvisor.apply(u, st, 6, w, unit="cuda_core", fuse=3, boundary=("constant", 0.25), check=True)
    assert res.fuse == 1 and res.sweeps == [1] * 6
    assert any("unfused (t = 1) instead of fuse = 3" in n for n in res.notes), res.notes
    assert np.max(np.abs(res.output - reference(u, w, 6, ("constant", 0.25)))) < 1e-12
    for grid in ((7, 40), (3, 5), (1, 9)):
        u = np.random.default_rng(6).uniform(-1, 1, grid)
        res = tcadvisor.apply(u, st, 6, w, unit="cuda_core", fuse=3, check=True)
        assert res.fuse == 3 and np.max(np.abs(res.output - reference(u, w, 6, "periodic"))) < 1e-12


def test_tiny_grids(host):
    """Grids smaller than the stencil along some axis: the kernels' ghost layers wrap (periodic) or hold c."""
    for grid in ((1,), (2,), (5,), (1, 1), (2, 3), (1, 7), (1, 1, 1), (2, 3, 2), (3, 1, 4)):
        st = Stencil.box(len(grid), 1)
        w = mixed_weights(st, 7)
        u = np.random.default_rng(8).uniform(-1, 1, grid)
        for boundary in ("periodic", ("constant", 0.5)):
            res = tcadvisor.apply(u, st, 4, w, unit="cuda_core", fuse=2, boundary=boundary, check=True)
            assert np.max(np.abs(res.output - reference(u, w, 4, boundary))) < 1e-12, (grid, boundary)


def test_the_boundary_value_is_stored_in_the_fields_dtype(host):
    st = Stencil.box(1, 1)
    w = np.array([.25, .5, .25])
    u = np.zeros(50, dtype=np.float32)
    res = tcadvisor.apply(u, st, 3, w, unit="cuda_core", fuse=3, boundary=("constant", 0.1), check=True)
    c32 = float(np.float32(0.1))
    assert any(f"boundary value 0.1 is {c32!r} in float" in n for n in res.notes), res.notes
    assert np.max(np.abs(res.output - reference(u, w, 3, ("constant", c32)))) < 1e-8
    assert res.output[0] != 0 and res.output[10] == 0


# --------------------------------------------------------------------------- refusals (no kernel runs)

REFUSALS = [
    (lambda: tcadvisor.apply([1.0, 2.0], "Box-1D1R", 1, [.2, .6, .2]), r"^u is a list; expected a NumPy or CuPy"),
    (lambda: tcadvisor.apply(np.zeros(8, np.int32), "Box-1D1R", 1, [.2, .6, .2]),
     r"^u has element type int32; expected float64, float32 or float16"),
    (lambda: tcadvisor.apply(np.zeros(8, np.complex128), "Box-1D1R", 1, [.2, .6, .2]), r"^u has element type"),
    (lambda: tcadvisor.apply(np.zeros((2,) * 4), "Box-3D1R", 1), r"^u has 4 dimensions .*1D, 2D and 3D"),
    (lambda: tcadvisor.apply(np.float64(1.0), "Box-1D1R", 1), r"^u is a numpy.float64; expected a NumPy or CuPy"),
    (lambda: tcadvisor.apply(np.array(1.0), "Box-1D1R", 1), r"^u has 0 dimensions \(shape \(\)\)"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-3D1R", 1), r"^u is 2D \(shape \(4, 4\)\) but Box-3D1R is 3D"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 0, np.ones((3, 3))), r"^--steps 0: expected"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 2.5, np.ones((3, 3))), r"^--steps 2.5: expected"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 1), r"^Box-2D1R has no weights; pass weights="),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 1, np.ones((5, 5))), r"^weights of shape \(5, 5\)"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 1, np.ones((3, 3)), boundary="reflect"),
     r"^boundary 'reflect' is not understood; expected 'periodic' or \('constant', c\)"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 1, np.ones((3, 3)), boundary=("constant", "0")),
     r"^boundary value '0' \(str\) is not a number"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), "Box-2D1R", 1, np.ones((3, 3)), boundary=("constant", np.nan)),
     r"^boundary value nan is not finite"),
    (lambda: tcadvisor.apply(np.zeros(4, np.float16), "Box-1D1R", 1, [.2, .6, .2], boundary=("constant", 1e6)),
     r"^boundary value 1e\+06 does not fit half fields"),
    (lambda: tcadvisor.apply(np.zeros((0, 4)), "Box-2D1R", 1, np.ones((3, 3))), r"^grid 0x4: every extent"),
    (lambda: tcadvisor.apply(np.zeros((4, 4)), 42, 1), r"^stencil 42 \(int\) is not a form tcadvisor reads"),
]


@pytest.mark.parametrize("call, message", REFUSALS, ids=range(len(REFUSALS)))
def test_refusals_are_one_line(call, message):
    with pytest.raises(TcAdvisorError, match=message) as exc:
        call()
    assert "\n" not in str(exc.value)


def test_without_cupy_the_refusal_names_the_gpu_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(TcAdvisorError, match=r"pip install 'tcadvisor\[gpu\]'"):
        tcadvisor.apply(np.ones((8, 8)), "Box-2D1R", 2, np.full((3, 3), 1 / 9))


@pytest.mark.parametrize("kwargs, message", [
    ({"unit": "cuda_core", "fuse": 2, "u": np.zeros((8, 8), np.int32)}, r"int32"),
    ({"unit": "sparse_tensor_core", "fuse": 1, "u": np.zeros((8, 8))}, r"no double variant|not double"),
    ({"unit": "tensor_core", "fuse": 9, "steps": 9, "u": np.zeros((8, 8))},
     r"^fused radius r·t = 9 is too large for the Tensor Core kernel"),
    ({"unit": "cuda_core", "fuse": 3, "steps": 2, "u": np.zeros((8, 8))}, r"^fuse 3 is deeper than steps 2"),
    ({"unit": "cuda_core", "fuse": 0, "u": np.zeros((8, 8))}, r"fusion depth"),
    ({"unit": "abacus", "u": np.zeros((8, 8))}, r"^--unit 'abacus': the bundled kernels run on"),
    ({"unit": "sparse_tensor_core", "u": np.zeros((8, 8))},
     r"^Sparse Tensor Cores has no configuration for Box-2D1R in double .*runs float, half, bfloat16 fields"),
])
def test_what_the_kernels_cannot_run_is_refused_with_their_reasons(host, kwargs, message):
    u = kwargs.pop("u")
    steps = kwargs.pop("steps", 4)
    w = np.full((3, 3), 1 / 9)
    with pytest.raises(TcAdvisorError, match=message) as exc:
        tcadvisor.apply(u, "Box-2D1R", steps, w, gpu="H100", **kwargs)
    assert "\n" not in str(exc.value)


def test_the_analytical_import_needs_no_cupy():
    """``tcadvisor.apply`` is importable (lazily) without CuPy; only running it needs a GPU."""
    import subprocess
    import sys

    code = ("import sys, tcadvisor; f = tcadvisor.apply; import tcadvisor.gpu.applying; "
            "assert 'cupy' not in sys.modules; print(f.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "apply", out.stderr


def test_the_same_query_is_not_asked_twice(host, monkeypatch):
    """A time loop calling apply with the same arguments asks the advisor once (the answer is cached), and
    says the same; another number of steps is another query."""
    import tcadvisor.advisor

    calls = []
    real = tcadvisor.advisor.advise

    def counted(*args, **kwargs):
        calls.append(kwargs.get("steps"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tcadvisor.advisor, "advise", counted)
    st = Stencil.box(2, 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    u = np.random.default_rng(1).uniform(1, 2, (33, 47))
    first = tcadvisor.apply(u, st, 17, w, unit="cuda_core", gpu="H100")
    second = tcadvisor.apply(first.output, st, 17, w, unit="cuda_core", gpu="H100")
    assert calls == [17] and (second.fuse, second.chosen, second.notes) == (first.fuse, first.chosen, first.notes)
    tcadvisor.apply(u, st, 18, w, unit="cuda_core", gpu="H100")
    assert calls == [17, 18]
    both = tcadvisor.apply(u, st, 34, w, unit="cuda_core", gpu="H100")
    assert np.max(np.abs(both.output - second.output)) < 1e-13  # 17 + 17 steps are 34 steps


@pytest.mark.parametrize("boundary", ["periodic", ("constant", 1.75)], ids=str)
@pytest.mark.parametrize("stencil, grid, fuse, steps", [CASES[0], CASES[2], CASES[4]], ids=_ids)
def test_apply_in_half_on_cuda_cores_matches_the_reference(host, stencil, grid, fuse, steps, boundary):
    """float16 arrays run the packed FP16 CUDA-core kernel (two tiles per block): every sweep inside its rounding
    interval, the result within a few FP16 ulps per step of the float64 reference."""
    w = mixed_weights(stencil, 1)
    u = np.random.default_rng(2).uniform(-2, 2, grid).astype(np.float16)
    res = tcadvisor.apply(u, stencil, steps, w, unit="cuda_core", fuse=fuse, boundary=boundary, check=True)
    assert res.output.dtype == np.float16 and res.unit == "cuda_core" and res.check.passed
    ref = reference(u, w, steps, boundary)
    err = np.max(np.abs(res.output.astype(np.float64) - ref)) / np.max(np.abs(ref))
    assert err < 2 * stencil.K * steps * 2.0**-11, err
