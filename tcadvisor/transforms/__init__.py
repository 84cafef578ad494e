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
    "rowband": "tcadvisor.transforms.rowband",
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


def least_padding_shape(name: str, mask, candidates):
    """Of ``candidates`` (preferred first), the instruction whose padded operands waste least.

    An implementation that can issue several MMA shapes picks the one giving the
    highest α for this fused kernel (ties: the earlier candidate).  The bundled
    Tensor Core kernel and the model both call this, so they agree on the shape.
    """
    from fractions import Fraction

    count = counter(name)
    best, best_alpha = None, None
    for shape in candidates:
        useful, executed = count(mask, shape)
        alpha = Fraction(useful, executed)
        if best_alpha is None or alpha > best_alpha:
            best, best_alpha = shape, alpha
    return best


def names() -> list[str]:
    return sorted(_REGISTRY)


__all__ = ["Construction", "construction", "counter", "least_padding_shape", "names"]
