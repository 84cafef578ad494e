"""The float64 reference on the GPU: one plain thread per point, periodic indexing, step by step.

Deliberately naive and independent of the optimised kernels' tiling, ghost
layers and fusion: it applies the *base* stencil ``steps`` times.
"""
from __future__ import annotations

import numpy as np

from .backend import cupy, module


def reference_steps(x0, weights: np.ndarray, steps: int):
    """``steps`` applications of ``weights`` to ``x0`` (any float dtype) in float64 on the GPU."""
    cp = cupy()
    w = np.asarray(weights, dtype=np.float64)
    R = (w.shape[0] - 1) // 2
    idx = np.argwhere(w != 0)
    offs = np.zeros((len(idx), 3), dtype=np.int32)
    offs[:, 3 - w.ndim:] = idx - R
    wv = cp.asarray(w[tuple(idx.T)])
    offs_d = cp.asarray(offs.reshape(-1))
    a = cp.array(x0, dtype=cp.float64, order="C", copy=True)  # never step in the caller's array
    shape3 = (1,) * (3 - a.ndim) + a.shape
    b = cp.empty_like(a)
    kern = module("fields.cu", (("K_REAL", "double"),)).get_function("reference_step")
    n = a.size
    blocks = min((n + 255) // 256, 65536)
    for _ in range(steps):
        kern((blocks,), (256,), (a, b, offs_d, wv, np.int32(len(idx)), np.int32(shape3[0]), np.int32(shape3[1]),
                                 np.int32(shape3[2])))
        a, b = b, a
    return a
