"""The advisor: which unit, and which fusion depth, for one stencil on one GPU.

For a query (stencil, dtype, GPU, optionally a fusion depth t) it builds one
:class:`Option` per execution unit: CUDA cores with temporal fusion, dense
Tensor Cores and Sparse Tensor Cores with kernel fusion, each run by an
implementation profile.  Every number comes from :func:`tcadvisor.model.evaluate`
(the lambdified SymPy model); this module chooses the inputs (implementation,
α through :mod:`tcadvisor.alpha_policy`, β, the peak of the instruction executed)
and picks the best configuration.  The words live in :mod:`tcadvisor.wording`,
the radius × depth sweeps in :mod:`tcadvisor.sweeps`.

Choosing among configurations (one rule, :func:`best_index`, shared with the
maps): throughputs within :data:`TIE_TOLERANCE` of the best count as equal (the
model is a bound, so smaller differences mean nothing), and among those the
shallowest depth wins (less on-chip state, smaller halos in real kernels), then
the simpler unit (CUDA cores, then Tensor Cores, then sparse ones).  The best
depth therefore never depends on the depth a user asked about.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from . import model
from .alpha_policy import AlphaChoice, ResolvedAlpha, resolve_alpha
from .dtypes import BYTES
from .errors import TcAdvisorError, UnavailableError, WorkBudgetExceeded
from .hardware import UNIT_LABELS, UNITS, GpuSpec
from .impls import ImplProfile, choose_impl
from .mma import MmaShape
from .stencil import Stencil, check_fuse

DEFAULT_MAX_FUSE = 16
#: Relative difference of throughput under which two configurations count as equal.
TIE_TOLERANCE = 0.01

__all__ = ["AlphaChoice", "Advice", "Option", "advise", "best_index", "evaluate_unit", "DEFAULT_MAX_FUSE",
           "TIE_TOLERANCE"]


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
    alpha_source: str | None = None  # constructed | paper | user; None on CUDA cores
    alpha_note: str = ""
    beta: Fraction = Fraction(1)
    peak: float = float("nan")  # FLOP/s of the instruction (or unit) executed
    peak_note: str = ""  # which rate: the instruction's own, or the precision's
    peak_source: str = ""  # the spec's citation for it
    values: dict = field(default_factory=dict)  # the model's outputs for this option
    scenario: int | None = None
    decision: str | None = None
    skipped: bool = False  # not evaluated: beyond the work budget

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
    def bound(self) -> str | None:
        if not self.available:
            return None
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
        """R: this option over CUDA cores at the same depth t (eq. 13)."""
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
    options: list[Option]  # one per unit: at ``fuse``, or at the unit's best depth
    best: dict[str, Option]  # unit -> option at its best fusion depth
    verdict: Option | None  # the best configuration over every unit and searched depth
    verdict_text: str
    max_fuse: int
    at_fuse: Option | None = None  # winner at the requested depth
    searched: list[int] = field(default_factory=list)  # depths evaluated
    skipped: dict[int, str] = field(default_factory=dict)  # depth -> why it was not searched

    def runner_up(self, among: list[Option], winner: Option) -> Option | None:
        """The best available option of another unit than ``winner`` among ``among``."""
        others = [o for o in among if o.available and o.unit != winner.unit]
        return max(others, key=lambda o: o.gstencils, default=None)


# --------------------------------------------------------------------------- evaluation


def _unavailable(unit: str, fuse: int, reason: str, impl: ImplProfile | None = None,
                 skipped: bool = False) -> Option:
    return Option(unit=unit, available=False, fuse=fuse, reason=reason, impl=impl, skipped=skipped)


def _peak(gpu: GpuSpec, unit: str, precision: str, shape: MmaShape | None) -> tuple[float, str, str]:
    """FLOP/s of the instruction executed, a short note saying which rate it is, and the spec's source."""
    label = f"{precision.upper()} rate of the {UNIT_LABELS[unit]}"
    if shape is not None:
        rate = gpu.instruction_peak(unit, precision, shape)
        if rate is not None and not rate.inherited:
            return rate.value, f"the {shape} rate", rate.source
        if rate is not None:
            return rate.value, f"{label}; the spec gives {shape} no rate of its own", rate.source
        source = gpu.peaks[unit][precision].source
        return gpu.peak(unit, precision), f"{label}; the spec lists no {precision.upper()} instructions", source
    return gpu.peak(unit, precision), label, gpu.peaks[unit][precision].source


def evaluate_unit(unit: str, impl: ImplProfile, stencil: Stencil, dtype: str, gpu: GpuSpec,
                  fuses: list[int], choice: AlphaChoice, cc_peak: float | None) -> list[Option]:
    """Options of one unit at each fusion depth in ``fuses`` (one vectorised model call).

    A depth whose fused support or α would exceed the work budget comes back as an
    unavailable option with ``skipped`` set and the reason.
    """
    why = impl.why_not(stencil, dtype, gpu)
    if why is not None:
        return [_unavailable(unit, t, why, impl) for t in fuses]
    precision, _ = impl.precision_for(dtype, gpu)
    S = BYTES[dtype]
    K = stencil.K
    rows: list[tuple[int, Fraction, ResolvedAlpha | None, tuple[float, str, str]]] = []
    out_of_budget: dict[int, str] = {}
    for t in fuses:
        if unit == "cuda_core":
            rows.append((t, Fraction(1), None, _peak(gpu, unit, precision, None)))
            continue
        try:
            resolved = resolve_alpha(impl, choice, stencil, t, precision, gpu)
            beta = stencil.beta(t)
        except WorkBudgetExceeded as exc:
            out_of_budget[t] = str(exc)
            continue
        except UnavailableError as exc:
            return [_unavailable(unit, tt, str(exc), impl) for tt in fuses]
        rows.append((t, beta, resolved, _peak(gpu, unit, precision, resolved.mma)))
    options: dict[int, Option] = {t: _unavailable(unit, t, why_, impl, skipped=True)
                                  for t, why_ in out_of_budget.items()}
    if rows:
        ts = np.array([row[0] for row in rows], dtype=float)
        betas = np.array([float(row[1]) for row in rows])
        alphas = np.array([float(row[2].alpha) if row[2] else 1.0 for row in rows])
        peaks = np.array([row[3][0] for row in rows])
        p_cc = peaks if unit == "cuda_core" else (cc_peak if cc_peak is not None else np.nan)
        out = model.evaluate(K, ts, betas, alphas, S, gpu.bandwidth.value, p_cc, peaks)
        arrays = {k: np.broadcast_to(np.asarray(v, dtype=float), (len(rows),)) for k, v in out.items()}
        for i, (t, beta, resolved, (peak, note, source)) in enumerate(rows):
            values = {k: float(v[i]) for k, v in arrays.items()}
            opt = Option(
                unit=unit, available=True, fuse=t, impl=impl, precision=precision,
                mma_shape=resolved.mma if resolved else None,
                alpha=resolved.alpha if resolved else Fraction(1),
                alpha_source=resolved.source if resolved else None,
                alpha_note=resolved.note if resolved else "",
                beta=beta, peak=peak, peak_note=note, peak_source=source, values=values,
            )
            if unit != "cuda_core" and cc_peak is not None:
                from .wording import decision_text

                opt.scenario = int(values["scenario"])
                opt.decision = decision_text(opt)
            elif unit != "cuda_core":
                for key in ("R", "P_cc"):
                    opt.values[key] = float("nan")
            options[t] = opt
    return [options[t] for t in fuses]


def best_index(gstencils, fuses, units, tolerance: float = TIE_TOLERANCE) -> int | None:
    """Index of the configuration to recommend among parallel sequences of candidates.

    Candidates within ``tolerance`` (relative) of the highest throughput count as
    equal; among them the shallowest depth, then the simpler unit (CUDA cores
    before Tensor Cores before sparse ones).  NaN entries (unavailable options)
    are never chosen.  The advisor and the maps both decide with this one rule.
    """
    valid = [i for i, g in enumerate(gstencils) if g is not None and np.isfinite(g)]
    if not valid:
        return None
    top = max(gstencils[i] for i in valid)
    tied = [i for i in valid if gstencils[i] >= top * (1 - tolerance)]
    return min(tied, key=lambda i: (fuses[i], UNITS.index(units[i]), i))


def _pick(options: list[Option]) -> Option | None:
    avail = [o for o in options if o.available]
    i = best_index([o.gstencils for o in avail], [o.fuse for o in avail], [o.unit for o in avail])
    return None if i is None else avail[i]


def cuda_core_peak(impl: ImplProfile, stencil: Stencil, dtype: str, gpu: GpuSpec) -> float | None:
    """P_cc the Tensor Core options are compared against (None: no CUDA-core option)."""
    if impl.why_not(stencil, dtype, gpu) is not None:
        return None
    precision, _ = impl.precision_for(dtype, gpu)
    return _peak(gpu, "cuda_core", precision, None)[0]


def implementations(stencil: Stencil, dtype: str, gpu: GpuSpec,
                    impls: dict[str, ImplProfile] | None = None) -> dict[str, tuple[ImplProfile, str | None]]:
    """Per unit: the implementation evaluated (the user's, else the preferred one that runs
    this configuration) and, if none can, why."""
    out = {}
    for unit in UNITS:
        if impls and unit in impls:
            out[unit] = (impls[unit], None)
        else:
            out[unit] = choose_impl(unit, stencil, dtype, gpu)
    return out


def advise(stencil: "Stencil | str", dtype: str = "double", gpu: "GpuSpec | str | None" = None,
           fuse: int | None = None, impls=None, alpha: "AlphaChoice | str | float | None" = None,
           max_fuse: int | None = None) -> Advice:
    """Evaluate every unit for ``stencil`` and pick the best unit and fusion depth.

    Arguments are checked as the command line checks them and may be given as names:
    a stencil name or offsets file, a dtype name or alias (``fp64``), a GPU key, alias
    or spec file (``None``: the embedded default), implementation names, an α choice.
    Bad values raise :class:`~tcadvisor.errors.TcAdvisorError` with a one-line message.
    """
    from .arguments import as_dtype, as_gpu, as_impls, as_stencil

    stencil, dtype, gpu = as_stencil(stencil), as_dtype(dtype), as_gpu(gpu)
    chosen = as_impls(impls)
    choice = AlphaChoice.parse(alpha)
    if fuse is not None:
        fuse = check_fuse(fuse)
    if max_fuse is None:
        max_fuse = DEFAULT_MAX_FUSE
    else:
        max_fuse = check_fuse(max_fuse)
        if fuse is not None and fuse > max_fuse:
            raise TcAdvisorError(f"--fuse {fuse} is deeper than --max-fuse {max_fuse}; raise --max-fuse or omit it")
    # The best-depth search covers 1..max_fuse, plus the requested depth if it lies beyond.
    fuses = sorted(set(range(1, max_fuse + 1)) | ({fuse} if fuse else set()))

    per_unit: dict[str, list[Option]] = {}
    used = implementations(stencil, dtype, gpu, chosen)
    cc_impl, cc_why = used["cuda_core"]
    cc_peak = None if cc_why else cuda_core_peak(cc_impl, stencil, dtype, gpu)
    for unit in UNITS:
        impl, why = used[unit]
        if why is not None:
            per_unit[unit] = [_unavailable(unit, t, why, impl) for t in fuses]
        else:
            per_unit[unit] = evaluate_unit(unit, impl, stencil, dtype, gpu, fuses, choice, cc_peak)

    skipped = {}
    for opts in per_unit.values():
        for o in opts:
            if o.skipped:
                skipped.setdefault(o.fuse, o.reason)
    if fuse is not None and fuse in skipped:
        raise WorkBudgetExceeded(skipped[fuse])
    best = {}
    for unit, opts in per_unit.items():
        pick = _pick(opts)
        best[unit] = pick if pick is not None else opts[0]
    if fuse is not None:
        options = [next(o for o in per_unit[u] if o.fuse == fuse) for u in UNITS]
    else:
        options = [best[u] for u in UNITS]
    overall = _pick([o for opts in per_unit.values() for o in opts])
    at_fuse = _pick(options) if fuse is not None else None
    searched = [t for t in fuses if t not in skipped]
    advice = Advice(stencil, dtype, gpu, fuse, options, best, overall, "", max_fuse, at_fuse, searched, skipped)
    from .wording import verdict_sentence

    advice.verdict_text = verdict_sentence(advice)
    return advice


def sweep(*args, **kwargs):
    """The model over a radius × depth grid as a DataFrame (see :func:`tcadvisor.sweeps.sweep`)."""
    from .sweeps import sweep as _sweep

    return _sweep(*args, **kwargs)
