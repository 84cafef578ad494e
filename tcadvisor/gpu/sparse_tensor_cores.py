"""The bundled Sparse Tensor Core kernel (SPIDER's strided swap, 2:4 / 1:2 ``mma.sp``), from Python.

The weight operands are built by :func:`tcadvisor.transforms.spider.construct`
(the construction the advisor counts α with), permuted into the order the
kernel's loads feed the instruction, compressed and packed per lane by
:mod:`tcadvisor.gpu.sparse_operands`; α and the executed FLOPs are counted from
that same construction.  Precisions: FP16 and BF16 operands with FP32
accumulation (``mma.sp`` m16n8k32), TF32 (``mma.sp`` m16n8k16) for float fields.
Fused radius r·t ≤ 8 in 2D and 3D (L = 16 outputs per line; the swap needs L ≥ 2R + 2, and
at r·t = 8, L = 2R, each line is two matrices, its even and its odd taps, both
multiplied by the line's input fragments: α = 17/64 per full line).

L = 32 would allow r·t ≤ 15 at α = (2R+1)/64, but not with this kernel's
streaming: each pending output row then holds two M tiles of accumulators
(8 registers per lane), so 2R pending rows need 16R registers — 128 or more for
R ≥ 8, on top of the weight fragments — and the kernel would run at one or two
warps per scheduler.  The two halves at r·t = 8 reach the same α with one M
tile per pending row.  Deeper fusion in 2D and 3D needs the pending rows in
shared memory; not done.

In 1D no output row is pending (the kernel has one line), so r·t goes to 64, as
on the dense kernel: the line's window of 16 + 2R columns is taken in blocks of
32, each loaded and swapped as the one block below, and the line is its even and
odd taps — α = (2R+1)/(2·32·blocks), e.g. 33/128 at r·t = 16
(:func:`tcadvisor.gpu.sparse_operands.blocks`).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..reference import fused_weights, radius_of
from ..stencil import Stencil
from ..transforms.base import Construction, kernel_lines
from . import plans
from .backend import blocks_per_sm, cupy, device_info, module, use_shared_memory
from .checking import TC_ACCUMULATE, Stage, SweepModel
from .fields import Geometry, PaddedField
from .kernel import MatrixUnitKernel
from .numerics import bf16_bits_to_float, round_tf32, to_bf16_bits
from .sparse_operands import (SHAPES, TILE_X, L, a_chunks, blocks, fused_radius_limit, line_order, pack,
                              radius_reason)

#: dtype each precision runs on (its fields' storage type).
DTYPE = {"tf32": "float", "fp16": "half", "bf16": "bfloat16"}
PREC_CODE = {"tf32": 0, "fp16": 1, "bf16": 2}
#: Above this many registers of weight fragments per lane, the fragments are read from L1 at every use
#: (the planner decides, tcadvisor.gpu.plans.A_REG_LIMIT).  ptxas issues a slice's fragment loads together
#: either way, so L1 saves few registers: nvcc 13, sm_90, TF32 r·t = 3: 134 registers in registers, 140 from L1.
A_REG_LIMIT = plans.A_REG_LIMIT


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def round_weights(values: np.ndarray, precision: str) -> np.ndarray:
    """Weights as the kernel multiplies by them (float64 values of the uploaded operands)."""
    if precision == "tf32":
        return round_tf32(np.asarray(values, dtype=np.float32)).astype(np.float64)
    if precision == "fp16":
        return np.asarray(values).astype(np.float16).astype(np.float64)
    return bf16_bits_to_float(to_bf16_bits(values)).astype(np.float64)


#: One rounding of an FP16 accumulator (K_ACC16), relative to the partial sum: one FP16 ulp, as TC_ACCUMULATE is one
#: FP32 ulp (the Tensor Cores' internal order and rounding are not specified).
HALF_ACCUMULATE = 2.0**-10


def _sweep_model(fused: np.ndarray, precision: str, dtype: str, lines: int, ka: int,
                 half_accumulators: bool = False) -> SweepModel:
    """The one stage of a sweep (:meth:`SparseTensorCoreKernel.numerics`): ``lines`` non-empty kernel lines
    of ``ka`` mma.sp each accumulate every product of the fused weights (in FP16 with ``half_accumulators``)."""
    w = round_weights(fused, precision)
    terms = int(np.count_nonzero(fused)) + lines * ka
    return SweepModel((Stage(weights=w, exact=fused, operand="tf32" if precision == "tf32" else None,
                             u_acc=HALF_ACCUMULATE if half_accumulators else TC_ACCUMULATE, terms=terms,
                             output=None if precision == "tf32" else dtype),))


def value_words(values: np.ndarray, precision: str) -> np.ndarray:
    """Packed A registers (uint32): TF32 bit patterns, or two 16-bit values (first kept value low)."""
    if precision == "tf32":
        return round_tf32(values[..., 0].astype(np.float32)).view(np.uint32)
    bits = (values.astype(np.float16).view(np.uint16) if precision == "fp16" else to_bf16_bits(values))
    bits = bits.astype(np.uint32)
    return bits[..., 0] | (bits[..., 1] << 16)


class SparseTensorCoreKernel(MatrixUnitKernel):
    """t fused steps as one sweep of 2:4 (1:2) structured sparse matrix products, SPIDER's mechanism."""

    name = "sparse_tensor_cores"
    unit = "sparse_tensor_core"
    cuda_function = "sptc_stream"
    precisions = ("tf32", "fp16", "bf16")
    label = "Sparse Tensor Core"
    dtypes = DTYPE
    row_word = "line"

    @classmethod
    def fused_radius_limit(cls, dims: int) -> int:
        return fused_radius_limit(dims)

    @classmethod
    def radius_reason(cls, dims: int) -> str:
        return radius_reason(dims)

    @classmethod
    def device_reason(cls, precision: str, device: dict) -> str | None:
        if tuple(device["cc"]) < (8, 0):
            return f"Sparse Tensor Cores (mma.sp) need compute capability 8.0 or newer; this GPU has {device['cc']}"
        return None

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                 mma: MmaShape | None = None, aregs: bool | None = None, prefetch: int | None = None,
                 warps: int = 4, min_blocks: int = 1, vector_loads: bool = True, unroll: int | None = None,
                 l2_prefetch: int | None = None, weights_shared: bool | None = None, inner_rows: int | None = None,
                 x_tiles: int | None = None, stages: int | None = None, line_rows: bool | None = None,
                 fixed_alignment: bool | None = None, even_window: bool | None = None,
                 whole_windows: bool | None = None, two_chains: bool | None = None,
                 half_accumulators: bool | None = None):
        why = self.unsupported(stencil, fuse, dtype, precision, device_info())
        if why:
            raise TcAdvisorError(why)
        shape = SHAPES[precision]
        if mma is not None and mma != shape:
            raise TcAdvisorError(f"MMA shape {mma} is not implemented for sparse {precision.upper()}; expected {shape}")
        super().__init__(stencil, fuse, dtype, precision, weights, mma=shape)
        d = stencil.dims
        window = plans.sptc_window_radius(d, self.R, even_window)
        if window != self.R:  # the same stencil, its line padded with a zero tap on each side (even ghost width)
            self.fused, self.R = np.pad(self.fused, window - self.R), window
        self.all_lines, self.ns, self.ni = line_order(d, self.R)
        self.ops = pack(self.fused, precision, self.all_lines)
        self.linemask = sum(1 << i for i, on in enumerate(self.ops.nonzero) if on)
        self.nonzero_lines = sum(self.ops.nonzero)
        self.kc, self.ka = self.ops.kc, self.ops.ka
        cp = cupy()
        self.avals = cp.asarray(np.ascontiguousarray(value_words(self.ops.values, precision), dtype=np.uint32))
        self.ameta = cp.asarray(np.ascontiguousarray(self.ops.meta, dtype=np.uint32))
        # The launch shape comes from the planner, which the refined model reads too.
        self.plan = plans.plan_sparse_tensor_cores(stencil, fuse, precision, aregs=aregs, prefetch=prefetch,
                                                   warps=warps, min_blocks=min_blocks, linemask=self.linemask,
                                                   unroll=unroll, l2_prefetch=l2_prefetch,
                                                   weights_shared=weights_shared, inner_rows=inner_rows,
                                                   x_tiles=x_tiles, stages=stages, line_rows=line_rows,
                                                   vector_loads=vector_loads, fixed_alignment=fixed_alignment,
                                                   even_window=even_window, whole_windows=whole_windows,
                                                   two_chains=two_chains, half_accumulators=half_accumulators)
        assert self.plan.options["window_radius"] == self.R
        self.wx, self.wi = self.plan.options["wx"], self.plan.options["wi"]
        self.aregs = self.plan.options["aregs"]
        self.prefetch = self.plan.options["prefetch"]
        self.unroll = self.plan.options["unroll"]
        self.l2_prefetch = self.plan.options["l2_prefetch"]
        self.min_blocks = self.plan.options["min_blocks"]  # a measured entry may name one
        self.vector_loads = bool(vector_loads)
        self.weights_shared = self.plan.options["weights_shared"]
        self.inner_rows = self.plan.options["ir"]
        self.stages = self.plan.options["stages"]
        self.kernel = module("sparse_tensor_cores.cu", self.plan.defines).get_function("sptc_stream")
        self.smem = self.plan.smem
        use_shared_memory(self.kernel, self.smem, device_info(),
                          "weights_shared and stages" if self.weights_shared and self.stages
                          else "stages" if self.stages else "weights_shared")
        self.threads = 32 * self.wx * self.wi
        self.vec = 16 // self.np_dtype.itemsize  # elements per 16-byte load
        self._variants: dict[int, object] = {}  # K_ALIGN -> the kernel compiled for fields of that alignment

    def operands(self) -> Construction:
        return self.ops.construction

    def numerics(self) -> SweepModel:
        """One stage: the fused weights rounded as uploaded, TF32 operands rounded with cvt.rna (FP16/BF16
        fields are the operands), FP32 (or, with ``half_accumulators``, FP16) accumulation over every product and
        MMA of the chain, and (FP16, BF16) rounding of the accumulator to the storage type."""
        return _sweep_model(self.fused, self.precision, self.dtype, self.nonzero_lines, self.ka,
                            self.plan.options["half_accumulators"])

    @classmethod
    def sweep_model(cls, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                    mma: MmaShape | str | None = None) -> SweepModel:
        """:meth:`numerics` of this configuration without building the kernel (no CuPy, nothing compiled)."""
        if precision not in SHAPES:
            raise TcAdvisorError(f"the Sparse Tensor Core kernel runs {', '.join(p.upper() for p in SHAPES)}, "
                                 f"not {precision.upper()}")
        shape = MmaShape.parse(mma) if isinstance(mma, str) else mma
        if shape is not None and shape != SHAPES[precision]:
            raise TcAdvisorError(f"MMA shape {shape} is not implemented for sparse {precision.upper()}; "
                                 f"expected {SHAPES[precision]}")
        fused = fused_weights(np.asarray(weights, dtype=np.float64), int(fuse))
        return _sweep_model(fused, precision, dtype, len(kernel_lines(fused)),
                            a_chunks(precision, radius_of(fused)))

    # ------------------------------------------------------------------ geometry
    def geometry(self, shape3: tuple[int, int, int]) -> Geometry:
        nz, ny, nx = shape3
        # Gx ≡ R (mod 16 bytes) puts every lane's window vector on a 16-byte boundary.
        gx = self.R
        tiles = math.ceil(nx / TILE_X)
        pitch = _round_up(gx + tiles * TILE_X + 2 * L * blocks(self.R) + 8, 32)
        d = self.stencil.dims
        return Geometry(self.R if d == 3 else 0, self.R if d >= 2 else 0, gx, pitch)

    def _slots(self) -> int:
        return device_info()["sms"] * blocks_per_sm(self.kernel, self.threads, self.smem)

    def alignment(self, f: PaddedField) -> int:
        """Bit 0: 16-byte window loads are aligned; bit 1: pair stores are aligned."""
        gx = f.geometry.gx
        loads = self.vector_loads and (gx - self.R) % self.vec == 0 and f.pitch_y % self.vec == 0
        return int(loads) | (int(gx % 2 == 0) << 1)

    def compiled_for(self, align: int):
        """The kernel compiled for fields of alignment ``align`` (:meth:`alignment`): the plan's own where they are
        the kernel's fields, else a variant with that K_ALIGN (same plan otherwise; compiled once, cached).  Without
        ``fixed_alignment`` the kernel takes the alignment at run time."""
        if self.plan.options["align"] is None or align == self.plan.options["align"]:
            return self.kernel
        variants = self._variants
        if align not in variants:
            defines = tuple((k, align if k == "K_ALIGN" else v) for k, v in self.plan.defines)
            fn = module("sparse_tensor_cores.cu", defines).get_function("sptc_stream")
            use_shared_memory(fn, self.smem, device_info(), "the kernel's shared memory")
            variants[align] = fn
        return variants[align]

    def sweep(self, fin: PaddedField, fout: PaddedField) -> None:
        i32 = np.int32
        gx, align = fin.geometry.gx, self.alignment(fin)
        kernel = self.compiled_for(align)
        for grid, per, src, dst, nx, ni, ns, pi, ps, gi, gs in self._launches(fin, fout):
            kernel(grid, (self.threads,), (src, dst, self.avals, self.ameta, i32(nx), i32(ni), i32(ns),
                                            np.int64(pi), np.int64(ps), i32(gx), i32(gi), i32(gs), i32(per),
                                            i32(align)), shared_mem=self.smem)

    def executed_flops(self, shape3) -> float:
        """FLOPs of every mma.sp issued in one sweep (dense-equivalent m·n·k, as α counts them)."""
        return self.plan.executed_flops(shape3, self._slots())

    def describe(self) -> str:
        return (f"mma.sp {self.mma} {self.precision.upper()} (2:4 via strided swap, L = {L}), "
                f"α = {self.alpha} ({float(self.alpha):.3f}), {self.kc} K-chunk(s) x {self.nonzero_lines} "
                f"kernel lines, " + ("even and odd taps apart (2 matrices per line), " if self.ka > self.kc else "")
                + plans.sparse_plan_text(self.plan) + f", {self.kernel.num_regs} registers")


KERNEL = SparseTensorCoreKernel
