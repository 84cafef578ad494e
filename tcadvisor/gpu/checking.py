"""Correctness checks of the bundled kernels whose tolerances hold for any run length.

A check that compares the output of S sweeps with an exact reference needs a
tolerance that grows with S, and a worst-case bound that grows with S is so
loose for FP16/TF32 that it no longer sees a wrong weight.  So the runner checks
every sweep on its own, against a reference computed from the *same* input:

**Per sweep (tight, rigorous).**  A kernel's sweep is described by
:class:`SweepModel`: one or more stages, each multiplying the input (rounded
to the operand precision, e.g. TF32 with ``cvt.rna``) by the weights *exactly
as uploaded* (e.g. the fused weights rounded to FP16), accumulating, and
possibly rounding the result to the storage type.  With the kernel's input
``x`` of this sweep, the reference computes every stage in float64 from the
identically rounded operands: ``z = Σ ŵ_i x̂_i``.  The kernel's accumulator
differs from ``z`` only by its own rounding errors; with ``n`` roundings along
an output's accumulation chain, each at most ``u_acc`` relative to the partial
sum (the standard bound for recursive summation, Higham, *Accuracy and
Stability of Numerical Algorithms*, §4.2)::

    |y_kernel − z| ≤ E = γ_n · Σ |ŵ_i| |x̂_i|,   γ_n = n·u_acc / (1 − n·u_acc)

plus the float64 reference's own error (γ_P with u = 2^-53, P terms) and the
spacing of float64 at |z|.  If the result is rounded to the storage type
afterwards (FP16/BF16 fields), rounding is monotone, so the stored value must
lie in ``[round(z − E), round(z + E)]``; otherwise in ``[z − E, z + E]``.  For
kernels computing several steps per sweep with intermediate values (CUDA
cores), the bound is carried through the stages pointwise:
``D_j = Σ|ŵ|·D_{j−1} + γ_n (A_j + Σ|ŵ|·D_{j−1})`` with ``A_j = Σ|ŵ||r_{j−1}|``.

The bound does not depend on how many sweeps ran before, so a correct kernel
passes at any length.  Tensor Core accumulators are not IEEE round-to-nearest
(they truncate, and align addends with few guard bits), so ``u_acc`` is one
ulp of FP32 (2^-23), not half, and ``n`` counts every product and every MMA
of the chain; CUDA-core FMAs round to nearest (u = 2^-24 or 2^-53).  A
weight perturbed by a few ulps of FP16/BF16/TF32 (or by 1e-9 in FP64) changes
``z`` by far more than ``E`` (which is ~P·2^-23 relative) and is caught by
the points whose exact value lies near a rounding boundary; an output shifted
by one column is caught everywhere.

**End to end (looser, rigorous).**  Against the true float64 base-stencil
reference after all steps.  Per stage the local error relative to max|input|
is at most ``ℓ = Σ|w − ŵ| + Σ|ŵ|·u_op + γ_n Σ|ŵ|(1+u_op) + u_out (1+γ_n) Σ|ŵ|(1+u_op)``
(weights as uploaded vs exact, operand rounding, accumulation, storage
rounding), and errors propagate through the exact map with growth ``G = Σ|w|``:
``e_{k+1} = G·e_k + ℓ·(M_k + e_k)``, ``M_{k+1} = G·M_k``, which for constant G
and ℓ is ``e_S = ((G + ℓ)^S − G^S)·M_0``.  It grows with the number of stages
(for FP16 it is meaningless after ~1/ℓ ≈ 1000 sweeps) but is never violated
by a correct kernel.

**Data that neither overflows nor underflows.**  The runner's default weights
are positive and sum to 1 (a convex combination) and its initial data are
uniform in [1, 2], so every exact step stays in [1, 2]; FP16/BF16 rounding of
the weights changes their sum by at most P·u, so values drift at most by
(1 + P·u)^S — far from FP16's 65504 and from its subnormals for any
practical run.  The checks also report points that became non-finite.

Every function takes NumPy or CuPy arrays; ``apply(x, w)`` is one periodic
float64 application of the weight cube ``w`` (NumPy:
:func:`tcadvisor.reference.apply_periodic`; GPU: the naive reference kernel).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..reference import apply_periodic
from .numerics import UNIT_ROUNDOFF, array_module, round_operand, round_storage

U64 = 2.0**-53
#: One ulp of FP32 at 1: the per-rounding error bound used for Tensor Core accumulators (truncating).
TC_ACCUMULATE = 2.0**-23


def gamma(n: int, u: float) -> float:
    """γ_n = n·u / (1 − n·u): bound on the relative error of n successive roundings."""
    if n * u >= 1:
        return math.inf
    return n * u / (1 - n * u)


@dataclass(frozen=True)
class Stage:
    """One accumulation a kernel performs for every output point within a sweep."""

    weights: np.ndarray  # float64 values the kernel multiplies by (rounded exactly as uploaded)
    exact: np.ndarray  # the weights this stage stands for in exact arithmetic (base or fused stencil)
    operand: str | None  # precision the input is rounded to before multiplying (None: used as it is)
    u_acc: float  # error bound of one accumulation rounding, relative to the partial sum
    terms: int  # roundings along one output's accumulation chain
    output: str | None = None  # storage dtype the accumulator is rounded to afterwards (None: stored as is)

    @property
    def gamma(self) -> float:
        return gamma(self.terms, self.u_acc)


@dataclass(frozen=True)
class SweepModel:
    """How one sweep of a kernel computes and rounds: its stages in order."""

    stages: tuple[Stage, ...]

    def local_error(self) -> list[tuple[float, float]]:
        """Per stage ``(G, ℓ)``: growth Σ|w| of the exact map and local error relative to max|input|."""
        out = []
        for st in self.stages:
            absw = float(np.abs(st.weights).sum())
            u_op = UNIT_ROUNDOFF[st.operand] if st.operand else 0.0
            u_out = UNIT_ROUNDOFF[_precision_of(st.output)] if st.output else 0.0
            g = st.gamma
            weight_err = float(np.abs(st.exact - st.weights).sum())
            # the exact weights themselves are float64 (a fused stencil sums up to P products)
            weight_err += gamma(int(np.count_nonzero(st.exact)) + 1, U64) * float(np.abs(st.exact).sum())
            ell = weight_err + absw * u_op + g * absw * (1 + u_op) + u_out * (1 + g) * absw * (1 + u_op)
            out.append((float(np.abs(st.exact).sum()), ell))
        return out


def _precision_of(dtype: str) -> str:
    return {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}[dtype]


def numpy_apply(x, w):
    return apply_periodic(x, w)


@dataclass
class SweepInterval:
    lo: object  # arrays (xp) of the smallest and largest value a correct kernel may store
    hi: object
    reference: object  # float64 reference value before any final rounding


def sweep_interval(model: SweepModel, x, apply: Callable = numpy_apply,
                   outside: float | None = None) -> SweepInterval:
    """The interval every output of one correct sweep from input ``x`` (float64 values) must lie in.

    ``outside`` None: ``apply(v, w)`` is periodic.  A number: every stage reads that value outside the domain
    (a fixed-value boundary, exact at every stage, so carrying no error), and ``apply(v, w, pad)`` applies ``w``
    to ``v`` with ``pad`` outside (the value itself, its magnitude, or 0 for the carried error bound).
    """
    xp = array_module(x)
    r = xp.asarray(x, dtype=xp.float64)
    D = None  # pointwise bound on |kernel value − r| at the stage input (None: identical)
    lo = hi = z = None

    def applied(v, w, pad):
        return apply(v, w) if outside is None else apply(v, w, pad)

    for st in model.stages:
        if st.operand and D is not None:
            raise ValueError("operand rounding after a stage with carried error is not modelled")
        xin = round_operand(r, st.operand) if st.operand else r
        c = None  # the value read outside the domain, rounded as the operands are
        if outside is not None:
            c = float(round_operand(np.float64(outside), st.operand)) if st.operand else float(outside)
        absw = np.abs(st.weights)
        z = applied(xin, st.weights, c)
        A = applied(xp.abs(xin), absw, None if c is None else abs(c))
        prop = applied(D, absw, 0.0) if D is not None else 0.0
        nz = int(np.count_nonzero(st.weights))
        E = prop + st.gamma * (A + prop) + gamma(nz + 1, U64) * A + 4 * U64 * (xp.abs(z) + A)
        if st.output:
            lo = round_storage(z - E, st.output)
            hi = round_storage(z + E, st.output)
            r = round_storage(z, st.output)
            D = xp.maximum(hi - r, r - lo)
        else:
            lo, hi, r, D = z - E, z + E, z, E
    return SweepInterval(lo, hi, z)


@dataclass
class SweepCheck:
    """Outcome of the per-sweep checks of a run."""

    sweeps: int = 0
    points: int = 0
    violations: int = 0  # outputs outside the interval (non-finite ones included)
    worst: float = 0.0  # largest distance outside the interval, relative to max |reference|

    @property
    def passed(self) -> bool:
        return self.violations == 0

    def add(self, out, interval: SweepInterval) -> None:
        xp = array_module(out)
        v = xp.asarray(out, dtype=xp.float64)
        below = interval.lo - v
        above = v - interval.hi
        bad = ~((v >= interval.lo) & (v <= interval.hi))  # NaN compares False: counted as bad
        self.sweeps += 1
        self.points += int(v.size)
        n = int(xp.count_nonzero(bad))
        self.violations += n
        if n:
            scale = float(xp.max(xp.abs(interval.reference))) or 1.0
            excess = xp.where(xp.isfinite(v), xp.maximum(below, above), xp.inf)
            self.worst = max(self.worst, float(xp.max(xp.where(bad, excess, 0.0))) / scale)


def end_to_end_bound(models: list[SweepModel], m0: float, base_weights: np.ndarray, steps: int) -> float:
    """Absolute bound on |kernel − exact float64 base-stencil reference| after running ``models`` in turn.

    Includes the float64 reference's own error after ``steps`` base steps.
    """
    e, m = 0.0, m0
    for model in models:
        for g, ell in model.local_error():
            e = g * e + ell * (m + e)
            m = g * m
    gb = float(np.abs(base_weights).sum())
    lref = gamma(int(np.count_nonzero(base_weights)), U64) * gb
    e_ref = ((gb + lref) ** steps - gb**steps) * m0
    return e + e_ref


@dataclass
class CheckResult:
    """Everything the runner reports about correctness."""

    sweep: SweepCheck = field(default_factory=SweepCheck)
    max_abs_error: float | None = None  # against the float64 base-stencil reference
    max_rel_error: float | None = None  # the same, relative to max |reference|
    bound: float | None = None  # end-to-end absolute bound
    tolerance: float | None = None  # the same, relative to max |reference|
    unwritten: int = 0

    @property
    def passed(self) -> bool:
        return (self.unwritten == 0 and self.sweep.passed and self.max_abs_error is not None
                and math.isfinite(self.max_abs_error) and self.max_abs_error <= self.bound)


def compare_end_to_end(result: CheckResult, out, ref, bound: float) -> None:
    """Fill the end-to-end fields of ``result`` from the final output and the base reference."""
    xp = array_module(out)
    v = xp.asarray(out, dtype=xp.float64)
    diff = xp.abs(v - ref)
    err = float(xp.max(xp.where(xp.isnan(diff), xp.inf, diff))) if v.size else 0.0
    scale = float(xp.max(xp.abs(ref))) or 1.0
    result.max_abs_error = err
    result.max_rel_error = err / scale
    result.bound = bound
    result.tolerance = bound / scale


def emulate_sweep(model: SweepModel, x: np.ndarray, perturb: Callable | None = None) -> np.ndarray:
    """What a kernel with these numerics stores after one sweep from ``x`` (NumPy, float64 values).

    Each stage rounds the input to its operand precision, accumulates the
    products term by term in the accumulator's format (FP32 when ``u_acc`` is
    an FP32 bound, else float64), and rounds to the storage type if the stage
    says so.  Used by the CPU tests to make synthetic "kernel outputs" the
    checker must accept, and (with wrong weights or a shifted output) reject.
    """
    v = np.asarray(x, dtype=np.float64)
    for st in model.stages:
        xin = round_operand(v, st.operand) if st.operand else v
        acc_type = np.float32 if st.u_acc >= 2.0**-24 else np.float64
        w = np.asarray(st.weights, dtype=np.float64)
        R = (w.shape[0] - 1) // 2
        acc = np.zeros(v.shape, dtype=acc_type)
        for idx in zip(*np.nonzero(w)):
            shift = tuple(R - b for b in idx)
            term = w[idx] * np.roll(xin, shift, axis=tuple(range(v.ndim)))
            acc = (acc.astype(np.float64) + term).astype(acc_type)
        v = acc.astype(np.float64)
        if st.output:
            v = round_storage(v, st.output)
    return v


#: Relative perturbation of one weight that the checks must detect (negative controls): 1e-9 in FP64;
#: two ulps of the operand precision for TF32, FP16 and BF16.  FP32 on CUDA cores accumulates in FP32
#: itself, so a few of its ulps on one weight stay inside the K-term accumulation bound (no sound
#: tolerance can see them in one sweep); its control uses 2^-13.
NEGATIVE_CONTROL = {"fp64": 1e-9, "tf32": 2 * 2.0**-10, "fp16": 2 * 2.0**-10, "bf16": 2 * 2.0**-7, "fp32": 2.0**-13}


def perturb_largest_weight(weights: np.ndarray, precision: str, model: SweepModel | None = None) -> np.ndarray:
    """A copy of ``weights`` with the largest one scaled by 1 + NEGATIVE_CONTROL[precision].

    ``model``: the checked kernel's :class:`SweepModel`.  Where its rounding bound for one sweep (data of
    magnitude 1) is more than a quarter of what that perturbation moves an output by, the weight moves by four
    times the bound instead: CUDA cores in FP16/BF16 round every one of a stage's 2K multiply-adds to the
    16-bit format, so their sound interval is about 2K·t ulps wide and a perturbation of two ulps hides in
    it.  A control the check cannot see proves nothing; a larger one still shows that the check is not vacuous.
    """
    w = np.array(weights, dtype=np.float64)
    i = np.unravel_index(np.argmax(np.abs(w)), w.shape)
    scale = NEGATIVE_CONTROL[precision]
    if model is not None:
        scale = max(scale, 4 * end_to_end_bound([model], 1.0, w, 0) / abs(float(w[i])))
    w[i] *= 1 + scale
    return w
