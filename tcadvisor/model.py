"""The roofline model with the sparsity factor α and the fusion redundancy β, in SymPy.

This module is the single source of truth for every equation of the model
(numbered as in "Do We Need Tensor Cores for Stencil Computations?").
Everything numeric in tcadvisor (the advisor, sweet-spot maps, the paper's
tables) calls functions *lambdified from these expressions*; nothing re-types
them.  Units are SI throughout: bytes, FLOPs, bytes/s, FLOP/s.

Why the model looks the way it does:

* CUDA cores with temporal fusion keep the intermediate time steps on chip, so
  fusing t steps multiplies the FLOPs by t but leaves the DRAM traffic at one
  read and one write per point: I_CC = K·t/S.
* Tensor Cores with kernel fusion compute the t-step stencil as one monolithic
  stencil of K_t points (no reuse of intermediates) and execute zeros of the
  padded operands too: C_TC = 2·K·t·β/α with β = K_t/(t·K).  Only the fraction
  α/β of what they execute is useful work.
* The comparison of the two units falls into four scenarios depending on which
  side of its ridge point each unit's intensity lies (the paper's eqs. 14–19).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Callable

import sympy as sp

# --------------------------------------------------------------------------- symbols

d, r, t = sp.symbols("d r t", positive=True, integer=True)
j = sp.Symbol("j", integer=True, nonnegative=True)
K, K_t = sp.symbols("K K_t", positive=True)
alpha, beta = sp.symbols("alpha beta", positive=True)
S, B = sp.symbols("S B", positive=True)
P_cc, P_tc, P_sptc, P_peak = sp.symbols("P_cc P_tc P_sptc P_peak", positive=True)
C, M, I = sp.symbols("C M I", positive=True)

#: What each symbol means, for ``explain`` and the docs.
SYMBOLS = {
    d: "dimensionality",
    r: "stencil radius",
    t: "fusion depth (time steps per sweep)",
    K: "points of the stencil",
    K_t: "points of the t-step fused stencil",
    alpha: "sparsity factor: useful fraction of the MACs the Tensor Cores execute",
    beta: "fusion redundancy K_t/(t·K)",
    S: "bytes per element",
    B: "DRAM bandwidth [byte/s]",
    P_cc: "peak FLOP/s of the CUDA cores at this precision",
    P_tc: "peak FLOP/s of the (dense or sparse) Tensor Cores at this precision",
}

# --------------------------------------------------------------------------- closed forms


def K_closed(shape: str) -> sp.Expr:
    """Points of a box or star stencil of radius r in d dimensions."""
    if shape == "box":
        return (2 * r + 1) ** d
    if shape == "star":
        return 2 * d * r + 1
    raise ValueError(f"no closed form for shape {shape!r}")


def K_t_closed(shape: str) -> sp.Expr:
    """Points of the t-fold Minkowski sum (the t-step fused stencil).

    A fused box is a box of radius r·t.  A fused star is *not* a star: it is the
    set of offsets x with Σ_i ⌈|x_i|/r⌉ ≤ t, whose size counts the ways to choose
    j non-zero axes (C(d, j)), a "number of steps" pattern over them (C(t, j))
    and a value within each step (2r choices with sign).
    """
    if shape == "box":
        return (2 * r * t + 1) ** d
    if shape == "star":
        return sp.Sum(sp.binomial(d, j) * sp.binomial(t, j) * (2 * r) ** j, (j, 0, d))
    raise ValueError(f"no closed form for shape {shape!r}")


@lru_cache(maxsize=None)
def _closed_form_fn(shape: str, which: str) -> Callable[[int, int, int], int]:
    expr = K_closed(shape) if which == "K" else K_t_closed(shape)
    # ``math`` keeps integer arithmetic exact; binomial maps to math.comb.
    return sp.lambdify((d, r, t), expr, modules=[{"binomial": comb}, "math"])


def points(shape: str, dims: int, radius: int) -> int:
    """K for a box or star stencil, evaluated from :func:`K_closed`."""
    return int(_closed_form_fn(shape, "K")(dims, radius, 1))


def fused_points(shape: str, dims: int, radius: int, fuse: int) -> int:
    """K_t for a box or star stencil, evaluated from :func:`K_t_closed`."""
    return int(_closed_form_fn(shape, "K_t")(dims, radius, fuse))


# --------------------------------------------------------------------------- equations


@dataclass(frozen=True)
class Equation:
    number: str
    lhs: sp.Expr
    rhs: sp.Expr
    meaning: str


def _roof(peak: sp.Expr, intensity: sp.Expr) -> sp.Expr:
    return sp.Min(peak, B * intensity)


# (6) one step of the original problem
C_step = 2 * K
M_step = 2 * S
I_step = C_step / M_step
# (8) CUDA cores, temporal fusion depth t
C_CC = 2 * K * t
M_CC = 2 * S
I_CC = C_CC / M_CC
P_CC = _roof(P_cc, I_CC)
# (9) fusion redundancy
beta_def = K_t / (t * K)
# (11) Tensor Cores, kernel fusion depth t
C_TC = 2 * K * t * beta / alpha
M_TC = 2 * S
I_TC = C_TC / M_TC
P_TC_raw = _roof(P_tc, I_TC)
# (12) useful throughput
P_TC = alpha / beta * P_TC_raw
# (13) speedup
R = P_TC / P_CC
# ridge points
rho_cc = P_cc / B
rho_tc = P_tc / B

#: Speedup in each scenario (eqs. 14, 15, 17, 18) and the condition that defines it.
SCENARIOS = {
    1: (sp.And(I_CC < rho_cc, I_TC < rho_tc), sp.Integer(1), "memory-bound on both units"),
    2: (sp.And(I_CC < rho_cc, I_TC >= rho_tc), alpha / beta * P_tc / (B * I_CC),
        "memory-bound on CUDA cores, compute-bound on Tensor Cores"),
    3: (sp.And(I_CC >= rho_cc, I_TC < rho_tc), B * I_CC / P_cc,
        "compute-bound on CUDA cores, memory-bound on Tensor Cores"),
    4: (sp.And(I_CC >= rho_cc, I_TC >= rho_tc), alpha * P_tc / (beta * P_cc),
        "compute-bound on both units"),
}
#: (19) in scenario 4 Tensor Cores win iff β < α·P_tc/P_cc.
BETA_THRESHOLD = alpha * P_tc / P_cc
scenario_expr = sp.Piecewise(*[(n, cond) for n, (cond, _, _) in SCENARIOS.items()])
#: The speedup as the paper linearises it: eq. 13 evaluated through the scenario's
#: own form (14, 15, 17, 18).  Equal to R = P_TC/P_CC everywhere, and exactly 1 in
#: scenario 1, which floating-point division of two equal roofs would not promise.
R_by_scenario = sp.Piecewise(*[(formula, cond) for cond, formula, _ in SCENARIOS.values()])

EQUATIONS: tuple[Equation, ...] = (
    Equation("2", sp.Symbol("C_TC"), C / alpha, "work executed on Tensor Cores"),
    Equation("3", sp.Symbol("C_TC"), t * beta * C / alpha, "... with kernel fusion of depth t"),
    Equation("4", I, C / M, "arithmetic intensity"),
    Equation("5", sp.Symbol("P"), sp.Min(P_peak, B * I), "roofline"),
    Equation("6", I, I_step, "one step: C = 2K, M = 2S"),
    Equation("7", sp.Symbol("P"), sp.Min(P_peak, B * I_step), "roofline of one step"),
    Equation("8", sp.Symbol("P_CC"), P_CC, "CUDA cores, temporal fusion: C = 2Kt, M = 2S"),
    Equation("9", beta, beta_def, "fusion redundancy"),
    Equation("10", sp.Symbol("beta_box"), K_t_closed("box") / (t * K_closed("box")), "box stencils"),
    Equation("11", sp.Symbol("P_TC_raw"), P_TC_raw, "Tensor Cores, kernel fusion: C = 2Ktβ/α, M = 2S"),
    Equation("12", sp.Symbol("P_TC"), P_TC, "useful Tensor Core throughput"),
    Equation("13", sp.Symbol("R"), R, "speedup of Tensor Cores over CUDA cores"),
    Equation("14", sp.Symbol("R_1"), SCENARIOS[1][1], SCENARIOS[1][2]),
    Equation("15", sp.Symbol("R_2"), SCENARIOS[2][1], SCENARIOS[2][2] + " (≤ 1, eq. 16)"),
    Equation("17", sp.Symbol("R_3"), SCENARIOS[3][1], SCENARIOS[3][2] + " (≥ 1)"),
    Equation("18", sp.Symbol("R_4"), SCENARIOS[4][1], SCENARIOS[4][2]),
    Equation("19", beta, BETA_THRESHOLD, "scenario 4: Tensor Cores win iff β is below this"),
    Equation("20", sp.Symbol("P_SpTC"), (alpha / beta * _roof(P_tc, I_TC)).subs(P_tc, P_sptc),
             "Sparse Tensor Cores: same α and I, P_sptc in place of P_tc"),
)

# --------------------------------------------------------------------------- numeric

#: Inputs of :func:`evaluate`, in order.
INPUTS = (K, t, beta, alpha, S, B, P_cc, P_tc)
#: Outputs of :func:`evaluate`, by name.
OUTPUTS = {
    "C_cc": C_CC,
    "M": M_CC,
    "I_cc": I_CC,
    "rho_cc": rho_cc,
    "P_cc": P_CC,
    "C_tc": C_TC,
    "I_tc": I_TC,
    "rho_tc": rho_tc,
    "P_tc_raw": P_TC_raw,
    "P_tc": P_TC,
    "R": R_by_scenario,
    "R_ratio": R,
    "scenario": scenario_expr,
    "beta_threshold": BETA_THRESHOLD,
    "gstencils_cc": P_CC / (2 * K) / 10**9,
    "gstencils_tc": P_TC / (2 * K) / 10**9,
}


@lru_cache(maxsize=1)
def _evaluator() -> Callable:
    return sp.lambdify(INPUTS, list(OUTPUTS.values()), modules="numpy", cse=True)


def evaluate(K, t, beta, alpha, S, B, P_cc, P_tc) -> dict:
    """Evaluate the whole model, vectorised: any argument may be a NumPy array.

    Returns a dict with the keys of :data:`OUTPUTS` (scenario as a number 1–4).
    ``P_tc`` is the peak of whichever Tensor Core flavour is compared (dense, or
    sparse per eq. 20).  For a CUDA-core-only evaluation pass ``alpha=beta=1``
    and any ``P_tc``; the ``*_cc`` outputs do not depend on them.
    """
    values = _evaluator()(K, t, beta, alpha, S, B, P_cc, P_tc)
    return dict(zip(OUTPUTS, values))


def substituted(expr: sp.Expr, values: dict) -> sp.Expr:
    """``expr`` with numbers substituted (for ``explain``)."""
    return expr.subs(values)
