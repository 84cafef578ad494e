"""What users run instead, timed the same way: one stencil step per library call.

* CuPy ``cupyx.scipy.ndimage.correlate`` with periodic (``wrap``) boundaries (double, float);
* cuDNN through PyTorch: ``conv{1,2,3}d`` on a circularly padded tensor, in the
  field's own type (double, float with TF32 disabled, half, bfloat16).

Inputs and outputs are storage arrays as the runner holds them (bfloat16 as
uint16 bit patterns).
"""
from __future__ import annotations

import numpy as np

from .backend import cupy
from .timing import time_gpu

PRECISION = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}


def _dtype_of(x0) -> str:
    return {np.dtype(np.float64): "double", np.dtype(np.float32): "float", np.dtype(np.float16): "half",
            np.dtype(np.uint16): "bfloat16"}[np.dtype(x0.dtype)]


def cupy_correlate(x0, weights: np.ndarray, steps: int, repeats: int = 3, dtype: str | None = None) -> dict:
    cp = cupy()
    from cupyx.scipy import ndimage

    dtype = dtype or _dtype_of(x0)
    if dtype not in ("double", "float"):
        raise ValueError(f"the CuPy baseline runs double and float, not {dtype}")
    w = cp.asarray(weights, dtype=x0.dtype)

    def run():
        x = x0
        for _ in range(steps):
            x = ndimage.correlate(x, w, mode="wrap")
        return x

    seconds, out = time_gpu(run, repeats)
    return {"impl": "cupy.correlate", "seconds": seconds, "output": out, "precision": PRECISION[dtype]}


def torch_cudnn(x0, weights: np.ndarray, steps: int, repeats: int = 3, dtype: str | None = None) -> dict | None:
    """None when PyTorch with CUDA is not installed."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    cp = cupy()
    dtype = dtype or _dtype_of(x0)
    d = x0.ndim
    R = (weights.shape[0] - 1) // 2
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[d]
    xt = torch.from_dlpack(cp.ascontiguousarray(x0))
    if dtype == "bfloat16":
        xt = xt.view(torch.int16).view(torch.bfloat16)
    xt = xt.reshape((1, 1) + tuple(x0.shape))
    wt = torch.as_tensor(np.ascontiguousarray(weights), dtype=torch.float64).to(device=xt.device, dtype=xt.dtype)
    wt = wt.reshape((1, 1) + weights.shape)
    pad = (R, R) * d
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # float convolutions in FP32, as the field's type says

    def run():
        x = xt
        with torch.no_grad():
            for _ in range(steps):
                x = conv(F.pad(x, pad, mode="circular"), wt)
        x = x.reshape(x0.shape).contiguous()
        if dtype == "bfloat16":
            return cp.from_dlpack(x.view(torch.int16)).view(cp.uint16)
        return cp.from_dlpack(x)

    seconds, out = time_gpu(run, repeats)
    return {"impl": "torch.conv (cuDNN)", "seconds": seconds, "output": out, "precision": PRECISION[dtype]}
