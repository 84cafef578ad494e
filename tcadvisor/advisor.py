"""The advisor: which unit, and which fusion depth, for one stencil on one GPU.

For a query (stencil, dtype, GPU, optionally a fusion depth t) it builds one
:class:`Option` per execution unit: CUDA cores with temporal fusion, dense
Tensor Cores and Sparse Tensor Cores with kernel fusion, each run by an
implementation profile.  Every number comes from :func:`tcadvisor.model.evaluate`
(the lambdified SymPy model); this module only chooses inputs (α, β, peaks) and
reads the answers: scenario, deciding inequality, best t, verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np

from . import model
from .dtypes import BYTES
from .errors import TcAdvisorError
from .hardware import UNIT_LABELS, UNITS, GpuSpec
from .impls import ImplProfile, default_impls
from .mma import MmaShape
from .stencil import Stencil, check_fuse

DEFAULT_MAX_FUSE = 16
#: Relative tolerance under which two throughputs count as a tie.
TIE = 1e-9


# --------------------------------------------------------------------------- α


@dataclass(frozen=True)
class AlphaChoice:
    """How α is chosen for Tensor Core options: ``auto``, ``paper``, ``constructed`` or a value."""

    mode: str = "auto"
    value: Fraction | None = None

    @classmethod
    def parse(cls, text: str | float | None) -> "AlphaChoice":
        if text is None:
            return cls()
        key = str(text).strip().lower()
        if key in ("auto", "paper"):
            return cls(key)
        if key in ("constructed", "construction", "construct"):
            return cls("constructed")
        try:
            value = Fraction(key)
        except (ValueError, ZeroDivisionError):
            raise TcAdvisorError(
                f"--alpha {text!r} is not understood; expected 'paper', 'constructed', 'auto' "
                "or a number in (0, 1] such as 0.42 or 15/32"
            ) from None
        if not 0 < value <= 1:
            raise TcAdvisorError(f"--alpha {text} is outside (0, 1]; α is the useful fraction of executed MACs")
        return cls("value", value)


def constructed_alpha(transform: str, stencil: Stencil, fuse: int, shape: MmaShape, precision: str) -> Fraction:
    """α counted from the operands ``transform`` builds for the t-step fused stencil.

    :func:`tcadvisor.transforms.alpha_for` (cached; closed forms for box and
    star stencils at any radius and depth, which the tests prove equal to the
    constructed matrices; custom stencils within a work budget).
    """
    from . import transforms

    return transforms.alpha_for(transform, stencil, fuse, shape, precision).alpha


def instruction(impl: ImplProfile, stencil: Stencil, fuse: int, precision: str, gpu: GpuSpec) -> MmaShape | None:
    """The MMA shape ``impl`` issues for this fused stencil on ``gpu``.

    With several candidate shapes, an implementation with a construction picks
    the one that pads least (:func:`tcadvisor.transforms.least_padding_shape`),
    as the bundled kernel does; otherwise the profile's preferred shape.
    """
    candidates = impl.mma_candidates(precision, gpu)
    if len(candidates) > 1 and impl.alpha is not None and impl.alpha.construction is not None:
        from . import transforms

        return transforms.least_padding_shape(impl.alpha.construction, stencil, candidates, fuse=fuse,
                                              precision=precision)
    return candidates[0] if candidates else None


def resolve_alpha(impl: ImplProfile, choice: AlphaChoice, stencil: Stencil, fuse: int,
                  precision: str, gpu: GpuSpec) -> tuple[Fraction, str, MmaShape | None]:
    """α for a Tensor Core option, where it came from, and the MMA shape it assumes."""
    src = impl.alpha
    shape = instruction(impl, stencil, fuse, precision, gpu)
    mode = choice.mode
    if mode == "value":
        return choice.value, "given by --alpha", shape
    if mode == "auto":
        mode = "paper" if src.paper is not None else "constructed"
    if mode == "paper":
        if src.paper is None:
            raise TcAdvisorError(f"{impl.name} has no published α; use --alpha constructed or a number")
        return src.paper, "paper", shape
    if src.construction is None:
        raise TcAdvisorError(
            f"{impl.name} has no α construction yet; use --alpha paper or a number (see 'tcadvisor impls')"
        )
    if shape is None:
        raise TcAdvisorError(f"{impl.name} names no MMA shape for {precision} and {gpu.name} lists none")
    alpha = constructed_alpha(src.construction, stencil, fuse, shape, precision)
    return alpha, f"constructed ({shape})", shape


# --------------------------------------------------------------------------- options


@dataclass
class Option:
    """One execution unit evaluated for the query at fusion depth ``fuse``."""

    unit: str
    available: bool
    fuse: int
    reason: str | None = None
    impl: ImplProfile | None = None
    precision: str | None = None
    mma_shape: MmaShape | None = None
    alpha: Fraction = Fraction(1)
    alpha_source: str = ""
    beta: Fraction = Fraction(1)
    peak: float = float("nan")
    values: dict = field(default_factory=dict)  # the model's outputs for this option
    scenario: int | None = None
    decision: str | None = None

    @property
    def label(self) -> str:
        return UNIT_LABELS[self.unit]

    @property
    def is_tensor(self) -> bool:
        return self.unit != "cuda_core"

    # Per-point quantities, with the CC/TC split of the model hidden behind the unit.
    def _get(self, cc_key: str, tc_key: str) -> float:
        if not self.available:
            return float("nan")
        return float(self.values[tc_key if self.is_tensor else cc_key])

    @property
    def flops_per_point(self) -> float:
        return self._get("C_cc", "C_tc")

    @property
    def useful_flops_per_point(self) -> float:
        return self._get("C_cc", "C_cc")

    @property
    def bytes_per_point(self) -> float:
        return self._get("M", "M")

    @property
    def intensity(self) -> float:
        return self._get("I_cc", "I_tc")

    @property
    def ridge(self) -> float:
        return self._get("rho_cc", "rho_tc")

    @property
    def bound(self) -> str:
        return "memory" if self.intensity < self.ridge else "compute"

    @property
    def gstencils(self) -> float:
        return self._get("gstencils_cc", "gstencils_tc")

    @property
    def attainable_flops(self) -> float:
        """Useful FLOP/s (for Tensor Cores: α/β of what they execute)."""
        return self._get("P_cc", "P_tc")

    @property
    def executed_flops(self) -> float:
        return self._get("P_cc", "P_tc_raw")

    @property
    def speedup(self) -> float | None:
        if not self.available:
            return None
        if not self.is_tensor:
            return 1.0
        r = float(self.values.get("R", float("nan")))
        return None if np.isnan(r) else r


@dataclass
class Advice:
    stencil: Stencil
    dtype: str
    gpu: GpuSpec
    fuse: int | None  # as requested (None: each unit at its best depth)
    options: list[Option]
    best: dict[str, Option]  # unit -> option at its best fusion depth
    verdict: Option | None
    verdict_text: str
    max_fuse: int
    at_fuse: Option | None = None  # winner at the requested depth


def _unavailable(unit: str, fuse: int, reason: str, impl: ImplProfile | None = None) -> Option:
    return Option(unit=unit, available=False, fuse=fuse, reason=reason, impl=impl)


def _prepare(unit: str, impl: ImplProfile, stencil: Stencil, dtype: str, gpu: GpuSpec) -> tuple[str | None, str | None]:
    why = impl.unsupported(stencil)
    if why:
        return None, why
    return impl.precision_for(dtype, gpu)


def evaluate_unit(unit: str, impl: ImplProfile, stencil: Stencil, dtype: str, gpu: GpuSpec,
                  fuses: list[int], choice: AlphaChoice, cc_peak: float | None) -> list[Option]:
    """Options of one unit at each fusion depth in ``fuses`` (one vectorised model call)."""
    precision, why = _prepare(unit, impl, stencil, dtype, gpu)
    if precision is None:
        return [_unavailable(unit, t, why, impl) for t in fuses]
    peak = gpu.peak(unit, precision)
    S = BYTES[dtype]
    K = stencil.K
    if unit == "cuda_core":
        alphas = [Fraction(1)] * len(fuses)
        betas = [Fraction(1)] * len(fuses)
        sources = [""] * len(fuses)
        shapes = [None] * len(fuses)
        p_cc, p_tc = peak, peak
    else:
        resolved = [resolve_alpha(impl, choice, stencil, t, precision, gpu) for t in fuses]
        alphas, sources, shapes = (list(col) for col in zip(*resolved))
        betas = [stencil.beta(t) for t in fuses]
        p_cc, p_tc = (cc_peak if cc_peak is not None else np.nan), peak
    out = model.evaluate(
        K, np.array(fuses, dtype=float), np.array([float(b) for b in betas]),
        np.array([float(a) for a in alphas]), S, gpu.bandwidth.value, p_cc, p_tc,
    )
    arrays = {k: np.broadcast_to(np.asarray(v, dtype=float), (len(fuses),)) for k, v in out.items()}
    options = []
    for i, t in enumerate(fuses):
        values = {k: float(v[i]) for k, v in arrays.items()}
        opt = Option(
            unit=unit, available=True, fuse=t, impl=impl, precision=precision,
            mma_shape=shapes[i],
            alpha=alphas[i], alpha_source=sources[i], beta=betas[i], peak=peak, values=values,
        )
        if unit != "cuda_core" and cc_peak is not None:
            opt.scenario = int(values["scenario"])
            opt.decision = decision_text(opt)
        elif unit != "cuda_core":
            for key in ("R", "P_cc"):
                opt.values[key] = float("nan")
        options.append(opt)
    return options


def decision_text(opt: Option) -> str:
    """The inequality that decides this Tensor Core option against CUDA cores, with numbers."""
    v = opt.values
    i_cc, r_cc, i_tc, r_tc, R = v["I_cc"], v["rho_cc"], v["I_tc"], v["rho_tc"], v["R"]
    if opt.scenario == 1:
        return (f"scenario 1: memory-bound on both (I_CC = {i_cc:.3g} < ρ_cc = {r_cc:.3g}, "
                f"I_TC = {i_tc:.4g} < ρ_tc = {r_tc:.4g}), so R = 1: bandwidth caps both units")
    if opt.scenario == 2:
        return (f"scenario 2: memory-bound on CUDA cores (I_CC = {i_cc:.3g} < ρ_cc = {r_cc:.3g}) but "
                f"compute-bound on {opt.label} (I_TC = {i_tc:.4g} ≥ ρ_tc = {r_tc:.4g}), "
                f"so R = (α/β)·P_tc/(B·I_CC) = {R:.3g} ≤ 1: {opt.label} lose")
    if opt.scenario == 3:
        return (f"scenario 3: compute-bound on CUDA cores (I_CC = {i_cc:.3g} ≥ ρ_cc = {r_cc:.3g}) and "
                f"memory-bound on {opt.label} (I_TC = {i_tc:.4g} < ρ_tc = {r_tc:.4g}), "
                f"so R = B·I_CC/P_cc = {R:.3g} ≥ 1: {opt.label} win")
    thr = v["beta_threshold"]
    beta = float(opt.beta)
    if beta < thr:
        verdict = f"β = {beta:.3g} < α·P_tc/P_cc = {thr:.4g}, so {opt.label} win (R = {R:.3g})"
    elif beta > thr:
        verdict = f"β = {beta:.3g} > α·P_tc/P_cc = {thr:.4g}, so {opt.label} lose (R = {R:.3g})"
    else:
        verdict = f"β = α·P_tc/P_cc = {thr:.4g}, so both units tie (R = 1)"
    return f"scenario 4: compute-bound on both, {verdict}"


def best_index(gstencils, fuses, units, prefer_fuse: int | None = None) -> int | None:
    """Index of the configuration to recommend among parallel sequences of candidates.

    Highest throughput; within a relative :data:`TIE`, the requested depth, then
    the shallower depth (less on-chip state, fewer halo losses in real kernels),
    then the simpler unit (CUDA cores before Tensor Cores before sparse ones).
    NaN entries (unavailable options) are never chosen.  The advisor and the maps
    both decide with this one rule.
    """
    valid = [i for i, g in enumerate(gstencils) if g is not None and np.isfinite(g)]
    if not valid:
        return None
    top = max(gstencils[i] for i in valid)
    tied = [i for i in valid if gstencils[i] >= top * (1 - TIE)]
    return min(tied, key=lambda i: (fuses[i] != prefer_fuse, fuses[i], UNITS.index(units[i]), i))


def _pick(options: list[Option], prefer_fuse: int | None) -> Option | None:
    avail = [o for o in options if o.available]
    i = best_index([o.gstencils for o in avail], [o.fuse for o in avail], [o.unit for o in avail], prefer_fuse)
    return None if i is None else avail[i]


def advise(stencil: Stencil, dtype: str, gpu: GpuSpec, fuse: int | None = None,
           impls: dict[str, ImplProfile] | None = None, alpha: AlphaChoice | None = None,
           max_fuse: int = DEFAULT_MAX_FUSE) -> Advice:
    """Evaluate every unit for ``stencil`` and pick the best unit and fusion depth."""
    if fuse is not None:
        fuse = check_fuse(fuse)
    max_fuse = check_fuse(max_fuse)
    chosen = dict(default_impls())
    chosen.update(impls or {})
    choice = alpha or AlphaChoice()
    fuses = sorted(set(range(1, max_fuse + 1)) | ({fuse} if fuse else set()))

    cc_impl = chosen["cuda_core"]
    cc_precision, _ = _prepare("cuda_core", cc_impl, stencil, dtype, gpu)
    cc_peak = gpu.peak("cuda_core", cc_precision) if cc_precision else None
    per_unit = {
        unit: evaluate_unit(unit, chosen[unit], stencil, dtype, gpu, fuses, choice, cc_peak)
        for unit in UNITS
    }
    best = {}
    for unit, opts in per_unit.items():
        pick = _pick(opts, fuse)
        best[unit] = pick if pick is not None else opts[0]
    if fuse is not None:
        options = [next(o for o in per_unit[u] if o.fuse == fuse) for u in UNITS]
    else:
        options = [best[u] for u in UNITS]
    overall = _pick([o for opts in per_unit.values() for o in opts], fuse)
    at_fuse = _pick(options, fuse) if fuse is not None else None
    advice = Advice(stencil, dtype, gpu, fuse, options, best, overall, "", max_fuse, at_fuse)
    advice.verdict_text = verdict_sentence(advice)
    return advice


def _name(opt: Option) -> str:
    how = "temporal fusion" if opt.unit == "cuda_core" else "kernel fusion"
    return f"{opt.label} ({opt.impl.name}, {how}, {opt.precision.upper()})"


def verdict_sentence(adv: Advice) -> str:
    if adv.verdict is None:
        return "No execution unit can run this configuration on this GPU (see the reasons above)."
    best = adv.verdict
    parts = []
    if adv.fuse is not None and adv.at_fuse is not None:
        here = adv.at_fuse
        parts.append(f"At t = {adv.fuse}, use {_name(here)}: {here.gstencils:.4g} GStencils/s, {here.bound}-bound.")
        for opt in adv.options:
            if opt.is_tensor and opt.available and opt.decision and opt is not here:
                parts.append(f"{opt.label}: {opt.decision}.")
            elif opt.is_tensor and opt.available and opt is here and opt.decision:
                parts.append(f"Why: {opt.decision}.")
    cc_best = adv.best.get("cuda_core")
    gain = ""
    if cc_best is not None and cc_best.available and best.unit != "cuda_core":
        gain = f", {best.gstencils / cc_best.gstencils:.3g}x the best CUDA-core configuration (t = {cc_best.fuse})"
    parts.append(
        f"Best over t = 1..{adv.max_fuse}: {_name(best)} at t = {best.fuse}, "
        f"{best.gstencils:.4g} GStencils/s ({best.bound}-bound{gain})."
    )
    if best.unit == "cuda_core" and best.bound == "compute":
        parts.append("Deeper fusion does not raise a compute-bound CUDA-core kernel; the shallowest depth reaching the "
                     "ceiling is chosen.")
    return " ".join(parts)


# --------------------------------------------------------------------------- sweeps


def sweep(shape: str, dims: int, dtype: str, gpu: GpuSpec, radii=range(1, 9), fuses=range(1, 17),
          impls: dict[str, ImplProfile] | None = None, alpha: AlphaChoice | None = None):
    """The model over a radius × fusion-depth grid, one row per (radius, t, unit), as a DataFrame.

    Each radius is one vectorised model call per unit through :func:`evaluate_unit`,
    so every cell is exactly what :func:`advise` reports for that configuration.
    Columns: gpu, stencil, shape, dims, radius, fuse, unit, impl, precision,
    available, reason, alpha, alpha_source, beta, flops_per_point, intensity,
    ridge, bound, gstencils, speedup, scenario.
    """
    import pandas as pd

    from .stencil import Stencil

    chosen = dict(default_impls())
    chosen.update(impls or {})
    choice = alpha or AlphaChoice()
    fuses = [check_fuse(t) for t in fuses]
    rows = []
    for radius in radii:
        stencil = getattr(Stencil, shape)(dims, radius)
        cc_precision, _ = _prepare("cuda_core", chosen["cuda_core"], stencil, dtype, gpu)
        cc_peak = gpu.peak("cuda_core", cc_precision) if cc_precision else None
        for unit in UNITS:
            for opt in evaluate_unit(unit, chosen[unit], stencil, dtype, gpu, fuses, choice, cc_peak):
                rows.append({
                    "gpu": gpu.short, "gpu_name": gpu.name, "stencil": stencil.name, "shape": shape, "dims": dims,
                    "radius": radius, "fuse": opt.fuse, "unit": unit,
                    "impl": opt.impl.name if opt.impl else None, "precision": opt.precision,
                    "available": opt.available, "reason": opt.reason,
                    "alpha": float(opt.alpha) if opt.available else float("nan"),
                    "alpha_source": opt.alpha_source, "beta": float(stencil.beta(opt.fuse)),
                    "flops_per_point": opt.flops_per_point, "bytes_per_point": opt.bytes_per_point,
                    "intensity": opt.intensity, "ridge": opt.ridge,
                    "bound": opt.bound if opt.available else None,
                    "gstencils": opt.gstencils,
                    "speedup": opt.speedup if opt.speedup is not None else float("nan"),
                    "scenario": opt.scenario if opt.scenario is not None else 0,
                })
    return pd.DataFrame(rows)
