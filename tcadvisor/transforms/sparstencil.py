"""SparStencil: flatten-and-crush staircase matrices made 2:4 by column pairing (Li et al., SC'25).

How it works, for a 2D kernel whose bounding box is ky × kx:

* *Flatten*: one output is the kernel, flattened to a row, times the flattened
  input window.  *Crush* with factors (r1, r2): r1 consecutive outputs along x
  and r2 along y share most of their windows, so the unique inputs of the r2 × r1
  output group form one column of B′ with k′ = (ky + r2 − 1)(kx + r1 − 1) rows,
  and the kernel becomes the m′ × k′ staircase A′ (m′ = r1·r2):
  A′[(d, c), (ρ, γ)] = w[ρ − d, γ − c].  Outputs in groups of m′, K = k′.
* *Structured sparsity conversion*: Sparse Tensor Cores need ≤ 2 non-zeros in
  every 4 consecutive columns of a row.  Columns are permuted (and B′'s rows
  with them) into *pairs* that never hold a non-zero in the same row (1:2, hence
  2:4), a column without a partner getting an appended zero column; p zero
  columns in all, K = k′ + p.  Fewest p = a maximum matching in the complement
  of the column-conflict graph.  The paper's Hierarchical Two-Level Matching
  (:func:`~tcadvisor.transforms.matching.two_level_matching`) does this for box
  kernels (k-staircases); an exact maximum matching (Edmonds' blossom) is used
  for every other kernel, and for boxes wherever the two-level algorithm
  over-pads.  Structure of the optimum: a column non-zero in every row
  ("central") conflicts with every non-zero column, an all-zero column with
  none, and for box and star kernels the remaining columns always pair up
  perfectly (checked against the exact matching by the tests), so

      K = 2 · max(⌈k′/2⌉, N_c + ⌈N_b/2⌉)

  with N_c central and N_b other non-zero columns, counted in closed form.
* On the instruction: M = m′ padded to m, K padded to the (logical) k of
  ``mma.sp``; executed MACs per output point M_pad·K_pad / m′, so
  α = P·m′ / (M_pad·K_pad).  The paper quotes α before conversion (P/k′) and
  after (P/(k′+p)); both are reported.
* (r1, r2) are chosen to maximise α over the search space 1 ≤ r1, r2 ≤ 16 with
  r1·r2 ≤ 64 (142 layouts; the paper searches a performance model over an
  unstated space), ties to the fewest outputs per group.  1D kernels crush
  along x only (r2 = 1, 1 ≤ r1 ≤ 64).  3D kernels: our extension, plane by
  plane (each non-empty plane a 2D kernel in its own bounding box, the planes'
  K concatenated).
* FP64 has no ``mma.sp``: at fp64 the staircase runs unconverted on dense
  Tensor Cores (the paper's FP64 evaluation), K = k′.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import TcAdvisorError, WorkBudgetExceeded
from ..mma import MmaShape
from .base import (SPARSITY, AlphaCount, Construction, check_structure, check_weights, kernel_planes, mma_sp_tiled,
                   mma_tiled, pad_to)
from .matching import max_matching_dense, two_level_matching
from .support import BoxSupport, MaskSupport, StarSupport

NAME = "sparstencil"
TITLE = "SparStencil"
DIMS = (1, 2, 3)
SPARSE = True
SEARCH_2D = tuple((r1, r2) for r1 in range(1, 17) for r2 in range(1, 17) if r1 * r2 <= 64)
SEARCH_1D = tuple((r1, 1) for r1 in range(1, 65))
SEARCH_NOTE = "r1, r2 in 1..16 with r1*r2 <= 64 (1D: r2 = 1, r1 in 1..64)"
#: Largest custom kernel (bounding-box cells) searched with exact matchings (about 1 s at the limit).
MASK_COST_BUDGET = 80 * 80
#: Largest number of columns one exact matching is run on.
MAX_MATCHING_COLUMNS = 4_000


def mask_cost(extents: tuple[int, ...]) -> int:
    """Work estimate of counting a custom kernel: the cells of its bounding box."""
    out = 1
    for e in extents:
        out *= int(e)
    return out


def _sparse(precision: str) -> bool:
    if precision == "fp64":
        return False
    if precision not in SPARSITY:
        raise TcAdvisorError(f"SparStencil runs at fp64 (dense) or tf32/fp16/bf16 (sparse), not {precision!r}")
    return True


def search_space(dims: int) -> tuple[tuple[int, int], ...]:
    return SEARCH_1D if dims == 1 else SEARCH_2D


# --------------------------------------------------------------------------- one plane, one layout


def plane_width(k_cols: int, N: int, Nc: int, nu0: int | None, sparse: bool) -> int:
    """K of one plane after conversion: pairs of columns plus appended zero columns.

    ``nu0`` is the maximum matching among the non-central non-zero columns
    (None: they pair up perfectly, ⌊N_b/2⌋, as for box and star kernels).
    """
    if not sparse:
        return k_cols
    nb = N - Nc
    nu0 = nb // 2 if nu0 is None else nu0
    return 2 * max(-(-k_cols // 2), N - nu0)


def _star_centrals(r: int, t: int, r1: np.ndarray, r2: np.ndarray, all_depths: bool) -> np.ndarray:
    """Central columns of the fused 2D stars of depth 0..t (or t only), for every layout, in closed form.

    A column is central iff the r2 × r1 window fits inside the star; the star is
    the union of the rectangles |y| ≤ rj, |x| ≤ r(τ−j), so the window positions
    form a staircase of rectangles g(j) × h(τ−j) (g(j) = 2rj+2−r2, h(i) = 2ri+2−r1,
    clipped at 0) whose union is Σ_j g(j)h(τ−j) − Σ_j g(j)h(τ−1−j): a
    convolution over the depths.  Returns layouts × depths (or layouts × 1).
    """
    j = np.arange(t + 1, dtype=np.int64)
    g = np.maximum(0, 2 * r * j[None, :] + 2 - r2[:, None])
    h = np.maximum(0, 2 * r * j[None, :] + 2 - r1[:, None])
    if not all_depths:
        at_t = (g * h[:, ::-1]).sum(axis=1)
        before = (g[:, :t] * h[:, :t][:, ::-1]).sum(axis=1) if t else 0
        return (at_t - before)[:, None]
    conv = np.zeros_like(g)
    for k in range(t + 1):
        conv[:, k:] += g[:, k:k + 1] * h[:, : t + 1 - k]
    return conv - np.concatenate((np.zeros((len(r1), 1), dtype=np.int64), conv[:, :-1]), axis=1)


def _structured_counts(support, layouts, sparse: bool) -> dict[str, np.ndarray]:
    """k′ (before) and K (after conversion) summed over planes, for every layout, from closed forms.

    Box planes: k′ = (ky+r2−1)(kx+r1−1), every column non-zero, N_c =
    (ky−r2+1)⁺(kx−r1+1)⁺.  Fused-star planes of depth τ: N = P + (r2−1)k +
    (r1−1)(k+r2−1) non-zero columns (the dilation of a centred, row-convex set)
    and N_c from :func:`_star_centrals`.
    """
    r1 = np.array([a for a, _ in layouts], dtype=np.int64)[:, None]
    r2 = np.array([b for _, b in layouts], dtype=np.int64)[:, None]
    if isinstance(support, StarSupport):
        r, t = support.r, support.t
        three = support.dims == 3
        taus = np.arange(t + 1, dtype=np.int64) if three else np.array([t], dtype=np.int64)
        mult = np.where(taus == t, 1, 2 * r) if three else np.array([1], dtype=np.int64)
        k = 2 * r * taus + 1
        P = 1 + 4 * r * taus + 2 * r * r * taus * (taus - 1)
        k_cols = (k + r2 - 1) * (k + r1 - 1)
        N = P + (r2 - 1) * k + (r1 - 1) * (k + r2 - 1)
        Nc = _star_centrals(r, t, r1[:, 0], r2[:, 0], three)
    elif isinstance(support, BoxSupport):
        (mult_, plane), = support.planes()
        mult = np.array([mult_], dtype=np.int64)
        k = plane.side
        ky = 1 if plane.dims == 1 else k
        k_cols = (ky + r2 - 1) * (k + r1 - 1)
        N = k_cols
        Nc = np.maximum(0, ky - r2 + 1) * np.maximum(0, k - r1 + 1)
    else:
        raise TypeError(support)
    width = 2 * np.maximum(-(-k_cols // 2), Nc + -(-(N - Nc) // 2)) if sparse else k_cols
    out = {"k_before": (mult * k_cols).sum(axis=1), "K": (mult * width).sum(axis=1),
           "central": (mult * Nc).sum(axis=1), "zero_columns": (mult * (k_cols - N)).sum(axis=1)}
    if isinstance(support, BoxSupport) and sparse:
        out["p_two_level"] = mult[0] * two_level_zeros(ky, k, r1[:, 0], r2[:, 0])
    return out


def two_level_zeros(ky: int, kx: int, r1, r2):
    """Zero columns the paper's two-level matching appends for a ky × kx box (closed form of Algorithm 1).

    Blocks (m = ky + r2 − 1 of them) s1 = max(⌊m/2⌋, ky) apart are paired:
    min(m − s1, s1) pairs, the other blocks left alone; in each of those, columns
    (g = kx + r1 − 1) s2 = max(⌊g/2⌋, kx) apart are paired the same way, and the
    columns left alone each get a zero column.
    """
    m = ky + np.asarray(r2) - 1
    g = kx + np.asarray(r1) - 1
    s1 = np.maximum(m // 2, ky)
    s2 = np.maximum(g // 2, kx)
    return (m - 2 * np.minimum(m - s1, s1)) * (g - 2 * np.minimum(g - s2, s2))


# --------------------------------------------------------------------------- masks (custom kernels)


def trim(plane: np.ndarray) -> tuple[np.ndarray, int, int]:
    """A 1D/2D plane cut to its bounding box, as 2D, with the box's first row and column."""
    p = np.atleast_2d(plane)
    rows = np.flatnonzero(np.any(p != 0, axis=1))
    cols = np.flatnonzero(np.any(p != 0, axis=0))
    return p[rows[0]: rows[-1] + 1, cols[0]: cols[-1] + 1], int(rows[0]), int(cols[0])


def crushed(plane: np.ndarray, r1: int, r2: int) -> np.ndarray:
    """The staircase A′ (r1·r2 × k′) of a trimmed 2D kernel: A′[(d, c), (ρ, γ)] = w[ρ − d, γ − c]."""
    ky, kx = plane.shape
    out = np.zeros((r2, r1, ky + r2 - 1, kx + r1 - 1), dtype=plane.dtype)
    for d in range(r2):
        for c in range(r1):
            out[d, c, d: d + ky, c: c + kx] = plane
    return out.reshape(r1 * r2, -1)


def _window_hits(mask: np.ndarray, r1: int, r2: int) -> np.ndarray:
    """Non-zero rows of every column of A′ (window sums of the trimmed mask), without building A′."""
    ky, kx = mask.shape
    padded = np.zeros((ky + 2 * r2 - 1, kx + 2 * r1 - 1), dtype=np.int64)
    padded[r2 - 1: r2 - 1 + ky, r1 - 1: r1 - 1 + kx] = mask
    cs = np.zeros((padded.shape[0] + 1, padded.shape[1] + 1), dtype=np.int64)
    cs[1:, 1:] = padded.cumsum(0).cumsum(1)
    H, W = ky + r2 - 1, kx + r1 - 1
    return cs[r2: r2 + H, r1: r1 + W] - cs[:H, r1: r1 + W] - cs[r2: r2 + H, :W] + cs[:H, :W]


def _trimmed_planes(support) -> list[tuple[int, np.ndarray]]:
    cached = getattr(support, "_trimmed", None)
    if cached is None:
        cached = [(mult, trim(plane.mask())[0]) for mult, plane in support.planes()]
        support._trimmed = cached
    return cached


def _mask_plane_stats(mask: np.ndarray, r1: int, r2: int) -> tuple[int, int, int]:
    hits = _window_hits(mask, r1, r2)
    return hits.size, int(np.count_nonzero(hits)), int(np.count_nonzero(hits == r1 * r2))


def exact_pairs(a: np.ndarray) -> tuple[list[tuple[int, int]], int, int]:
    """Fewest-zero-column pairing of the columns of ``a`` (bool, rows × k′): (pairs, p, ν0).

    Non-central non-zero columns are matched by Edmonds' algorithm; central ones
    (non-zero in every row) and unmatched ones take all-zero columns of A′ as
    partners, then appended zero columns (−1); surplus all-zero columns pair up.
    """
    rows = a.shape[0]
    nnz = a.sum(axis=0)
    zero = list(np.flatnonzero(nnz == 0))
    central = list(np.flatnonzero(nnz == rows))
    other = np.flatnonzero((nnz > 0) & (nnz < rows))
    if len(other) > MAX_MATCHING_COLUMNS:
        raise WorkBudgetExceeded(f"SparStencil: {len(other)} columns to match exactly (at most "
                                 f"{MAX_MATCHING_COLUMNS}); the kernel is too large for an exact pairing")
    sub = a[:, other].astype(np.int32)
    compatible = (sub.T @ sub) == 0
    np.fill_diagonal(compatible, False)
    mate = max_matching_dense(compatible)
    pairs = [(int(other[i]), int(other[j])) for i, j in enumerate(mate) if j > i]
    alone = [int(other[i]) for i, j in enumerate(mate) if j == -1] + [int(c) for c in central]
    nu0 = len(pairs)
    for col in alone:
        pairs.append((col, int(zero.pop()) if zero else -1))
    while len(zero) >= 2:
        pairs.append((int(zero.pop()), int(zero.pop())))
    if zero:
        pairs.append((int(zero.pop()), -1))
    return pairs, sum(1 for _, b in pairs if b == -1), nu0


def conflict_free(a: np.ndarray, pairs: list[tuple[int, int]]) -> bool:
    """True if no row of ``a`` has a non-zero in both columns of any pair (−1: a zero column)."""
    nz = a != 0
    return all(b < 0 or not np.any(nz[:, i] & nz[:, b]) for i, b in pairs)


# --------------------------------------------------------------------------- counting and search


def _evaluate(planes_k: int, P: int, r1: int, r2: int, shape: MmaShape) -> tuple[Fraction, int, int]:
    m_pad = pad_to(r1 * r2, shape.m)
    k_pad = pad_to(planes_k, shape.k)
    return Fraction(P * r1 * r2, m_pad * k_pad), m_pad, k_pad


def _layout_counts(support, r1: int, r2: int, sparse: bool, exact_masks: bool) -> dict:
    """K before (Σ k′) and after conversion, summed over planes, for one layout."""
    if isinstance(support, (StarSupport, BoxSupport)):
        return {key: int(v[0]) for key, v in _structured_counts(support, [(r1, r2)], sparse).items()}
    k_before = K = central = zeros = 0
    two: int | None = 0 if sparse else None
    for mult, mask in _trimmed_planes(support):
        k_cols, N, Nc = _mask_plane_stats(mask, r1, r2)
        nu0 = exact_pairs(crushed(mask, r1, r2))[2] if (exact_masks and sparse) else None
        k_before += mult * k_cols
        K += mult * plane_width(k_cols, N, Nc, nu0, sparse)
        central += mult * Nc
        zeros += mult * (k_cols - N)
        if two is not None and mask.all():
            two += mult * int(two_level_zeros(mask.shape[0], mask.shape[1], r1, r2))
        else:
            two = None
    return {"k_before": k_before, "K": K, "central": central, "zero_columns": zeros, "p_two_level": two}


def _best_layout(support, shape: MmaShape, sparse: bool) -> tuple[tuple[int, int], dict]:
    """The (r1, r2) of the search space with the highest α (ties: fewest outputs per group, then K)."""
    space = search_space(support.dims)
    P = support.P
    if isinstance(support, MaskSupport):
        planes = _trimmed_planes(support)
        cells = sum(mult * m.size for mult, m in planes)
        if cells > MASK_COST_BUDGET:
            raise WorkBudgetExceeded(f"SparStencil: pairing the columns of a custom kernel of {cells} bounding-box "
                                     f"cells exactly is over the budget of {MASK_COST_BUDGET} cells")
        # Upper bounds assume perfect pairing; the exact matching is run in order of bound until none can win.
        bounds = []
        for r1, r2 in space:
            c = _layout_counts(support, r1, r2, sparse, exact_masks=False)
            bounds.append((_evaluate(c["K"], P, r1, r2, shape)[0], (r1, r2)))
        bounds.sort(key=lambda b: (-b[0], b[1][0] * b[1][1], b[1]))
        best = None
        for bound, (r1, r2) in bounds:
            if best is not None and (bound < best[0] or (bound == best[0] and (r1 * r2, (r1, r2)) >= best[2])):
                break
            c = _layout_counts(support, r1, r2, sparse, exact_masks=True)
            alpha = _evaluate(c["K"], P, r1, r2, shape)[0]
            key = (r1 * r2, (r1, r2))
            if best is None or alpha > best[0] or (alpha == best[0] and key < best[2]):
                best = (alpha, (r1, r2), key, c)
        return best[1], best[3]
    counts = _structured_counts(support, space, sparse)
    best = None
    for i, (r1, r2) in enumerate(space):
        alpha = _evaluate(int(counts["K"][i]), P, r1, r2, shape)[0]
        key = (-alpha, r1 * r2, int(counts["K"][i]), (r1, r2))
        if best is None or key < best[0]:
            best = (key, i)
    i = best[1]
    return space[i], {key: int(v[i]) for key, v in counts.items()}


def _details(layout, c: dict, P: int, shape: MmaShape, sparse: bool) -> tuple[dict, Fraction]:
    r1, r2 = layout
    alpha, m_pad, k_pad = _evaluate(c["K"], P, r1, r2, shape)
    executed = Fraction(m_pad * k_pad, r1 * r2)
    details = {"r1": r1, "r2": r2, "M": r1 * r2, "M_pad": m_pad, "k_before": c["k_before"],
               "p": c["K"] - c["k_before"], "K": c["K"], "K_pad": k_pad,
               "p_two_level": c.get("p_two_level"),
               "central_columns": c["central"], "zero_columns_of_A": c["zero_columns"],
               "alpha_before_conversion": Fraction(P, c["k_before"]), "alpha_after_conversion": Fraction(P, c["K"]),
               "sparse": sparse, "search": SEARCH_NOTE,
               "matrices": f"A'' of {r1 * r2} x {c['K']} (k' = {c['k_before']} + p = {c['K'] - c['k_before']}) "
                           f"padded to {m_pad} x {k_pad}"}
    return details, executed


def count(support, shape: MmaShape, precision: str = "fp16", r1: int | None = None,
          r2: int | None = None) -> AlphaCount:
    """α of the best layout (or of the given one) from closed forms (box, star) or the mask."""
    sparse = _sparse(precision)
    if (r1 is None) != (r2 is None):
        raise TcAdvisorError("SparStencil: give both crush factors r1 and r2, or neither")
    if r1 is None:
        layout, c = _best_layout(support, shape, sparse)
    else:
        layout = _check_layout(support.dims, r1, r2)
        c = _layout_counts(support, *layout, sparse, exact_masks=True)
    details, executed = _details(layout, c, support.P, shape, sparse)
    return AlphaCount(NAME, shape, precision, support.P, executed, details)


def _check_layout(dims: int, r1: int, r2: int) -> tuple[int, int]:
    if r1 < 1 or r2 < 1 or (dims == 1 and r2 != 1):
        raise TcAdvisorError(f"SparStencil crush factors must be positive (and r2 = 1 in 1D), got ({r1}, {r2})")
    return int(r1), int(r2)


# --------------------------------------------------------------------------- construction


def construct(weights: np.ndarray, shape: MmaShape, precision: str = "fp16", r1: int | None = None,
              r2: int | None = None) -> Construction:
    """A″ (paired, padded) for the best layout of ``weights`` (or the given one), with its column map.

    ``details["columns"]`` lists, for every column of A″, the plane and the
    (ρ, γ) column of that plane's A′ it holds (None for an appended zero
    column); B″'s rows are gathered from the input in the same order.
    """
    w = check_weights(weights)
    sparse = _sparse(precision)
    support = MaskSupport(w != 0, w)
    if r1 is None and r2 is None:
        (r1, r2), _ = _best_layout(support, shape, sparse)
    elif r1 is None or r2 is None:
        raise TcAdvisorError("SparStencil: give both crush factors r1 and r2, or neither")
    r1, r2 = _check_layout(w.ndim, r1, r2)
    R = (w.shape[0] - 1) // 2
    blocks, columns, infos = [], [], []
    k_before = 0
    for p, plane in kernel_planes(w):
        tp, y0, x0 = trim(plane)
        a = crushed(tp, r1, r2)
        width = tp.shape[1] + r1 - 1
        k_before += a.shape[1]
        is_box = bool(np.all(tp != 0))
        if sparse:
            pairs, p_exact, _ = exact_pairs(a != 0)
            info = {"p_exact": p_exact, "p_two_level": None}
            if is_box:
                two, p_two = two_level_matching(tp.shape[0] + r2 - 1, width, tp.shape[0], tp.shape[1])
                if not conflict_free(a, two):
                    raise AssertionError("the two-level matching paired conflicting columns")
                info["p_two_level"] = p_two
                if p_two <= p_exact:
                    pairs = two
            if not conflict_free(a, pairs):
                raise AssertionError("the exact matching paired conflicting columns")
            order = [c for pair in pairs for c in pair]
        else:
            order, info = list(range(a.shape[1])), {}
        infos.append(info)
        block = np.zeros((a.shape[0], len(order)))
        for j, col in enumerate(order):
            if col >= 0:
                block[:, j] = a[:, col]
        blocks.append(block)
        # plane offset and input offsets of column (ρ, γ): y0 − R + ρ, x0 − R + γ
        columns += [None if col < 0 else (p, y0 - (R if w.ndim > 1 else 0) + col // width, x0 - R + col % width)
                    for col in order]
    mat = np.concatenate(blocks, axis=1)
    K = mat.shape[1]
    m_pad, k_pad = pad_to(r1 * r2, shape.m), pad_to(K, shape.k)
    operand = np.zeros((m_pad, k_pad))
    operand[: r1 * r2, :K] = mat
    keep, group = SPARSITY[precision] if sparse else (None, None)
    if sparse and not check_structure(operand != 0, keep, group):
        raise AssertionError("column pairing failed to give 1:2 structure")
    P = int(np.count_nonzero(w))
    two = [i.get("p_two_level") for i in infos]
    c = {"k_before": k_before, "K": K, "central": None, "zero_columns": None,
         "p_two_level": sum(two) if sparse and two and all(v is not None for v in two) else None}
    details, executed = _details((r1, r2), c, P, shape, sparse)
    details.update(columns=columns + [None] * (k_pad - K), planes=infos, z_offset=R if w.ndim == 3 else 0,
                   sparsity=f"{keep}:{group}" if sparse else "dense")
    return Construction(NAME, shape, [operand], details, Fraction(P), executed, precision)


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, precision: str = "fp16",
            r1: int | None = None, r2: int | None = None) -> np.ndarray:
    """One periodic step: B″ gathered per output group, A″ (compressed when sparse) times B″, MMA by MMA."""
    w = check_weights(weights)
    x = np.asarray(x, dtype=np.float64)
    con = construct(w, shape, precision, r1, r2)
    d = con.details
    r1, r2, zoff = d["r1"], d["r2"], d["z_offset"]
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape)
    Z, H, W = x3.shape
    gy, gx = -(-H // r2), -(-W // r1)
    groups = [(z, i * r2, j * r1) for z in range(Z) for i in range(gy) for j in range(gx)]
    n_cols = pad_to(len(groups), shape.n)
    B = np.zeros((len(d["columns"]), n_cols))
    gz = np.array([g[0] for g in groups])
    g_y = np.array([g[1] for g in groups])
    g_x = np.array([g[2] for g in groups])
    for row, col in enumerate(d["columns"]):
        if col is None:
            continue
        p, dy, dx = col
        B[row, : len(groups)] = x3[(gz + p - zoff) % Z, (g_y + dy) % H, (g_x + dx) % W]
    A = con.operands[0]
    if d["sparse"]:
        keep, group = map(int, d["sparsity"].split(":"))
        Y = mma_sp_tiled(A, B, shape, keep, group)
    else:
        Y = mma_tiled(A, B, shape)
    out = np.zeros((Z, gy * r2, gx * r1))
    for g, (z, y0, x0) in enumerate(groups):
        out[z, y0: y0 + r2, x0: x0 + r1] = Y[: r1 * r2, g].reshape(r2, r1)
    return out[:, :H, :W].reshape(x.shape)
