"""tcadvisor.sources.symbolic: pystencils assignments, Devito equations and SymPy Indexed updates read as
stencils (offsets in the array's axis order, weights from the coefficients, one field at one time level);
what needs a library it lacks is refused in one line naming the extra."""
import itertools
import shutil
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from tcadvisor.errors import TcAdvisorError
from tcadvisor.sources import stencil_from, symbolic
from tcadvisor.stencil import parse_stencil


def one_line(call, *fragments):
    with pytest.raises(TcAdvisorError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text, text
    for fragment in fragments:
        assert fragment in text, text
    return text


def as_dict(src):
    return dict(zip(src.stencil.offsets, src.stencil.weights))


# The 8th-order central second derivative, by hand (Fornberg's table): offsets 0, ±1, ±2, ±3, ±4.
C8 = {0: Fraction(-205, 72), 1: Fraction(8, 5), 2: Fraction(-1, 5), 3: Fraction(8, 315), 4: Fraction(-1, 560)}


# --------------------------------------------------------------------------- without pystencils or Devito

@pytest.mark.parametrize("library, reader", [("pystencils", "from_pystencils"), ("devito", "from_devito")])
def test_a_missing_library_is_named_with_its_extra(monkeypatch, library, reader):
    monkeypatch.setitem(sys.modules, library, None)  # import fails as if it were not installed
    x = sp.Symbol("x")
    one_line(lambda: getattr(symbolic, reader)(x + 1), "not installed", f"pip install tcadvisor[{library}]")
    assert not symbolic.is_pystencils(x + 1) and not symbolic.is_devito(x + 1)

    class Fake:  # an object of the library's own type reaches the reader through the dispatcher
        pass
    Fake.__module__ = f"{library}.types"
    one_line(lambda: stencil_from(Fake()), f"pip install tcadvisor[{library}]")


def test_detection_imports_neither_library(monkeypatch):
    for library in ("pystencils", "devito"):
        monkeypatch.delitem(sys.modules, library, raising=False)
    i = sp.Idx("i")
    u = sp.IndexedBase("u")
    assert not symbolic.is_pystencils(u[i + 1]) and not symbolic.is_devito([u[i + 1]])
    assert "pystencils" not in sys.modules and "devito" not in sys.modules


# --------------------------------------------------------------------------- plain SymPy

def test_sympy_indexed_updates():
    i, j = sp.Idx("i"), sp.Idx("j")
    u, v, c = sp.IndexedBase("u"), sp.IndexedBase("v"), sp.IndexedBase("c")
    src = stencil_from(u[i - 1] - 2 * u[i] + u[i + 1])
    assert as_dict(src) == {(-1,): 1.0, (0,): -2.0, (1,): 1.0} and src.dtype is None
    assert src.read_from == "a SymPy expression on u (1D)"
    # the left side names the loop indices; an asymmetric read keeps its sign and axis
    src = stencil_from(sp.Eq(v[i, j], u[i, j] - sp.Rational(3, 10) * (u[i, j] - u[i - 1, j]) + 2 * u[i, j + 2]))
    assert as_dict(src) == {(0, 0): pytest.approx(0.7), (-1, 0): pytest.approx(0.3), (0, 2): 2.0}
    assert src.read_from == "a SymPy Eq on u (2D)"
    # several fields: refused without field=, a coefficient field with it
    two = sp.Eq(v[i, j], c[i, j] * (u[i + 1, j] + u[i - 1, j]) + u[i, j])
    one_line(lambda: stencil_from(two), "reads", "u", "c", "field=")
    src = stencil_from(two, field="u", values={"c": 0.5})
    assert as_dict(src) == {(-1, 0): 0.5, (0, 0): 1.0, (1, 0): 0.5}
    assert any("of c are left out" in n for n in src.notes) and any("coefficient" in n for n in src.notes)
    one_line(lambda: stencil_from(two, field="w"), "field 'w' is not read", "it reads", " u", " c")


def test_sympy_refusals():
    i, k = sp.Idx("i"), sp.Symbol("k")
    u = sp.IndexedBase("u")
    one_line(lambda: stencil_from(u[i + 1] * u[i - 1]), "not linear in u", "product")
    one_line(lambda: stencil_from(u[i] ** 2 + u[i + 1]), "not linear in u", "power")
    one_line(lambda: stencil_from(sp.sin(u[i]) + u[i + 1]), "not linear in u", "sin")
    one_line(lambda: stencil_from(u[i] / u[i + 1]), "not linear in u", "division by a read")
    one_line(lambda: stencil_from(u[i + k] + u[i]), "not i plus a constant integer")
    one_line(lambda: stencil_from(u[i + sp.Rational(1, 2)] + u[i]), "not i plus a constant integer")
    one_line(lambda: stencil_from(u[i + 1] + u[i], values={"dt": 1}), "values names dt", "does not use")
    one_line(lambda: stencil_from(u[i + 100] + u[i]), "100 cells away")


def test_expression_size_is_bounded(monkeypatch):
    i = sp.Idx("i")
    u = sp.IndexedBase("u")
    monkeypatch.setattr(symbolic, "MAX_NODES", 50)
    big = sum(sp.Symbol(f"a{n}") * u[i + (n % 3) - 1] for n in range(40))
    one_line(lambda: stencil_from(big), "more than 50 nodes")


# --------------------------------------------------------------------------- pystencils

@pytest.fixture
def ps():
    return pytest.importorskip("pystencils")


def test_pystencils_star_box_and_upwind(ps):
    f, g = ps.fields("f, g: double[2D]")
    star = ps.Assignment(g[0, 0], 0.5 * f[0, 0] + 0.125 * (f[1, 0] + f[-1, 0] + f[0, 1] + f[0, -1]))
    src = stencil_from(star)
    assert src.stencil.offsets == parse_stencil("Star-2D1R").offsets and src.stencil.shape == "star"
    assert as_dict(src)[(0, 0)] == 0.5 and as_dict(src)[(1, 0)] == 0.125
    assert src.dtype == "double" and src.read_from == "a pystencils Assignment on f (2D, float64)"
    assert any("float64" in n for n in src.notes)

    a, b = ps.fields("a, b: float32[3D]")
    rng = np.random.default_rng(3)
    weights = {o: float(rng.uniform(0.5, 1.5)) for o in itertools.product((-1, 0, 1), repeat=3)}
    box = stencil_from(ps.Assignment(b[0, 0, 0], sum(w * a[o] for o, w in weights.items())))
    assert box.stencil.offsets == parse_stencil("Box-3D1R").offsets and box.stencil.K == 27
    assert as_dict(box) == pytest.approx(weights) and box.dtype == "float"

    # upwind: u - cx (u - u[i-1, j]) - cy (u - u[i, j-1]); distinct weights catch a swapped axis or sign
    upwind = stencil_from(ps.Assignment(g[0, 0], f[0, 0] - 0.3 * (f[0, 0] - f[-1, 0]) - 0.2 * (f[0, 0] - f[0, -1])))
    assert as_dict(upwind) == pytest.approx({(0, 0): 0.5, (-1, 0): 0.3, (0, -1): 0.2})
    assert not upwind.stencil.is_symmetric


def test_pystencils_symbolic_coefficients(ps):
    f, g = ps.fields("f, g: float16[1D]")
    dt, h = sp.symbols("dt h")
    heat = ps.Assignment(g[0], f[0] + dt / h ** 2 * (f[1] - 2 * f[0] + f[-1]))
    generic = stencil_from(heat)
    assert generic.stencil.weights is None and generic.stencil.offsets == parse_stencil("1D3P").offsets
    assert generic.dtype == "half"
    assert any("dt and h" in n and "generic non-zero weights" in n for n in generic.notes)
    given = stencil_from(heat, values={"dt": 0.1, "h": 1.0})
    assert as_dict(given) == pytest.approx({(-1,): 0.1, (0,): 0.8, (1,): 0.1})
    assert any("dt = 0.1" in n for n in given.notes) and not any("generic" in n for n in given.notes)
    partial = stencil_from(heat, values={"dt": 0.1})
    assert partial.stencil.weights is None and any("in h" in n or "hold h" in n for n in partial.notes)


def test_pystencils_collections_lists_and_refusals(ps):
    f, g, c = ps.fields("f, g, c: double[2D]")
    s = sp.Symbol("s")
    collection = ps.AssignmentCollection([ps.Assignment(g[0, 0], 2 * s)],
                                         subexpressions=[ps.Assignment(s, f[1, 0] + f[0, 1])])
    src = stencil_from(collection)
    assert as_dict(src) == {(1, 0): 2.0, (0, 1): 2.0} and "inlined" in src.notes[0]
    assert as_dict(stencil_from([ps.Assignment(s, f[1, 0] - f[-1, 0]), ps.Assignment(g[0, 0], s / 2)])) == {
        (1, 0): 0.5, (-1, 0): -0.5}
    one_line(lambda: stencil_from([ps.Assignment(g[0, 0], f[1, 0]), ps.Assignment(c[0, 0], f[0, 1])]),
             "2 updates", "pass the one to model")
    one_line(lambda: stencil_from(ps.Assignment(g[0, 0], f[1, 0] * f[-1, 0])), "not linear in f")
    one_line(lambda: stencil_from(ps.Assignment(g[0, 0], sp.sin(f[1, 0]))), "not linear in f", "sin")
    one_line(lambda: stencil_from(ps.Assignment(g[0, 0], f[sp.Symbol("k"), 0])), "not constant integers")
    variable = ps.Assignment(g[0, 0], c[0, 0] * (f[1, 0] - 2 * f[0, 0] + f[-1, 0]))
    one_line(lambda: stencil_from(variable), "reads", "field=")
    src = stencil_from(variable, field="f")
    assert src.stencil.weights is None and any("c multiplies f's reads" in n for n in src.notes)


# Run in a child process: pystencils builds with -ffast-math, and loading such a library turns on
# flush-to-zero for the whole process, which would change every later test's floating point.
_RUN_KERNEL = """
import sys
import numpy as np
import pystencils as ps
a = np.load(sys.argv[1])
b = np.zeros_like(a)
f = ps.Field.create_from_numpy_array("a", a)
g = ps.Field.create_from_numpy_array("b", b)
ps.create_kernel(ps.Assignment(g[0, 0], f[1, 0] + 2 * f[0, -1])).compile()(a=a, b=b)
np.save(sys.argv[2], b)
"""


def test_pystencils_offsets_take_the_bound_arrays_axis_order(ps, tmp_path):
    """f[1, 0] is +1 along the first axis of the NumPy array bound to f (z, y, x for u[z, y, x])."""
    data = np.random.default_rng(1).standard_normal((5, 7))
    f = ps.Field.create_from_numpy_array("a", data)
    g = ps.Field.create_from_numpy_array("b", np.zeros_like(data))
    src = stencil_from(ps.Assignment(g[0, 0], f[1, 0] + 2 * f[0, -1]))
    assert as_dict(src) == {(1, 0): 1.0, (0, -1): 2.0} and f.spatial_shape == data.shape
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to run the pystencils kernel")
    np.save(tmp_path / "a.npy", data)
    run = subprocess.run([sys.executable, "-c", _RUN_KERNEL, str(tmp_path / "a.npy"), str(tmp_path / "b.npy")],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:  # pystencils' own build (headers, compiler), not what is tested
        pytest.skip(f"pystencils could not build its kernel here: {run.stderr.strip().splitlines()[-1:]}")
    b = np.load(tmp_path / "b.npy")
    # out[i, j] = Σ w · a[i + o0, j + o1], as the stencil says, on the interior the kernel writes
    assert np.allclose(b[1:-1, 1:-1], data[2:, 1:-1] + 2 * data[1:-1, :-2])


# --------------------------------------------------------------------------- Devito

@pytest.fixture
def dv():
    return pytest.importorskip("devito")


def test_devito_laplace_space_order_8_is_the_radius_4_star(dv):
    grid = dv.Grid(shape=(12, 12, 12))
    u = dv.TimeFunction(name="u", grid=grid, space_order=8)
    dt = grid.stepping_dim.spacing
    eq = dv.Eq(u.forward, u + dt * u.laplace)
    src = stencil_from(eq, values={"dt": 0.1, "h_x": 1, "h_y": 1, "h_z": 1})
    assert src.stencil.offsets == parse_stencil("Star-3D4R").offsets and src.stencil.K == 25
    expected = {(0, 0, 0): 1 + 0.1 * 3 * float(C8[0])}
    for axis, k in itertools.product(range(3), (1, 2, 3, 4)):
        for sign in (-1, 1):
            expected[tuple(sign * k if a == axis else 0 for a in range(3))] = 0.1 * float(C8[k])
    got = as_dict(src)
    assert got.keys() == expected.keys()
    assert all(got[o] == pytest.approx(w, rel=1e-8) for o, w in expected.items())  # Devito rounds to ~10 digits
    assert src.dtype == "float" and src.read_from == "a Devito Eq on u (space_order 8, float32)"
    assert any("x, y, z" in n for n in src.notes)
    generic = stencil_from(eq)
    assert generic.stencil.weights is None and generic.stencil.offsets == src.stencil.offsets
    assert any("dt, h_x, h_y and h_z" in n and "generic" in n for n in generic.notes)


def test_devito_wave_equation_needs_the_field(dv):
    grid = dv.Grid(shape=(10, 10, 10))
    u = dv.TimeFunction(name="u", grid=grid, space_order=4, time_order=2)
    m = dv.Function(name="m", grid=grid)
    dt = grid.stepping_dim.spacing
    wave = dv.Eq(u.forward, 2 * u - u.backward + dt ** 2 * m ** -1 * u.laplace)
    one_line(lambda: stencil_from(wave), "reads u at t and t - dt and m", "field=")
    src = stencil_from(wave, field="u")
    assert src.stencil.offsets == parse_stencil("Star-3D2R").offsets
    assert "reads of u at t - dt and of m are left out: the stencil is u's reads at t" in src.notes
    assert any(n.startswith("m multiplies u's reads") for n in src.notes)
    valued = stencil_from(wave, field="u", values={"dt": 1, "m": 1, "h_x": 1, "h_y": 1, "h_z": 1})
    assert as_dict(valued)[(0, 0, 0)] == pytest.approx(2 + 3 * -5 / 2, rel=1e-8)  # 2 + Σ axes of -5/2
    assert as_dict(valued)[(0, 2, 0)] == pytest.approx(-1 / 12, rel=1e-8)
    one_line(lambda: stencil_from(wave, field="p"), "field 'p' is not read", "u and m")
    one_line(lambda: stencil_from(wave, field="u", values={"h": 1}), "values names h", "h_x")


def test_devito_axis_order_dtype_and_refusals(dv):
    grid = dv.Grid(shape=(6, 8), dtype=np.float64)
    x, y = grid.dimensions
    u = dv.TimeFunction(name="u", grid=grid, space_order=1)
    assert u.data.shape[1:] == (6, 8)  # u.data[t, x, y]: x is the first array axis after time
    src = stencil_from(dv.Eq(u.forward, u + 0.5 * u.dx), values={"h_x": 1})
    assert as_dict(src) == {(0, 0): 0.5, (1, 0): 0.5} and src.dtype == "double"
    src = stencil_from(dv.Eq(u.forward, u.shift(y, y.spacing) - u), values={})
    assert as_dict(src) == {(0, 0): -1.0, (0, 1): 1.0}
    one_line(lambda: stencil_from(dv.Eq(u.forward, u * u.dx)), "not linear in u", "product")
    one_line(lambda: stencil_from(dv.Eq(u.forward, u ** 2 + u.dy)), "not linear in u")
    k = sp.Symbol("k")
    one_line(lambda: stencil_from(dv.Eq(u.forward, u.shift(x, k * x.spacing) + u)), "along x", "not a constant integer")
    # a staggered function's reads are counted from its own position x + h_x/2
    v = dv.TimeFunction(name="v", grid=grid, space_order=2, staggered=x)
    assert as_dict(stencil_from(dv.Eq(v.forward, v + v.dx), values={"h_x": 1})) == {(-1, 0): -1.0, (0, 0): 2.0}
    one_line(lambda: stencil_from(dv.Eq(u.forward, u.dx), origin=0), "does not apply to a Devito")
