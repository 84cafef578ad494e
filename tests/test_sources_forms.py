"""One operator written in every form tcadvisor reads gives one stencil (issue 24, "Done when").

Four operators — a 2D star, a 3D box, an asymmetric 2D upwind step and the 3D star of radius 4 of Devito's
``space_order=8`` Laplacian — are each written as a weight array, a mapping ``{offset: coefficient}``, a slicing
update function, a pystencils ``Assignment``, a Devito ``Eq`` and a C loop nest (the upwind one as a CUDA kernel).
Every form must give the same offsets and, once its symbolic coefficients (``dt``, ``h_x``, a velocity) get the
same values, the same weights; left symbolic, the same offsets with generic weights.

How the forms line up (the axis-order convention of docs/sources.md): an offset ``(a0, a1[, a2])`` is

* the weight array's entry ``w[r + a0, r + a1, ...]`` (a correlation kernel, centre at its middle),
* the mapping's key, and the slicing function's shift along the NumPy array's axes 0, 1, 2,
* pystencils' ``f[a0, a1, a2]`` (the field's index order, that of the array bound to it),
* Devito's shift along x, y, z — the grid's dimensions in order, which are ``u.data[t, x, y, z]``'s axes after
  time, so Devito's x is the arrays' axis 0 (spacings ``h_x, h_y, h_z`` scale axes 0, 1, 2),
* the C loop's subscripts in order: ``u[x + a0][y + a1][z + a2]`` written to ``v[x][y][z]``.

The spacings differ per axis and the weights differ per offset, so a transposed axis or a flipped sign fails.

The second half: ``advise`` on a C file of the radius-4 star, on a Devito ``Eq`` and on a CuPy weight cube answers
as for the same stencil named (``Star-3D4R``) or written in an offsets file, with the bundled kernels.
"""
import io
import itertools
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import tcadvisor
from tcadvisor.sources import stencil_from
from tcadvisor.stencil import parse_stencil

# --------------------------------------------------------------------------- the operators

#: The 8th-order central second derivative (Fornberg): offsets 0, ±1, ±2, ±3, ±4.
C8 = {0: Fraction(-205, 72), 1: Fraction(8, 5), 2: Fraction(-1, 5), 3: Fraction(8, 315), 4: Fraction(-1, 560)}


def _offset(axis: int, k: int, dims: int) -> tuple[int, ...]:
    return tuple(k if a == axis else 0 for a in range(dims))


class Star2D:
    """Anisotropic heat step ``u + a·u_xx/h_x² + b·u_yy/h_y²`` (2nd order): Star-2D1R."""

    name, dims, named = "star2d", 2, "Star-2D1R"
    values = {"a": 0.1, "b": 0.3, "h_x": 0.5, "h_y": 2.0}

    @classmethod
    def weights(cls):
        v = cls.values
        sx, sy = v["a"] / v["h_x"] ** 2, v["b"] / v["h_y"] ** 2  # 0.4 along axis 0, 0.075 along axis 1
        return {(0, 0): 1 - 2 * sx - 2 * sy, (1, 0): sx, (-1, 0): sx, (0, 1): sy, (0, -1): sy}

    @staticmethod
    def mapping():
        a, b, hx, hy = sp.symbols("a b h_x h_y")
        return {(0, 0): 1 - 2 * a / hx ** 2 - 2 * b / hy ** 2, (1, 0): a / hx ** 2, (-1, 0): a / hx ** 2,
                (0, 1): b / hy ** 2, (0, -1): b / hy ** 2}

    @classmethod
    def function(cls):
        v = cls.values
        a, b, hx, hy = v["a"], v["b"], v["h_x"], v["h_y"]

        def step(u):  # returns the interior
            c = u[1:-1, 1:-1]
            return (c + a * (u[2:, 1:-1] - 2 * c + u[:-2, 1:-1]) / hx ** 2
                    + b * (u[1:-1, 2:] - 2 * c + u[1:-1, :-2]) / hy ** 2)
        return step

    @staticmethod
    def pystencils(ps):
        f, g = ps.fields("f, g: double[2D]")
        a, b, hx, hy = sp.symbols("a b h_x h_y")
        return ps.Assignment(g[0, 0], f[0, 0] + a * (f[1, 0] - 2 * f[0, 0] + f[-1, 0]) / hx ** 2
                             + b * (f[0, 1] - 2 * f[0, 0] + f[0, -1]) / hy ** 2)

    @staticmethod
    def devito(dv):
        grid = dv.Grid(shape=(16, 16))
        u = dv.TimeFunction(name="u", grid=grid, space_order=2)
        a, b = dv.Constant(name="a"), dv.Constant(name="b")
        return dv.Eq(u.forward, u + a * u.dx2 + b * u.dy2)

    c_suffix = ".c"
    c_code = """\
/* anisotropic heat, one step */
void heat(int nx, int ny, double u[nx][ny], double v[nx][ny], double a, double b, double h_x, double h_y)
{
    for (int x = 1; x < nx - 1; x++)
        for (int y = 1; y < ny - 1; y++)
            v[x][y] = u[x][y] + a * (u[x+1][y] - 2.0 * u[x][y] + u[x-1][y]) / (h_x * h_x)
                              + b * (u[x][y+1] - 2.0 * u[x][y] + u[x][y-1]) / (h_y * h_y);
}
"""


_BOX_W = {o: (1 + (o[0] + 1) + 3 * (o[1] + 1) + 9 * (o[2] + 1)) / 32  # 27 distinct weights, exact in binary
          for o in itertools.product((-1, 0, 1), repeat=3)}


def _c_box() -> str:
    terms = " + ".join(f"{int(w * 32)}*u[x{o[0]:+d}][y{o[1]:+d}][z{o[2]:+d}]".replace("+0]", "]")
                       for o, w in _BOX_W.items())
    return f"""\
#define N 128
#define SCALE (1.0 / (4 * 8))   /* a #define of an expression */
typedef double real;
real u[N][N][N], v[N][N][N];
int main(void)
{{
    for (int x = 1; x < N - 1; ++x)
        for (int y = 1; y < N - 1; ++y)
            for (int z = 1; z < N - 1; ++z)
                v[x][y][z] = SCALE * ({terms});
    return 0;
}}
"""


class Box3D:
    """A 27-point box with 27 distinct weights: Box-3D1R."""

    name, dims, named = "box3d", 3, "Box-3D1R"
    values: dict = {}

    @staticmethod
    def weights():
        return dict(_BOX_W)

    @staticmethod
    def mapping():
        return dict(_BOX_W)

    @staticmethod
    def function():
        return _sliced(_BOX_W)

    @staticmethod
    def pystencils(ps):
        f, g = ps.fields("f, g: float32[3D]")
        return ps.Assignment(g[0, 0, 0], sum(sp.Rational(int(w * 32), 32) * f[o] for o, w in _BOX_W.items()))

    @staticmethod
    def devito(dv):
        grid = dv.Grid(shape=(8, 8, 8))
        u = dv.TimeFunction(name="u", grid=grid, space_order=1)
        t, x, y, z = u.dimensions
        return dv.Eq(u.forward, sum(sp.Rational(int(w * 32), 32) * u[t, x + o[0], y + o[1], z + o[2]]
                                    for o, w in _BOX_W.items()))

    c_suffix = ".c"
    c_code = _c_box()


class Upwind2D:
    """First-order upwind advection ``u - dt·(v_x·(u - u[x-1])/h_x + v_y·(u - u[y-1])/h_y)``: asymmetric."""

    name, dims, named = "upwind2d", 2, None
    values = {"dt": 0.1, "vx": 2.0, "vy": 1.5, "h_x": 1.0, "h_y": 0.5}

    @classmethod
    def weights(cls):
        v = cls.values
        cx, cy = v["dt"] * v["vx"] / v["h_x"], v["dt"] * v["vy"] / v["h_y"]  # 0.2 and 0.3
        return {(0, 0): 1 - cx - cy, (-1, 0): cx, (0, -1): cy}

    @staticmethod
    def mapping():
        dt, vx, vy, hx, hy = sp.symbols("dt vx vy h_x h_y")
        return {(0, 0): 1 - dt * vx / hx - dt * vy / hy, (-1, 0): dt * vx / hx, (0, -1): dt * vy / hy}

    @classmethod
    def function(cls):
        v = cls.values
        cx, cy = v["dt"] * v["vx"] / v["h_x"], v["dt"] * v["vy"] / v["h_y"]

        def step(u):  # the full array: reads its left and lower neighbours through np.roll (periodic)
            return u - cx * (u - np.roll(u, 1, axis=0)) - cy * (u - np.roll(u, 1, axis=1))
        return step

    @staticmethod
    def pystencils(ps):
        f, g = ps.fields("f, g: float32[2D]")
        dt, vx, vy, hx, hy = sp.symbols("dt vx vy h_x h_y")
        return ps.Assignment(g[0, 0], f[0, 0] - dt * (vx * (f[0, 0] - f[-1, 0]) / hx + vy * (f[0, 0] - f[0, -1]) / hy))

    @staticmethod
    def devito(dv):
        grid = dv.Grid(shape=(16, 16))
        u = dv.TimeFunction(name="u", grid=grid, space_order=1)
        vx, vy = dv.Constant(name="vx"), dv.Constant(name="vy")
        dt = grid.stepping_dim.spacing
        return dv.Eq(u.forward, u - dt * (vx * u.dxl + vy * u.dyl))  # one-sided (left) differences

    c_suffix = ".cu"
    c_code = """\
#include <cuda_runtime.h>
#define N 512
__global__ void __launch_bounds__(256)
upwind(float (*__restrict__ v)[N], const float (*__restrict__ u)[N], float dt, float vx, float vy,
       float h_x, float h_y)
{
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= 1 && x < N && y >= 1 && y < N)
        v[x][y] = u[x][y] - dt * (vx * (u[x][y] - u[x-1][y]) / h_x + vy * (u[x][y] - u[x][y-1]) / h_y);
}
"""


def _c_star4() -> str:
    def axis_sum(axis: int) -> str:
        def at(k):
            idx = ["x", "y", "z"]
            idx[axis] += f"{k:+d}"
            return "u[" + "][".join(idx) + "]"
        inner = " + ".join(f"c{k}*({at(k)} + {at(-k)})" for k in (1, 2, 3, 4))
        return f"(C0*u[x][y][z] + {inner})"
    return f"""\
// Devito's space_order=8 Laplacian, u + dt * laplace(u), by hand
#define C0 (-205.0/72)
static const double c1 = 8.0/5, c2 = -1.0/5, c3 = 8.0/315;
const double c4 = -1.0/560;
void step(int n, const double u[n][n][n], double v[n][n][n], double dt, double h_x, double h_y, double h_z)
{{
    for (int x = 4; x < n - 4; x++)
        for (int y = 4; y < n - 4; y++)
            for (int z = 4; z < n - 4; z++)
                v[x][y][z] = u[x][y][z] + dt * ({axis_sum(0)} / (h_x*h_x)
                                               + {axis_sum(1)} / (h_y*h_y)
                                               + {axis_sum(2)} / (h_z*h_z));
}}
"""


class Star3D4R:
    """``u + dt·Δu`` with Devito's 8th-order coefficients: Star-3D4R (25 points)."""

    name, dims, named = "star3d-r4", 3, "Star-3D4R"
    values = {"dt": 0.1, "h_x": 1.0, "h_y": 0.5, "h_z": 2.0}

    @classmethod
    def weights(cls):
        v = cls.values
        scale = [v["dt"] / v[h] ** 2 for h in ("h_x", "h_y", "h_z")]
        out = {(0, 0, 0): 1 + float(C8[0]) * sum(scale)}
        for axis, k, sign in itertools.product(range(3), (1, 2, 3, 4), (-1, 1)):
            out[_offset(axis, sign * k, 3)] = float(C8[k]) * scale[axis]
        return out

    @staticmethod
    def mapping():
        dt, *h = sp.symbols("dt h_x h_y h_z")
        out = {(0, 0, 0): 1 + sp.Rational(C8[0].numerator, C8[0].denominator) * dt * sum(1 / s ** 2 for s in h)}
        for axis, k, sign in itertools.product(range(3), (1, 2, 3, 4), (-1, 1)):
            out[_offset(axis, sign * k, 3)] = sp.Rational(C8[k].numerator, C8[k].denominator) * dt / h[axis] ** 2
        return out

    @classmethod
    def function(cls):
        return _sliced(cls.weights())

    @staticmethod
    def pystencils(ps):
        f, g = ps.fields("f, g: double[3D]")
        dt, *h = sp.symbols("dt h_x h_y h_z")
        lap = 0
        for axis in range(3):
            terms = sp.Rational(C8[0].numerator, C8[0].denominator) * f[0, 0, 0]
            for k in (1, 2, 3, 4):
                c = sp.Rational(C8[k].numerator, C8[k].denominator)
                terms += c * (f[_offset(axis, k, 3)] + f[_offset(axis, -k, 3)])
            lap += terms / h[axis] ** 2
        return ps.Assignment(g[0, 0, 0], f[0, 0, 0] + dt * lap)

    @staticmethod
    def devito(dv):
        grid = dv.Grid(shape=(20, 20, 20))
        u = dv.TimeFunction(name="u", grid=grid, space_order=8)
        dt = grid.stepping_dim.spacing
        return dv.Eq(u.forward, u + dt * u.laplace)

    c_suffix = ".c"
    c_code = _c_star4()


def _sliced(weights: dict):
    """An update written with slices, returning the interior: new = Σ w · u[r + o : n - r + o]."""
    r = max(max(abs(v) for v in o) for o in weights)

    def step(u):
        n = u.shape[0]
        return sum(w * u[tuple(slice(r + v, n - r + v) for v in o)] for o, w in weights.items())
    return step


def _array(weights: dict) -> np.ndarray:
    """The correlation kernel: the weight of offset o at index o + r."""
    dims, r = len(next(iter(weights))), max(max(abs(v) for v in o) for o in weights)
    out = np.zeros((2 * r + 1,) * dims)
    for o, w in weights.items():
        out[tuple(v + r for v in o)] = w
    return out


OPERATORS = {op.name: op for op in (Star2D, Box3D, Upwind2D, Star3D4R)}
FORMS = ("array", "mapping", "function", "pystencils", "devito", "c")


def read(op, form: str, tmp_path, values) -> "tcadvisor.StencilSource":
    """``op`` written in ``form``, read with ``values`` for its symbolic coefficients (None: left symbolic)."""
    if form == "array":
        return stencil_from(_array(op.weights()))
    if form == "mapping":
        return stencil_from(op.mapping(), values=values if op.values else None)
    if form == "function":
        return stencil_from(op.function(), dims=op.dims)
    if form == "pystencils":
        return stencil_from(op.pystencils(pytest.importorskip("pystencils")), values=values)
    if form == "devito":
        return stencil_from(op.devito(pytest.importorskip("devito")), values=values)
    pytest.importorskip("pycparser")
    path = tmp_path / f"{op.name}{op.c_suffix}"
    path.write_text(op.c_code)
    return stencil_from(path, values=values or None)


#: Devito writes its finite-difference weights to about ten digits; every other form is exact to rounding.
REL = {"devito": 1e-8}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("op_name", OPERATORS)
def test_one_operator_in_every_form_gives_one_stencil(op_name, form, tmp_path):
    op = OPERATORS[op_name]
    expected = op.weights()
    src = read(op, form, tmp_path, dict(op.values))
    got = dict(zip(src.stencil.offsets, src.stencil.weights))
    assert sorted(got) == sorted(expected), (form, src.read_from)
    for offset, w in expected.items():
        assert got[offset] == pytest.approx(w, rel=REL.get(form, 1e-12), abs=1e-15), (form, offset)
    assert src.stencil.dims == op.dims and src.stencil.K == len(expected)
    if op.named is not None:
        named = parse_stencil(op.named)
        assert src.stencil.offsets == named.offsets and src.stencil.shape == named.shape
    else:
        assert not src.stencil.is_symmetric and src.stencil.shape == "custom"


@pytest.mark.parametrize("form", ("mapping", "pystencils", "devito", "c"))
@pytest.mark.parametrize("op_name", [name for name, op in OPERATORS.items() if op.values])
def test_left_symbolic_the_forms_keep_the_offsets_with_generic_weights(op_name, form, tmp_path):
    op = OPERATORS[op_name]
    src = read(op, form, tmp_path, None)
    assert sorted(src.stencil.offsets) == sorted(op.weights()) and src.stencil.weights is None
    assert any("generic" in note for note in src.notes), src.notes


def test_the_forms_agree_with_each_other_and_with_devito_on_the_radius_4_star(tmp_path):
    """The issue's own case, side by side: the C loop and the array hold the 8th-order coefficients
    -205/72, 8/5, -1/5, 8/315, -1/560 per axis; Devito's space_order=8 Laplacian gives the same weights."""
    dv = pytest.importorskip("devito")
    op = Star3D4R
    c = read(op, "c", tmp_path, dict(op.values))
    arr = read(op, "array", tmp_path, dict(op.values))
    devito = stencil_from(op.devito(dv), values=op.values)
    assert c.stencil.offsets == arr.stencil.offsets == devito.stencil.offsets == parse_stencil("Star-3D4R").offsets
    assert c.stencil.weights == pytest.approx(arr.stencil.weights, rel=1e-14)
    assert devito.stencil.weights == pytest.approx(arr.stencil.weights, rel=1e-8)
    # the weight along x (Devito's first dimension) at +4 is -1/560 · dt / h_x², along z (h_z = 2) a quarter of it
    by = dict(zip(devito.stencil.offsets, devito.stencil.weights))
    assert by[(4, 0, 0)] == pytest.approx(-0.1 / 560, rel=1e-8)
    assert by[(0, 0, 4)] == pytest.approx(-0.1 / 2240, rel=1e-8)
    assert c.dtype == arr.dtype == "double" and devito.dtype == "float"


# --------------------------------------------------------------------------- advise on each form

def _cli(*args):
    from tcadvisor.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def _comparable(data: dict, path=None) -> dict:
    """The answer without what says how the stencil was read: the source echo, its notes and the command; a file's
    path, where the answer names it (the command a close call suggests), stands as the stencil's name."""
    kept = {k: v for k, v in data.items() if k not in ("source", "command", "notes")}
    dumped = json.dumps(kept)
    if path is not None:
        dumped = dumped.replace(str(path), data["stencil"])
    # the reading's own options in that command (--set NAME=VALUE, --field, --origin, --flip) are how the file
    # was read, not the answer
    dumped = re.sub(r" --(?:set|field) \S+| --origin=\S+| --flip", "", dumped)
    return json.loads(dumped)


def _uses_bundled_kernels(data: dict) -> None:
    assert data["model"] == "refined"
    impls = {o["impl"] for o in data["options"] if o.get("available")}
    assert impls & {"tcadvisor-cc", "tcadvisor-tc", "tcadvisor-sptc"}, impls


def _offsets_file(path, stencil) -> None:
    lines = [" ".join(map(str, o)) + ("" if stencil.weights is None else f" : {w!r}")
             for o, w in zip(stencil.offsets, stencil.weights or [None] * stencil.K)]
    path.write_text("\n".join(lines) + "\n")


def test_advise_on_a_c_file_of_the_radius_4_star_answers_as_the_name_and_the_offsets_file(tmp_path):
    pytest.importorskip("pycparser")
    (tmp_path / "c").mkdir()
    (tmp_path / "txt").mkdir()
    # the file's stem names the stencil: Star-3D4R.c answers as the name Star-3D4R
    c_file = tmp_path / "c" / "Star-3D4R.c"
    c_file.write_text(_c_star4())
    common = ("--gpu", "h100", "--json")
    named = _cli("advise", "Star-3D4R", *common)
    generic = _cli("advise", c_file, *common)  # dt, h_x, h_y, h_z symbolic: the support alone, as the name
    assert generic["source"]["weights"] is None and generic["dtype"] == "double"
    assert generic["source"]["dtype_used"] is True
    _uses_bundled_kernels(named)
    assert _comparable(generic, str(c_file)) == _comparable(named)
    # with values, the weights count (the fused weights' cancellations): as the offsets file of those weights
    valued = _cli("advise", c_file, *common, *[w for k, v in Star3D4R.values.items() for w in ("--set", f"{k}={v}")])
    txt = tmp_path / "txt" / "Star-3D4R.txt"
    _offsets_file(txt, stencil_from(c_file, values=Star3D4R.values).stencil)
    from_txt = _cli("advise", txt, *common)
    assert valued["source"]["weights"] == from_txt_weights(txt)
    _uses_bundled_kernels(valued)
    assert _comparable(valued, str(c_file)) == _comparable(from_txt, str(txt))


def from_txt_weights(path) -> list:
    return list(tcadvisor.parse_stencil(str(path)).weights)


def _advice(stencil, dtype=None, **kw) -> dict:
    return tcadvisor.advice_dict(tcadvisor.advise(stencil, dtype, "h100", **kw))


def test_advise_on_a_devito_eq_answers_as_the_name_in_its_dtype(tmp_path):
    dv = pytest.importorskip("devito")
    eq = Star3D4R.devito(dv)
    generic = tcadvisor.stencil_from(eq, name="Star-3D4R")
    got = _advice(generic)
    assert got["dtype"] == "float" and got["source"]["dtype_used"] is True  # the TimeFunction's float32
    assert any("generic" in n for n in got["notes"])
    named = _advice("Star-3D4R", "float")
    _uses_bundled_kernels(named)
    assert _comparable(got) == _comparable(named)
    # given values, it answers as the offsets file of the weights it read, in float
    valued = tcadvisor.stencil_from(eq, values=Star3D4R.values, name="Star-3D4R")
    (tmp_path / "Star-3D4R.txt").write_text("")
    _offsets_file(tmp_path / "Star-3D4R.txt", valued.stencil)
    assert _comparable(_advice(valued)) == _comparable(_advice(str(tmp_path / "Star-3D4R.txt"), "float"),
                                                       str(tmp_path / "Star-3D4R.txt"))


class FakeCupyArray:
    """Stands for a ``cupy.ndarray`` on a machine without CuPy: only ``.get()`` (the copy to the host, a NumPy
    array) and ``__cuda_array_interface__``, as CuPy's device arrays have them; no ``__array__``."""

    __module__ = "cupy"

    def __init__(self, host: np.ndarray):
        self._host = host
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str, "data": (0, False),
                                         "version": 3, "strides": None}

    def get(self):
        return self._host.copy()


def _star4_cube(dtype) -> np.ndarray:
    return _array(Star3D4R.weights()).astype(dtype)


@pytest.mark.parametrize("dtype, name", [(np.float32, "float"), (np.float64, "double")])
def test_advise_on_a_cupy_weight_cube_answers_as_the_offsets_file(tmp_path, dtype, name):
    cube = FakeCupyArray(_star4_cube(dtype))
    src = tcadvisor.stencil_from(cube, name="Star-3D4R")
    assert src.dtype == name and src.stencil.offsets == parse_stencil("Star-3D4R").offsets
    assert src.read_from.startswith("a weight array (CuPy")
    assert any(n.startswith("704 zero entries") for n in src.notes)  # 9^3 cells, 25 of them the star
    got = _advice(src)
    _uses_bundled_kernels(got)
    txt = tmp_path / "Star-3D4R.txt"
    _offsets_file(txt, src.stencil)
    assert got["dtype"] == name and got["source"]["dtype_used"] is True
    assert _comparable(got) == _comparable(_advice(str(txt), name), str(txt))
    # the weights count (the fused weights' cancellations); the cube's support alone answers as the name
    support = tcadvisor.Stencil.from_offsets(src.stencil.offsets, name="Star-3D4R")
    assert _comparable(_advice(support, name)) == _comparable(_advice("Star-3D4R", name))


def test_a_device_array_declaring_a_huge_shape_is_refused_before_its_copy():
    class Huge(FakeCupyArray):
        def get(self):
            raise AssertionError("copied to the host")

    huge = Huge(np.zeros(1))
    huge.__cuda_array_interface__ = {**huge.__cuda_array_interface__, "shape": (4096, 4096, 4096)}
    with pytest.raises(tcadvisor.TcAdvisorError, match=r"shape \(4096, 4096, 4096\): too large"):
        stencil_from(huge)


@pytest.mark.gpu
def test_advise_on_a_real_cupy_weight_cube(tmp_path):
    cp = pytest.importorskip("cupy")
    cube = cp.asarray(_star4_cube(np.float32))
    src = tcadvisor.stencil_from(cube, name="Star-3D4R")
    assert src.dtype == "float" and src.read_from.startswith("a weight array (CuPy float32 array 9x9x9")
    txt = tmp_path / "Star-3D4R.txt"
    _offsets_file(txt, src.stencil)
    assert _comparable(_advice(src)) == _comparable(_advice(str(txt), "float"), str(txt))
