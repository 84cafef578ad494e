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
  α = (2R+1)/32, the paper's 15/32 at R = 7.  R = 8 splits each line (below);
  larger fused radii take the next multiple of m for L (L ≥ 2R+2), so every
  radius has a construction.
* At L = 2R the band (2R+1 non-zeros in a window of 2L columns) is too dense
  for 2:4, but each line splits into two matrices, its taps at even and at odd
  offsets.  The swap exchanges columns of equal parity, and a row's taps of one
  parity lie in columns of one parity, while every pair of swapped columns
  (2p, 2p+1) holds one even and one odd original column: each half is 1:2, so
  2:4 too.  Both halves multiply the same input, two products per line, so
  α = (2R+1)/(2·2L) — at L = 16 and R = 8, 17/64, what L = 32 gives — without
  doubling the outputs per line (the bundled kernel's L = 16 at r·t = 8).
* Below L = 2R (the bundled kernel's L = 16 in 1D beyond r·t = 8) the window of
  L + 2R columns is padded to whole blocks of 2L, the swap applied within each
  block, and every line is its two halves again: a swapped pair (2p, 2p+1) of
  any block still holds one even and one odd original column, so each half stays
  1:2.  α = (2R+1)/(2·K_pad) with K_pad = 2L·⌈(L+2R)/2L⌉.
* Stars pay for the zeros of their lines' bounding boxes: every non-empty line
  is a full L × K_pad matrix.  Executed MACs per output point: lines · K_pad.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ..mma import MmaShape
from .base import (AlphaCount, Construction, check_structure, check_weights, compress, decompress,
                   kernel_lines, mma_sp_tiled, pad_to, periodic_extend, sparsity_of)

NAME = "spider"
TITLE = "SPIDER"
DIMS = (1, 2, 3)
SPARSE = True

__all__ = ["construct", "count", "emulate", "banded", "swap_permutation", "default_L", "check_structure",
           "compress", "decompress", "mma_sp_tiled"]


def default_L(R: int, shape: MmaShape) -> int:
    """The instruction's m where the swap has room or the line splits into halves (2R + 2 ≤ m, or 2R = m: the
    bundled kernel's L = 16 up to R = 8), else the smallest multiple of m that leaves room (L ≥ 2R+2)."""
    return shape.m if 2 * R == shape.m else pad_to(2 * R + 2, shape.m)


def swap_permutation(L: int, k_pad: int, width: int | None = None) -> np.ndarray:
    """``src[c]``: which original column lands in column c after the strided swap.

    The swap exchanges column j with j + L for every odd j < L, within each block of 2L
    columns that holds some of the ``width`` band columns (default: the first block only,
    all that L ≥ 2R needs); the padding beyond stays in place.
    """
    src = np.arange(k_pad)
    for b0 in range(0, 2 * L if width is None else width, 2 * L):
        for j in range(b0 + 1, b0 + L, 2):
            src[j], src[j + L] = j + L, j
    return src


def banded(line: np.ndarray, L: int, k_pad: int) -> np.ndarray:
    """The L×k_pad matrix with ``line`` on every row, shifted one column per row."""
    mat = np.zeros((L, k_pad), dtype=np.asarray(line).dtype)
    for i in range(L):
        mat[i, i: i + len(line)] = line
    return mat


def halves(R: int, L: int) -> int:
    """Matrices per kernel line: 1 where the swap has room (L ≥ 2R+2), 2 (even and odd taps) from L = 2R down."""
    return 1 if L >= 2 * R + 2 else 2


def padded_k(R: int, L: int, k: int) -> int:
    """K_pad: the window of L + 2R columns in whole blocks of 2L (one block wherever L ≥ 2R), padded to k."""
    return pad_to(pad_to(max(L + 2 * R, 2 * L), 2 * L), k)


def parity_half(line: np.ndarray, parity: int) -> np.ndarray:
    """The line's taps at offsets (positions along the line) of the given parity, the others zero."""
    half = np.array(line, copy=True)
    half[1 - parity::2] = 0
    return half


def _geometry(R: int, L: int | None, shape: MmaShape, n_lines: int, P: int) -> tuple[int, int, dict, Fraction]:
    L = default_L(R, shape) if L is None else L
    if L < 2 or L % 2:
        from ..errors import TcAdvisorError

        raise TcAdvisorError(f"the strided swap needs an even L (≥ 2R+2 = {2 * R + 2}, or below with each line "
                             f"split into its even and odd taps), got L = {L}")
    k_pad = padded_k(R, L, shape.k)
    h = halves(R, L)
    details = {"R": R, "L": L, "K": L + 2 * R, "K_pad": k_pad, "n_lines": n_lines, "halves": h,
               "matrices": f"{n_lines * h} line matrices of {L} x {k_pad}"
                           + (" (each line's even and odd taps apart)" if h == 2 else ""),
               "alpha_logical": Fraction(P, n_lines * (L + 2 * R))}
    return L, k_pad, details, Fraction(h * n_lines * k_pad)


def construct(weights: np.ndarray, shape: MmaShape, L: int | None = None,
              keep: int = 2, group: int = 4, precision: str | None = None) -> Construction:
    """Banded, swapped and padded line matrices of every non-empty kernel line.

    ``keep:group`` is the sparsity the instruction needs (2:4 for FP16/BF16,
    1:2 for TF32); the strided swap satisfies both.  ``precision``, if given,
    sets it (tf32 → 1:2, fp16/bf16 → 2:4).  From L = 2R down every line gives two
    matrices, its even and its odd taps (:func:`halves`), one after the other
    in ``operands``, their line index repeated in ``details["lines"]``.
    """
    if precision is not None:
        keep, group = sparsity_of(TITLE, precision)
    w = check_weights(weights)
    R = (w.shape[0] - 1) // 2
    lines_ = kernel_lines(w)
    L, k_pad, details, executed = _geometry(R, L, shape, len(lines_), int(np.count_nonzero(w)))
    src = swap_permutation(L, k_pad, pad_to(L + 2 * R, 2 * L))
    operands, lines = [], []
    for idx, line in lines_:
        parts = [line] if details["halves"] == 1 else [parity_half(line, 0), parity_half(line, 1)]
        for part in parts:
            mat = banded(part, L, k_pad)[:, src]
            if not check_structure(mat != 0, keep, group):
                raise AssertionError(f"strided swap failed to give {keep}:{group} sparsity (R={R}, L={L})")
            operands.append(mat)
            lines.append(idx)
    details.update(lines=lines, permutation=src, sparsity=f"{keep}:{group}")
    prec = precision or ("tf32" if (keep, group) == (1, 2) else "fp16")
    return Construction(NAME, shape, operands, details, Fraction(int(np.count_nonzero(w))), executed, prec)


def count(support, shape: MmaShape, precision: str = "fp16", L: int | None = None) -> AlphaCount:
    """The counts of :func:`construct`: each non-empty line is one L × K_pad matrix per L outputs (two at L = 2R)."""
    keep, group = sparsity_of(TITLE, precision)
    _, _, details, executed = _geometry(support.R, L, shape, support.n_lines(), support.P)
    details["sparsity"] = f"{keep}:{group}"
    return AlphaCount(NAME, shape, precision, support.P, executed, details)


# --------------------------------------------------------------------------- emulation


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, keep: int = 2, group: int = 4,
            L: int | None = None, precision: str | None = None) -> np.ndarray:
    """One periodic stencil step through the SPIDER dataflow (any dimensionality, any size).

    Every kernel line's swapped matrix is compressed to values + metadata and
    multiplied, instruction by instruction, with the input matrix whose columns
    are n lines of the domain and whose rows are swapped like the matrix's columns.
    """
    w = check_weights(weights)
    x = np.asarray(x, dtype=np.float64)
    R = (w.shape[0] - 1) // 2
    con = construct(w, shape, L=L, keep=keep, group=group, precision=precision)
    keep, group = map(int, con.details["sparsity"].split(":"))
    L, k_pad, src = con.details["L"], con.details["K_pad"], con.details["permutation"]
    width = x.shape[-1]
    tiles = -(-width // L)
    xp = periodic_extend(x, (R,) * x.ndim, tuple(s + 2 * R for s in x.shape[:-1]) + (tiles * L + 2 * R,))
    lead_shape = x.shape[:-1]
    n_lines = int(np.prod(lead_shape)) if lead_shape else 1
    n_cols = pad_to(n_lines, shape.n)
    out = np.zeros((n_lines, tiles * L))
    for idx, a_mat in zip(con.details["lines"], con.operands):
        # Input lines read by this kernel line for every output line (columns of X).
        lines_in = np.zeros((n_cols, tiles * L + 2 * R))
        for o, lead in enumerate(itertools.product(*(range(s) for s in lead_shape))):
            lines_in[o] = xp[tuple(p + a for p, a in zip(lead, idx))]
        for j0 in range(0, tiles * L, L):
            x_mat = np.zeros((k_pad, n_cols))
            x_mat[: L + 2 * R] = lines_in[:, j0: j0 + L + 2 * R].T
            y = mma_sp_tiled(a_mat, x_mat[src], shape, keep, group)
            out[:, j0: j0 + L] += y[:, :n_lines].T
    return out[:, :width].reshape(x.shape)
