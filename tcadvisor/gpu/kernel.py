"""The interface every bundled kernel implements: one instance is one compiled configuration.

A bundled kernel is one CUDA file in ``kernels/``, one module in
``tcadvisor/gpu/`` whose ``KERNEL`` attribute is a :class:`BundledKernel`
subclass, and one implementation profile in ``models/`` that names it
(``kernel: <name>``).  The runner, the CLI and the tests reach kernels only
through this interface (see :mod:`tcadvisor.gpu.registry`), so adding a kernel
touches nothing else.

The class-level checks (:meth:`BundledKernel.unsupported`) need neither CuPy nor
a GPU; constructing an instance compiles the kernel (NVRTC through CuPy).
"""
from __future__ import annotations

import abc
import math
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ..mma import MmaShape
from ..reference import fused_weights
from ..stencil import Stencil
from ..transforms.base import Construction
from .checking import SweepModel
from .numerics import STORAGE
from .plans import MASK_BITS


class BundledKernel(abc.ABC):
    """t fused time steps of a stencil as one sweep over a padded field on the GPU."""

    name: ClassVar[str]  # registry name: the module tcadvisor.gpu.<name> and the profiles' ``kernel:``
    unit: ClassVar[str]  # "cuda_core" | "tensor_core" | "sparse_tensor_core"
    cuda_function: ClassVar[str]  # CUDA entry point(s), a regex for ``ncu --kernel-name regex:...``
    precisions: ClassVar[tuple[str, ...]]  # precisions the CUDA code implements

    @classmethod
    def unsupported(cls, stencil: Stencil, fuse: int, dtype: str, precision: str,
                    device: dict | None = None) -> str | None:
        """Why this kernel cannot run the configuration (``None``: it can).

        ``device`` is :func:`tcadvisor.gpu.backend.device_info` or ``None``; the
        checks that do not depend on the device work without CuPy.
        """
        if precision not in cls.precisions:
            return (f"the {cls.unit.replace('_', ' ')} kernel ({cls.name}) runs "
                    f"{', '.join(p.upper() for p in cls.precisions)}, not {precision.upper()}")
        return None

    @classmethod
    def field_dtypes(cls) -> dict[str, str]:
        """Precision -> the dtype of the fields the kernel computes it on (what ``dtype`` it accepts for it).

        The advisor reads which dtypes a kernel runs from here, so that what it says a
        kernel supports is what the kernel accepts (tests/test_support.py).
        """
        raise NotImplementedError

    @classmethod
    def device_reason(cls, precision: str, device: dict) -> str | None:
        """Why a GPU of ``device["cc"]`` (compute capability) can never run ``precision`` (None: it can).

        Whole-GPU refusals only (an instruction the architecture lacks); the advisor asks
        it with a spec's ``compute_capability`` before any GPU is at hand.
        """
        return None

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                 mma: MmaShape | None = None, **options):
        self.stencil, self.fuse, self.dtype, self.precision = stencil, int(fuse), dtype, precision
        self.weights = np.asarray(weights, dtype=np.float64)
        self.fused = fused_weights(self.weights, self.fuse)
        self.R = stencil.radius * self.fuse
        self.np_dtype = np.dtype(STORAGE[dtype])
        self.mma: MmaShape | None = mma

    # ------------------------------------------------------------------ what it computes
    def operands(self) -> Construction | None:
        """The host-built weight operands, exactly the matrices uploaded (None on CUDA cores)."""
        return None

    @property
    def alpha(self) -> Fraction | None:
        con = self.operands()
        return None if con is None else con.alpha

    @abc.abstractmethod
    def numerics(self) -> SweepModel:
        """How one sweep rounds: the stages the correctness checks model (see :mod:`.checking`)."""

    # ------------------------------------------------------------------ running
    @abc.abstractmethod
    def geometry(self, shape3: tuple[int, int, int]):
        """Ghost widths and row pitch (:class:`tcadvisor.gpu.fields.Geometry`) the kernel reads."""

    @abc.abstractmethod
    def sweep(self, fin, fout) -> None:
        """One fused sweep of ``fuse`` steps from ``fin`` into ``fout`` (PaddedFields, ghosts refreshed)."""

    @abc.abstractmethod
    def executed_flops(self, shape3: tuple[int, int, int]) -> float:
        """Every FMA/MMA the sweep issues, as FLOPs (padding, halos and pipeline fill included)."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line: instruction, launch shape, registers, shared memory."""


class MatrixUnitKernel(BundledKernel):
    """What the dense and the sparse Tensor Core kernels refuse alike, worded per kernel.

    Both hold the fused stencil as kernel rows (lines) of a compile-time row mask
    of :data:`~tcadvisor.gpu.plans.MASK_BITS` bits (128: in 3D, r·t ≤ 5), run
    each precision on one storage type, bound the fused radius
    r·t, and need an MMA the GPU may lack; the subclasses give the words and limits.
    """

    label: ClassVar[str]  # "Tensor Core" | "Sparse Tensor Core"
    dtypes: ClassVar[dict[str, str]]  # storage type of each precision
    row_word: ClassVar[str]  # what the kernel calls a row of the fused stencil ("row", "line")

    @classmethod
    def fused_radius_limit(cls, dims: int) -> int:
        """The largest r·t the kernel takes in ``dims`` dimensions (each kernel's planner says)."""
        raise NotImplementedError

    @classmethod
    def radius_reason(cls, dims: int) -> str:
        """Why r·t is bounded, after the kernel's name in the refusal."""
        return f" (at most {cls.fused_radius_limit(dims)})"

    @classmethod
    def field_dtypes(cls) -> dict[str, str]:
        return dict(cls.dtypes)

    @classmethod
    def unsupported(cls, stencil: Stencil, fuse: int, dtype: str, precision: str,
                    device: dict | None = None) -> str | None:
        why = super().unsupported(stencil, fuse, dtype, precision, device)
        if why:
            return why
        if cls.dtypes[precision] != dtype:
            return f"the {cls.label} kernel runs {precision.upper()} on {cls.dtypes[precision]} fields, not {dtype}"
        if stencil.radius * fuse > cls.fused_radius_limit(stencil.dims):
            return (f"fused radius r·t = {stencil.radius * fuse} is too large for the {cls.label} kernel"
                    f"{cls.radius_reason(stencil.dims)}")
        rows = (2 * stencil.radius * fuse + 1) ** 2
        if stencil.dims == 3 and rows > MASK_BITS:
            deepest = (math.isqrt(MASK_BITS) - 1) // 2  # (2·r·t + 1)² rows in 3D
            return (f"{stencil.name} fused x{fuse} has {rows} kernel {cls.row_word}s; the {cls.label} kernel's "
                    f"compile-time {cls.row_word} mask holds {MASK_BITS} (3D: r·t ≤ {deepest})")
        return cls.device_reason(precision, device) if device is not None else None

    # ------------------------------------------------------------------ launching
    def _slots(self) -> int:
        """Resident blocks on the whole GPU (the occupancy API's count for the compiled kernel)."""
        raise NotImplementedError

    def _axes(self, f):
        """(ni, ns, pitch_i, pitch_s, Gi, Gs): the kernel's inner and stream axes on the padded field ``f``."""
        g = f.geometry
        if self.stencil.dims == 3:
            return f.ny, f.nz, f.pitch_y, f.pitch_z, g.gy, g.gz
        if self.stencil.dims == 2:
            return 1, f.ny, f.pitch_z, f.pitch_y, 0, g.gy
        return 1, 1, f.pitch_y, f.pitch_z, 0, 0

    def _launches(self, fin, fout):
        """Per launch of the plan (:meth:`tcadvisor.gpu.plans.LaunchPlan.launches`): ``(grid, per, input, output,
        nx, ni, ns, pitch_i, pitch_s, Gi, Gs)``, the fields' data starting at the launch's offset (a view: the
        second launch of a 1D line as rows starts past its rows, so the kernel's own indices stay small)."""
        ni, ns, pi, ps, gi, gs = self._axes(fin)
        for ln in self.plan.launches((fin.nz, fin.ny, fin.nx), self._slots()):
            src, dst = fin.data, fout.data
            if ln.offset:
                src, dst = src.reshape(-1)[ln.offset:], dst.reshape(-1)[ln.offset:]
            yield (ln.grid, ln.per, src, dst, ln.nx, ni, ln.ns, pi, ln.row_pitch or ps, gi, gs)
