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

Which implementations (the default, ``model="refined"``): the bundled kernels
(``tcadvisor-cc``, ``tcadvisor-tc``, ``tcadvisor-sptc``) with the refined model, since
they are what runs here and what ``advise --run`` measures (docs/kernels.md gives their
measured throughput); a unit whose bundled kernel does not run the stencil in the
dtype is *not available*, with the kernel's own reason (:mod:`tcadvisor.support`),
and the depths it cannot run are not searched but listed per unit.  Only where the
GPU itself cannot run a bundled kernel (an AMD spec, no ``multiprocessors``, a
compute capability below the kernel's) does that unit keep the published
implementations with the base model, and the answer says why.  ``model="base"``
is the paper's model with the published implementations (EBISU, ConvStencil,
SPIDER, ...), exactly as before.  Every option also carries its *bound*: the base
model at its own α, β and instruction peak, what a perfect implementation of that
transformation could reach.

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
from .refinement import Interval, Refinement, refine, unit_terms
from .sources.result import StencilSource
from .search import DEFAULT_MAX_FUSE, TIE_TOLERANCE
from .stencil import Stencil, check_fuse

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
    roof: float = float("nan")  # the base model's GStencils/s at this option's α, β and peak (one sweep of t)
    interval: Interval | None = None  # refined: how far measurements fell from such predictions (None: unknown)
    kernel_refused: bool = False  # a depth the bundled kernel cannot run (not searched; listed per unit)
    sweeps: tuple[int, ...] = ()  # with a number of steps: the depth of each sweep (a shallower remainder last)
    plan_gstencils: float | None = None  # over ``sweeps`` (None: one sweep of t, the model's own number)
    plan_roof: float | None = None  # the bound over ``sweeps``

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
        """Useful point updates per second, in billions: over the sweep plan where steps were given."""
        if self.available and self.plan_gstencils is not None:
            return self.plan_gstencils
        return self._get("gstencils_cc", "gstencils_tc")

    @property
    def steady_gstencils(self) -> float:
        """The model's number for sweeps of t steps each (no remainder sweep)."""
        return self._get("gstencils_cc", "gstencils_tc")

    @property
    def bound_gstencils(self) -> float:
        """The base model's bound at this option's α, β and instruction peak (equal to ``gstencils`` under base):
        what a perfect implementation of the transformation could reach, beside what this kernel will."""
        if not self.available:
            return float("nan")
        return self.plan_roof if self.plan_roof is not None else self.roof

    def interval_range(self) -> tuple[float, float] | None:
        """(low, high) GStencils/s of the prediction's interval, or None where none is known."""
        if not self.available or self.interval is None:
            return None
        return self.interval.around(self.gstencils)

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
    grid: tuple[int, ...] | None = None  # the grid the refined terms assumed (None: the base model needs none)
    grid_given: bool = False  # the user's grid (else the bundled kernels' default grid)
    steps: int | None = None  # time steps in all (None: one sweep of t steps at each depth, as 'run' does)
    unit_skipped: dict[str, dict[int, str]] = field(default_factory=dict)  # unit -> depth -> why its kernel cannot
    fallback: dict[str, str] = field(default_factory=dict)  # unit -> why it keeps the published implementations
    notes: list[str] = field(default_factory=list)  # what the tool chose for the user, one line each
    by_depth: dict[str, dict[int, Option]] = field(default_factory=dict)  # unit -> depth -> option (all searched)
    command: str = ""  # the query as a 'tcadvisor advise' command line (what '--run' appends to)
    source: StencilSource | None = None  # where the stencil was read from the user's code (None: a name or Stencil)
    dtype_from: str | None = None  # where the dtype came from when the source gave it (no dtype was asked for)

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


def _refine_depth(impl: ImplProfile, unit: str, stencil: Stencil, t: int, dtype: str, precision: str,
                  shape: MmaShape | None, gpu: GpuSpec, grid=None, kernel: str = "") -> Refinement:
    """:func:`~tcadvisor.refinement.refine` at one depth, also where a shallower depth is refused.

    ``refine`` takes the kernel's depth limit to be the depth before the first one it
    refuses, but a bundled kernel's plan changes with the depth (its tuned tiles), so
    a deeper depth may run where a shallower one does not (A100, Box-3D1R FP64: t = 4
    needs 170 KiB of shared memory, t = 5 fits).  Such a depth the kernel runs is
    evaluated with its own plan here, so that the advisor's availability is the
    kernel's acceptance at every depth (tests/test_support.py).
    """
    from . import refinement

    found = refine(impl, unit, stencil, t, dtype, precision, shape, gpu, grid, kernel)
    limit = next(term for term in unit_terms(unit) if term.hook == "depth_limit")
    if not found.applies or t <= found.values[limit.name] or not impl.kernel or impl.tiling.launch != "kernel":
        return found
    ctx = refinement.Context(impl, impl.tiling, unit, stencil, t, dtype, precision, shape, gpu, grid, kernel)
    if refinement.cannot_run(ctx, t):
        return found
    values, notes = {}, {}
    for term in unit_terms(unit):
        if term is limit:
            values[term.name] = float(t)
            notes[term.name] = (f"t = {t} runs: its plan fits although a shallower depth's does not "
                                f"({found.notes[term.name]})")
        else:
            got = refinement.HOOKS[term.hook](ctx)
            values[term.name], notes[term.name] = got.value, got.note
    inputs = {**refinement.plan_inputs(ctx)[0], **refinement.constants(gpu)}
    note = (f"refined model from {impl.name}'s launch plan at t = {t}: {len(values)} of {len(values)} terms derived"
            f"; {refinement.constants_source(gpu)}")
    return Refinement(True, values, notes, note, inputs)


def _refinements(impl: ImplProfile, unit: str, stencil: Stencil, fuses: list[int], dtype: str, precision: str,
                 shapes: list[MmaShape | None], gpu: GpuSpec, grid=None, kernel: str = "") -> list[Refinement]:
    return [_refine_depth(impl, unit, stencil, t, dtype, precision, shape, gpu, grid, kernel)
            for t, shape in zip(fuses, shapes)]


def _cuda_core_side(cc_impl: ImplProfile | None, stencil: Stencil, dtype: str, gpu: GpuSpec,
                    fuses: list[int], grid=None) -> dict[str, list[float]]:
    """The CUDA-core terms a Tensor Core option is compared against (its R and scenario), per depth."""
    if cc_impl is None or cc_impl.why_not(stencil, dtype, gpu) is not None:
        return {}
    precision, _ = cc_impl.precision_for(dtype, gpu)
    found = _refinements(cc_impl, "cuda_core", stencil, fuses, dtype, precision, [None] * len(fuses), gpu, grid)
    return {name: [f.values[name] for f in found] for name in found[0].values} if found else {}


def _bundled_refined(impl: ImplProfile, variant: str) -> bool:
    """Whether ``impl`` is a bundled kernel evaluated with the refined model (its depths are then its kernel's)."""
    return variant == "refined" and bool(impl.kernel) and impl.tiling is not None and impl.tiling.launch == "kernel"


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
    option with ``skipped`` set and the reason; under ``refined``, a depth a bundled
    kernel refuses (:func:`tcadvisor.support.depth_refusal`: the kernel's own checks,
    then its plan's shared memory, tile and residency on this GPU) comes back
    unavailable with ``kernel_refused`` set.  Every available option carries the base
    model's bound at its own α, β and peak (``roof``).  ``grid`` ((nz, ny, nx)) is
    the grid the refined terms are derived for (default: the bundled kernels' default
    grid of the stencil's dimension); ``kernel`` a recorded run's kernel description,
    whose configuration the refined terms then describe instead of today's default.
    """
    variant = get_variant(model).name
    why = impl.why_not(stencil, dtype, gpu)
    if why is not None:
        return [_unavailable(unit, t, why, impl) for t in fuses]
    precision, _ = impl.precision_for(dtype, gpu)
    own_depths = _bundled_refined(impl, variant)
    S = BYTES[dtype]
    K = stencil.K
    rows: list[tuple[int, Fraction, ResolvedAlpha | None, tuple[float, str, str]]] = []
    out_of_budget: dict[int, str] = {}
    cannot: dict[int, str] = {}
    refused: dict[int, str] = {}
    wrong_mode: dict[int, str] = {}
    for t in fuses:
        resolved = None
        if unit != "cuda_core":
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
        if own_depths:
            from .support import depth_refusal

            no = depth_refusal(impl, stencil, t, dtype, precision, gpu, resolved.mma if resolved else None, grid)
            if no:
                refused[t] = f"{impl.name} cannot run t = {t} on {gpu.name}: {no}"
                continue
        if unit == "cuda_core":
            rows.append((t, Fraction(1), None, _peak(gpu, unit, precision, None)))
        else:
            rows.append((t, beta, resolved, _peak(gpu, unit, precision, resolved.mma)))
    options: dict[int, Option] = {t: _unavailable(unit, t, why_, impl, skipped=True)
                                  for t, why_ in out_of_budget.items()}
    options.update({t: _unavailable(unit, t, why_, impl) for t, why_ in cannot.items()})
    for t, why_ in refused.items():
        options[t] = _unavailable(unit, t, why_, impl)
        options[t].kernel_refused, options[t].model = True, variant
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
        inputs = dict(K=K, t=ts, beta=betas, alpha=alphas, S=S, B=gpu.bandwidth.value, P_cc=p_cc, P_tc=peaks)
        out = evaluate_model(**inputs, variant=variant, **terms)
        arrays = {k: np.broadcast_to(np.asarray(v, dtype=float), (len(rows),)) for k, v in out.items()}
        key = "gstencils_cc" if unit == "cuda_core" else "gstencils_tc"
        roofs = (arrays[key] if variant == "base" else
                 np.broadcast_to(np.asarray(evaluate_model(**inputs, variant="base")[key], dtype=float), (len(rows),)))
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
                roof=float(roofs[i]),
            )
            if opt.model == "refined":
                from .refinement import prediction_interval

                opt.interval = prediction_interval(unit, precision)
            if unit != "cuda_core" and cc_peak is not None:
                from .wording import decision_text

                opt.scenario = int(values["scenario"])
                opt.decision = decision_text(opt)
            elif unit != "cuda_core":
                for key_ in ("R", "R_ratio", "P_cc"):
                    opt.values[key_] = float("nan")
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
    """Per unit, for the base model: the implementation evaluated (the user's, else the preferred
    published one that runs this configuration) and, if none can, why."""
    out = {}
    for unit in UNITS:
        if impls and unit in impls:
            out[unit] = (impls[unit], None)
        else:
            out[unit] = choose_impl(unit, stencil, dtype, gpu)
    return out


@dataclass(frozen=True)
class UnitChoice:
    """What one unit is evaluated with: the implementation, why it is not available, the model, and why it fell back."""

    impl: ImplProfile
    why: str | None  # None: it runs this stencil in this dtype on this GPU (at some depth)
    model: str  # base | refined
    fallback: str | None = None  # why the published implementations and the base model (the GPU cannot run it)


def unit_choices(stencil: Stencil, dtype: str, gpu: GpuSpec, impls: dict[str, ImplProfile] | None = None,
                 model: str = "refined") -> dict[str, UnitChoice]:
    """Per unit: the implementation and model an answer uses.

    The user's implementation where one was named.  Otherwise, under ``refined``, the
    unit's bundled kernel, whatever it runs: a stencil or dtype it does not run makes
    the unit *not available* with the kernel's own reason (the answer is about the
    kernels that run), and only a GPU that cannot run the kernel at all
    (:func:`tcadvisor.support.gpu_refusal`) keeps the published implementations with
    the base model, with ``fallback`` saying why.  Under ``base``, the published
    implementations (:func:`implementations`).
    """
    from .gpu.registry import bundled_profile
    from .support import gpu_refusal, kernel_precision

    out = {}
    published = implementations(stencil, dtype, gpu, impls)
    for unit in UNITS:
        if (impls and unit in impls) or model == "base":
            out[unit] = UnitChoice(*published[unit], model)
            continue
        profile = bundled_profile(unit)
        precision, no_dtype = kernel_precision(profile, dtype)
        no_gpu = gpu_refusal(profile, gpu, precision)
        if no_gpu:
            out[unit] = UnitChoice(*published[unit], "base", no_gpu)
        else:
            out[unit] = UnitChoice(profile, no_dtype or profile.why_not(stencil, dtype, gpu), "refined")
    return out


def _grid(grid, stencil: Stencil) -> tuple[int, ...]:
    """The grid as extents of the stencil's dimensions ('10240x10240', (512, 512, 512)); a one-line error otherwise."""
    import itertools

    from .gpu.runner import parse_grid

    if not isinstance(grid, str):  # a sequence of extents, read no further than a 3D grid needs
        expected = "expected e.g. '10240x10240' or (10240, 10240), one extent per dimension of the stencil"
        try:
            extents = list(itertools.islice(iter(grid), 4))
        except TypeError:
            raise TcAdvisorError(f"grid {grid!r} ({type(grid).__name__}) is not understood; {expected}") from None
        if isinstance(grid, (bytes, dict)) or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer))
                                                  for v in extents):
            raise TcAdvisorError(f"grid {str(extents)[:60]} is not a list of integer extents; {expected}")
        if len(extents) != stencil.dims:
            raise TcAdvisorError(f"grid {'x'.join(map(str, extents))}{'...' if len(extents) > 3 else ''} does not "
                                 f"have {stencil.dims} extents (the stencil is {stencil.dims}D); {expected}")
        grid = tuple(int(v) for v in extents)
    return parse_grid(grid, stencil.dims)


#: Most time steps a query plans (its sweep plan is kept per option; the accuracy model's own limit).
MAX_STEPS = 10 ** 6


def check_steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        shown = repr(steps) if len(repr(steps)) <= 40 else repr(steps)[:37] + "..."
        raise TcAdvisorError(f"--steps {shown}: expected a whole number of time steps, at least 1")
    if steps > MAX_STEPS:
        shown = str(steps) if len(str(steps)) <= 20 else f"{str(steps)[:12]}... ({len(str(steps))} digits)"
        raise TcAdvisorError(f"--steps {shown} is out of range; expected a whole number of time steps from 1 to "
                             f"{MAX_STEPS}")
    return int(steps)


def _over_plan(option: Option, by_depth: dict[int, Option], steps: int) -> None:
    """Throughput and bound of ``option`` over the sweeps of ``steps`` steps at its depth (remainder included).

    Each sweep of depth d takes d/G(d) per point, so the run's throughput is the
    steps over the sum; a remainder sweep the unit cannot run makes the option
    unavailable, with the reason.
    """
    from .gpu.runner import sweep_plan  # the plan 'tcadvisor run' runs

    plan = sweep_plan(steps, option.fuse)
    option.sweeps = tuple(plan)
    if len(plan) == 1 or plan[-1] == option.fuse:
        return
    rest = by_depth.get(plan[-1])
    if rest is None or not rest.available:
        why = rest.reason if rest is not None else "not evaluated"
        option.available, option.reason = False, (f"{steps} steps leave a remainder sweep of t = {plan[-1]}, "
                                                  f"which cannot run: {why}")
        return
    full = len(plan) - 1
    option.plan_gstencils = steps / (full * option.fuse / option.steady_gstencils + plan[-1] / rest.steady_gstencils)
    option.plan_roof = steps / (full * option.fuse / option.roof + plan[-1] / rest.roof)


def command_line(stencil: str, fuse, dtype: str, gpu: str | None, impls: list[str], alpha, max_fuse, model,
                 grid, steps) -> str:
    """The query as a ``tcadvisor advise`` command (what a close verdict tells the user to run with --run)."""
    import shlex

    words = ["tcadvisor", "advise", stencil]
    for flag, value in (("--fuse", fuse), ("--dtype", dtype), ("--gpu", gpu), ("--alpha", alpha),
                        ("--max-fuse", max_fuse), ("--model", model), ("--grid", grid), ("--steps", steps)):
        if value is not None:
            words += [flag, str(value)]
    for name in impls:
        words += ["--impl", name]
    return " ".join(shlex.quote(w) for w in words)


def advise(stencil: "Stencil | StencilSource | str", dtype: str | None = None, gpu: "GpuSpec | str | None" = None,
           fuse: int | None = None, impls=None, alpha_choice: "AlphaChoice | str | float | None" = None,
           max_fuse: int | None = None, model: str | None = None, *,
           alpha: "AlphaChoice | str | float | None" = None, grid=None, steps: int | None = None) -> Advice:
    """Evaluate every unit for ``stencil`` and pick the best unit and fusion depth.

    Arguments are checked as the command line checks them and may be given as names:
    a stencil name or file (offsets, a ``.npy`` weight array, a C loop nest) or a
    :class:`~tcadvisor.sources.StencilSource` (:func:`tcadvisor.stencil_from`), a dtype
    name or alias (``fp64``; ``None``: the source's dtype where it has one, and
    ``advice.dtype_from`` says so, else double), a GPU key, alias
    or spec file (``None``: the embedded default), implementation names, how α is
    chosen (``alpha_choice``, or ``alpha=`` as the ``--alpha`` option spells it:
    ``"paper"``, ``"constructed"``, a number, an :class:`AlphaChoice`), the model
    variant (``refined``, the default: the bundled kernels where they run, see the
    module docstring; ``base``: the paper's model with the published
    implementations; ``None`` is ``refined``, except with ``alpha="paper"``, whose
    published constants belong to the published implementations, so ``base``, as
    ``advice.notes`` says), the grid the refined terms assume (``"10240x10240"``;
    default: the bundled kernels' default grid, as ``tcadvisor run``) and the time
    steps in all (``steps``; default: one sweep of t steps at each depth, as ``run``;
    otherwise sweeps of t steps and a shallower remainder sweep, and no depth beyond
    ``steps``).  Bad values raise :class:`~tcadvisor.errors.TcAdvisorError` with a
    one-line message.
    """
    from .arguments import as_dtype, as_gpu, as_impls, as_stencil

    if alpha is not None and alpha_choice is not None:
        raise TcAdvisorError("give α once: alpha_choice or alpha (the same argument), not both")
    from .sources import source_of

    stencil_arg = stencil
    source = source_of(stencil)
    # where the dtype came from, named as read_from names the source before its parenthesis: "weights.npy"
    dtype_from = (source.read_from.split(" (", 1)[0] if dtype is None and source is not None
                  and source.dtype is not None else None)
    if dtype is None:
        dtype = source.dtype if dtype_from is not None else "double"
    stencil, dtype, gpu = as_stencil(source if source is not None else stencil), as_dtype(dtype), as_gpu(gpu)
    chosen = as_impls(impls)
    choice = AlphaChoice.parse(alpha if alpha is not None else alpha_choice)
    notes: list[str] = [] if source is None else [n.rstrip(".") for n in source.notes]
    if model is None and choice.mode == "paper":
        variant = "base"
        notes.append("--alpha paper: the published constants belong to the published implementations, so they are "
                     "compared with the paper's model (--model base; --model refined asks about the bundled kernels)")
    else:
        variant = get_variant("refined" if model is None else model).name
    if fuse is not None:
        fuse = check_fuse(fuse)
    if max_fuse is None:
        max_fuse = DEFAULT_MAX_FUSE
    else:
        max_fuse = check_fuse(max_fuse)
        if fuse is not None and fuse > max_fuse:
            raise TcAdvisorError(f"--fuse {fuse} is deeper than --max-fuse {max_fuse}; raise --max-fuse or omit it")
    grid_given = grid is not None
    extents = _grid(grid, stencil) if grid_given else None
    if steps is not None:
        steps = check_steps(steps)
        if fuse is not None and fuse > steps:
            raise TcAdvisorError(f"--fuse {fuse} is deeper than --steps {steps}: a sweep cannot fuse more time steps "
                                 "than the run has; lower --fuse or raise --steps")
    # The best-depth search covers 1..max_fuse, plus the requested depth if it lies beyond.
    fuses = sorted(set(range(1, max_fuse + 1)) | ({fuse} if fuse else set()))
    too_deep = {t: f"a run of {steps} steps cannot fuse {t}" for t in fuses if steps is not None and t > steps}
    fuses = [t for t in fuses if t not in too_deep]
    evaluated = sorted(set(fuses) | ({steps % t for t in fuses if steps % t} if steps else set()))

    used = unit_choices(stencil, dtype, gpu, chosen, variant)
    refined_units = [u for u in UNITS if used[u].model == "refined" and used[u].why is None]
    if model is None and not refined_units and any(c.fallback for c in used.values()):
        variant = "base"  # the GPU runs no bundled kernel: the answer is the paper's, and the fallback lines say why
    if extents is None and any(used[u].impl.kernel for u in refined_units):
        from .gpu.plans import DEFAULT_GRIDS

        extents = tuple(DEFAULT_GRIDS[stencil.dims])
    grid3 = None if extents is None else (1,) * (3 - stencil.dims) + tuple(extents)
    cc = used["cuda_core"]
    cc_peak = None if cc.why else cuda_core_peak(cc.impl, stencil, dtype, gpu)
    by_depth: dict[str, dict[int, Option]] = {}
    for unit in UNITS:
        impl, why = used[unit].impl, used[unit].why
        if why is not None:
            opts = [_unavailable(unit, t, why, impl) for t in evaluated]
            for o in opts:
                o.model = used[unit].model
        else:
            opts = evaluate_unit(unit, impl, stencil, dtype, gpu, evaluated, choice, cc_peak, model=used[unit].model,
                                 cc_impl=None if cc.why else cc.impl, grid=grid3)
            mismatch = next((o.reason for o in opts if o.alpha_mode_error), None)
            if unit in chosen and mismatch:  # the user named both the implementation and an α it lacks
                raise AlphaModeError(mismatch)
        by_depth[unit] = {o.fuse: o for o in opts}
    # A Tensor Core option is compared with CUDA cores at its own depth: not where the CUDA-core kernel cannot run it.
    for opt in [*by_depth["tensor_core"].values(), *by_depth["sparse_tensor_core"].values()]:
        if opt.available and by_depth["cuda_core"][opt.fuse].kernel_refused:
            opt.scenario, opt.decision = None, None
            for key in ("R", "R_ratio"):
                opt.values[key] = float("nan")
    if steps is not None:
        for unit in UNITS:
            for t in fuses:
                opt = by_depth[unit][t]
                if opt.available:
                    _over_plan(opt, by_depth[unit], steps)
    per_unit = {unit: [by_depth[unit][t] for t in fuses] for unit in UNITS}

    skipped = dict(too_deep)
    for opts in per_unit.values():
        for o in opts:
            if o.skipped:
                skipped.setdefault(o.fuse, o.reason)
    if fuse is not None and fuse in skipped:
        raise WorkBudgetExceeded(skipped[fuse])
    unit_skipped = {unit: {o.fuse: o.reason.removeprefix(f"{o.impl.name} cannot run t = {o.fuse} on {gpu.name}: ")
                           for o in opts if o.kernel_refused} for unit, opts in per_unit.items()}
    best = {}
    for unit, opts in per_unit.items():
        pick = _pick(opts)
        best[unit] = pick if pick is not None else (by_depth[unit][fuse] if fuse is not None else opts[0])
    if fuse is not None:
        options = [by_depth[u][fuse] for u in UNITS]
    else:
        options = [best[u] for u in UNITS]
    overall = _pick([o for opts in per_unit.values() for o in opts])
    at_fuse = _pick(options) if fuse is not None else None
    searched = [t for t in fuses if t not in skipped]
    if grid_given and not refined_units:
        notes.append(f"--grid {'x'.join(map(str, extents))}: the base model does not depend on the grid")
    published = implementations(stencil, dtype, gpu, chosen)
    unavailable = [u for u in UNITS if used[u].model == "refined" and used[u].why and u not in chosen
                   and published[u][1] is None]  # where the base model has an implementation to offer
    if unavailable:
        notes.append(f"{' and '.join(UNIT_LABELS[u] for u in unavailable)}: no bundled kernel runs this here; "
                     "--model base gives the published implementations' bounds")
    advice = Advice(stencil, dtype, gpu, fuse, options, best, overall, "", max_fuse, at_fuse, searched, skipped,
                    variant, grid=extents if refined_units else None, grid_given=grid_given, steps=steps,
                    unit_skipped={u: v for u, v in unit_skipped.items() if v},
                    fallback={u: c.fallback for u, c in used.items() if c.fallback}, notes=notes,
                    by_depth=by_depth, source=source, dtype_from=dtype_from)
    alpha_text = None if choice.mode == "default" else (f"{float(choice.value):g}" if choice.mode == "value"
                                                        else choice.mode)
    advice.command = command_line(str(stencil_arg) if isinstance(stencil_arg, str) or hasattr(stencil_arg, "__fspath__")
                                  else stencil.name, fuse, dtype, gpu.key if gpu.bundled else str(gpu.path),
                                  [p.name for p in chosen.values()],
                                  alpha_text, None if max_fuse == DEFAULT_MAX_FUSE else max_fuse, model,
                                  None if not grid_given else "x".join(map(str, extents)), steps)
    from .wording import verdict_sentence

    advice.verdict_text = verdict_sentence(advice)
    return advice


def sweep(*args, **kwargs):
    """The model over a radius × depth grid as a DataFrame (see :func:`tcadvisor.sweeps.sweep`)."""
    from .sweeps import sweep as _sweep

    return _sweep(*args, **kwargs)
