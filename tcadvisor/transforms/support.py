"""Compact descriptions of a fused stencil's support, so that α is counted without masks.

A transformation's MAC counts depend on few features of the fused support: its
points P, its radius R, how many kernel lines (along the last axis) or planes
(along the first) are non-empty, and, per 2D plane, a few shape statistics.
Box and star stencils have closed forms for all of them at any radius and depth:

* the t-step fused box of radius r is the box of radius R = r·t;
* the t-step fused star is the set Σ_i ⌈|x_i|/r⌉ ≤ t (a "diamond" of steps of r),
  whose planes are fused 2D stars of depth t − j and whose lines have
  2r(t − L) + 1 points when the leading coordinates sit at level L;

so :class:`BoxSupport` and :class:`StarSupport` answer in time polynomial in
r·t and memory independent of it.  Any other support is a :class:`MaskSupport`
(a boolean array, materialised within the budget of :mod:`tcadvisor.minkowski`).
The tests check every structured count against the same count on the mask.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb

import numpy as np

from .. import minkowski
from ..errors import TcAdvisorError, WorkBudgetExceeded
from ..stencil import Stencil

#: Largest float64 weight array of a fused stencil that is computed (cells; 8 bytes each).
MAX_WEIGHT_CELLS = 5_000_000
#: A fused weight (mixed signs) this small relative to the magnitudes summed into it is an exact cancellation.
ZERO_TOLERANCE = 1e-12


def star_points(dims: int, r: int, t: int) -> int:
    """|{x ∈ Z^d : Σ ⌈|x_i|/r⌉ ≤ t}| = Σ_j C(d, j)·C(t, j)·(2r)^j (t ≥ 0)."""
    return sum(comb(dims, j) * comb(t, j) * (2 * r) ** j for j in range(dims + 1))


class Support:
    """The support of a (fused) kernel, as the counting functions need it."""

    kind: str  # "box", "star" or "mask"
    dims: int
    R: int  # half-side of the centred bounding cube

    @property
    def P(self) -> int:
        raise NotImplementedError

    @property
    def side(self) -> int:
        return 2 * self.R + 1

    @property
    def cells(self) -> int:
        return self.side ** self.dims

    def n_lines(self) -> int:
        """Non-empty 1D lines along the last axis."""
        raise NotImplementedError

    def planes(self) -> tuple[tuple[int, "Support"], ...]:
        """(multiplicity, 2D plane) for the non-empty planes along the first axis; ``((1, self),)`` below 3D."""
        raise NotImplementedError

    def n_planes(self) -> int:
        return sum(m for m, _ in self.planes())

    def mask(self) -> np.ndarray:
        raise NotImplementedError

    def weights(self) -> np.ndarray | None:
        """The actual fused weights, when the stencil has weights (else None: generic weights)."""
        return None

    def describe(self) -> str:
        return f"{self.dims}D support of radius {self.R}, {self.P} points"


@dataclass(frozen=True)
class BoxSupport(Support):
    dims: int
    R: int
    kind: str = field(default="box", init=False)

    @property
    def P(self) -> int:
        return self.side ** self.dims

    def n_lines(self) -> int:
        return self.side ** (self.dims - 1)

    def planes(self):
        return ((self.side, BoxSupport(2, self.R)),) if self.dims == 3 else ((1, self),)

    def mask(self) -> np.ndarray:
        _check_cells(self)
        return np.ones((self.side,) * self.dims, dtype=bool)

    def describe(self) -> str:
        return f"box of radius {self.R} ({self.P} points)"


@dataclass(frozen=True)
class StarSupport(Support):
    """The t-step fused star of base radius r in 2D or 3D: Σ_i ⌈|x_i|/r⌉ ≤ t (t = 0: one point)."""

    dims: int
    r: int
    t: int
    kind: str = field(default="star", init=False)

    def __post_init__(self):
        if self.dims < 2:
            raise ValueError("a 1D star is a box; use BoxSupport")

    @property
    def R(self) -> int:  # type: ignore[override]
        return self.r * self.t

    @property
    def P(self) -> int:
        return star_points(self.dims, self.r, self.t)

    def n_lines(self) -> int:
        # a line is non-empty iff its leading coordinates lie in the (d−1)-dimensional fused star
        return star_points(self.dims - 1, self.r, self.t)

    def line_lengths(self) -> dict[int, int]:
        """{points on a line: number of such lines}: 2r(t−L)+1 for leading level sum L."""
        out = {}
        for level in range(self.t + 1):
            # leading (d−1)-tuples whose level sum is exactly `level`
            count = star_points(self.dims - 1, self.r, level) - (star_points(self.dims - 1, self.r, level - 1)
                                                                 if level else 0)
            out[2 * self.r * (self.t - level) + 1] = count
        return out

    def planes(self):
        if self.dims == 2:
            return ((1, self),)
        return tuple((1 if j == 0 else 2 * self.r, StarSupport(2, self.r, self.t - j)) for j in range(self.t + 1))

    def mask(self) -> np.ndarray:
        _check_cells(self)
        if self.t == 0:
            return np.ones((1,) * self.dims, dtype=bool)
        axes = np.ogrid[tuple(slice(-self.R, self.R + 1) for _ in range(self.dims))]
        return sum(-(-np.abs(a) // self.r) for a in axes) <= self.t

    def describe(self) -> str:
        if self.t <= 1:
            return f"star of radius {self.R} ({self.P} points)"
        return f"star of radius {self.r} fused x{self.t} (radius {self.R}, {self.P} points)"


class MaskSupport(Support):
    """Any support, as a boolean array of odd side centred on the origin (optionally with its weights)."""

    kind = "mask"

    def __init__(self, mask: np.ndarray, weights: np.ndarray | None = None):
        mask = np.asarray(mask)
        check_kernel_array(mask)
        self._mask = mask != 0
        self._weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.dims = mask.ndim
        self.R = (mask.shape[0] - 1) // 2

    @property
    def P(self) -> int:
        return int(self._mask.sum())

    def n_lines(self) -> int:
        return int(np.count_nonzero(self._mask.reshape(-1, self.side).any(axis=1)))

    def planes(self):
        if self.dims < 3:
            return ((1, self),)
        w = self._weights
        return tuple((1, MaskSupport(self._mask[p], None if w is None else w[p]))
                     for p in range(self.side) if self._mask[p].any())

    def mask(self) -> np.ndarray:
        return self._mask

    def weights(self) -> np.ndarray | None:
        return self._weights


def check_kernel_array(a: np.ndarray) -> None:
    """A kernel array must be a non-empty cube of odd side (so it has a centre), 1D to 3D."""
    if a.ndim not in (1, 2, 3):
        raise TcAdvisorError(f"a stencil kernel must be 1D, 2D or 3D, got an array of {a.ndim} dimensions")
    if len(set(a.shape)) != 1 or a.shape[0] % 2 == 0:
        raise TcAdvisorError(f"a stencil kernel must be a cube of odd side with the centre in the middle, "
                             f"got shape {a.shape}")
    if not np.any(a):
        raise TcAdvisorError("the stencil kernel is empty (no non-zero weight)")


def _check_cells(support: Support) -> None:
    if support.cells > minkowski.MAX_CELLS:
        raise WorkBudgetExceeded(f"the {support.describe()} has {support.cells:.2g} cells, too many to build as a "
                                 f"mask (at most {minkowski.MAX_CELLS:.2g}); its α is counted without one")


# --------------------------------------------------------------------------- from a Stencil


def _same_sign(weights: tuple[float, ...] | None) -> bool:
    return weights is None or all(w > 0 for w in weights) or all(w < 0 for w in weights)


@lru_cache(maxsize=16)
def fused_support(stencil: Stencil, fuse: int) -> Support:
    """The support of the ``fuse``-step fused ``stencil``, compactly where a closed form exists.

    With weights of one sign nothing can cancel, so the fused support is the
    Minkowski sum; with mixed signs the fused weights are computed (within
    budget) and exact cancellations drop out.
    """
    if stencil.weights is not None and not _same_sign(stencil.weights):
        w = fused_weight_array(stencil, fuse)
        return MaskSupport(w != 0, w)
    if stencil.shape == "box" or (stencil.shape == "star" and stencil.dims == 1):
        return _WeightedBox(stencil.dims, stencil.radius * fuse, stencil, fuse) if stencil.weights else \
            BoxSupport(stencil.dims, stencil.radius * fuse)
    if stencil.shape == "star":
        return _WeightedStar(stencil.dims, stencil.radius, fuse, stencil) if stencil.weights else \
            StarSupport(stencil.dims, stencil.radius, fuse)
    mask = stencil.fused_mask(fuse)
    if stencil.weights is not None:
        return _LazyWeightsMask(mask, stencil, fuse)
    return MaskSupport(mask)


class _LazyWeightsMask(MaskSupport):
    """A custom support whose weights (one sign) are computed only when a transformation needs them.

    Its planes stay structural (no weights): only LoRAStencil reads the values,
    and it slices :meth:`weights` itself.
    """

    def __init__(self, mask, stencil, fuse):
        super().__init__(mask)
        self._stencil, self._fuse = stencil, fuse

    def weights(self):
        return fused_weight_array(self._stencil, self._fuse)


@dataclass(frozen=True)
class _WeightedBox(BoxSupport):
    stencil: Stencil | None = None
    fuse: int = 1

    def weights(self):
        return fused_weight_array(self.stencil, self.fuse)


@dataclass(frozen=True)
class _WeightedStar(StarSupport):
    stencil: Stencil | None = None

    def weights(self):
        return fused_weight_array(self.stencil, self.t)


def fused_weight_array(stencil: Stencil, fuse: int) -> np.ndarray:
    """The weights of the ``fuse``-step fused stencil (t-fold self-convolution), within budget.

    Normalised so that the largest base weight has magnitude 1 (the analysis depends on the weights'
    ratios only).  Computed by direct summation in float64; with weights of mixed sign, entries
    within rounding of zero (relative to the magnitudes summed into them) are
    exact cancellations and set to zero.
    """
    base = stencil.weight_array()
    if base is None:
        raise ValueError("the stencil has no weights")
    side = 2 * stencil.radius * fuse + 1
    pts = np.argwhere(base != 0)
    passes = 1 if _same_sign(stencil.weights) else 2  # mixed signs: the magnitudes are convolved too

    def work_at(t: int) -> int:
        return passes * len(pts) * sum((2 * stencil.radius * s + 1) ** stencil.dims for s in range(1, t))

    work = work_at(fuse)
    if side ** stencil.dims > MAX_WEIGHT_CELLS or work > minkowski.WORK_BUDGET // 8:
        deepest = 1  # the deepest depth within both bounds (counted as the refusal counts, mixed signs twice)
        while (2 * stencil.radius * (deepest + 1) + 1) ** stencil.dims <= MAX_WEIGHT_CELLS and \
                work_at(deepest + 1) <= minkowski.WORK_BUDGET // 8:
            deepest += 1
        raise WorkBudgetExceeded(
            f"fusion depth {fuse} is too deep to compute the fused weights of {stencil.name}: "
            f"{side}^{stencil.dims} cells and ~{work:.2g} multiply-adds (at most {MAX_WEIGHT_CELLS:.2g} cells and "
            f"{minkowski.WORK_BUDGET // 8:.2g}); the deepest depth within budget is t = {deepest}", deepest=deepest)
    return _cached_fused_weights(stencil, fuse)


@lru_cache(maxsize=4)
def _cached_fused_weights(stencil: Stencil, fuse: int) -> np.ndarray:
    """Weights of one sign cannot cancel; with mixed signs an entry is an exact cancellation when it is
    within rounding of zero *relative to the magnitudes summed into it* (the t-fold convolution of |w|),
    so fused weights spanning many orders of magnitude keep their small entries."""
    from ..reference import fused_weights

    base = stencil.weight_array()
    # Normalised to the largest magnitude: the analysis (α, rank, availability) depends on the weights' ratios,
    # never on their scale, so weights of 1e308 or 1e-200 neither overflow nor vanish here.
    with np.errstate(all="ignore"):
        base = base / np.max(np.abs(base))
        base[~np.isfinite(base)] = 0.0
    w = fused_weights(base, fuse)
    if not _same_sign(stencil.weights):
        magnitude = fused_weights(np.abs(base), fuse)
        terms = len(stencil.offsets) * fuse
        w[np.abs(w) <= max(ZERO_TOLERANCE, 4 * terms * 2.0 ** -53) * magnitude] = 0.0
    w.setflags(write=False)
    return w


# --------------------------------------------------------------------------- generic weights


def symmetry_group(mask: np.ndarray) -> list:
    """The axis flips and permutations (hyperoctahedral group) that map ``mask`` onto itself."""
    d = mask.ndim
    out = []
    for perm in itertools.permutations(range(d)):
        for flips in itertools.product((False, True), repeat=d):
            def g(a, perm=perm, flips=flips):
                b = np.transpose(a, perm)
                return np.flip(b, axis=tuple(i for i, f in enumerate(flips) if f)) if any(flips) else b
            if np.array_equal(g(mask), mask):
                out.append(g)
    return out


def generic_weights(mask: np.ndarray, seed: int = 12345) -> np.ndarray:
    """Generic non-zero weights on ``mask`` with every symmetry the support has.

    Stencils without given weights stand for "any weights on this support"; the
    ones that matter for rank (LoRAStencil) are the symmetric ones the papers
    assume (radially symmetric for a box or star), so each orbit of the
    support's symmetry group gets one random value in [1, 2).
    """
    rng = np.random.default_rng(seed)
    values = rng.uniform(1.0, 2.0, mask.shape)
    group = symmetry_group(mask)
    sym = sum(g(values) for g in group) / len(group)  # constant on orbits, generic across them
    return np.where(mask, sym, 0.0)
