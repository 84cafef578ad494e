"""The stencil of a linear update function, recovered by probing it with impulses.

``step(u) -> u_new`` for one NumPy array ``u`` (any library's array may come
back) is called on small float64 grids of side ``N = 4·PROBE_RADIUS + 3``:

1. ``step(0)`` must be 0 (else it adds a constant or a source term: not linear);
2. ``step(e_c)``, an impulse at the centre ``c``, gives the weights: a stencil
   ``out[i] = Σ_o w_o · u[i + o]`` answers ``w_o`` at ``c − o`` (correlation, the
   convention of :mod:`tcadvisor.sources.arrays`); anything non-zero further than
   ``PROBE_RADIUS`` cells from ``c`` is refused as reading further than probed;
3. ``step(x)``, ``step(y)`` and ``step(a·x + b·y)`` for random fields check
   superposition (linearity);
4. ``step(e_{c+1})``, the impulse moved by one cell on every axis, must answer
   the same weights moved by one cell (one stencil at every point, not
   position-dependent coefficients);
5. ``step(x)`` must equal the recovered stencil applied to ``x`` on the interior
   (every point whose neighbourhood of radius ``PROBE_RADIUS`` lies in the grid):
   otherwise it depends on the boundary or on values further away.

Alignment of a shrunken output: slicing updates such as
``0.25*(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])`` return the
interior.  An output shorter by ``2s`` along an axis is aligned as the interior
``u_new[s:-s]``: its index ``j`` is the grid's ``j + s``.  A shrink by an odd number
of cells has no such middle and is refused; ``None`` returned after an in-place
update of ``u`` reads ``u`` itself (and a note says so).

Bounds: ``PROBE_RADIUS = 8`` is the radius of the model's maps and sweeps
(:data:`tcadvisor.queryargs.DEFAULT_RADII` covers 1 to 8) and beyond the reach of
common high-order schemes (radius 4 to 6); a wider stencil is better given as its
weight array, which reaches :data:`tcadvisor.stencil.MAX_RADIUS`.  The grid has
35 cells a side (at most 35³ = 42,875 cells, 343 KB in float64), and the function
is called at most six times, with no further call once the calls so far took
:data:`MAX_PROBE_SECONDS` (a function that sleeps or compiles is refused after that
call).  The function is the user's own code, run in this process: one call cannot be
interrupted safely from pure Python (no thread or signal is used), and what it
allocates is its own; the grid size, the call count and the time checked between
calls are what is promised.  Its exceptions come back as one line (``KeyboardInterrupt``
and ``SystemExit`` are not caught).  Values it returns are checked finite.

Dtype: the probes are float64; the answer's dtype is None (the caller's, or
double) unless the function returns another floating type for float64 input
(float32 from code that casts, or JAX without x64), which it then forces.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ..errors import TcAdvisorError
from ..stencil import Stencil, check_dims
from .arrays import host_array, is_array_like, stencil_dtype
from .result import StencilSource

#: Largest radius the probe recovers (see the module docstring for why 8).
PROBE_RADIUS = 8
#: Cells along each axis of a probe grid: the centre's neighbourhood of PROBE_RADIUS, one more cell to see a shift,
#: and PROBE_RADIUS more on every side so that the interior's stencil never reads outside the grid.
PROBE_SIDE = 4 * PROBE_RADIUS + 3
#: Calls of the function per probe: zero, impulse, two random fields and their sum, a moved impulse.
MAX_CALLS = 6
#: Wall-clock seconds after which no further call is made (a call in progress cannot be interrupted).
MAX_PROBE_SECONDS = 30.0


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


class _Probe:
    """Calls of one function on probe grids of one dimensionality, each checked and aligned the same way."""

    def __init__(self, fn: Callable, dims: int):
        self.fn, self.dims, self.name = fn, dims, _name(fn)
        self.shape = (PROBE_SIDE,) * dims
        self.calls = 0
        self.shrink: tuple[int, ...] | None = None
        self.out_dtype: str | None = None
        self.in_place = False
        self.started: float | None = None

    def __call__(self, field: np.ndarray, what: str) -> np.ndarray:
        """``fn(field)`` on the whole grid: NaN where a shrunken output says nothing."""
        self.calls += 1
        assert self.calls <= MAX_CALLS, "the probe calls the function at most MAX_CALLS times"
        if self.started is None:
            self.started = time.monotonic()
        given = field.copy()
        shown = f"{'x'.join(map(str, self.shape))} float64 {what}"
        try:
            result = self.fn(given)
        except Exception as exc:  # noqa: BLE001 - the user's code; its error is reported in one line
            text = " ".join(str(exc).split())[:120]
            raise TcAdvisorError(f"update function {self.name} raised {type(exc).__name__} on a {shown}"
                                 + (f": {text}" if text else "")) from None
        if result is None:  # an in-place update: the copy it was given holds the result
            if np.any(field != 0) and np.array_equal(given, field):
                raise TcAdvisorError(f"update function {self.name} returned None and left its argument unchanged "
                                     f"for a {shown}; expected it to return the updated array")
            self.in_place = True
            result = given
        if not is_array_like(result):
            raise TcAdvisorError(f"update function {self.name} returned {type(result).__name__}, not an array, for a "
                                 f"{shown}; expected the updated array (NumPy, or any array tcadvisor reads)")
        arr, dtype_text = host_array(result, f"the result of {self.name}")
        self._check_dtype(dtype_text, shown)
        out = self._aligned(np.asarray(arr, dtype=np.float64), shown)
        if not np.all(np.isfinite(arr)):  # NaN marks the cells a shrunken output says nothing about: not the user's
            raise TcAdvisorError(f"update function {self.name} returned NaN or infinite values for a {shown}; "
                                 "expected finite values (a linear stencil of finite weights)")
        self._check_time(shown)
        return out

    def _check_time(self, shown: str) -> None:
        """Stop before the next call once the calls so far took longer than :data:`MAX_PROBE_SECONDS`."""
        spent = time.monotonic() - self.started
        if spent > MAX_PROBE_SECONDS and self.calls < MAX_CALLS:
            raise TcAdvisorError(f"update function {self.name} took {spent:.1f} s for {self.calls} call"
                                 f"{'s' if self.calls > 1 else ''} (the last on a {shown}); tcadvisor stops probing "
                                 f"past {MAX_PROBE_SECONDS:g} s: give the stencil as its weight array or mapping")

    def _check_dtype(self, dtype_text: str, shown: str) -> None:
        dtype = stencil_dtype(dtype_text, f"the result of update function {self.name} for a {shown}")
        name = None if dtype == "double" else dtype
        if self.out_dtype is not None and name != self.out_dtype:
            raise TcAdvisorError(f"update function {self.name} returned {dtype_text} for a {shown} but "
                                 f"{self.out_dtype} before; expected one element type")
        self.out_dtype = name

    def _aligned(self, arr: np.ndarray, shown: str) -> np.ndarray:
        """The output on the grid's coordinates (see the module docstring for the alignment)."""
        interior = "(n - 2r along each axis, n = " + str(PROBE_SIDE) + ")"
        if arr.ndim != self.dims:
            raise TcAdvisorError(f"update function {self.name} returned shape {arr.shape} for a {shown}; expected "
                                 f"{self.shape} or its interior {interior}")
        shrink = []
        for axis, m in enumerate(arr.shape):
            lost = PROBE_SIDE - m
            if lost < 0 or lost % 2:
                raise TcAdvisorError(f"update function {self.name} returned shape {arr.shape} for a {shown}: along "
                                     f"axis {axis} it is {'longer' if lost < 0 else f'{lost} shorter'}, so it cannot "
                                     f"be aligned as the interior; expected {self.shape} or its interior {interior}")
            if lost // 2 > PROBE_RADIUS:
                raise TcAdvisorError(f"update function {self.name} returned shape {arr.shape} for a {shown}: an "
                                     f"interior {lost // 2} cells in along axis {axis}, so it reads further than the "
                                     f"{PROBE_RADIUS} cells probed; give a wider stencil as its weight array")
            shrink.append(lost // 2)
        if self.shrink is not None and tuple(shrink) != self.shrink:
            raise TcAdvisorError(f"update function {self.name} returned shape {arr.shape} for a {shown} but another "
                                 "shape before; expected one output shape")
        self.shrink = tuple(shrink)
        out = np.full(self.shape, np.nan)
        out[tuple(slice(s, PROBE_SIDE - s) for s in shrink)] = arr
        return out

    def tolerance(self, scale: float, terms: int) -> float:
        """How far two results may differ by rounding alone, in the output's precision."""
        eps = {None: 2.0 ** -52, "float": 2.0 ** -23, "half": 2.0 ** -10, "bfloat16": 2.0 ** -7}[self.out_dtype]
        return min(8 * (terms + 2) * eps, 0.05) * max(scale, np.finfo(float).tiny)


def _impulse(shape: tuple[int, ...], at: tuple[int, ...]) -> np.ndarray:
    field = np.zeros(shape)
    field[at] = 1.0
    return field


def _apply(weights: dict[tuple[int, ...], float], field: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """``Σ_o w_o · field[i + o]`` for every i in [lo, hi] along each axis (no index leaves the grid)."""
    out = np.zeros((hi - lo + 1,) * field.ndim)
    for offset, w in weights.items():
        out += w * field[tuple(slice(lo + o, hi + 1 + o) for o in offset)]
    return out


def from_function(fn: Callable[[np.ndarray], Any], *, dims: int | None = None,
                  name: str | None = None) -> StencilSource:
    """The stencil of the linear update ``fn`` of one ``dims``-dimensional array (see the module docstring)."""
    if dims is None:
        raise TcAdvisorError(f"update function {_name(fn)}: give dims=1, 2 or 3, the dimensionality of the array it "
                             "updates (it is probed on an array of that many axes)")
    dims = check_dims(dims)
    probe = _Probe(fn, dims)
    shape, R, n = probe.shape, PROBE_RADIUS, PROBE_SIDE
    c = n // 2
    centre = (c,) * dims

    if np.any(np.nan_to_num(probe(np.zeros(shape), "array of zeros"), nan=0.0) != 0):
        raise TcAdvisorError(f"update function {probe.name} is not linear: it returns non-zero values for an array "
                             "of zeros (a constant or source term?); give the linear part alone")

    response = probe(_impulse(shape, centre), "impulse")
    found = np.argwhere(np.nan_to_num(response, nan=0.0) != 0)
    if not len(found):
        raise TcAdvisorError(f"update function {probe.name} returns zeros for an impulse: it reads no value (every "
                             "weight is zero)")
    peak = float(np.nanmax(np.abs(response)))
    # rounding of an FFT-based or reassociated evaluation (of the order of eps · log(cells)), not weights
    noise = probe.tolerance(peak, PROBE_SIDE)
    far = [tuple(int(c - k) for k in idx) for idx in found if abs(response[tuple(idx)]) > noise
           and max(abs(int(c - k)) for k in idx) > R]
    if far:
        reach = max(max(abs(v) for v in o) for o in far)
        raise TcAdvisorError(f"update function {probe.name} reads further than the {R} cells probed (its impulse "
                             f"response reaches {reach} cells from the centre); give a wider stencil as its weight "
                             "array")
    weights = {tuple(int(c - k) for k in idx): float(response[tuple(idx)]) for idx in found
               if abs(response[tuple(idx)]) > noise}
    dropped = len(found) - len(weights)

    rng = np.random.default_rng(20240624)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    a, b = 0.75, -1.5
    fx, fy, fxy = probe(x, "random field"), probe(y, "random field"), probe(a * x + b * y, "random field")
    scale = sum(abs(w) for w in weights.values()) * float(max(np.abs(x).max(), np.abs(y).max())) * 2.5
    tol = probe.tolerance(scale, len(weights))
    gap = np.nanmax(np.abs(fxy - (a * fx + b * fy)))
    if not gap <= tol:
        raise TcAdvisorError(f"update function {probe.name} is not linear: f({a}·x − {-b}·y) differs from "
                             f"{a}·f(x) − {-b}·f(y) by {gap:.3g} for random fields x, y; tcadvisor models linear "
                             "stencils (a fixed weighted sum of neighbours)")

    moved = probe(_impulse(shape, (c + 1,) * dims), "impulse")
    expected = np.full(shape, np.nan)
    expected[(slice(1, None),) * dims] = response[(slice(None, -1),) * dims]
    both = ~np.isnan(moved) & ~np.isnan(expected)
    if not np.all(np.abs(moved[both] - expected[both]) <= noise):
        raise TcAdvisorError(f"update function {probe.name} is not the same stencil at every point: an impulse moved "
                             "by one cell answers other weights (coefficients that vary with position)")

    inner = (slice(R, n - R),) * dims
    reference = _apply(weights, x, R, n - 1 - R)
    gap = np.max(np.abs(fx[inner] - reference))
    # the impulse-response values read as rounding (each at most `noise`) still act on x: allow for them
    dropped_reach = dropped * noise * float(np.abs(x).max())
    if not gap <= tol + dropped_reach:
        raise TcAdvisorError(f"update function {probe.name} depends on the boundary (or on values further than {R} "
                             f"cells): on the interior of a random field it differs from the stencil its impulse "
                             f"response gives by {gap:.3g}")

    try:
        stencil = Stencil.from_offsets(list(weights), name=name, weights=list(weights.values()))
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"update function {probe.name}: {exc}") from None
    notes = []
    if any(probe.shrink):
        same = len(set(probe.shrink)) == 1
        cells = (f"s = {probe.shrink[0]} on every side" if same else
                 f"s = {', '.join(map(str, probe.shrink))} along the axes")
        notes.append(f"the function returns the interior ({cells}); its output was aligned as u_new[s:-s] = step(u), "
                     "its index j at the grid's j + s")
    if probe.in_place:
        notes.append("the function returned None: the array it updated in place was read as its result")
    if probe.out_dtype is not None:
        notes.append(f"the function returned {probe.out_dtype} for float64 input, so the stencil's dtype is "
                     f"{probe.out_dtype}")
    if dropped:
        notes.append(f"{dropped} impulse-response value{'s' if dropped > 1 else ''} within rounding of zero "
                     f"(at most {noise:.2g}) {'were' if dropped > 1 else 'was'} read as zero")
    kind = "x".join(map(str, shape))
    source = f"update function {probe.name} (probed {probe.calls} times on {kind} float64 grids)"
    return StencilSource(stencil, probe.out_dtype, source, tuple(notes))
