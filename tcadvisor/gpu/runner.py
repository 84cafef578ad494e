"""Run a bundled kernel on the GPU: time it, check every sweep, set it against the model.

``run`` is the Python face of ``tcadvisor run``.  The kernel comes from the
registry (:mod:`tcadvisor.gpu.registry`): ``unit`` picks the unit's bundled
profile, ``impl`` a profile by name, and the profile gives the precision for
the dtype.  Correctness is checked per sweep against a reference computed from
identically rounded operands, and end to end against the float64 base-stencil
reference, with tolerances derived in :mod:`tcadvisor.gpu.checking`.

Defaults keep long runs finite in every precision: random positive weights
summing to 1 (a convex combination) and initial data uniform in [1, 2], so the
exact solution stays in [1, 2].
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..advisor import AlphaChoice, Option, evaluate_unit
from ..errors import TcAdvisorError
from ..hardware import GpuSpec, resolve_gpu
from ..mma import MmaShape
from ..reference import random_weights
from ..stencil import Stencil, check_fuse
from . import registry
from .backend import cupy, device_info
from .checking import CheckResult, compare_end_to_end, end_to_end_bound, sweep_interval
from .fields import PaddedField
from .numerics import STORAGE, from_storage, to_storage
from .plans import DEFAULT_GRIDS  # the grids the refined model assumes too
from .reference import reference_steps
from .timing import timed_runs

MAX_POINTS = 2**31 - 1
#: Initial data are uniform in this interval (see the module docstring).
DATA_RANGE = (1.0, 2.0)


@dataclass
class RunResult:
    stencil: Stencil
    unit: str
    impl: str
    kernel_name: str
    cuda_function: str
    dtype: str
    precision: str
    mma: str | None
    fuse: int
    grid: tuple[int, ...]
    steps: int
    sweeps: list[int]
    device: str
    kernel: str
    seconds: float
    seconds_all: list[float]
    gstencils: float
    useful_tflops: float
    executed_tflops: float
    executed_flops_per_point: float
    alpha: Fraction | None
    bound_gpu: str
    bound_gstencils: float | None
    bound: str | None
    prediction: Option | None
    checked: bool
    check: CheckResult | None = None
    output: object = field(default=None, repr=False)
    #: Seconds of one periodic ghost refresh of the run's fields, timed alone: every sweep of ``seconds`` includes
    #: one, and the model's bound leaves it out (it is the periodic problem's cost, not the stencil's).
    refresh_seconds: float | None = None

    @property
    def fraction_of_bound(self) -> float | None:
        return None if not self.bound_gstencils else self.gstencils / self.bound_gstencils

    @property
    def refresh_share(self) -> float | None:
        """Share of the timed sweeps spent refreshing ghost layers (one refresh per sweep)."""
        if self.refresh_seconds is None or not self.seconds:
            return None
        return self.refresh_seconds * len(self.sweeps) / self.seconds

    @property
    def passed(self) -> bool | None:
        return None if self.check is None else self.check.passed

    @property
    def max_rel_error(self) -> float | None:
        return None if self.check is None else self.check.max_rel_error

    @property
    def tolerance(self) -> float | None:
        return None if self.check is None else self.check.tolerance

    @property
    def unwritten(self) -> int | None:
        return None if self.check is None else self.check.unwritten


def parse_grid(text: str | tuple, dims: int) -> tuple[int, ...]:
    if isinstance(text, str):
        parts = text.lower().replace("×", "x").split("x")
        try:
            grid = tuple(int(p) for p in parts)
        except ValueError:
            raise TcAdvisorError(f"grid {text!r} is not of the form NxM (e.g. 10240x10240)") from None
    else:
        grid = tuple(int(v) for v in text)
    if len(grid) != dims:
        raise TcAdvisorError(f"grid {'x'.join(map(str, grid))} has {len(grid)} extents but the stencil is {dims}D")
    if any(v < 1 for v in grid):
        raise TcAdvisorError(f"grid {'x'.join(map(str, grid))}: every extent must be at least 1")
    if math.prod(grid) > MAX_POINTS:
        raise TcAdvisorError(f"grid {'x'.join(map(str, grid))} has more than 2^31 points; the kernels index with 32 bits")
    return grid


def default_grid(stencil: Stencil, dtype: str = "double") -> str:
    """A grid whose working set exceeds the L2 cache several times over (timings measure DRAM)."""
    del dtype  # the default grids are large enough for 2-byte types already
    return "x".join(map(str, DEFAULT_GRIDS[stencil.dims]))


def default_weights(stencil: Stencil, seed: int) -> np.ndarray:
    """Random positive weights on the stencil's support, summing to 1 (so long runs stay bounded)."""
    return random_weights(stencil.mask(), np.random.default_rng(seed))


def check_weights(stencil: Stencil, weights) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    side = 2 * stencil.radius + 1
    if w.shape != (side,) * stencil.dims:
        raise TcAdvisorError(f"weights of shape {w.shape} do not fit {stencil.name}; expected {(side,) * stencil.dims}")
    if np.any((w != 0) & ~stencil.mask()):
        raise TcAdvisorError(f"weights have non-zeros outside the support of {stencil.name}")
    if not np.all(np.isfinite(w)):
        raise TcAdvisorError("weights must be finite")
    return w


def sweep_plan(steps: int, fuse: int) -> list[int]:
    """Depth of each sweep: ``fuse`` steps per sweep, the remainder in a last, shallower sweep."""
    return [fuse] * (steps // fuse) + ([steps % fuse] if steps % fuse else [])


def make_kernel(stencil: Stencil, profile, fuse: int, dtype: str, weights: np.ndarray, mma: MmaShape | None = None,
                options: dict | None = None):
    """The bundled kernel of ``profile`` for this configuration (compiled); ``options`` are its tuning knobs."""
    cls = registry.kernel_class(profile.kernel)
    precision = registry.precision(profile, dtype)
    why = cls.unsupported(stencil, fuse, dtype, precision, device_info())
    if why:
        raise TcAdvisorError(why)
    try:
        return cls(stencil, fuse, dtype, precision, weights, mma=mma, **(options or {}))
    except TypeError as exc:
        raise TcAdvisorError(f"kernel option not understood by {cls.name}: {exc}") from None


def model_bound(stencil: Stencil, unit: str | None, fuse: int, dtype: str, spec: GpuSpec, alpha: Fraction | None,
                impl: str | None = None, mma: MmaShape | str | None = None) -> Option:
    """The model's option for the bundled profile on ``spec``, with the α of the kernel's operands and the
    instruction the kernel executes (``mma``; its rate if the spec lists it, else the precision's); it may be
    unavailable (``.available`` False, ``.reason`` says why), e.g. a spec without BF16 rates."""
    profile = registry.resolve(unit, impl)
    mma = MmaShape.parse(mma) if isinstance(mma, str) else mma
    choice = AlphaChoice("value", alpha, instruction=mma) if alpha is not None else AlphaChoice()
    cc = registry.bundled_profile("cuda_core")
    cc_precision, _ = cc.precision_for(dtype, spec)
    cc_peak = spec.peak("cuda_core", cc_precision) if cc_precision else None
    return evaluate_unit(profile.unit, profile, stencil, dtype, spec, [fuse], choice, cc_peak)[0]


def _poison(field: PaddedField, dtype: str) -> None:
    if dtype == "bfloat16":
        field.interior[...] = np.uint16(0x7FC0)  # a bfloat16 NaN
    else:
        field.interior[...] = np.nan


def _gpu_apply(x, w):
    return reference_steps(x, w, 1)


def allocate_fields(kernels, grid: tuple[int, ...], dtype: str):
    """Two padded fields with the ghost widths and pitch every kernel in ``kernels`` needs."""
    cp = cupy()
    shape3 = (1,) * (3 - len(grid)) + tuple(grid)
    geometry = None
    for k in kernels:
        geometry = k.geometry(shape3) if geometry is None else geometry.merge(k.geometry(shape3))
    try:
        return PaddedField(shape3, STORAGE[dtype], geometry), PaddedField(shape3, STORAGE[dtype], geometry)
    except cp.cuda.memory.OutOfMemoryError:
        raise TcAdvisorError(f"grid {'x'.join(map(str, grid))} does not fit in GPU memory with its ghost layers") from None


def initial_data(grid: tuple[int, ...], dtype: str, seed: int):
    """Uniform values in [1, 2] (see the module docstring), in the storage type of ``dtype``, on the GPU."""
    cp = cupy()
    shape3 = (1,) * (3 - len(grid)) + tuple(grid)
    return to_storage(cp.random.default_rng(seed).uniform(*DATA_RANGE, size=shape3), dtype)


def checked_sweeps(kernels: dict, plan: list[int], dtype: str, fields, x0, base_weights: np.ndarray,
                   models: dict | None = None, tamper=None, progress=None) -> tuple[CheckResult, object]:
    """Run the sweeps of ``plan`` from ``x0``, checking each against its rounding interval, then the
    result against the float64 base-stencil reference.  Returns the check and the final output.

    ``models`` (depth -> SweepModel) replaces the kernels' own descriptions and ``tamper`` (a function
    of each sweep's output values) alters what is checked: both serve the negative controls (a kernel
    with perturbed weights checked against the correct model; an output shifted by one column).
    ``progress(i, n, what, phase)`` is told of each sweep (:class:`tcadvisor.progress.Progress.update`).
    """
    cp = cupy()
    fa, fb = fields
    grid = tuple(v for v in (fa.nz, fa.ny, fa.nx))[3 - base_weights.ndim:]
    result = CheckResult()
    fa.interior[...] = x0
    a, b = fa, fb
    for i, t in enumerate(plan, 1):
        if progress is not None:
            progress(i, len(plan), f"sweep of t = {t}", "check")
        a.refresh()
        _poison(b, dtype)
        xin = from_storage(a.interior, dtype)
        kernels[t].sweep(a, b)
        out = from_storage(b.interior, dtype)
        if tamper is not None:
            out = tamper(out)
        model = (models or {}).get(t) or kernels[t].numerics()
        result.sweep.add(out, sweep_interval(model, xin, _gpu_apply))
        del xin, out
        a, b = b, a
    output = a.interior.reshape(grid).copy()
    values = from_storage(output, dtype)
    if tamper is not None:
        values = tamper(values)
    result.unwritten = int(cp.count_nonzero(cp.isnan(values)))
    x0v = from_storage(x0, dtype).reshape(grid)
    ref = reference_steps(x0v, base_weights, sum(plan))
    bound = end_to_end_bound([((models or {}).get(t) or kernels[t].numerics()) for t in plan],
                             float(cp.max(cp.abs(x0v))), base_weights, sum(plan))
    compare_end_to_end(result, values, ref, bound)
    del ref, values, x0v
    cp.get_default_memory_pool().free_all_blocks()
    return result, output


def run(stencil: Stencil, dtype: str = "double", unit: str | None = None, impl: str | None = None, fuse: int = 1,
        grid="1024x1024", steps: int | None = None, weights=None, seed: int = 0, check: bool = True,
        gpu: str | None = None, mma: str | MmaShape | None = None, repeats: int = 5, warmup: int = 1,
        kernel_options: dict | None = None, progress=None) -> RunResult:
    """Run ``steps`` time steps of ``stencil`` with a bundled kernel, ``fuse`` steps per sweep.

    ``run(..., check=False, repeats=1, warmup=0, steps=fuse)`` launches exactly
    one sweep (plus the ghost-layer refresh, a kernel of another name, which is then
    also timed alone: ``refresh_seconds``).  ``progress`` (a
    :class:`tcadvisor.progress.Progress`) is told the phases: compile, timing, check (sweep i of n).
    """
    cp = cupy()
    profile = registry.resolve(unit, impl)
    fuse = check_fuse(fuse)
    if dtype not in STORAGE:
        raise TcAdvisorError(f"dtype {dtype!r}: expected one of {', '.join(STORAGE)}")
    if repeats < 1 or warmup < 0:
        raise TcAdvisorError(f"repeats {repeats} / warmup {warmup}: expected at least 1 repeat and no negative warm-up")
    grid = parse_grid(grid, stencil.dims)
    steps = fuse if steps is None else int(steps)
    if steps < 1:
        raise TcAdvisorError(f"--steps {steps}: expected at least 1")
    shape = MmaShape.parse(mma) if isinstance(mma, str) else mma
    w = default_weights(stencil, seed) if weights is None else check_weights(stencil, weights)
    spec = resolve_gpu(gpu).spec

    plan = sweep_plan(steps, fuse)
    if progress is not None:
        progress.phase("compile")
    kernels = {t: make_kernel(stencil, profile, t, dtype, w, shape, kernel_options) for t in sorted(set(plan))}
    main = kernels[fuse] if fuse in kernels else kernels[plan[0]]
    shape3 = (1,) * (3 - stencil.dims) + grid
    fa, fb = allocate_fields(kernels.values(), grid, dtype)
    x0 = initial_data(grid, dtype, seed)

    fa.interior[...] = x0
    state = [fa, fb]

    def sweeps():
        a, b = state
        for t in plan:
            a.refresh()
            kernels[t].sweep(a, b)
            a, b = b, a
        state[:] = [a, b]

    # Timed: the sweeps alone (ghost refreshes included), the warm-up from x0 and the repeats continuing from
    # there; the GPU is held busy before each repeat so that the interval does not include host launch latency
    # (see .timing).  Timed before the check, not after: timed right after their own check, memory-bound runs
    # measured 0.86-0.96x as fast, 1.00x with two seconds idle between (validation/results/h100-sxm-2026-11-28/
    # shallow-3d/checked-timing*.csv, refresh.csv).
    if progress is not None:
        progress.phase(f"timing ({warmup} warm-up + {repeats} repeats of {len(plan)} sweeps)")
    times, _ = timed_runs(sweeps, repeats, warmup)
    seconds = statistics.median(times)
    # The refresh alone, on the same fields (each sweep above began with one): what of the time the periodic
    # boundary costs, reported beside the throughput (validation/results/h100-sxm-2026-11-28/x-images/: 39-63 us of
    # a 300-1100 us sweep of a 512^3 field).
    refresh_times, _ = timed_runs(state[0].refresh, repeats, 1)
    refresh_seconds = statistics.median(refresh_times)

    result = None
    if check:  # from x0 again: the check's sweeps are the ones the timing repeated
        try:
            result, output = checked_sweeps(kernels, plan, dtype, (fa, fb), x0, w,
                                            progress=None if progress is None else progress.update)
        except cp.cuda.memory.OutOfMemoryError:
            raise TcAdvisorError(f"checking grid {'x'.join(map(str, grid))} needs several float64 copies of it in GPU "
                                 "memory; use a smaller --grid or --no-check") from None
    else:
        output = state[0].interior.reshape(grid).copy()

    points = math.prod(grid)
    executed = sum(kernels[t].executed_flops(shape3) for t in plan)
    alpha = main.alpha
    opt = model_bound(stencil, None, fuse, dtype, spec, alpha, impl=profile.name, mma=main.mma)
    return RunResult(
        stencil=stencil, unit=profile.unit, impl=profile.name, kernel_name=main.name,
        cuda_function=main.cuda_function, dtype=dtype, precision=main.precision,
        mma=str(main.mma) if main.mma is not None else None, fuse=fuse, grid=grid, steps=steps, sweeps=plan,
        device=device_info()["name"], kernel=main.describe(), seconds=seconds, seconds_all=times,
        gstencils=points * steps / seconds / 1e9, useful_tflops=points * steps * 2 * stencil.K / seconds / 1e12,
        executed_tflops=executed / seconds / 1e12, executed_flops_per_point=executed / (points * len(plan)),
        alpha=alpha, bound_gpu=spec.name, bound_gstencils=opt.gstencils if opt.available else None,
        bound=opt.bound if opt.available else None, prediction=opt, checked=check, check=result, output=output,
        refresh_seconds=refresh_seconds,
    )
