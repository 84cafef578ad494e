"""How accurate each option is: the relative error a precision can reach over a run, from the kernels' rounding.

A unit that wins on throughput in FP16 may lose on accuracy, so the advisor can print beside each
option a line such as "FP16: at most 4.4e-03 relative error after 100 steps".  The number is not a
guess or a measurement: it is the end-to-end bound that every run of the bundled kernels is
checked against (:func:`tcadvisor.gpu.checking.end_to_end_bound`), computed from the kernel's own
rounding model (its :class:`~tcadvisor.gpu.checking.SweepModel`: weights rounded as uploaded,
operands rounded as the instruction consumes them, every rounding of the accumulation chain, the
rounding of the stored field), sweep by sweep as ``tcadvisor run`` would execute the steps
(``fuse`` steps per sweep, the remainder in a last, shallower sweep).  Each kernel class gives that
model from the configuration alone (``sweep_model``, the same function its ``numerics`` uses), so
no CuPy and no compiler are needed.

**The scenario.**  The bound is for the default run of ``tcadvisor run``
(:mod:`tcadvisor.gpu.runner`): random positive weights summing to 1 (seed 0, or ``seed``) and data
uniform in [1, 2].  The error bound is absolute, proportional to max|x₀| = 2; it is divided by 1.5,
the mean of the data, below which the largest exact value never falls (weights summing to 1 on a
periodic domain conserve the mean), so the result bounds the relative error the runner reports
(maximum error over the maximum of the reference).  Other weights, other data or a stencil that
amplifies (Σ|w| > 1) have other bounds.

**What it is not.**  A worst case: every rounding error is assumed to add up with the same sign
and to survive every later step.  Measured errors are smaller, by how much depends on the
precision: on the H100 benchmark's recorded checks (2 sweeps each) the median bound is about 4x the
measured error in FP16 and BF16, 8x in TF32, 80x in FP32 and 90x in FP64; over 100 steps of the
NumPy emulation of the rounding, 10-40x in FP16, BF16 and TF32 (tests/test_accuracy.py).  It grows
about linearly with the number of sweeps and says nothing (≥ 100 %) after about a thousand sweeps
in FP16 and TF32 and a hundred in BF16 (Box-2D1R), which the note then says.
"""
from __future__ import annotations

import numpy as np

from .errors import TcAdvisorError

#: What the bound assumes (see the module docstring).
SCENARIO = "random positive weights summing to 1 and data uniform in [1, 2]"
#: The default run's seed (tcadvisor.gpu.runner.run).
DEFAULT_SEED = 0
#: Largest initial value of the scenario's data, and their mean (the conserved lower limit of the maximum).
DATA_MAX = 2.0
DATA_MEAN = 1.5
#: The bound is evaluated sweep by sweep: this many steps at most (bounded time; far beyond any useful bound).
MAX_STEPS = 10**6
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16")


class _LocalErrors:
    """A sweep model's per-stage (growth, local error), computed once (end_to_end_bound asks per sweep)."""

    def __init__(self, model):
        self._stages = model.local_error()

    def local_error(self):
        return self._stages

    @property
    def ell(self) -> float:
        return sum(ell for _, ell in self._stages)


def _check(stencil, unit: str, dtype: str, precision: str, fuse: int, steps: int):
    """Normalised arguments and the kernel class; one-line errors naming the bad value."""
    from .dtypes import parse_dtype
    from .gpu import registry
    from .stencil import Stencil, check_fuse, parse_stencil

    stencil = stencil if isinstance(stencil, Stencil) else parse_stencil(stencil)
    dtype = parse_dtype(dtype)
    precision = str(precision).strip().lower()
    if precision not in PRECISIONS:
        raise TcAdvisorError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    fuse = check_fuse(fuse)
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 1 <= steps <= MAX_STEPS:
        raise TcAdvisorError(f"steps {steps!r} is out of range; expected an integer from 1 to {MAX_STEPS}")
    cls = registry.kernel_class(registry.bundled_profile(unit).kernel)
    why = cls.unsupported(stencil, fuse, dtype, precision)
    if why:
        raise TcAdvisorError(f"no rounding bound: {why}")
    return stencil, cls, dtype, precision, fuse, int(steps)


def _models(cls, stencil, depths, dtype: str, precision: str, weights: np.ndarray, mma) -> dict:
    """Per sweep depth, the local errors of the kernel's sweep; on Tensor Cores without ``mma``, those of
    the instruction (of the ones the kernel implements for the precision) that rounds the most, so that
    the bound holds whichever instruction the GPU runs."""
    from .gpu.tensor_cores import SHAPES, TensorCoreKernel

    out = {}
    for t in depths:
        if issubclass(cls, TensorCoreKernel) and mma is None:
            candidates = [_LocalErrors(cls.sweep_model(stencil, t, dtype, precision, weights, s))
                          for s in SHAPES[precision]]
            out[t] = max(candidates, key=lambda m: m.ell)
        else:
            out[t] = _LocalErrors(cls.sweep_model(stencil, t, dtype, precision, weights, mma))
    return out


def expected_relative_error(stencil, unit: str, dtype: str, precision: str, fuse: int, steps: int, *,
                            mma=None, seed: int = DEFAULT_SEED) -> float:
    """Bound on the relative error of ``steps`` time steps run ``fuse`` per sweep by ``unit``'s bundled kernel.

    ``stencil``: a :class:`~tcadvisor.stencil.Stencil` or a name; ``unit``: ``cuda_core``,
    ``tensor_core`` or ``sparse_tensor_core``; ``dtype`` and ``precision`` as the kernel runs them
    (``float`` is FP32 on CUDA cores, TF32 on Tensor Cores).  ``mma``: the dense Tensor Core
    instruction (default: the one of the kernel's instructions that rounds the most).  The bound is
    the checker's own, for the scenario of the module docstring (``seed`` picks the weights); a
    configuration the kernel does not run is a :class:`~tcadvisor.errors.TcAdvisorError` naming why.
    """
    from .gpu.checking import end_to_end_bound
    from .reference import random_weights

    stencil, cls, dtype, precision, fuse, steps = _check(stencil, unit, dtype, precision, fuse, steps)
    weights = random_weights(stencil.mask(), np.random.default_rng(seed))
    plan = [fuse] * (steps // fuse) + ([steps % fuse] if steps % fuse else [])
    models = _models(cls, stencil, sorted(set(plan)), dtype, precision, weights, mma)
    bound = end_to_end_bound([models[t] for t in plan], DATA_MAX, weights, steps)
    return bound / DATA_MEAN


def expected_error_note(stencil, unit: str, dtype: str, precision: str, fuse: int, steps: int, *,
                        mma=None, seed: int = DEFAULT_SEED) -> str:
    """One short line for the advisor: ``"FP16: at most 4.4e-03 relative error after 100 steps"``, or that
    the bound says nothing (≥ 100 %) after that many steps."""
    value = expected_relative_error(stencil, unit, dtype, precision, fuse, steps, mma=mma, seed=seed)
    label, plural = str(precision).strip().upper(), "s" if steps != 1 else ""
    if not value < 1:
        return f"{label}: no error bound after {steps} step{plural} (the rounding bound exceeds 100 %)"
    return f"{label}: at most {value:.1e} relative error after {steps} step{plural}"
