"""NumPy emulation of the bundled CUDA-core kernel's streaming pipeline (kernels/cuda_cores_2d.cu).

Temporal fusion on CUDA cores is not a matrix transformation, but the kernel's
pipeline is intricate enough to deserve a CPU twin: a strip of ``cols`` columns
streams down the rows; step s consumes the row that step s−1 produced in the
previous iteration (shared-memory parity), keeps 2·RY pending partial sums per
column and completes one row per iteration; outputs of step T are written only
inside the strip's valid range.  This function follows the kernel iteration by
iteration (all threads of a block at once, as vectors), so the CPU tests check
the kernel's indexing — row skew, parity, halo shrinkage, pending-sum rotation —
against a direct stencil before any GPU runs it.  (The kernel writes each finished
row one iteration later, through shared memory, to coalesce the stores; that
changes when, not what, is written, and is not mirrored here.)
"""
from __future__ import annotations

import numpy as np


def emulate(x: np.ndarray, weights: np.ndarray, steps: int, cols: int = 64, rows_per_block: int = 5,
            star: bool = False, rows_per_iter: int = 1) -> np.ndarray:
    """``steps`` fused steps of a 1D or 2D stencil on a periodic domain, the kernel's way."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    x2 = x[None, :] if x.ndim == 1 else x
    w2 = w[None, :] if w.ndim == 1 else w
    H, W = x2.shape
    RY, RX = (w2.shape[0] - 1) // 2, (w2.shape[1] - 1) // 2
    T = steps
    halo = RX * T
    txo = cols - 2 * halo
    if txo <= 0:
        raise ValueError("strip narrower than its halo")
    gy, gx = RY * T, halo
    blocks_x = -(-W // txo)
    pitch = gx + blocks_x * txo + halo + 8
    # padded input with periodic ghosts (what ghost_shell produces) and zeros beyond
    padded = np.zeros((H + 2 * gy, pitch))
    rows = (np.arange(H + 2 * gy) - gy) % H
    colsi = (np.arange(gx + W + gx) - gx) % W
    padded[:, : gx + W + gx] = x2[np.ix_(rows, colsi)]
    out = np.full((H, W), np.nan)
    for bx in range(blocks_x):
        X0 = bx * txo
        colbase = gx + X0 - halo
        for Y0 in range(0, H, rows_per_block):
            Y1 = min(Y0 + rows_per_block, H)
            NR = rows_per_iter
            smem = np.zeros((T, 2, NR, cols + 2 * RX))  # logical rows, RX padding each side
            pend = np.zeros((T, max(2 * RY, 1), cols))

            def load(q):
                rows_ = np.zeros((NR, cols))
                for rr in range(NR):
                    prow = gy + q + rr
                    if 0 <= prow < H + 2 * gy:
                        rows_[rr] = padded[prow, colbase : colbase + cols]
                return rows_

            smem[0, 0, :, RX : RX + cols] = load(Y0 - RY * T)
            n_iter = -(-(Y1 - Y0 + 2 * RY * T) // NR) + T - 1
            for i in range(n_iter):
                nxt = load(Y0 - RY * T + (i + 1) * NR)
                new_rows = {}
                for s in range(1, T + 1):
                    parity = (i & 1) if s == 1 else ((i - 1) & 1)
                    for rr in range(NR):
                        src = smem[s - 1, parity, rr]
                        # conv_a[c] = sum_b w[a][b] * src[c + b] over the strip's columns c
                        conv = np.zeros((2 * RY + 1, cols))
                        for a in range(2 * RY + 1):
                            for b in range(2 * RX + 1):
                                if star and not (a == RY or b == RX):
                                    continue
                                conv[a] += w2[a, b] * src[b : b + cols]
                        res = (pend[s - 1, 0] if RY else 0) + conv[2 * RY]
                        for m in range(1, 2 * RY):
                            pend[s - 1, m - 1] = pend[s - 1, m] + conv[2 * RY - m]
                        if RY:
                            pend[s - 1, 2 * RY - 1] = conv[0]
                        if s < T:
                            new_rows[(s, rr)] = res
                        else:
                            q = Y0 + (i - T + 1) * NR - 2 * RY * T + rr
                            if Y0 <= q < Y1:
                                for c in range(halo, halo + txo):
                                    xcol = X0 - halo + c
                                    if xcol < W:
                                        out[q, xcol] = res[c]
                for (s, rr), res in new_rows.items():
                    smem[s, i & 1, rr, RX : RX + cols] = res
                smem[0, (i + 1) & 1, :, RX : RX + cols] = nxt
    return out[0] if x.ndim == 1 else out
