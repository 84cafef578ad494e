"""What users run instead, timed the same way: one stencil step per library call.

* CuPy ``cupyx.scipy.ndimage.correlate`` with periodic (``wrap``) boundaries;
* cuDNN through PyTorch: ``conv{1,2,3}d`` on a circularly padded tensor.
"""
from __future__ import annotations

import numpy as np

from .backend import cupy
from .timing import time_gpu


def cupy_correlate(x0, weights: np.ndarray, steps: int, repeats: int = 3) -> dict:
    cp = cupy()
    from cupyx.scipy import ndimage

    w = cp.asarray(weights, dtype=x0.dtype)

    def run():
        x = x0
        for _ in range(steps):
            x = ndimage.correlate(x, w, mode="wrap")
        return x

    seconds, out = time_gpu(run, repeats)
    return {"impl": "cupy.correlate", "seconds": seconds, "output": out}


def torch_cudnn(x0, weights: np.ndarray, steps: int, repeats: int = 3) -> dict | None:
    """None when PyTorch with CUDA is not installed."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    cp = cupy()
    d = x0.ndim
    R = (weights.shape[0] - 1) // 2
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[d]
    xt = torch.from_dlpack(cp.ascontiguousarray(x0)).reshape((1, 1) + tuple(x0.shape))
    wt = torch.as_tensor(np.ascontiguousarray(weights), dtype=xt.dtype, device=xt.device).reshape((1, 1) + weights.shape)
    pad = (R, R) * d
    torch.backends.cudnn.benchmark = True

    def run():
        x = xt
        with torch.no_grad():
            for _ in range(steps):
                x = conv(F.pad(x, pad, mode="circular"), wt)
        return cp.from_dlpack(x.reshape(x0.shape).contiguous())

    seconds, out = time_gpu(run, repeats)
    return {"impl": "torch.conv (cuDNN)", "seconds": seconds, "output": out}
