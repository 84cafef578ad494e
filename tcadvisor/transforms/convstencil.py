"""ConvStencil: stencil2row flattening and dual tessellation (Chen et al., PPoPP'24).

How it works, for a 2D kernel ``W`` of side n = 2R+1 (R the fused radius):

* Outputs are produced in groups of n+1 consecutive columns.  For output row
  ``i`` and group ``q`` the n×n input windows of all n+1 outputs lie in input
  columns ``q(n+1) … q(n+1)+2n−1``.  stencil2row splits that strip in two:
  part A (columns ``q(n+1) … q(n+1)+n−1``) and part B (the next n columns),
  each flattened row-major into a row of n² values.
* Output column c of the group needs the weights ``W[a, y−c]`` against part A
  (y ≥ c, "lower triangles") and ``W[a, y+n−c]`` against part B (y < c, "upper
  triangles").  These are the two weight matrices ``WA`` and ``WB`` of shape
  n² × (n+1); every weight appears n+1 times in total, so half of the logical
  entries are zero (α_logical = P / 2n²).
* On the Tensor Cores, M stencil2row rows (different groups q) are multiplied
  by ``WA`` and accumulated with the product against ``WB``.  K = n² is padded
  to a multiple of the instruction's k and N = n+1 to a multiple of its n: the
  padding is executed too, which is what α counts.  A star pays for the zeros
  of its bounding box (the matrices are those of the n×n window).
* 1D uses n instead of n² (one row of the window); 3D splits the kernel into its
  non-empty 2D planes, each computed as above and summed.

Executed MACs per output point: planes · 2·K_pad·N_pad / (n+1).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..mma import MmaShape
from .base import (AlphaCount, Construction, check_weights, kernel_planes, mma_tiled, pad_to,
                   periodic_extend)

NAME = "convstencil"
TITLE = "ConvStencil"
DIMS = (1, 2, 3)
SPARSE = False


def weight_matrices(plane: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The unpadded dual-tessellation matrices ``(WA, WB)`` of a 1D or 2D kernel.

    ``WA[a·n + y, c] = W[a, y − c]`` for y ≥ c and ``WB[a·n + y, c] = W[a, y + n − c]``
    for y < c, so column c of ``WA`` and ``WB`` together hold every weight once.
    """
    w = np.atleast_2d(np.asarray(plane))  # 1D kernels become one window row
    rows, n = w.shape
    wa = np.zeros((rows, n, n + 1), dtype=w.dtype)
    wb = np.zeros((rows, n, n + 1), dtype=w.dtype)
    for c in range(n + 1):
        wa[:, c:, c] = w[:, : n - c]
        wb[:, :c, c] = w[:, n - c:]
    return wa.reshape(rows * n, n + 1), wb.reshape(rows * n, n + 1)


def _padded(mat: np.ndarray, shape: MmaShape) -> np.ndarray:
    k_pad, n_pad = pad_to(mat.shape[0], shape.k), pad_to(mat.shape[1], shape.n)
    out = np.zeros((k_pad, n_pad), dtype=mat.dtype)
    out[: mat.shape[0], : mat.shape[1]] = mat
    return out


def _geometry(dims: int, R: int, planes: int, P: int, shape: MmaShape) -> tuple[Fraction, Fraction, dict]:
    n = 2 * R + 1
    k_logical = n if dims == 1 else n * n
    k_pad, n_pad = pad_to(k_logical, shape.k), pad_to(n + 1, shape.n)
    executed = Fraction(planes * 2 * k_pad * n_pad, n + 1)
    details = {"n_k": n, "K": k_logical, "K_pad": k_pad, "N": n + 1, "N_pad": n_pad, "planes": planes,
               "outputs_per_group": n + 1, "matrices": f"{planes} x 2 weight matrices of {k_pad} x {n_pad}",
               "alpha_logical": Fraction(P, 2 * k_logical * planes)}
    return Fraction(P), executed, details


def construct(weights: np.ndarray, shape: MmaShape, precision: str = "fp64") -> Construction:
    """Build the padded ``WA``/``WB`` of every non-empty plane of ``weights``."""
    w = check_weights(weights)
    n = w.shape[0]
    planes = kernel_planes(w)
    operands = []
    for _, plane in planes:
        wa, wb = weight_matrices(plane)
        operands += [_padded(wa, shape), _padded(wb, shape)]
    useful, executed, details = _geometry(w.ndim, (n - 1) // 2, len(planes), int(np.count_nonzero(w)), shape)
    details.update(plane_index=[p for p, _ in planes], window_rows=1 if w.ndim == 1 else n)
    return Construction(NAME, shape, operands, details, useful, executed, precision)


def count(support, shape: MmaShape, precision: str = "fp64") -> AlphaCount:
    """The counts of :func:`construct` from the support's radius, points and non-empty planes."""
    planes = support.n_planes() if support.dims == 3 else 1
    useful, executed, details = _geometry(support.dims, support.R, planes, support.P, shape)
    return AlphaCount(NAME, shape, precision, useful, executed, details)


# --------------------------------------------------------------------------- emulation


def stencil2row(x: np.ndarray, row: int, n: int, groups: int, part: str, window_rows: int) -> np.ndarray:
    """Rows of stencil2row matrix A or B for output row ``row`` of a 2D input.

    Row q holds the ``window_rows``×n window strip starting at column q(n+1)
    (part A) or q(n+1)+n (part B), flattened row-major.
    """
    start = 0 if part == "A" else n
    out = np.empty((groups, window_rows * n), dtype=x.dtype)
    for q in range(groups):
        c0 = q * (n + 1) + start
        out[q] = x[row: row + window_rows, c0: c0 + n].reshape(-1)
    return out


def emulate_plane(x_ext: np.ndarray, wa: np.ndarray, wb: np.ndarray, shape: MmaShape, n: int, rows_w: int,
                  height: int, groups: int) -> np.ndarray:
    """One plane's dual tessellation on an extended 2D input, MMA by MMA.

    ``x_ext`` holds the input from R rows/columns before the first output on;
    output (i, q(n+1)+c) is row q of stencil2row A times column c of ``WA`` plus
    row q of stencil2row B times column c of ``WB``, M groups per instruction,
    K in chunks of k, N in chunks of n, exactly as the hardware tiles it.
    """
    m_pad = pad_to(groups, shape.m)
    out = np.zeros((height, groups * (n + 1)))
    for i in range(height):
        acc = np.zeros((m_pad, wa.shape[1]))
        for part, wmat in (("A", wa), ("B", wb)):
            rows = np.zeros((m_pad, wmat.shape[0]))
            rows[:groups, : rows_w * n] = stencil2row(x_ext, i, n, groups, part, rows_w)
            acc += mma_tiled(rows, wmat, shape)
        out[i] = acc[:groups, : n + 1].reshape(-1)
    return out


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, precision: str = "fp64") -> np.ndarray:
    """One periodic stencil step of ``weights`` on ``x`` through the ConvStencil dataflow (any size)."""
    w = check_weights(weights)
    x = np.asarray(x, dtype=np.float64)
    con = construct(w, shape)
    n = w.shape[0]
    R = (n - 1) // 2
    rows_w = con.details["window_rows"]
    groups = -(-x.shape[-1] // (n + 1))
    width = groups * (n + 1) + n - 1
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape)  # (z, y, x)
    pad = (R if x.ndim == 3 else 0, R if x.ndim >= 2 else 0, R)
    ext = periodic_extend(x3, pad, (x3.shape[0] + 2 * pad[0], x3.shape[1] + 2 * pad[1], width))
    out = np.zeros(x3.shape[:2] + (groups * (n + 1),))
    for j, p in enumerate(con.details["plane_index"]):
        wa, wb = con.operands[2 * j], con.operands[2 * j + 1]
        for z in range(x3.shape[0]):
            src = ext[z + p] if x.ndim == 3 else ext[z]
            out[z] += emulate_plane(src, wa, wb, shape, n, rows_w, x3.shape[1], groups)
    return out[..., : x.shape[-1]].reshape(x.shape)
