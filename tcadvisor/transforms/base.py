"""What every transformation returns: operands, and α counted from them."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..mma import MmaShape


@dataclass
class Construction:
    """Operand matrices a transformation uploads, padded to the MMA shape.

    ``operands`` are the *weight-side* matrices (one per MMA "slice": per kernel
    plane, line or half); each is executed in full by the Tensor Cores for every
    group of outputs it serves, so α = Σ nnz / Σ size.  ``outputs_per_slice``
    says how many outputs one execution of the operand set covers, which is what
    the emulation and the kernels need to tile the domain.
    """

    transform: str
    shape: MmaShape
    operands: list[np.ndarray]
    details: dict = field(default_factory=dict)

    @property
    def useful_macs(self) -> int:
        return int(sum(np.count_nonzero(op) for op in self.operands))

    @property
    def executed_macs(self) -> int:
        return int(sum(op.size for op in self.operands))

    @property
    def alpha(self) -> Fraction:
        return Fraction(self.useful_macs, self.executed_macs)


def pad_to(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def kernel_lines(weights: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Non-empty 1D lines of a kernel along its last axis (x), with their leading index.

    ``()`` for a 1D kernel, ``(a,)`` for row a of a 2D kernel, ``(p, a)`` for row a of
    plane p in 3D.  Decomposing transformations (SPIDER, the bundled row band) turn
    each line into one matrix and skip the empty ones.
    """
    w = np.asarray(weights)
    if w.ndim == 1:
        return [((), w)]
    lead = itertools.product(*(range(s) for s in w.shape[:-1]))
    return [(idx, w[idx]) for idx in lead if np.any(w[idx])]
