"""TCStencil: one square GEMM per kernel row (Liu et al., ICS'22), as its successors describe it.

The ConvStencil and SPIDER papers describe TCStencil's mapping in their
comparisons: the kernel is decomposed by rows, and each row is replicated
L − 2R times inside an L × L matrix (L = 16, the FP16 fragment), so that
multiplying an L × L input tile by it applies the row to L input rows at
L − 2R output columns.  Summing the 2R + 1 row products with the row shift of
each (output row i takes row i + a of the product of kernel row a) updates an
(L − 2R) × (L − 2R) output tile with 2R + 1 GEMMs of L³ MACs:

    executed MACs per point = rows · L³ / (L − 2R)²

(the SPIDER paper's 286.72 for Box-2D3R at L = 16).  Here:

* ``W_a[k, c] = w_a[k − c]`` for output columns c < L − 2R and 0 ≤ k − c ≤ 2R
  (zero elsewhere: the rest of the L columns are the replication's padding);
* empty kernel rows are skipped (stars and custom stencils keep only their
  non-empty rows, with the zeros of each row's bounding box);
* 3D kernels are decomposed plane by plane, every non-empty row of every plane
  being one GEMM on the corresponding input plane (our extension; the tile
  stays (L − 2R)² outputs of one plane).  TCStencil has no 1D form.

The L × L × L GEMM is executed as L³/(m·n·k) instructions of the given shape,
so L must be a multiple of m, n and k, and the fused radius must satisfy
2R < L: a radius the L = 16 tile cannot hold is refused.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from .base import AlphaCount, Construction, check_weights, kernel_lines, mma_tiled, periodic_extend

NAME = "tcstencil"
TITLE = "TCStencil"
DIMS = (2, 3)
SPARSE = False
#: TCStencil's tile edge: the 16 × 16 FP16 fragment.
DEFAULT_L = 16


def _geometry(dims: int, R: int, shape: MmaShape, n_lines: int, L: int | None) -> tuple[int, dict, Fraction]:
    L = DEFAULT_L if L is None else int(L)
    if dims not in DIMS:
        raise TcAdvisorError(f"TCStencil decomposes 2D kernels (3D plane by plane); a {dims}D stencil has no "
                             "TCStencil decomposition")
    if 2 * R >= L:
        raise TcAdvisorError(f"TCStencil's L = {L} tile cannot hold fused radius {R}: it needs 2R < L "
                             f"(at most radius {(L - 1) // 2})")
    if L % shape.m or L % shape.n or L % shape.k:
        raise TcAdvisorError(f"TCStencil's L = {L} GEMM does not tile into {shape} instructions")
    out_edge = L - 2 * R
    executed = Fraction(n_lines * L ** 3, out_edge ** 2)
    details = {"L": L, "R": R, "tile_outputs": out_edge ** 2, "n_lines": n_lines,
               "matrices": f"{n_lines} row matrices of {L} x {L} ({out_edge} replicas of the row each)",
               "gemms_per_tile": n_lines, "mma_per_gemm": L ** 3 // shape.macs}
    return L, details, executed


def construct(weights: np.ndarray, shape: MmaShape, precision: str = "fp16", L: int | None = None) -> Construction:
    """One L × L replicated-row matrix per non-empty kernel row."""
    w = check_weights(weights)
    R = (w.shape[0] - 1) // 2
    lines = kernel_lines(w) if w.ndim > 1 else []
    L, details, executed = _geometry(w.ndim, R, shape, len(lines), L)
    out_edge = L - 2 * R
    operands = []
    for _, line in lines:
        mat = np.zeros((L, L))
        for c in range(out_edge):
            mat[c: c + 2 * R + 1, c] = line
        operands.append(mat)
    details["lines"] = [idx for idx, _ in lines]
    return Construction(NAME, shape, operands, details, Fraction(int(np.count_nonzero(w))), executed, precision)


def count(support, shape: MmaShape, precision: str = "fp16", L: int | None = None) -> AlphaCount:
    _, details, executed = _geometry(support.dims, support.R, shape, support.n_lines(), L)
    return AlphaCount(NAME, shape, precision, support.P, executed, details)


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, precision: str = "fp16",
            L: int | None = None) -> np.ndarray:
    """One periodic step through TCStencil's dataflow: per tile, one L³ GEMM per kernel row, row-shifted sums."""
    w = check_weights(weights)
    x = np.asarray(x, dtype=np.float64)
    con = construct(w, shape, precision, L)
    L, R = con.details["L"], con.details["R"]
    edge = L - 2 * R
    x3 = x if x.ndim == 3 else x[None]
    ty, tx = -(-x3.shape[1] // edge), -(-x3.shape[2] // edge)
    pz = R if x.ndim == 3 else 0
    ext = periodic_extend(x3, (pz, R, R), (x3.shape[0] + 2 * pz, ty * edge + 2 * R, tx * edge + 2 * R))
    out = np.zeros((x3.shape[0], ty * edge, tx * edge))
    for idx, mat in zip(con.details["lines"], con.operands):
        p, a = (0, idx[0]) if x.ndim == 2 else idx
        for z in range(x3.shape[0]):
            plane = ext[z + p]
            for i0 in range(0, ty * edge, edge):
                for j0 in range(0, tx * edge, edge):
                    prod = mma_tiled(plane[i0: i0 + L, j0: j0 + L], mat, shape)
                    out[z, i0: i0 + edge, j0: j0 + edge] += prod[a: a + edge, :edge]
    return out[:, : x3.shape[1], : x3.shape[2]].reshape(x.shape)
