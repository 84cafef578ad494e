"""Host side of the Sparse Tensor Core kernel: SPIDER's operands in fragment order, and its NumPy twin.

The operands come from :func:`tcadvisor.transforms.spider.construct` — the code
the advisor counts α with — so the kernel multiplies exactly the matrices α is
counted from.  Each non-empty kernel line (1D: the kernel; 2D: a row; 3D: a row
of a plane) is a banded L × 2L matrix (L = 16 outputs; the band of 2R+1 weights
starts at window column i in row i) whose columns the strided swap exchanged so
that every pair of window columns {e, e+L+1} and {e+1, e+L} (e even < L) holds at
most one non-zero per row.

How the kernel feeds the instruction (all folded into addresses at compile time):

* **B (input).** An instruction's N = 8 columns are 8 segments of 16 consecutive
  outputs of one input line; column n reads the window ``x0 + 16n − R + ω``
  (ω = 0 … 2L−1).  Lane (g, t) loads *one 16-byte vector* per K chunk, from
  window column :func:`lane_load` ``start``; element e of its B fragment is
  vector element ``order[e]``.  The map instruction-k → window column ω that
  this induces (:func:`window_columns`) puts, in every sparsity group of the
  instruction, only whole swapped pairs — so every group keeps the 2:4 (FP16,
  BF16) or 1:2 (TF32) structure the swap guarantees.  It is the strided swap's
  permutation composed with an exchange of whole pairs and of positions within
  groups, which preserves the structure; :func:`pack` verifies it for every line.
* **A (weights).** Instruction row m is output ``π(m) = 2(m mod 8) + m div 8`` of
  the segment, so a lane's accumulators hold the adjacent outputs 2g, 2g+1 of
  segments 2t and 2t+1: one 2-element store each.  The rows and columns of the
  swapped line matrix are permuted accordingly, compressed with
  :func:`tcadvisor.transforms.spider.compress` (values + 2-bit indices) and
  packed per lane (:mod:`tcadvisor.gpu.layouts`).
* **C.** Partial results of the kernel lines are accumulated in registers while
  the kernel streams along y (2D) or z (3D), as the dense kernel does.

With L = 16 and K = 2L = 32 the swap has room for a fused radius of at most 7
(L ≥ 2R + 2): FP16/BF16 issue one ``mma.sp`` m16n8k32 per line, TF32 two m16n8k16.
At r·t = 8 (L = 2R) each line is two matrices, its even and its odd taps
(:func:`tcadvisor.transforms.spider.halves`), multiplied by the same B
fragments: twice the instructions per line (``ka`` A fragments per line, ``kc``
B chunks), the same window, outputs and pending accumulators.

In 1D nothing is pending between slices, so the window grows instead: beyond
r·t = 8 it is :func:`blocks` blocks of 2L columns (L + 2R padded to 2L), each
loaded, ordered and swapped as the one block below, and every line is its even
and odd taps — ``kc`` B chunks per block, up to r·t = 64 (:data:`MAX_FUSED_RADIUS_1D`,
the dense kernel's 1D limit).  2D and 3D keep one block: a wider window there
means more pending accumulator rows than the registers hold (see
:mod:`tcadvisor.gpu.sparse_tensor_cores`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..mma import MmaShape
from ..reference import radius_of
from ..transforms import spider
from ..transforms.base import Construction
from ..transforms.warp_stream import stream_tiles
from . import layouts

L = 16  #: outputs per segment (the instruction's m)
SEGMENTS = 8  #: segments per warp tile (the instruction's n)
TILE_X = L * SEGMENTS
MAX_FUSED_RADIUS = L // 2  #: 2D and 3D: r·t = 8 with two matrices per line (L = 2R)
MAX_FUSED_RADIUS_1D = 64  #: 1D: windows of several blocks of 2L columns, as far as the dense kernel goes in 1D
SHAPES = {"fp16": MmaShape(16, 8, 32), "bf16": MmaShape(16, 8, 32), "tf32": MmaShape(16, 8, 16)}
#: (keep, group) of spider.construct / compress per precision.
PATTERN = {"fp16": (2, 4), "bf16": (2, 4), "tf32": (1, 2)}


def fused_radius_limit(dims: int) -> int:
    """The largest r·t the kernel takes: 64 in 1D, 8 in 2D and 3D."""
    return MAX_FUSED_RADIUS_1D if dims == 1 else MAX_FUSED_RADIUS


def radius_reason(dims: int) -> str:
    """Why r·t is bounded, after the kernel's name in the refusal (the kernel class and its planner say it alike)."""
    if dims == 1:
        return f" (at most {MAX_FUSED_RADIUS_1D} in 1D)"
    return (f": with L = {L} outputs per line the strided swap allows r·t ≤ {MAX_FUSED_RADIUS} in {dims}D "
            f"(two matrices per line at {MAX_FUSED_RADIUS})")


def blocks(R: int) -> int:
    """Blocks of 2L window columns per line: L + 2R columns in whole blocks (1 up to r·t = 8)."""
    return -(-(L + 2 * R) // (2 * L))


def per_block(precision: str) -> int:
    """K chunks per block of 2L columns: 2L over the instruction's k (FP16/BF16 1, TF32 2)."""
    return 2 * L // SHAPES[precision].k


def chunks(precision: str, R: int) -> int:
    """K chunks (B fragments) per line and input row: every block's 2L columns over the instruction's k."""
    return blocks(R) * per_block(precision)


def halves(R: int) -> int:
    """Matrices per kernel line at fused radius R: 1, or 2 (even and odd taps) from R = L / 2 on."""
    return spider.halves(R, L)


def a_chunks(precision: str, R: int) -> int:
    """A fragments (instructions) per line and input row: every half's every K chunk."""
    return halves(R) * chunks(precision, R)


def lane_load(precision: str, t: int, kc: int) -> tuple[int, tuple[int, ...]]:
    """(window column of lane t's 16-byte load in chunk kc, vector element of each B element).

    Chunk kc lies in block b = kc // :func:`per_block` (columns 2L·b …), chunk c = kc mod per_block of it.
    FP16/BF16: 8 halves from ``2L·b + (t & 1)·L + 8·(t >> 1)``, element e = half e.
    TF32: 4 floats from ``2L·b + (t & 1)·L + 8·c + 4·(t >> 1)``, element e = float e ^ (t & 1)
    (odd lanes take each pair the other way round, so that lanes 2u and 2u+1
    hold the two columns of one swapped pair).
    """
    b, c = divmod(kc, per_block(precision))
    if precision == "tf32":
        return 2 * L * b + (t & 1) * L + 8 * c + 4 * (t >> 1), tuple(e ^ (t & 1) for e in range(4))
    return 2 * L * b + (t & 1) * L + 16 * c + 8 * (t >> 1), tuple(range(8))


def window_columns(precision: str, R: int = 0) -> np.ndarray:
    """ω[kc, κ]: the window column that feeds instruction index κ of chunk kc (from the lanes' loads)."""
    k, n = SHAPES[precision].k, chunks(precision, R)
    omega = np.full((n, k), -1, dtype=np.int64)
    for kc, lane in itertools.product(range(n), range(4)):  # g does not matter
        start, order = lane_load(precision, lane, kc)
        for e in range(layouts.b_count(precision)):
            kappa, _ = layouts.sparse_b(precision, lane, e)
            omega[kc, kappa] = start + order[e]
    assert (omega >= 0).all() and sorted(omega.reshape(-1)) == list(range(2 * L * blocks(R)))
    return omega


def output_row(m: int) -> int:
    """π(m): segment output computed by instruction row m."""
    return 2 * (m % 8) + m // 8


@dataclass
class SparseOperands:
    """The uploaded A operands of every kernel line the kernel iterates (empty lines: zeros)."""

    precision: str
    construction: Construction
    lines: list[tuple[int, ...]]  # all lines in kernel order
    nonzero: list[bool]
    values: np.ndarray  # float64 [line][ka][lane][reg][keep], unrounded; ka = half · kc + chunk
    meta: np.ndarray  # uint32 [line][ka][lane]

    @property
    def ka(self) -> int:
        """A fragments (instructions) per line: halves × K chunks."""
        return self.values.shape[1]

    @property
    def kc(self) -> int:
        """K chunks: the B fragments per input row, shared by the halves."""
        return chunks(self.precision, self.construction.details["R"])

    @property
    def halves(self) -> int:
        return self.ka // self.kc


def instruction_matrix(con: Construction, operand: int, precision: str, kc: int) -> np.ndarray:
    """The 16 × k matrix instruction kc of ``con.operands[operand]`` multiplies (rows π, columns ω of the swapped
    matrix)."""
    src = con.details["permutation"]
    inv = np.argsort(src)  # column of the swapped matrix that holds window column ω
    rows = [output_row(m) for m in range(L)]
    omega = window_columns(precision, con.details["R"])[kc]
    return con.operands[operand][rows][:, inv[omega]]


def construct(fused: np.ndarray, precision: str) -> Construction:
    keep, group = PATTERN[precision]
    return spider.construct(fused, SHAPES[precision], L=L, keep=keep, group=group)


def pack(fused: np.ndarray, precision: str, all_lines: list[tuple[int, ...]]) -> SparseOperands:
    """Build, permute, compress and pack the weight operands of the fused kernel ``fused``."""
    con = construct(fused, precision)
    keep, group = PATTERN[precision]
    ncs, nh = chunks(precision, con.details["R"]), con.details["halves"]
    first = {}  # line index -> its first operand (the halves of a line follow one another)
    for i, idx in enumerate(con.details["lines"]):
        first.setdefault(idx, i)
    values = np.zeros((len(all_lines), nh * ncs, 32, 4, keep))
    meta = np.zeros((len(all_lines), nh * ncs, 32), dtype=np.uint64)
    empty = layouts.nibble((0, 1) if keep == 2 else (0,), precision)
    for li, idx in enumerate(all_lines):
        i = first.get(idx)
        for hv, kc in itertools.product(range(nh), range(ncs)):
            ka = hv * ncs + kc
            if i is None:  # never executed (skipped at compile time); valid metadata all the same
                word = sum(empty << (4 * nb) for nb in range(8))
                meta[li, ka] = [word if lane % 4 < 2 else 0 for lane in range(32)]
                continue
            mat = instruction_matrix(con, i + hv, precision, kc)
            if not spider.check_structure(mat != 0, keep, group):
                raise AssertionError(f"line {idx}, half {hv}, chunk {kc}: the load order broke the {keep}:{group} "
                                     "structure")
            values[li, ka], meta[li, ka] = layouts.encode_sparse_a(precision, mat)
    nonzero = [idx in first for idx in all_lines]
    return SparseOperands(precision, con, list(all_lines), nonzero, values, meta.astype(np.uint32))


def line_order(dims: int, R: int) -> tuple[list[tuple[int, ...]], int, int]:
    """(every kernel line in the kernel's order, NS, NI): lines (p, a) with p along the streamed axis."""
    n = 2 * R + 1
    ns = 1 if dims == 1 else n
    ni = n if dims == 3 else 1
    key = {1: lambda p, a: (), 2: lambda p, a: (p,), 3: lambda p, a: (p, a)}[dims]
    return [key(p, a) for p in range(ns) for a in range(ni)], ns, ni


# --------------------------------------------------------------------------- emulation


def _mma_sp(precision: str, values: np.ndarray, meta: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One warp-wide mma.sp from per-lane fragments (A decoded as the hardware reads it)."""
    k = SHAPES[precision].k
    A = layouts.decode_sparse_a(precision, values, meta)
    B = np.zeros((k, 8))
    for lane in range(32):
        for e in range(layouts.b_count(precision)):
            B[layouts.sparse_b(precision, lane, e)] = b[lane, e]
    C = np.zeros((16, 8))
    for lane in range(32):
        for e in range(4):
            C[layouts.acc_c(lane, e)] = c[lane, e]
    D = A @ B + C
    return np.array([[D[layouts.acc_c(lane, e)] for e in range(4)] for lane in range(32)])


def emulate(x: np.ndarray, fused: np.ndarray, precision: str) -> np.ndarray:
    """One periodic sweep of the fused stencil through the kernel's warp dataflow, lane by lane.

    Mirrors ``kernels/sparse_tensor_cores.cu``: warp tiles of 8 segments × 16
    outputs along x, streaming the outermost axis with the pending output rows
    as accumulator fragments; B fragments gathered from the (periodically
    padded) input with the kernel's load addresses, A fragments and metadata
    from :func:`pack`, outputs stored through π.  Arithmetic in float64 (no
    rounding), so the result must equal the float64 stencil.  Slow: small grids.
    """
    w = np.asarray(fused, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    R = radius_of(w)
    dims = x.ndim
    all_lines, ns, ni = line_order(dims, R)
    ops = pack(w, precision, all_lines)
    width = x.shape[-1]
    tiles = -(-width // TILE_X)
    extra = tiles * TILE_X + 2 * L * blocks(R) - width  # the last tile's windows read past the right ghost layer
    pad = [(R, R)] * (dims - 1) + [(R, R + extra)]
    as3 = {1: lambda a: a[None, None, :], 2: lambda a: a[:, None, :], 3: lambda a: a}[dims]
    x3 = as3(np.pad(x, pad, mode="wrap"))  # interior column i at padded column i + R
    out = as3(np.zeros(x.shape)).copy()
    n_s, n_i = out.shape[0], out.shape[1]
    rs, ri = (R if dims >= 2 else 0), (R if dims == 3 else 0)
    ncs = ops.kc
    nb = layouts.b_count(precision)
    def gather(tile, i_row, j):
        x0 = tile * TILE_X
        bfr = np.zeros((ni, ncs, 32, nb))
        for a, kc, lane in itertools.product(range(ni), range(ncs), range(32)):
            g, t = divmod(lane, 4)
            start, order = lane_load(precision, t, kc)
            col = x0 + 16 * g - R + start  # interior column of the vector's first element
            for e in range(nb):
                bfr[a, kc, lane, e] = x3[j + rs, i_row + a if dims == 3 else 0, col + order[e] + R]
        return bfr

    def chain(p, acc, bfr):
        for a in range(ni):
            li = p * ni + a
            if not ops.nonzero[li]:
                continue
            for kc, hv in itertools.product(range(ncs), range(ops.halves)):
                ka = hv * ncs + kc
                acc = _mma_sp(precision, ops.values[li, ka], ops.meta[li, ka], bfr[a, kc], acc)
        return acc

    def place(tile, i_row, y, done):
        for lane, e in itertools.product(range(32), range(4)):
            m, n = layouts.acc_c(lane, e)
            xo = tile * TILE_X + L * n + output_row(m)
            if xo < width:
                out[y, i_row, xo] = done[lane, e]

    stream_tiles(tiles, n_i, n_s, rs, ns, 4, gather, chain, place)
    return out.reshape(x.shape)
