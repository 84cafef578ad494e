"""LoRAStencil: rank-1 decomposition and U·X·V chains (Zhang et al., SC'24).

How it works, for a 2D kernel W of radius h (side n = 2h+1):

* W is written as a sum of rank-1 terms u·vᵀ.  *Pyramidal Matrix Adaptation*
  peels a radially symmetric W from the outside in: the term built from the
  first column and first row over the corner pivot, u = W[:,0]/W[0,0] and
  v = W[0,:], removes the whole outer ring (by symmetry), leaving a symmetric
  (n−2)×(n−2) core; repeating gives h+1 terms of sides n, n−2, …, 1, the last a
  scalar on the centre that needs no matrix product.  Where a corner pivot is
  zero but its ring is not (stars, fused stars) or the ring does not vanish
  (asymmetric weights), the peeling does not exist and an SVD supplies the
  terms instead (rank many, none free).
* *Residual Dimension Gathering* computes one term for an m × m output tile as
  the chain Y += U·X·V: X is the (m+2h)² input tile, U (m × (m+2h)) holds u on
  every row shifted by one column (the vertical gather), V ((m+2h) × m) holds v
  on every column shifted by one row (the horizontal gather).
* On FP64 m8n8k4 tiles the two products take
      (m/8)·⌈(m+2h)/8⌉·⌈(m+2h)/4⌉  +  (m/8)·(m/8)·⌈(m+2h)/4⌉
  instructions (the paper's 8 + 4 = 12 for h ≤ 4 with m = 8); every term costs
  the same (the smaller peeled terms sit in full-size U and V, as the paper
  counts them).  Box-2D49P: 3 terms × 12 MMAs × 256 MACs / 64 points = 144 MACs
  per point, α = 49/144.
* The tile edge m is the multiple of lcm(m_inst, n_inst) that minimises MMAs per
  point (8 for h ≤ 4 on m8n8k4, the paper's tile); 3D kernels are decomposed
  plane by plane, each non-empty plane's terms running on its input plane.

Without given weights a stencil stands for generic weights with every symmetry
of its support (radially symmetric for box and star, the paper's assumption):
a box of radius R then has rank R+1 (R terms with an MMA), a fused 2D star of
base radius r and depth τ ≥ 1 has rank r(τ−1)+2 (all with an MMA), a single
point none.  With weights, the actual fused weights are decomposed.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from .base import AlphaCount, Construction, check_weights, kernel_planes, mma_tiled, pad_to, periodic_extend
from .support import BoxSupport, MaskSupport, StarSupport, generic_weights

NAME = "lorastencil"
TITLE = "LoRAStencil"
DIMS = (2, 3)
SPARSE = False
#: Relative size below which a residual entry or singular value counts as zero.
RANK_TOLERANCE = 1e-9


# --------------------------------------------------------------------------- decomposition


def decompose(w: np.ndarray) -> tuple[list[tuple[np.ndarray, np.ndarray, bool]], str]:
    """Rank-1 terms (u, v, free) with Σ u vᵀ = w, and the method ("pyramidal" or "svd").

    ``free`` marks a term that is a scalar on the centre (no matrix product).
    """
    w = np.asarray(w, dtype=np.float64)
    terms = _pyramidal(w)
    if terms is not None:
        return terms, "pyramidal"
    return _svd(w), "svd"


def _pyramidal(w: np.ndarray):
    n = w.shape[0]
    h = (n - 1) // 2
    tol = RANK_TOLERANCE * max(np.abs(w).max(), 1e-300)
    res = w.copy()
    terms = []
    for i in range(h + 1):
        sub = res[i: n - i, i: n - i]
        ring = np.ones(sub.shape, bool)
        ring[1:-1, 1:-1] = False
        if np.all(np.abs(sub[ring]) <= tol):
            sub[ring] = 0.0
            continue
        pivot = sub[0, 0]
        if abs(pivot) <= tol:
            return None
        u = np.zeros(n)
        v = np.zeros(n)
        u[i: n - i] = sub[:, 0] / pivot
        v[i: n - i] = sub[0, :]
        sub -= np.outer(u[i: n - i], v[i: n - i])
        if np.any(np.abs(sub[ring]) > tol):
            return None
        sub[ring] = 0.0
        terms.append((u, v, i == h))
    if np.any(np.abs(res) > tol):
        return None
    return terms


def _svd(w: np.ndarray):
    n = w.shape[0]
    h = (n - 1) // 2
    U, s, Vt = np.linalg.svd(w)
    rank = int(np.count_nonzero(s > RANK_TOLERANCE * s[0])) if s.size and s[0] > 0 else 0
    terms = []
    for k in range(rank):
        u, v = U[:, k] * s[k], Vt[k].copy()
        off_u = np.abs(np.delete(u, h)).max(initial=0.0) <= RANK_TOLERANCE * np.abs(u).max()
        off_v = np.abs(np.delete(v, h)).max(initial=0.0) <= RANK_TOLERANCE * np.abs(v).max()
        terms.append((u, v, bool(off_u and off_v)))
    return terms


def plane_terms(plane) -> tuple[int, str]:
    """(terms that need an MMA chain, method) for one 2D plane support."""
    if isinstance(plane, BoxSupport):
        return plane.R, "pyramidal"
    if isinstance(plane, StarSupport):
        if plane.t == 0:
            return 0, "pyramidal"
        return plane.r * (plane.t - 1) + 2, "svd"
    if isinstance(plane, MaskSupport):
        w = plane.weights()
        if w is None:
            w = generic_weights(plane.mask())
        terms, method = decompose(w)
        return sum(1 for *_, free in terms if not free), method
    raise TypeError(plane)


# --------------------------------------------------------------------------- tile geometry


def mma_per_term(m: int, h: int, shape: MmaShape) -> int:
    """MMAs of one U·X·V chain on an m × m tile of a radius-h kernel."""
    span = m + 2 * h
    first = (m // shape.m) * -(-span // shape.n) * -(-span // shape.k)  # T = U·X
    second = (m // shape.m) * (m // shape.n) * -(-span // shape.k)  # Y = T·V
    return first + second


@lru_cache(maxsize=4096)
def best_tile(h: int, shape: MmaShape) -> tuple[int, int]:
    """(tile edge m, MMAs per term) minimising MMAs per output point; ties to the smaller tile.

    The optimum lies near m = √2·h (the chain's cost per point is about
    (m+2h)(m+h)/m), so multiples of lcm(m_inst, n_inst) up to 4h are searched.
    """
    unit = shape.m * shape.n // gcd(shape.m, shape.n)
    m = np.arange(unit, 4 * h + 4 * unit + 1, unit, dtype=np.int64)
    span = m + 2 * h
    mma = (m // shape.m) * (-(-span // shape.n)) * (-(-span // shape.k)) \
        + (m // shape.m) * (m // shape.n) * (-(-span // shape.k))
    ratio = mma / (m * m).astype(float)
    near = np.flatnonzero(ratio <= ratio.min() * (1 + 1e-9))
    best = min(near, key=lambda i: (Fraction(int(mma[i]), int(m[i]) ** 2), int(m[i])))
    return int(m[best]), int(mma[best])


def _geometry(h: int, terms: int, shape: MmaShape, P: int, methods: dict) -> tuple[Fraction, dict]:
    m, mma = best_tile(h, shape)
    if terms == 0:
        raise TcAdvisorError("LoRAStencil: the kernel is a single point; it needs no Tensor Core product")
    executed = Fraction(terms * mma * shape.macs, m * m)
    details = {"h": h, "tile": m, "X": f"{m + 2 * h} x {m + 2 * h}", "U": f"{m} x {pad_to(m + 2 * h, shape.k)}",
               "V": f"{pad_to(m + 2 * h, shape.k)} x {m}", "terms": terms, "mma_per_term": mma,
               "mma_per_tile": terms * mma, "decomposition": methods,
               "matrices": f"{terms} rank-1 terms, each U ({m} x {pad_to(m + 2 * h, shape.k)}) and "
                           f"V ({pad_to(m + 2 * h, shape.k)} x {m})"}
    return executed, details


def _check_dims(dims: int) -> None:
    if dims not in DIMS:
        raise TcAdvisorError(f"LoRAStencil decomposes 2D kernels (3D plane by plane); a {dims}D stencil has no "
                             "rank-1 decomposition into U·X·V chains")


#: Largest Σ n³ (side³ summed over planes) decomposed numerically for one query (≈ 1 s of SVDs).
MASK_COST_BUDGET = 1_000_000_000


def mask_cost(extents: tuple[int, ...]) -> int:
    """Work estimate of decomposing a kernel numerically: side³ per plane (the plane arrays are centred cubes)."""
    side = 2 * max((e - 1) // 2 if e % 2 else e // 2 for e in extents) + 1
    return side ** 3 * (side if len(extents) == 3 else 1)


def count(support, shape: MmaShape, precision: str = "fp64") -> AlphaCount:
    """Terms per plane from the support (or its weights), times the U·X·V cost of the best tile."""
    _check_dims(support.dims)
    weights = support.weights()
    if weights is not None or isinstance(support, MaskSupport):
        work = mask_cost((support.side,) * support.dims)
        if work > MASK_COST_BUDGET:
            from ..errors import WorkBudgetExceeded

            raise WorkBudgetExceeded(
                f"LoRAStencil: decomposing this kernel numerically (side {support.side}, {support.dims}D) needs "
                f"~{work:.2g} operations, over the budget of {MASK_COST_BUDGET:.2g}")
    methods: dict[str, int] = {}
    terms = 0
    if weights is not None:
        planes = [(1, MaskSupport(p != 0, p)) for _, p in kernel_planes(weights)]
    else:
        planes = support.planes()
    for mult, plane in planes:
        k, method = plane_terms(plane)
        terms += mult * k
        methods[method] = methods.get(method, 0) + mult
    executed, details = _geometry(support.R, terms, shape, support.P, methods)
    return AlphaCount(NAME, shape, precision, support.P, executed, details)


def construct(weights: np.ndarray, shape: MmaShape, precision: str = "fp64") -> Construction:
    """U and V of every term of every non-empty plane, padded to the instruction."""
    w = check_weights(weights)
    _check_dims(w.ndim)
    h = (w.shape[0] - 1) // 2
    m, _ = best_tile(h, shape)
    span = m + 2 * h
    kx = pad_to(span, shape.k)
    operands, plan, methods, scalars = [], [], {}, []
    for p, plane in kernel_planes(w):
        terms, method = decompose(plane)
        methods[method] = methods.get(method, 0) + 1
        for u, v, free in terms:
            if free:
                scalars.append((p, float(u[h] * v[h])))
                continue
            U = np.zeros((m, kx))
            V = np.zeros((kx, m))
            for i in range(m):
                U[i, i: i + 2 * h + 1] = u
                V[i: i + 2 * h + 1, i] = v
            operands += [U, V]
            plan.append(p)
    executed, details = _geometry(h, len(plan), shape, int(np.count_nonzero(w)), methods)
    details.update(term_planes=plan, free_terms=scalars)
    return Construction(NAME, shape, operands, details, Fraction(int(np.count_nonzero(w))), executed, precision)


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, precision: str = "fp64") -> np.ndarray:
    """One periodic step: per m × m tile and term, T = U·X then Y += T·V, MMA by MMA."""
    w = check_weights(weights)
    x = np.asarray(x, dtype=np.float64)
    con = construct(w, shape, precision)
    h, m = con.details["h"], con.details["tile"]
    span, kx = m + 2 * h, pad_to(m + 2 * h, shape.k)
    nx = pad_to(span, shape.n)
    x3 = x if x.ndim == 3 else x[None]
    ty, tx = -(-x3.shape[1] // m), -(-x3.shape[2] // m)
    pz = h if x.ndim == 3 else 0
    ext = periodic_extend(x3, (pz, h, h), (x3.shape[0] + 2 * pz, ty * m + 2 * h, tx * m + 2 * h))
    out = np.zeros((x3.shape[0], ty * m, tx * m))
    for z in range(x3.shape[0]):
        for i0 in range(0, ty * m, m):
            for j0 in range(0, tx * m, m):
                acc = np.zeros((m, m))
                for t, p in enumerate(con.details["term_planes"]):
                    U, V = con.operands[2 * t], con.operands[2 * t + 1]
                    X = np.zeros((kx, nx))
                    X[:span, :span] = ext[z + p, i0: i0 + span, j0: j0 + span]
                    T = mma_tiled(U, X, shape)  # m × nx, the semi-gathered rows
                    Tk = np.zeros((m, kx))
                    Tk[:, : min(kx, nx)] = T[:, : min(kx, nx)]
                    acc += mma_tiled(Tk, V, shape)
                for p, s in con.details["free_terms"]:
                    acc += s * ext[z + p, i0 + h: i0 + h + m, j0 + h: j0 + h + m]
                out[z, i0: i0 + m, j0: j0 + m] = acc
    return out[:, : x3.shape[1], : x3.shape[2]].reshape(x.shape)
