"""The instructions whose rates calibration measures, and what one of each is worth in FLOPs.

One table serves two purposes.  Calibration compiles ``kernels/calibrate.cu`` once per row
(``CAL_FMA`` or ``CAL_MMA`` names the row) and turns its time into FLOP/s; Nsight Compute
counts warp-level tensor instructions, which :func:`flops_per_instruction` turns into FLOPs.

Why one PTX ``mma`` is one counted instruction: on sm_80 and sm_90 ptxas lowers every shape
listed here to exactly one SASS instruction (``DMMA.8x8x4``, ``DMMA.16x8x{4,8,16}``,
``HMMA.1684.F32.TF32``, ``HMMA.16816.F32.BF16``, ``HMMA.SP.16832.F32``, ...; checked by
disassembling ``kernels/calibrate.cu``, see ``docs/validation.md``).  So an instruction of
shape mMnNkK executes 2·M·N·K FLOPs; a sparse ``mma.sp`` of shape mMnNkK is counted
dense-equivalent, 2·M·N·K as well, like the vendors' "with sparsity" figures.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..mma import MmaShape


@dataclass(frozen=True)
class FmaBenchmark:
    """A CUDA-core FMA rate: ``lanes`` multiply-adds per thread instruction (2 for packed pairs)."""

    precision: str
    code: int  # CAL_FMA
    lanes: int
    min_cc: tuple[int, int] = (7, 0)

    @property
    def flops_per_instruction(self) -> int:
        return 2 * self.lanes


@dataclass(frozen=True)
class MmaBenchmark:
    """One warp-level MMA instruction of ``unit`` at ``precision`` (``code`` is ``CAL_MMA``)."""

    unit: str  # "tensor_core" or "sparse_tensor_core"
    precision: str
    shape: MmaShape
    code: int
    min_cc: tuple[int, int] = (8, 0)

    @property
    def sparse(self) -> bool:
        return self.unit == "sparse_tensor_core"

    @property
    def flops_per_instruction(self) -> int:
        """FLOPs of one warp-level instruction (dense-equivalent for ``mma.sp``)."""
        return 2 * self.shape.macs

    @property
    def label(self) -> str:
        kind = "mma.sp" if self.sparse else "mma.sync"
        return f"{self.precision.upper()} {kind} {self.shape}"


FMA_BENCHMARKS = (
    FmaBenchmark("fp64", 1, 1),
    FmaBenchmark("fp32", 2, 1),
    FmaBenchmark("fp16", 3, 2, (8, 0)),  # HFMA2 (both halves of a pair)
    FmaBenchmark("bf16", 4, 2, (8, 0)),
)

_S = MmaShape.parse
MMA_BENCHMARKS = (
    MmaBenchmark("tensor_core", "fp64", _S("m8n8k4"), 1),
    MmaBenchmark("tensor_core", "fp64", _S("m16n8k4"), 2, (9, 0)),
    MmaBenchmark("tensor_core", "fp64", _S("m16n8k8"), 3, (9, 0)),
    MmaBenchmark("tensor_core", "fp64", _S("m16n8k16"), 4, (9, 0)),
    MmaBenchmark("tensor_core", "tf32", _S("m16n8k4"), 5),
    MmaBenchmark("tensor_core", "tf32", _S("m16n8k8"), 6),
    MmaBenchmark("tensor_core", "fp16", _S("m16n8k8"), 7),
    MmaBenchmark("tensor_core", "fp16", _S("m16n8k16"), 8),
    MmaBenchmark("tensor_core", "bf16", _S("m16n8k8"), 9),
    MmaBenchmark("tensor_core", "bf16", _S("m16n8k16"), 10),
    MmaBenchmark("sparse_tensor_core", "fp16", _S("m16n8k16"), 11),
    MmaBenchmark("sparse_tensor_core", "fp16", _S("m16n8k32"), 12),
    MmaBenchmark("sparse_tensor_core", "bf16", _S("m16n8k16"), 13),
    MmaBenchmark("sparse_tensor_core", "bf16", _S("m16n8k32"), 14),
    MmaBenchmark("sparse_tensor_core", "tf32", _S("m16n8k8"), 15),
    MmaBenchmark("sparse_tensor_core", "tf32", _S("m16n8k16"), 16),
)
#: The instructions ``--quick`` measures: those the bundled kernels issue by default on Ampere
#: and Hopper, and the fastest shape of every other precision.
QUICK_SHAPES = {
    ("tensor_core", "fp64"): ("m8n8k4", "m16n8k8", "m16n8k16"),
    ("tensor_core", "tf32"): ("m16n8k8",),
    ("tensor_core", "fp16"): ("m16n8k16",),
    ("tensor_core", "bf16"): ("m16n8k16",),
    ("sparse_tensor_core", "fp16"): ("m16n8k32",),
    ("sparse_tensor_core", "bf16"): ("m16n8k32",),
    ("sparse_tensor_core", "tf32"): ("m16n8k16",),
}


def mma_benchmarks(cc: tuple[int, int], quick: bool = False) -> list[MmaBenchmark]:
    """The MMA instructions this compute capability executes (``quick``: the reduced set)."""
    out = [b for b in MMA_BENCHMARKS if tuple(cc) >= b.min_cc]
    if quick:
        out = [b for b in out if str(b.shape) in QUICK_SHAPES.get((b.unit, b.precision), ())]
    return out


def fma_benchmarks(cc: tuple[int, int]) -> list[FmaBenchmark]:
    return [b for b in FMA_BENCHMARKS if tuple(cc) >= b.min_cc]


def find_mma(unit: str, precision: str, shape: MmaShape | str) -> MmaBenchmark | None:
    shape = MmaShape.parse(shape) if isinstance(shape, str) else shape
    for b in MMA_BENCHMARKS:
        if (b.unit, b.precision, b.shape) == (unit, precision, shape):
            return b
    return None


def flops_per_instruction(shape: MmaShape | str) -> int:
    """FLOPs one warp-level tensor instruction of ``shape`` executes (one PTX mma = one SASS op;
    dense-equivalent for mma.sp), whatever its precision."""
    shape = MmaShape.parse(shape) if isinstance(shape, str) else shape
    return 2 * shape.macs
