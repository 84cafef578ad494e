"""The roofline model with the sparsity factor α and the fusion redundancy β, in SymPy.

This module is the single source of truth for every equation of tcadvisor's
models.  Equations are numbered as in "Do We Need Tensor Cores for Stencil
Computations?"; ``docs/model.md`` writes them out with their derivations.
Everything numeric in tcadvisor (the advisor, sweet-spot maps, rooflines, the
paper's tables, ``explain``) evaluates expressions *lambdified from* or
*substituted into* these; nothing re-types them.  Units are SI throughout:
bytes, FLOPs, bytes/s, FLOP/s.

Why the model looks the way it does:

* CUDA cores with temporal fusion keep the intermediate time steps on chip, so
  fusing t steps multiplies the FLOPs by t but leaves the DRAM traffic at one
  read and one write per point: I_CC = K·t/S.
* Tensor Cores with kernel fusion compute the t-step stencil as one monolithic
  stencil of K_t points (no reuse of intermediates) and execute zeros of the
  padded operands too: C_TC = 2·K·t·β/α with β = K_t/(t·K).  Only the fraction
  α/β of what they execute is useful work.
* The comparison of the two units falls into four scenarios depending on which
  side of its ridge point each unit's intensity lies (eqs. 14–19).

Two *variants* of the model share one chain of equations (:class:`Variant`):

* ``base``: the paper's model, exactly (``reproduce-paper`` uses it).
* ``refined``: the same chain with the terms of :data:`TERMS` left free — the
  redundant work and extra loads of tile halos, Tensor Core tile padding beyond
  α, achievable fractions of the ceilings, the overlap of memory and compute
  phases, and the on-chip capacity that limits the depth.  ``base`` is
  ``refined`` with every term at its default (:attr:`Term.default`), substituted
  symbolically, so the two cannot drift apart; with default terms ``refined``
  gives the base numbers.  :mod:`tcadvisor.refinement` computes the terms'
  values from what is known about an implementation's tiling.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import comb
from typing import Callable, Mapping

import numpy as np
import sympy as sp

from .errors import TcAdvisorError

# --------------------------------------------------------------------------- inputs

d, r, t = sp.symbols("d r t", positive=True, integer=True)
j = sp.Symbol("j", integer=True, nonnegative=True)
K, K_t = sp.symbols("K K_t", positive=True)
alpha, beta = sp.symbols("alpha beta", positive=True)
S, B = sp.symbols("S B", positive=True)
P_cc, P_tc, P_sptc, P_peak = sp.symbols("P_cc P_tc P_sptc P_peak", positive=True)
C, M, I = sp.symbols("C M I", positive=True)

#: Inputs every variant takes, by name (:func:`evaluate`'s keyword arguments).
INPUTS = (K, t, beta, alpha, S, B, P_cc, P_tc)

# --------------------------------------------------------------------------- refined terms


@dataclass(frozen=True)
class Term:
    """One term of the refined variant: a symbol whose default gives the paper's model back."""

    symbol: sp.Symbol
    unit: str  # the execution unit it belongs to: cuda_core or tensor_core (dense and sparse)
    hook: str  # the function of tcadvisor.refinement that computes it
    default: sp.Expr
    meaning: str
    quantity: str = ""  # its unit of measure ("" for a pure number)

    @property
    def name(self) -> str:
        return self.symbol.name


h_cc, m_cc, eta_cc, eta_B_cc, omega_cc, tmax_cc = sp.symbols(
    "h_cc m_cc eta_cc eta_B_cc omega_cc tmax_cc", positive=True)
k_tc, m_tc, eta_tc, eta_B_tc, omega_tc, tmax_tc = sp.symbols(
    "k_tc m_tc eta_tc eta_B_tc omega_tc tmax_tc", positive=True)

#: The refined variant's terms.  Defaults: the paper's model (no halo, no extra loads, the
#: spec's ceilings, perfect overlap of memory and compute, no limit on the depth).
TERMS: tuple[Term, ...] = (
    Term(h_cc, "cuda_core", "halo_redundancy", sp.Integer(1),
         "CUDA-core tile-halo redundancy: FLOPs executed per useful FLOP (≥ 1)"),
    Term(m_cc, "cuda_core", "halo_bytes", sp.Integer(0),
         "extra DRAM bytes per output point and sweep the CUDA-core tiles load (halos)", "B/point"),
    Term(eta_cc, "cuda_core", "compute_fraction", sp.Integer(1),
         "fraction of the CUDA cores' peak the kernel can issue (calibrated or per-instruction)"),
    Term(eta_B_cc, "cuda_core", "bandwidth_fraction", sp.Integer(1),
         "fraction of the spec's DRAM bandwidth the CUDA-core kernel reaches"),
    Term(omega_cc, "cuda_core", "overlap", sp.Integer(1),
         "overlap of memory and compute phases on CUDA cores (1: perfect, 0: serialised)"),
    Term(tmax_cc, "cuda_core", "depth_limit", sp.oo,
         "deepest fusion the CUDA-core kernel's shared memory and registers hold"),
    Term(k_tc, "tensor_core", "tile_padding", sp.Integer(1),
         "Tensor Core work beyond what α counts (K padding, partial tiles): executed per counted MAC (≥ 1)"),
    Term(m_tc, "tensor_core", "tile_bytes", sp.Integer(0),
         "extra DRAM bytes per output point and sweep the Tensor Core tiles load", "B/point"),
    Term(eta_tc, "tensor_core", "compute_fraction", sp.Integer(1),
         "fraction of the instruction's peak the kernel can issue (calibrated or per-instruction)"),
    Term(eta_B_tc, "tensor_core", "bandwidth_fraction", sp.Integer(1),
         "fraction of the spec's DRAM bandwidth the Tensor Core kernel reaches"),
    Term(omega_tc, "tensor_core", "overlap", sp.Integer(1),
         "overlap of memory and compute phases on Tensor Cores (1: perfect, 0: serialised)"),
    Term(tmax_tc, "tensor_core", "depth_limit", sp.oo,
         "deepest fusion the Tensor Core kernel's shared memory and registers hold"),
)
TERM_BY_NAME = {term.name: term for term in TERMS}

# --------------------------------------------------------------------------- names of results

C_CC, M_CC, I_CC, rho_cc, D_CC, P_CC, G_CC = sp.symbols("C_CC M_CC I_CC rho_cc D_CC P_CC G_CC", positive=True)
C_TC, M_TC, I_TC, rho_tc, D_TC, P_TC_raw, P_TC, G_TC = sp.symbols(
    "C_TC M_TC I_TC rho_tc D_TC P_TC_raw P_TC G_TC", positive=True)
R = sp.Symbol("R", positive=True)
R_n = {n: sp.Symbol(f"R_{n}", positive=True) for n in (1, 2, 3, 4)}
beta_max = sp.Symbol("beta_max", positive=True)
#: Steps that exist only through refined terms (constant 1 in the base model, which omits them).
REFINED_ONLY = frozenset({D_CC, D_TC})

#: What each symbol means (``explain`` prints the ones an explanation uses; ``docs/model.md`` all).
SYMBOLS: dict[sp.Symbol, str] = {
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
    P_tc: "peak FLOP/s of the instruction the (dense or sparse) Tensor Cores execute",
    P_sptc: "peak FLOP/s of the Sparse Tensor Cores (dense-equivalent)",
    P_peak: "peak FLOP/s of a unit",
    C: "FLOPs per output point per sweep",
    M: "DRAM bytes per output point per sweep",
    I: "arithmetic intensity C/M",
    **{term.symbol: term.meaning for term in TERMS},
}

#: LaTeX of the multi-letter names (SymPy would print ``P_TC_raw`` as ``P_{TC raw}``).
LATEX: dict[str, str] = {
    "P_TC_raw": r"P_{\mathrm{TC}}^{\mathrm{raw}}", "P_TC": r"P_{\mathrm{TC}}", "P_CC": r"P_{\mathrm{CC}}",
    "C_CC": r"C_{\mathrm{CC}}", "M_CC": r"M_{\mathrm{CC}}", "I_CC": r"I_{\mathrm{CC}}", "D_CC": r"D_{\mathrm{CC}}",
    "C_TC": r"C_{\mathrm{TC}}", "M_TC": r"M_{\mathrm{TC}}", "I_TC": r"I_{\mathrm{TC}}", "D_TC": r"D_{\mathrm{TC}}",
    "G_CC": r"G_{\mathrm{CC}}", "G_TC": r"G_{\mathrm{TC}}", "P_cc": r"P_{\mathrm{cc}}", "P_tc": r"P_{\mathrm{tc}}",
    "P_sptc": r"P_{\mathrm{sptc}}", "P_peak": r"P_{\mathrm{peak}}",
    "rho_cc": r"\rho_{\mathrm{cc}}", "rho_tc": r"\rho_{\mathrm{tc}}", "beta_max": r"\beta_{\max}", "K_t": "K_{t}",
    "h_cc": r"h_{\mathrm{cc}}", "m_cc": r"m_{\mathrm{cc}}", "eta_cc": r"\eta_{\mathrm{cc}}",
    "eta_B_cc": r"\eta^{B}_{\mathrm{cc}}", "omega_cc": r"\omega_{\mathrm{cc}}", "tmax_cc": r"t^{\max}_{\mathrm{cc}}",
    "k_tc": r"k_{\mathrm{tc}}", "m_tc": r"m_{\mathrm{tc}}", "eta_tc": r"\eta_{\mathrm{tc}}",
    "eta_B_tc": r"\eta^{B}_{\mathrm{tc}}", "omega_tc": r"\omega_{\mathrm{tc}}", "tmax_tc": r"t^{\max}_{\mathrm{tc}}",
}

# --------------------------------------------------------------------------- closed forms of K and K_t


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
    """One step of the model's chain: ``symbol = short`` in terms of earlier steps, ``= full`` in the inputs."""

    symbol: sp.Symbol
    short: sp.Expr  # in terms of earlier equations' symbols and the inputs
    full: sp.Expr  # in terms of the inputs only
    number: str = ""  # the paper's equation number, "" where the paper has none
    unit: str = ""  # FLOP/point, B/point, FLOP/B, FLOP/s, stencils/s, points, "" (a pure number)
    meaning: str = ""
    group: str = ""  # stencil | cuda_core | tensor_core | comparison | scenario 1..4
    refined: bool = False  # the short form has terms of the refined variant

    @property
    def name(self) -> str:
        return self.symbol.name


#: Scenarios: (memory-bound on CUDA cores?, memory-bound on Tensor Cores?), meaning, equation number.
SCENARIOS: dict[int, tuple[bool, bool, str, str]] = {
    1: (True, True, "memory-bound on both units", "14"),
    2: (True, False, "memory-bound on CUDA cores, compute-bound on Tensor Cores", "15"),
    3: (False, True, "compute-bound on CUDA cores, memory-bound on Tensor Cores", "17"),
    4: (False, False, "compute-bound on both units", "18"),
}
#: Bounds attached to a scenario's speedup (eq. 16: R ≤ 1 in scenario 2; R ≥ 1 in scenario 3).
SCENARIO_BOUNDS = {2: " (≤ 1, eq. 16)", 3: " (≥ 1)"}

#: The paper's general statements (eqs. 2–7, 10, 20): what the chain instantiates.  ``roof`` and
#: ``ridge`` below evaluate eq. 5; the rest are written out for ``docs/model.md`` and its test.
GENERAL_FORMS: tuple[Equation, ...] = (
    Equation(sp.Symbol("C_TC"), C / alpha, C / alpha, "2", "FLOP/point", "work executed on Tensor Cores"),
    Equation(sp.Symbol("C_TC"), t * beta * C / alpha, t * beta * C / alpha, "3", "FLOP/point",
             "... with kernel fusion of depth t"),
    Equation(I, C / M, C / M, "4", "FLOP/B", "arithmetic intensity"),
    Equation(sp.Symbol("P"), sp.Min(P_peak, B * I), sp.Min(P_peak, B * I), "5", "FLOP/s", "roofline"),
    Equation(I, 2 * K / (2 * S), K / S, "6", "FLOP/B", "one step: C = 2K, M = 2S"),
    Equation(sp.Symbol("P"), sp.Min(P_peak, B * K / S), sp.Min(P_peak, B * K / S), "7", "FLOP/s",
             "roofline of one step"),
    Equation(beta, K_t_closed("box") / (t * K_closed("box")), K_t_closed("box") / (t * K_closed("box")), "10", "",
             "fusion redundancy of box stencils"),
    Equation(sp.Symbol("P_SpTC"), alpha / beta * sp.Min(P_sptc, B * I), alpha / beta * sp.Min(P_sptc, B * I), "20",
             "FLOP/s", "Sparse Tensor Cores: same α and I, P_sptc in place of P_tc"),
)
#: (9) fusion redundancy, any support: the stencil part of every chain.
beta_def = K_t / (t * K)


def stencil_equations(shape: str | None) -> list[Equation]:
    """K and K_t in closed form (box and star stencils only) and β (eq. 9): the stencil's part of a chain."""
    out = []
    if shape in ("box", "star"):
        out += [Equation(K, K_closed(shape), K_closed(shape), "", "points", SYMBOLS[K], "stencil"),
                Equation(K_t, K_t_closed(shape), K_t_closed(shape), "", "points", SYMBOLS[K_t], "stencil")]
    out.append(Equation(beta, beta_def, beta_def, "9", "", "fusion redundancy", "stencil"))
    return out


def _overlap_factor(omega: sp.Expr, peak: sp.Expr, memory: sp.Expr) -> sp.Expr:
    """D = 1 + (1 − ω)·min/max: the time of a tile's memory and compute phases over that of the longer one.

    With ω = 1 (perfect overlap) the time is the longer phase's, D = 1 and the roofline
    holds; with ω = 0 the phases serialise (an ECM-style sum).  Written out only when ω
    is free, since building SymPy's Min/Max for a constant 1 costs start-up time.
    """
    if omega == 1:
        return sp.Integer(1)
    return 1 + (1 - omega) * sp.Min(peak, memory) / sp.Max(peak, memory)


def _chain(terms: Mapping[sp.Symbol, sp.Expr]) -> list[Equation]:
    """The model's chain, every short form written once; ``terms`` fixes refined terms (or leaves them free).

    Full forms follow by substituting the earlier steps.  A step that only exists through
    refined terms (:data:`REFINED_ONLY`) and is constant under ``terms`` is folded into the
    later steps instead of being listed.
    """
    T = {term.symbol: terms.get(term.symbol, term.symbol) for term in TERMS}  # noqa: N806
    cc_peak, cc_mem = T[eta_cc] * P_cc, T[eta_B_cc] * B * I_CC
    tc_peak, tc_mem = T[eta_tc] * P_tc, T[eta_B_tc] * B * I_TC
    cc_roof, tc_roof = sp.Min(cc_peak, cc_mem), sp.Min(tc_peak, tc_mem)
    steps = [
        # CUDA cores, temporal fusion of depth t (eq. 8)
        (C_CC, 2 * K * t * T[h_cc], "8", "FLOP/point", "FLOPs the CUDA cores execute per output point and sweep",
         "cuda_core"),
        (M_CC, 2 * S + T[m_cc], "8", "B/point", "DRAM bytes per output point and sweep (one read, one write)",
         "cuda_core"),
        (I_CC, C_CC / M_CC, "8", "FLOP/B", "arithmetic intensity on CUDA cores", "cuda_core"),
        (rho_cc, T[eta_cc] * P_cc / (T[eta_B_cc] * B), "5", "FLOP/B", "ridge point: memory-bound below it",
         "cuda_core"),
        (D_CC, _overlap_factor(T[omega_cc], cc_peak, cc_mem), "", "",
         "time of non-overlapping memory and compute phases over the longer one's", "cuda_core"),
        (P_CC, cc_roof / (T[h_cc] * D_CC), "8", "FLOP/s", "useful FLOP/s on CUDA cores", "cuda_core"),
        (G_CC, P_CC / (2 * K), "", "stencils/s", "stencil point updates per second (time steps counted)",
         "cuda_core"),
        # Tensor Cores, kernel fusion of depth t (eqs. 11, 12; eq. 20 with the sparse peak as P_tc)
        (C_TC, 2 * K * t * beta * T[k_tc] / alpha, "11", "FLOP/point",
         "FLOPs the Tensor Cores execute per output point and sweep", "tensor_core"),
        (M_TC, 2 * S + T[m_tc], "11", "B/point", "DRAM bytes per output point and sweep", "tensor_core"),
        (I_TC, C_TC / M_TC, "11", "FLOP/B", "arithmetic intensity on Tensor Cores", "tensor_core"),
        (rho_tc, T[eta_tc] * P_tc / (T[eta_B_tc] * B), "5", "FLOP/B", "ridge point: memory-bound below it",
         "tensor_core"),
        (D_TC, _overlap_factor(T[omega_tc], tc_peak, tc_mem), "", "",
         "time of non-overlapping memory and compute phases over the longer one's", "tensor_core"),
        (P_TC_raw, tc_roof / D_TC, "11", "FLOP/s", "FLOP/s the Tensor Cores execute", "tensor_core"),
        (P_TC, alpha / (beta * T[k_tc]) * P_TC_raw, "12", "FLOP/s", "useful FLOP/s: α/β of what they execute",
         "tensor_core"),
        (G_TC, P_TC / (2 * K), "", "stencils/s", "stencil point updates per second (time steps counted)",
         "tensor_core"),
        (R, P_TC / P_CC, "13", "", "speedup of Tensor Cores over CUDA cores", "comparison"),
    ]
    free_terms = {term.symbol for term in TERMS}
    chain: list[Equation] = []
    fulls: dict[sp.Symbol, sp.Expr] = {}
    folded: dict[sp.Symbol, sp.Expr] = {}
    for symbol, short, number, unit, meaning, group in steps:
        short = sp.sympify(short).xreplace(folded)
        full = short.xreplace(fulls)
        fulls[symbol] = full
        if symbol in REFINED_ONLY and short.is_number:
            folded[symbol] = short
            continue
        chain.append(Equation(symbol, short, full, number, unit, meaning, group,
                              refined=bool(short.free_symbols & free_terms)))
    return chain


def _scenario_equations(chain: list[Equation], terms: Mapping[sp.Symbol, sp.Expr]) -> list[Equation]:
    """Eqs. 14, 15, 17, 18 and 19, *derived*: R = P_TC/P_CC with each Min resolved by the scenario.

    In the base model the short form writes K through I_CC (I_CC is proportional to K),
    which turns the derived forms into the paper's: R_1 = 1, R_2 = (α/β)·P_tc/(B·I_CC),
    R_3 = B·I_CC/P_cc, R_4 = α·P_tc/(β·P_cc).  With refined terms free, the short form
    keeps I_CC, I_TC and the overlap factors as names, which reads better.
    """
    full = {eq.symbol: eq.full for eq in chain}
    short = {eq.symbol: eq.short for eq in chain}
    T = {term.symbol: terms.get(term.symbol, term.symbol) for term in TERMS}  # noqa: N806

    def resolve(expr: sp.Expr, i_cc: sp.Expr, i_tc: sp.Expr, n: int) -> sp.Expr:
        mem_cc, mem_tc = SCENARIOS[n][:2]
        cc_peak, cc_mem = T[eta_cc] * P_cc, T[eta_B_cc] * B * i_cc
        tc_peak, tc_mem = T[eta_tc] * P_tc, T[eta_B_tc] * B * i_tc
        cc_bound, cc_free = (cc_mem, cc_peak) if mem_cc else (cc_peak, cc_mem)
        tc_bound, tc_free = (tc_mem, tc_peak) if mem_tc else (tc_peak, tc_mem)
        out = expr.xreplace({sp.Min(cc_peak, cc_mem): cc_bound, sp.Max(cc_peak, cc_mem): cc_free,
                             sp.Min(tc_peak, tc_mem): tc_bound, sp.Max(tc_peak, tc_mem): tc_free})
        assert not out.has(sp.Min, sp.Max), out
        return out

    ratio = full[P_TC] / full[P_CC]
    by_names = short[P_TC].xreplace({P_TC_raw: short[P_TC_raw]}) / short[P_CC]
    per_k = full[I_CC] / K
    assert not per_k.has(K), "I_CC must be proportional to K"
    k_by_i_cc = {K: I_CC / per_k}
    out = []
    for n, (_, _, meaning, number) in SCENARIOS.items():
        form = resolve(ratio, full[I_CC], full[I_TC], n)
        shown = form.xreplace(k_by_i_cc) if not _has_terms(form) else resolve(by_names, I_CC, I_TC, n)
        out.append(Equation(R_n[n], shown, form, number, "", meaning + SCENARIO_BOUNDS.get(n, ""), f"scenario {n}",
                            refined=_has_terms(shown)))
    # (19) R_4 > 1 solved for β: R_4 is proportional to 1/β in the base model.  In the refined
    # variant with ω_tc < 1, D_TC depends on β too and this is the threshold at the current β.
    r4 = out[-1]
    out.append(Equation(beta_max, r4.short * beta, r4.full * beta, "19", "",
                        "scenario 4: Tensor Cores win iff β is below this", "scenario 4", refined=r4.refined))
    return out


@dataclass(frozen=True)
class Variant:
    """One model: its inputs, its chain of equations and the outputs :func:`evaluate` returns."""

    name: str
    summary: str
    terms: tuple[Term, ...]
    equations: tuple[Equation, ...]
    outputs: Mapping[str, sp.Expr] = field(repr=False)

    @property
    def inputs(self) -> tuple[sp.Symbol, ...]:
        return INPUTS + tuple(term.symbol for term in self.terms)

    def equation(self, symbol: sp.Symbol | str) -> Equation:
        name = symbol if isinstance(symbol, str) else symbol.name
        return next(eq for eq in self.equations if eq.name == name)

    def group(self, group: str) -> list[Equation]:
        return [eq for eq in self.equations if eq.group == group]


def _outputs(equations: list[Equation]) -> dict[str, sp.Expr]:
    full = {eq.symbol: eq.full for eq in equations}
    i_cc, i_tc, r_cc, r_tc = full[I_CC], full[I_TC], full[rho_cc], full[rho_tc]
    # Written as the paper states them (I < ρ memory-bound, I ≥ ρ compute-bound).
    conds = {1: sp.And(i_cc < r_cc, i_tc < r_tc), 2: sp.And(i_cc < r_cc, i_tc >= r_tc),
             3: sp.And(i_cc >= r_cc, i_tc < r_tc), 4: sp.And(i_cc >= r_cc, i_tc >= r_tc)}
    return {
        "C_cc": full[C_CC],
        "M": full[M_CC],
        "I_cc": i_cc,
        "rho_cc": r_cc,
        "P_cc": full[P_CC],
        "C_tc": full[C_TC],
        "I_tc": i_tc,
        "rho_tc": r_tc,
        "P_tc_raw": full[P_TC_raw],
        "P_tc": full[P_TC],
        # The speedup as the paper linearises it: eq. 13 evaluated through the scenario's own
        # form (14, 15, 17, 18).  Equal to P_TC/P_CC everywhere, and exactly 1 in scenario 1 of
        # the base model, which floating-point division of two equal roofs would not promise.
        "R": sp.Piecewise(*[(full[R_n[n]], conds[n]) for n in SCENARIOS]),
        "R_ratio": full[R],
        "scenario": sp.Piecewise(*[(n, conds[n]) for n in SCENARIOS]),
        "beta_threshold": full[beta_max],
        "gstencils_cc": full[G_CC] / 10**9,
        "gstencils_tc": full[G_TC] / 10**9,
        # What the model says beyond the paper's table: bytes on Tensor Cores, executed FLOP/s
        # on CUDA cores, which roof binds (0 memory, 1 compute), whether the depth fits on chip.
        "M_tc": full[M_TC],
        "P_cc_exec": full[P_CC] * full[C_CC] / (2 * K * t),
        "bound_cc": sp.Piecewise((0, i_cc < r_cc), (1, True)),
        "bound_tc": sp.Piecewise((0, i_tc < r_tc), (1, True)),
        "fits_cc": sp.Piecewise((1, t <= tmax_cc), (0, True)),
        "fits_tc": sp.Piecewise((1, t <= tmax_tc), (0, True)),
    }


def _has_terms(expr: sp.Expr) -> bool:
    return bool(expr.free_symbols & {term.symbol for term in TERMS})


@lru_cache(maxsize=None)
def _build(name: str) -> Variant:
    if name == "refined":
        terms: dict[sp.Symbol, sp.Expr] = {}
        kept, summary = TERMS, ("the paper's model with tile halos, tile loads, achievable ceilings, overlap and "
                                "on-chip capacity as terms (docs/model.md)")
    else:  # base: every term at its default, substituted before anything is built
        terms = {term.symbol: term.default for term in TERMS}
        kept, summary = (), "the paper's model: a roofline with α and β (eqs. 2-20)"
    chain = _chain(terms)
    chain += _scenario_equations(chain, terms)
    outputs = _outputs(chain)
    if terms:  # the capacity terms enter only the outputs
        outputs = {key: sp.sympify(expr).xreplace(terms) for key, expr in outputs.items()}
    return Variant(name, summary, kept, tuple(chain), outputs)


#: The variants, by name (what ``--model`` accepts).
VARIANTS = ("base", "refined")


def get_variant(name: str = "base") -> Variant:
    """The model variant ``name`` (``base`` or ``refined``), built once per process."""
    key = str(name).strip().lower()
    if key not in VARIANTS:
        raise TcAdvisorError(f"--model {name!r} is not one of {', '.join(VARIANTS)}")
    return _build(key)


# --------------------------------------------------------------------------- the refined terms' equations
#
# The refined terms follow from a kernel's launch plan (tcadvisor.gpu.plans) and the GPU's
# multiprocessors; docs/model.md derives each.  Quantities of the plan and the GPU:
N_sm, f_clk, W_sm, N_b = sp.symbols("N_sm f_clk W N_b", positive=True)
n_ld, n_st, n_mv, n_w, n_it, n_l = sp.symbols("n_ld n_st n_mv n_w n_it n_l", positive=True)
n_vl = sp.Symbol("n_vl", positive=True)
e_s, a_x, a_y, q_s, q_b = sp.symbols("e_s a_x a_y q_s q_b", positive=True)
m_I, n_I, k_I = sp.symbols("m_I n_I k_I", positive=True)
n_im = sp.Symbol("n_im", positive=True)
n_ob = sp.Symbol("n_ob", positive=True)
#: Constants fitted to measurements (benchmarks/fit_refined.py; values in models/fitted/refined-terms.yaml).
lambda_c, o_c, L_it, lambda_0, lambda_1, eta_B0, L_mem = sp.symbols(
    "lambda_c o_c L_it lambda_0 lambda_1 eta_B0 L_mem", positive=True)
#: Architectural constants of every NVIDIA GPU since Volta (CUDA C++ Programming Guide): shared memory
#: moves 32 banks x 4 bytes per clock per SM, and 4 schedulers issue one 32-thread instruction each per clock.
SHARED_BYTES_PER_CLOCK = sp.Integer(128)
ISSUE_PER_CLOCK = sp.Integer(128)

#: Names of the intermediate steps of the terms' chains.
c_fma, c_sh, c_is, c_lat_cc, c_mma, c_op, c_lat_tc, B_eff, t_it = sp.symbols(
    "c_fma c_sh c_is c_lat_cc c_mma c_op c_lat_tc B_eff t_it", positive=True)

TERM_SYMBOLS: dict[sp.Symbol, str] = {
    N_sm: "streaming multiprocessors (SMs) of the GPU",
    f_clk: "SM clock [Hz]",
    W_sm: "resident warps per SM (occupancy of the plan)",
    N_b: "resident blocks per SM",
    n_ld: "shared-memory values loaded per point update (per thread)",
    n_vl: "values per shared-memory load instruction (the 3D kernel's vector loads; 1 otherwise)",
    n_st: "shared-memory stores per point update",
    n_mv: "register moves per point update (pending partial sums shifted)",
    n_w: "32-bit words per value (2 for FP64)",
    n_it: "point updates one block performs per iteration of its main loop",
    n_l: "point updates one CUDA-core instruction performs (2 for FP16/BF16: packed pairs; 1 otherwise)",
    e_s: "slices executed per output slice along the streamed axis (pipeline start-up of each chunk)",
    a_x: "points a tile column holds per point it owns along x (halo, partial tiles at the edge)",
    a_y: "the same along y (3D tiles; 1 otherwise)",
    q_s: "slices loaded per output slice (each chunk loads its halo slices again)",
    q_b: "bytes one block has in flight (the loads of one iteration)",
    m_I: "the MMA instruction's m", n_I: "the MMA instruction's n", k_I: "the MMA instruction's k",
    n_im: "instructions a warp issues per MMA: the MMA and its share of the fragment loads and conversions, the "
          "weight loads, the stores and the stage copies, counted from the plan",
    n_ob: "bytes a warp moves through L1/shared memory per MMA for its operands (weight fragments not held in "
          "registers, input fragments, warp shuffles)",
    lambda_c: "fitted: cycles a warp waits per CUDA-core instruction and 32-bit word it cannot hide alone",
    o_c: "fitted: issue slots per point update beyond the counted instructions (addresses, loop, predicates)",
    L_it: "fitted: cycles of one CUDA-core block iteration (loads, barrier) the other resident blocks must cover",
    lambda_0: "fitted: cycles a warp waits per instruction it issues per MMA (n_im counted; the addresses and "
              "loop control beside them it carries too)",
    lambda_1: "fitted: cycles a warp waits per MMA instruction, per unit of the instruction's k",
    eta_B0: "fitted: fraction of the copy bandwidth a streaming kernel reaches with enough bytes in flight",
    L_mem: "fitted: DRAM latency under load [s]",
    c_fma: "cycles per point update per SM on the FMA pipe",
    c_sh: "cycles per point update per SM on the shared-memory pipe",
    c_is: "cycles per point update per SM issuing its instructions",
    c_lat_cc: "cycles per point update per SM a warp waits that the other resident warps do not hide",
    c_mma: "cycles per MMA per SM on the Tensor Core pipe (the instruction's own rate)",
    c_op: "cycles per MMA per SM moving its operands through L1/shared memory",
    c_lat_tc: "cycles per MMA per SM the resident warps do not hide",
    B_eff: "bandwidth the kernel's bytes in flight sustain [byte/s]",
    t_it: "seconds a CUDA-core warp spends on its own work per iteration, its loads of the next not yet issued",
}
SYMBOLS.update(TERM_SYMBOLS)
LATEX.update({"N_sm": r"N_{\mathrm{SM}}", "f_clk": r"f_{\mathrm{clk}}", "W": "W", "N_b": "N_b",
              "lambda_c": r"\lambda_c", "o_c": "o_c", "L_it": r"L_{\mathrm{it}}", "lambda_0": r"\lambda_0",
              "lambda_1": r"\lambda_1", "eta_B0": r"\eta^{B}_{0}", "L_mem": r"L_{\mathrm{mem}}",
              "c_fma": r"c_{\mathrm{fma}}", "c_sh": r"c_{\mathrm{sh}}", "c_is": r"c_{\mathrm{is}}",
              "c_lat_cc": r"c^{\mathrm{lat}}_{\mathrm{cc}}", "c_mma": r"c_{\mathrm{mma}}", "c_op": r"c_{\mathrm{op}}",
              "n_ob": r"n_{\mathrm{ob}}", "n_im": r"n_{\mathrm{im}}",
              "c_lat_tc": r"c^{\mathrm{lat}}_{\mathrm{tc}}", "B_eff": r"B_{\mathrm{eff}}", "t_it": r"t_{\mathrm{it}}"})
#: The fitted constants, in the order the fit and the YAML list them.
FITTED = (lambda_c, o_c, L_it, lambda_0, lambda_1, eta_B0, L_mem)


def _term_chain(steps) -> tuple[Equation, ...]:
    """Equations of the terms, each short form in earlier steps, full forms substituted."""
    out, fulls = [], {}
    for symbol, short, unit, meaning, group in steps:
        short = sp.sympify(short)
        full = short.xreplace(fulls)
        fulls[symbol] = full
        out.append(Equation(symbol, short, full, "", unit, meaning, group, refined=True))
    return tuple(out)


#: Per unit (cuda_core; tensor_core for dense and sparse), the chain that computes the refined terms
#: from the plan: redundancy, extra bytes, the achievable fraction of the peak and of the bandwidth.
TERM_CHAINS: dict[str, tuple[Equation, ...]] = {
    "cuda_core": _term_chain([
        (h_cc, e_s * a_x * a_y, "", "tile halos and pipeline start-up: points computed per point owned",
         "cuda_core"),
        (m_cc, S * (q_s - 1), "B/point", "halo slices each chunk loads again from DRAM", "cuda_core"),
        (c_fma, K * 2 * N_sm * f_clk / P_cc, "cycles", TERM_SYMBOLS[c_fma], "cuda_core"),
        (c_sh, (n_ld + n_st) * S / SHARED_BYTES_PER_CLOCK, "cycles", TERM_SYMBOLS[c_sh], "cuda_core"),
        (c_is, (K + n_ld / n_vl + n_st + n_mv + o_c) / (n_l * ISSUE_PER_CLOCK), "cycles", TERM_SYMBOLS[c_is],
         "cuda_core"),
        (c_lat_cc, lambda_c * n_w * (K + n_ld / n_vl + n_st + n_mv) / (32 * W_sm) + L_it / (N_b * n_it), "cycles",
         TERM_SYMBOLS[c_lat_cc], "cuda_core"),
        (eta_cc, c_fma / (sp.Max(c_fma, c_sh, c_is) + c_lat_cc), "",
         "the FMA pipe's share of the time per point update", "cuda_core"),
        # A block's q_b bytes of an iteration are in flight for the memory latency, not while its warps then work
        # through the iteration (n_it/threads point updates per thread, each waiting as in c_lat): the DRAM
        # microbenchmark's bandwidth follows the bytes in flight alone (validation/results/h200-2026-12-01/
        # dram-in-flight/), and the 2D kernel at t = 1 reached less than its counted bytes sustain there.
        (t_it, lambda_c * n_w * (K + n_ld / n_vl + n_st + n_mv) * n_it * N_b / (32 * W_sm * f_clk), "s",
         TERM_SYMBOLS[t_it], "cuda_core"),
        (B_eff, 1 / (1 / (eta_B0 * B) + (L_mem + t_it) / (N_b * q_b * N_sm)), "B/s", TERM_SYMBOLS[B_eff],
         "cuda_core"),
        (eta_B_cc, B_eff / B, "", "fraction of the bandwidth the bytes in flight sustain", "cuda_core"),
    ]),
    "tensor_core": _term_chain([
        (k_tc, e_s * a_x, "", "pipeline start-up and partial warp tiles: MMAs issued per MMA α counts",
         "tensor_core"),
        (m_tc, S * (q_s - 1), "B/point", "halo slices each chunk loads again from DRAM", "tensor_core"),
        (c_mma, 2 * m_I * n_I * k_I * N_sm * f_clk / P_tc, "cycles", TERM_SYMBOLS[c_mma], "tensor_core"),
        (c_op, n_ob / SHARED_BYTES_PER_CLOCK, "cycles", TERM_SYMBOLS[c_op], "tensor_core"),
        (c_lat_tc, (lambda_0 * n_im + lambda_1 * k_I) / W_sm, "cycles",
         TERM_SYMBOLS[c_lat_tc],
         "tensor_core"),
        (eta_tc, c_mma / (sp.Max(c_mma, c_op) + c_lat_tc), "", "the Tensor Core pipe's share of the time per MMA",
         "tensor_core"),
        (B_eff, 1 / (1 / (eta_B0 * B) + L_mem / (N_b * q_b * N_sm)), "B/s", TERM_SYMBOLS[B_eff], "tensor_core"),
        (eta_B_tc, B_eff / B, "", "fraction of the bandwidth the bytes in flight sustain", "tensor_core"),
    ]),
}


@lru_cache(maxsize=None)
def term_function(unit: str, name: str) -> tuple[Callable, tuple[sp.Symbol, ...]]:
    """A term (or an intermediate step) of ``unit``'s chain as a (vectorised) function, and its arguments in order."""
    eq = next(e for e in TERM_CHAINS[unit] if e.name == name)
    args = tuple(sorted(eq.full.free_symbols, key=lambda x: x.name))
    return sp.lambdify(args, eq.full, modules="numpy"), args


# --------------------------------------------------------------------------- numeric


#: Outputs of the paper's model, lambdified together in this order: common-subexpression
#: elimination names its temporaries by position, and with them the order of the products,
#: so the numbers of these outputs stay bit for bit what they have always been.
PAPER_OUTPUTS = ("C_cc", "M", "I_cc", "rho_cc", "P_cc", "C_tc", "I_tc", "rho_tc", "P_tc_raw", "P_tc", "R",
                 "R_ratio", "scenario", "beta_threshold", "gstencils_cc", "gstencils_tc")


@lru_cache(maxsize=None)
def _evaluator(name: str) -> tuple[Callable, tuple[str, ...], Callable, tuple[str, ...]]:
    v = get_variant(name)
    extra = tuple(k for k in v.outputs if k not in PAPER_OUTPUTS)
    main_fn = sp.lambdify(v.inputs, [v.outputs[k] for k in PAPER_OUTPUTS], modules="numpy", cse=True)
    extra_fn = sp.lambdify(v.inputs, [v.outputs[k] for k in extra], modules="numpy", cse=True)
    return main_fn, PAPER_OUTPUTS, extra_fn, extra


def _broadcast(values: list) -> list:
    """Inputs as arrays of one shape when any is an array: the piecewise outputs combine their
    conditions element by element, which needs every condition to have the same shape."""
    if not any(np.ndim(v) for v in values):
        return values
    return list(np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values]))


def evaluate(*, K, t, beta, alpha, S, B, P_cc, P_tc, variant: str = "base", **terms) -> dict:  # noqa: N803
    """Evaluate a model variant, vectorised: any input may be a NumPy array.

    The inputs are named (``K``, ``t``, ``beta``, ``alpha``, ``S``, ``B``, ``P_cc``,
    ``P_tc``); the ``refined`` variant also takes its terms by name (``h_cc=...``; see
    :data:`TERMS`), each defaulting to the base model's value.  Returns a dict with the
    keys of :attr:`Variant.outputs`: scenario as a number 1–4, ``bound_*`` 0 (memory)
    or 1 (compute), ``fits_*`` 1 where the depth fits the kernel's on-chip capacity.
    ``P_tc`` is the peak of whichever Tensor Core flavour is compared (dense, or sparse
    per eq. 20).  For a CUDA-core-only evaluation pass ``alpha=beta=1`` and any
    ``P_tc``; the ``*_cc`` outputs do not depend on them.
    """
    model = get_variant(variant)
    known = {term.name for term in model.terms}
    unknown = set(terms) - known
    if unknown:
        raise TypeError(f"the {model.name} model has no term(s) {', '.join(sorted(unknown))}"
                        + (f"; its terms: {', '.join(sorted(known))}" if known else ""))
    values = [K, t, beta, alpha, S, B, P_cc, P_tc]
    values += [terms.get(term.name, float(term.default)) for term in model.terms]
    values = _broadcast(values)
    main_fn, main_keys, extra_fn, extra_keys = _evaluator(model.name)
    out = dict(zip(main_keys, main_fn(*values)))
    out.update(zip(extra_keys, extra_fn(*values)))
    return {key: out[key] for key in model.outputs}


# --------------------------------------------------------------------------- at given intensities

#: Eq. 5 and the ridge point, as functions of an intensity and a unit's ceilings.
_ROOF = sp.Min(P_peak, B * I)
_RIDGE = P_peak / B


@lru_cache(maxsize=None)
def _intensity_fns() -> tuple[Callable, Callable, Callable, tuple[str, ...]]:
    roof_fn = sp.lambdify((I, B, P_peak), _ROOF, modules="numpy")
    ridge_fn = sp.lambdify((B, P_peak), _RIDGE, modules="numpy")
    # The base model with K and β written through the two intensities: K·t/S = I_cc and
    # K·t·β/(α·S) = I_tc, so α/β = I_cc/I_tc (the same bytes per point on both units).
    i_cc, i_tc = sp.symbols("I_cc I_tc", positive=True)
    base = get_variant("base")
    by_intensity = {K: i_cc * S / t, beta: alpha * i_tc / i_cc}
    keys = ("P_cc", "P_tc_raw", "P_tc", "R", "R_ratio", "scenario", "bound_cc", "bound_tc")
    exprs = [sp.sympify(base.outputs[k]).subs(by_intensity) for k in keys]
    assert all(not e.free_symbols - {i_cc, i_tc, B, P_cc, P_tc} for e in exprs), exprs
    compare_fn = sp.lambdify((i_cc, i_tc, B, P_cc, P_tc), exprs, modules="numpy", cse=True)
    return roof_fn, ridge_fn, compare_fn, keys


def roof(intensity, bandwidth, peak):
    """Attainable FLOP/s at ``intensity`` under ceilings ``bandwidth`` and ``peak`` (eq. 5).

    ``peak = inf`` gives the bandwidth line B·I alone.
    """
    return _intensity_fns()[0](intensity, bandwidth, peak)


def ridge(bandwidth, peak):
    """The ridge point ρ = P/B: the intensity below which a unit of ``peak`` is memory-bound."""
    return _intensity_fns()[1](bandwidth, peak)


def compare_at_intensity(I_cc, I_tc, bandwidth, P_cc, P_tc) -> dict:  # noqa: N803
    """The base model's comparison of the units at given intensities (the plane of Figs. 9 and 14).

    With the same bytes per point on both units, α/β = I_cc/I_tc, so the intensities
    and the ceilings determine everything: returns ``P_cc``, ``P_tc_raw``, ``P_tc``,
    ``R`` (by scenario), ``R_ratio``, ``scenario``, ``bound_cc`` and ``bound_tc``.
    Only I_tc ≥ I_cc is reachable (β ≥ 1 ≥ α).
    """
    _, _, fn, keys = _intensity_fns()
    return dict(zip(keys, fn(*_broadcast([I_cc, I_tc, bandwidth, P_cc, P_tc]))))
