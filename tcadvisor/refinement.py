"""The refined model's terms for one implementation and configuration.

The ``refined`` variant of :mod:`tcadvisor.model` has one term per effect the
paper's model leaves out (:data:`tcadvisor.model.TERMS`): the redundant work and
extra loads of tile halos, Tensor Core work beyond what α counts, achievable
fractions of the ceilings, the overlap of memory and compute phases, and the
on-chip capacity that limits the depth.  The equations of the terms live in the
model (:data:`tcadvisor.model.TERM_CHAINS`); this module supplies their *inputs*
for one option and evaluates them, one hook per term (named by
:attr:`tcadvisor.model.Term.hook`).

Where the inputs come from:

* a bundled kernel (profile ``tiling: launch: kernel``): its launch plan
  (:mod:`tcadvisor.gpu.plans`, the code the kernel itself launches with), the
  GPU spec's ``multiprocessors`` section (resident blocks and warps, clock) and
  the fitted constants of ``models/fitted/refined-terms.yaml``
  (``benchmarks/fit_refined.py``; docs/model.md gives their values and errors);
* a profile that declares its tile (``tiling: tile: ...``): the halo redundancy
  and the deepest fusion the tile holds; the other terms need a launch plan and
  keep their defaults;
* any other profile: none; the base model applies and the answer says so.

Every term carries a note saying how it was obtained, and :func:`refine`
returns the plan's quantities so that ``explain`` can print each derivation
with its numbers.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import sympy as sp

from . import model
from .data import data_dir
from .errors import TcAdvisorError
from .files import load_yaml
from .hardware import GpuSpec
from .impls import ImplProfile, Tiling
from .mma import MmaShape
from .stencil import MAX_FUSE, Stencil

#: Note of a term left at its default because nothing it needs is known.
NOT_DERIVED = "not derived: the base model's value"
#: Where the fitted constants live.
CONSTANTS_FILE = ("models", "fitted", "refined-terms.yaml")


@dataclass(frozen=True)
class Context:
    """Everything a hook may derive a term from: one implementation at one configuration."""

    impl: ImplProfile
    tiling: Tiling
    unit: str
    stencil: Stencil
    fuse: int
    dtype: str
    precision: str
    mma: MmaShape | None
    gpu: GpuSpec
    grid: tuple[int, int, int] | None = None  # (nz, ny, nx); None: the default grid of the dimension
    #: A recorded run's kernel description: its configuration replaces the default plan (see recorded_plan).
    kernel: str = ""


@dataclass(frozen=True)
class TermValue:
    value: float
    note: str  # how it was obtained, one clause


@dataclass(frozen=True)
class Refinement:
    """The terms of one option's unit, and whether the refined model applies to it at all."""

    applies: bool
    values: dict[str, float]  # term name (model.Term.name) -> value
    notes: dict[str, str]  # term name -> how it was obtained
    note: str  # one line: what the option is evaluated with
    inputs: dict = field(default_factory=dict)  # model symbol -> value the term chain was evaluated at


def unit_terms(unit: str) -> tuple[model.Term, ...]:
    """The refined terms of an execution unit (Sparse Tensor Cores share the Tensor Cores' terms)."""
    key = _chain_key(unit)
    return tuple(term for term in model.TERMS if term.unit == key)


def _chain_key(unit: str) -> str:
    return "cuda_core" if unit == "cuda_core" else "tensor_core"


def _default(ctx: Context, hook: str, note: str = NOT_DERIVED) -> TermValue:
    term = next(term for term in unit_terms(ctx.unit) if term.hook == hook)
    return TermValue(float(term.default), note)


# --------------------------------------------------------------------------- fitted constants


_OVERRIDE: list[dict] = []


def constants(gpu: GpuSpec | None = None) -> dict[sp.Symbol, float]:
    """The fitted constants, by model symbol, for a configuration on ``gpu``.

    Those of :func:`using_constants` inside its block (the fit evaluates candidate constants that
    way, so they win over everything); else the spec's own ``refined_constants`` where they were
    fitted for today's kernels (:func:`spec_constants`: ``calibrate --fit`` on that GPU, whose
    latencies and bandwidth fraction the bundled H100/H200 fit cannot know); else
    models/fitted/refined-terms.yaml.
    """
    if _OVERRIDE:
        return _OVERRIDE[-1]
    own = spec_constants(gpu)
    return own if own is not None else _file_constants()


#: Specs whose refined_constants were fitted for other kernels, said once per process and file.
_STALE_SAID: set[str] = set()


@lru_cache(maxsize=1)
def _kernels_now() -> str:
    """Today's kernel fingerprint, computed once per process (it hashes a few dozen source files)."""
    from .fingerprint import kernel_fingerprint

    return kernel_fingerprint()


def spec_constants(gpu: GpuSpec | None) -> dict[sp.Symbol, float] | None:
    """``gpu``'s own fitted constants (its ``refined_constants``), or None where it has none or they are stale.

    Stale: fitted for kernels whose fingerprint is not today's (a kernel, its launch plan or its
    defaults changed since ``calibrate --fit`` measured them), so they describe other code; the
    bundled constants are then used and stderr says so once per file.
    """
    own = getattr(gpu, "refined_constants", None)
    if own is None:
        return None
    try:
        now = _kernels_now()
    except TcAdvisorError as exc:  # a damaged installation: nothing says these constants are today's kernels'
        now, why = None, f"the kernels cannot be fingerprinted ({exc})"
    else:
        why = f"fitted for other kernels ({own.kernel_fingerprint}; these are {now})"
    if own.kernel_fingerprint != now:
        where = str(gpu.path)
        if where not in _STALE_SAID:
            _STALE_SAID.add(where)
            print(f"tcadvisor: note: {where}: refined_constants {why}, so the bundled constants apply; "
                  "run calibrate --fit again", file=sys.stderr)
        return None
    return {sym: float(own.values[sym.name]) for sym in model.FITTED}


def constants_source(gpu: GpuSpec | None = None) -> str:
    """Which constants :func:`constants` gives for ``gpu``, as a clause the answer carries (``model_note``)."""
    if _OVERRIDE:
        return "constants given to refinement.using_constants"
    own = getattr(gpu, "refined_constants", None)
    if own is not None and spec_constants(gpu) is not None:
        return f"constants fitted on this GPU (calibrate --fit, {own.fitted}, {own.runs} runs)"
    bundled = f"the bundled constants fitted on {_file_trained_on()} corpora"
    if own is not None:
        return f"{bundled} (this spec's calibrate --fit constants are for other kernels)"
    return bundled


@lru_cache(maxsize=1)
def _file_trained_on() -> str:
    """The GPUs the bundled constants were fitted on ("H100 and H200"), from the file's ``trained_on``."""
    path = data_dir(CONSTANTS_FILE[0]).joinpath(*CONSTANTS_FILE[1:])
    try:
        raw = load_yaml(path, "refined-model constants file") or {}
        gpus = [str(k) for k in raw.get("trained_on") or {}]
    except (AttributeError, TcAdvisorError):
        gpus = []
    if not gpus:
        return "the project's"
    return gpus[0] if len(gpus) == 1 else ", ".join(gpus[:-1]) + " and " + gpus[-1]


@contextmanager
def using_constants(values: dict[sp.Symbol, float]):
    """Evaluate the refined model with other fitted constants inside a ``with`` block (the fit's held-out runs)."""
    missing = [s.name for s in model.FITTED if s not in values]
    if missing:
        raise TcAdvisorError(f"constants missing: {', '.join(missing)}")
    _OVERRIDE.append(dict(values))
    _DERIVED.clear()
    try:
        yield
    finally:
        _OVERRIDE.pop()
        _DERIVED.clear()


@lru_cache(maxsize=1)
def _file_constants() -> dict[sp.Symbol, float]:
    path = data_dir(CONSTANTS_FILE[0]).joinpath(*CONSTANTS_FILE[1:])
    try:
        raw = load_yaml(path, "refined-model constants file")
        values = {sym: float(raw["constants"][sym.name]["value"]) for sym in model.FITTED}
    except (KeyError, TypeError, ValueError) as exc:  # TcAdvisorError is a ValueError
        raise TcAdvisorError(f"{path}: the refined model's fitted constants cannot be read ({exc}); "
                             "benchmarks/fit_refined.py writes them") from None
    return values


@lru_cache(maxsize=1)
def _file_intervals() -> dict[str, dict]:
    path = data_dir(CONSTANTS_FILE[0]).joinpath(*CONSTANTS_FILE[1:])
    try:
        raw = load_yaml(path, "refined-model constants file") or {}
    except TcAdvisorError:
        return {}
    found = raw.get("intervals") if isinstance(raw, dict) else None
    return found if isinstance(found, dict) else {}


@dataclass(frozen=True)
class Interval:
    """How far measurements fell from the refined prediction, on configurations the fit never saw.

    ``low`` and ``high`` are quantiles of measured/predicted over the leave-one-shape-out
    residuals of one unit and precision (``level`` of them lie between); ``n`` is how many
    held-out runs they come from.  A prediction ``p`` then has the interval [low·p, high·p].
    """

    low: float
    high: float
    level: float
    n: int
    source: str

    def around(self, prediction: float) -> tuple[float, float]:
        return self.low * prediction, self.high * prediction


def prediction_interval(unit: str, precision: str) -> Interval | None:
    """The cross-validated interval of the refined model for ``unit`` at ``precision`` (None: none recorded).

    Read from the ``intervals`` section of models/fitted/refined-terms.yaml, keyed
    ``unit/precision`` (written by the fit with the constants it goes with).
    """
    entry = _file_intervals().get(f"{unit}/{precision}")
    if not isinstance(entry, dict):
        return None
    try:
        return Interval(float(entry["low"]), float(entry["high"]), float(entry["level"]), int(entry["n"]),
                        str(entry.get("source", "leave-one-shape-out residuals")))
    except (KeyError, TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- the plan's quantities


def grid_of(ctx: Context) -> tuple[int, int, int]:
    """The (nz, ny, nx) grid the terms are derived for: the context's, else the default of the dimension."""
    from .gpu.plans import DEFAULT_GRIDS

    if ctx.grid is not None:
        return tuple(ctx.grid)
    return (1,) * (3 - ctx.stencil.dims) + tuple(DEFAULT_GRIDS[ctx.stencil.dims])


def recorded_plan(ctx: Context, description: str):
    """The plan a recorded run of a bundled kernel was made with: the configuration from the kernel's own
    description (defaults have changed between runs); without a description, today's default."""
    from .gpu import plans

    if ctx.impl.kernel == "cuda_cores" and description:
        return plans.recorded_cuda_core_plan(ctx.stencil, ctx.fuse, ctx.precision, description)
    if ctx.impl.kernel == "tensor_cores" and description:
        return plans.recorded_tensor_core_plan(ctx.stencil, ctx.fuse, ctx.precision, description)
    if ctx.impl.kernel == "sparse_tensor_cores" and description:
        return plans.recorded_sparse_tensor_core_plan(ctx.stencil, ctx.fuse, ctx.precision, description)
    return plan_for(ctx.impl.kernel, ctx.stencil, ctx.fuse, ctx.precision, ctx.mma)


def plan_for(kernel: str, stencil: Stencil, fuse: int, precision: str, mma: MmaShape | None):
    """The launch plan of bundled kernel ``kernel`` (raises TcAdvisorError where it cannot be built)."""
    from .gpu import plans

    if kernel == "cuda_cores":
        return plans.plan_cuda_cores(stencil, fuse, precision)
    if kernel == "tensor_cores":
        if mma is None:
            raise TcAdvisorError("the dense Tensor Core kernel's plan needs its MMA instruction")
        return plans.plan_tensor_cores(stencil, fuse, precision, mma)
    if kernel == "sparse_tensor_cores":
        return plans.plan_sparse_tensor_cores(stencil, fuse, precision)
    raise TcAdvisorError(f"no launch planner for the bundled kernel {kernel!r}")


def cannot_run(ctx: Context, fuse: int) -> str | None:
    """Why the bundled kernel of ``ctx`` cannot run depth ``fuse`` on ``ctx.gpu`` (None: it can).

    The kernel's own refusals (fused radius, row masks, precision) and its plan's:
    a halo wider than the tile, shared memory beyond what one block may have, or
    a block too large to be resident at all.
    """
    from .gpu import registry

    cls = registry.kernel_class(ctx.impl.kernel)
    why = cls.unsupported(ctx.stencil, fuse, ctx.dtype, ctx.precision)
    if why:
        return why
    try:  # the instruction does not change whether a depth fits (no shared memory on Tensor Cores)
        plan = plan_for(ctx.impl.kernel, ctx.stencil, fuse, ctx.precision, ctx.mma)
    except TcAdvisorError as exc:
        return str(exc)
    sm = ctx.gpu.multiprocessors
    if sm is not None and plan.smem > sm.shared_memory_per_block:
        return (f"{plan.smem / 1024:.0f} KiB of shared memory per block; {ctx.gpu.name} allows "
                f"{sm.shared_memory_per_block / 1024:.0f} KiB")
    if sm is not None and plan.occupancy(sm).blocks == 0:
        return f"a block of {plan.threads} threads and {plan.smem / 1024:.0f} KiB is never resident on {ctx.gpu.name}"
    return None


def _occupancy_note(occ, plan) -> str:
    from .gpu.plans import registers_from_compiler

    counted = registers_from_compiler(plan)
    regs = f"{plan.registers} registers (estimated)" if counted is None else f"{counted} registers (nvcc for sm_90)"
    return f"{occ.describe()}; {plan.threads} threads, {plan.smem / 1024:.0f} KiB shared, {regs}"


def plan_inputs(ctx: Context, plan=None, registers: int | None = None) -> tuple[dict, object, object, dict]:
    """The term chain's inputs for a bundled kernel: (symbol -> value, plan, occupancy, sweep counts).

    Everything but the fitted constants: the plan's counts, the sweep over the
    context's grid, the occupancy on the spec's multiprocessors, the ceilings.
    ``plan`` replaces the default plan (a kernel with non-default knobs) and
    ``registers`` the register estimate (a count the compiler reported).
    """
    plan = plan or recorded_plan(ctx, ctx.kernel)
    sm = ctx.gpu.multiprocessors
    occ = plan.occupancy(sm, registers)
    if occ.blocks == 0:
        raise TcAdvisorError(f"{ctx.impl.name}: a block of this configuration is never resident on {ctx.gpu.name}")
    counts = plan.sweep_counts(grid_of(ctx), sm.count * occ.blocks)
    S = plan.element_bytes  # noqa: N806
    values = {model.N_sm: sm.count, model.f_clk: sm.clock, model.W_sm: occ.warps, model.N_b: occ.blocks,
              model.S: S, model.B: ctx.gpu.bandwidth.value, model.e_s: counts["slices_executed"],
              model.a_x: counts["tile_x"], model.a_y: counts["tile_y"], model.q_s: counts["slices_read"]}
    if plan.unit == "cuda_core":
        v, r = plan.options["v"], ctx.stencil.radius
        w = plan.options.get("w", 1)  # 3D: rows per thread share their 2r halo rows
        loads = (v + 2 * r) / v * (1 if plan.dims <= 2 else (2 * r + w) / w)  # one row (2D), 2r+w rows per w (3D)
        if plan.options.get("keep"):  # 2D, own columns kept: steps 2..t read only their 2r halo columns
            loads = (v + 2 * r + (plan.fuse - 1) * 2 * r) / (plan.fuse * v)
        stores = 1
        if plan.options.get("layout") == "tile1d":  # 1D: points in registers, only the 2r edges cross threads
            loads = stores = 2 * r / v
        per_load = plan.options.get("values_per_load", 1)  # the 3D kernel's vector loads (vector_loads)
        pending = 2 * (plan.options["ry"] if plan.dims <= 2 else r)
        words = 2 if plan.precision == "fp64" else 1
        rows = plan.slices_per_step * (plan.tile["y"] if plan.dims == 3 else 1)
        lanes = plan.lanes  # FP16/BF16: every instruction updates one point of each of two tiles
        values.update({model.K: ctx.stencil.K, model.P_cc: ctx.gpu.peak("cuda_core", ctx.precision),
                       model.n_ld: loads, model.n_vl: per_load, model.n_st: stores, model.n_mv: pending * words,
                       model.n_w: words,
                       model.n_l: lanes, model.n_it: plan.threads * v * plan.slices_per_step * plan.fuse * lanes,
                       model.q_b: rows * plan.tile["x"] * S * plan.options.get("prefetch", 1) * lanes})
    else:
        rate = ctx.gpu.instruction_peak(ctx.unit, ctx.precision, plan.mma)
        # slices in flight per warp: the one multiplied and those loaded ahead into registers, or the stages in
        # shared memory (stages - 1 in flight while one is multiplied: as many as a prefetch of stages - 1)
        prefetch = plan.options["stages"] - 1 if plan.options.get("stages") else plan.options["prefetch"]
        # input rows per slice whose bytes a warp keeps in flight to DRAM: in 3D a warp loads the ni + ir - 1 rows
        # of its ir inner rows, but the ni - 1 halo rows are the inner rows of the warps beside it along y, read
        # from L2 (each row comes from DRAM once), so ir rows count (Little's law is DRAM's: the bytes in flight
        # to it over its latency); in 2D one row per slice (its ir x tiles are in the tile's width already).
        # Counting all ni + ir - 1 rows had over-predicted the 3D Tensor Core kernels by a median of 37-38 % held
        # out (docs/model.md, "DRAM rows in flight in 3D").
        rows_dram = plan.options.get("ir", 1) if plan.dims == 3 else plan.options["ni"]
        values.update({model.P_tc: rate.value if rate is not None else ctx.gpu.peak(ctx.unit, ctx.precision),
                       model.m_I: plan.mma.m, model.n_I: plan.mma.n, model.k_I: plan.mma.k,
                       model.n_im: plan.instructions_per_mma, model.n_ob: plan.operand_bytes_per_mma,

                       model.q_b: plan.tiles_per_block * plan.tile["x"] * S * rows_dram * (1 + prefetch)})
    return values, plan, occ, counts


def evaluate_chain(unit: str, inputs: dict, fitted: dict | None = None,
                   gpu: GpuSpec | None = None) -> dict[str, float]:
    """Every step of ``unit``'s term chain at ``inputs`` and the fitted constants (default: :func:`constants`
    for ``gpu``: its own where it has usable ones, else the YAML's)."""
    values = {**inputs, **(constants(gpu) if fitted is None else fitted)}
    out = {}
    for eq in model.TERM_CHAINS[_chain_key(unit)]:
        fn, args = model.term_function(_chain_key(unit), eq.name)
        out[eq.name] = float(fn(*(values[a] for a in args)))
    return out


_DERIVED: dict = {}
_LIMITS: dict = {}


def _key(ctx: Context) -> tuple:
    st = ctx.stencil
    return (ctx.impl.name, ctx.unit, st.name, st.shape, st.dims, st.radius, tuple(st.offsets) if st.shape == "custom"
            else None, ctx.fuse, ctx.dtype, ctx.precision, str(ctx.mma), ctx.gpu.name, str(ctx.gpu.path),
            ctx.grid, ctx.kernel, _constants_key(ctx.gpu))


def _constants_key(gpu: GpuSpec) -> tuple | None:
    """What of a spec's own constants the memoised chain depends on (two files at one path may differ)."""
    own = getattr(gpu, "refined_constants", None)
    return None if own is None else (own.kernel_fingerprint, tuple(sorted(own.values.items())))


def _derive(ctx: Context) -> dict:
    """The chain's values for a bundled kernel, with the plan and occupancy (memoised per configuration)."""
    key = _key(ctx)
    if key not in _DERIVED:
        if len(_DERIVED) > 4096:
            _DERIVED.clear()
        inputs, plan, occ, counts = plan_inputs(ctx)
        _DERIVED[key] = {"inputs": inputs, "plan": plan, "occ": occ, "counts": counts,
                         "steps": evaluate_chain(ctx.unit, inputs, gpu=ctx.gpu)}
    return _DERIVED[key]


def _bundled(ctx: Context) -> bool:
    return ctx.tiling.launch == "kernel" and bool(ctx.impl.kernel)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


# --------------------------------------------------------------------------- hooks (one per term)


def halo_redundancy(ctx: Context) -> TermValue:
    """h_cc: FLOPs the CUDA-core tiles execute per useful FLOP (overlapped halos and pipeline start-up)."""
    if _bundled(ctx):
        d = _derive(ctx)
        i, plan = d["inputs"], d["plan"]
        tile = "x".join(str(plan.tile[a]) for a in ("x", "y") if a in plan.tile)
        own = "x".join(str(plan.outputs[a]) for a in ("x", "y") if a in plan.outputs)
        return TermValue(d["steps"]["h_cc"], f"e_s·a_x·a_y = {_fmt(i[model.e_s])}·{_fmt(i[model.a_x])}·"
                                             f"{_fmt(i[model.a_y])}: tiles of {tile} points own {own} "
                                             f"(halo {plan.halo}), each chunk recomputes its start-up rows")
    if ctx.tiling.tile:
        halo = ctx.stencil.radius * ctx.fuse
        h = 1.0
        for axis, size in ctx.tiling.tile.items():
            own = size - 2 * halo
            if own <= 0:
                return _default(ctx, "halo_redundancy", f"the declared tile ({size} along {axis}) is narrower than "
                                                        f"its halo; see t_max")
            h *= size / own
        return TermValue(h, f"declared tile {ctx.tiling.tile} with a halo of r·t = {halo} on each side")
    return _default(ctx, "halo_redundancy")


def halo_bytes(ctx: Context) -> TermValue:
    """m_cc: DRAM bytes per output point and sweep that CUDA-core tiles load beyond one read and one write."""
    if _bundled(ctx):
        d = _derive(ctx)
        return TermValue(d["steps"]["m_cc"], f"S·(q_s − 1) with q_s = {_fmt(d['inputs'][model.q_s])}: each chunk "
                                             f"of {d['counts']['per']} slices loads its halo slices again; halos "
                                             "across neighbouring tiles hit L2")
    return _default(ctx, "halo_bytes")


def tile_padding(ctx: Context) -> TermValue:
    """k_tc: Tensor Core work per MAC that α counts (pipeline start-up and partial warp tiles α leaves out)."""
    if _bundled(ctx):
        d = _derive(ctx)
        i = d["inputs"]
        return TermValue(d["steps"]["k_tc"], f"e_s·a_x = {_fmt(i[model.e_s])}·{_fmt(i[model.a_x])}: K padding is in "
                                             "α already; each chunk recomputes its start-up slices, the last warp "
                                             "tile of a row is partial")
    return _default(ctx, "tile_padding")


def tile_bytes(ctx: Context) -> TermValue:
    """m_tc: DRAM bytes per output point and sweep that Tensor Core tiles load beyond one read and one write."""
    if _bundled(ctx):
        d = _derive(ctx)
        return TermValue(d["steps"]["m_tc"], f"S·(q_s − 1) with q_s = {_fmt(d['inputs'][model.q_s])}: each chunk "
                                             f"of {d['counts']['per']} slices loads its halo slices again; halos "
                                             "across warp tiles hit L1/L2")
    return _default(ctx, "tile_bytes")


def compute_fraction(ctx: Context) -> TermValue:
    """η: fraction of the spec's peak for the instruction executed that the kernel can issue."""
    if not _bundled(ctx):
        return _default(ctx, "compute_fraction")
    d = _derive(ctx)
    s, occ = d["steps"], d["occ"]
    if ctx.unit == "cuda_core":
        pipes = {"FMA": s["c_fma"], "shared memory": s["c_sh"], "issue": s["c_is"]}
        bound = max(pipes, key=pipes.get)
        return TermValue(s["eta_cc"], f"c_fma/(max(c_fma, c_sh, c_is) + c_lat) = {_fmt(s['c_fma'])}/({_fmt(max(pipes.values()))}"
                                      f" + {_fmt(s['c_lat_cc'])}) cycles per update: the {bound} pipe binds, latency "
                                      f"at {_occupancy_note(occ, d['plan'])}")
    binds = ("the instruction's own rate" if s["c_mma"] >= s["c_op"] else
             f"its operands through L1/shared memory ({_fmt(d['inputs'][model.n_ob])} bytes per MMA) bind")
    return TermValue(s["eta_tc"], f"c_mma/(max(c_mma, c_op) + c_lat) = {_fmt(s['c_mma'])}/(max({_fmt(s['c_mma'])}, "
                                  f"{_fmt(s['c_op'])}) + {_fmt(s['c_lat_tc'])}) cycles per {d['plan'].mma}: {binds}, "
                                  f"latency of {_fmt(d['inputs'][model.n_im])} instructions per MMA at "
                                  f"{_occupancy_note(occ, d['plan'])}")


def bandwidth_fraction(ctx: Context) -> TermValue:
    """η_B: fraction of the spec's DRAM bandwidth that the kernel's bytes in flight sustain."""
    if not _bundled(ctx):
        return _default(ctx, "bandwidth_fraction")
    d = _derive(ctx)
    name = "eta_B_cc" if ctx.unit == "cuda_core" else "eta_B_tc"
    i = d["inputs"]
    flight = i[model.q_b] * i[model.N_b] / 1024
    if ctx.unit == "cuda_core":  # the bytes are in flight for the latency, not while a warp works (t_it)
        return TermValue(d["steps"][name], f"1/(1/η^B_0 + (L_mem + t_it)·B/(N_b·q_b·N_sm)): {flight:.3g} KiB in "
                                           f"flight per SM ({d['occ'].blocks} blocks x {i[model.q_b] / 1024:.3g} "
                                           f"KiB) for the latency and not the {d['steps']['t_it'] * 1e9:.3g} ns "
                                           "a warp then works per iteration")
    return TermValue(d["steps"][name], f"1/(1/η^B_0 + L_mem·B/(N_b·q_b·N_sm)): {flight:.3g} KiB in flight per SM "
                                       f"({d['occ'].blocks} blocks x {i[model.q_b] / 1024:.3g} KiB)")


def overlap(ctx: Context) -> TermValue:
    """ω: how far a tile's memory and compute phases overlap (1: the roofline's max, 0: their sum)."""
    if not _bundled(ctx):
        return _default(ctx, "overlap")
    return TermValue(1.0, "the phases overlap (the max of the two times): what keeps a kernel below both roofs "
                          "is latency at its occupancy, which η and η^B carry (fitted with ω free, ω came out ≈ 1)")


def depth_limit(ctx: Context) -> TermValue:
    """t_max: the deepest fusion the kernel can run at all (its shared memory, tile and instruction limits)."""
    if _bundled(ctx):
        full = _key(ctx)  # every depth (and instruction) of this configuration has the same limit
        key = full[:7] + full[8:10] + full[11:]
        if key not in _LIMITS:
            _LIMITS[key] = TermValue(float("inf"), f"every depth up to {MAX_FUSE} runs")
            for t in range(1, MAX_FUSE + 1):
                why = cannot_run(ctx, t)
                if why:
                    _LIMITS[key] = TermValue(float(t - 1), f"t = {t} cannot run: {why}")
                    break
        return _LIMITS[key]
    if ctx.tiling.tile:
        narrowest = min(ctx.tiling.tile.values())
        deepest = (narrowest - 1) // (2 * ctx.stencil.radius)
        return TermValue(float(deepest), f"the declared tile's {narrowest} points hold a halo of r·t on both sides "
                                         f"for t ≤ {deepest}")
    return _default(ctx, "depth_limit")


HOOKS: dict[str, Callable[[Context], TermValue]] = {
    fn.__name__: fn for fn in (halo_redundancy, halo_bytes, tile_padding, tile_bytes, compute_fraction,
                               bandwidth_fraction, overlap, depth_limit)
}


def refine(impl: ImplProfile, unit: str, stencil: Stencil, fuse: int, dtype: str, precision: str,
           mma: MmaShape | None, gpu: GpuSpec, grid: tuple[int, int, int] | None = None,
           kernel: str = "") -> Refinement:
    """The refined terms of ``impl`` running ``stencil`` fused ``fuse`` times, or why they do not apply.
    ``kernel``: a recorded run's kernel description, whose configuration replaces the default plan."""
    terms = unit_terms(unit)

    def base(why: str) -> Refinement:
        return Refinement(applies=False, values={term.name: float(term.default) for term in terms},
                          notes={term.name: f"{why.split(':')[0]}: the base model's value" for term in terms},
                          note=why)

    if impl.tiling is None:
        return base(f"{impl.name} declares no tiling, so the base model applies with {gpu.name}'s ceilings "
                    "(a calibrated spec gives measured ones)")
    if impl.tiling.launch == "kernel" and gpu.multiprocessors is None:
        return base(f"{gpu.name}'s spec has no multiprocessors section (SMs, shared memory, clock), so the "
                    f"refined model cannot size {impl.name}'s occupancy: the base model applies")
    ctx = Context(impl, impl.tiling, unit, stencil, fuse, dtype, precision, mma, gpu, grid, kernel)
    limit_term = next(term for term in terms if term.hook == "depth_limit")
    limit = HOOKS["depth_limit"](ctx)
    if fuse > limit.value:  # the other terms need a plan this depth does not have
        values = {term.name: float(term.default) for term in terms}
        notes = {term.name: f"t = {fuse} beyond t_max: the base model's value" for term in terms}
        values[limit_term.name], notes[limit_term.name] = limit.value, limit.note
        return Refinement(True, values, notes, f"{impl.name} cannot run t = {fuse}: {limit.note}")
    values, notes = {}, {}
    for term in terms:
        got = limit if term is limit_term else HOOKS[term.hook](ctx)
        values[term.name], notes[term.name] = got.value, got.note
    inputs = {}
    if _bundled(ctx):
        d = _derive(ctx)
        inputs = {**d["inputs"], **constants(gpu)}
    derived = sum(not note.startswith(NOT_DERIVED) for note in notes.values())
    if derived == 0:
        note = f"refined model from {impl.name}'s tiling: no term derived, so the base model's values"
    else:
        src = "launch plan" if _bundled(ctx) else "declared tile"
        note = (f"refined model from {impl.name}'s {src}: {derived} of {len(terms)} terms derived"
                + ("; the others take the base model's values" if derived < len(terms) else "")
                + (f"; {constants_source(gpu)}" if _bundled(ctx) else ""))
    return Refinement(True, values, notes, note, inputs)
