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
  padding is executed too, which is what α counts.
* 1D uses n instead of n² (one row of the window); 3D splits the kernel into its
  non-empty 2D planes, each computed as above and summed.
"""
from __future__ import annotations

import numpy as np

from ..mma import MmaShape
from ..reference import radius_of
from .base import Construction, pad_to


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
        wb[:, :c, c] = w[:, n - c :]
    return wa.reshape(rows * n, n + 1), wb.reshape(rows * n, n + 1)


def _padded(mat: np.ndarray, shape: MmaShape) -> np.ndarray:
    k_pad, n_pad = pad_to(mat.shape[0], shape.k), pad_to(mat.shape[1], shape.n)
    out = np.zeros((k_pad, n_pad), dtype=mat.dtype)
    out[: mat.shape[0], : mat.shape[1]] = mat
    return out


def construct(weights: np.ndarray, shape: MmaShape) -> Construction:
    """Build the padded ``WA``/``WB`` of every non-empty plane of ``weights``."""
    w = np.asarray(weights)
    n = 2 * radius_of(w) + 1
    planes = [w] if w.ndim <= 2 else [w[p] for p in range(n) if np.any(w[p])]
    plane_index = [0] if w.ndim <= 2 else [p for p in range(n) if np.any(w[p])]
    operands = []
    for plane in planes:
        wa, wb = weight_matrices(plane)
        operands += [_padded(wa, shape), _padded(wb, shape)]
    k_logical = n if w.ndim == 1 else n * n
    return Construction(
        "convstencil",
        shape,
        operands,
        details={
            "n_k": n,
            "planes": plane_index,
            "window_rows": 1 if w.ndim == 1 else n,
            "K": k_logical,
            "K_pad": pad_to(k_logical, shape.k),
            "N": n + 1,
            "N_pad": pad_to(n + 1, shape.n),
            "outputs_per_group": n + 1,
        },
    )


def count(mask: np.ndarray, shape: MmaShape) -> tuple[int, int]:
    """(useful, executed) MACs of :func:`construct` without building the matrices.

    Used for large fused kernels (sweeps to radius·t of 100+), where the padded
    operands would take gigabytes; tests check it equals the construction's count.
    Each non-empty plane contributes P_plane·(n+1) non-zeros in two K_pad × N_pad
    matrices.
    """
    m = np.asarray(mask) != 0
    n = m.shape[0]
    per_plane = np.array([m.sum()]) if m.ndim <= 2 else m.reshape(n, -1).sum(axis=1)
    per_plane = per_plane[per_plane > 0]
    k_logical = n if m.ndim == 1 else n * n
    size = 2 * pad_to(k_logical, shape.k) * pad_to(n + 1, shape.n)
    return int(per_plane.sum()) * (n + 1), size * len(per_plane)


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
        out[q] = x[row : row + window_rows, c0 : c0 + n].reshape(-1)
    return out


def emulate_2d(x_padded: np.ndarray, construction: Construction, plane_inputs=None) -> np.ndarray:
    """Apply the constructed operands to a 2D input the way the Tensor Cores do.

    ``x_padded`` holds the input with a halo of R on each side (the caller wraps
    it periodically), so output (i, j) is centred at ``x_padded[i+R, j+R]``.  The
    output width must be a multiple of n+1 (one dual-tessellation group).  The
    product is accumulated MMA by MMA: M rows of stencil2row per instruction,
    K in chunks of k, N in chunks of n, exactly like the hardware tiles it.
    """
    d = construction.details
    n, shape, rows_w = d["n_k"], construction.shape, d["window_rows"]
    height = x_padded.shape[0] - (rows_w - 1)
    width = x_padded.shape[1] - (n - 1)
    group = n + 1
    if width % group:
        raise ValueError(f"output width {width} must be a multiple of n+1 = {group}")
    groups = width // group
    m_pad = pad_to(groups, shape.m)
    out = np.zeros((height, width))
    wa, wb = construction.operands[0], construction.operands[1]
    for i in range(height):
        acc = np.zeros((m_pad, wa.shape[1]))
        for part, wmat in (("A", wa), ("B", wb)):
            rows = np.zeros((m_pad, wmat.shape[0]))
            rows[:groups, : rows_w * n] = stencil2row(x_padded, i, n, groups, part, rows_w)
            acc += mma_tiled(rows, wmat, shape)
        out[i] = acc[:groups, :group].reshape(-1)
    return out


def mma_tiled(a: np.ndarray, b: np.ndarray, shape: MmaShape) -> np.ndarray:
    """C = A·B computed as a loop of m×n×k instruction tiles (float64)."""
    m_tot, k_tot = a.shape
    n_tot = b.shape[1]
    assert m_tot % shape.m == 0 and k_tot % shape.k == 0 and n_tot % shape.n == 0
    c = np.zeros((m_tot, n_tot))
    for m0 in range(0, m_tot, shape.m):
        for n0 in range(0, n_tot, shape.n):
            tile = np.zeros((shape.m, shape.n))
            for k0 in range(0, k_tot, shape.k):
                tile += a[m0 : m0 + shape.m, k0 : k0 + shape.k] @ b[k0 : k0 + shape.k, n0 : n0 + shape.n]
            c[m0 : m0 + shape.m, n0 : n0 + shape.n] = tile
    return c


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape) -> np.ndarray:
    """One periodic stencil step of ``weights`` on ``x`` through the ConvStencil dataflow.

    1D inputs are treated as a single row; 3D inputs as a sum over kernel planes
    of 2D dual tessellations.  The domain's last extent must be a multiple of
    n+1 (the group width); the caller pads otherwise.
    """
    w = np.asarray(weights, dtype=np.float64)
    R = radius_of(w)
    n = 2 * R + 1
    x = np.asarray(x, dtype=np.float64)
    xp = np.pad(x, R, mode="wrap")
    if x.ndim == 1:
        con = construct(w, shape)
        return emulate_2d(xp[None, :], con)[0]
    if x.ndim == 2:
        return emulate_2d(xp, construct(w, shape))
    out = np.zeros_like(x)
    for p in range(n):
        if not np.any(w[p]):
            continue
        con = construct(w[p], shape)
        for z in range(x.shape[0]):
            out[z] += emulate_2d(xp[z + p], con)
    return out
