"""What every transformation returns: operands, and α counted from them."""
from __future__ import annotations

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
