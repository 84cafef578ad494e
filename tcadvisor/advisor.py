"""The advisor: which unit, and which fusion depth, for one stencil on one GPU.

For a query (stencil, dtype, GPU, optionally a fusion depth t) it builds one
:class:`Option` per execution unit: CUDA cores with temporal fusion, dense
Tensor Cores and Sparse Tensor Cores with kernel fusion, each run by an
implementation profile.  Every number comes from :func:`tcadvisor.model.evaluate`
(the lambdified SymPy model, ``base`` or ``refined``); this module chooses the
inputs (implementation, α through :mod:`tcadvisor.alpha_policy`, β, the peak of the
instruction executed, the refined terms through :mod:`tcadvisor.refinement`) and
picks the best configuration.  The words live in :mod:`tcadvisor.wording`, the
radius × depth sweeps in :mod:`tcadvisor.sweeps`.

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

from .alpha_policy import AlphaChoice, ResolvedAlpha, resolve_alpha
from .dtypes import BYTES
from .errors import AlphaModeError, TcAdvisorError, UnavailableError, WorkBudgetExceeded
from .hardware import UNIT_LABELS, UNITS, GpuSpec
from .impls import ImplProfile, choose_impl
from .mma import MmaShape
from .model import evaluate as evaluate_model
from .model import get_variant
from .queryargs import DEFAULT_MAX_FUSE
from .refinement import Refinement, refine, unit_terms
from .stencil import Stencil, check_fuse

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
    alpha_mode_error: bool = False  # not evaluated: the α mode asked for does not exist for this implementation
    model: str = "base"  # the model variant this option was evaluated with
    model_note: str = ""  # why (refined: from the tiling; base under --model refined: no tiling declared)
    terms: dict = field(default_factory=dict)  # refined terms used: name -> value (empty for the base model)
    term_notes: dict = field(default_factory=dict)  # refined terms: name -> how each was obtained
    term_inputs: dict = field(default_factory=dict)  # refined: model symbol -> value the terms were derived at

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
        return self._get("M", "M_tc")

    @property
    def intensity(self) -> float:
        return self._get("I_cc", "I_tc")

    @property
    def ridge(self) -> float:
        return self._get("rho_cc", "rho_tc")

    @property
    def bound(self) -> str | None:
        """Which roof binds, as the model says (``bound_cc``/``bound_tc``: I below the ridge is memory-bound)."""
        if not self.available:
            return None
        return ("memory", "compute")[int(self._get("bound_cc", "bound_tc"))]

    @property
    def gstencils(self) -> float:
        return self._get("gstencils_cc", "gstencils_tc")

    @property
    def attainable_flops(self) -> float:
        """Useful FLOP/s (for Tensor Cores: α/β of what they execute)."""
        return self._get("P_cc", "P_tc")

    @property
    def executed_flops(self) -> float:
        return self._get("P_cc_exec", "P_tc_raw")

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
    model: str = "base"  # the model variant asked for (each option says which one it got)

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
        listed = gpu.shapes(unit, precision)
        why = (f"the spec gives no rate for {shape} (it lists {', '.join(map(str, listed))})" if listed
               else f"the spec lists no {precision.upper()} instructions")
        return gpu.peak(unit, precision), f"{label}; {why}", source
    return gpu.peak(unit, precision), label, gpu.peaks[unit][precision].source


def _refinements(impl: ImplProfile, unit: str, stencil: Stencil, fuses: list[int], dtype: str, precision: str,
                 shapes: list[MmaShape | None], gpu: GpuSpec, grid=None, kernel: str = "") -> list[Refinement]:
    return [refine(impl, unit, stencil, t, dtype, precision, shape, gpu, grid, kernel)
            for t, shape in zip(fuses, shapes)]


def _cuda_core_side(cc_impl: ImplProfile | None, stencil: Stencil, dtype: str, gpu: GpuSpec,
                    fuses: list[int], grid=None) -> dict[str, list[float]]:
    """The CUDA-core terms a Tensor Core option is compared against (its R and scenario), per depth."""
    if cc_impl is None or cc_impl.why_not(stencil, dtype, gpu) is not None:
        return {}
    precision, _ = cc_impl.precision_for(dtype, gpu)
    found = _refinements(cc_impl, "cuda_core", stencil, fuses, dtype, precision, [None] * len(fuses), gpu, grid)
    return {name: [f.values[name] for f in found] for name in found[0].values} if found else {}


def evaluate_unit(unit: str, impl: ImplProfile, stencil: Stencil, dtype: str, gpu: GpuSpec,
                  fuses: list[int], choice: AlphaChoice, cc_peak: float | None, *, model: str = "base",
                  cc_impl: ImplProfile | None = None, grid: tuple[int, int, int] | None = None,
                  kernel: str = "") -> list[Option]:
    """Options of one unit at each fusion depth in ``fuses`` (one vectorised model call).

    ``model`` is the variant (``base`` or ``refined``); under ``refined`` each option
    gets the terms of :mod:`tcadvisor.refinement` for ``impl`` (the base model's
    values where ``impl`` declares no tiling, as ``model_note`` says), and a Tensor
    Core option is compared with the CUDA-core terms of ``cc_impl``.  A depth whose
    fused support or α would exceed the work budget comes back as an unavailable
    option with ``skipped`` set and the reason; under ``refined``, so does a depth
    the kernel's on-chip capacity cannot hold (``skipped`` unset).  ``grid``
    ((nz, ny, nx)) is the grid the refined terms are derived for (default: the
    bundled kernels' default grid of the stencil's dimension); ``kernel`` a recorded
    run's kernel description, whose configuration the refined terms then describe
    instead of today's default.
    """
    variant = get_variant(model).name
    why = impl.why_not(stencil, dtype, gpu)
    if why is not None:
        return [_unavailable(unit, t, why, impl) for t in fuses]
    precision, _ = impl.precision_for(dtype, gpu)
    S = BYTES[dtype]
    K = stencil.K
    rows: list[tuple[int, Fraction, ResolvedAlpha | None, tuple[float, str, str]]] = []
    out_of_budget: dict[int, str] = {}
    cannot: dict[int, str] = {}
    wrong_mode: dict[int, str] = {}
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
        except AlphaModeError as exc:
            wrong_mode[t] = str(exc)
            continue
        except UnavailableError as exc:  # this depth cannot be built (e.g. a fused radius the instruction cannot hold)
            cannot[t] = str(exc)
            continue
        rows.append((t, beta, resolved, _peak(gpu, unit, precision, resolved.mma)))
    options: dict[int, Option] = {t: _unavailable(unit, t, why_, impl, skipped=True)
                                  for t, why_ in out_of_budget.items()}
    options.update({t: _unavailable(unit, t, why_, impl) for t, why_ in cannot.items()})
    for t, why_ in wrong_mode.items():
        options[t] = _unavailable(unit, t, why_, impl)
        options[t].alpha_mode_error = True
    if rows:
        depths = [row[0] for row in rows]
        ts = np.array(depths, dtype=float)
        betas = np.array([float(row[1]) for row in rows])
        alphas = np.array([float(row[2].alpha) if row[2] else 1.0 for row in rows])
        peaks = np.array([row[3][0] for row in rows])
        p_cc = peaks if unit == "cuda_core" else (cc_peak if cc_peak is not None else np.nan)
        refinements: list[Refinement | None] = [None] * len(rows)
        terms: dict[str, np.ndarray] = {}
        if variant == "refined":
            shapes = [row[2].mma if row[2] else None for row in rows]
            refinements = _refinements(impl, unit, stencil, depths, dtype, precision, shapes, gpu, grid, kernel)
            for term in unit_terms(unit):
                terms[term.name] = np.array([f.values[term.name] for f in refinements])
            if unit != "cuda_core":
                terms.update({k: np.array(v) for k, v in
                              _cuda_core_side(cc_impl, stencil, dtype, gpu, depths, grid).items()})
        out = evaluate_model(K=K, t=ts, beta=betas, alpha=alphas, S=S, B=gpu.bandwidth.value, P_cc=p_cc,
                             P_tc=peaks, variant=variant, **terms)
        arrays = {k: np.broadcast_to(np.asarray(v, dtype=float), (len(rows),)) for k, v in out.items()}
        fits = "fits_cc" if unit == "cuda_core" else "fits_tc"
        for i, (t, beta, resolved, (peak, note, source)) in enumerate(rows):
            values = {k: float(v[i]) for k, v in arrays.items()}
            found = refinements[i]
            if not values[fits]:
                limit = next(term.name for term in unit_terms(unit) if term.hook == "depth_limit")
                options[t] = _unavailable(unit, t, f"{impl.name} cannot run t = {t} on {gpu.name}: "
                                                   f"{found.notes[limit]}", impl)
                options[t].model = variant
                continue
            opt = Option(
                unit=unit, available=True, fuse=t, impl=impl, precision=precision,
                mma_shape=resolved.mma if resolved else None,
                alpha=resolved.alpha if resolved else Fraction(1),
                alpha_source=resolved.source if resolved else None,
                alpha_note=resolved.note if resolved else "",
                beta=beta, peak=peak, peak_note=note, peak_source=source, values=values,
                model="refined" if found is not None and found.applies else "base",
                model_note=found.note if found is not None else "",
                terms=dict(found.values) if found is not None and found.applies else {},
                term_notes=dict(found.notes) if found is not None and found.applies else {},
                term_inputs=dict(found.inputs) if found is not None and found.applies else {},
            )
            if unit != "cuda_core" and cc_peak is not None:
                from .wording import decision_text

                opt.scenario = int(values["scenario"])
                opt.decision = decision_text(opt)
            elif unit != "cuda_core":
                for key in ("R", "R_ratio", "P_cc"):
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
           fuse: int | None = None, impls=None, alpha_choice: "AlphaChoice | str | float | None" = None,
           max_fuse: int | None = None, model: str = "base", *,
           alpha: "AlphaChoice | str | float | None" = None) -> Advice:
    """Evaluate every unit for ``stencil`` and pick the best unit and fusion depth.

    Arguments are checked as the command line checks them and may be given as names:
    a stencil name or offsets file, a dtype name or alias (``fp64``), a GPU key, alias
    or spec file (``None``: the embedded default), implementation names, how α is
    chosen (``alpha_choice``, or ``alpha=`` as the ``--alpha`` option spells it:
    ``"paper"``, ``"constructed"``, a number, an :class:`AlphaChoice`), the model
    variant (``base`` or ``refined``).  Bad values raise
    :class:`~tcadvisor.errors.TcAdvisorError` with a one-line message.
    """
    from .arguments import as_dtype, as_gpu, as_impls, as_stencil

    if alpha is not None and alpha_choice is not None:
        raise TcAdvisorError("give α once: alpha_choice or alpha (the same argument), not both")
    stencil, dtype, gpu = as_stencil(stencil), as_dtype(dtype), as_gpu(gpu)
    chosen = as_impls(impls)
    choice = AlphaChoice.parse(alpha if alpha is not None else alpha_choice)
    variant = get_variant(model).name
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
            per_unit[unit] = evaluate_unit(unit, impl, stencil, dtype, gpu, fuses, choice, cc_peak, model=variant,
                                           cc_impl=None if cc_why else cc_impl)
            mismatch = next((o.reason for o in per_unit[unit] if o.alpha_mode_error), None)
            if unit in chosen and mismatch:  # the user named both the implementation and an α it lacks
                raise AlphaModeError(mismatch)

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
    advice = Advice(stencil, dtype, gpu, fuse, options, best, overall, "", max_fuse, at_fuse, searched, skipped,
                    variant)
    from .wording import verdict_sentence

    advice.verdict_text = verdict_sentence(advice)
    return advice


def sweep(*args, **kwargs):
    """The model over a radius × depth grid as a DataFrame (see :func:`tcadvisor.sweeps.sweep`)."""
    from .sweeps import sweep as _sweep

    return _sweep(*args, **kwargs)
