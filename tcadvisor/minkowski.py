"""Exact t-fold Minkowski sums of custom point sets, within a stated work budget.

A custom stencil has no closed form for K_t: the t-step fused support is the
t-fold Minkowski sum t·S of its offsets S, counted exactly by growing a boolean
mask one step at a time (each step ORs |S| shifted copies of the previous mask
into the next one).  The work of reaching depth t is therefore

    work(t) = |S| · Σ_{s=1}^{t-1} cells(s)        (cell updates)

where cells(s) is the size of the bounding box of s·S.  It is computed exactly
*before* anything is allocated; a query whose work exceeds :data:`WORK_BUDGET`,
or whose mask would exceed :data:`MAX_CELLS`, raises
:class:`~tcadvisor.errors.WorkBudgetExceeded` at once, naming the deepest depth
that fits.  At about 0.1–0.3 ns per cell update the budget is well under two
seconds, and the largest mask is 40 MB.

Only one grown mask per stencil is kept (the deepest reached so far, for a few
stencils), so a sweep over t = 1, 2, 3, … grows it incrementally without keeping
every intermediate mask.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .errors import WorkBudgetExceeded

#: Cell updates one exact count may take (≈ 0.2–0.6 s of vectorised ORs).
WORK_BUDGET = 2_000_000_000
#: Largest mask (cells, one byte each) that is ever materialised.
MAX_CELLS = 40_000_000
#: Stencils whose deepest grown mask is kept for incremental growth (together at most MAX_CELLS).
_KEEP = 4
_grown: "OrderedDict[tuple, tuple[int, np.ndarray]]" = OrderedDict()


def _extent(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return points.min(axis=0), points.max(axis=0)


def cells(points: np.ndarray, fuse: int) -> int:
    """Cells of the bounding box of the ``fuse``-fold sum (exact integer)."""
    lo, hi = _extent(points)
    out = 1
    for span in (hi - lo):
        out *= int(span) * fuse + 1
    return out


def work(points: np.ndarray, fuse: int, start: int = 1) -> int:
    """Cell updates to grow the mask from depth ``start`` to ``fuse``."""
    n = len(points)
    return n * sum(cells(points, s) for s in range(start, fuse))


def deepest_within_budget(points: np.ndarray, budget: int = WORK_BUDGET, max_cells: int = MAX_CELLS,
                          limit: int = 1 << 20) -> int:
    """Largest t whose count fits the budget (0 if even t = 1 does not)."""
    total, t = 0, 1
    if cells(points, 1) > max_cells:
        return 0
    while t < limit:
        step = len(points) * cells(points, t)
        if total + step > budget or cells(points, t + 1) > max_cells:
            return t
        total += step
        t += 1
    return t


def check_budget(points: np.ndarray, fuse: int, name: str, what: str = "count the fused support of") -> None:
    """Raise :class:`WorkBudgetExceeded` if reaching depth ``fuse`` is over budget."""
    need, size = work(points, fuse), cells(points, fuse)
    if need <= WORK_BUDGET and size <= MAX_CELLS:
        return
    deepest = deepest_within_budget(points)
    reason = (f"~{need:.2g} cell updates (budget {WORK_BUDGET:.2g})" if need > WORK_BUDGET
              else f"a mask of {size:.2g} cells (at most {MAX_CELLS:.2g})")
    raise WorkBudgetExceeded(
        f"fusion depth {fuse} is too deep to {what} {name} exactly: it needs {reason}; "
        f"the deepest depth within budget is t = {deepest}", deepest=deepest)


def fused_mask(points: np.ndarray, fuse: int, name: str = "this stencil") -> tuple[np.ndarray, np.ndarray]:
    """The ``fuse``-fold Minkowski sum of ``points`` as (mask, lowest corner).

    ``mask[i]`` is True where ``lowest + i`` belongs to the sum; the mask spans
    exactly the bounding box of the sum.  Raises :class:`WorkBudgetExceeded`
    (from the estimate, before any work) when over budget.
    """
    pts = np.asarray(points, dtype=np.int64).reshape(len(points), -1)
    key = tuple(map(tuple, pts.tolist()))
    lo1, hi1 = _extent(pts)
    start, mask = 1, None
    kept = _grown.get(key)
    if kept is not None and kept[0] <= fuse:
        start, mask = kept
    if work(pts, fuse, start) > WORK_BUDGET or cells(pts, fuse) > MAX_CELLS:
        check_budget(pts, fuse, name)
    if mask is None:
        mask = np.zeros(tuple(int(h - l) + 1 for l, h in zip(lo1, hi1)), dtype=bool)
        mask[tuple((pts - lo1).T)] = True
    shifts = pts - lo1
    for s in range(start, fuse):
        grown = np.zeros(tuple(int(h - l) * (s + 1) + 1 for l, h in zip(lo1, hi1)), dtype=bool)
        for off in shifts:
            grown[tuple(slice(int(o), int(o) + n) for o, n in zip(off, mask.shape))] |= mask
        mask = grown
    _grown[key] = (fuse, mask) if kept is None or kept[0] <= fuse else kept
    _grown.move_to_end(key)
    while len(_grown) > _KEEP or sum(m.size for _, m in _grown.values()) > MAX_CELLS:
        _grown.popitem(last=False)
    return mask, lo1 * fuse


def count(points: np.ndarray, fuse: int, name: str = "this stencil") -> int:
    """|fuse · S| exactly (see :func:`fused_mask`)."""
    if fuse == 1:
        return len({tuple(p) for p in np.asarray(points).tolist()})
    return int(fused_mask(points, fuse, name)[0].sum())
