"""Bundled GPU kernels run through CuPy.

Nothing here imports CuPy at import time: the analytical part of tcadvisor never
needs a GPU.  ``tcadvisor.gpu.run`` picks the kernel of a unit (or of a profile,
``impl=``) through :mod:`tcadvisor.gpu.registry`, compiles it for the requested
configuration (NVRTC, cached), checks every sweep against a float64 reference
computed from identically rounded operands, times it and sets it against the
model's bound::

    from tcadvisor.gpu import run
    from tcadvisor.stencil import parse_stencil
    res = run(parse_stencil("Box-2D1R"), "half", "sparse_tensor_core", fuse=3, grid="10240x10240", steps=300)
    res.gstencils, res.fraction_of_bound, res.passed, res.output

Kernels: ``cuda_cores`` (FP64, FP32, FP16, BF16), ``tensor_cores`` (FP64, TF32, FP16, BF16),
``sparse_tensor_cores`` (SPIDER's 2:4 strided swap; TF32, FP16, BF16); each
implements :class:`tcadvisor.gpu.kernel.BundledKernel`.
"""
from __future__ import annotations


def run(*args, **kwargs):
    from .runner import run as _run

    return _run(*args, **kwargs)


def available() -> bool:
    from .backend import available as _available

    return _available()


__all__ = ["run", "available"]
