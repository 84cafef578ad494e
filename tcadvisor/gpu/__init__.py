"""Bundled GPU kernels run through CuPy.

Nothing here imports CuPy at import time: the analytical part of tcadvisor never
needs a GPU.  ``tcadvisor.gpu.run`` compiles the kernel for the requested
configuration (NVRTC, cached), checks it against a float64 reference, times it
and sets it against the model's bound::

    from tcadvisor.gpu import run
    from tcadvisor.stencil import parse_stencil
    res = run(parse_stencil("Box-2D1R"), "double", "tensor_core", fuse=3, grid="10240x10240", steps=300)
    res.gstencils, res.fraction_of_bound, res.max_rel_error, res.output
"""
from __future__ import annotations


def run(*args, **kwargs):
    from .runner import run as _run

    return _run(*args, **kwargs)


def available() -> bool:
    from .backend import available as _available

    return _available()


__all__ = ["run", "available"]
