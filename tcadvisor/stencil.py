"""Stencils: the set of offsets a point update reads, and what fusing t steps does to it.

A :class:`Stencil` is its *support* (which neighbours are read) and, optionally,
one weight per offset.  Without weights it stands for every stencil with that
support (generic non-zero weights); with weights, transformations whose cost
depends on the values (LoRAStencil's rank) use them, and zero weights drop out
of the support.  Box and star stencils have closed forms for K and K_t (in
:mod:`tcadvisor.model`); any other point set ("custom") gets K_t by counting the
t-fold Minkowski sum exactly, within a work budget (:mod:`tcadvisor.minkowski`).

Names accepted by :func:`parse_stencil` (case-insensitive, hyphens optional):
``Box-3D1R``, ``star2d2r``, the point-count forms ``Box-2D9P``, ``Star-2D13P``,
``1D5P``, and the common names ``Heat-1D``, ``Heat-2D``, ``Heat-3D``.
"""
from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence as _Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from . import minkowski, model
from .bounded import short_repr as _short_repr
from .bounded import take
from .errors import TcAdvisorError, WorkBudgetExceeded

SHAPES = ("box", "star")
MAX_DIMS = 3
MAX_RADIUS = 64
MAX_FUSE = 1024
#: Largest fused mask (cells) ever materialised by :meth:`Stencil.fused_mask`.
MAX_CUSTOM_CELLS = minkowski.MAX_CELLS
#: Most offsets (with duplicates) a stencil may be given: every point of the largest box, once.
MAX_OFFSETS = (2 * MAX_RADIUS + 1) ** MAX_DIMS

_COMMON_NAMES = {
    "heat1d": ("box", 1, 1),
    "heat2d": ("star", 2, 1),
    "heat3d": ("star", 3, 1),
    "jacobi2d": ("star", 2, 1),
    "jacobi3d": ("star", 3, 1),
}


def _check_dims(dims: int) -> int:
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or not 1 <= dims <= MAX_DIMS:
        raise TcAdvisorError(f"dimensionality {dims!r} is not supported; expected 1, 2 or 3")
    return int(dims)


check_dims = _check_dims


def _bounded_int(value, what: str, highest: int) -> int:
    """``value`` as an int in [1, highest]; a non-integer is said to be one (never "out of range")."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:57]}..."
        raise TcAdvisorError(f"{what} {shown} ({type(value).__name__}) is not an integer; "
                             f"expected an integer from 1 to {highest}")
    if not 1 <= value <= highest:
        shown = str(value) if len(str(value)) <= 40 else f"{str(value)[:20]}... ({len(str(value))} digits)"
        raise TcAdvisorError(f"{what} {shown} is out of range; expected an integer from 1 to {highest}")
    return int(value)


def check_radius(radius) -> int:
    return _bounded_int(radius, "radius", MAX_RADIUS)


def check_fuse(fuse) -> int:
    return _bounded_int(fuse, "fusion depth", MAX_FUSE)


def _offset(off) -> tuple[int, ...]:
    """One offset as a tuple of ints; anything else (booleans, strings, floats, inf) is a one-line error.

    Components must be integers proper: a boolean or the string "1" read as a number
    would be a guess, and a float such as 1.0 or inf is not an offset.
    """
    if isinstance(off, (str, bytes)) or not hasattr(off, "__iter__"):
        raise TcAdvisorError(f"stencil offset {off!r} is not a list of integers")
    out = []
    for v in itertools.islice(off, MAX_DIMS + 1):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TcAdvisorError(
                f"stencil offset {_short_repr(off)}: component {_short_repr(v)} ({type(v).__name__}) is not an integer"
            )
        out.append(int(v))
    if not out:
        raise TcAdvisorError("stencil offset [] is empty; every offset needs one integer per dimension")
    if len(out) > MAX_DIMS:
        raise TcAdvisorError(f"stencil offset {_short_repr(off)} has more than {MAX_DIMS} components; "
                             "expected 1, 2 or 3 integers")
    return tuple(out)


class BoxOffsets(_Sequence):
    """The sorted offsets of a box, without storing them: (2r+1)^d tuples are built only when iterated.

    A Box-3D64R has 2.1 million offsets (200 MB as tuples); stencils are hashed
    and compared on every cached query, so a box keeps only (dims, radius).
    """

    __slots__ = ("dims", "radius")

    def __init__(self, dims: int, radius: int):
        self.dims, self.radius = dims, radius

    def __len__(self) -> int:
        return (2 * self.radius + 1) ** self.dims

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        side, out = 2 * self.radius + 1, []
        for _ in range(self.dims):
            index, digit = divmod(index, side)
            out.append(digit - self.radius)
        return tuple(reversed(out))

    def __iter__(self):
        return itertools.product(range(-self.radius, self.radius + 1), repeat=self.dims)

    def __contains__(self, point) -> bool:
        return len(point) == self.dims and all(-self.radius <= v <= self.radius for v in point)

    def __eq__(self, other) -> bool:
        if isinstance(other, BoxOffsets):
            return (self.dims, self.radius) == (other.dims, other.radius)
        return isinstance(other, tuple) and len(other) == len(self) and tuple(self) == other

    def __hash__(self) -> int:
        return hash(("box-offsets", self.dims, self.radius))

    def __repr__(self) -> str:
        return f"BoxOffsets(dims={self.dims}, radius={self.radius})"


@dataclass(frozen=True)
class Stencil:
    """A stencil's support: the offsets read to update one point (and optionally their weights)."""

    name: str
    shape: str  # "box", "star" or "custom"
    dims: int
    radius: int  # largest |offset| along any axis
    offsets: Sequence[tuple[int, ...]]  # a tuple; a box keeps a lazy BoxOffsets
    weights: tuple[float, ...] | None = None  # one per offset (non-zero), or None: generic weights

    # ----------------------------------------------------------------- constructors
    @classmethod
    def box(cls, dims: int, radius: int) -> "Stencil":
        dims, radius = _check_dims(dims), check_radius(radius)
        return cls(f"Box-{dims}D{radius}R", "box", dims, radius, BoxOffsets(dims, radius))

    @classmethod
    def star(cls, dims: int, radius: int) -> "Stencil":
        dims, radius = _check_dims(dims), check_radius(radius)
        if dims == 1:  # in 1D a star is a box; keep one canonical object
            return cls.box(1, radius)
        offsets = [tuple([0] * dims)]
        for axis in range(dims):
            for step in range(-radius, radius + 1):
                if step:
                    off = [0] * dims
                    off[axis] = step
                    offsets.append(tuple(off))
        return cls(f"Star-{dims}D{radius}R", "star", dims, radius, tuple(sorted(offsets)))

    @classmethod
    def from_offsets(cls, offsets: Iterable[Sequence[int]], name: str | None = None,
                     weights: Sequence[float] | None = None) -> "Stencil":
        """A stencil from any point set; recognised as box or star when it is one.

        ``weights`` (one per offset) are optional; offsets whose weight is zero
        are not read and drop out of the support.
        """
        offsets = _bounded_items(offsets, "stencil offsets", MAX_OFFSETS)
        if weights is not None:
            offsets, weights = _drop_zero_weights(offsets, _bounded_items(weights, "stencil weights", MAX_OFFSETS))
        pts = [_offset(off) for off in offsets]
        if not pts:
            raise TcAdvisorError("a stencil needs at least one offset")
        dims = {len(p) for p in pts}
        if len(dims) != 1:
            raise TcAdvisorError(f"stencil offsets mix dimensionalities {sorted(dims)}; all must have the same length")
        dims_ = _check_dims(dims.pop())
        unique = tuple(sorted(set(pts)))
        wts = None if weights is None else _weights_in_order(pts, weights, unique)
        radius = max(abs(v) for p in unique for v in p)
        if radius == 0:
            raise TcAdvisorError("a stencil must reach at least one neighbour (all offsets are 0)")
        check_radius(radius)
        for shape in SHAPES:
            ref = getattr(cls, shape)(dims_, radius)
            if ref.offsets == unique:
                if name is None and wts is None:
                    return ref
                return cls(name or ref.name, ref.shape, dims_, radius, ref.offsets, wts)
        return cls(name or f"Custom-{dims_}D{len(unique)}P", "custom", dims_, radius, unique, wts)

    # ----------------------------------------------------------------- model quantities
    @property
    def K(self) -> int:
        """Points of the stencil."""
        if self.shape in SHAPES:
            return model.points(self.shape, self.dims, self.radius)
        return len(self.offsets)

    def fused_points(self, fuse: int) -> int:
        """K_t: points of the t-step fused stencil (exact).

        Box and star: closed form.  Custom: the exact Minkowski count, which
        raises :class:`~tcadvisor.errors.WorkBudgetExceeded` (before working)
        beyond the budget of :mod:`tcadvisor.minkowski`.
        """
        fuse = check_fuse(fuse)
        if self.shape in SHAPES:
            return model.fused_points(self.shape, self.dims, self.radius, fuse)
        return minkowski.count(np.array(self.offsets), fuse, self.name)

    def beta(self, fuse: int) -> Fraction:
        """Fusion redundancy β = K_t / (t·K), as an exact fraction."""
        return Fraction(self.fused_points(fuse), check_fuse(fuse) * self.K)

    @property
    def is_symmetric(self) -> bool:
        if self.shape in SHAPES:
            return True
        pts = set(self.offsets)
        return all(tuple(-v for v in p) in pts for p in pts)

    # ----------------------------------------------------------------- masks
    def mask(self) -> np.ndarray:
        """Boolean array of side 2·radius+1, True where an offset is read."""
        size = 2 * self.radius + 1
        if self.shape == "box":
            return np.ones((size,) * self.dims, dtype=bool)
        out = np.zeros((size,) * self.dims, dtype=bool)
        for off in self.offsets:
            out[tuple(v + self.radius for v in off)] = True
        return out

    def weight_array(self) -> np.ndarray | None:
        """The weights on the array of :meth:`mask` (zeros elsewhere), or None without weights."""
        if self.weights is None:
            return None
        out = np.zeros((2 * self.radius + 1,) * self.dims)
        for off, w in zip(self.offsets, self.weights):
            out[tuple(v + self.radius for v in off)] = w
        return out

    def fused_mask(self, fuse: int) -> np.ndarray:
        """Support of the t-step fused stencil: the t-fold Minkowski sum, side 2·radius·t+1.

        Materialised, so bounded: beyond :data:`MAX_CUSTOM_CELLS` cells (or, for a
        custom stencil, the Minkowski work budget) it raises
        :class:`~tcadvisor.errors.WorkBudgetExceeded`.  Counting needs no mask:
        use :meth:`fused_points` and :func:`tcadvisor.transforms.alpha_for`.
        """
        fuse = check_fuse(fuse)
        big = 2 * self.radius * fuse + 1
        pts = None if self.shape in SHAPES else np.array(self.offsets)
        over_work = pts is not None and (minkowski.work(pts, fuse) > minkowski.WORK_BUDGET
                                         or minkowski.cells(pts, fuse) > minkowski.MAX_CELLS)
        if big ** self.dims > MAX_CUSTOM_CELLS or over_work:
            deepest = 0
            while (2 * self.radius * (deepest + 1) + 1) ** self.dims <= MAX_CUSTOM_CELLS:
                deepest += 1
            if pts is not None:
                deepest = min(deepest, minkowski.deepest_within_budget(pts))
            raise WorkBudgetExceeded(
                f"fusion depth {fuse} is too deep to build the fused mask of {self.name}: "
                f"{big}^{self.dims} cells (at most {MAX_CUSTOM_CELLS:.2g} cells and "
                f"{minkowski.WORK_BUDGET:.2g} cell updates); the deepest depth within budget is t = {deepest}",
                deepest=deepest)
        if self.shape == "box":
            return np.ones((big,) * self.dims, dtype=bool)
        if self.shape == "star":
            axes = np.ogrid[tuple(slice(-self.radius * fuse, self.radius * fuse + 1) for _ in range(self.dims))]
            steps = sum(-(-np.abs(a) // self.radius) for a in axes)
            return steps <= fuse
        tight, lowest = minkowski.fused_mask(np.array(self.offsets), fuse, self.name)
        out = np.zeros((big,) * self.dims, dtype=bool)
        start = lowest + self.radius * fuse
        out[tuple(slice(int(s), int(s) + n) for s, n in zip(start, tight.shape))] = tight
        return out

    def __str__(self) -> str:
        return self.name


def _bounded_items(values, what: str, limit: int) -> list:
    """``values`` as a list of at most ``limit`` items, read without materialising more (an unbounded
    iterator is refused after ``limit`` + 1 items); not an iterable, a string or a mapping: one line."""
    if values is None or isinstance(values, (str, bytes, bytearray, dict, int, float, np.number, bool)):
        raise TcAdvisorError(f"{what} {_short_repr(values)} ({type(values).__name__}) are not a list; expected a "
                             "list such as [(0, 0), (1, 0), (-1, 0)]" + (" with one weight per offset"
                                                                         if "weight" in what else ""))
    try:
        items, over = take(values, limit)
    except TypeError:
        raise TcAdvisorError(f"{what} {_short_repr(values)} ({type(values).__name__}) are not a list; expected a "
                             "list such as [(0, 0), (1, 0), (-1, 0)]") from None
    if items is None and over is not None:
        raise TcAdvisorError(f"{what}: {over} entries are too many (at most {limit})")
    if items is None:
        raise TcAdvisorError(f"{what}: more than {limit} entries (an unbounded iterator?); at most {limit}")
    return items


def _weight_value(off, w) -> float:
    """One weight as a finite float, or a one-line error (a 401-digit integer, NaN, a string)."""
    if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, float, np.integer, np.floating)):
        raise TcAdvisorError(f"the weight of offset {off!r} is {_short_repr(w)} ({type(w).__name__}); "
                             "expected a finite number")
    try:
        value = float(w)
    except OverflowError:
        digits = len(str(abs(int(w)))) if isinstance(w, int) and w.bit_length() < 20000 else "many"
        raise TcAdvisorError(f"the weight of offset {off!r} is an integer of {digits} digits, beyond a float64 "
                             "(at most about 1.8e308); expected a finite number") from None
    if not np.isfinite(value):
        raise TcAdvisorError(f"the weight of offset {off!r} is {_short_repr(w)}; expected a finite number")
    return value


def _drop_zero_weights(offsets: list, weights: Sequence[float]) -> tuple[list, list[float]]:
    """Offsets and weights without the zero weights; the weights checked as finite numbers."""
    weights = list(weights)
    if len(weights) != len(offsets):
        raise TcAdvisorError(f"a stencil with weights needs one weight per offset: got {len(weights)} weights "
                             f"for {len(offsets)} offsets")
    values = [_weight_value(off, w) for off, w in zip(offsets, weights)]
    kept = [(o, w) for o, w in zip(offsets, values) if w != 0.0]
    if not kept:
        raise TcAdvisorError("every weight of the stencil is zero; at least one must be non-zero")
    return [o for o, _ in kept], [w for _, w in kept]


def _weights_in_order(pts: list[tuple[int, ...]], weights: Sequence[float],
                      unique: tuple[tuple[int, ...], ...]) -> tuple[float, ...]:
    """The weights re-ordered like the sorted unique offsets; an offset listed twice is an error."""
    by_offset: dict[tuple[int, ...], float] = {}
    for pt, w in zip(pts, weights):
        if pt in by_offset:
            raise TcAdvisorError(f"offset {pt!r} is listed twice with weights; give each offset once")
        by_offset[pt] = float(w)
    return tuple(by_offset[pt] for pt in unique)


# --------------------------------------------------------------------------- parsing

_NAMED = re.compile(r"^(box|star)?(\d)d(\d+)([rp])$")
_POINTS_1D = re.compile(r"^(\d)d(\d+)p$")


def _from_points(shape: str | None, dims: int, npoints: int, text: str) -> Stencil:
    shapes = [shape] if shape else (["box"] if dims == 1 else [])
    if not shapes:
        raise TcAdvisorError(f"stencil {text!r} needs a shape in {dims}D: write Box-{dims}D{npoints}P or Star-{dims}D{npoints}P")
    for radius in range(1, MAX_RADIUS + 1):
        if model.points(shapes[0], dims, radius) == npoints:
            return getattr(Stencil, shapes[0])(dims, radius)
        if model.points(shapes[0], dims, radius) > npoints:
            break
    valid = [model.points(shapes[0], dims, rr) for rr in range(1, 5)]
    raise TcAdvisorError(
        f"no {shapes[0]} stencil in {dims}D has {npoints} points (stencil {text!r}); "
        f"valid counts start {', '.join(map(str, valid))}, ..."
    )


def parse_stencil(text: str) -> Stencil:
    """Parse a stencil name, or load a custom stencil from a file path: an offsets file, a ``.npy`` weight
    array or a C loop nest (:func:`tcadvisor.sources.read_path`, with its defaults; a ``.py`` file is refused)."""
    if not isinstance(text, (str, Path)) and not hasattr(text, "__fspath__"):
        raise TcAdvisorError(f"stencil {_short_repr(text)} ({type(text).__name__}) is not a name; expected e.g. "
                             "Box-3D1R, Star-2D2R, Heat-2D or a file of offsets")
    import os

    raw = os.fspath(text).strip()
    if not raw:
        raise TcAdvisorError("empty stencil name; expected e.g. Box-3D1R, Star-2D2R, Heat-2D or a file of offsets")
    path = Path(raw)
    from .sources import PATH_SUFFIXES, read_path

    if path.suffix.lower() in PATH_SUFFIXES:  # a .npy weight array or a C loop nest (a .py file is refused)
        return read_path(path).stencil
    if path.suffix.lower() in (".txt", ".yaml", ".yml", ".json", ".stencil") or path.is_file():
        return load_stencil_file(path)
    # A hyphen right before the count is a sign, not a separator: Box-2D-1R asks for radius -1.
    negative = re.match(r"^\s*(box|star)?[\s_\-]*(\d)d\s*-\s*(\d+)\s*([rp])\s*$", raw.lower())
    if negative:
        what = "radius" if negative.group(4) == "r" else "point count"
        raise TcAdvisorError(f"stencil {raw!r} has a negative {what} (-{negative.group(3)}); "
                             f"expected a positive integer, e.g. {(negative.group(1) or 'box').capitalize()}-"
                             f"{negative.group(2)}D{negative.group(3)}{negative.group(4).upper()}")
    key = re.sub(r"[\s_\-]", "", raw.lower())
    if key in _COMMON_NAMES:
        shape, dims, radius = _COMMON_NAMES[key]
        return getattr(Stencil, shape)(dims, radius)
    match = _NAMED.match(key)
    if match:
        shape, dims, count, kind = match.groups()
        dims = _check_dims(int(dims))
        count = int(count)
        if kind == "p":
            return _from_points(shape, dims, count, raw)
        if shape is None and dims > 1:
            raise TcAdvisorError(f"stencil {raw!r} needs a shape: write Box-{dims}D{count}R or Star-{dims}D{count}R")
        if count < 1 or count > MAX_RADIUS:
            check_radius(count)
        return getattr(Stencil, shape or "box")(dims, count)
    examples = ["Box-3D1R", "Star-2D2R", "Box-2D9P", "Star-2D13P", "1D5P", "Heat-1D", "Heat-2D", "Heat-3D"]
    # Near misses keep what the user wrote: the dimensionality and the count ("Blob-2D1R" -> Box-2D1R).
    parts = re.search(r"(\d)\s*d\s*(\d+)\s*([rp])", raw.lower())
    if parts:
        dims_, count, kind = parts.groups()
        examples = [f"{shape}-{dims_}D{count}{kind.upper()}" for shape in ("Box", "Star")] + examples
    close = difflib.get_close_matches(raw, examples, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise TcAdvisorError(
        f"unknown stencil {raw!r}{hint}; expected Box|Star-<d>D<r>R, Box|Star-<d>D<points>P, "
        "1D<points>P, Heat-1D/2D/3D, or a file of offsets"
    )


def load_stencil_file(path: str | Path) -> Stencil:
    """Load a custom stencil.

    ``.yaml``/``.yml``/``.json``: a mapping with ``offsets`` (a list of integer
    lists) and optionally ``name``.  Anything else: plain text, one offset per
    line (integers separated by spaces or commas), ``#`` starts a comment.

    Weights are optional: ``weights`` (a list, one per offset) beside ``offsets``,
    or ``points: [{offset: [0, 1], weight: 0.25}, ...]`` instead of ``offsets``;
    in a text file, ``: WEIGHT`` after an offset (``0 1 : 0.25``), on every line.
    """
    from .files import MAX_WEIGHTS_BYTES, parse_json, parse_yaml, read_text

    path = Path(path)
    text = read_text(path, "stencil file", MAX_WEIGHTS_BYTES)
    name = path.stem
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        parse = parse_json if path.suffix.lower() == ".json" else parse_yaml
        data = parse(text, path, "stencil file")
        if isinstance(data, dict) and data.get("points") and "offsets" not in data:
            data = _points_to_offsets(data, path)
        if not isinstance(data, dict) or not isinstance(data.get("offsets"), list):
            raise TcAdvisorError(f"stencil file {path}: expected a mapping with a list 'offsets' (e.g. offsets: [[0, 0], [1, 0]])")
        name = str(data.get("name", name))
        offsets = data["offsets"]
        weights = data.get("weights")
        if weights is not None and not isinstance(weights, list):
            raise TcAdvisorError(f"stencil file {path}: 'weights' must be a list of numbers, one per offset")
        if not all(isinstance(o, (list, tuple)) for o in offsets):
            raise TcAdvisorError(f"stencil file {path}: every entry of 'offsets' must be a list of integers")
    else:
        offsets, weights = [], []
        for lineno, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            line, weight = _text_weight(line, path, lineno)
            weights.append(weight)
            parts = [p for p in re.split(r"[,\s]+", line) if p]
            try:
                offsets.append([int(p) for p in parts])
            except ValueError:
                raise TcAdvisorError(f"stencil file {path}, line {lineno}: not a list of integers; expected one offset "
                                     "a line, e.g. '1 0 -1' (or '1, 0, -1 : 0.25' with a weight)") from None
        weights = _text_weights(weights, path)
    try:
        return Stencil.from_offsets(offsets, name=name, weights=weights)
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"stencil file {path}: {exc}") from None


def _points_to_offsets(data: dict, path: Path) -> dict:
    """``points: [{offset: [...], weight: w}, ...]`` as ``offsets`` and ``weights`` lists."""
    points = data["points"]
    if not isinstance(points, list) or not points or not all(isinstance(p, dict) and "offset" in p for p in points):
        raise TcAdvisorError(f"stencil file {path}: 'points' must be a list of mappings with 'offset' and optionally "
                             "'weight' (e.g. points: [{offset: [0, 1], weight: 0.25}]); or give 'offsets'")
    has = ["weight" in p for p in points]
    if any(has) and not all(has):
        raise TcAdvisorError(f"stencil file {path}: give a 'weight' for every point or for none")
    return {**data, "offsets": [p["offset"] for p in points],
            "weights": [p["weight"] for p in points] if all(has) else None}


def _text_weight(line: str, path: Path, lineno: int) -> tuple[str, float | None]:
    """Split ``OFFSET : WEIGHT`` (the weight is optional)."""
    if ":" not in line:
        return line, None
    offset, _, weight = line.partition(":")
    try:
        value = float(weight.strip())
    except ValueError:
        raise TcAdvisorError(f"stencil file {path}, line {lineno}: the weight after ':' is not a number; "
                             "expected e.g. '0 1 : 0.25'") from None
    return offset, value


def _text_weights(weights: list, path: Path) -> list[float] | None:
    if all(w is None for w in weights):
        return None
    if any(w is None for w in weights):
        raise TcAdvisorError(f"stencil file {path}: give a weight (': WEIGHT') on every line or on none")
    return weights
