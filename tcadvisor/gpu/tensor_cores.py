"""The bundled dense Tensor Core kernel (kernel fusion), set up and launched from Python.

The weight operands are built by :func:`tcadvisor.transforms.rowband.construct`,
the same code the model uses to count α for this kernel, and uploaded in the
fragment order of the chosen MMA instruction.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..reference import fused_weights
from ..stencil import Stencil
from ..transforms import rowband
from .backend import blocks_per_sm, cupy, device_info, module, split_stream
from .fields import Geometry, PaddedField

#: Shapes the kernel implements, per precision.
SHAPES = {"fp64": ("m16n8k8", "m16n8k4", "m16n8k16", "m8n8k4"), "tf32": ("m16n8k8", "m16n8k4")}
#: Largest fused radius the kernel takes (pending accumulators live in registers).
MAX_FUSED_RADIUS = 8
B_REG_LIMIT = 40


def round_tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 values to TF32 (10-bit mantissa, nearest, ties away) as the kernel's cvt.rna does."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x1000) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


def candidate_shapes(precision: str) -> tuple[MmaShape, ...]:
    """The shapes the bundled profile lists for ``precision`` that this kernel runs on this device."""
    from ..impls import find_impl

    hopper = device_info()["cc"][0] >= 9
    listed = find_impl("tcadvisor-tc").mma.get(precision, ())
    ok = [s for s in listed if str(s) in SHAPES[precision]
          and (hopper or precision != "fp64" or str(s) == "m8n8k4")]
    return tuple(ok)


def default_shape(precision: str, fused_mask: np.ndarray) -> MmaShape:
    """The instruction that pads this fused kernel least, as the model assumes (advisor.instruction)."""
    from ..transforms import least_padding_shape

    return least_padding_shape("rowband", fused_mask, candidate_shapes(precision))


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


class TensorCoreKernel:
    """t fused steps as one sweep of banded matrix products on dense Tensor Cores."""

    unit = "tensor_core"

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, weights: np.ndarray, shape: MmaShape | None = None,
                 bregs: bool | None = None, prefetch: int | None = None, warps: int = 4, min_blocks: int = 1,
                 vector_loads: bool = True):
        if dtype not in ("double", "float"):
            raise TcAdvisorError(f"the bundled Tensor Core kernel runs double (FP64) or float (TF32), not {dtype}")
        self.stencil, self.fuse, self.dtype = stencil, fuse, dtype
        self.precision = "fp64" if dtype == "double" else "tf32"
        self.np_dtype = np.float64 if dtype == "double" else np.float32
        self.R = stencil.radius * fuse
        if self.R > MAX_FUSED_RADIUS:
            raise TcAdvisorError(f"fused radius r·t = {self.R} is too large for the Tensor Core kernel "
                                 f"(at most {MAX_FUSED_RADIUS})")
        self.shape = shape or default_shape(self.precision, stencil.fused_mask(fuse))
        if str(self.shape) not in SHAPES[self.precision]:
            raise TcAdvisorError(f"MMA shape {self.shape} is not implemented for {self.precision}; "
                                 f"expected one of {', '.join(SHAPES[self.precision])}")
        if self.shape.m == 16 and self.precision == "fp64" and device_info()["cc"][0] < 9:
            raise TcAdvisorError(f"FP64 {self.shape} needs compute capability 9.0 (Hopper); use m8n8k4")
        self.fused = fused_weights(weights, fuse)
        # FP64 lanes load their k values as 16-byte vectors (permuted k order); TF32 lanes
        # load single words in the natural order, which measured faster (tuning.csv).
        self.permuted = self.precision == "fp64"
        self.construction = rowband.construct(self.fused, self.shape, self.permuted)
        d = stencil.dims
        n = 2 * self.R + 1
        self.ns = 1 if d == 1 else n
        self.ni = n if d == 3 else 1
        lead = {1: lambda p, a: (), 2: lambda p, a: (p,), 3: lambda p, a: (p, a)}[d]
        all_rows = [lead(p, a) for p in range(self.ns) for a in range(self.ni)]
        nonzero = set(self.construction.details["rows"])
        self.rowmask = sum(1 << i for i, idx in enumerate(all_rows) if idx in nonzero)
        self.nonzero_rows = len(nonzero)
        self.kch = self.construction.details["chunks"]
        frag = rowband.fragments(self.construction, all_rows)
        if self.precision == "tf32":
            frag = round_tf32(frag.astype(np.float32))
        self.wfrag = cupy().asarray(np.ascontiguousarray(frag, dtype=self.np_dtype).reshape(-1))
        nb = self.shape.k // 4
        b_regs = len(all_rows) * self.kch * nb
        self.wx, self.wi = (1, warps) if d == 3 else (warps, 1)
        self.bregs = (b_regs <= B_REG_LIMIT) if bregs is None else bool(bregs)
        a_regs = self.ni * self.kch * self.shape.m * self.shape.k // 32
        self.prefetch = (1 if a_regs <= 24 else 0) if prefetch is None else int(prefetch)
        defines = (("K_DOUBLE", int(self.precision == "fp64")), ("K_MMA_M", self.shape.m), ("K_MMA_K", self.shape.k),
                   ("K_R", self.R), ("K_NS", self.ns), ("K_NI", self.ni), ("K_KCH", self.kch),
                   ("K_ROWMASK", f"{self.rowmask:#x}ULL"), ("K_WX", self.wx), ("K_WI", self.wi),
                   ("K_BREGS", int(self.bregs)), ("K_PF", self.prefetch), ("K_MINB", int(min_blocks)),
                   ("K_PERM", int(self.permuted)))
        self.min_blocks = int(min_blocks)
        self.vector_loads = bool(vector_loads)
        self.kernel = module("tensor_cores.cu", defines).get_function("tc_stream")
        self.tile_x = self.shape.m * 8
        self.threads = 32 * self.wx * self.wi

    @property
    def alpha(self):
        return self.construction.alpha

    # ------------------------------------------------------------------ geometry
    def geometry(self, shape3: tuple[int, int, int]) -> Geometry:
        nz, ny, nx = shape3
        gx = _round_up(self.R, 2)  # = R + lead: even, so loads (from -R-lead) and stores are both vectors
        tiles = math.ceil(nx / self.tile_x)
        pitch = _round_up(gx + tiles * self.tile_x + self.construction.details["K_pad"] + 8, 32)
        d = self.stencil.dims
        return Geometry(self.R if d == 3 else 0, self.R if d >= 2 else 0, gx, pitch)

    def _axes(self, f: PaddedField):
        """(ni, ns, pitch_i, pitch_s, Gi, Gs): the kernel's inner and stream axes on this field."""
        g = f.geometry
        if self.stencil.dims == 3:
            return f.ny, f.nz, f.pitch_y, f.pitch_z, g.gy, g.gz
        if self.stencil.dims == 2:
            return 1, f.ny, f.pitch_z, f.pitch_y, 0, g.gy
        return 1, 1, f.pitch_y, f.pitch_z, 0, 0

    def _launch_shape(self, nx: int, ni: int, ns: int):
        tiles = math.ceil(nx / self.tile_x)
        gxb, gyb = math.ceil(tiles / self.wx), math.ceil(ni / self.wi)
        slots = device_info()["sms"] * blocks_per_sm(self.kernel, self.threads, 0)
        chunks, per = split_stream(ns, gxb * gyb, slots, self.ns - 1)
        return (gxb, gyb, chunks), per

    def sweep(self, fin: PaddedField, fout: PaddedField) -> None:
        ni, ns, pi, ps, gi, gs = self._axes(fin)
        grid, per = self._launch_shape(fin.nx, ni, ns)
        i32 = np.int32
        gx = fin.geometry.gx
        lead = self.construction.details["lead"]
        align = int(self.vector_loads and (gx - self.R - lead) % 2 == 0) | (int(gx % 2 == 0) << 1)
        self.kernel(grid, (self.threads,), (fin.data, fout.data, self.wfrag, i32(fin.nx), i32(ni), i32(ns),
                                             np.int64(pi), np.int64(ps), i32(gx), i32(gi), i32(gs),
                                             i32(per), i32(align)))

    def executed_flops(self, shape3) -> float:
        """FLOPs the Tensor Cores execute in one sweep: every MMA issued, padding included."""
        nz, ny, nx = shape3
        ni, ns = (ny, nz) if self.stencil.dims == 3 else ((1, ny) if self.stencil.dims == 2 else (1, 1))
        grid, per = self._launch_shape(nx, ni, ns)
        rs = (self.ns - 1) // 2
        slices = sum(min(per, ns - b * per) + 2 * rs for b in range(grid[2]))
        mmas = slices * math.ceil(nx / self.tile_x) * ni * self.nonzero_rows * self.kch
        return mmas * 2.0 * self.shape.macs

    def describe(self) -> str:
        return (f"{self.shape} {self.precision.upper()}, α = {self.alpha} ({float(self.alpha):.3f}), "
                f"{self.kch} K-chunk(s) x {self.nonzero_rows} kernel rows, {self.wx * self.wi} warps/block, "
                f"weights in {'registers' if self.bregs else 'L1'}, prefetch {self.prefetch}, "
                f"min {self.min_blocks} blocks/SM, "
                f"{self.kernel.num_regs} registers")
