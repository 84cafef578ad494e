"""Matrix-multiply-accumulate instruction shapes (``m16n8k8`` and friends).

A Tensor Core executes a fixed ``m×n×k`` tile per instruction; everything that
does not fill such a tile is padding, which is where the sparsity factor α comes
from.  The shape is therefore part of how α is constructed, of the hardware
description and of each implementation profile.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import TcAdvisorError

_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


@dataclass(frozen=True, order=True)
class MmaShape:
    """One instruction's tile: ``A`` is ``m×k``, ``B`` is ``k×n``, ``C`` is ``m×n``."""

    m: int
    n: int
    k: int

    @classmethod
    def parse(cls, text: str) -> "MmaShape":
        match = _SHAPE.match(str(text).strip().lower())
        if not match or min(int(g) for g in match.groups()) <= 0:
            raise TcAdvisorError(
                f"MMA shape {text!r} is not of the form mMnNkK with positive sizes (e.g. m16n8k8)"
            )
        return cls(*(int(g) for g in match.groups()))

    @property
    def macs(self) -> int:
        """Multiply-accumulates one instruction executes (dense-equivalent)."""
        return self.m * self.n * self.k

    def __str__(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"
