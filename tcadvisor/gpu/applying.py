"""Run a bundled kernel on the user's own array: :func:`apply` (``tcadvisor.apply``).

The advisor's answer is a configuration (unit, fusion depth t); ``apply`` runs it
on the caller's data: their stencil and weights, their number of steps, periodic
or fixed-value boundaries, and gives back the result (same dtype and shape, on
the GPU if the input was a CuPy array) with what ran (:class:`Applied`).

Boundaries.  The kernels' fields are padded with ghost layers.  *Periodic*: the
ghosts are refreshed with the periodic image before each sweep, so a sweep of t
fused steps is exactly t periodic steps.  *Fixed value* (``("constant", c)``: the
value outside the domain is c at every step): the ghosts are filled with c, but a
fused sweep of t steps updates its ghost cells like any other point, so its
intermediate steps see ghosts that are no longer c.  A point whose distance to
every face is at least r·(t−1) (r the stencil's radius) needs at its intermediate
steps only points inside the domain, and at step 0 points within r·t, where the
ghosts hold c: the kernel's value there is exact.  The band of width b = r·(t−1)
along each face is recomputed by t explicit steps (float64, c re-imposed outside
the domain at every step, rounded once to the storage type) on a strip of width
b + r·t: the cut side of the strip spoils r points per step, which leaves the b
points next to the face exact.  A strip spans the whole grid along the other
axes, with their real boundaries, so edges and corners are exact in every strip
that holds them.  A grid with an extent below 2·r·t would be all band: its sweeps
run unfused (t = 1, where the ghosts are exactly c) and the result says so.

Checking (``check=True``): every sweep against the interval a correct kernel's
output must lie in (:func:`tcadvisor.gpu.checking.sweep_interval`, the kernel's
own rounding model on its points, the explicit steps' on the band), and the
result against the float64 reference of all steps with the rigorous end-to-end
bound; a failure raises :class:`~tcadvisor.errors.TcAdvisorError` in one line.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import TcAdvisorError
from ..stencil import Stencil, check_fuse
from . import registry, runner
from .backend import cupy
from .checking import (U64, CheckResult, Stage, SweepInterval, SweepModel, compare_end_to_end, gamma,
                       numpy_apply, sweep_interval)
from .fields import PaddedField
from .numerics import STORAGE, from_storage, to_storage

#: NumPy/CuPy element types the kernels store, and the dtype names the kernels know them by.
ARRAY_DTYPES = {"float64": "double", "float32": "float", "float16": "half"}


@dataclass
class Applied:
    """What :func:`apply` ran and what it gave back."""

    output: object = field(repr=False)  # the result: the input's type (NumPy or CuPy), dtype and shape
    stencil: Stencil
    weights: np.ndarray = field(repr=False)  # the base weights run (the (2r+1)^d cube of Stencil.mask)
    dtype: str
    unit: str
    impl: str
    precision: str
    fuse: int
    steps: int
    sweeps: list[int]  # depth of each sweep (a shallower remainder last)
    boundary: str  # "periodic" or "constant c"
    chosen: str  # who chose the unit and depth, and on which GPU's model
    kernel: str  # the kernel's own line (launch shape, registers)
    device: str
    notes: list[str] = field(default_factory=list)  # what was assumed or changed, one sentence each
    check: CheckResult | None = None  # None: not checked
    advice: object = field(default=None, repr=False)  # the advisor's answer where it was asked

    def describe(self) -> str:
        """One line: what ran, on what, why."""
        from ..hardware import UNIT_LABELS

        plan = f"{len(self.sweeps)} sweep{'s' * (len(self.sweeps) > 1)}"
        if len(set(self.sweeps)) > 1:
            plan += f" ({len(self.sweeps) - 1} of t = {self.fuse}, the last t = {self.sweeps[-1]})"
        checked = "" if self.check is None else ", checked against the float64 reference"
        return (f"{self.steps} steps of {self.stencil.name} ({self.dtype}, {self.boundary} boundary) on "
                f"{UNIT_LABELS[self.unit]} ({self.impl}, {self.precision.upper()}) fused t = {self.fuse}: {plan}"
                f"{checked}; {self.chosen}")

    def __str__(self) -> str:
        return "\n".join([self.describe(), *self.notes])


def _backend():
    """The array module and padded-field class the sweeps run on: CuPy's (the one-line refusal without CuPy or a
    GPU).  The CPU tests substitute NumPy and the host emulation's field."""
    return cupy(), PaddedField


# --------------------------------------------------------------------------- arguments


def _array_kind(u) -> str:
    top = (type(u).__module__ or "").split(".")[0]
    if isinstance(u, np.ndarray):
        return "numpy"
    if top == "cupy" and hasattr(u, "dtype") and hasattr(u, "shape"):
        return "cupy"
    shown = f"{type(u).__module__}.{type(u).__name__}" if top not in ("builtins", "") else type(u).__name__
    raise TcAdvisorError(f"u is a {shown}; expected a NumPy or CuPy array (the field the stencil updates)")


def _array_dtype(u) -> str:
    dt = np.dtype(u.dtype)
    name = dt.newbyteorder("=").name if dt.kind == "f" else dt.name
    if name not in ARRAY_DTYPES:
        raise TcAdvisorError(f"u has element type {dt}; expected float64, float32 or float16 (the kernels' field "
                             "types; bfloat16 fields have no NumPy or CuPy type)")
    return ARRAY_DTYPES[name]


def parse_boundary(boundary) -> float | None:
    """None for ``"periodic"``; the value c for ``("constant", c)``; a one-line refusal for anything else."""
    expected = "expected 'periodic' or ('constant', c) with c a finite number"
    if isinstance(boundary, str):
        if boundary.strip().lower() == "periodic":
            return None
        raise TcAdvisorError(f"boundary {boundary!r} is not understood; {expected}")
    if isinstance(boundary, (tuple, list)) and len(boundary) == 2 and isinstance(boundary[0], str) \
            and boundary[0].strip().lower() == "constant":
        c = boundary[1]
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)):
            raise TcAdvisorError(f"boundary value {c!r} ({type(c).__name__}) is not a number; {expected}")
        try:
            value = float(c)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise TcAdvisorError(f"boundary value {c!r} is not finite; {expected}")
        return value
    from ..bounded import short_repr

    raise TcAdvisorError(f"boundary {short_repr(boundary)} is not understood; {expected}")


def _source(stencil, dims: int):
    """The StencilSource of ``stencil`` (anything :func:`tcadvisor.stencil_from` reads); an update function is
    probed on arrays of the field's dimensionality."""
    from ..sources import StencilSource, _symbolic_kind, stencil_from
    from ..sources.arrays import is_array_like

    function = (callable(stencil) and not isinstance(stencil, (Stencil, StencilSource, str, Path, Mapping))
                and not is_array_like(stencil) and _symbolic_kind(stencil) is None)
    return stencil_from(stencil, dims=dims) if function else stencil_from(stencil)


def _weights(stencil: Stencil, source, weights) -> np.ndarray:
    carried = stencil.weight_array()
    if weights is None:
        if carried is None:
            side = 2 * stencil.radius + 1
            raise TcAdvisorError(f"{stencil.name} has no weights; pass weights= (an array of shape "
                                 f"{(side,) * stencil.dims}) or a stencil that carries them, e.g. "
                                 "tcadvisor.stencil_from(<weight array>)")
        return carried
    w = runner.check_weights(stencil, weights)
    if carried is not None and not np.array_equal(w, carried):
        raise TcAdvisorError(f"weights= differ from the weights {stencil.name} carries (read from "
                             f"{source.read_from}); give them once, in the stencil or as weights=")
    return w


def _stored(c: float, dtype: str) -> float:
    """``c`` as the field's dtype stores it (every ghost cell holds it)."""
    with np.errstate(over="ignore"):  # an overflow is the refusal below
        v = float(from_storage(to_storage(np.asarray([c], dtype=np.float64), dtype), dtype)[0])
    if not math.isfinite(v):
        raise TcAdvisorError(f"boundary value {c:g} does not fit {dtype} fields (it rounds to {v})")
    return v


# --------------------------------------------------------------------------- the steps on the host side


def constant_step(x, w: np.ndarray, c: float):
    """One application of the weight cube ``w`` to ``x`` (NumPy or CuPy) in float64 with ``c`` outside the
    domain: ``scipy.ndimage.correlate`` (``cupyx.scipy.ndimage`` on the GPU), one launch per step."""
    xp = _xp(x)
    x = xp.asarray(x, dtype=xp.float64)
    if xp is np:
        from scipy import ndimage
    else:
        from cupyx.scipy import ndimage
    return ndimage.correlate(x, xp.asarray(w, dtype=xp.float64), mode="constant", cval=float(c))


def _periodic_apply(xp):
    if xp is np:
        return numpy_apply
    from .reference import reference_steps

    return lambda x, w: reference_steps(x, w, 1)


def _xp(x):
    from .numerics import array_module

    return array_module(x)


def _round_store(v, dtype: str):
    """float64 values into the storage array of ``dtype``, rounded as a kernel storing a float32 accumulator
    rounds 16-bit types (:func:`tcadvisor.gpu.numerics.round_storage`)."""
    xp = _xp(v)
    return to_storage(v.astype(xp.float32) if dtype in ("half", "bfloat16") else v, dtype)


def band_model(stencil: Stencil, weights: np.ndarray, t: int, dtype: str) -> SweepModel:
    """How the band's explicit steps round: t float64 stages of the base weights (2K roundings each: a multiply
    and an add per tap), the last rounded to the storage type."""
    w = np.asarray(weights, dtype=np.float64)
    stage = Stage(weights=w, exact=w, operand=None, u_acc=U64, terms=2 * stencil.K)
    last = Stage(weights=w, exact=w, operand=None, u_acc=U64, terms=2 * stencil.K, output=dtype)
    return SweepModel((stage,) * (t - 1) + (last,))


def band_mask(grid: tuple[int, ...], width: int, xp=np):
    """True within ``width`` points of a face."""
    mask = xp.zeros(grid, dtype=bool)
    for axis, n in enumerate(grid):
        lead = (slice(None),) * axis
        mask[lead + (slice(0, width),)] = True
        mask[lead + (slice(max(n - width, 0), n),)] = True
    return mask


def redo_band(src, out, weights: np.ndarray, t: int, radius: int, c: float, dtype: str) -> None:
    """Overwrite the points of ``out`` within r·(t−1) of a face with t exact fixed-value steps from ``src``
    (``out`` and ``src``: storage arrays shaped as the grid, the sweep's output and input); see the module
    docstring.  Needs every extent to be at least 2·r·t.  The strips of both faces of an axis are stepped
    together (stacked along a new leading axis the weights do not reach along)."""
    b, reach = radius * (t - 1), radius * t
    if b == 0:
        return
    xp = _xp(src)
    width = b + reach
    assert all(n >= 2 * reach for n in src.shape), (src.shape, reach)
    w = xp.asarray(np.asarray(weights, dtype=np.float64)[None])
    for axis, n in enumerate(src.shape):
        lead = (slice(None),) * axis
        v = xp.stack([from_storage(src[lead + (slice(0, width),)], dtype),
                      from_storage(src[lead + (slice(n - width, n),)], dtype)])
        for _ in range(t):
            v = constant_step(v, w, c)
        out[lead + (slice(0, b),)] = _round_store(v[0][lead + (slice(0, b),)], dtype)
        out[lead + (slice(n - b, n),)] = _round_store(v[1][lead + (slice(width - b, width),)], dtype)


def _fill_ghosts(f, value: float) -> None:
    """Every ghost cell of ``f`` holds ``value`` (the columns past the right ghost layer stay as they are)."""
    for z0, z1, y0, y1, x0, x1 in f.ghost_regions():
        f.data[z0:z1, y0:y1, x0:x1] = value


def _end_to_end_bound(models: list[list[SweepModel]], m0: float, c: float | None, base: np.ndarray,
                      steps: int) -> float:
    """Absolute bound on |result − float64 reference| after the sweeps (each a list of the models its points
    follow), plus the reference's own error: :func:`tcadvisor.gpu.checking.end_to_end_bound` with the
    boundary value as part of every stage's input (its magnitude bounds |input| from below)."""
    floor = 0.0 if c is None else abs(c)
    e, m = 0.0, max(m0, floor)
    for sweep in models:
        after = []
        for model in sweep:
            ee, mm = e, m
            for g, ell in model.local_error():
                ee = g * ee + ell * (mm + ee)
                mm = max(g * mm, floor)
            after.append((ee, mm))
        e, m = max(a[0] for a in after), max(a[1] for a in after)
    gb = float(np.abs(base).sum())
    lref = gamma(int(np.count_nonzero(base)), U64) * gb
    er, mr = 0.0, max(m0, floor)
    for _ in range(steps):
        er = gb * er + lref * (mr + er)
        mr = max(gb * mr, floor)
    return e + er


def _reference(x0, w: np.ndarray, steps: int, c: float | None):
    xp = _xp(x0)
    if c is None:
        if xp is not np:
            from .reference import reference_steps

            return reference_steps(x0, w, steps)
        from ..reference import apply_steps

        return apply_steps(x0, w, steps)
    v = xp.asarray(x0, dtype=xp.float64)
    for _ in range(steps):
        v = constant_step(v, w, c)
    return v


# --------------------------------------------------------------------------- choosing the configuration


def _configuration(stencil: Stencil, dtype: str, grid, steps: int, unit, fuse, gpu):
    """(unit, fuse, impl name, who chose, notes, advice) for the run; the same query asked again in this process
    (a time loop calling apply) is answered from a small cache instead of the advisor (tens of ms each)."""
    if unit is not None:
        registry.bundled_profile(unit)  # the unit's own refusal, before the advisor runs
    if fuse is not None:
        fuse = check_fuse(fuse)
        if fuse > steps:
            raise TcAdvisorError(f"fuse {fuse} is deeper than steps {steps}: a sweep cannot fuse more time steps "
                                 "than the run has; lower fuse or raise steps")
    if gpu is None or isinstance(gpu, str):
        unit_, fuse_, impl, chosen, notes, advice = _cached_configuration(stencil, dtype, grid, steps, unit, fuse, gpu)
        return unit_, fuse_, impl, chosen, list(notes), advice
    return _ask_configuration(stencil, dtype, grid, steps, unit, fuse, gpu)


@lru_cache(maxsize=32)
def _cached_configuration(stencil, dtype, grid, steps, unit, fuse, gpu):
    unit_, fuse_, impl, chosen, notes, advice = _ask_configuration(stencil, dtype, grid, steps, unit, fuse, gpu)
    return unit_, fuse_, impl, chosen, tuple(notes), advice


def _ask_configuration(stencil: Stencil, dtype: str, grid, steps: int, unit, fuse, gpu):
    from ..advisor import advise
    from ..hardware import UNIT_LABELS, resolve_gpu

    notes: list[str] = []
    if unit is not None and fuse is not None:
        return unit, fuse, registry.resolve(unit).name, f"unit and depth as given (unit={unit!r}, fuse={fuse})", \
            notes, None
    resolved = resolve_gpu(gpu)
    if resolved.note:
        note = resolved.note.replace("--gpu", "gpu=")  # the API's spelling of the option
        notes.append(note[0].upper() + note[1:] + ".")

    def ask(depth):
        advice = advise(stencil, dtype, resolved.spec, fuse=depth, grid=grid, steps=steps)
        if unit is not None:
            opt = advice.best[unit] if depth is None else advice.by_depth[unit][depth]
        else:
            opt = advice.verdict if depth is None else advice.at_fuse
        if opt is None or not opt.available:
            why = "no unit can run it" if opt is None else opt.reason
            where = UNIT_LABELS[unit] if unit is not None else "the advisor"
            raise TcAdvisorError(f"{where} has no configuration for {stencil.name} in {dtype}"
                                 f"{'' if depth is None else f' at t = {depth}'} on {resolved.spec.name}: {why}")
        if opt.impl is None or not opt.impl.kernel:
            raise TcAdvisorError(f"the advisor's choice, {opt.impl.name if opt.impl else opt.unit} on "
                                 f"{UNIT_LABELS[opt.unit]}, has no bundled kernel ({advice.fallback.get(opt.unit)}); "
                                 "pass unit= and fuse= to run a bundled kernel")
        return opt, advice

    opt, advice = ask(fuse)
    what = {(False, False): "the advisor's verdict", (True, False): f"the advisor's best depth for unit={unit!r}",
            (False, True): f"the advisor's best unit at fuse={fuse}"}[(unit is not None, fuse is not None)]
    chosen = (f"{what} for {'x'.join(map(str, grid))}, {steps} steps on {resolved.spec.name} "
              f"({advice.model} model, {opt.gstencils:.4g} GStencils/s predicted)")
    return opt.unit, opt.fuse, opt.impl.name, chosen, notes, advice


# --------------------------------------------------------------------------- apply


def apply(u, stencil, steps: int, weights=None, *, unit: str | None = None, fuse: int | None = None,
          boundary="periodic", check: bool = False, gpu=None) -> Applied:
    """Run ``steps`` time steps of ``stencil`` on the array ``u`` with a bundled kernel; an :class:`Applied`.

    ``u``: a NumPy array (copied to the GPU and back) or a CuPy array (the result stays on its GPU), float64,
    float32 or float16, 1D to 3D; axes in the array's own order, as the stencil's offsets.  ``stencil``:
    anything :func:`tcadvisor.stencil_from` reads (a weight array, a mapping, an update function, an
    expression, a ``.npy``/C file), a :class:`~tcadvisor.stencil.Stencil` or a name.  ``weights``: the base
    weight cube of side 2r+1 (correlation, as :mod:`tcadvisor.reference`), only where the stencil carries none.
    ``unit``/``fuse``: the unit and fusion depth (default: the advisor's answer for this stencil, dtype, grid
    and number of steps on ``gpu``, the detected GPU by default; ``Applied.chosen`` says which; the same query
    again in this process is answered from a cache, so a time loop calling ``apply`` asks the advisor once).
    ``boundary``: ``"periodic"`` or ``("constant", c)`` (c outside the domain at every step; see the module
    docstring for how fused sweeps keep it exact).  ``check``: check every sweep against its rounding interval
    and the result against the float64 reference; a failure raises TcAdvisorError.

    Example::

        import numpy as np, tcadvisor
        u = np.random.default_rng(0).uniform(1, 2, (2048, 2048))
        w = np.array([[0, .1, 0], [.1, .6, .1], [0, .1, 0]])        # weights: the stencil carries them
        res = tcadvisor.apply(u, w, steps=100, boundary=("constant", 0.0), check=True)
        print(res.describe()); v = res.output                     # float64 (2048, 2048), like u
    """
    from ..advisor import check_steps

    kind = _array_kind(u)
    dtype = _array_dtype(u)
    if not 1 <= u.ndim <= 3:
        raise TcAdvisorError(f"u has {u.ndim} dimensions (shape {tuple(u.shape)}); the kernels run 1D, 2D and 3D "
                             "fields")
    steps = check_steps(steps)
    c = parse_boundary(boundary)
    source = _source(stencil, u.ndim)
    st = source.stencil
    if st.dims != u.ndim:
        raise TcAdvisorError(f"u is {u.ndim}D (shape {tuple(u.shape)}) but {st.name} is {st.dims}D; give a "
                             f"{st.dims}D array or a {u.ndim}D stencil")
    w = _weights(st, source, weights)
    grid = runner.parse_grid(tuple(u.shape), st.dims)
    notes = [n if n.endswith(".") else n + "." for n in source.notes]
    if source.dtype is not None and source.dtype != dtype:
        notes.append(f"The stencil's source ({source.read_from.split(' (', 1)[0]}) is {source.dtype}; the array "
                     f"is {dtype}, which is what runs.")
    if c is not None:
        cs = _stored(c, dtype)
        if cs != c:
            notes.append(f"The boundary value {c!r} is {cs!r} in {dtype}, as every value of the field.")
        c = cs
    xp, Field = _backend()

    unit_run, depth, impl, chosen, more, advice = _configuration(st, dtype, grid, steps, unit, fuse, gpu)
    notes += more
    profile = registry.resolve(unit_run, impl)
    plan = runner.sweep_plan(steps, depth)
    if c is not None and depth > 1 and min(grid) < 2 * st.radius * depth:
        notes.append(f"The grid {'x'.join(map(str, grid))} has an extent below 2·r·t = {2 * st.radius * depth}, "
                     f"where the fixed-value boundary band would cover it: the sweeps run unfused (t = 1) "
                     f"instead of {'fuse' if fuse is not None else 'the advised t'} = {depth}.")
        depth, plan = 1, [1] * steps
    kernels = {t: runner.make_kernel(st, profile, t, dtype, w) for t in sorted(set(plan))}
    main = kernels[plan[0]]
    native = {"double": "fp64", "float": "fp32", "half": "fp16"}[dtype]
    if main.precision != native:
        notes.append(f"The {dtype} field is computed in {main.precision.upper()} ({profile.name}'s precision for "
                     f"{dtype}); unit='cuda_core' computes it in {native.upper()}.")

    shape3 = (1,) * (3 - st.dims) + grid
    memory_errors = (xp.cuda.memory.OutOfMemoryError,) if xp is not np else (MemoryError,)
    try:
        x0 = xp.asarray(u, dtype=STORAGE[dtype]).reshape(shape3)
        output, result = _sweeps(kernels, plan, dtype, Field, x0, w, st, c, grid, check, xp)
    except memory_errors:
        raise TcAdvisorError(f"the field {'x'.join(map(str, grid))} ({dtype}) with its ghost layers"
                             f"{' and the float64 copies of the check' if check else ''} does not fit in GPU "
                             "memory") from None
    if result is not None and not result.passed:
        raise TcAdvisorError(_failure(result, steps))
    output = output.reshape(u.shape)
    if kind == "numpy" and xp is not np:
        output = output.get()
    if output.dtype != u.dtype:  # a non-native byte order
        output = output.astype(u.dtype)
    return Applied(output=output, stencil=st, weights=w, dtype=dtype, unit=profile.unit, impl=profile.name,
                   precision=main.precision, fuse=depth, steps=steps, sweeps=plan,
                   boundary="periodic" if c is None else f"constant {c:g}", chosen=chosen,
                   kernel=main.describe(), device=runner.device_info()["name"], notes=notes, check=result,
                   advice=advice)


def _sweeps(kernels: dict, plan: list[int], dtype: str, Field, x0, w: np.ndarray, st: Stencil, c: float | None,
            grid: tuple[int, ...], check: bool, xp):
    """Run the sweeps of ``plan`` from ``x0`` (the storage array, shape3) on two fields of class ``Field``;
    (output storage array, CheckResult or None).

    The fields have the ghost widths and pitch the kernel of the sweep asks for; a remainder sweep whose kernel
    asks for others (the 1D kernel aligns its ghost width to its own halo) moves to fields of its own.
    """
    shape3 = x0.shape
    a = b = geometry = None
    result = CheckResult() if check else None
    models = []
    periodic_apply = _periodic_apply(xp)
    for t in plan:
        if kernels[t].geometry(shape3) != geometry:
            geometry = kernels[t].geometry(shape3)
            state = x0 if a is None else xp.array(a.interior)
            a = b = None  # the old fields go before the new ones come
            a, b = Field(shape3, STORAGE[dtype], geometry), Field(shape3, STORAGE[dtype], geometry)
            a.interior[...] = state
            del state
        if c is None:
            a.refresh()
        else:
            _fill_ghosts(a, c)
        band = c is not None and t > 1
        xin = from_storage(a.interior, dtype).reshape(grid) if check else None
        if check:
            b.interior[...] = xp.nan
        kernels[t].sweep(a, b)
        if band:
            redo_band(_view(a.interior, grid), _view(b.interior, grid), w, t, st.radius, c, dtype)
        if check:
            model = kernels[t].numerics()
            if c is None:
                interval = sweep_interval(model, xin, periodic_apply)
                models.append([model])
            else:
                interval = sweep_interval(model, xin, constant_step, outside=c)
                models.append([model])
                if band:
                    bm = band_model(st, w, t, dtype)
                    edge = sweep_interval(bm, xin, constant_step, outside=c)
                    mask = band_mask(grid, st.radius * (t - 1), xp)
                    interval = SweepInterval(xp.where(mask, edge.lo, interval.lo),
                                             xp.where(mask, edge.hi, interval.hi),
                                             xp.where(mask, edge.reference, interval.reference))
                    models[-1].append(bm)
            result.sweep.add(from_storage(b.interior, dtype).reshape(grid), interval)
            del interval
        a, b = b, a
    output = xp.ascontiguousarray(a.interior).reshape(grid)
    if check:
        values = from_storage(output, dtype)
        result.unwritten = int(xp.count_nonzero(xp.isnan(values)))
        start = from_storage(x0, dtype).reshape(grid)
        ref = _reference(start, w, sum(plan), c)
        bound = _end_to_end_bound(models, float(xp.max(xp.abs(start))), c, w, sum(plan))
        compare_end_to_end(result, values, ref, bound)
    return output, result


def _view(interior, grid):
    """The interior (nz, ny, nx) seen with the grid's axes only (dropping the leading extents of 1)."""
    return interior[(0,) * (interior.ndim - len(grid))]


def _failure(result: CheckResult, steps: int) -> str:
    s = result.sweep
    if s.violations:
        return (f"check failed: {s.violations} of {s.points} outputs over {s.sweeps} sweep{'s' * (s.sweeps != 1)} "
                f"fell outside their rounding intervals (worst {s.worst:.3g} relative to the largest value); "
                "nothing is returned")
    if result.unwritten:
        return f"check failed: {result.unwritten} outputs are NaN (never written); nothing is returned"
    return (f"check failed: after {steps} steps the result is {result.max_rel_error:.3g} (relative) from the "
            f"float64 reference, beyond the rounding bound {result.tolerance:.3g}; nothing is returned")


__all__ = ["Applied", "apply", "parse_boundary", "constant_step", "redo_band", "band_model"]
