"""What every transformation returns, and the MMA emulation helpers they share.

Two result types:

* :class:`Construction` — the operand matrices a transformation feeds to the
  Tensor Cores for one kernel (padded, permuted, 2:4-structured where sparse),
  with the counts taken from them.  Built for kernels small enough to
  materialise; the NumPy emulations multiply exactly these operands.
* :class:`AlphaCount` — the counts alone: useful and executed MACs per output
  point, α, MMA instructions per output point and how they were obtained.
  Every transformation computes it for box and star stencils at any radius and
  depth without building matrices; the tests check it against the construction.

Counting convention (all transformations): *useful* MACs per output point are
the non-zero weights of the fused stencil (P); *executed* MACs per output point
are the MMA instructions a tile issues times the instruction's m·n·k, divided by
the outputs the tile produces (for sparse instructions the dense-equivalent
m·n·k, as the sparse peak is quoted), so α = useful / executed.  A chained
product (LoRAStencil's U·X·V) counts both of its MMAs; boundary effects of a
finite domain are not counted (large domains).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape

#: keep:group structured sparsity each sparse precision's ``mma.sp`` requires.
SPARSITY = {"tf32": (1, 2), "fp16": (2, 4), "bf16": (2, 4)}
PRECISIONS = ("fp64", "tf32", "fp16", "bf16")


@dataclass(frozen=True)
class AlphaCount:
    """α of one transformation for one fused stencil, instruction shape and precision."""

    transform: str
    shape: MmaShape
    precision: str
    useful: Fraction  # useful MACs per output point (non-zero weights of the fused stencil)
    executed: Fraction  # MACs the Tensor Cores execute per output point, padding included
    details: Mapping[str, Any] = field(default_factory=dict)
    alpha: Fraction = field(init=False)
    mma_per_point: Fraction = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "useful", Fraction(self.useful))
        object.__setattr__(self, "executed", Fraction(self.executed))
        object.__setattr__(self, "alpha", self.useful / self.executed)
        object.__setattr__(self, "mma_per_point", self.executed / self.shape.macs)
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    def as_dict(self) -> dict:
        """JSON-ready: fractions as strings and floats, numpy values as Python values."""
        def plain(v):
            if isinstance(v, Fraction):
                return str(v)
            if isinstance(v, np.generic):
                return v.item()
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            if isinstance(v, Mapping):
                return {str(k): plain(x) for k, x in v.items()}
            return v
        return {"transform": self.transform, "shape": str(self.shape), "precision": self.precision,
                "alpha": str(self.alpha), "alpha_value": float(self.alpha),
                "useful_macs_per_point": str(self.useful), "executed_macs_per_point": str(self.executed),
                "mma_per_point": str(self.mma_per_point), "mma_per_point_value": float(self.mma_per_point),
                "details": plain(dict(self.details))}


@dataclass
class Construction:
    """Operand matrices a transformation uploads for one kernel, and its counts.

    ``operands`` are the weight-side matrices in the form multiplied (padded to
    the instruction, permuted; sparse ones before compression, which
    :func:`compress` performs); ``useful``/``executed`` are per output point
    as in :class:`AlphaCount`.
    """

    transform: str
    shape: MmaShape
    operands: list[np.ndarray]
    details: dict
    useful: Fraction
    executed: Fraction
    precision: str = "fp64"

    @property
    def alpha(self) -> Fraction:
        return Fraction(self.useful) / Fraction(self.executed)

    @property
    def mma_per_point(self) -> Fraction:
        return Fraction(self.executed) / self.shape.macs

    def count(self) -> AlphaCount:
        keep = {k: v for k, v in self.details.items() if not isinstance(v, np.ndarray)}
        return AlphaCount(self.transform, self.shape, self.precision, self.useful, self.executed, keep)


def pad_to(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def check_weights(weights) -> np.ndarray:
    """A kernel weight array as float64, or a one-line error (empty, no centre, not a cube)."""
    from .support import check_kernel_array

    w = np.asarray(weights, dtype=np.float64)
    check_kernel_array(w)
    return w


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise TcAdvisorError(f"precision {precision!r} is not known; expected one of {', '.join(PRECISIONS)}")
    return precision


def sparsity_of(transform: str, precision: str) -> tuple[int, int]:
    """The keep:group pattern a sparse transformation must meet at ``precision``."""
    if precision not in SPARSITY:
        raise TcAdvisorError(f"{transform} runs on Sparse Tensor Cores, which have no {precision.upper()} mma.sp; "
                             f"expected one of {', '.join(SPARSITY)}")
    return SPARSITY[precision]


def kernel_lines(weights: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Non-empty 1D lines of a kernel along its last axis (x), with their leading index.

    ``()`` for a 1D kernel, ``(a,)`` for row a of a 2D kernel, ``(p, a)`` for row a of
    plane p in 3D.  Decomposing transformations (SPIDER, the bundled row band,
    TCStencil) turn each line into one matrix and skip the empty ones.
    """
    w = np.asarray(weights)
    if w.ndim == 1:
        return [((), w)]
    lead = itertools.product(*(range(s) for s in w.shape[:-1]))
    return [(idx, w[idx]) for idx in lead if np.any(w[idx])]


def kernel_planes(weights: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Non-empty 2D planes of a 3D kernel along its first axis (a 1D/2D kernel is its own plane, index 0)."""
    w = np.asarray(weights)
    if w.ndim < 3:
        return [(0, w)]
    return [(p, w[p]) for p in range(w.shape[0]) if np.any(w[p])]


# --------------------------------------------------------------------------- MMA emulation


def mma_tiled(a: np.ndarray, b: np.ndarray, shape: MmaShape) -> np.ndarray:
    """C = A·B computed as a loop of m×n×k instruction tiles (float64)."""
    m_tot, k_tot = a.shape
    n_tot = b.shape[1]
    if m_tot % shape.m or k_tot % shape.k or n_tot % shape.n or b.shape[0] != k_tot:
        raise ValueError(f"operands {a.shape} x {b.shape} do not tile into {shape}")
    c = np.zeros((m_tot, n_tot))
    for m0 in range(0, m_tot, shape.m):
        for n0 in range(0, n_tot, shape.n):
            tile = np.zeros((shape.m, shape.n))
            for k0 in range(0, k_tot, shape.k):
                tile += a[m0:m0 + shape.m, k0:k0 + shape.k] @ b[k0:k0 + shape.k, n0:n0 + shape.n]
            c[m0:m0 + shape.m, n0:n0 + shape.n] = tile
    return c


def check_structure(mat: np.ndarray, keep: int, group: int) -> bool:
    """True if every run of ``group`` columns of every row has at most ``keep`` non-zeros."""
    rows, cols = mat.shape
    if cols % group:
        return False
    counts = np.count_nonzero(mat.reshape(rows, cols // group, group), axis=2)
    return bool(np.all(counts <= keep))


def compress(mat: np.ndarray, keep: int = 2, group: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Compress a ``keep``:``group`` structured matrix into values and indices.

    Returns ``values`` (rows × cols·keep/group) and ``meta`` (same shape, the
    position 0…group−1 of each kept value in its group, increasing within the
    group).  Groups with fewer non-zeros keep explicit zeros at the lowest free
    positions, as the hardware format requires a full set of indices.
    """
    rows, cols = mat.shape
    if not check_structure(mat, keep, group):
        raise ValueError(f"matrix is not {keep}:{group} structured")
    groups = cols // group
    values = np.zeros((rows, groups * keep), dtype=mat.dtype)
    meta = np.zeros((rows, groups * keep), dtype=np.uint8)
    for r_, g in itertools.product(range(rows), range(groups)):
        seg = mat[r_, g * group:(g + 1) * group]
        idx = list(np.flatnonzero(seg))
        free = [p for p in range(group) if p not in idx]
        idx = sorted(idx + free[:keep - len(idx)])
        values[r_, g * keep:(g + 1) * keep] = seg[idx]
        meta[r_, g * keep:(g + 1) * keep] = idx
    return values, meta


def decompress(values: np.ndarray, meta: np.ndarray, keep: int, group: int) -> np.ndarray:
    rows, kept = values.shape
    out = np.zeros((rows, kept // keep * group), dtype=values.dtype)
    for g in range(kept // keep):
        for s in range(keep):
            col = g * group + meta[:, g * keep + s].astype(int)
            out[np.arange(rows), col] += values[:, g * keep + s]
    return out


def mma_sp_tiled(a_dense: np.ndarray, x: np.ndarray, shape: MmaShape, keep: int, group: int) -> np.ndarray:
    """A·X as a loop of sparse MMA instructions on the compressed form of A.

    A is compressed once (values + metadata, as uploaded); each instruction
    takes one k-chunk of the logical K, expands it from values and metadata
    (what the Sparse Tensor Core does in hardware) and multiplies.
    """
    values, meta = compress(a_dense, keep, group)
    m_tot, k_tot = a_dense.shape
    n_tot = x.shape[1]
    if m_tot % shape.m or k_tot % shape.k or n_tot % shape.n:
        raise ValueError(f"operands {a_dense.shape} x {x.shape} do not tile into {shape}")
    per_chunk = shape.k * keep // group
    out = np.zeros((m_tot, n_tot))
    for m0 in range(0, m_tot, shape.m):
        for n0 in range(0, n_tot, shape.n):
            tile = np.zeros((shape.m, shape.n))
            for c, k0 in enumerate(range(0, k_tot, shape.k)):
                vals = values[m0:m0 + shape.m, c * per_chunk:(c + 1) * per_chunk]
                idx = meta[m0:m0 + shape.m, c * per_chunk:(c + 1) * per_chunk]
                tile += decompress(vals, idx, keep, group) @ x[k0:k0 + shape.k, n0:n0 + shape.n]
            out[m0:m0 + shape.m, n0:n0 + shape.n] = tile
    return out


def periodic_extend(x: np.ndarray, before: tuple[int, ...], total: tuple[int, ...]) -> np.ndarray:
    """``x`` extended periodically: ``before[i]`` cells ahead of it and ``total[i]`` cells in all, per axis.

    Emulations compute a whole number of tiles, so they read an extended copy
    of the periodic input and keep only the outputs inside the domain.
    """
    idx = [(np.arange(t) - b) % n for b, t, n in zip(before, total, x.shape)]
    return x[np.ix_(*idx)]
