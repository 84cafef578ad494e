"""What reading a stencil from the user's own code gives back.

Every reader in :mod:`tcadvisor.sources` (weight arrays, offset mappings, probed
update functions, pystencils and Devito expressions, C loop nests) returns one
:class:`StencilSource`, so the advisor, the command line and ``--json`` treat
them alike: the stencil itself, the element type where the source states one
(the answer then defaults to it and says so), a short description of where it
was read, and every assumption or omission the reading made, each one sentence
the answer repeats.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..stencil import Stencil


@dataclass(frozen=True)
class StencilSource:
    """A stencil read from user code, with what the reading knows about it."""

    stencil: Stencil
    #: canonical dtype ('double', 'float', 'half', 'bfloat16') where the source has one, else None
    dtype: str | None
    #: where it was read, one phrase, e.g. "weights.npy (NumPy float32 array 3x3x3, centre at its middle)"
    read_from: str
    #: what the reading assumed or left out, one sentence each
    #: (e.g. "symbolic coefficient dt/h**2 treated as a generic non-zero weight")
    notes: tuple[str, ...] = field(default_factory=tuple)
