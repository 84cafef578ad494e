"""Run a bundled kernel on the GPU: check it against a float64 reference, time it, set it against the model.

``run`` is the Python face of ``tcadvisor run``: it returns the output array and
the measurements (GStencils/s, useful and executed TFLOP/s, the model's bound
for this GPU and the fraction of it achieved, the error against a float64
reference).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..advisor import AlphaChoice, evaluate_unit
from ..errors import TcAdvisorError
from ..hardware import GpuSpec, resolve_gpu
from ..impls import find_impl
from ..mma import MmaShape
from ..reference import random_weights
from ..stencil import Stencil, check_fuse
from .backend import cupy, device_info
from .fields import PaddedField
from .reference import reference_steps
from .timing import time_gpu

#: Relative error (max |out − ref| / max |ref|) allowed per sweep, by unit precision; the
#: tolerance of a run grows with the square root of the number of sweeps.
BASE_TOLERANCE = {"fp64": 1e-12, "fp32": 1e-5, "tf32": 1e-3}
UNITS = ("cuda_core", "tensor_core")
BUNDLED = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc"}
MAX_POINTS = 2**31 - 1


@dataclass
class RunResult:
    stencil: Stencil
    unit: str
    impl: str
    dtype: str
    precision: str
    fuse: int
    grid: tuple[int, ...]
    steps: int
    sweeps: list[int]
    device: str
    kernel: str
    seconds: float
    gstencils: float
    useful_tflops: float
    executed_tflops: float
    alpha: Fraction | None
    bound_gpu: str
    bound_gstencils: float
    bound: str
    checked: bool
    max_rel_error: float | None = None
    tolerance: float | None = None
    unwritten: int | None = None
    output: object = field(default=None, repr=False)

    @property
    def fraction_of_bound(self) -> float:
        return self.gstencils / self.bound_gstencils

    @property
    def passed(self) -> bool | None:
        if not self.checked:
            return None
        return (self.unwritten == 0 and self.max_rel_error is not None and math.isfinite(self.max_rel_error)
                and self.max_rel_error <= self.tolerance)


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


def make_kernel(stencil: Stencil, unit: str, fuse: int, dtype: str, weights: np.ndarray, mma: MmaShape | None,
                options: dict | None = None):
    """The bundled kernel of ``unit``; ``options`` are its tuning knobs (see each kernel class)."""
    options = options or {}
    if unit == "cuda_core":
        from .cuda_cores import CudaCoreKernel

        if mma is not None:
            raise TcAdvisorError("--mma applies to the Tensor Core kernel only")
        return CudaCoreKernel(stencil, fuse, dtype, weights, **options)
    if unit == "tensor_core":
        from .tensor_cores import TensorCoreKernel

        return TensorCoreKernel(stencil, fuse, dtype, weights, mma, **options)
    raise TcAdvisorError(f"unit {unit!r} has no bundled kernel yet; expected one of {', '.join(UNITS)}")


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


def model_bound(stencil: Stencil, unit: str, fuse: int, dtype: str, spec: GpuSpec, alpha: Fraction | None):
    impl = find_impl(BUNDLED[unit])
    choice = AlphaChoice("value", alpha) if alpha is not None else AlphaChoice()
    cc_precision = "fp64" if dtype == "double" else "fp32"
    opt = evaluate_unit(unit, impl, stencil, dtype, spec, [fuse], choice, spec.peak("cuda_core", cc_precision))[0]
    if not opt.available:
        raise TcAdvisorError(f"the model has no {unit} option for {dtype} on {spec.name}: {opt.reason}")
    return opt


def run(stencil: Stencil, dtype: str = "double", unit: str = "cuda_core", fuse: int = 1, grid="1024x1024",
        steps: int | None = None, weights=None, seed: int = 0, check: bool = True, gpu: str | None = None,
        mma: str | MmaShape | None = None, repeats: int = 1, kernel_options: dict | None = None) -> RunResult:
    """Run ``steps`` time steps of ``stencil`` with the bundled kernel of ``unit``, ``fuse`` steps per sweep."""
    cp = cupy()
    fuse = check_fuse(fuse)
    if dtype not in ("double", "float"):
        raise TcAdvisorError(f"the bundled kernels run double or float, not {dtype}")
    grid = parse_grid(grid, stencil.dims)
    steps = fuse if steps is None else int(steps)
    if steps < 1:
        raise TcAdvisorError(f"--steps {steps}: expected at least 1")
    shape = MmaShape.parse(mma) if isinstance(mma, str) else mma
    w = default_weights(stencil, seed) if weights is None else check_weights(stencil, weights)
    spec = resolve_gpu(gpu).spec

    sweeps_plan = [fuse] * (steps // fuse) + ([steps % fuse] if steps % fuse else [])
    kernels = {t: make_kernel(stencil, unit, t, dtype, w, shape, kernel_options) for t in sorted(set(sweeps_plan))}
    shape3 = (1,) * (3 - stencil.dims) + grid
    geometry = None
    for k in kernels.values():
        geometry = k.geometry(shape3) if geometry is None else geometry.merge(k.geometry(shape3))
    np_dtype = np.float64 if dtype == "double" else np.float32
    try:
        fa, fb = PaddedField(shape3, np_dtype, geometry), PaddedField(shape3, np_dtype, geometry)
        x0 = cp.random.default_rng(seed).uniform(-1.0, 1.0, size=shape3).astype(np_dtype)
    except cp.cuda.memory.OutOfMemoryError:
        raise TcAdvisorError(f"grid {'x'.join(map(str, grid))} does not fit in GPU memory with its ghost layers") from None

    state = [fa, fb]

    def reset():
        state[:] = [fa, fb]
        fa.interior[...] = x0

    def sweeps(poison: bool):
        a, b = state
        for t in sweeps_plan:
            a.refresh()
            if poison:
                b.interior[...] = np.nan
            kernels[t].sweep(a, b)
            a, b = b, a
        state[:] = [a, b]
        return a

    max_err = tol = unwritten = None
    reset()
    result = sweeps(poison=check)  # every sweep's output is poisoned first when checking
    output = result.interior.reshape(grid).copy()
    if check:
        unwritten = int(cp.count_nonzero(cp.isnan(output)))
        ref = reference_steps(x0.reshape(grid), w, steps)
        scale = float(cp.max(cp.abs(ref)))
        diff = cp.abs(output.astype(cp.float64) - ref)
        max_err = float(cp.max(cp.where(cp.isnan(diff), cp.inf, diff))) / (scale if scale else 1.0)
        precision = "fp64" if dtype == "double" else ("fp32" if unit == "cuda_core" else "tf32")
        tol = BASE_TOLERANCE[precision] * math.sqrt(len(sweeps_plan))
        del ref, diff
    # Timed: the sweeps alone (ghost refreshes included), continuing from the current state.
    seconds, _ = time_gpu(lambda: sweeps(poison=False), repeats=repeats)

    points = math.prod(grid)
    executed = sum(kernels[t].executed_flops(shape3) for t in sweeps_plan)
    alpha = getattr(kernels[fuse], "alpha", None)
    bound = model_bound(stencil, unit, fuse, dtype, spec, alpha)
    precision = "fp64" if dtype == "double" else ("fp32" if unit == "cuda_core" else "tf32")
    return RunResult(
        stencil=stencil, unit=unit, impl=BUNDLED[unit], dtype=dtype, precision=precision, fuse=fuse, grid=grid,
        steps=steps, sweeps=sweeps_plan, device=device_info()["name"], kernel=kernels[fuse].describe(),
        seconds=seconds, gstencils=points * steps / seconds / 1e9,
        useful_tflops=points * steps * 2 * stencil.K / seconds / 1e12,
        executed_tflops=executed / seconds / 1e12, alpha=alpha,
        bound_gpu=spec.name, bound_gstencils=bound.gstencils, bound=bound.bound,
        checked=check, max_rel_error=max_err, tolerance=tol, unwritten=unwritten, output=output,
    )
