"""Transformations that map a (fused) stencil onto Tensor Core MMA instructions.

Each transformation *constructs* the operand matrices it would feed to the
Tensor Cores, padded to the instruction shape, and α is counted from them:

    α = useful MACs / executed MACs = nnz(operands) / size(padded operands)

so α is never a free constant: it follows from the transformation, the fused
stencil and the MMA shape.  The same constructions are used by the bundled
kernels to build what they upload, and the NumPy emulations in each module
multiply the constructed operands MMA by MMA to prove they compute the stencil.
"""
from __future__ import annotations

from typing import Callable

from ..errors import TcAdvisorError
from .base import Construction

_REGISTRY: dict[str, str] = {
    "convstencil": "tcadvisor.transforms.convstencil",
    "spider": "tcadvisor.transforms.spider",
}


def construction(name: str) -> Callable[..., Construction]:
    """The ``construct(weights, shape, ...)`` function of transformation ``name``."""
    import importlib

    if name not in _REGISTRY:
        raise TcAdvisorError(f"unknown transformation {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return importlib.import_module(_REGISTRY[name]).construct


def counter(name: str) -> Callable[..., tuple[int, int]]:
    """The ``count(mask, shape)`` function of ``name``: (useful, executed) MACs without the matrices."""
    import importlib

    if name not in _REGISTRY:
        raise TcAdvisorError(f"unknown transformation {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return importlib.import_module(_REGISTRY[name]).count


def names() -> list[str]:
    return sorted(_REGISTRY)


__all__ = ["Construction", "construction", "counter", "names"]
