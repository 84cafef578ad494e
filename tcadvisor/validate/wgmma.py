"""The warpgroup MMA (``wgmma``, sm_90a) whose rate calibration measures beside ``mma.sync``.

Why a generator: one ``wgmma.mma_async`` names every accumulator register of the warpgroup's
64×N tile (N/2 per thread: 4 at N = 8, 128 at N = 256), so each N is a differently written
instruction.  :func:`step_source` writes the one wrapper a benchmark needs, and
``kernels/calibrate_wgmma.cu`` issues it; the source is prepended to that file when it is
compiled (:func:`tcadvisor.gpu.backend.module`'s ``prelude``).

Why calibrate it at all: a stencil kernel built from ``mma.sync`` reaches about two thirds of
the datasheet's Tensor Core rate on Hopper, and ``wgmma`` is the instruction the datasheet
rate is quoted for.  The stencil kernels' natural tile is N = 8 (eight outputs per weight band,
``tcadvisor.transforms.rowband``), where a larger N costs more padding than a faster
instruction returns; so what matters is the rate *at N = 8*, and calibration measures it
beside the large-N rate rather than assuming either.

Syntax from the PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
Instructions": ``wgmma.mma_async[.sp].sync.aligned.m64nNkK.f32.T.T d, a|a-desc, b-desc,
[sp-meta, sp-sel,] scale-d, imm-scale-a, imm-scale-b[, imm-trans-a][, imm-trans-b]`` -- the
transpose immediates exist for 16-bit types only, ``imm-trans-a`` only with A in shared memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TcAdvisorError
from ..mma import MmaShape

#: PTX element type and K of one instruction (dense; sparse doubles K) per precision.
_TYPES = {"fp16": ("f16", 16, 2), "bf16": ("bf16", 16, 2), "tf32": ("tf32", 8, 4)}
#: N of the instructions calibration times: 8 is the stencil kernels' tile, 256 the largest.
N_VALUES = (8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class WgmmaBenchmark:
    """One warpgroup instruction: ``m64nNkK`` at ``precision``, A from registers or shared memory."""

    precision: str
    n: int
    sparse: bool = False
    a_shared: bool = False

    def __post_init__(self):
        if self.precision not in _TYPES:
            raise TcAdvisorError(f"wgmma precision {self.precision!r}: expected one of {', '.join(_TYPES)}")
        if self.n not in range(8, 257, 8):
            raise TcAdvisorError(f"wgmma N = {self.n}: expected a multiple of 8 from 8 to 256")

    @property
    def unit(self) -> str:
        return "sparse_tensor_core" if self.sparse else "tensor_core"

    @property
    def shape(self) -> MmaShape:
        k = _TYPES[self.precision][1] * (2 if self.sparse else 1)
        return MmaShape(64, self.n, k)

    @property
    def accumulators(self) -> int:
        """FP32 accumulator registers per thread: the 64×N tile over 128 threads."""
        return self.n // 2

    @property
    def flops_per_instruction(self) -> int:
        """FLOPs of one warpgroup instruction (dense-equivalent for ``wgmma.sp``, like ``mma.sp``)."""
        return 2 * self.shape.macs

    @property
    def b_bytes(self) -> int:
        """Bytes of the K×N operand B in shared memory (dense: sparsity compresses A only)."""
        return self.shape.k * self.n * _TYPES[self.precision][2]

    @property
    def label(self) -> str:
        kind = "wgmma.sp" if self.sparse else "wgmma"
        return f"{self.precision.upper()} {kind} {self.shape} (A in {'shared memory' if self.a_shared else 'registers'})"


def step_source(bench: WgmmaBenchmark) -> str:
    """CUDA text defining ``WG_NACC`` and ``wgmma_step(d, a, adesc, bdesc, e)`` for ``bench``.

    ``d``: the thread's ``WG_NACC`` FP32 accumulators; ``a``: its four 32-bit A registers (read
    when A comes from registers); ``adesc``/``bdesc``: shared-memory matrix descriptors;
    ``e``: sparse metadata (read by ``wgmma.sp`` only).  Accumulates (scale-d true), scales 1,
    no transposes.
    """
    ptx_type = _TYPES[bench.precision][0]
    nacc = bench.accumulators
    operands = [f'"+f"(d[{i}])' for i in range(nacc)]
    inputs: list[str] = []
    index = nacc

    def take(constraint: str) -> str:
        nonlocal index
        inputs.append(constraint)
        index += 1
        return f"%{index - 1}"

    if bench.a_shared:
        a_text = take('"l"(adesc)')
    else:
        a_text = "{" + ", ".join(take(f'"r"(a[{i}])') for i in range(4)) + "}"
    b_text = take('"l"(bdesc)')
    sparse_text = take('"r"(e)') + ", 0, " if bench.sparse else ""
    one = take('"r"(1)')
    if ptx_type == "tf32":
        immediates = "1, 1"
    else:
        immediates = "1, 1, 0, 0" if bench.a_shared else "1, 1, 0"
    acc_text = "{" + ", ".join(f"%{i}" for i in range(nacc)) + "}"
    sp = ".sp" if bench.sparse else ""
    instruction = (f"wgmma.mma_async{sp}.sync.aligned.{bench.shape}.f32.{ptx_type}.{ptx_type} "
                   f"{acc_text}, {a_text}, {b_text}, {sparse_text}p, {immediates};")
    lines = [
        f"// {bench.label} (tcadvisor/validate/wgmma.py)",
        f"#define WG_NACC {nacc}",
        "__device__ __forceinline__ void wgmma_step(float (&d)[WG_NACC], const unsigned (&a)[4],",
        "                                           unsigned long long adesc, unsigned long long bdesc, unsigned e) {",
        "    asm volatile(",
        '        "{\\n.reg .pred p;\\n"',
        f'        "setp.ne.b32 p, {one}, 0;\\n"',
        f'        "{instruction}\\n"',
        '        "}\\n"',
        "        : " + ", ".join(operands),
        "        : " + ", ".join(inputs) + ");",
        "    (void)a; (void)adesc; (void)e;",
        "}",
        "",
    ]
    return "\n".join(lines)


def wgmma_benchmarks(cc: tuple[int, int], quick: bool = False) -> tuple[WgmmaBenchmark, ...]:
    """What calibration times on a GPU of compute capability ``cc``: none below sm_90 (``wgmma``
    is sm_90a only; a later architecture has its own instructions and is not assumed to run it).

    Per precision and unit: N = 8 (the stencil kernels' tile) and N = 256 (the largest, the
    datasheet's case), A from registers; ``quick`` keeps N = 8 only.
    """
    if tuple(cc) != (9, 0):
        return ()
    ns = (8,) if quick else (8, 256)
    out = []
    for sparse in (False, True):
        for precision in ("tf32", "fp16", "bf16"):
            out += [WgmmaBenchmark(precision, n, sparse) for n in ns]
    return tuple(out)
