"""Launch plans of the bundled kernels, on the CPU: the one place their launch shapes are chosen.

A bundled kernel's compile-time shape (columns per thread, threads, tile, MMA
chunks, what lives in registers) and its launch (how the streamed axis is cut
into chunks) are decided here, from the stencil, the depth, the precision and
the instruction, without CuPy or a GPU.  The kernel classes in
:mod:`tcadvisor.gpu` compile and launch exactly what their plan says, and the
refined model (:mod:`tcadvisor.refinement`) derives its terms from the same
plan, so the model and the kernel cannot disagree about tiles, halos, shared
memory or the FLOPs a sweep executes.

What a plan knows before compiling, and what it estimates:

* exact: threads and warps per block, shared memory per block (the kernels'
  own layout formulas, which the CUDA code also exports and the kernel classes
  check), tile and halo widths, outputs per tile, MMA instructions per output,
  executed FLOPs of a sweep for a given grid and number of resident blocks;
* estimated: registers per thread (:meth:`LaunchPlan.registers`), counted from
  the arrays each kernel keeps in registers (:func:`register_estimate`; the
  compiler's count where kernels/compiled-resources.csv lists a dense Tensor
  Core configuration), and
  from them the resident blocks per SM (:func:`occupancy`).  On a GPU the
  occupancy API answers instead (:func:`tcadvisor.gpu.backend.blocks_per_sm`).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import TcAdvisorError
from ..hardware_spec import Multiprocessors
from ..mma import MmaShape
from ..stencil import Stencil
from . import defaults

#: Grids whose two fields exceed the 50 MB L2 of an H100 several times over in every precision: what
#: ``tcadvisor run`` and the validation suites time by default, and what the refined model assumes.
DEFAULT_GRIDS = {1: (2**27,), 2: (10240, 10240), 3: (512, 512, 512)}
#: Pending partial sums a CUDA-core thread may keep per launch before columns per thread are reduced
#: (3D kernel).  2D counts 32-bit words instead (``pending_words_2d`` of kernels/defaults.yaml).
PEND_LIMIT = 64
#: Rows each 1D/2D CUDA-core block advances per iteration (input rows in flight per block).
DEFAULT_ROWS_PER_ITER = 2

# The measured defaults (one row per iteration from a depth on, the cp.async copies, wide strips, direct stores,
# kept columns, the 3D radius-1 tiles, the Tensor Core kernels' memory knobs, the 1D tile), each with the results
# folder it was measured in, are data: kernels/defaults.yaml, read once by tcadvisor.gpu.defaults.measured().
# The planner's rules in this module apply where that file has no entry for a configuration.

#: Dense Tensor Core kernel: weight fragments stay in registers up to this many per lane (else read from L1).
B_REG_LIMIT = 40
#: Kernel rows (dense) or lines (sparse) the Tensor Core kernels' compile-time masks hold: K_ROWMASK /
#: K_LINEMASK bits 0-63 and, only where a kernel iterates more than 64 rows, K_ROWMASK_HI / K_LINEMASK_HI
#: bits 64-127 (two -D values: nvcc takes ``0x...ULL`` as one token, and a configuration of at most 64 rows
#: compiles exactly as before).  3D kernels iterate (2·r·t + 1)² rows: r·t ≤ 5.
MASK_BITS = 128
#: Dense Tensor Core kernel: weight fragments that do not fit the registers go to shared memory by the rule only
#: while one block's copy fits 99 KiB, what every GPU of compute capability 8.x-9.0 lets a block have (sm_86/89:
#: 99 KiB, sm_80: 163, sm_90: 227); beyond (3D FP64 at r·t = 5: 151-242 KiB) they are read from L1.  Every
#: configuration of r·t ≤ 4 stays below (3D FP64 r·t = 4: 81 KiB).
B_SMEM_LIMIT = 99 * 1024
#: Dense Tensor Core kernel: one slice of A fragments is loaded ahead when they take at most this many registers.
A_PREFETCH_LIMIT = 24
#: Dense Tensor Core kernel: the alignment of its own fields (bit 0 vector loads, bit 1 pair stores): its ghost width
#: Gx = R rounded up to even puts both on their boundaries (tcadvisor.gpu.tensor_cores.TensorCoreKernel.geometry).
TC_OWN_ALIGNMENT = 3
#: Dense Tensor Core kernel: the fused radii it is compiled for its fields' alignment at (K_ALIGN), by dimensions and
#: precision (BF16 takes FP16's), unless a plan says otherwise.  From validation/results/h100-sxm-2026-11-27/tc-align/
#: (77 configurations at their defaults, each beside the run-time flag in one run, all correct): where the geometric
#: mean over the scanned stencils of that radius gained over 1.5 % and none lost over 2 %.  16-bit: 1D r·t = 16-48
#: 1.29-1.58x (0.90x at 1 and 4), 2D r·t = 4-8 1.03-1.17x (1.01x below), 3D r·t = 4-5 1.22-1.64x (0.90-0.97x at 2-3);
#: FP64 3D r·t = 3 1.02-1.07x (0.97x on boxes at 4); TF32 within 3 % everywhere (its loads are single words on either
#: path, only its pair stores differ).  3D 16-bit r·t = 1 (the scan: Box-3D1R 1.08x, Star-3D1R 1.00x) was taken
#: back after the corpora recorded with it: boxes 1.07-1.11x, but the stars and the diagonal stencil 0.94-0.99x.
TC_FIXED_ALIGNMENT = {(1, "fp16"): range(16, 65), (2, "fp16"): range(4, 9), (3, "fp16"): (4, 5), (3, "fp64"): (3,)}
#: Sparse Tensor Core kernel: above this many registers of weight fragments per lane, they are read from L1.
A_REG_LIMIT = 160
#: Sparse Tensor Core kernel in 1D beyond r·t = 8 (the line's window in blocks of 32 columns), the planner's rules.
#: From validation/results/h100-sxm-2026-11-27/sptc-1d-deep (Box-1D1R x12-x64, Box-1D2R x8/x16, Box-1D3R x8/x16,
#: 2^27 points, the line as rows): FP16 weight fragments in registers (1.06-1.30x the L1 rule at every scanned depth;
#: 1.00x at r·t = 8, so only beyond).  From sptc-1d-ilp and sptc-1d-ilp2 of the same folder, where the kernel is bound
#: by the instructions it issues: every precision built for its fields' alignment with each lane loading its whole
#: window (FP16/BF16 1.07-1.28x the rule of before at r·t = 9-64, 0.98x at r·t = 8, so only beyond; two accumulator
#: chains add nothing there), and TF32 with one slice ahead in registers and two accumulator chains in place of the
#: 3 stages from r·t = 32 and the 2 slices ahead below (1.09-1.33x at r·t = 12-64).
SPTC_1D_DEEP_FROM = 9
SPTC_1D_TF32_PREFETCH = 1


def sptc_window_radius(dims: int, R: int, even_window: bool | None = None) -> int:
    """The radius the sparse kernel is built for at fused radius R: R, or R + 1 for an odd R beyond r·t = 8 in 1D
    with ``even_window`` (None: on).  The line padded with a zero tap on each side computes the same stencil; its
    ghost width, hence the windows' 16-byte alignment, is R + 1, even, so the outputs are stored as pairs, where an
    odd R stores them one 16-bit (or 32-bit) value at a time.  Beyond r·t = 8 the window of 16 + 2R columns never
    gains a block by it (16 + 2R is never a multiple of 32 for odd R), so α and the MMAs are the same."""
    if even_window is None:
        even_window = True
    return R + 1 if even_window and dims == 1 and R >= SPTC_1D_DEEP_FROM and R % 2 else R


#: Bytes of one lane's sparse weight fragment: 4 registers of compressed values and 1 of metadata.
SPTC_FRAGMENT_BYTES = 20
#: Registers the sparse kernel's shared-memory weight fragments take beyond its live arrays: ptxas issues the
#: volatile fragment loads a few MMAs ahead.  The median of compiled minus estimated registers over the 229
#: runs with shared-memory weights below 250 registers in validation/results/h100-sxm-2026-11-26/sptc3d
#: (10th-90th percentile 6-61; nvcc/NVRTC 13, sm_90).
SPTC_SHARED_AHEAD = 22
#: Lanes of a warp that load an input vector in the sparse kernel: all but the odd lanes of segments 0-6
#: (those take the upper half of their window from the next segment's lane by shuffle).
SPTC_LOADING_LANES = 32 - 16 * 7 // 8
#: Bytes per element of each precision's fields (FP16/BF16 fields are 16-bit; TF32 runs on float fields).
ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
#: 32-bit registers per value held: 2 for FP64, 1 otherwise.
_WORDS = {"fp64": 2, "fp32": 1, "tf32": 1, "fp16": 1, "bf16": 1}
#: The CUDA-core kernels' precisions and what selects each at compile time (kernels/cc_values.cuh): FP16 and
#: BF16 compute two tiles at once, one 16-bit value of each in every 32-bit word (packed FMA).
CC_VALUES = {"fp64": ("K_REAL", "double"), "fp32": ("K_REAL", "float"), "fp16": ("K_PAIR", 1), "bf16": ("K_PAIR", 2)}
#: Tiles a CUDA-core block computes at once (the lanes of a word), per precision.
CC_LANES = {"fp64": 1, "fp32": 1, "fp16": 2, "bf16": 2}


def cc_weight_words(stencil: Stencil, precision: str) -> int:
    """Registers a CUDA-core thread spends on the stencil's weights: none in FP64/FP32, whose FFMA/DFMA read each
    weight from a uniform register (one per warp), K in FP16/BF16, whose packed HFMA2 takes both multiplicands from
    ordinary registers (nvcc 13 for sm_90, Box-1D3R and Box-2D1R SASS: validation/results/h100-sxm-2026-11-26/sass)."""
    return stencil.K if CC_LANES[precision] > 1 else 0


def cc_word_bytes(precision: str) -> int:
    """Bytes of one value as the CUDA-core kernels hold it in registers and shared memory: FP16/BF16 pairs
    are 32-bit words, like FP32."""
    return ELEMENT_BYTES[precision] * CC_LANES[precision]


def cc3d_few_points_tile(stencil: Stencil, precision: str, t: int):
    """The radius-1 3D tile of ``cc3d_radius1_few_points`` (kernels/defaults.yaml) for a stencil of few points
    (at most the entry's ``points``), or None.

    Why a second table: ``cc3d_radius1`` was measured on the 27-point box, whose FMAs keep a large block busy; a
    stencil of 7 to 19 points on that tile waits on its loads (Star-3D1R FP32 x2 on the H200: 28.8 % occupancy,
    DRAM at 31.5 % of peak), and smaller tiles with planes in flight ran it 1.04-1.62x faster.  The split is by
    points, the FMAs a point costs, because that is what the held-out shapes followed: 9 points gained where 7 did,
    19 points at fewer depths.  BF16 takes FP16's entries; the FP16/BF16 pairs do not borrow FP32's."""
    if stencil.dims != 3 or stencil.radius != 1:
        return None
    entry = defaults.measured().cc3d_few_points.get(("fp16" if CC_LANES[precision] > 1 else precision, t))
    if entry is None or stencil.K > entry[0]:
        return None
    return entry[1]


def cc3d_measured_tile(stencil: Stencil, precision: str, t: int):
    """The measured radius-1 3D tile for a precision and depth, or None: :func:`cc3d_few_points_tile` for a
    stencil of few points where it has an entry, else ``cc3d_radius1`` (kernels/defaults.yaml, the box's).  There
    FP16/BF16 pairs take their own entry where there is one, else FP32's -- unless the compiler's report
    (:func:`compiled_resources`) shows that borrowed tile spilling in FP16/BF16 (Box-3D1R at t = 5: 80 bytes at 72
    registers), where the generic rule decides instead."""
    if stencil.radius != 1:
        return None
    few = cc3d_few_points_tile(stencil, precision, t)
    if few is not None:
        return few
    table = defaults.measured().cc3d
    if CC_LANES[precision] > 1 and ("fp16", t) in table:
        return table["fp16", t]
    tile = table.get((cc_tuned_as(precision), t))
    borrowed = cc3d_borrowed_table_plan(stencil, t, precision)
    if borrowed is not None:
        report = compiled_resources().get((borrowed.source, defines_key(borrowed.defines)))
        if report is not None and report[1] > SPILL_TOLERANCE:
            return None
    return tile


def cc3d_borrowed_table_plan(stencil: Stencil, t: int, precision: str):
    """The plan of FP32's measured tile for FP16/BF16 pairs at a depth without their own entry (None otherwise):
    what benchmarks/ptxas_resources.py compiles to learn whether the pairs may borrow it."""
    table = defaults.measured().cc3d
    if stencil.radius != 1 or CC_LANES[precision] == 1 or ("fp16", t) in table or ("fp32", t) not in table:
        return None
    v, cols, rows, w, pf = table["fp32", t]
    return plan_cuda_cores(stencil, t, precision, v=v, cols=cols, rows=rows, trap=True, prefetch=pf,
                           rows_per_thread=w)


def cc_tuned_as(precision: str) -> str:
    """The precision whose measured defaults (kernels/defaults.yaml) a CUDA-core precision takes: FP16 and
    BF16 run the FP32 kernel's loops, registers and shared memory on words of two values, so FP32's."""
    return "fp32" if CC_LANES[precision] > 1 else precision


def cc3d_vector_loads_default(stencil: Stencil, t: int, precision: str) -> bool:
    """Whether the 3D CUDA-core kernel's default plan reads its shared rows as vectors (``cc3d_vector_loads`` of
    kernels/defaults.yaml: by precision -- BF16 takes FP16's --, stencil radius and depth)."""
    key = ("fp16" if CC_LANES[precision] > 1 else precision, stencil.radius)
    return t in defaults.measured().cc3d_vector_loads.get(key, ())


#: The names the measured defaults had as constants of this module -> how :class:`defaults.MeasuredDefaults`
#: holds them (the values are the same, read from kernels/defaults.yaml when first asked for).
_MEASURED_NAMES = {"TC_DEFAULTS": "tc", "SPTC_L2_DEFAULTS": "sptc_l2", "CC3D_DEFAULTS": "cc3d",
                   "DIRECT_STORE_DEPTHS": "direct_store_depths", "KEEP_COLUMNS_DEPTHS": "keep_columns_depths",
                   "WIDE_STRIPS_FP64_BOX_R1": "wide_strips_fp64_box_r1", "ONE_ROW_FROM": "one_row_from",
                   "ASYNC_FROM_FP64_R1": "async_from_fp64_r1", "PEND_WORDS_2D": "pend_words_2d",
                   "TILE1D_THREADS": "tile1d_threads", "TILE1D_V": "tile1d_v", "TILE1D_MAX_V": "tile1d_max_v",
                   "TILE1D_STAGE": "tile1d_stage"}


def __getattr__(name: str):
    if name in _MEASURED_NAMES:
        return getattr(defaults.measured(), _MEASURED_NAMES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


# --------------------------------------------------------------------------- the GPU's multiprocessors


#: The rules of resident blocks that are the same on every NVIDIA GPU since Volta (compute capability
#: 7.0 to 10.0; CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" and the
#: occupancy calculator): registers are allocated per warp in units of 256, at most 255 per thread.
REGISTER_GRANULARITY = 256
MAX_REGISTERS_PER_THREAD = 255


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM and which resource limits them."""

    blocks: int
    warps: int
    by: dict  # resource -> blocks it allows (threads, registers, shared memory, blocks)
    limiter: str  # the resource that binds (the first of equal ones in ``by``'s order)

    def describe(self) -> str:
        return f"{self.blocks} block{'s' if self.blocks != 1 else ''} ({self.warps} warps) per SM, by {self.limiter}"


def occupancy(threads: int, registers: int, smem: int, sm: Multiprocessors) -> Occupancy:
    """Resident blocks of ``threads`` threads, ``registers`` per thread and ``smem`` bytes per SM.

    The rules of the CUDA occupancy calculator: warps are rounded up per block,
    registers are allocated per warp in units of :data:`REGISTER_GRANULARITY`,
    every resident block also takes ``shared_memory_reserved`` bytes of shared memory.
    Zero where the block cannot be resident at all (too many registers or bytes).
    """
    warps = -(-threads // 32)
    regs_per_warp = _round_up(min(registers, MAX_REGISTERS_PER_THREAD) * 32, REGISTER_GRANULARITY)
    by = {
        "threads": sm.max_warps // warps,
        "registers": sm.registers // (regs_per_warp * warps),
        "shared memory": (sm.shared_memory // (smem + sm.shared_memory_reserved)
                          if smem and smem <= sm.shared_memory_per_block else (0 if smem else sm.max_blocks)),
        "blocks": sm.max_blocks,
    }
    blocks = min(by.values())
    limiter = next(k for k, v in by.items() if v == blocks)
    return Occupancy(blocks, blocks * warps, by, limiter)


def split_stream(extent: int, across: int, slots: int, fill: int) -> tuple[int, int]:
    """How to cut the streamed axis into chunks, one block per (chunk, position across).

    Every block streams ``per`` slices plus ``fill`` slices of pipeline start-up,
    and blocks run in waves of ``slots`` (resident blocks on the whole GPU), so a
    launch takes about ``waves × (per + fill)`` slice-times.  Rounding the number
    of blocks to the GPU naively can add a nearly empty wave (twice the time), and
    very short chunks pay the start-up again and again; this picks the split with
    the smallest estimate.  Returns ``(chunks, per)``.
    """
    best = None
    for waves in range(1, 9):
        chunks = max(1, min(extent, (waves * slots) // max(across, 1)))
        per = -(-extent // chunks)
        chunks = -(-extent // per)
        cost = -(-(across * chunks) // slots) * (per + fill)
        if best is None or cost < best[0]:
            best = (cost, chunks, per)
    return best[1], best[2]


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a sweep: ``grid`` and ``per`` (slices per block) over the part of the field that starts
    ``offset`` elements into the padded data, ``nx`` points wide and ``ns`` slices long along the streamed axis,
    ``row_pitch`` elements apart (None: the field's own pitch of that axis)."""

    grid: tuple[int, int, int]
    per: int
    offset: int
    nx: int
    ns: int
    row_pitch: int | None = None


@dataclass(frozen=True)
class LaunchPlan:
    """One bundled kernel's configuration: compile-time shape, tiles, resources, work per sweep.

    Axes: ``x`` is the contiguous one; the kernel streams along ``stream`` (y in
    2D, z in 3D; 1D kernels have one row).  ``tile`` is what one block (CUDA
    cores) or one warp (Tensor Cores) holds along each tiled axis, halo included,
    ``outputs`` what it writes.
    """

    kernel: str  # registry name: cuda_cores, tensor_cores, sparse_tensor_cores
    unit: str
    precision: str
    dims: int
    fuse: int
    halo: int  # points of halo on each side of a tile (r·t on CUDA cores, the fused radius R on Tensor Cores)
    threads: int  # per block
    block: tuple[int, int, int]  # threads per block along x, y, z
    smem: int  # bytes of dynamic shared memory per block
    tile: dict  # axis -> points held per tile, halo included
    outputs: dict  # axis -> outputs per tile
    tiles_per_block: int  # warp tiles per block on Tensor Cores, 1 on CUDA cores
    fill: int  # slices of pipeline start-up per chunk (what split_stream weighs)
    slices_per_step: int  # streamed slices each iteration of the kernel's main loop advances
    live_words: int  # 32-bit registers of the arrays the kernel keeps live (register_estimate)
    defines: tuple  # compile-time -D constants, in the kernel's order
    mma: MmaShape | None = None
    mma_per_slice: int = 0  # MMA instructions one warp tile issues per streamed slice
    options: dict = field(default_factory=dict)  # the knobs chosen (columns per thread, prefetch, ...)

    @property
    def source(self) -> str:
        """The CUDA file in kernels/ this plan compiles."""
        if self.kernel == "cuda_cores":
            if self.options.get("layout") == "tile1d":
                return "cuda_cores_1d.cu"
            return "cuda_cores_3d.cu" if self.dims == 3 else "cuda_cores_2d.cu"
        return f"{self.kernel}.cu"

    @property
    def register_cap(self) -> int:
        """Registers per thread the compiler may use: 255, or less where ``__launch_bounds__`` forbids more
        (``min_blocks`` blocks of ``threads`` must fit the 65536 registers of one SM: nvcc for sm_90 gives the sparse
        kernel's 128-thread blocks 168 registers for 3, 128 for 4)."""
        per_sm = _round_up(self.threads, 32) * int(self.options.get("min_blocks") or 1)
        return min(MAX_REGISTERS_PER_THREAD, 65536 // per_sm // 8 * 8)

    @property
    def warps(self) -> int:
        return -(-self.threads // 32)

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.precision]

    @property
    def lanes(self) -> int:
        """Tiles a block computes at once: 2 on CUDA cores in FP16/BF16 (two values per word), else 1."""
        return self.options.get("lanes", 1)

    @property
    def registers(self) -> int:
        """Registers per thread: the compiler's count where the table has it, else estimated (:func:`register_estimate`)."""
        return register_estimate(self)

    def occupancy(self, sm: Multiprocessors, registers: int | None = None) -> Occupancy:
        """Resident blocks per SM, from shared memory, threads and (unless given) the register estimate."""
        return occupancy(self.threads, self.registers if registers is None else registers, self.smem, sm)

    # ------------------------------------------------------------------ the launch for a grid
    def _extents(self, shape3: tuple[int, int, int]) -> tuple[int, int, int]:
        """(x extent, tiles across the streamed axis, streamed extent) for a (nz, ny, nx) grid."""
        nz, ny, nx = shape3
        if self.unit == "cuda_core":
            gx = math.ceil(nx / self.outputs["x"] / self.lanes)  # blocks across x (each computes `lanes` tiles)
            if self.dims <= 2:
                return nx, gx, (ny if self.dims == 2 else 1)
            return nx, gx * math.ceil(ny / self.outputs["y"]), nz
        tiles = math.ceil(nx / self.outputs["x"])
        wx = self.options["wx"]
        ni, ns = (ny, nz) if self.dims == 3 else ((1, ny) if self.dims == 2 else (1, 1))
        return nx, math.ceil(tiles / wx) * math.ceil(ni / self.inner_rows_per_block), ns

    @property
    def operand_bytes_per_mma(self) -> float:
        """Tensor Cores: bytes one warp moves through L1/shared memory per MMA for its operands (the refined
        model's n_ob; the SM's L1/shared memory moves 128 bytes per clock, shuffles included).

        Per streamed slice a warp tile loads its input fragments once and reads every weight fragment not held
        in registers once for each MMA it feeds:

        * dense (kernels/tensor_cores.cu): the A fragments of its ``ni`` input rows (``na`` registers per lane
          and chunk), shared by the kernel rows of each; the B (weight) fragment of every MMA, ``nb`` words per
          lane, from L1 or shared memory unless in registers, one read for the MMAs of its ``ir`` lines (x tiles
          in 2D, inner rows in 3D, whose ni + ir - 1 input rows it loads per slice).  Read as vectors from shared memory (K_BSMEM = 2)
          that is 32·nb words; read word by word from L1 or shared memory, each load's lanes lie nb words apart,
          an nb-way bank conflict (or nb times the L1 lines), 32·nb² words;
        * sparse (kernels/sparse_tensor_cores.cu): the weight fragment of every line and chunk (16 bytes of
          values and 4 of metadata per lane) unless in registers, serving the MMAs of its ``ir`` inner rows; per
          input row and chunk one 16-byte vector load by the 18 lanes that do not take their neighbour's half,
          and the 4 shuffles (one 32-lane word each) that pass the halves on.
        """
        o = self.options
        if self.unit == "cuda_core":
            raise TcAdvisorError("operand bytes per MMA are a Tensor Core plan's")
        lanes = 32
        if self.kernel == "sparse_tensor_cores":
            ir, kc, lines = o.get("ir", 1), o["kc"], o["rows"]
            ka = o["ka"]  # A fragments per line: kc, or 2·kc where a line is two matrices (r·t = 8)
            weights = 0 if o["aregs"] else lines * ka * lanes * SPTC_FRAGMENT_BYTES
            inputs = (o["ni"] + ir - 1) * kc * (SPTC_LOADING_LANES * 16 + 4 * lanes * 4)
            return (weights + inputs) / (ir * lines * ka)
        word = 8 if self.precision == "fp64" else 4
        half = self.precision in ("fp16", "bf16")
        shape = self.mma
        na = shape.m * shape.k // (64 if half else 32)
        nb = shape.k // (8 if half else 4)
        ir = o.get("ir", 1)
        lines_in = o["ni"] + ir - 1 if self.dims == 3 else o["ni"] * ir  # 3D: rows shared; 2D: a window per tile
        inputs = lines_in * o["kch"] * na * word * lanes
        by_word = not o["weights_shared"] or o.get("shared_words", False)
        weights = 0 if o["bregs"] else nb * word * lanes * (nb if by_word else 1)
        return inputs / (o["rows"] * o["kch"] * ir) + weights / ir  # one weight read per line's MMA

    @property
    def instructions_per_mma(self) -> float:
        """Tensor Cores: instructions one warp issues per MMA (the refined model's n_im): the MMA itself and its share
        of the slice's other counted instructions.  Addresses, loop control and predicates are not counted (the
        fitted λ_0, cycles per counted instruction, carries them as it carries the latency of each).

        Per streamed slice a warp issues its MMAs (kernel rows x K chunks x lines), and besides them:

        * dense (kernels/tensor_cores.cu): per input row and chunk the loads of one A fragment (16-bit: two 8-byte
          vectors, or four 4-byte words from a stage; FP64 m16: two loads of k/8 doubles each, or single doubles for k = 4; m8n8k4: one; TF32 in the
          natural order: one load and one conversion, ``cvt.rna.tf32``, per element), shared by the kernel rows
          that multiply it; the weight fragment of every MMA not held in registers (nb words, or as vectors of 16
          bytes from shared memory), one read for the MMAs of its ``ir`` lines; the output row's pair stores (16-bit:
          each after its conversion); with stages, a lane's 16-byte copies of every staged row (a row's chunks over
          the 32 lanes), the commit, the wait and two warp barriers;
        * sparse (kernels/sparse_tensor_cores.cu): per input row and chunk one window vector and the 4 shuffles
          that pass its halves on (two vectors and no shuffle where each lane loads its whole window), TF32 the 4
          conversions; the weight fragment (values and metadata) of every line and chunk not in registers, for the
          MMAs of its ``ir`` rows; two stores per output row; the stage's copy, commit, wait and barriers.
        """
        o = self.options
        if self.unit == "cuda_core":
            raise TcAdvisorError("instructions per MMA are a Tensor Core plan's")
        stage = 5 if o.get("stages") else 0  # cp.async, commit, wait, two __syncwarp
        ir = o.get("ir", 1)
        if self.kernel == "sparse_tensor_cores":
            lines, kc, ka = o["rows"], o["kc"], o["ka"]
            per_vector = (2 if o["whole_windows"] else 1 + 4) + (4 if self.precision == "tf32" else 0)
            inputs = (o["ni"] + ir - 1) * kc * per_vector
            weights = 0 if o["aregs"] else lines * ka * 2
            return 1 + (inputs + weights + 2 * ir + stage) / (ir * lines * ka)
        shape = self.mma
        half = self.precision in ("fp16", "bf16")
        lines_in = o["ni"] + ir - 1 if self.dims == 3 else o["ni"] * ir
        if o.get("stages"):  # commit, wait, two __syncwarp and each staged row's copies (kernels/tensor_cores.cu)
            row_bytes = tc_stage_bytes(self.outputs["x"] - 8 + o["k_pad"], ELEMENT_BYTES[self.precision])
            stage = 4 + (o["ni"] + ir - 1 if self.dims == 3 else 1) * -(-row_bytes // (16 * 32))
        na = shape.m * shape.k // (64 if half else 32)
        nb = shape.k // (8 if half else 4)
        if half:  # two 8-byte vectors from the field; from a stage, four 4-byte loads (kernels/tensor_cores.cu)
            per_fragment = 4 if o.get("stages") else 2
        elif self.precision == "fp64":
            kq = shape.k // 4 if shape.m == 16 else 1
            per_fragment = (2 if shape.m == 16 else 1) * (kq // 2 if kq > 1 else 1)
        else:
            per_fragment = 2 * na
        inputs = lines_in * o["kch"] * per_fragment
        mmas = o["rows"] * o["kch"] * ir
        if o["bregs"]:
            weights = 0
        elif not o["weights_shared"] or o.get("shared_words", False):
            weights = o["rows"] * o["kch"] * nb
        else:
            weights = o["rows"] * o["kch"] * max(1, nb * _WORDS[self.precision] * 4 // 16)
        stores = ir * (shape.m // 8) * (2 if half else 1)
        return 1 + (inputs + weights + stores + stage) / mmas

    @property
    def inner_rows_per_block(self) -> int:
        """Tensor Cores: inner output rows (3D: y) one block computes, ``wi`` warps of ``ir`` rows each."""
        return self.options["wi"] * self.options.get("ir", 1)

    def launch(self, shape3: tuple[int, int, int], slots: int) -> tuple[tuple[int, int, int], int]:
        """(grid, slices per block) for a (nz, ny, nx) grid with ``slots`` resident blocks on the GPU."""
        nz, ny, nx = shape3
        _, across, ns = self._extents(shape3)
        chunks, per = split_stream(ns, across, slots, self.fill)
        if self.unit == "cuda_core":
            gx = math.ceil(math.ceil(nx / self.outputs["x"]) / self.lanes)
            if self.dims <= 2:
                return (gx, chunks, 1), per
            return (gx, math.ceil(ny / self.outputs["y"]), chunks), per
        tiles = math.ceil(nx / self.outputs["x"])
        ni = ny if self.dims == 3 else 1
        return (math.ceil(tiles / self.options["wx"]), math.ceil(ni / self.inner_rows_per_block), chunks), per

    @property
    def row_width(self) -> int:
        """1D Tensor Core plans launched as rows: the points of one block's warp tiles, what a row of the launch
        holds per block side by side (:meth:`launches`); 0: the line as one row."""
        return self.options.get("row_width", 0) if self.dims == 1 and self.unit != "cuda_core" else 0

    def launches(self, shape3: tuple[int, int, int], slots: int) -> tuple[Launch, ...]:
        """Every launch of one sweep over a (nz, ny, nx) grid, ``slots`` resident blocks on the GPU.

        One launch, except a 1D line launched as rows: with ``b`` blocks side by side (as many as are resident at
        once, ``slots``, and as the line fills) a row is ``b`` × :attr:`row_width` points, and the first
        ⌊nx/row⌋ rows of the line are launched as a 2D grid of that width whose rows follow one another in memory
        (the streamed pitch is the row, so a row's halo is its neighbours in the line).  The Tensor Core kernels
        stream it as they stream the rows of a 2D grid: each warp walks ⌊nx/row⌋ tiles with the next one's loads
        in flight, and at every step the resident blocks read one stretch of the line, in order, as a launch of
        the line as one row does.  The remaining points go in a second launch of one row.  A 1D line as one row
        gives each warp one tile, and it exits (Nsight Compute, 2026-11-27: 22 % of the warps resident, 24 % of
        DRAM bandwidth at r·t = 32, validation/results/h100-sxm-2026-11-27/tc1d-ncu).  Rows that each block
        streamed from its own stretch of the line (blocks far apart in memory) measured 1-5 % slower than these
        in FP64 and TF32 on the H100 (validation/results/h100-sxm-2026-11-27/tc-1d-rows-chunked).  Which
        configurations are launched as rows: :func:`block_row_points`.
        """
        nz, ny, nx = shape3
        block = self.row_width
        if not block:
            grid, per = self.launch(shape3, slots)
            return (Launch(grid, per, 0, nx, self._extents(shape3)[2]),)
        across = max(1, min(slots, nx // block))
        width = across * block
        rows, tail = divmod(nx, width)
        out = []
        if rows:
            out.append(Launch((across, 1, 1), rows, 0, width, rows, width))
        if tail:
            grid, per = self.launch((1, 1, tail), slots)
            out.append(Launch(grid, per, rows * width, tail, 1))
        return tuple(out)

    def executed_slices(self, ns: int, chunks: int, per: int) -> int:
        """Slices every tile column executes over the streamed axis, pipeline start-up included."""
        t = self.fuse
        if self.options.get("layout") == "tile1d":  # one tile per block, nothing streamed
            return ns
        if self.unit == "cuda_core" and self.dims <= 2:
            nr, ry = self.options["nr"], self.options["ry"]
            iters = sum(math.ceil((min(per, ns - b * per) + 2 * ry * t) / nr) + t - 1 for b in range(chunks))
            return iters * nr
        if self.unit == "cuda_core":
            lead = t * (1 + 2 * self.options["r"]) - 1
            return sum(min(per, ns - b * per) + lead for b in range(chunks))
        rs = (self.options["ns"] - 1) // 2
        return sum(min(per, ns - b * per) + 2 * rs for b in range(chunks))

    def executed_flops(self, shape3: tuple[int, int, int], slots: int) -> float:
        """FLOPs one sweep executes on a (nz, ny, nx) grid: halos, padding and pipeline fill included.

        On CUDA cores every point a tile holds is updated t times (2K FLOPs each);
        on Tensor Cores every MMA issued counts 2·m·n·k (dense-equivalent for
        mma.sp, as α counts it).  ``slots``: resident blocks on the whole GPU.
        """
        nz, ny, nx = shape3
        if self.unit == "cuda_core":
            grid, per = self.launch(shape3, slots)
            _, _, ns = self._extents(shape3)
            chunks = grid[2] if self.dims == 3 else grid[1]
            slices = self.executed_slices(ns, chunks, per)
            area = self.tile["x"] * (self.tile["y"] * computed_rows(self, per_warp=False) if self.dims == 3 else 1)
            columns = grid[0] * self.lanes * (grid[1] if self.dims == 3 else 1)
            return float(self.options["flops_per_update"] * self.fuse * area * slices * columns)
        ir = self.options.get("ir", 1)  # a warp of ir lines computes all of them, past the grid's last one too
        ni = math.ceil(ny / ir) * ir if self.dims == 3 else ir  # 2D: ir x tiles per warp tile (1D: ir = 1)
        mmas = sum(self.executed_slices(ln.ns, ln.grid[2], ln.per) * math.ceil(ln.nx / self.outputs["x"])
                   for ln in self.launches(shape3, slots)) * ni * self.mma_per_slice
        return mmas * 2.0 * self.mma.macs

    def sweep_counts(self, shape3: tuple[int, int, int], slots: int) -> dict:
        """What one sweep over a (nz, ny, nx) grid amounts to, for the refined model's terms.

        ``slices_executed`` and ``slices_read``: slices each tile column computes and
        loads per output slice of the streamed axis (pipeline start-up of every chunk
        included); ``tile_x``/``tile_y``: points held over points owned along the tiled
        axes, partial tiles at the grid's edge included (``tile_y`` times the share of rows
        a warp computes, :func:`computed_rows`, where the 3D kernel skips rows); ``per``:
        slices per chunk.
        """
        nz, ny, nx = shape3
        if self.row_width:  # a 1D line as rows: every launch's tiles over the line's points, nothing streamed twice
            launches = self.launches(shape3, slots)
            tiles = sum(ln.ns * math.ceil(ln.nx / self.outputs["x"]) for ln in launches)
            return {"slices_executed": 1.0, "slices_read": 1.0, "tile_x": tiles * self.outputs["x"] / nx,
                    "tile_y": 1.0, "per": launches[0].per, "chunks": launches[0].grid[2]}
        grid, per = self.launch(shape3, slots)
        _, _, ns = self._extents(shape3)
        chunks = grid[2] if (self.dims == 3 or self.unit != "cuda_core") else grid[1]
        executed = self.executed_slices(ns, chunks, per) / ns
        t = self.fuse
        if self.unit == "cuda_core":
            reach = 2 * (self.options["ry"] if self.dims <= 2 else self.options["r"]) * t
            held_x = _round_up(math.ceil(nx / self.outputs["x"]), self.lanes) * self.tile["x"] / nx
            held_y = math.ceil(ny / self.outputs["y"]) * self.tile["y"] / ny if self.dims == 3 else 1.0
            held_y *= float(computed_rows(self, per_warp=True))  # rows a step skips cost nothing
        else:
            reach = self.options["ns"] - 1
            held_x = math.ceil(nx / self.outputs["x"]) * self.outputs["x"] / nx  # MMAs cover whole warp tiles
            held_y = 1.0
        read = (ns + chunks * reach) / ns  # every chunk loads its halo slices again
        return {"slices_executed": executed, "slices_read": read, "tile_x": held_x, "tile_y": held_y,
                "per": per, "chunks": chunks}


# --------------------------------------------------------------------------- CUDA cores


def plan_cuda_cores(stencil: Stencil, fuse: int, precision: str, v: int | None = None, cols: int | None = None,
                    rows_per_iter: int | None = None, rows: int | None = None, trap: bool | None = None,
                    prefetch: int | None = None, rows_per_thread: int | None = None,
                    async_copy: bool | None = None, direct_store: bool | None = None,
                    keep_columns: bool | None = None, layout: str | None = None,
                    stage: bool | None = None, vector_loads: bool | None = None) -> LaunchPlan:
    """The CUDA-core kernels' shape (kernels/cuda_cores_1d.cu for 1D, cuda_cores_2d.cu for 2D,
    kernels/cuda_cores_3d.cu for 3D).

    1D: :func:`plan_cc_tile1d` (``layout="stream"`` gives the 2D streaming kernel's plan for one
    row instead, which is what 1D ran before 2026-11-26 and what its recorded runs are evaluated with).

    2D: strips of ``cols`` columns (``v`` per thread) streamed down the rows, ``nr``
    rows per iteration; defaults measured on an H100 (narrow strips of 2 columns
    per thread keep enough blocks resident; wide ones pay off at deep fusion);
    ``async_copy`` copies the next input rows into shared memory with cp.async
    instead of through registers (1D/2D only; default: ``async_from_fp64_r1``, ``rows_ahead_2d_r1`` and, at radius 2
    and more, ``rows_ahead_2d`` of kernels/defaults.yaml, for FP16/BF16 pairs ``pairs_copies_2d``, which lands each strip's 16-bit row as it is and
    needs an even ``v``);
    ``direct_store`` writes the last step's rows to global memory from registers
    instead of staging them in shared memory (1D/2D only); ``keep_columns`` keeps each step's own
    outputs in registers for the next step, which then reads only its halo columns from shared memory
    (1D/2D only).
    3D: tiles of ``cols`` = bx·v × ``rows`` = by points of the xy-plane streamed
    along z; ``trap`` computes each step only on the rows that can reach a valid
    output, ``prefetch`` input planes are in flight per thread, each thread owns
    ``rows_per_thread`` adjacent rows (by = rows / rows_per_thread threads along y;
    fewer shared-memory loads per FMA) (3D only); ``vector_loads`` lays shared rows out in order and
    reads each thread's window with 8- or 16-byte loads (3D only, K_VLD).  A 3D plan asked for with no
    tile knob takes ``cc3d_radius1_few_points`` (few points) or ``cc3d_radius1`` of kernels/defaults.yaml where
    they have an entry (``vector_loads``, a
    layout, is not a tile knob: given alone it keeps the measured tile; not given, it is on where
    ``cc3d_vector_loads`` lists the precision, radius and depth and the tile is not a few-points one); a tile knob given
    leaves the others at their plain defaults (no trimming, one plane in flight,
    one row per thread, residue layout), so that a scan varies one thing at a time.
    """
    if precision not in CC_VALUES:
        raise TcAdvisorError(f"the CUDA-core kernel runs {', '.join(p.upper() for p in CC_VALUES)}, "
                             f"not {precision.upper()}")
    if layout not in (None, "stream", "tile"):
        raise TcAdvisorError(f"layout = {layout!r}: the CUDA-core kernels lay out 'stream' (1D/2D/3D) or 'tile' (1D)")
    if stencil.dims == 1 and layout != "stream":
        given = [name for name, value, plain in (("rows_per_iter", rows_per_iter, None), ("rows", rows, None),
                                                  ("trap", trap, False), ("prefetch", prefetch, 1),
                                                  ("rows_per_thread", rows_per_thread, 1),
                                                  ("async_copy", async_copy, False),
                                                  ("direct_store", direct_store, False),
                                                  ("keep_columns", keep_columns, False),
                                                  ("vector_loads", vector_loads, False))
                 if value is not None and value != plain]
        if given:
            raise TcAdvisorError(f"{', '.join(given)}: the 1D CUDA-core kernel takes v, cols and stage only (its "
                                 "tiles stream nothing)")
        try:
            return plan_cc_tile1d(stencil, fuse, precision, v=v, cols=cols, stage=stage)
        except TcAdvisorError:
            if layout == "tile" or any(k is not None for k in (v, cols, stage)):
                raise
            # A stencil too wide for the tile's shared-memory edges (r of 16 and more) streams its one row
            # through the 2D kernel instead, as 1D ran before the tile kernel.
    elif stencil.dims == 1 and stage is not None:
        raise TcAdvisorError("stage is an option of the 1D CUDA-core tile kernel, not of layout='stream'")
    if stage is not None and stencil.dims > 1:
        raise TcAdvisorError("stage is an option of the 1D CUDA-core kernel")
    if layout not in (None, "stream") and stencil.dims > 1:
        raise TcAdvisorError(f"layout = {layout!r}: the 2D and 3D CUDA-core kernels stream ('stream'); 'tile' is 1D's")
    r, t = stencil.radius, int(fuse)
    halo = r * t
    star = int(stencil.shape == "star" and stencil.dims > 1)
    value = CC_VALUES[precision]
    size = cc_word_bytes(precision)  # shared memory holds words of the kernel's values
    words = _WORDS[precision]
    tuned, lanes = cc_tuned_as(precision), CC_LANES[precision]
    if stencil.dims <= 2 and (rows is not None or trap or rows_per_thread not in (None, 1) or vector_loads):
        raise TcAdvisorError("rows, trap, rows_per_thread and vector_loads are options of the 3D CUDA-core kernel")
    measured = defaults.measured()
    no_tile_knob = all(k is None for k in (v, cols, rows, trap, prefetch, rows_per_thread))
    measured_tile = cc3d_measured_tile(stencil, precision, t) if stencil.dims == 3 and no_tile_knob else None
    if measured_tile is not None:
        v, cols, rows, rows_per_thread, prefetch = measured_tile
        trap = True
        from_table = True
    else:
        from_table = False
    trap = bool(trap)
    prefetch_given = prefetch
    prefetch = 1 if prefetch is None else prefetch
    rows_per_thread = 1 if rows_per_thread is None else rows_per_thread
    if stencil.dims == 3 and (rows_per_iter is not None or async_copy or direct_store or keep_columns):
        raise TcAdvisorError("rows_per_iter, async_copy, direct_store and keep_columns are options of the 1D/2D "
                             "CUDA-core kernel")
    most = 4 if stencil.dims == 3 else 8
    if int(prefetch) != prefetch or not 1 <= prefetch <= most:
        raise TcAdvisorError(f"prefetch = {prefetch}: the {'3D' if stencil.dims == 3 else '2D'} CUDA-core kernel keeps "
                             f"1 to {most} {'input planes' if stencil.dims == 3 else 'iterations of input rows'} in flight")
    if int(rows_per_thread) != rows_per_thread or not 1 <= rows_per_thread <= 4:
        raise TcAdvisorError(f"rows_per_thread = {rows_per_thread}: the 3D CUDA-core kernel gives a thread 1 to 4 rows")
    if stencil.dims <= 2:
        ry = r if stencil.dims == 2 else 0
        dv, dcols = (2, 256) if tuned == "fp64" else ((2, 512) if t < measured.one_row_from["fp32"]
                                                        else (4, 1024))
        if (tuned == "fp64" and stencil.shape == "box" and stencil.dims == 2 and r == 1
                and t in measured.wide_strips_fp64_box_r1):
            dcols = 512
        if lanes > 1:  # FP16/BF16 pairs: narrower strips (two per block), pairs_strips_2d of kernels/defaults.yaml
            dv, dcols = [(pv, pc) for d, pv, pc in measured.pairs_strips_2d if d <= t][-1]
        # rows_ahead_2d_r1: from its depth on, radius 1 copies the input rows of several iterations ahead (which
        # needs the copies of async_copy); FP16/BF16 (two strips per word) take pairs_copies_2d instead
        ahead_from, ahead = measured.rows_ahead_2d_r1.get(tuned, (10**9, 1)) if lanes == 1 else (10**9, 1)
        rows_ahead = ry == 1 and t >= ahead_from and async_copy is not False and rows_per_iter in (None, 1)
        # rows_ahead_2d: radius 2 and more, at the depths listed (FP32, FP64)
        if ry >= 2 and lanes == 1 and t in measured.rows_ahead_2d.get((tuned, ry), {}):
            rows_ahead = async_copy is not False and rows_per_iter in (None, 1)
            ahead = measured.rows_ahead_2d[tuned, ry][t]
        # pairs_copies_2d: FP16/BF16 pairs copy their input rows (planar) at the radii and depths listed, with the
        # strips and the iterations ahead measured best with the copies
        copies = None
        if lanes > 1 and stencil.dims == 2 and r in measured.pairs_copies_2d and async_copy is not False:
            copies = [c for d, c in measured.pairs_copies_2d[r] if d <= t][-1]
        def columns_fitting(v0: int) -> int:  # v0 halved until the pending sums of t steps fit pend_words_2d
            while v0 > 1 and t * 2 * ry * v0 * words > measured.pend_words_2d:
                v0 //= 2
            return v0

        if copies is not None and v is None and columns_fitting(copies[0]) % 2:
            # the copies move two columns at a time: where the pending sums leave one column per thread, the pairs
            # keep the register path, as at every depth before the copies
            copies = None
        if copies is not None:
            dv, dcols = copies[0], copies[1]
            async_copy = True
            if prefetch_given is None:
                prefetch = copies[2]
        if async_copy is None:
            async_copy = (tuned == "fp64" and ry == 1 and t >= measured.async_from_fp64_r1) or rows_ahead
        if prefetch_given is None and rows_ahead:
            prefetch = ahead
        if direct_store is None:
            direct_store = stencil.dims == 2 and t in measured.direct_store_depths.get((tuned, stencil.shape, r), ())
        direct_store = bool(direct_store)
        if keep_columns is None:
            keep_columns = stencil.dims == 2 and t in measured.keep_columns_depths.get((tuned, stencil.shape, r), ())
        keep_columns = bool(keep_columns)
        if v is None:
            v = columns_fitting(dv)
        if cols is None:
            cols = dcols * v // dv
            while cols - 2 * halo < cols // 2 and cols < 1024 * v:
                cols *= 2
        nt = min(cols // v, 1024)
        if rows_per_iter is None:
            rows_per_iter = 1 if t >= measured.one_row_from.get(tuned, 10**9) else DEFAULT_ROWS_PER_ITER
        nr = rows_per_iter
        cols = nt * v
        vec2 = int(lanes > 1 and v % 2 == 0)  # FP16/BF16: 32-bit accesses of two columns per lane (K_VEC2)
        txo = cols - 2 * halo - 2 * vec2  # K_VEC2 keeps two columns to start the strip at an even column
        if txo <= 0:
            raise TcAdvisorError(f"{stencil.name} fused x{t}: the halo r·t = {halo} is too wide for the "
                                 f"CUDA-core kernel's {cols}-column strips")
        if prefetch > 1 and not async_copy:
            raise TcAdvisorError(f"prefetch = {prefetch}: the 2D CUDA-core kernel keeps more than one iteration of "
                                 "input rows in flight only when it copies them asynchronously (async_copy)")
        rowbuf = _cc_rowbuf(cols, r, v, size)
        # input rows: a ring of prefetch + 1 buffers; t - 1 steps (+ finished rows): double-buffered
        smem = (prefetch + 1 + (t - direct_store) * 2) * nr * rowbuf * size
        npend = max(2 * ry, 1)
        live = (t * npend * v + (0 if async_copy else nr * v) + (v + 2 * r) + v + cc_weight_words(stencil, precision)
                + (t - 1) * nr * v * keep_columns) * words
        if async_copy and lanes > 1 and not vec2:
            raise TcAdvisorError(f"async_copy with {precision.upper()} copies two columns of each strip at a time: "
                                 f"v = {v} columns per thread, an even number would be accepted")
        if async_copy and lanes > 1 and cols + 2 * r + 2 * (r % 2) > rowbuf:
            # the copies land each strip's 16-bit row as it is, side by side in one row buffer (kernels/cuda_cores_2d.cu)
            raise TcAdvisorError(f"async_copy with {precision.upper()}: {cols} columns of radius {r} do not fit their "
                                 f"row buffer of {rowbuf} words as two 16-bit rows; another v or cols would be accepted")
        defines = (value, ("K_RX", r), ("K_RY", ry), ("K_T", t), ("K_STAR", star), ("K_V", v),
                   ("K_NT", nt), ("K_NR", nr)) + (("K_ASYNC", 1),) * bool(async_copy) + (("K_DIRECT", 1),) * direct_store
        defines += (("K_PF", int(prefetch)),) * (prefetch != 1)
        defines += (("K_KEEP", 1),) * keep_columns
        defines += (("K_VEC2", 1),) * vec2
        defines += _cc_taps(stencil)
        return LaunchPlan("cuda_cores", "cuda_core", precision, stencil.dims, t, halo, nt, (nt, 1, 1), smem,
                          {"x": cols}, {"x": txo}, 1, t * (1 + 2 * ry) + nr, nr, live, defines,
                          options={"v": v, "nt": nt, "nr": nr, "ry": ry, "r": r, "rowbuf": rowbuf,
                                   "async": bool(async_copy), "prefetch": int(prefetch), "direct": direct_store,
                                   "keep": keep_columns,
                                   "flops_per_update": 2 * stencil.K, **({"lanes": lanes} if lanes > 1 else {})})
    if v is None:
        v = 4
        while v > 1 and t * 2 * r * v > PEND_LIMIT:
            v //= 2
    generic = all(k is None for k in (cols, rows)) and not from_table
    cols = 64 if cols is None else cols
    w = int(rows_per_thread)
    by = (16 if halo <= 4 else 32) if rows is None else rows
    if generic:
        v, by = _cc3d_fitting_tile(stencil, t, precision, v, cols, by)
    if vector_loads is None:  # cc3d_vector_loads of kernels/defaults.yaml, where no tile knob is given
        vector_loads = (no_tile_knob and cc3d_vector_loads_default(stencil, t, precision)
                        and cc3d_few_points_tile(stencil, precision, t) is None)  # those were timed without
        if vector_loads:  # measured on the tile the residue layout fits: kept unless its own build spills
            report = compiled_resources().get(("cuda_cores_3d.cu", defines_key(
                plan_cuda_cores(stencil, t, precision, v=v, cols=cols, rows=by, trap=trap, prefetch=prefetch,
                                rows_per_thread=w, vector_loads=True).defines)))
            vector_loads = report is None or report[1] <= SPILL_TOLERANCE
    vector_loads = bool(vector_loads)
    if v < 1 or cols % v or by < 1 or by % w:
        raise TcAdvisorError(f"the 3D CUDA-core kernel's tile needs whole columns and rows per thread: cols = {cols}, "
                             f"v = {v}, rows = {by}, rows_per_thread = {w}")
    bx, byt = cols // v, by // w
    vec2 = int(lanes > 1 and v % 2 == 0)  # FP16/BF16: 32-bit accesses of two columns per lane (K_VEC2)
    txo, tyo = cols - 2 * halo - 2 * vec2, by - 2 * halo
    if txo <= 0 or tyo <= 0 or bx * byt > 1024:
        raise TcAdvisorError(f"{stencil.name} fused x{t}: the halo r·t = {halo} is too wide for the "
                             f"3D CUDA-core kernel's {cols} x {by} tiles of at most 1024 threads "
                             "(use a smaller fusion depth)")
    vector_loads = bool(vector_loads)
    planebuf = (by + 2 * r) * (_cc_rowbuf_in_order(cols, r, v, size) if vector_loads else _cc_rowbuf(cols, r, v, size))
    smem = t * 2 * planebuf * size
    live = _cc3d_live_words(r, t, v, w, prefetch, words) + cc_weight_words(stencil, precision)
    defines = (value, ("K_R", r), ("K_T", t), ("K_STAR", star), ("K_V", v), ("K_BX", bx), ("K_BY", byt))
    defines += ((("K_TRAP", 1),) * bool(trap) + (("K_PF", int(prefetch)),) * (prefetch != 1)
                + (("K_W", w),) * (w != 1) + (("K_VLD", 1),) * vector_loads)
    defines += (("K_VEC2", 1),) * vec2
    defines += _cc_taps(stencil)
    return LaunchPlan("cuda_cores", "cuda_core", precision, 3, t, halo, bx * byt, (bx, byt, 1), smem,
                      {"x": cols, "y": by}, {"x": txo, "y": tyo}, 1, t * (1 + 2 * r), 1, live, defines,
                      options={"v": v, "bx": bx, "by": by, "w": w, "r": r, "planebuf": planebuf, "trap": bool(trap),
                               "prefetch": int(prefetch), "vector_loads": vector_loads,
                               "values_per_load": _cc_values_per_load(v, r, size) if vector_loads else 1,
                               "flops_per_update": 2 * stencil.K,
                               **({"lanes": lanes} if lanes > 1 else {})})


#: Static shared memory a CUDA block may declare (48 KiB; more needs dynamic shared memory).
STATIC_SMEM_LIMIT = 48 * 1024


def _taps_mask(stencil: Stencil) -> int | None:
    """Bit b set where a 1D stencil has a weight at offset b - r; None for the full 2r + 1 (box) line."""
    r = stencil.radius
    bits = 0
    for (dx,) in (tuple(o[-1:]) for o in stencil.offsets):
        bits |= 1 << (dx + r)
    return None if bits == (1 << (2 * r + 1)) - 1 else bits


def plan_cc_tile1d(stencil: Stencil, fuse: int, precision: str, v: int | None = None,
                   cols: int | None = None, stage: bool | None = None) -> LaunchPlan:
    """The 1D CUDA-core kernel (kernels/cuda_cores_1d.cu): tiles of ``cols`` = NT·V points, V per thread in
    registers, t steps on the tile with one barrier per step, the middle points written out.

    Outputs per tile: the tile less a halo of r·t each side and the room to start it at a whole 16-byte vector,
    rounded down to whole vectors.
    Every point of a tile is updated t times (the shrinking valid part is not trimmed), so a sweep
    executes ``tile / outputs`` times the useful FLOPs.  ``stage`` moves the tile through shared memory on its
    way in and out, so that global loads and stores are coalesced (default: ``tile1d_staged`` of kernels/defaults.yaml).
    With neither ``v`` nor ``cols`` given, the depths ``tile1d_deep`` lists for the precision and radius take its
    tile of fewer threads with more points each (the same points per tile, each step's edge exchange and the tile's
    set-up paid once for twice the FMAs), where that tile fits the halo and the static shared memory.
    """
    r, t = stencil.radius, int(fuse)
    halo = r * t
    if precision not in CC_VALUES:
        raise TcAdvisorError(f"the CUDA-core kernel runs {', '.join(p.upper() for p in CC_VALUES)}, "
                             f"not {precision.upper()}")
    size = cc_word_bytes(precision)  # registers and shared memory hold words (FP16/BF16: two tiles' values)
    vec = 16 // size
    lanes = CC_LANES[precision]
    if r > 31:
        raise TcAdvisorError(f"{stencil.name}: radius {r} is too large for the 1D CUDA-core kernel's 64-bit tap "
                             "mask (at most 31)")
    measured = defaults.measured()
    stage = measured.tile1d_stage if stage is None else bool(stage)

    def static_smem(v_: int, nt_: int) -> int:  # edge[2][2][R][NT] and stage[NT][V + VEC]
        return (2 * 2 * r * nt_ + stage * nt_ * (v_ + vec)) * size

    # tile1d_deep: at depth, the generic tile as half the threads of twice the points (per precision and radius; BF16
    # takes FP16's), where that tile needs no more points for its halo and fits the static memory
    if v is None and cols is None:
        steps = measured.tile1d_deep.get(("fp16" if precision == "bf16" else precision, r), ())
        deep = ([c for d, c in steps if d <= t] or [None])[-1]
        if deep is not None and 2 * halo * 4 <= deep[1] * deep[0] and deep[0] >= r \
                and static_smem(*deep) <= STATIC_SMEM_LIMIT:
            v, cols = deep[0], deep[0] * deep[1]
    if v is None:
        v = measured.tile1d_v[cc_tuned_as(precision)]
        nt0 = measured.tile1d_threads if cols is None else max(1, cols // v)
        while ((2 * halo * 4 > nt0 * v or v < r) and v < measured.tile1d_max_v
               and static_smem(2 * v, nt0) <= STATIC_SMEM_LIMIT):
            v *= 2
    if cols is None:
        nt = measured.tile1d_threads
        while static_smem(v, nt) > STATIC_SMEM_LIMIT and nt > 64:  # wide stencils: the edges take R per thread
            nt //= 2
        cols = nt * v
    if v < max(vec, r) or v % vec or cols % v or not 32 <= cols // v <= 1024:
        raise TcAdvisorError(f"the 1D CUDA-core kernel's tile needs whole 16-byte vectors per thread, at least r "
                             f"points per thread and 32 to 1024 threads: v = {v}, cols = {cols} "
                             f"({precision.upper()}: v a multiple of {vec}, at least {r})")
    nt = cols // v
    txo = (cols - 2 * halo - (vec - 1)) // vec * vec  # room for the tile's start to round down to a whole vector
    if txo <= 0:
        raise TcAdvisorError(f"{stencil.name} fused x{t}: the halo r·t = {halo} is too wide for the 1D CUDA-core "
                             f"kernel's {cols}-point tiles (at most r·t = {(cols - 2 * vec + 1) // 2} there; use a "
                             "smaller fusion depth)")
    smem = static_smem(v, nt)
    if smem > STATIC_SMEM_LIMIT:
        raise TcAdvisorError(f"{stencil.name} fused x{t}: the 1D CUDA-core kernel's tile of {nt} threads x {v} points "
                             f"needs {smem} bytes of static shared memory, more than {STATIC_SMEM_LIMIT}")
    words = _WORDS[precision]
    live = (2 * v + 2 * r) * words + cc_weight_words(stencil, precision)  # points, the step's window, weights
    taps = _taps_mask(stencil)
    defines = (CC_VALUES[precision], ("K_R", r), ("K_T", t), ("K_V", v), ("K_NT", nt), ("K_TXO", txo))
    defines += (("K_TAPS", f"{taps}ull"),) if taps is not None else ()
    defines += (("K_STAGE", 1),) if stage else ()
    return LaunchPlan("cuda_cores", "cuda_core", precision, 1, t, halo, nt, (nt, 1, 1), smem,
                      {"x": cols}, {"x": txo}, 1, 1, 1, live, defines,
                      options={"v": v, "nt": nt, "nr": 1, "ry": 0, "r": r, "layout": "tile1d", "stage": stage,
                               "flops_per_update": 2 * stencil.K, **({"lanes": lanes} if lanes > 1 else {})})


#: The compiler's own report (registers, bytes spilled) for 3D CUDA-core configurations, keyed by their
#: compile-time constants: kernels/compiled-resources.csv, written by benchmarks/ptxas_resources.py (nvcc for sm_90,
#: every tile the generic rule tries for the corpus shapes).  Where a configuration is listed, the planner believes
#: the compiler over its own estimate.
COMPILED_RESOURCES = "compiled-resources.csv"
#: Bytes a thread may spill and still count as fitting: one 64-bit value (Box-3D2R FP64 t = 2 spills 4 bytes at 255
#: registers, kept so that every unit runs r·t = 4 in 3D; the spills this rule avoids are 100 to 12,000 bytes).
SPILL_TOLERANCE = 8


def defines_key(defines: tuple) -> str:
    """One line naming a configuration's compile-time constants (the key of the compiled-resources table)."""
    return ";".join(f"{k}={v}" for k, v in defines)


@functools.lru_cache(maxsize=1)
def compiled_resources() -> dict[tuple[str, str], tuple[int, int]]:
    """(source, defines key) -> (registers, spill bytes) from :data:`COMPILED_RESOURCES` (empty if absent)."""
    import csv
    import io

    from ..data import data_dir
    from ..files import read_text

    path = data_dir("kernels") / COMPILED_RESOURCES
    if not path.is_file():
        return {}
    text = read_text(path, "compiled-resources table")
    rows = csv.DictReader(io.StringIO("".join(line for line in text.splitlines(True) if not line.startswith("#"))))
    return {(r["source"], r["defines"]): (int(r["registers"]), int(r["spill_bytes"])) for r in rows}


def _cc3d_live_words(r: int, t: int, v: int, w: int, prefetch: int, words: int) -> int:
    """32-bit registers of what a 3D CUDA-core thread keeps live: pending partial sums (t·2r per column and row),
    input planes in flight, the (2r + w) x (v + 2r) window of a step, the outputs."""
    return (t * 2 * r * v * w + prefetch * v * w + (2 * r + w) * (v + 2 * r) + v * w) * words


#: The most shared memory one block may have on any NVIDIA GPU so far (Hopper's opt-in, 227 KiB): a 3D tile
#: needing more is skipped for the next candidate (Star-3D1R FP32 at t = 8 wanted 340 KiB and was refused,
#: while the smaller tiles after it fit).
BLOCK_SMEM_LIMIT = 227 * 1024


def cc3d_tile_candidates(stencil: Stencil, t: int, precision: str, v: int, cols: int, by: int):
    """The tiles the generic 3D rule tries, in order: (columns per thread, rows, plan) -- the default, then fewer
    rows, then fewer columns per thread (benchmarks/ptxas_resources.py compiles them in this order), in the
    residue layout (``cc3d_vector_loads`` was measured on the tile this layout fits); tiles whose shared memory
    no GPU gives one block (:data:`BLOCK_SMEM_LIMIT`) are left out."""
    halo = stencil.radius * t
    tried = set()
    for v_ in sorted({v, max(1, v // 2), 1}, reverse=True):
        for by_ in (by, 32, 24, 16, 12, 8):
            if by_ > by or by_ - 2 * halo <= 0 or cols % v_ or (cols // v_) * by_ > 1024 or (v_, by_) in tried:
                continue
            tried.add((v_, by_))
            plan = plan_cuda_cores(stencil, t, precision, v=v_, cols=cols, rows=by_)
            if plan.smem > BLOCK_SMEM_LIMIT:  # never resident on any GPU: try the next (smaller) tile
                continue
            yield v_, by_, plan


def cc3d_generic_tile(stencil: Stencil, t: int, precision: str) -> tuple[int, int, int] | None:
    """(v, cols, rows) the generic 3D rule starts from, or None where ``cc3d_radius1`` of kernels/defaults.yaml decides."""
    if cc3d_measured_tile(stencil, precision, t) is not None:
        return None
    return cc3d_generic_start(stencil, t)


def cc3d_generic_start(stencil: Stencil, t: int) -> tuple[int, int, int]:
    """(v, cols, rows): the first tile the generic 3D rule tries (4 columns per thread, fewer where the pending
    sums would pass PEND_LIMIT; 64 columns; 16 rows, 32 beyond r·t = 4)."""
    r = stencil.radius
    v = 4
    while v > 1 and t * 2 * r * v > PEND_LIMIT:
        v //= 2
    return v, 64, (16 if r * t <= 4 else 32)


def _cc3d_fitting_tile(stencil: Stencil, t: int, precision: str, v: int, cols: int, by: int) -> tuple[int, int]:
    """(columns per thread, tile rows) of the generic 3D rule that the compiler gives registers enough: the
    default tile, else fewer rows (fewer threads, so more registers per thread), else fewer columns per thread.

    Why: the generic rule's tiles of 16-32 rows put 512-1024 threads in a block, which caps a thread at 64-128
    registers; at r >= 2 and t >= 3 the pending sums alone exceed that and the compiler spills to local memory
    (37 of 168 3D kernels of the 2026-11-25 corpus, up to 7 KiB a thread; Nsight Compute on Box-3D3R FP32 t = 2:
    13.7 G local-memory requests, 0.7 GStencils/s where 37 were predicted).  The refined model has no term for
    spills, so a plan that spills is neither predicted nor worth running: fewer rows cost halo redundancy, which
    the model counts.  A tile fits when the compiler's report (:func:`compiled_resources`) shows no spill (at most
    :data:`SPILL_TOLERANCE` bytes), or,
    for a configuration it does not list, when the planner's estimate (:func:`register_estimate`) fits the cap.
    Where no tile fits, the depth is refused in one line.
    """
    table = compiled_resources()
    for v_, by_, plan in cc3d_tile_candidates(stencil, t, precision, v, cols, by):
        report = table.get((plan.source, defines_key(plan.defines)))
        if report is not None:
            if report[1] <= SPILL_TOLERANCE:
                return v_, by_
        elif plan.live_words + REGISTER_OVERHEAD[plan.source] <= plan.register_cap:
            return v_, by_
    raise TcAdvisorError(f"{stencil.name} fused x{t}: every tile of the 3D CUDA-core kernel needs more registers per "
                         "thread than its block leaves (it would spill to local memory); use a smaller fusion depth")


_CC1D_TEXT = re.compile(r"^1D tiles of (\d+) threads x (\d+) points(, staged)?, ")
_CC3D_TEXT = re.compile(r"^(\d+)x(\d+) threads x (\d+) columns(?: x (\d+) rows)?(, rows trimmed per step)?"
                        r"(?:, (\d+) planes in flight)?(?:, (\d+) rows per thread)?(, rows read as vectors)?, halo")
_CC2D_TEXT = re.compile(r"^(\d+) threads x (\d+) columns, (\d+) rows/iteration(, rows copied asynchronously)?"
                        r"(?:, (\d+) iterations ahead)?(, outputs stored from registers)?(, own columns kept in registers)?"
                        r", halo")


def recorded_cuda_core_plan(stencil: Stencil, fuse: int, precision: str, description: str) -> LaunchPlan:
    """The plan of a recorded CUDA-core run, from the line the kernel printed about itself
    (:meth:`tcadvisor.gpu.cuda_cores.CudaCoreKernel.describe`, kept in every result file).

    Defaults change as scans find better configurations; a run recorded before
    such a change was made with the configuration its description names, not
    with today's default, and the model is evaluated (and fitted) on that one.
    """
    if stencil.dims == 3:
        m = _CC3D_TEXT.match(description)
        if m:
            bx, by, v = int(m[1]), int(m[2]), int(m[3])
            # "AxB threads x V columns x W rows": B threads along y, tiles of B·W rows.  The first runs with
            # rows per thread (2026-11-24, before the fix) printed "AxB threads ..., W rows per thread" with B
            # the tile's rows instead.
            w = int(m[4] or m[7] or 1)
            rows = by * w if m[4] else by
            return plan_cuda_cores(stencil, fuse, precision, v=v, cols=bx * v, rows=rows, trap=bool(m[5]),
                                   prefetch=int(m[6] or 1), rows_per_thread=w, vector_loads=bool(m[8]))
    else:
        m = _CC1D_TEXT.match(description)
        if m and stencil.dims == 1:
            return plan_cc_tile1d(stencil, fuse, precision, v=int(m[2]), cols=int(m[1]) * int(m[2]), stage=bool(m[3]))
        m = _CC2D_TEXT.match(description)
        if m:
            nt, v, nr = int(m[1]), int(m[2]), int(m[3])
            return plan_cuda_cores(stencil, fuse, precision, v=v, cols=nt * v, rows_per_iter=nr,
                                   async_copy=bool(m[4]), prefetch=int(m[5] or 1), direct_store=bool(m[6]),
                                   keep_columns=bool(m[7]), layout="stream")
    raise TcAdvisorError(f"not a CUDA-core kernel description: {description!r}")


_TC_TEXT = re.compile(r"^(m\d+n\d+k\d+) [A-Z0-9]+, .*?, (\d+) warps/block, (?:(\d+) (?:tiles along x|inner rows) per warp, )?"
                      r"weights in (registers|L1|shared memory as vectors|shared memory), "
                      r"prefetch (\d+), (?:L2 prefetch (\d+) slices ahead, )?(?:the line as rows, (\d+) points per block, )?"
                      r"(compiled for its fields' alignment, )?(?:(\d+) stages in shared memory, )?min (\d+) blocks/SM")


def recorded_tensor_core_plan(stencil: Stencil, fuse: int, precision: str, description: str,
                              rowmask: int | None = None) -> LaunchPlan:
    """The plan of a recorded dense Tensor Core run, from the kernel's description of itself
    (:meth:`tcadvisor.gpu.tensor_cores.TensorCoreKernel.describe`): its MMA shape, warps per block, x tiles
    per warp (2D; descriptions from before them do not name them), where its weights lived, the slices it loaded ahead into registers and into L2, and its register cap.
    Descriptions from before the L2 prefetch, the shared-memory weights and the 1D rows name none of them, and
    were made without them (a 1D line as one row, whatever today's default)."""
    m = _TC_TEXT.match(description)
    if not m:
        raise TcAdvisorError(f"not a dense Tensor Core kernel description: {description!r}")
    where = m[4]
    return plan_tensor_cores(stencil, fuse, precision, MmaShape.parse(m[1]), bregs=where == "registers",
                             prefetch=int(m[5]), warps=int(m[2]), min_blocks=int(m[10]), rowmask=rowmask,
                             l2_prefetch=int(m[6] or 0), weights_shared=where.startswith("shared memory"),
                             shared_words=where == "shared memory",
                             x_tiles=int(m[3] or 1) if stencil.dims != 3 else None,
                             inner_rows=int(m[3] or 1) if stencil.dims == 3 else None,
                             line_rows=bool(m[7]) if stencil.dims == 1 else None, fixed_alignment=bool(m[8]),
                             stages=int(m[9] or 0))


def sparse_plan_text(plan: LaunchPlan) -> str:
    """The launch part of the Sparse Tensor Core kernel's description of itself, from warps per block to its last
    knob: what :func:`recorded_sparse_tensor_core_plan` reads back (``_SPTC_TEXT``).  The kernel's
    :meth:`~tcadvisor.gpu.sparse_tensor_cores.SparseTensorCoreKernel.describe` puts its instruction and α before it
    and its compiled registers after; scripts that ask the model about a plan not yet run use it alone."""
    o = plan.options
    return (f"{o['wx'] * o['wi']} warps/block, "
            + (f"{o['ir']} {'inner rows' if plan.dims == 3 else 'tiles along x'} per warp, " if o["ir"] > 1 else "")
            + f"weights in {'registers' if o['aregs'] else 'shared memory' if o['weights_shared'] else 'L1'}, "
            f"prefetch {o['prefetch']}, "
            + (f"L2 prefetch {o['l2_prefetch']} slices ahead, " if o["l2_prefetch"] else "")
            + (f"{o['stages']} stages in shared memory, " if o["stages"] else "")
            + (f"the line as rows, {plan.row_width} points per block, " if plan.row_width else "")
            + ("compiled for its fields' alignment, " if o["align"] is not None else "")
            + f"{o['unroll']} slice(s) per trip"
            + (f", built for r·t {o['window_radius']} (its line padded with zeros)"
               if o["window_radius"] != plan.halo else "")
            + (", each lane loading its whole window" if o["whole_windows"] else "")
            + (", two accumulator chains" if o["two_chains"] else "")
            + (f", min {o['min_blocks']} blocks/SM" if o["min_blocks"] > 1 else "")
            + (", FP16 accumulators" if o["half_accumulators"] else ""))


_SPTC_TEXT = re.compile(r"^mma\.sp .*?, (\d+) warps/block, (?:(\d+) (?:inner rows|tiles along x) per warp, )?"
                        r"weights in (registers|L1|shared memory), prefetch (\d+), "
                        r"(?:L2 prefetch (\d+) slices ahead, )?(?:(\d+) stages in shared memory, )?"
                        r"(?:the line as rows, (\d+) points per block, )?(compiled for its fields' alignment, )?"
                        r"(\d+) slice\(s\) per trip(, built for r·t \d+ \(its line padded with zeros\))?"
                        r"(, each lane loading its whole window)?(, two accumulator chains)?(?:, min (\d+) blocks/SM)?"
                        r"(, FP16 accumulators)?")


def recorded_sparse_tensor_core_plan(stencil: Stencil, fuse: int, precision: str, description: str,
                                     linemask: int | None = None) -> LaunchPlan:
    """The plan of a recorded Sparse Tensor Core run, from the kernel's description of itself
    (:meth:`tcadvisor.gpu.sparse_tensor_cores.SparseTensorCoreKernel.describe`): warps per block, where its
    weights lived (registers, L1 or shared memory), inner rows (3D) or x tiles (2D) per warp, slices loaded
    ahead into registers and
    into L2, slices staged in shared memory, a 1D line as rows, a build for its fields' alignment, slices per trip,
    a line built one tap wider, whole windows per lane, two accumulator chains, a register cap (blocks per SM, named
    where more than one) and FP16 accumulators.  Descriptions from before the L2 prefetch, the shared-memory weights or
    two inner rows per warp do not name them, and were made without them."""
    m = _SPTC_TEXT.match(description)
    if not m:
        raise TcAdvisorError(f"not a Sparse Tensor Core kernel description: {description!r}")
    return plan_sparse_tensor_cores(stencil, fuse, precision, aregs=m[3] == "registers", prefetch=int(m[4]),
                                    warps=int(m[1]), linemask=linemask, unroll=int(m[9]),
                                    l2_prefetch=int(m[5] or 0), weights_shared=m[3] == "shared memory",
                                    stages=int(m[6] or 0),
                                    inner_rows=int(m[2] or 1) if stencil.dims == 3 else None,
                                    x_tiles=int(m[2] or 1) if stencil.dims == 2 else None,
                                    line_rows=bool(m[7]) if stencil.dims == 1 else None,
                                    fixed_alignment=bool(m[8]), even_window=bool(m[10]),
                                    whole_windows=bool(m[11]), two_chains=bool(m[12]), min_blocks=int(m[13] or 1),
                                    half_accumulators=bool(m[14]))


def computed_rows(plan: LaunchPlan, per_warp: bool) -> Fraction:
    """Fraction of a 3D CUDA-core tile's rows computed, averaged over the t steps (1 without ``trap``).

    With ``trap`` step s computes rows [r·s, by − r·s), in units of a thread's
    ``w`` rows (a thread computes all of its rows if any lies inside).  Per thread
    that is what executes (and what Nsight Compute's thread-level FMA counts see);
    per warp (``per_warp``), a warp issues the step if any of its rows is computed,
    which is what costs issue slots and FMA-pipe cycles.  Exact (a Fraction), so
    that the executed FLOPs are whole numbers like the FMAs a kernel counts.
    """
    if plan.unit != "cuda_core" or plan.dims != 3 or not plan.options.get("trap"):
        return Fraction(1)
    bx, by, r, t = plan.options["bx"], plan.options["by"], plan.options["r"], plan.fuse
    w = plan.options.get("w", 1)
    unit = max(1, 32 // bx) * w if per_warp else w  # rows issued together
    total = 0
    for s in range(1, t + 1):
        lo, hi = r * s, by - r * s
        total += sum(min(by, y + unit) - y for y in range(0, by, unit) if y + unit > lo and y < hi)
    return Fraction(total, t * by)


def _cc_taps(stencil: Stencil) -> tuple:
    """``K_TAPS`` of the CUDA-core kernels for a stencil that is neither box nor star (none for those: their
    taps are the kernels' built-in predicate, K_STAR, and their code stays what it was).

    The kernels hold the weights on the box of side 2r+1 (r = the stencil's radius, its largest |offset| on any
    axis; :meth:`Stencil.mask` indexed offset + r, as uploaded).  Each kernel row -- a row of that box along x,
    in C order of the other axes (2D: y; 3D: z, then y; 1D: the one row) -- is ``_`` and the row's bitmask in
    hex, ceil((2r+1)/4) digits, bit b set where column b (x offset b - r) is read: Upwind-2D
    {(0,0), (0,-1), (0,-2), (-1,0), (-2,0)} is ``_04_04_07_00_00``.  One identifier, which no compiler
    driver splits or re-quotes (nvcc splits -D values at commas).
    """
    if stencil.shape in ("box", "star"):
        return ()
    r, side = stencil.radius, 2 * stencil.radius + 1
    digits = -(-side // 4)
    bits = [0] * side ** (stencil.dims - 1)
    for off in stencil.offsets:
        row = 0
        for v in off[:-1]:
            row = row * side + v + r
        bits[row] |= 1 << (off[-1] + r)
    return (("K_TAPS", "".join(f"_{b:0{digits}x}" for b in bits)),)


def cc_vector_width(v: int, size: int) -> int:
    """VW of kernels/cuda_cores_3d.cu with K_VLD: values per shared-memory vector load, the widest of 4 and 2
    that divides V and fits 16 bytes (1: scalar loads)."""
    return next((n for n in (4, 2) if v % n == 0 and n * size <= 16), 1)


def _cc_values_per_load(v: int, r: int, size: int) -> float:
    """Values a thread's shared-memory load instructions read on average with K_VLD: its window of V + 2r values
    in ceil((V + 2r)/VW) vector loads (the refined model's n_vl: instructions, not bytes, change)."""
    window = v + 2 * r
    return window / -(-window // cc_vector_width(v, size))


def _cc_rowbuf_in_order(cols: int, r: int, v: int, size: int) -> int:
    """ROWBUF of the 3D kernel with K_VLD: the row in order, padded to whole vectors (the last window's last
    vector may read past the window, never past the row)."""
    vw = cc_vector_width(v, size)
    return -(-(cols + 2 * r) // vw) * vw


def _cc_rowbuf(cols: int, r: int, v: int, size: int) -> int:
    """ROWBUF of the CUDA-core kernels: one shared row stored by residue, padded against bank conflicts.

    Element L of a row sits at (L mod V)·SUBLEN + L div V; SUBLEN is the row's
    length per residue padded so that the V sub-rows start in different banks.
    """
    bankmod = 128 // size  # elements per 128-byte shared-memory wavefront
    sub_base = (cols + 2 * r + v - 1) // v
    sub_off = (bankmod // v) % bankmod
    sublen = sub_base + ((sub_off - sub_base % bankmod) % bankmod + bankmod) % bankmod
    return v * sublen


# --------------------------------------------------------------------------- dense Tensor Cores


def _l2_prefetch_slices(value, kernel: str) -> int:
    """The ``l2_prefetch`` knob of the Tensor Core kernels (kernels/l2_prefetch.cuh) checked: 0 to 32 slices."""
    value = 0 if value is None else value
    if int(value) != value or not 0 <= value <= 32:
        raise TcAdvisorError(f"l2_prefetch = {value}: the {kernel} kernel prefetches 0 to 32 slices ahead")
    return int(value)


def _mask_defines(name: str, mask: int, rows: int) -> tuple:
    """``name`` (bits 0-63 of a row mask over ``rows`` kernel rows) and, for more than 64 rows, ``name``_HI
    (bits 64-127): what kernels/tensor_cores.cu (ROW_ON) and kernels/sparse_tensor_cores.cu (LINE_ON) decode."""
    if rows > MASK_BITS or mask >> rows:
        raise TcAdvisorError(f"{rows} kernel rows: the Tensor Core kernels' compile-time masks hold {MASK_BITS}")
    defines = ((name, f"{mask & (2**64 - 1):#x}ULL"),)
    if rows > 64:
        defines += ((f"{name}_HI", f"{mask >> 64:#x}ULL"),)
    return defines


def lines_per_warp(dims: int, x_tiles, inner_rows, kernel: str, x_dims: tuple[int, ...] = (2,)) -> int:
    """Output lines one Tensor Core warp computes (both kernels' K_IR / K_XT): ``x_tiles`` adjacent tiles along x
    in the dimensions ``x_dims`` (the sparse kernel: 2D; the dense one: 1D and 2D), ``inner_rows`` adjacent inner
    rows in 3D, 1, 2 or 4 (None: 1); anything else is refused in one line naming ``kernel``."""
    if x_tiles is not None and (int(x_tiles) not in (1, 2, 4) or (int(x_tiles) > 1 and dims not in x_dims)):
        where = " or ".join(f"{d}D" for d in x_dims)
        raise TcAdvisorError(f"x_tiles = {x_tiles}: {kernel} warp computes 1 tile along x, or 2 or 4 in {where}")
    if inner_rows is not None and (int(inner_rows) not in (1, 2, 4) or (int(inner_rows) > 1 and dims != 3)):
        raise TcAdvisorError(f"inner_rows = {inner_rows}: {kernel} warp computes 1 inner row, or 2 or 4 in 3D")
    return int((inner_rows if dims == 3 else x_tiles) or 1)


def _from_radius(steps, fused_radius: int, default):
    """The value of the last (from fused radius, value) step at or below ``fused_radius``; ``default`` below the
    first (the 1D entries of kernels/defaults.yaml, sorted by radius)."""
    value = default
    for start, v in steps:
        if start <= fused_radius:
            value = v
    return value


def tc_1d_x_tiles(precision: str, fused_radius: int) -> dict:
    """The dense kernel's x tiles and L2 prefetch in 1D at ``fused_radius`` (``tensor_cores_1d_x_tiles`` of
    kernels/defaults.yaml: the knobs of the last listed radius at or below it; none for a precision not listed)."""
    return dict(_from_radius(defaults.measured().tc_1d_x_tiles.get(precision, ()), fused_radius, {}))


def tc_stages(dims: int, precision: str, fused_radius: int) -> int:
    """The dense kernel's stages in 2D or 3D at ``fused_radius`` (``tensor_cores_stages`` of kernels/defaults.yaml:
    the count of the last listed radius at or below it; 0 below the first and for a precision not listed)."""
    return tc_stage_knobs(dims, precision, fused_radius).get("stages", 0)


def tc_stage_knobs(dims: int, precision: str, fused_radius: int) -> dict:
    """The dense kernel's stage knobs in 2D or 3D at ``fused_radius``: {} where it stages nothing, else
    {"stages": n}, with "warps" where the entry names the warps per block its stages were measured with (3D: a block
    of fewer warps holds fewer stages, so that it stays within :data:`B_SMEM_LIMIT`)."""
    value = _from_radius(defaults.measured().tc_stages.get((dims, precision), ()), fused_radius, 0)
    if isinstance(value, tuple):
        return {"stages": value[0], "warps": value[1]}
    return {"stages": value} if value else {}


def tc_1d_stages(precision: str, fused_radius: int) -> int:
    """The dense kernel's stages in 1D at ``fused_radius`` (``tensor_cores_1d_stages`` of kernels/defaults.yaml: the
    count of the last listed radius at or below it; 0 below the first and for a precision not listed)."""
    return _from_radius(defaults.measured().tc_1d_stages.get(precision, ()), fused_radius, 0)


def block_row_points(dims: int, line_rows: bool | None, warp_tile: int, warps: int, kernel: str,
                     fused_radius: int, precision: str) -> int:
    """Points each block holds of a row when a 1D line is launched as rows (:meth:`LaunchPlan.launches`), 0 for
    the line as one row: the block's ``warps`` tiles of ``warp_tile`` outputs side by side.

    ``line_rows`` None: the measured default, rows from the fused radius ``tensor_cores_1d_rows`` of
    kernels/defaults.yaml names for ``kernel`` ("dense" or "sparse") and ``precision`` (BF16 takes FP16's), else
    one row; given in 2D or 3D it is refused.
    """
    if line_rows is None:
        start = defaults.measured().line_rows_from.get((kernel, "fp16" if precision == "bf16" else precision))
        line_rows = dims == 1 and start is not None and fused_radius >= start
    if line_rows and dims != 1:
        name = "the Tensor Core kernel" if kernel == "dense" else "the Sparse Tensor Core kernel"
        raise TcAdvisorError(f"line_rows: {name} lays a 1D line out as rows; this stencil is {dims}D")
    return warp_tile * warps if line_rows else 0


def tensor_core_rows(stencil: Stencil, fuse: int) -> int:
    """Non-empty kernel rows (2D) or lines (3D: a row of a plane) of the t-step fused stencil."""
    from ..transforms.support import fused_support

    return fused_support(stencil, fuse).n_lines()


def plan_tensor_cores(stencil: Stencil, fuse: int, precision: str, shape: MmaShape, bregs: bool | None = None,
                      prefetch: int | None = None, warps: int | None = None, min_blocks: int | None = None,
                      rowmask: int | None = None, l2_prefetch: int | None = None,
                      weights_shared: bool | None = None, shared_words: bool = False,
                      x_tiles: int | None = None, inner_rows: int | None = None,
                      line_rows: bool | None = None, fixed_alignment: bool | None = None,
                      stages: int | None = None) -> LaunchPlan:
    """The dense Tensor Core kernel's shape (kernels/tensor_cores.cu) for one instruction ``shape``.

    Warp tiles of m·8 outputs along x (m groups of the instruction's n = 8), one
    K_pad × 8 band per non-empty kernel row (K_pad = 2R + 8 + lead padded to k),
    K_pad/k MMAs per row and slice.  Weight fragments live in registers up to
    :data:`B_REG_LIMIT` per lane, and one slice of input fragments is loaded
    ahead where they take at most :data:`A_PREFETCH_LIMIT` registers.  ``l2_prefetch``: input slices
    ahead of the one being multiplied whose rows the warp asks the L2 to fetch (0: none).  With
    ``weights_shared`` the fragments are stored and read as vectors (conflict-free) where a lane's fragment has
    more than one word; ``shared_words`` stores and reads them word by word, as before 2026-11-26 (nb-way bank
    conflicts; kept for side-by-side scans).
    ``weights_shared``: weight fragments copied into shared memory per block and read before each
    MMA (instead of registers or L1; the compiler cannot hoist them into registers from there).
    ``x_tiles`` (1D and 2D): adjacent tiles of m·8 columns per warp, 1, 2 or 4 (K_XT); each weight fragment read
    serves one MMA per tile, and the warp keeps the A fragments and pending accumulators of each tile (in 1D, with
    the line as rows, a block's row is its warps' x tiles side by side).
    ``inner_rows`` (3D): adjacent inner output rows per warp, 1, 2 or 4 (K_IR), the same along y: the warp loads
    ni + ir - 1 input rows per slice and each weight fragment read serves one MMA per row.
    ``line_rows`` (1D): the line launched as rows of one block's warp tiles (:func:`block_row_points`), so that a warp
    streams many tiles with the next one in flight instead of computing one and exiting; None: the measured
    default, whichever other knobs are given (it is a layout of the launch, not of the compiled code).
    ``fixed_alignment``: compile the kernel for the alignment of its own fields (K_ALIGN; ghost width Gx = R rounded
    up to even puts every vector load and pair store on its boundary), so that its streaming loop holds only the
    vector path, where the run-time flag kept the scalar path's loads and addresses in it, issued predicated off;
    a field aligned otherwise runs a variant compiled for it.  None: where :data:`TC_FIXED_ALIGNMENT` measured it
    faster, whichever other knobs are given (a build of the same code, not a knob a scan varies with the others).
    ``stages`` (2-8; K_STAGES): each slice's input strips (3D: its ni + ir - 1 rows) copied by cp.async into one of
    that many stages of the warp's own in shared memory, ``stages`` - 1 in flight while one is multiplied, instead
    of slices loaded ahead into registers (``prefetch`` is then 0): a staged strip costs no register while in flight
    and holds the strip once, where the A fragments hold it KCH·k/8 times over (1D), or beside the pending
    accumulators where a slice ahead in registers would be a second set of A fragments (2D, 3D).

    With no knob given, the measured best of ``tensor_cores`` in kernels/defaults.yaml applies where it has an entry for this
    configuration and ``shape``; in 1D the x tiles and L2 prefetch of ``tensor_cores_1d_x_tiles`` by fused radius
    (:func:`tc_1d_x_tiles`); elsewhere weights that do not fit the registers go to shared memory
    (while a block's copy fits :data:`B_SMEM_LIMIT`, else L1), and 2D kernels of fused radius 3 or more
    with weights in registers prefetch 2 slices into L2 (the rule those scans followed everywhere they
    were measured).  A knob given leaves the others at their
    plain values (weights in registers where they fit, else L1; no L2 prefetch; 4 warps), so that a
    scan varies one thing at a time.
    """
    from ..transforms import rowband

    d = stencil.dims
    R = stencil.radius * int(fuse)
    half = precision in ("fp16", "bf16")
    k_pad = rowband.padded_k(R, shape)
    kch = k_pad // shape.k
    n = 2 * R + 1
    ns = 1 if d == 1 else n
    ni = n if d == 3 else 1
    rows = tensor_core_rows(stencil, fuse) if rowmask is None else bin(rowmask).count("1")
    nb = shape.k // (8 if half else 4)
    na = shape.m * shape.k // (64 if half else 32)
    nc = shape.m // 4
    b_regs = ns * ni * kch * nb
    if all(k is None for k in (bregs, prefetch, warps, min_blocks, l2_prefetch, weights_shared, x_tiles,
                               inner_rows, stages)):
        measured_as = "fp16" if precision == "bf16" else precision  # BF16 takes FP16's measured defaults
        entry = defaults.measured().tc.get((d, measured_as, R))
        if entry is not None and entry[0] == str(shape):
            chosen = entry[1]
        else:
            shared_bytes = b_regs * 32 * 4 * (_WORDS[precision] if precision == "fp64" else 1)
            chosen = {"weights_shared": b_regs > B_REG_LIMIT and shared_bytes <= B_SMEM_LIMIT,
                      "l2_prefetch": 2 if d == 2 and R >= 3 and b_regs <= B_REG_LIMIT else 0}
            if d == 1:  # x tiles, the L2 prefetch and the stages by fused radius (tensor_cores_1d_x_tiles, _stages)
                chosen.update(tc_1d_x_tiles(measured_as, R), stages=tc_1d_stages(measured_as, R))
        ruled = tc_stage_knobs(d, measured_as, R) if d > 1 else {}
        lines_ruled = int(chosen.get("x_tiles") or chosen.get("inner_rows") or 1)  # x tiles (2D) or inner rows (3D)
        warps_ruled = int(ruled.get("warps") or chosen.get("warps") or 4)
        if ruled.get("stages") and _tc_smem(precision, b_regs, chosen.get("weights_shared"), warps_ruled,
                                            ruled["stages"], ni + (lines_ruled - 1 if d == 3 else 0),
                                            shape.m * 8 * (lines_ruled if d != 3 else 1) - 8 + k_pad) <= B_SMEM_LIMIT:
            # 2D/3D: the stages by fused radius (tensor_cores_stages) over the entry's or the rules' knobs, which the
            # scan measured them beside; the slices in flight are then the stages', none ahead in registers and none
            # asked of the L2 (4 stages without it beat every count with it where the default had one).  Only while
            # the block's shared memory fits what every GPU the specs model lets a block have, so that the default
            # stays resident on each (and on every MMA shape the advisor weighs).
            # An entry with warps names the block its stages were measured in (3D: 4 warps where the entry's 8 would
            # hold twice the stages' bytes per block).
            chosen = dict(chosen, **ruled, prefetch=0, l2_prefetch=0)
        weights_shared = chosen.get("weights_shared", False)
        prefetch, l2_prefetch, warps = chosen.get("prefetch"), chosen.get("l2_prefetch", 0), chosen.get("warps")
        shared_words = shared_words or chosen.get("shared_words", False)
        x_tiles, inner_rows = chosen.get("x_tiles"), chosen.get("inner_rows")
        stages = chosen.get("stages")
    stages = _tc_stages(stages, prefetch)
    if stages:
        prefetch = 0
    lines = lines_per_warp(d, x_tiles, inner_rows, "a Tensor Core kernel", x_dims=(1, 2))
    xt, ir = (lines, 1) if d != 3 else (1, lines)
    warps = 4 if warps is None else int(warps)
    min_blocks = 1 if min_blocks is None else int(min_blocks)
    weights_shared = bool(weights_shared)
    if weights_shared and bregs:
        raise TcAdvisorError("weights_shared reads the weight fragments from shared memory; bregs must be off")
    bregs = (b_regs <= B_REG_LIMIT and not weights_shared) if bregs is None else bool(bregs)
    a_regs = (ni + ir - 1) * kch * na
    prefetch = (1 if a_regs <= A_PREFETCH_LIMIT else 0) if prefetch is None else int(prefetch)
    l2_prefetch = _l2_prefetch_slices(l2_prefetch, "Tensor Core")
    wx, wi = (1, warps) if d == 3 else (warps, 1)
    words = _WORDS[precision] if precision == "fp64" else 1
    # Weight fragments "in L1" are loop-invariant loads, which the compiler hoists into registers all the same,
    # keeping about twice their registers (the counts of the validation runs, docs/model.md "Registers").  Read
    # from shared memory they stay in the loop, but the compiler issues those loads early, as far as registers
    # allow: the 2D runs of kernels-4 kept 0.8-1.3 registers per 32-bit word of them (FP64 to the 255 cap), 3D
    # FP32/FP64 fewer (0.1-0.2); counted like weights in registers, the estimate errs towards fewer warps.
    live = ((max(ns - 1, 1) + 2) * nc * words * xt * ir + a_regs * (1 + prefetch) * words * xt
            + b_regs * words * (1 if bregs or weights_shared else 2))
    permuted = precision == "fp64" or half
    mask = (1 << (ns * ni)) - 1 if rowmask is None else rowmask
    defines = (("K_DOUBLE", int(precision == "fp64")), ("K_MMA_M", shape.m), ("K_MMA_K", shape.k), ("K_R", R),
               ("K_NS", ns), ("K_NI", ni), ("K_KCH", kch)) + _mask_defines("K_ROWMASK", mask, ns * ni) + (
               ("K_WX", wx), ("K_WI", wi), ("K_BREGS", int(bregs)), ("K_PF", prefetch), ("K_MINB", int(min_blocks)),
               ("K_PERM", int(permuted)))
    if half:  # the FP64/TF32 configurations compile exactly as before (no K_HALF)
        defines += (("K_HALF", {"fp16": 1, "bf16": 2}[precision]),)
    if l2_prefetch:  # without these the kernel compiles exactly as before
        defines += (("K_L2PF", l2_prefetch),)
    if xt > 1:
        defines += (("K_XT", xt),)
    if ir > 1:
        defines += (("K_IR", ir),)
    if fixed_alignment is None:
        fixed_alignment = R in TC_FIXED_ALIGNMENT.get((d, "fp16" if precision == "bf16" else precision), ())
    if fixed_alignment:  # the kernel's own fields: vector loads and pair stores (without it, as before)
        defines += (("K_ALIGN", TC_OWN_ALIGNMENT),)
    # One word per lane and MMA (nb = 1) has no bank conflict to remove: read word by word as before, which the
    # scan measured 0-7 % faster there (validation/results/h100-sxm-2026-11-26/tc-vectors).
    shared_words = bool(weights_shared and (shared_words or nb == 1))
    if weights_shared:  # as vectors, conflict-free; shared_words: word by word as before 2026-11-26 (scans)
        defines += (("K_BSMEM", 1 if shared_words else 2),)
    tile_x = shape.m * 8 * xt
    smem = _tc_smem(precision, b_regs, weights_shared, warps, stages, ni + ir - 1, tile_x - 8 + k_pad)
    if stages:
        defines += (("K_STAGES", stages),)
    width = block_row_points(d, line_rows, tile_x, wx, "dense", R, precision)
    return LaunchPlan("tensor_cores", "tensor_core", precision, d, int(fuse), R, 32 * warps, (32 * warps, 1, 1), smem,
                      {"x": tile_x + k_pad - 8}, {"x": tile_x}, warps, ns - 1, 1, live, defines, shape,
                      rows * kch,
                      options={"k_pad": k_pad, "kch": kch, "ns": ns, "ni": ni, "rows": rows, "bregs": bregs,
                               "prefetch": prefetch, "wx": wx, "wi": wi, "min_blocks": int(min_blocks),
                               "permuted": permuted, "half": half, "l2_prefetch": l2_prefetch,
                               "weights_shared": bool(weights_shared),
                               "shared_words": shared_words, "ir": xt * ir, "row_width": width,
                               "align": TC_OWN_ALIGNMENT if fixed_alignment else None, "stages": stages})


def _tc_smem(precision: str, b_regs: int, weights_shared, warps: int, stages: int, rows_in: int,
             strip_columns: int) -> int:
    """Dynamic shared memory of the dense kernel's block: the weight fragments where they are in shared memory
    (``b_regs`` words per lane), then each warp's ``stages`` stages of ``rows_in`` rows of ``strip_columns`` elements
    (kernels/tensor_cores.cu: STAGE_BYTES per row)."""
    words = _WORDS[precision] if precision == "fp64" else 1
    weights = b_regs * 32 * words * 4 if weights_shared else 0
    return weights + (warps * stages * rows_in * tc_stage_bytes(strip_columns, ELEMENT_BYTES[precision]) if stages else 0)


def _tc_stages(stages: int | None, prefetch: int | None) -> int:
    """The dense kernel's ``stages`` checked: 0 (none) or 2-8, and not with slices ahead in registers."""
    if not stages:
        return 0
    if isinstance(stages, bool) or not isinstance(stages, int) or not 2 <= stages <= 8:
        raise TcAdvisorError(f"stages {stages!r}: the Tensor Core kernel stages 2 to 8 slices in shared memory "
                             "(0 or none: no stages)")
    if prefetch:
        raise TcAdvisorError(f"stages {stages} with prefetch {prefetch}: staged strips are the slices in flight, "
                             "so the Tensor Core kernel loads none ahead into registers (prefetch 0)")
    return stages


def tc_stage_bytes(strip_columns: int, element_bytes: int) -> int:
    """Bytes of one of the dense kernel's stages for a strip of ``strip_columns`` elements: its bytes, copied in
    16-byte chunks from the boundary at or below the strip's origin (as kernels/tensor_cores.cu's STAGE_BYTES)."""
    return (strip_columns * element_bytes + 30) // 16 * 16


# --------------------------------------------------------------------------- sparse Tensor Cores


def plan_sparse_tensor_cores(stencil: Stencil, fuse: int, precision: str, aregs: bool | None = None,
                             prefetch: int | None = None, warps: int = 4, min_blocks: int = 1,
                             linemask: int | None = None, unroll: int | None = None,
                             l2_prefetch: int | None = None, weights_shared: bool | None = None,
                             inner_rows: int | None = None, x_tiles: int | None = None,
                             stages: int | None = None, line_rows: bool | None = None,
                             vector_loads: bool = True, fixed_alignment: bool | None = None,
                             even_window: bool | None = None, whole_windows: bool | None = None,
                             two_chains: bool | None = None, half_accumulators: bool | None = None) -> LaunchPlan:
    """The Sparse Tensor Core kernel's shape (kernels/sparse_tensor_cores.cu): SPIDER's lines of L = 16.

    Warp tiles of 8 segments × 16 outputs along x, one L × 2L swapped line matrix
    per non-empty kernel line, K = 2L over the instruction's k MMAs per line and
    slice; weight fragments (4 value registers and 1 of metadata per line and
    chunk) and slices loaded ahead by default as measured best on the H100
    (validation/results/h100-sxm-2026-11-23/kernels/tuning-sptc-prefetch.csv, Box-2D1R x3 and Box-2D3R):
    TF32 with its fragments in registers (up to :data:`A_REG_LIMIT`) and 2 slices in flight (57-59% of
    the bound; 1 in 3D beyond 64 lines, where 2 spill), FP16/BF16 with fragments read from L1 (fewer
    registers, more resident warps) and 1 slice.
    ``l2_prefetch``: input slices ahead whose rows the warp asks the L2 for (0: none), as in the dense kernel;
    with no knob given, ``sparse_tensor_cores_l2_prefetch`` of kernels/defaults.yaml.
    ``weights_shared``: the non-empty lines' weight fragments in shared memory, read before each MMA (20 bytes
    per lane and line; not with ``aregs``).  ``inner_rows`` (3D): inner output rows per warp, 1, 2 or 4; with 2
    each weight fragment read serves two MMAs and a slice loads NI + 1 input rows for two output rows.
    ``x_tiles`` (2D): adjacent tiles of 128 columns per warp, 1, 2 or 4; each weight fragment read serves one
    MMA per tile, and the warp keeps a set of pending accumulators per tile.  Both set the kernel's K_IR (the
    plan's ``ir``: the MMAs one weight-fragment read serves).
    ``stages``: input slices staged in shared memory by cp.async (2-8; 0 or None: none), ``stages`` - 1 of them
    in flight while one is multiplied, in place of ``prefetch`` (which must then be 0): a warp's
    ``ni + ir - 1`` rows of 512 bytes (TF32: 1 KiB) per stage.  Slices ahead in registers are moved into place
    at every slice and the move waits for the load (kernels/sparse_tensor_cores.cu, "Why K_BSTAGES").
    ``line_rows`` (1D): the line launched as rows, as in :func:`plan_tensor_cores`.
    ``vector_loads``: the input windows loaded as 16-byte vectors (False: element by element, for scans and tests).
    ``fixed_alignment``: compile the kernel for the alignment of its own fields (K_ALIGN: ghost width Gx = R puts
    every window on a 16-byte boundary, and pair stores on a 4-byte one where R is even), so that its streaming loop
    holds only those loads and stores, where a run-time flag kept both paths' instructions in it; a field aligned
    otherwise runs a variant compiled for it (:meth:`tcadvisor.gpu.sparse_tensor_cores.SparseTensorCoreKernel.sweep`).
    With no knob given, ``sparse_tensor_cores`` of kernels/defaults.yaml (measured faster in 3D and in 2D from
    R = 6, slower in 2D FP16 below, h100-sxm-2026-11-27/sptc-align/), else off: the run-time flag.
    In 1D beyond r·t = 8 (the window in blocks of 32 columns) the rules of :data:`SPTC_1D_DEEP_FROM`: FP16/BF16
    weight fragments in registers, every precision built for its fields' alignment with whole windows per lane, TF32
    one slice ahead and two accumulator chains; an odd r·t built as r·t + 1 (:func:`sptc_window_radius`,
    ``even_window``), its line padded with zeros, so that its outputs are stored in pairs.
    ``whole_windows``: every lane loads both halves of its window itself (K_WHOLE) instead of taking the upper one
    from its neighbour by shuffle (or from its stage): one more load per vector, four shuffles and four selects fewer.
    ``two_chains`` (1D only): the MMAs of a slice go alternately into two accumulator sets (K_ACC2), halving the
    dependent chain of 2·blocks MMAs per slice at the price of 4 registers.  With no knob given, both as the 1D rules
    above say, whole windows also where ``sparse_tensor_cores`` of kernels/defaults.yaml names them (3D: TF32 at
    r·t = 3-4, FP16/BF16 at 2), else off.
    ``half_accumulators`` (FP16 only): FP16 accumulators (K_ACC16), as SPIDER's, two registers per fragment instead
    of four; every MMA's sum is rounded to FP16, so the sweep's error bound is FP16's (never a default: the answer's
    accuracy is the user's choice); given alone, the configuration measured best with them where
    ``sparse_tensor_cores_half_accumulators`` of kernels/defaults.yaml names one.
    ``min_blocks``: blocks per SM the compiler must leave registers for (``__launch_bounds__``); with no knob given,
    ``sparse_tensor_cores`` of kernels/defaults.yaml where it names one.
    """
    from .sparse_operands import SEGMENTS, SHAPES, L, a_chunks, blocks, chunks, fused_radius_limit, radius_reason

    if precision not in SHAPES:
        raise TcAdvisorError(f"the Sparse Tensor Core kernel runs TF32, FP16 and BF16, not {precision.upper()}")
    d = stencil.dims
    R = stencil.radius * int(fuse)
    if R > fused_radius_limit(d):
        raise TcAdvisorError(f"fused radius r·t = {R} is too large for the Sparse Tensor Core kernel{radius_reason(d)}")
    R_w = sptc_window_radius(d, R, even_window)  # the radius the kernel is built for (1D: R, or R + 1)
    n = 2 * R + 1
    ns = 1 if d == 1 else n
    ni = n if d == 3 else 1
    lines = tensor_core_rows(stencil, fuse) if linemask is None else bin(linemask).count("1")
    kc = chunks(precision, R_w)  # 1D beyond r·t = 8: the chunks of every block of 2L window columns
    ka = a_chunks(precision, R_w)  # r·t ≥ 8: two matrices per line, each kc instructions on the same B fragments
    a_regs = lines * ka * 5
    if (l2_prefetch is None and all(k is None for k in (aregs, prefetch, unroll, weights_shared, inner_rows, x_tiles,
                                                         stages))
            and (warps, min_blocks) == (4, 1)):
        key = (d, "fp16" if precision == "bf16" else precision, R)
        measured = defaults.measured().sptc.get(key)
        if measured is not None and half_accumulators and precision == "fp16":
            # what measured best with FP16 accumulators (sparse_tensor_cores_half_accumulators), over the entry
            measured = {**measured, **defaults.measured().sptc_half.get(key, {})}
        if measured is not None:  # the whole configuration as scanned (sparse_tensor_cores of kernels/defaults.yaml)
            weights_shared, inner_rows = measured.get("weights_shared"), measured.get("inner_rows")
            x_tiles = measured.get("x_tiles")
            prefetch, l2_prefetch = measured.get("prefetch"), measured.get("l2_prefetch", 0)
            stages = measured.get("stages")
            if fixed_alignment is None:
                fixed_alignment = measured.get("fixed_alignment")
            if whole_windows is None:
                whole_windows = measured.get("whole_windows")
            min_blocks = measured.get("min_blocks", 1)
        else:
            l2_prefetch = defaults.measured().sptc_l2.get(key, 0)
            if d == 1 and R >= SPTC_1D_DEEP_FROM:  # bound by the instructions it issues (SPTC_1D_DEEP_FROM)
                fixed_alignment = True if fixed_alignment is None else fixed_alignment
                whole_windows = True if whole_windows is None else whole_windows
                if precision == "tf32":
                    prefetch = SPTC_1D_TF32_PREFETCH
                    two_chains = True if two_chains is None else two_chains
    weights_shared = bool(weights_shared)
    if aregs and weights_shared:
        raise TcAdvisorError("aregs and weights_shared: the sparse kernel's weight fragments are in registers "
                             "or in shared memory, not both")
    ir = lines_per_warp(d, x_tiles, inner_rows, "a sparse kernel")
    whole_windows, two_chains, half_acc = bool(whole_windows), bool(two_chains), bool(half_accumulators)
    if two_chains and d != 1:
        raise TcAdvisorError(f"two_chains: the sparse kernel splits the MMAs of a slice over two accumulator sets in "
                             f"1D only (one chain per output slice); this stencil is {d}D")
    if half_acc and precision != "fp16":
        raise TcAdvisorError(f"half_accumulators: mma.sp accumulates in FP16 with FP16 operands only, not "
                             f"{precision.upper()}")
    if half_acc and two_chains:
        raise TcAdvisorError("half_accumulators and two_chains: the second accumulator chain is added in FP32; "
                             "give one of them")
    if not 1 <= int(min_blocks) <= 8:
        raise TcAdvisorError(f"min_blocks {min_blocks}: the sparse kernel asks the compiler for 1 to 8 resident "
                             "blocks per SM")
    if aregs is None:
        if weights_shared:
            aregs = False
        elif precision == "tf32":
            aregs = a_regs <= A_REG_LIMIT
        else:  # FP16/BF16: from L1, except in 1D beyond r·t = 8 (SPTC_1D_DEEP_FROM)
            aregs = d == 1 and R >= SPTC_1D_DEEP_FROM
    aregs = bool(aregs)
    stages = int(stages or 0)
    if stages and not 2 <= stages <= 8:
        raise TcAdvisorError(f"stages {stages}: the sparse kernel stages 2 to 8 input slices in shared memory "
                             "(0: none)")
    if stages and prefetch:
        raise TcAdvisorError(f"stages {stages} and prefetch {prefetch}: slices staged in shared memory replace the "
                             "slices loaded ahead into registers; give prefetch 0")
    if stages:
        prefetch = 0
    if prefetch is None:
        # TF32 3D beyond 64 lines (r·t ≥ 4: 9+ inner rows of 8 registers per slice): 2 slices ahead spill
        # (nvcc 13.0, sm_90, Box-3D1R x4: 255 registers and 88 bytes of spill stores; 1 slice: 255, none).
        prefetch = (1 if ns * ni > 64 else 2) if precision == "tf32" else 1
    prefetch = int(prefetch)
    if not 0 <= prefetch <= 2:
        raise TcAdvisorError(f"prefetch {prefetch}: the sparse kernel loads 0, 1 or 2 slices ahead")
    unroll = 1 if unroll is None else int(unroll)
    if unroll not in (1, 2, 4, 8):
        raise TcAdvisorError(f"unroll {unroll}: the sparse kernel streams 1, 2, 4 or 8 slices per trip")
    l2_prefetch = _l2_prefetch_slices(l2_prefetch, "Sparse Tensor Core")
    wx, wi = (1, warps) if d == 3 else (warps, 1)
    # Weight fragments read "from L1" are loop-invariant loads that the compiler hoists into registers all the
    # same: the FP16 validation runs compiled to a_regs more registers than the arrays alone (docs/model.md).
    # Fragments read from shared memory are loaded a few MMAs ahead, not hoisted out of the loop: they add
    # SPTC_SHARED_AHEAD registers (the median over the compiled scan runs), not a_regs.
    hoisted = SPTC_SHARED_AHEAD if weights_shared else a_regs
    acc_words = 2 if half_acc else 4  # one accumulator fragment: 4 FP32 values, or 2 words of two FP16
    live = (max(ns - 1, 1) + 2 + int(two_chains)) * acc_words * ir + (ni + ir - 1) * kc * 4 * (1 + prefetch) + hoisted
    mask = (1 << (ns * ni)) - 1 if linemask is None else linemask
    defines = ((("K_PREC", {"tf32": 0, "fp16": 1, "bf16": 2}[precision]), ("K_R", R_w), ("K_NS", ns), ("K_NI", ni))
               + _mask_defines("K_LINEMASK", mask, ns * ni) + (("K_WX", wx), ("K_WI", wi), ("K_AREGS", int(aregs)),
               ("K_PF", prefetch), ("K_MINB", int(min_blocks)), ("K_UNROLL", unroll)))
    if l2_prefetch:  # the optional knobs are passed only when used
        defines += (("K_L2PF", l2_prefetch),)
    if weights_shared:
        defines += (("K_ASMEM", lines),)
    if ir > 1:
        defines += (("K_IR", ir),)
    if stages:
        defines += (("K_BSTAGES", stages),)
    align = int(bool(vector_loads)) | (int(R_w % 2 == 0) << 1)  # the kernel's own fields (Gx = R_w)
    if fixed_alignment:
        defines += (("K_ALIGN", align),)
    if whole_windows:
        defines += (("K_WHOLE", 1),)
    if two_chains:
        defines += (("K_ACC2", 1),)
    if half_acc:
        defines += (("K_ACC16", 1),)
    smem = lines * ka * 32 * SPTC_FRAGMENT_BYTES if weights_shared else 0
    smem += warps * stages * (ni + ir - 1) * kc * 32 * 16  # each warp's stages: one 16-byte vector per lane and row
    # segment g reads the window x0 + 16g - R ... + 2L·blocks - 1: TILE_X + (2·blocks - 1)·L columns in all; in
    # 2D a warp's ir lines are ir adjacent tiles along x
    tile_x = L * SEGMENTS * (ir if d == 2 else 1)
    width = block_row_points(d, line_rows, tile_x, wx, "sparse", R, precision)
    return LaunchPlan("sparse_tensor_cores", "sparse_tensor_core", precision, d, int(fuse), R, 32 * warps,
                      (32 * warps, 1, 1), smem, {"x": tile_x + (2 * blocks(R_w) - 1) * L}, {"x": tile_x}, warps,
                      ns - 1, 1, live,
                      defines, SHAPES[precision], lines * ka,
                      options={"kc": kc, "ka": ka, "ns": ns, "ni": ni, "rows": lines, "aregs": aregs, "prefetch": prefetch,
                               "wx": wx, "wi": wi, "min_blocks": int(min_blocks), "unroll": unroll,
                               "l2_prefetch": l2_prefetch, "weights_shared": weights_shared, "ir": ir,
                               "stages": stages, "row_width": width,
                               "align": align if fixed_alignment else None, "window_radius": R_w,
                               "whole_windows": whole_windows, "two_chains": two_chains,
                               "half_accumulators": half_acc})


# --------------------------------------------------------------------------- registers


#: Kernel files whose registers per thread (hence occupancy) are the compiler's count where
#: :data:`COMPILED_RESOURCES` lists the configuration.  The dense Tensor Core kernel: in 1D, where the table lists
#: its default plan at every fused radius and precision, the 16-bit count grows about twice as fast with the K
#: chunks as the live words (FP16 at r·t = 64: 156 registers against an estimate of 82), and with the counts the
#: refined model's leave-one-shape-out error fell (H100 median 13.7 -> 12.7 %, winners 104 -> 106 of 153; H200
#: winners 121 -> 124 of 179, median 15.4 -> 15.7 %; validation/results/refined-fit-2026-11-27/).  Not the 3D
#: CUDA-core tiles: their counts choose tiles that do not spill, but used for the occupancy they made the held-out
#: errors worse (H200 median 16.1 %, p90 50.4 %), so that model keeps the estimate its constants were fitted with.
OCCUPANCY_FROM_COMPILER = ("tensor_cores.cu",)
#: Registers per thread beyond the live arrays (addresses, loop counters, temporaries), per kernel file:
#: the median over the validation runs on the H100 (docs/model.md, "Registers").
REGISTER_OVERHEAD = {"cuda_cores_1d.cu": 16, "cuda_cores_2d.cu": 22, "cuda_cores_3d.cu": 42, "tensor_cores.cu": 16,
                     "sparse_tensor_cores.cu": 18}


def registers_from_compiler(plan: LaunchPlan) -> int | None:
    """The compiler's register count for ``plan`` where :data:`OCCUPANCY_FROM_COMPILER` and the table have it."""
    if plan.source not in OCCUPANCY_FROM_COMPILER:
        return None
    report = compiled_resources().get((plan.source, defines_key(plan.defines)))
    return None if report is None else report[0]


def register_estimate(plan: LaunchPlan) -> int:
    """Registers per thread the compiler will give ``plan``'s kernel, estimated before compiling.

    For the kernel files of :data:`OCCUPANCY_FROM_COMPILER`, the compiler's own count where
    :data:`COMPILED_RESOURCES` lists the configuration.  Elsewhere the arrays each kernel
    keeps live across its main loop (pending partial sums
    or accumulator fragments, the slice of inputs in flight, weight fragments
    held in registers, or hoisted by the compiler from L1: :attr:`LaunchPlan.live_words`)
    plus the addressing and temporaries of that kernel file (:data:`REGISTER_OVERHEAD`),
    capped at :attr:`LaunchPlan.register_cap` (beyond, the compiler spills).
    docs/model.md ("Occupancy") compares the estimate with the counts the
    compiler reported in the validation runs.
    """
    counted = registers_from_compiler(plan)
    if counted is not None:
        return counted
    return min(plan.register_cap, plan.live_words + REGISTER_OVERHEAD[plan.source])
