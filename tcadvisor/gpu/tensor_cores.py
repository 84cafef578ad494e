"""The bundled dense Tensor Core kernel (kernel fusion), set up and launched from Python.

The weight operands are built by :func:`tcadvisor.transforms.rowband.construct`,
the same code the model uses to count α for this kernel, and uploaded in the
fragment order of the chosen MMA instruction.  Precisions: FP64 (DMMA), TF32 on
float fields, FP16 and BF16 (m16n8k16 with FP32 accumulation) on half and
bfloat16 fields, so that dense and sparse Tensor Cores compare at the same
precision.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..reference import fused_weights
from ..stencil import Stencil
from ..transforms import rowband
from ..transforms.base import Construction, kernel_lines
from . import dense16
from . import plans
from .backend import blocks_per_sm, cupy, device_info, module, use_shared_memory
from .checking import TC_ACCUMULATE, Stage, SweepModel
from .fields import Geometry, PaddedField
from .kernel import MatrixUnitKernel
from .numerics import bf16_bits_to_float, round_tf32, to_bf16_bits

#: Shapes the kernel implements, per precision.
SHAPES = {"fp64": ("m16n8k8", "m16n8k4", "m16n8k16", "m8n8k4"), "tf32": ("m16n8k8", "m16n8k4"),
          "fp16": ("m16n8k16",), "bf16": ("m16n8k16",)}
#: dtype of the fields each precision runs on.
DTYPE = {"fp64": "double", "tf32": "float", "fp16": "half", "bf16": "bfloat16"}
#: K_HALF of the CUDA code: 16-bit operand type.
HALF_CODE = {"fp16": 1, "bf16": 2}
#: Largest fused radius the kernel takes in 2D and 3D: the 2R pending output slices of every line live in
#: accumulator registers (at r·t = 8, 16 slices of NC floats per line).
MAX_FUSED_RADIUS = 8
#: In 1D a warp streams no slices, so nothing is pending; what grows with r·t there is K_pad/k weight and input
#: fragments per lane.  At r·t = 64 nvcc 13.0 for sm_90 allocates 242 registers (FP64 m16n8k8), 156 (FP16)
#: and 120 (TF32), none spilled (benchmarks/ptxas_resources.py's compile); beyond it FP64 would spill.
MAX_FUSED_RADIUS_1D = 64


def fused_radius_limit(dims: int) -> int:
    """The largest r·t :class:`TensorCoreKernel` runs in ``dims`` dimensions."""
    return MAX_FUSED_RADIUS_1D if dims == 1 else MAX_FUSED_RADIUS


def round_weights(values: np.ndarray, precision: str) -> np.ndarray:
    """Weights as the kernel multiplies by them (float64 values of the uploaded operands)."""
    if precision == "tf32":
        return round_tf32(np.asarray(values, dtype=np.float32)).astype(np.float64)
    if precision == "fp16":
        return np.asarray(values).astype(np.float16).astype(np.float64)
    if precision == "bf16":
        return bf16_bits_to_float(to_bf16_bits(values)).astype(np.float64)
    return np.asarray(values, dtype=np.float64)


def candidate_shapes(precision: str) -> tuple[MmaShape, ...]:
    """The shapes the bundled profile lists for ``precision`` that this kernel runs on this device."""
    from .registry import bundled_profile

    hopper = device_info()["cc"][0] >= 9
    listed = bundled_profile(TensorCoreKernel.unit).mma.get(precision, ())
    ok = [s for s in listed if str(s) in SHAPES[precision]
          and (hopper or precision != "fp64" or str(s) == "m8n8k4")]
    return tuple(ok)


def default_shape(precision: str, fused_mask: np.ndarray) -> MmaShape:
    """The instruction that pads this fused kernel least, as the model assumes (advisor.instruction)."""
    from ..transforms import least_padding_shape

    return least_padding_shape("rowband", fused_mask, candidate_shapes(precision))


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _sweep_model(fused: np.ndarray, precision: str, dtype: str, rows: int, chunks: int) -> SweepModel:
    """The one stage of a sweep (:meth:`TensorCoreKernel.numerics`): ``rows`` non-empty kernel rows of
    ``chunks`` MMAs each accumulate every product of the fused weights."""
    w = round_weights(fused, precision)
    terms = int(np.count_nonzero(fused)) + rows * chunks
    u_acc = 2.0**-52 if precision == "fp64" else TC_ACCUMULATE
    return SweepModel((Stage(weights=w, exact=fused, operand="tf32" if precision == "tf32" else None,
                             u_acc=u_acc, terms=terms, output=dtype if precision in HALF_CODE else None),))


class TensorCoreKernel(MatrixUnitKernel):
    """t fused steps as one sweep of banded matrix products on dense Tensor Cores."""

    name = "tensor_cores"
    unit = "tensor_core"
    cuda_function = "tc_stream"
    precisions = ("fp64", "tf32", "fp16", "bf16")
    label = "Tensor Core"
    dtypes = DTYPE
    row_word = "row"

    @classmethod
    def fused_radius_limit(cls, dims: int) -> int:
        return fused_radius_limit(dims)

    @classmethod
    def device_reason(cls, precision: str, device: dict) -> str | None:
        if precision in HALF_CODE and tuple(device["cc"]) < (8, 0):
            return f"{precision.upper()} m16n8k16 needs compute capability 8.0 or newer; this GPU has {device['cc']}"
        if precision in ("fp64", "tf32") and tuple(device["cc"]) < (8, 0):  # DMMA and TF32 mma.sync: sm_80
            return (f"{precision.upper()} mma.sync needs compute capability 8.0 or newer; this GPU has "
                    f"{tuple(device['cc'])}")
        return None

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                 mma: MmaShape | None = None, bregs: bool | None = None, prefetch: int | None = None,
                 warps: int | None = None, min_blocks: int | None = None, vector_loads: bool = True,
                 l2_prefetch: int | None = None, weights_shared: bool | None = None, shared_words: bool = False,
                 x_tiles: int | None = None, inner_rows: int | None = None, line_rows: bool | None = None,
                 fixed_alignment: bool | None = None, stages: int | None = None):
        why = self.unsupported(stencil, fuse, dtype, precision, device_info())
        if why:
            raise TcAdvisorError(why)
        super().__init__(stencil, fuse, dtype, precision, weights)
        self.shape = mma or default_shape(self.precision, stencil.fused_mask(fuse))
        self.mma = self.shape
        if str(self.shape) not in SHAPES[self.precision]:
            raise TcAdvisorError(f"MMA shape {self.shape} is not implemented for {self.precision}; "
                                 f"expected one of {', '.join(SHAPES[self.precision])}")
        if self.shape.m == 16 and self.precision == "fp64" and device_info()["cc"][0] < 9:
            raise TcAdvisorError(f"FP64 {self.shape} needs compute capability 9.0 (Hopper); use m8n8k4")
        # FP64 lanes load their k values as 16-byte vectors (permuted k order); TF32 lanes
        # load single words in the natural order, which measured faster (tuning.csv); 16-bit
        # lanes load their four halves of a row as one 8-byte vector (layouts.dense16_strip).
        self.half = self.precision in HALF_CODE
        self.permuted = self.precision == "fp64" or self.half
        self.construction = rowband.construct(self.fused, self.shape, self.permuted)
        d = stencil.dims
        n = 2 * self.R + 1
        ns = 1 if d == 1 else n
        ni = n if d == 3 else 1
        lead = {1: lambda p, a: (), 2: lambda p, a: (p,), 3: lambda p, a: (p, a)}[d]
        all_rows = [lead(p, a) for p in range(ns) for a in range(ni)]
        nonzero = set(self.construction.details["rows"])
        rowmask = sum(1 << i for i, idx in enumerate(all_rows) if idx in nonzero)
        # The launch shape comes from the planner, which the refined model reads too.
        self.plan = plans.plan_tensor_cores(stencil, fuse, precision, self.shape, bregs=bregs, prefetch=prefetch,
                                            warps=warps, min_blocks=min_blocks, rowmask=rowmask,
                                            l2_prefetch=l2_prefetch, weights_shared=weights_shared,
                                            shared_words=shared_words, x_tiles=x_tiles, inner_rows=inner_rows,
                                            line_rows=line_rows, fixed_alignment=fixed_alignment, stages=stages)
        plan = self.plan
        if plan.options["kch"] != self.construction.details["chunks"]:  # one padding rule, two places
            raise RuntimeError(f"tcadvisor.gpu.plans pads K to {plan.options['kch']} chunks; the operands have "
                               f"{self.construction.details['chunks']}")
        self.ns, self.ni = plan.options["ns"], plan.options["ni"]
        self.rowmask = rowmask
        self.nonzero_rows = len(nonzero)
        self.kch = plan.options["kch"]
        self.wfrag = cupy().asarray(self._weight_fragments(all_rows))
        self.wx, self.wi = plan.options["wx"], plan.options["wi"]
        self.bregs = plan.options["bregs"]
        self.prefetch = plan.options["prefetch"]
        self.l2_prefetch = plan.options["l2_prefetch"]
        self.weights_shared = plan.options["weights_shared"]
        self.shared_words = plan.options["shared_words"]
        self.stages = plan.options["stages"]
        self.lines = plan.options["ir"]  # x tiles (1D/2D) or inner rows (3D) per warp
        self.smem = plan.smem
        self.min_blocks = plan.options["min_blocks"]
        self.vector_loads = bool(vector_loads)
        self.kernel = module("tensor_cores.cu", plan.defines).get_function("tc_stream")
        use_shared_memory(self.kernel, self.smem, device_info(), self._smem_what())
        self.tile_x = plan.outputs["x"]
        self.threads = plan.threads
        self._variants: dict[int, object] = {}  # K_ALIGN -> the kernel compiled for fields of that alignment

    def _smem_what(self) -> str:
        """What takes the kernel's shared memory, for the one-line refusal beyond a block's limit."""
        return " and ".join(w for w, on in (("weights_shared", self.weights_shared), (f"stages {self.stages}",
                                                                                      self.stages)) if on)

    def _weight_fragments(self, all_rows) -> np.ndarray:
        """The B fragments to upload: FP64 as is, TF32 rounded (cvt.rna), 16-bit as packed pairs (uint32)."""
        if self.half:
            frag = dense16.fragments(self.construction, all_rows)
            bits = (frag.astype(np.float16).view(np.uint16) if self.precision == "fp16"
                    else to_bf16_bits(frag)).astype(np.uint32)
            return np.ascontiguousarray(bits[..., 0::2] | (bits[..., 1::2] << 16)).reshape(-1)
        frag = rowband.fragments(self.construction, all_rows)
        if self.precision == "tf32":
            frag = round_tf32(frag.astype(np.float32))
        return np.ascontiguousarray(frag, dtype=self.np_dtype).reshape(-1)

    def operands(self) -> Construction:
        return self.construction

    def numerics(self) -> SweepModel:
        """One stage: fused weights rounded as uploaded, TF32 operands rounded with cvt.rna, accumulation
        in FP64 (DMMA) or FP32 over every product and MMA of the chain, 16-bit fields rounded at the store."""
        return _sweep_model(self.fused, self.precision, self.dtype, self.nonzero_rows, self.kch)

    @classmethod
    def sweep_model(cls, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                    mma: MmaShape | str | None = None) -> SweepModel:
        """:meth:`numerics` of this configuration on instruction ``mma`` without building the kernel (no CuPy,
        nothing compiled; the rounding depends on the instruction's k, which pads each row's chain)."""
        if precision not in SHAPES:
            raise TcAdvisorError(f"the Tensor Core kernel runs {', '.join(p.upper() for p in SHAPES)}, "
                                 f"not {precision.upper()}")
        shape = MmaShape.parse(mma) if isinstance(mma, str) else mma
        if shape is None or str(shape) not in SHAPES[precision]:
            raise TcAdvisorError(f"MMA shape {shape} is not implemented for {precision}; expected one of "
                                 f"{', '.join(SHAPES[precision])}")
        fused = fused_weights(np.asarray(weights, dtype=np.float64), int(fuse))
        chunks = rowband.padded_k(stencil.radius * int(fuse), shape) // shape.k  # as the construction pads
        return _sweep_model(fused, precision, dtype, len(kernel_lines(fused)), chunks)

    # ------------------------------------------------------------------ geometry
    def geometry(self, shape3: tuple[int, int, int]) -> Geometry:
        nz, ny, nx = shape3
        gx = _round_up(self.R, 2)  # = R + lead: even, so loads (from -R-lead) and stores are both vectors
        # (16-bit: the 8-byte loads start at strip column 4t, i.e. Gx - R - lead = 0 is aligned too)
        tiles = math.ceil(nx / self.tile_x)
        pitch = _round_up(gx + tiles * self.tile_x + self.construction.details["K_pad"] + 8, 32)
        d = self.stencil.dims
        return Geometry(self.R if d == 3 else 0, self.R if d >= 2 else 0, gx, pitch)

    def _slots(self) -> int:
        return device_info()["sms"] * blocks_per_sm(self.kernel, self.threads, self.smem)

    def alignment(self, f: PaddedField) -> int:
        """Bit 0: the vector loads are aligned (8 bytes of halves, 16 of doubles); bit 1: pair stores are."""
        gx, lead = f.geometry.gx, self.construction.details["lead"]
        vec = 4 if self.half else 2  # elements per vector load
        return int(self.vector_loads and (gx - self.R - lead) % vec == 0) | (int(gx % 2 == 0) << 1)

    def compiled_for(self, align: int):
        """The kernel compiled for fields of alignment ``align`` (:meth:`alignment`): the plan's own where they are
        the kernel's fields, else a variant with that K_ALIGN (same plan otherwise; compiled once, cached).  Without
        ``fixed_alignment`` the kernel takes the alignment at run time."""
        if self.plan.options["align"] is None or align == self.plan.options["align"]:
            return self.kernel
        if align not in self._variants:
            defines = tuple((k, align if k == "K_ALIGN" else v) for k, v in self.plan.defines)
            fn = module("tensor_cores.cu", defines).get_function("tc_stream")
            use_shared_memory(fn, self.smem, device_info(), self._smem_what())
            self._variants[align] = fn
        return self._variants[align]

    def sweep(self, fin: PaddedField, fout: PaddedField) -> None:
        i32 = np.int32
        gx, align = fin.geometry.gx, self.alignment(fin)
        kernel = self.compiled_for(align)
        for grid, per, src, dst, nx, ni, ns, pi, ps, gi, gs in self._launches(fin, fout):
            size = plans.ELEMENT_BYTES[self.precision]
            if self.stages and (pi * size % 16 or ps * size % 16):
                # the stages hold every slice and row as far past its 16-byte boundary as the first
                raise TcAdvisorError(f"stages {self.stages}: the staged Tensor Core kernel needs row and slice pitches "
                                     f"of whole 16-byte chunks; this field's are {pi} and {ps} elements of {size} "
                                     "bytes")
            kernel(grid, (self.threads,), (src, dst, self.wfrag, i32(nx), i32(ni), i32(ns), np.int64(pi),
                                                 np.int64(ps), i32(gx), i32(gi), i32(gs), i32(per), i32(align)),
                        shared_mem=self.smem)

    def executed_flops(self, shape3) -> float:
        """FLOPs the Tensor Cores execute in one sweep: every MMA issued, padding included."""
        return self.plan.executed_flops(shape3, self._slots())

    def _shared_text(self) -> str:
        # "shared memory" alone is what runs recorded before the vector layout say (plans._TC_TEXT reads both)
        return "shared memory" if self.shared_words else "shared memory as vectors"

    def describe(self) -> str:
        return (f"{self.shape} {self.precision.upper()}, α = {self.alpha} ({float(self.alpha):.3f}), "
                f"{self.kch} K-chunk(s) x {self.nonzero_rows} kernel rows, {self.wx * self.wi} warps/block, "
                + (f"{self.lines} {'inner rows' if self.stencil.dims == 3 else 'tiles along x'} per warp, "
                   if self.lines > 1 else "")
                + f"weights in {'registers' if self.bregs else self._shared_text() if self.weights_shared else 'L1'}, "
                f"prefetch {self.prefetch}, "
                + (f"L2 prefetch {self.l2_prefetch} slices ahead, " if self.l2_prefetch else "")
                + (f"the line as rows, {self.plan.row_width} points per block, " if self.plan.row_width else "")
                + ("compiled for its fields' alignment, " if self.plan.options["align"] is not None else "")
                + (f"{self.stages} stages in shared memory, " if self.stages else "")
                + f"min {self.min_blocks} blocks/SM, "
                f"{self.kernel.num_regs} registers")


KERNEL = TensorCoreKernel
