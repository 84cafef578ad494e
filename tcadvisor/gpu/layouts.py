"""Per-lane operand layouts of the warp-level MMA instructions the 16-bit and sparse kernels issue.

Positions follow the PTX ISA (sections cited per function); ``g = lane // 4``
("groupID"), ``t = lane % 4`` ("threadID_in_group").  The CUDA kernels use the
same formulas, the host packs uploaded fragments with them and the NumPy
emulations decode fragments with them, so a layout mistake shows up as a wrong
stencil in the CPU tests *and* on the GPU.  (The 32/64-bit dense layouts live in
:mod:`tcadvisor.transforms.rowband`.)

Sparse instructions view the A matrix in *groups*: 4 consecutive k of FP16/BF16
(2:4, two kept values, two 2-bit indices) or 2 consecutive k of TF32 (1:2, one
kept value).  In the 16-bit "half-word" view a TF32 element is two halves, so
sparse m16n8k16.tf32 has exactly the register layout of sparse m16n8k32.f16 —
the PTX ISA's TF32 metadata values 0b0100 / 0b1110 are the FP16 index pairs
(0, 1) / (2, 3) of that view.
"""
from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- dense m16n8k16 .f16/.bf16


def dense16_a(lane: int, e: int) -> tuple[int, int]:
    """(row, k) of half e (0..7) of lane's A fragment, mma.m16n8k16 .f16/.bf16.

    PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
    row = g for a0,a1,a4,a5, g + 8 otherwise; col = 2t + (i & 1), + 8 for i ≥ 4.
    """
    g, t = divmod(lane, 4)
    row = g + 8 * ((e >> 1) & 1)
    return row, 2 * t + (e & 1) + 8 * (e >> 2)


def dense16_b(lane: int, e: int) -> tuple[int, int]:
    """(k, col) of half e (0..3) of lane's B fragment, mma.m16n8k16 .f16/.bf16 (same section):
    row = 2t + (i & 1), + 8 for i ≥ 2; col = g."""
    g, t = divmod(lane, 4)
    return 2 * t + (e & 1) + 8 * (e >> 1), g


def acc_c(lane: int, e: int) -> tuple[int, int]:
    """(row, col) of float e (0..3) of lane's C/D fragment for every m16n8 shape with .f32 accumulators
    (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"): row = g (e < 2) or g + 8,
    col = 2t + (e & 1)."""
    g, t = divmod(lane, 4)
    return g + 8 * (e >> 1), 2 * t + (e & 1)


def dense16_strip(k: int) -> int:
    """Strip column (within a 16-wide K chunk) that feeds instruction index k in the dense 16-bit kernel.

    Lane t holds k ∈ {2t, 2t+1, 2t+8, 2t+9} of each A row; mapping them to the
    adjacent strip columns 4t … 4t+3 lets the lane fetch its four halves of a row
    with one 8-byte load.  B's rows are permuted the same way on the host.
    """
    return 4 * ((k >> 1) & 3) + 2 * (k >> 3) + (k & 1)


# --------------------------------------------------------------------------- sparse (mma.sp)
#: Per precision: (instruction k, group width, kept values per group).
SPARSE = {"fp16": (32, 4, 2), "bf16": (32, 4, 2), "tf32": (16, 2, 1)}


def sparse_a(precision: str, lane: int, reg: int) -> tuple[int, int]:
    """(row, group) whose kept value(s) register ``reg`` (0..3) of lane's A fragment holds.

    PTX ISA, "Matrix Fragments for sparse mma.m16n8k32 with .f16/.bf16 type":
    a0..a3 hold the two non-zeros of columns 4t … 4t+3 (a0, a1: row g; a2, a3: row
    g + 8), a4..a7 those of columns 16 + 4t …; two halves per register, the
    first kept value in the low half.  "… sparse mma.m16n8k16 with .tf32": a0 (row
    g) and a1 (row g + 8) hold the non-zero of columns 2t … 2t+1, a2, a3 that of
    8 + 2t ….  In group units both read: group = t + 4·(reg >> 1), row = g + 8·(reg & 1).
    """
    g, t = divmod(lane, 4)
    return g + 8 * (reg & 1), t + 4 * (reg >> 1)


def sparse_meta(precision: str, lane: int, nibble: int) -> tuple[int, int] | None:
    """(row, group) described by 4-bit field ``nibble`` (0..7) of lane's metadata, sparsity selector 0.

    PTX ISA, "Sparse matrix storage": for m16n8k32 (.f16/.bf16) and m16n8k16
    (.tf32) a thread pair of each quad contributes metadata, selector 0 = threads
    T0, T1.  Thread T0 describes the first 16-bit half of the row's k range (FP16:
    columns 0-15, TF32: 0-7), T1 the second; bits 0-15 row g, bits 16-31 row g + 8,
    one 4-bit field per group from the lowest bits up (the layout of "Sparse MMA
    .m16n8k32 metadata layout for .f16/.bf16 type"; TF32 is the same in the
    half-word view).  Returns None for lanes that contribute nothing (t ≥ 2).
    """
    g, t = divmod(lane, 4)
    if t >= 2:
        return None
    return g + 8 * (nibble >> 2), 4 * t + (nibble & 3)


def sparse_b(precision: str, lane: int, e: int) -> tuple[int, int]:
    """(k, col) of element e of lane's B fragment.

    FP16/BF16 (8 halves in four registers): k = 8·(e >> 1) + 2t + (e & 1), the
    sparse m16n8k32 B layout ("Sparse MMA .m16n8k32 fragment layout for matrix B
    with .f16/.bf16 type": four 8-row slices, each as in dense m16n8k16).  TF32
    (four registers): k = t + 4e ("… for matrix B with .tf32 type", as in dense
    m16n8k8 extended to k = 16).  col = g.
    """
    g, t = divmod(lane, 4)
    if precision == "tf32":
        return t + 4 * e, g
    return 8 * (e >> 1) + 2 * t + (e & 1), g


def b_count(precision: str) -> int:
    return 4 if precision == "tf32" else 8


def nibble(indices, precision: str) -> int:
    """The 4-bit metadata field of one group from the kept positions (ascending).

    FP16/BF16: idx0 | idx1 << 2 (ordered metadata needs idx0 < idx1: 0b0100,
    0b1000, 0b1001, 0b1100, 0b1101, 0b1110).  TF32: 0b0100 for position 0,
    0b1110 for position 1 (PTX ISA, "Sparse matrix storage").
    """
    if precision == "tf32":
        (i,) = indices
        return 0b0100 if i == 0 else 0b1110
    i0, i1 = indices
    if not 0 <= i0 < i1 <= 3:
        raise ValueError(f"2:4 indices must be ascending and distinct, got {indices}")
    return int(i0) | int(i1) << 2


def unnibble(value: int, precision: str) -> tuple[int, ...]:
    """Kept positions of a group from its 4-bit metadata field (inverse of :func:`nibble`)."""
    if precision == "tf32":
        if value not in (0b0100, 0b1110):
            raise ValueError(f"invalid TF32 sparse metadata {value:#06b}")
        return (0,) if value == 0b0100 else (1,)
    i0, i1 = value & 3, value >> 2
    if not i0 < i1:
        raise ValueError(f"invalid 2:4 sparse metadata {value:#06b}")
    return i0, i1


def decode_sparse_a(precision: str, values: np.ndarray, meta: np.ndarray) -> np.ndarray:
    """The dense 16 × k A matrix one mma.sp multiplies, from per-lane fragments as the hardware reads them.

    ``values[lane, reg, s]``: kept value s (FP16/BF16: 0, 1; TF32: 0) of register
    reg; ``meta[lane]``: the 32-bit metadata registers (lanes with t ≥ 2 ignored).
    """
    k, width, keep = SPARSE[precision]
    groups = k // width
    pos = [[None] * groups for _ in range(16)]
    for lane in range(32):
        for nb in range(8):
            where = sparse_meta(precision, lane, nb)
            if where is None:
                continue
            row, grp = where
            pos[row][grp] = unnibble((int(meta[lane]) >> (4 * nb)) & 0xF, precision)
    A = np.zeros((16, k))
    for lane in range(32):
        for reg in range(4):
            row, grp = sparse_a(precision, lane, reg)
            kept = pos[row][grp]
            if kept is None:
                raise ValueError(f"no metadata for row {row}, group {grp}")
            for s in range(keep):
                A[row, grp * width + kept[s]] = values[lane, reg, s]
    return A


def encode_sparse_a(precision: str, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-lane fragments of a 16 × k structured sparse A: (values[lane, reg, kept], metadata words[lane]).

    Compression as :func:`tcadvisor.transforms.spider.compress` does it (kept
    positions ascending, explicit zeros at the lowest free positions); placement
    by :func:`sparse_a` and :func:`sparse_meta`.  Inverse of :func:`decode_sparse_a`.
    """
    from ..transforms.spider import compress

    k, width, keep = SPARSE[precision]
    vals, pos = compress(np.asarray(A), keep, width)
    values = np.zeros((32, 4, keep))
    meta = np.zeros(32, dtype=np.uint64)
    for lane in range(32):
        for reg in range(4):
            row, grp = sparse_a(precision, lane, reg)
            values[lane, reg] = vals[row, grp * keep:(grp + 1) * keep]
        word = 0
        for nb in range(8):
            where = sparse_meta(precision, lane, nb)
            if where is not None:
                row, grp = where
                word |= nibble(tuple(pos[row, grp * keep:(grp + 1) * keep]), precision) << (4 * nb)
        meta[lane] = word
    return values, meta.astype(np.uint32)
