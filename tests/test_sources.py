"""tcadvisor.stencil_from: one operator written as an array, a mapping or an update function reads as one stencil;
the conventions agree with SciPy and PyTorch; every refusal is one line."""
import itertools
import re
import time

import numpy as np
import pytest
import scipy.ndimage as ndi

import tcadvisor
from tcadvisor.errors import TcAdvisorError
from tcadvisor.reference import apply_periodic
from tcadvisor.sources import StencilSource, stencil_from
from tcadvisor.sources.probe import MAX_CALLS, PROBE_RADIUS, PROBE_SIDE
from tcadvisor.stencil import Stencil

# --------------------------------------------------------------------------- one operator, three ways

# Distinct weights everywhere, so that a transposed axis or a flipped sign of an offset cannot pass.
STAR_2D = {(0, 0): -3.5, (-1, 0): 1.0, (1, 0): 2.0, (0, -1): 0.25, (0, 1): 0.125}
UPWIND_2D = {(0, 0): 1 - 0.3 - 0.2, (-1, 0): 0.3, (0, -1): 0.2}  # u - c_x (u - u[i-1]) - c_y (u - u[j-1])
_rng = np.random.default_rng(7)
BOX_3D = {o: float(_rng.uniform(0.5, 1.5)) for o in itertools.product((-1, 0, 1), repeat=3)}
STAR_3D_R4 = {(0, 0, 0): -7.0, **{o: 0.1 * (1 + k) + 0.01 * axis for axis in range(3) for k, step in
                                  enumerate((-4, -3, -2, -1, 1, 2, 3, 4))
                                  for o in [tuple(step if a == axis else 0 for a in range(3))]}}
OPERATORS = {"star2d": STAR_2D, "upwind2d": UPWIND_2D, "box3d": BOX_3D, "star3d-r4": STAR_3D_R4}


def as_array(weights: dict) -> np.ndarray:
    """The correlation kernel: the weight of offset o at index o + r."""
    dims, r = len(next(iter(weights))), max(max(abs(v) for v in o) for o in weights)
    out = np.zeros((2 * r + 1,) * dims)
    for o, w in weights.items():
        out[tuple(v + r for v in o)] = w
    return out


def sliced(weights: dict):
    """An update written with slices, returning the interior: new[r:-r] = Σ w · u[r + o : n - r + o]."""
    r = max(max(abs(v) for v in o) for o in weights)

    def step(u):
        n = u.shape[0]
        return sum(w * u[tuple(slice(r + v, n - r + v) for v in o)] for o, w in weights.items())
    return step


def rolled(weights: dict):
    """The same update on a periodic grid, written with np.roll (full-size output)."""
    def step(u):
        return sum(w * np.roll(u, tuple(-v for v in o), axis=tuple(range(u.ndim))) for o, w in weights.items())
    return step


def _as_dict(st: Stencil) -> dict:
    return dict(zip(st.offsets, st.weights))


@pytest.mark.parametrize("name", OPERATORS)
def test_one_operator_as_array_mapping_and_functions_gives_one_stencil(name):
    weights = OPERATORS[name]
    dims = len(next(iter(weights)))
    forms = [stencil_from(as_array(weights)), stencil_from(weights),
             stencil_from(sliced(weights), dims=dims), stencil_from(rolled(weights), dims=dims)]
    for src in forms:
        assert isinstance(src, StencilSource)
        got = _as_dict(src.stencil)
        assert got.keys() == weights.keys()
        assert all(got[o] == pytest.approx(w, rel=1e-12) for o, w in weights.items())
    assert len({(f.stencil.shape, f.stencil.dims, f.stencil.radius, f.stencil.K) for f in forms}) == 1
    assert forms[0].dtype == "double" and forms[1].dtype is None and forms[2].dtype is None


def test_handwritten_slicing_updates_read_as_written():
    jacobi = stencil_from(lambda u: 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]), dims=2)
    assert _as_dict(jacobi.stencil) == {(-1, 0): 0.25, (1, 0): 0.25, (0, -1): 0.25, (0, 1): 0.25}
    assert any("interior" in n and "u_new[s:-s]" in n for n in jacobi.notes)
    # an upwind step that reads u[i-1, j] and u[i, j-1], written as the interior update
    upwind = stencil_from(lambda u: u[1:-1, 1:-1] - 0.3 * (u[1:-1, 1:-1] - u[:-2, 1:-1])
                          - 0.2 * (u[1:-1, 1:-1] - u[1:-1, :-2]), dims=2)
    got = _as_dict(upwind.stencil)
    assert got.keys() == UPWIND_2D.keys()
    assert all(got[o] == pytest.approx(w, abs=1e-15) for o, w in UPWIND_2D.items())


def test_in_place_update_returning_none_is_read_and_said():
    def step(u):
        u[1:-1] = 0.5 * (u[2:] + u[:-2])
    src = stencil_from(step, dims=1)
    assert _as_dict(src.stencil) == {(-1,): 0.5, (1,): 0.5}
    assert any("returned None" in n for n in src.notes)


# --------------------------------------------------------------------------- conventions against SciPy

@pytest.mark.parametrize("shape,origin", [((3, 3), None), ((5,), None), ((3, 5), (1, -2)), ((4, 3), (-1, 0)),
                                          ((2, 2, 3), (0, -1, 1)), ((4,), 1)])
def test_correlation_and_origin_agree_with_scipy(shape, origin):
    rng = np.random.default_rng(11)
    w = rng.standard_normal(shape)
    x = rng.standard_normal((16,) * len(shape))
    st = stencil_from(w, origin=origin).stencil
    ours = apply_periodic(x, st.weight_array())
    theirs = ndi.correlate(x, w, mode="wrap", origin=0 if origin is None else origin)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    flipped = stencil_from(w, origin=origin, flip=True).stencil  # a convolution kernel, as SciPy convolves it
    np.testing.assert_allclose(apply_periodic(x, flipped.weight_array()),
                               ndi.convolve(x, w, mode="wrap", origin=0 if origin is None else origin),
                               rtol=1e-12, atol=1e-12)


def test_offsets_follow_the_array_axis_order():
    w = np.zeros((3, 3))
    w[2, 1] = 1.0  # one row below the centre: axis 0 (y) offset +1
    assert stencil_from(w).stencil.offsets == ((1, 0),)


# --------------------------------------------------------------------------- libraries and dtypes

def test_dtype_from_the_array():
    w = as_array(STAR_2D)
    assert [stencil_from(w.astype(t)).dtype for t in (np.float64, np.float32, np.float16)] == ["double", "float",
                                                                                               "half"]
    for bad, kind in ((w.astype(np.int32), "integer"), (w.astype(np.complex128), "complex"), (w != 0, "boolean")):
        with pytest.raises(TcAdvisorError, match=kind) as err:
            stencil_from(bad)
        assert "\n" not in str(err.value)


class CupyLike:
    """A device array as CuPy has it: implicit conversion refused, .get() copies to the host."""
    __module__ = "cupy._core.core"

    def __init__(self, host):
        self._host, self.shape, self.dtype = host, host.shape, host.dtype

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()`")

    def get(self):
        return self._host.copy()


class DLPackOnly:
    """Offers DLPack and nothing else (no shape, no __array__)."""

    def __init__(self, host):
        self._host = host

    def __dlpack__(self, **kwargs):
        return self._host.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._host.__dlpack_device__()


def test_cupy_like_and_dlpack_only_arrays():
    w = as_array(BOX_3D).astype(np.float32)
    for obj in (CupyLike(w), DLPackOnly(w)):
        src = stencil_from(obj)
        assert src.dtype == "float" and src.stencil.shape == "box" and src.stencil.dims == 3
        assert _as_dict(src.stencil) == {o: float(np.float32(v)) for o, v in BOX_3D.items()}
    assert "CuPy" in stencil_from(CupyLike(w)).read_from


def test_a_huge_declared_shape_is_refused_before_copying():
    class Huge(CupyLike):
        def get(self):
            raise AssertionError("copied")
    big = Huge(np.zeros(1))
    big.shape = (1000, 1000, 1000)
    with pytest.raises(TcAdvisorError, match="too large"):
        stencil_from(big)


def test_pytorch_weights():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((12, 12))
    conv = torch.nn.Conv2d(1, 1, 3, bias=False)  # a layer's weight: requires grad
    src = stencil_from(conv.weight)
    assert src.dtype == "float" and src.stencil.dims == 2 and any("conv2d" in n for n in src.notes)
    ours = apply_periodic(x, src.stencil.weight_array())
    theirs = torch.nn.functional.conv2d(torch.tensor(x[None, None]), conv.weight.detach().double(),
                                        padding=1).numpy()[0, 0]
    np.testing.assert_allclose(ours[1:-1, 1:-1], theirs[1:-1, 1:-1], rtol=1e-6, atol=1e-6)  # PyTorch correlates
    k1 = torch.tensor([[[1.0, -2.0, 3.0, 0.5, 0.25]]], dtype=torch.float64)  # conv1d (out=1, in=1, 5)
    assert _as_dict(stencil_from(k1).stencil) == {(-2,): 1.0, (-1,): -2.0, (0,): 3.0, (1,): 0.5, (2,): 0.25}
    k3 = torch.ones((1, 1, 3, 3, 3), dtype=torch.bfloat16)
    src3 = stencil_from(k3)
    assert src3.dtype == "bfloat16" and src3.stencil.shape == "box" and src3.stencil.dims == 3
    with pytest.raises(TcAdvisorError, match="3 input channels"):
        stencil_from(torch.ones((1, 3, 3, 3)))
    with pytest.raises(TcAdvisorError, match="2 output and 1 input"):
        stencil_from(np.ones((2, 1, 3, 3)))


# --------------------------------------------------------------------------- mappings

def test_mappings_1d_findiff_and_symbolic():
    assert _as_dict(stencil_from({-1: 1.0, 0: -2.0, 1: 1.0}).stencil) == {(-1,): 1.0, (0,): -2.0, (1,): 1.0}
    findiff_center = {"coefficients": np.array([1.0, -2.0, 1.0]), "offsets": np.array([-1, 0, 1]), "accuracy": 2}
    assert _as_dict(stencil_from(findiff_center).stencil) == {(-1,): 1.0, (0,): -2.0, (1,): 1.0}
    assert _as_dict(stencil_from({(0, 1): 2.0, (0, 0): 0.0, (1, 0): 1.0}, flip=True).stencil) == {(0, -1): 2.0,
                                                                                                 (-1, 0): 1.0}
    sp = pytest.importorskip("sympy")
    dt = sp.Symbol("dt")
    given = stencil_from({-1: dt, 0: 1 - 2 * dt, 1: dt}, values={"dt": 0.25})
    assert _as_dict(given.stencil) == {(-1,): 0.25, (0,): 0.5, (1,): 0.25}
    generic = stencil_from({-1: dt, 0: 1 - 2 * dt, 1: dt})
    assert generic.stencil.weights is None and generic.stencil.K == 3 and "symbolic" in generic.notes[0]


# --------------------------------------------------------------------------- files

def test_npy_files(tmp_path):
    np.save(tmp_path / "lap.npy", as_array(STAR_2D).astype(np.float32))
    src = stencil_from(tmp_path / "lap.npy")
    assert src.dtype == "float" and src.stencil.name == "lap" and str(tmp_path / "lap.npy") in src.read_from
    np.save(tmp_path / "obj.npy", np.array([1.0, "a", None], dtype=object), allow_pickle=True)
    with pytest.raises(TcAdvisorError, match="Object arrays cannot be loaded"):
        stencil_from(tmp_path / "obj.npy")
    np.savez(tmp_path / "two.npz", a=np.ones(3), b=np.ones(3))
    (tmp_path / "two.npz").rename(tmp_path / "two.npy")
    with pytest.raises(TcAdvisorError, match="npz archive"):
        stencil_from(tmp_path / "two.npy")
    np.save(tmp_path / "big.npy", np.ones(2 ** 21))  # 16 MiB
    with pytest.raises(TcAdvisorError, match="too large"):
        stencil_from(tmp_path / "big.npy")
    (tmp_path / "step.py").write_text("raise SystemExit('imported')\n")
    with pytest.raises(TcAdvisorError, match="never imports"):
        stencil_from(tmp_path / "step.py")
    with pytest.raises(TcAdvisorError, match="never imports"):
        tcadvisor.parse_stencil(str(tmp_path / "step.py"))
    assert tcadvisor.parse_stencil(str(tmp_path / "lap.npy")) == src.stencil
    adv = tcadvisor.advise(str(tmp_path / "lap.npy"), gpu="a100", fuse=1)  # a path: read as the CLI reads it
    assert adv.dtype == "float" and adv.dtype_from == str(tmp_path / "lap.npy") and adv.source == src


def test_names_stencils_and_offsets_files_pass_through(tmp_path):
    assert stencil_from("Box-2D1R").stencil == Stencil.box(2, 1) and stencil_from("Box-2D1R").dtype is None
    st = Stencil.star(3, 2)
    assert stencil_from(st).stencil is st
    (tmp_path / "s.txt").write_text("0 1\n0 -1\n1 0\n")
    assert stencil_from(tmp_path / "s.txt").stencil.K == 3
    src = stencil_from(np.ones(3))
    assert stencil_from(src) is src


# --------------------------------------------------------------------------- refusals: one line each

def one_line(call, match):
    with pytest.raises(TcAdvisorError, match=match) as err:
        call()
    assert "\n" not in str(err.value)
    return str(err.value)


def test_array_refusals():
    one_line(lambda: stencil_from(np.ones((4, 3))), "even extent 4 along axis 0.*origin")
    one_line(lambda: stencil_from(np.ones(3), origin=2), "outside")
    one_line(lambda: stencil_from(np.ones((3, 3)), origin=(0, 0, 0)), "3 entries for the 2 axes")
    one_line(lambda: stencil_from(np.ones(3), origin=0.5), "not an integer")
    one_line(lambda: stencil_from(np.zeros((3, 3))), "every weight .* is zero")
    one_line(lambda: stencil_from(np.array([1.0, np.nan, 1.0])), "finite")
    one_line(lambda: stencil_from(np.float64(2.0)), "single number")
    one_line(lambda: stencil_from(np.ones((1, 1, 1, 1, 3, 3))), "6 axes")
    one_line(lambda: stencil_from(np.ones(131)), "too large")
    one_line(lambda: stencil_from(np.array([0.0, 1.0, 0.0])), "at least one neighbour")
    one_line(lambda: stencil_from([[0, 1, 0], [1, -4, 1], [0, 1, 0]]), "could be weights or offsets")
    one_line(lambda: stencil_from(object()), "not a form tcadvisor reads")
    one_line(lambda: stencil_from({"a": 1.0}), "not an offset")
    one_line(lambda: stencil_from({(0, 1): "x"}), "expected a number")


def test_options_that_do_not_apply_are_refused():
    one_line(lambda: stencil_from(np.ones(3), field="u"), r"field= \(--field\) does not apply to a weight array")
    one_line(lambda: stencil_from(np.ones(3), dims=1), "dims= does not apply")
    one_line(lambda: stencil_from("Box-2D1R", origin=0), "origin= .* does not apply to the stencil 'Box-2D1R'")
    one_line(lambda: stencil_from({1: 1.0}, origin=0), "does not apply to a mapping")
    one_line(lambda: stencil_from(rolled(STAR_2D), dims=2, flip=True), "does not apply to an update function")
    one_line(lambda: stencil_from(np.ones(3), values=[1]), "not a mapping")


def _lap(u):
    return rolled(STAR_2D)(u)


@pytest.mark.parametrize("fn,match", [
    (lambda u: _lap(u) ** 2, "is not linear: f"),
    (lambda u: _lap(u) + 1.0, "is not linear: it returns non-zero values for an array of zeros"),
    (lambda u: _lap(u) + u[0, 0], "depends on the boundary"),
    (lambda u: _lap(u) * np.linspace(1, 2, u.shape[0])[:, None], "not the same stencil at every point"),
    (lambda u: np.roll(u, PROBE_RADIUS + 1, axis=1) + u, f"reads further than the {PROBE_RADIUS} cells"),
    (lambda u: u[PROBE_RADIUS + 1:-(PROBE_RADIUS + 1), :], "reads further than"),
    (lambda u: u[1:] - u[:-1], "1 shorter, so it cannot be aligned"),
    (lambda u: u.sum(axis=0), r"returned shape \(35,\)"),
    (lambda u: [1.0], "returned list, not an array"),
    (lambda u: (u, u), "returned tuple, not an array"),
    (lambda u: u.astype(np.int64), "integer"),
    (lambda u: 1 / 0, "raised ZeroDivisionError on a 35x35 float64"),
    (lambda u: None, "returned None and left its argument unchanged"),
    (lambda u: np.zeros_like(u), "returns zeros for an impulse"),
    (lambda u: 2.0 * u, "at least one neighbour"),
])
def test_update_function_refusals(fn, match):
    one_line(lambda: stencil_from(fn, dims=2), match)


def test_update_function_needs_dims_and_is_bounded():
    one_line(lambda: stencil_from(_lap), "give dims=1, 2 or 3")
    one_line(lambda: stencil_from(_lap, dims=4), "dimensionality 4")
    seen = []

    def counting(u):
        seen.append(u.shape)
        return _lap(u)
    stencil_from(counting, dims=2)
    assert 0 < len(seen) <= MAX_CALLS and all(s == (PROBE_SIDE, PROBE_SIDE) for s in seen)
    assert PROBE_SIDE ** 3 * 8 < 400_000  # the largest probe grid, 3D float64, stays small


def test_update_function_nan_output_and_time_are_refused(monkeypatch):
    from tcadvisor.sources import probe

    one_line(lambda: stencil_from(lambda u: _lap(u) * np.nan, dims=2), "returned NaN or infinite values")

    def mean_of_nonzero(u):  # 0/0 for the array of zeros
        with np.errstate(invalid="ignore", divide="ignore"):
            return _lap(u) / (u != 0).sum()
    one_line(lambda: stencil_from(mean_of_nonzero, dims=2), "NaN or infinite")
    monkeypatch.setattr(probe, "MAX_PROBE_SECONDS", 0.2)
    calls = []

    def slow(u):
        calls.append(1)
        time.sleep(0.15)
        return _lap(u)
    start = time.monotonic()
    one_line(lambda: stencil_from(slow, dims=2), r"took 0\.\d s for 2 calls .* stops probing past 0\.2 s")
    assert len(calls) == 2 and time.monotonic() - start < 1.0  # no call after the budget is spent


def test_impulse_values_within_rounding_do_not_fail_the_interior_check():
    """Weights near rounding (1e-14 of the centre's) are read as zero; the interior check allows for them."""
    src = stencil_from(lambda u: np.roll(u, 1, axis=0) + u + 1e-14 * np.roll(u, -1, axis=1), dims=2)
    assert _as_dict(src.stencil) == {(-1, 0): 1.0, (0, 0): 1.0} and any("rounding" in n for n in src.notes)


def test_values_are_checked_and_used():
    sp = pytest.importorskip("sympy")
    dt = sp.Symbol("dt")
    heat = {-1: dt, 0: 1 - 2 * dt, 1: dt}
    assert "coefficients evaluated with dt = 0.25" in stencil_from(heat, values={"dt": 0.25}).notes
    one_line(lambda: stencil_from(heat, values={"dx": 0.1}), "values names dx, which the mapping's coefficients do "
                                                             "not use; its symbols are dt")
    one_line(lambda: stencil_from({1: 1.0, 0: 2.0}, values={"dt": 0.1}), "its coefficients are numbers")
    i = sp.Idx("i")
    u = sp.IndexedBase("u")
    for bad, shown in [("abc", "'abc' (str)"), (None, "None (NoneType)"), (1j, "1j (complex)"),
                       (float("nan"), "nan (float)"), (dt, "dt (Symbol)"), (np.array([0.1]), "ndarray")]:
        one_line(lambda: stencil_from(heat, values={"dt": bad}), f"values gives dt = .*{re.escape(shown)}.*finite real")
        one_line(lambda: stencil_from(dt * u[i + 1] + u[i], values={"dt": bad}), "finite real number")
    one_line(lambda: stencil_from(heat, values={dt: 0.1}), "values has the key dt \\(Symbol\\)")
    assert _as_dict(stencil_from(heat, values={"dt": np.float32(0.25)}).stencil)[(0,)] == 0.5


def test_flip_far_mapping_keys_longdouble_and_comparisons_are_refused():
    one_line(lambda: stencil_from(np.ones(3), flip="no"), r"flip 'no' \(str\) is not True or False")
    one_line(lambda: stencil_from(np.ones(3), flip=1), r"flip 1 \(int\) is not True or False")
    assert stencil_from(np.array([1.0, 2.0, 3.0]), flip=np.bool_(True)).stencil.weights == (3.0, 2.0, 1.0)
    start = time.monotonic()
    one_line(lambda: stencil_from({k: 1.0 for k in range(-300_000, 300_000)}), "key -300000 is not an offset")
    assert time.monotonic() - start < 2.0  # refused at the first key out of reach, not after reading them all
    one_line(lambda: stencil_from({(0, 0, 0, 1): 1.0, (0, 0, 0, 0): 1.0}), "at most 3 integers")
    one_line(lambda: stencil_from(np.ones(3, dtype=np.longdouble)), "a floating-point type the kernels do not")
    sp = pytest.importorskip("sympy")
    u, i = sp.IndexedBase("u"), sp.Idx("i")
    one_line(lambda: stencil_from(u[i] > u[i + 1]), r"is a comparison \(StrictGreaterThan\), not an update")


def test_a_function_that_forces_float32_gives_float():
    src = stencil_from(lambda u: _lap(u).astype(np.float32), dims=2)
    assert src.dtype == "float" and any("float" in n for n in src.notes)
    assert _as_dict(src.stencil) == pytest.approx(STAR_2D)


def test_fft_rounding_is_not_read_as_far_weights():
    w = as_array(STAR_2D)

    def fft_step(u):  # periodic correlation through the FFT: rounding noise everywhere
        k = np.zeros_like(u)
        for (i, j), v in np.ndenumerate(w):
            k[(-(i - 1)) % u.shape[0], (-(j - 1)) % u.shape[1]] = v
        return np.real(np.fft.ifft2(np.fft.fft2(u) * np.fft.fft2(k)))
    src = stencil_from(fft_step, dims=2)
    assert _as_dict(src.stencil).keys() == STAR_2D.keys()


# --------------------------------------------------------------------------- the advisor takes a StencilSource

def test_advise_takes_a_source_and_defaults_its_dtype():
    src = stencil_from(as_array(STAR_2D).astype(np.float32))
    adv = tcadvisor.advise(src, gpu="a100", fuse=2)
    assert adv.dtype == "float" and adv.dtype_from == "a weight array" and adv.source is src
    assert any("zero entries" in n for n in adv.notes)
    same = tcadvisor.advise(src.stencil, "float", gpu="a100", fuse=2)
    assert [o.gstencils for o in adv.options] == [o.gstencils for o in same.options]
    told = tcadvisor.advise(src, "double", gpu="a100", fuse=2)
    assert told.dtype == "double" and told.dtype_from is None
    text = tcadvisor.format_advice(adv)
    assert "Assumed: dtype float, from a weight array" in text and "Note: 4 zero entries" in text
    data = tcadvisor.advice_dict(adv)
    assert data["source"]["offsets"] == [list(o) for o in src.stencil.offsets]
    assert data["source"]["weights"] == list(src.stencil.weights) and data["source"]["dtype_used"] is True
    assert "source" not in tcadvisor.advice_dict(same)
    assert tcadvisor.advise(stencil_from(np.ones(3))).dtype == "double"  # a float64 array: double, said


def test_other_api_functions_take_a_source():
    from tcadvisor.transforms import alpha_for

    src = stencil_from(as_array(STAR_2D))
    assert (alpha_for("convstencil", src, 1, "m8n8k4", "fp64").alpha
            == alpha_for("convstencil", src.stencil, 1, "m8n8k4", "fp64").alpha)


# --------------------------------------------------------------------------- the other readers, once they exist

def test_c_files_dispatch_to_cloop(tmp_path):
    pytest.importorskip("tcadvisor.sources.cloop")
    path = tmp_path / "kernel.c"
    path.write_text("void step(int n, double u[n][n], double v[n][n]) {\n"
                    "  for (int i = 1; i < n - 1; i++)\n    for (int j = 1; j < n - 1; j++)\n"
                    "      v[i][j] = 0.25 * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1]);\n}\n")
    src = stencil_from(path)
    assert _as_dict(src.stencil) == {(-1, 0): 0.25, (1, 0): 0.25, (0, -1): 0.25, (0, 1): 0.25}
    assert src.dtype == "double"
    one_line(lambda: stencil_from(path, origin=0), "does not apply to a C file")


def test_pystencils_dispatches_to_symbolic():
    pytest.importorskip("tcadvisor.sources.symbolic")
    ps = pytest.importorskip("pystencils")
    src_f, dst_f = ps.fields("src, dst: double[2D]")
    assignment = ps.Assignment(dst_f[0, 0], 0.25 * (src_f[1, 0] + src_f[-1, 0] + src_f[0, 1] + src_f[0, -1]))
    src = stencil_from(assignment)
    assert src.stencil.K == 4 and set(src.stencil.offsets) == {(1, 0), (-1, 0), (0, 1), (0, -1)}
    one_line(lambda: stencil_from(assignment, origin=0), "does not apply to a pystencils expression")
