"""Implementation profiles: one YAML file per stencil implementation in ``models/``.

A profile says which execution unit an implementation runs on, how it fuses
time steps (``temporal``: CUDA cores reusing intermediates on chip; ``kernel``:
Tensor Cores computing the fused stencil monolithically), which precision it
uses for each dtype, which MMA instruction, and how its sparsity factor α is
obtained: the constant its paper used and/or the name of a transformation in
:mod:`tcadvisor.transforms` that constructs its operands.  A profile of a
bundled kernel also names it (``kernel: <module in tcadvisor/gpu/>``), which is
how ``tcadvisor run`` finds the code that runs it (:mod:`tcadvisor.gpu.registry`).
An optional ``tiling``
section says how it tiles the grid, which the refined model needs (the format
is in ``docs/model.md``, "Tiling in implementation profiles").
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from .data import data_dir
from .dtypes import BYTES
from .errors import TcAdvisorError
from .hardware import PRECISIONS, UNITS, GpuSpec
from .mma import MmaShape
from .stencil import Stencil

FUSION_STYLES = ("temporal", "kernel")
#: Implementations the advisor compares when the user names none, per unit, in order of
#: preference: the paper's choices first (EBISU, ConvStencil, SPIDER), then whatever
#: runs the dtype where those have no variant (TCStencil and the bundled kernels for
#: half and bfloat16; a generic temporal-blocking model on CUDA cores).  Names absent
#: from the catalogue are skipped.
DEFAULT_IMPLS = {
    "cuda_core": ("EBISU", "Temporal-blocking"),
    "tensor_core": ("ConvStencil", "TCStencil", "tcadvisor-tc"),
    "sparse_tensor_core": ("SPIDER", "SparStencil", "tcadvisor-sptc"),
}


@dataclass(frozen=True)
class AlphaSource:
    paper: Fraction | None = None
    paper_note: str = ""
    construction: str | None = None
    construction_note: str = ""
    #: The construction's own options as the implementation builds its operands (the bundled sparse kernel's
    #: L = 16 at every radius), as (name, value) pairs; () for the construction's defaults.
    construction_options: tuple = ()


#: Axes a tiling may name.
AXES = ("x", "y", "z")


@dataclass(frozen=True)
class Tiling:
    """How an implementation tiles the grid: what the refined model's terms are derived from.

    Either the tile is declared (``tile``: points one block holds along each tiled axis,
    halo included, and optionally the streamed axis, threads, shared memory and
    registers), or ``launch = "kernel"`` says that the bundled kernel's own launch code
    sizes the tiles for each configuration.
    """

    tile: Mapping[str, int] = field(default_factory=dict)  # axis -> points per block, halo included
    stream: str | None = None  # the axis each block sweeps (no tile, no halo along it)
    threads: int | None = None  # per block
    shared_memory: int | None = None  # bytes per block
    registers: int | None = None  # per thread
    launch: str | None = None  # "kernel": the bundled kernel's launch code sizes the tiles


@dataclass(frozen=True)
class ImplProfile:
    key: str
    name: str
    unit: str
    fusion: str
    summary: str
    precisions: Mapping[str, tuple[str, ...]]  # dtype -> preferred precisions
    mma: Mapping[str, tuple[MmaShape, ...]] = field(default_factory=dict)  # precision -> shapes, preferred first
    alpha: AlphaSource | None = None
    shapes: tuple[str, ...] = ("box", "star", "custom")
    dims: tuple[int, ...] = (1, 2, 3)
    symmetric_only: bool = False
    reference: str = ""
    path: Path | None = None
    kernel: str | None = None  # registry name of the bundled kernel that runs this profile (tcadvisor.gpu)
    tiling: Tiling | None = None  # None: not declared, so the refined model does not apply

    def precision_for(self, dtype: str, gpu: GpuSpec) -> tuple[str | None, str | None]:
        """The precision this implementation uses for ``dtype`` on ``gpu``, or why none."""
        wanted = self.precisions.get(dtype)
        if not wanted:
            have = ", ".join(self.precisions) or "none"
            return None, f"{self.name} has no {dtype} variant (it supports: {have})"
        for precision in wanted:
            if gpu.has(self.unit, precision):
                return precision, None
        return None, f"{gpu.name} has no {'/'.join(wanted).upper()} on its {self.unit.replace('_', ' ')}s"

    def unsupported(self, stencil: Stencil) -> str | None:
        """Why this implementation cannot run ``stencil`` (``None`` if it can).

        A bundled kernel's profile asks the kernel (its class's own refusals at t = 1,
        :func:`tcadvisor.support.stencil_refusal`), so that what the advisor says it runs
        is what it accepts; published implementations use the profile's lists.
        """
        if self.kernel:  # in any of its dtypes
            from .support import stencil_refusal

            reasons = [stencil_refusal(self, stencil, dtype) for dtype in self.precisions]
            return None if None in reasons else reasons[0]
        if stencil.dims not in self.dims:
            return f"{self.name} supports {'/'.join(f'{d}D' for d in self.dims)} stencils only"
        if stencil.shape not in self.shapes:
            return f"{self.name} supports {', '.join(self.shapes)} stencils only"
        if self.symmetric_only and not stencil.is_symmetric:
            return f"{self.name} requires a symmetric stencil"
        return None

    def why_not(self, stencil: Stencil, dtype: str, gpu: GpuSpec) -> str | None:
        """Why this implementation cannot run ``stencil`` in ``dtype`` on ``gpu`` (``None``: it can)."""
        if self.kernel:
            from .support import stencil_refusal

            return stencil_refusal(self, stencil, dtype) or self.precision_for(dtype, gpu)[1]
        return self.unsupported(stencil) or self.precision_for(dtype, gpu)[1]


def _fail(path: Path, where: str, problem: str) -> TcAdvisorError:
    return TcAdvisorError(f"implementation profile {path}: field '{where}': {problem}")


def _fraction(path: Path, where: str, value: Any) -> Fraction:
    try:
        frac = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise _fail(path, where, f"expected a number or fraction such as 0.5 or 15/32, got {value!r}") from None
    if not 0 < frac <= 1:
        raise _fail(path, where, f"α must lie in (0, 1], got {value!r}")
    return frac


def _positive_int(path: Path, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(path, where, f"expected a positive integer, got {value!r}")
    return value


_TILING_KEYS = ("tile", "stream", "threads", "shared_memory", "registers", "launch")


def parse_tiling(raw: Any, path: Path) -> Tiling:
    """The optional ``tiling`` section of a profile (format: ``docs/model.md``)."""
    if not isinstance(raw, Mapping):
        raise _fail(path, "tiling", "expected a mapping with 'tile' (and optionally 'stream', 'threads', "
                                    "'shared_memory', 'registers') or 'launch: kernel'")
    unknown = [k for k in raw if k not in _TILING_KEYS]
    if unknown:
        raise _fail(path, f"tiling.{unknown[0]}", f"unknown key; expected some of {', '.join(_TILING_KEYS)}")
    launch = raw.get("launch")
    if launch is not None and launch != "kernel":
        raise _fail(path, "tiling.launch", f"expected 'kernel' (the bundled kernel's launch code), got {launch!r}")
    tile_raw = raw.get("tile")
    if tile_raw is None and launch is None:
        raise _fail(path, "tiling", "declare the tile ('tile: {x: 256}') or 'launch: kernel'")
    tile = {}
    if tile_raw is not None:
        if not isinstance(tile_raw, Mapping) or not tile_raw:
            raise _fail(path, "tiling.tile", "expected a mapping of axis (x, y, z) -> points per block, e.g. {x: 256}")
        for axis, size in tile_raw.items():
            if axis not in AXES:
                raise _fail(path, f"tiling.tile.{axis}", f"unknown axis; expected one of {', '.join(AXES)}")
            tile[axis] = _positive_int(path, f"tiling.tile.{axis}", size)
    stream = raw.get("stream")
    if stream is not None and (stream not in AXES or stream in tile):
        raise _fail(path, "tiling.stream", f"expected an axis ({', '.join(AXES)}) that is not tiled, got {stream!r}")
    sizes = {k: _positive_int(path, f"tiling.{k}", raw[k]) if raw.get(k) is not None else None
             for k in ("threads", "shared_memory", "registers")}
    return Tiling(tile=tile, stream=stream, launch=launch, **sizes)


def parse_profile(raw: Any, path: Path) -> ImplProfile:
    if not isinstance(raw, Mapping):
        raise TcAdvisorError(f"implementation profile {path}: expected a YAML mapping at the top level")
    for required in ("name", "unit", "fusion", "precisions", "reference"):
        if required not in raw:
            raise _fail(path, required, "missing")
    unit = raw["unit"]
    if unit not in UNITS:
        raise _fail(path, "unit", f"expected one of {', '.join(UNITS)}, got {unit!r}")
    if raw["fusion"] not in FUSION_STYLES:
        raise _fail(path, "fusion", f"expected one of {', '.join(FUSION_STYLES)}, got {raw['fusion']!r}")
    precisions: dict[str, tuple[str, ...]] = {}
    if not isinstance(raw["precisions"], Mapping) or not raw["precisions"]:
        raise _fail(path, "precisions", "expected a mapping of dtype -> [precision, ...]")
    for dtype, listed in raw["precisions"].items():
        if dtype not in BYTES:
            raise _fail(path, f"precisions.{dtype}", f"unknown dtype; expected one of {', '.join(BYTES)}")
        listed = [listed] if isinstance(listed, str) else listed
        if not isinstance(listed, list) or not listed or any(p not in PRECISIONS for p in listed):
            raise _fail(path, f"precisions.{dtype}", f"expected a list drawn from {', '.join(PRECISIONS)}")
        precisions[dtype] = tuple(listed)
    mma = {}
    for precision, text in (raw.get("mma") or {}).items():
        if precision not in PRECISIONS:
            raise _fail(path, f"mma.{precision}", f"unknown precision; expected one of {', '.join(PRECISIONS)}")
        listed = text if isinstance(text, list) else [text]
        try:
            mma[precision] = tuple(MmaShape.parse(t) for t in listed)
        except TcAdvisorError as exc:
            raise _fail(path, f"mma.{precision}", str(exc)) from None
    alpha = None
    if unit != "cuda_core":
        a = raw.get("alpha")
        if not isinstance(a, Mapping) or not ({"paper", "construction"} & set(a)):
            raise _fail(path, "alpha", "a Tensor Core implementation needs alpha.paper and/or alpha.construction")
        construction = a.get("construction")
        if construction is not None:
            from . import transforms

            if construction not in transforms.names():
                raise _fail(path, "alpha.construction",
                            f"unknown transformation {construction!r}; known: {', '.join(transforms.names())}")
        options = a.get("construction_options") or {}
        if options and (construction is None or not isinstance(options, Mapping)):
            raise _fail(path, "alpha.construction_options",
                        "expected a mapping of the construction's options (e.g. {L: 16}) beside alpha.construction")
        if options:
            from . import transforms

            try:
                transforms.check_options(construction, dict(options))
            except TcAdvisorError as exc:
                raise _fail(path, "alpha.construction_options", str(exc)) from None
        alpha = AlphaSource(
            paper=_fraction(path, "alpha.paper", a["paper"]) if a.get("paper") is not None else None,
            paper_note=" ".join(str(a.get("paper_note", "")).split()),
            construction=construction,
            construction_note=" ".join(str(a.get("construction_note", "")).split()),
            construction_options=tuple(sorted((str(k), v) for k, v in options.items())),
        )
    kernel = raw.get("kernel")
    if kernel is not None and not (isinstance(kernel, str) and kernel.isidentifier()):
        raise _fail(path, "kernel", f"expected the name of a module in tcadvisor/gpu/, got {kernel!r}")
    if kernel is not None:
        listed = [k for k in ("shapes", "dims", "symmetric_only") if k in raw]
        if listed:  # one source of truth: what the kernel class accepts (tcadvisor.support)
            raise _fail(path, listed[0], "a bundled kernel's profile takes the stencils it runs from its kernel "
                                         "class (unsupported); remove the field")
    shapes = tuple(raw.get("shapes", ("box", "star", "custom")))
    dims = tuple(int(x) for x in raw.get("dims", (1, 2, 3)))
    tiling = parse_tiling(raw["tiling"], path) if raw.get("tiling") is not None else None
    return ImplProfile(
        key=path.stem,
        name=str(raw["name"]),
        unit=unit,
        fusion=raw["fusion"],
        summary=" ".join(str(raw.get("summary", "")).split()),
        precisions=precisions,
        mma=mma,
        alpha=alpha,
        shapes=shapes,
        dims=dims,
        symmetric_only=bool(raw.get("symmetric_only", False)),
        reference=" ".join(str(raw["reference"]).split()),
        path=path,
        kernel=kernel,
        tiling=tiling,
    )


def load_profile_file(path: str | Path) -> ImplProfile:
    from .files import load_yaml

    path = Path(path)
    return parse_profile(load_yaml(path, "implementation profile"), path)


@lru_cache(maxsize=1)
def catalog() -> dict[str, ImplProfile]:
    """All bundled profiles by lower-case name."""
    out = {}
    for path in sorted(data_dir("models").glob("*.yaml")):
        prof = load_profile_file(path)
        out[prof.name.lower()] = prof
    return out


def find_impl(name: str) -> ImplProfile:
    profiles = catalog()
    key = str(name).strip().lower()
    if key in profiles:
        return profiles[key]
    by_key = {p.key.lower(): p for p in profiles.values()}
    if key in by_key:
        return by_key[key]
    close = difflib.get_close_matches(key, list(profiles), n=1, cutoff=0.6)
    hint = f" (did you mean {profiles[close[0]].name}?)" if close else ""
    names = ", ".join(p.name for p in profiles.values())
    raise TcAdvisorError(f"unknown implementation {name!r}{hint}; expected one of: {names} (see 'tcadvisor impls')")


def default_impls() -> dict[str, ImplProfile]:
    """The first preferred implementation of each unit (the paper's choices)."""
    return {unit: find_impl(names[0]) for unit, names in DEFAULT_IMPLS.items()}


def is_default(profile: ImplProfile) -> bool:
    return profile.name in DEFAULT_IMPLS[profile.unit]


def choose_impl(unit: str, stencil: Stencil, dtype: str, gpu: GpuSpec) -> tuple[ImplProfile, str | None]:
    """The implementation the advisor uses for ``unit`` when the user names none.

    The first of :data:`DEFAULT_IMPLS` that runs this stencil in this dtype on this
    GPU.  If none does, the first profile and one line naming what each one lacks.
    """
    profiles = catalog()
    names = [n for n in DEFAULT_IMPLS[unit] if n.lower() in profiles]
    reasons = []
    for name in names:
        prof = profiles[name.lower()]
        why = prof.why_not(stencil, dtype, gpu)
        if why is None:
            return prof, None
        reasons.append(why)
    unique = list(dict.fromkeys(reasons))
    return profiles[names[0].lower()], "; ".join(unique)
