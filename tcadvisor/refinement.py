"""The refined model's terms for one implementation and configuration.

The ``refined`` variant of :mod:`tcadvisor.model` has one term per effect the
paper's model leaves out (:data:`tcadvisor.model.TERMS`): the redundant work and
extra loads of tile halos, Tensor Core work beyond what α counts, achievable
fractions of the ceilings, the overlap of memory and compute phases, and the
on-chip capacity that limits the depth.  The equations that use the terms live
in the model; this module supplies their *values* for one option, one hook per
term (named by :attr:`tcadvisor.model.Term.hook`), from what is known about how
the implementation tiles the grid (its profile's ``tiling`` section) and from
the GPU spec.

Why only implementations with a known tiling: every term is a property of a
kernel's tiles (their halo, their shared memory, their instruction stream), so
for an implementation that declares none the honest answer is the base model
with the spec's ceilings (measured ones, if the spec is a calibration), and the
answer says so in one line.

Status: the terms are not derived yet; deriving them needs the validation
suite's measurements (``docs/model.md``, "The refined variant").  Until then
every hook returns its term's default, so ``--model refined`` gives the base
model's numbers and each term's note says that it is not derived.  A derivation,
once made, belongs in :mod:`tcadvisor.model` as a SymPy expression of the tile
parameters; the hook evaluates it for the :class:`Context` it is given.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import model
from .hardware import GpuSpec
from .impls import ImplProfile, Tiling
from .mma import MmaShape
from .stencil import Stencil

#: Note of a term whose derivation is still to come.
NOT_DERIVED = "not derived yet: the base model's value"


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


def unit_terms(unit: str) -> tuple[model.Term, ...]:
    """The refined terms of an execution unit (Sparse Tensor Cores share the Tensor Cores' terms)."""
    key = "cuda_core" if unit == "cuda_core" else "tensor_core"
    return tuple(term for term in model.TERMS if term.unit == key)


def _default(ctx: Context, hook: str) -> TermValue:
    term = next(term for term in unit_terms(ctx.unit) if term.hook == hook)
    return TermValue(float(term.default), NOT_DERIVED)


# --------------------------------------------------------------------------- hooks (one per term)


def halo_redundancy(ctx: Context) -> TermValue:
    """h_cc: FLOPs the CUDA-core tiles execute per useful FLOP (overlapped halos recomputed)."""
    return _default(ctx, "halo_redundancy")


def halo_bytes(ctx: Context) -> TermValue:
    """m_cc: DRAM bytes per output point and sweep that CUDA-core tiles load beyond one read and one write."""
    return _default(ctx, "halo_bytes")


def tile_padding(ctx: Context) -> TermValue:
    """k_tc: Tensor Core work per MAC that α counts (K padding or partial tiles α leaves out)."""
    return _default(ctx, "tile_padding")


def tile_bytes(ctx: Context) -> TermValue:
    """m_tc: DRAM bytes per output point and sweep that Tensor Core tiles load beyond one read and one write."""
    return _default(ctx, "tile_bytes")


def compute_fraction(ctx: Context) -> TermValue:
    """η: fraction of the spec's peak for the instruction executed that the kernel can issue."""
    return _default(ctx, "compute_fraction")


def bandwidth_fraction(ctx: Context) -> TermValue:
    """η_B: fraction of the spec's DRAM bandwidth that the kernel's access pattern reaches."""
    return _default(ctx, "bandwidth_fraction")


def overlap(ctx: Context) -> TermValue:
    """ω: how far a tile's memory and compute phases overlap (1: the roofline's max, 0: their sum)."""
    return _default(ctx, "overlap")


def depth_limit(ctx: Context) -> TermValue:
    """t_max: the deepest fusion whose shared memory and registers fit on one SM."""
    return _default(ctx, "depth_limit")


HOOKS: dict[str, Callable[[Context], TermValue]] = {
    fn.__name__: fn for fn in (halo_redundancy, halo_bytes, tile_padding, tile_bytes, compute_fraction,
                               bandwidth_fraction, overlap, depth_limit)
}


def refine(impl: ImplProfile, unit: str, stencil: Stencil, fuse: int, dtype: str, precision: str,
           mma: MmaShape | None, gpu: GpuSpec) -> Refinement:
    """The refined terms of ``impl`` running ``stencil`` fused ``fuse`` times, or why they do not apply."""
    terms = unit_terms(unit)
    if impl.tiling is None:
        return Refinement(
            applies=False,
            values={term.name: float(term.default) for term in terms},
            notes={term.name: "no tiling declared: the base model's value" for term in terms},
            note=(f"{impl.name} declares no tiling, so the base model applies with {gpu.name}'s ceilings "
                  "(a calibrated spec gives measured ones)"),
        )
    ctx = Context(impl, impl.tiling, unit, stencil, fuse, dtype, precision, mma, gpu)
    values, notes = {}, {}
    for term in terms:
        got = HOOKS[term.hook](ctx)
        values[term.name], notes[term.name] = got.value, got.note
    derived = sum(note != NOT_DERIVED for note in notes.values())
    if derived == 0:
        note = f"refined model from {impl.name}'s tiling: no term derived yet, so the base model's values"
    else:
        note = (f"refined model from {impl.name}'s tiling: {derived} of {len(terms)} terms derived"
                + ("; the others take the base model's values" if derived < len(terms) else ""))
    return Refinement(True, values, notes, note)
