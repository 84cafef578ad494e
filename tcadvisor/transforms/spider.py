"""SPIDER: line decomposition and strided swapping onto Sparse Tensor Cores (Gu et al., 2025).

How it works:

* The (fused) kernel is cut into 1D lines along the last axis; each line ``w``
  of length 2R+1 is one sparse matrix product, and the lines' partial results
  are summed (in 2D, one product per kernel row; in 3D one per row of each plane).
* A line becomes a banded L×(L+2R) matrix (row i holds ``w`` at columns
  i … i+2R), which turns L consecutive outputs into one matrix product against
  an input matrix whose N columns are N independent lines of the domain.
* The band has 2R+1 non-zeros per row, clustered, which Sparse Tensor Cores do
  not accept.  The *strided swap* exchanges column j with column j+L for every
  odd j < L.  With L ≥ 2R+2 (even) every group of 4 consecutive columns then
  holds at most 2 non-zeros (2:4), indeed every pair at most one (1:2, what TF32
  ``mma.sp`` needs).  The input matrix's rows are swapped the same way, so the
  product is unchanged.
* The swap reaches column 2L−1, so K is padded to 2L (a multiple of the
  instruction's k).  With L = 16 (the instruction's m) and R ≤ 7 this gives
  α = (2R+1)/32, the paper's 15/32 at R = 7.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..mma import MmaShape
from ..reference import radius_of
from .base import Construction, kernel_lines, pad_to


def default_L(R: int, shape: MmaShape) -> int:
    """Smallest multiple of the instruction's m that leaves room for the swap (L ≥ 2R+2)."""
    return pad_to(2 * R + 2, shape.m)


def swap_permutation(L: int, k_pad: int) -> np.ndarray:
    """``src[c]``: which original column lands in column c after the strided swap."""
    src = np.arange(k_pad)
    for j in range(1, L, 2):
        src[j], src[j + L] = j + L, j
    return src


def banded(line: np.ndarray, L: int, k_pad: int) -> np.ndarray:
    """The L×k_pad matrix with ``line`` on every row, shifted one column per row."""
    mat = np.zeros((L, k_pad), dtype=np.asarray(line).dtype)
    for i in range(L):
        mat[i, i : i + len(line)] = line
    return mat


def check_structure(mat: np.ndarray, keep: int, group: int) -> bool:
    """True if every run of ``group`` columns of every row has at most ``keep`` non-zeros."""
    rows, cols = mat.shape
    if cols % group:
        return False
    counts = np.count_nonzero(mat.reshape(rows, cols // group, group), axis=2)
    return bool(np.all(counts <= keep))


def compress(mat: np.ndarray, keep: int = 2, group: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Compress a ``keep``:``group`` structured matrix into values and indices.

    Returns ``values`` (rows × cols·keep/group) and ``meta`` (same shape, the
    position 0…group−1 of each kept value in its group, increasing within the
    group).  Groups with fewer non-zeros keep explicit zeros at the lowest free
    positions, as the hardware format requires a full set of indices.
    """
    rows, cols = mat.shape
    if not check_structure(mat, keep, group):
        raise ValueError(f"matrix is not {keep}:{group} structured")
    groups = cols // group
    values = np.zeros((rows, groups * keep), dtype=mat.dtype)
    meta = np.zeros((rows, groups * keep), dtype=np.uint8)
    for r_, g in itertools.product(range(rows), range(groups)):
        seg = mat[r_, g * group : (g + 1) * group]
        idx = list(np.flatnonzero(seg))
        free = [p for p in range(group) if p not in idx]
        idx = sorted(idx + free[: keep - len(idx)])
        values[r_, g * keep : (g + 1) * keep] = seg[idx]
        meta[r_, g * keep : (g + 1) * keep] = idx
    return values, meta


def decompress(values: np.ndarray, meta: np.ndarray, keep: int, group: int) -> np.ndarray:
    rows, kept = values.shape
    out = np.zeros((rows, kept // keep * group), dtype=values.dtype)
    for g in range(kept // keep):
        for s in range(keep):
            col = g * group + meta[:, g * keep + s].astype(int)
            out[np.arange(rows), col] += values[:, g * keep + s]
    return out


def construct(weights: np.ndarray, shape: MmaShape, L: int | None = None,
              keep: int = 2, group: int = 4) -> Construction:
    """Banded, swapped and padded line matrices of every non-empty kernel line.

    ``keep:group`` is the sparsity the instruction needs (2:4 for FP16/BF16,
    1:2 for TF32); the strided swap satisfies both.
    """
    w = np.asarray(weights)
    R = radius_of(w)
    L = default_L(R, shape) if L is None else L
    if L < 2 * R + 2 or L % 2:
        raise ValueError(f"the strided swap needs an even L ≥ 2R+2 = {2 * R + 2}, got L = {L}")
    k_pad = pad_to(2 * L, shape.k)
    src = swap_permutation(L, k_pad)
    operands, lines = [], []
    for idx, line in kernel_lines(w):
        mat = banded(line, L, k_pad)[:, src]
        if not check_structure(mat != 0, keep, group):
            raise AssertionError(f"strided swap failed to give {keep}:{group} sparsity (R={R}, L={L})")
        operands.append(mat)
        lines.append(idx)
    return Construction(
        "spider",
        shape,
        operands,
        details={"R": R, "L": L, "K": L + 2 * R, "K_pad": k_pad, "lines": lines,
                 "permutation": src, "sparsity": f"{keep}:{group}"},
    )


def count(mask: np.ndarray, shape: MmaShape, L: int | None = None) -> tuple[int, int]:
    """(useful, executed) MACs of :func:`construct` without building the matrices.

    Each non-empty line of P_line non-zeros gives an L × K_pad matrix with
    P_line non-zeros per row; tests check this equals the construction's count.
    """
    m = np.asarray(mask) != 0
    R = radius_of(m)
    L = default_L(R, shape) if L is None else L
    k_pad = pad_to(2 * L, shape.k)
    per_line = m.reshape(-1, m.shape[-1]).sum(axis=1)
    per_line = per_line[per_line > 0]
    return int(per_line.sum()) * L, len(per_line) * L * k_pad


# --------------------------------------------------------------------------- emulation


def mma_sp_tiled(a_dense: np.ndarray, x: np.ndarray, shape: MmaShape, keep: int, group: int) -> np.ndarray:
    """A·X as a loop of sparse MMA instructions on the compressed form of A.

    A is compressed once (values + metadata, as uploaded); each instruction
    takes one k-chunk of the logical K, expands it from values and metadata
    (what the Sparse Tensor Core does in hardware) and multiplies.
    """
    values, meta = compress(a_dense, keep, group)
    m_tot, k_tot = a_dense.shape
    n_tot = x.shape[1]
    per_chunk = shape.k * keep // group
    out = np.zeros((m_tot, n_tot))
    for m0 in range(0, m_tot, shape.m):
        for n0 in range(0, n_tot, shape.n):
            tile = np.zeros((shape.m, shape.n))
            for c, k0 in enumerate(range(0, k_tot, shape.k)):
                vals = values[m0 : m0 + shape.m, c * per_chunk : (c + 1) * per_chunk]
                idx = meta[m0 : m0 + shape.m, c * per_chunk : (c + 1) * per_chunk]
                a_chunk = decompress(vals, idx, keep, group)
                tile += a_chunk @ x[k0 : k0 + shape.k, n0 : n0 + shape.n]
            out[m0 : m0 + shape.m, n0 : n0 + shape.n] = tile
    return out


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, keep: int = 2, group: int = 4,
            L: int | None = None) -> np.ndarray:
    """One periodic stencil step through the SPIDER dataflow (any dimensionality).

    The last extent of ``x`` must be a multiple of L and the number of lines of
    the domain (product of the leading extents) a multiple of the instruction's n.
    """
    w = np.asarray(weights, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    R = radius_of(w)
    con = construct(w, shape, L=L, keep=keep, group=group)
    L, k_pad, src = con.details["L"], con.details["K_pad"], con.details["permutation"]
    width = x.shape[-1]
    if width % L:
        raise ValueError(f"the last extent {width} must be a multiple of L = {L}")
    xp = np.pad(x, R, mode="wrap")
    lead_shape = x.shape[:-1]
    n_lines = int(np.prod(lead_shape)) if lead_shape else 1
    n_cols = pad_to(n_lines, shape.n)
    out = np.zeros((n_lines, width))
    for idx, a_mat in zip(con.details["lines"], con.operands):
        # Input lines read by this kernel line for every output line (columns of X).
        lines_in = np.zeros((n_cols, width + 2 * R))
        for o, lead in enumerate(itertools.product(*(range(s) for s in lead_shape))):
            lines_in[o] = xp[tuple(p + a for p, a in zip(lead, idx))]
        for j0 in range(0, width, L):
            x_mat = np.zeros((k_pad, n_cols))
            x_mat[: L + 2 * R] = lines_in[:, j0 : j0 + L + 2 * R].T
            y = mma_sp_tiled(a_mat, x_mat[src], shape, keep, group)
            out[:, j0 : j0 + L] += y[:, :n_lines].T
    return out.reshape(x.shape)
