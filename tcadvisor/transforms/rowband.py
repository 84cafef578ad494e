"""The bundled dense Tensor Core kernel's transformation: banded kernel rows, 8 outputs per group.

This is the ConvStencil family (flatten the fused kernel into a matrix product)
in the form the bundled kernel ``kernels/tensor_cores.cu`` executes:

* Outputs along x are cut into *groups* of 8 consecutive points (the n of the
  MMA instruction).  Group q of a warp tile reads the input strip
  ``x0 − R + 8q … x0 − R + 8q + n + 6`` of an input row (n = 2R+1).
* Each non-empty kernel row (2D: row a; 3D: row a of plane p) becomes one
  weight matrix ``B[k, c] = w[k − c]`` of shape K_pad × 8 (a band: every output
  column c of the group sees the same n weights, shifted by c), with
  K = n + 7 padded to a multiple of the instruction's k.
* The Tensor Cores multiply M = 16 groups (m16n8k*) or 8 groups (m8n8k4) of
  input strips by B and accumulate the kernel rows of one output row; the
  kernel streams input rows and keeps the pending output rows in registers.

α = nnz(B) / size(B) over the non-empty kernel rows, n/K_pad for a box row
(7/16 for a 7×7 box on m16n8k8).  The same ``construct`` builds the matrices the
kernel uploads (in fragment order, see :func:`fragments`), so the model's α
and the kernel cannot disagree.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..reference import radius_of
from .base import AlphaCount, Construction, check_weights, kernel_lines, pad_to
from .warp_stream import stream_tiles

NAME = "rowband"
TITLE = "tcadvisor row band"
DIMS = (1, 2, 3)
SPARSE = False
GROUP = 8  # outputs per group = the instruction's n


def band(row: np.ndarray, k_pad: int, lead: int = 0) -> np.ndarray:
    """``B[k, c] = row[k − lead − c]``: column c of the group applies the row shifted by c."""
    n = len(row)
    mat = np.zeros((k_pad, GROUP), dtype=np.asarray(row).dtype)
    for c in range(GROUP):
        mat[lead + c : lead + c + n, c] = row
    return mat


def lead_of(R: int) -> int:
    """Empty columns in front of the strip: 1 for odd R, so the strip starts on an even column.

    The kernel loads a lane's adjacent strip columns as one vector and stores output
    pairs as one vector; both need even columns, and with the interior at an even
    offset only an even R allows both.  For odd R the strip starts one column
    earlier: n + 7 = 2R + 8 is then never a multiple of 4, so K_pad (and α) do not
    change.
    """
    return R % 2


def _check_shape(shape: MmaShape) -> None:
    if shape.n != GROUP:
        raise TcAdvisorError(f"the row-band kernel needs an instruction with n = {GROUP}, got {shape}")


def padded_k(R: int, shape: MmaShape) -> int:
    """K_pad: the band of a fused radius R (n = 2R+1 weights, 8 output columns, the lead) padded to k."""
    return pad_to(2 * R + 1 + GROUP - 1 + lead_of(R), shape.k)


def _geometry(R: int, shape: MmaShape, rows: int) -> tuple[dict, Fraction]:
    n, lead = 2 * R + 1, lead_of(R)
    k_pad = padded_k(R, shape)
    details = {"n_k": n, "R": R, "lead": lead, "K": n + GROUP - 1 + lead, "K_pad": k_pad,
               "chunks": k_pad // shape.k, "n_rows": rows, "groups_per_tile": shape.m,
               "tile_x": shape.m * GROUP, "matrices": f"{rows} row bands of {k_pad} x {GROUP}"}
    return details, Fraction(rows * k_pad)


def construct(weights: np.ndarray, shape: MmaShape, permuted: bool = True, precision: str = "fp64") -> Construction:
    """The banded weight matrices of every non-empty kernel row, padded to the MMA shape.

    ``permuted`` records how the kernel feeds the instruction's k index from the
    strip (:func:`strip_offset`); it changes the upload order, not the matrices.
    Executed MACs per output point: rows · K_pad (each group of 8 outputs runs
    every row's K_pad × 8 band).
    """
    _check_shape(shape)
    w = check_weights(weights)
    R = radius_of(w)
    rows = kernel_lines(w)
    details, executed = _geometry(R, shape, len(rows))
    k_pad, lead = details["K_pad"], details["lead"]
    details.update(rows=[idx for idx, _ in rows], permuted=permuted)
    return Construction(NAME, shape, [band(row, k_pad, lead) for _, row in rows], details,
                        Fraction(int(np.count_nonzero(w))), executed, precision)


def count(support, shape: MmaShape, precision: str = "fp64") -> AlphaCount:
    """The counts of :func:`construct` from the radius, points and non-empty rows of the support."""
    _check_shape(shape)
    details, executed = _geometry(support.R, shape, support.n_lines())
    return AlphaCount(NAME, shape, precision, support.P, executed, details)


# --------------------------------------------------------------------------- fragment layouts
# Per-lane element positions of the warp-level mma.sync operands (PTX ISA, "Matrix
# fragments for mma"); g = lane // 4, t = lane % 4.  The CUDA kernel uses the same
# formulas (kernels/tensor_cores.cu, A_ROW/A_COL/B_ROW/C_ROW/C_COL).


def a_pos(shape: MmaShape, lane: int, i: int) -> tuple[int, int]:
    """(row = group, k) of element i of lane's A fragment."""
    g, t = divmod(lane, 4)
    if shape.m == 8:
        return g, t
    return g + 8 * (i & 1), t + 4 * (i >> 1)


def b_pos(shape: MmaShape, lane: int, j: int) -> tuple[int, int]:
    """(k, column) of element j of lane's B fragment."""
    g, t = divmod(lane, 4)
    return t + 4 * j, g


def c_pos(shape: MmaShape, lane: int, i: int) -> tuple[int, int]:
    """(row = group, column) of element i of lane's C/D fragment."""
    g, t = divmod(lane, 4)
    if shape.m == 8:
        return g, 2 * t + i
    return g + 8 * (i >> 1), 2 * t + (i & 1)


def strip_offset(shape: MmaShape, k: int, permuted: bool = True) -> int:
    """Strip column (within a K chunk) that feeds the instruction's k index ``k``.

    Lane t of an m16n8k* fragment holds k = t, t+4, t+8, ...; mapping those to the
    adjacent strip columns (k/4)·… lets every lane fetch its values of one group
    row with a single 16-byte load (FP64).  B's rows are permuted the same way (see
    :func:`fragments`), so the product is unchanged.  m8n8k4 holds one k per lane,
    and the TF32 kernel loads single words (4 lanes read 16 contiguous bytes): no
    permutation there.
    """
    if shape.m == 8 or not permuted:
        return k
    per_lane = shape.k // 4
    return per_lane * (k % 4) + k // 4


def a_count(shape: MmaShape) -> int:
    return shape.m * shape.k // 32


def b_count(shape: MmaShape) -> int:
    return shape.k * shape.n // 32


def c_count(shape: MmaShape) -> int:
    return shape.m * shape.n // 32


def fragments(con: Construction, all_rows: list[tuple[int, ...]]) -> np.ndarray:
    """The weight matrices in the order the kernel loads them: [row][chunk][lane][element].

    ``all_rows`` lists every kernel row the kernel iterates (empty rows get zeros
    and are skipped by the kernel at compile time, so they are never executed).
    """
    shape = con.shape
    chunks = con.details["chunks"]
    nb = b_count(shape)
    out = np.zeros((len(all_rows), chunks, 32, nb), dtype=np.float64)
    by_idx = dict(zip(con.details["rows"], con.operands))
    for r_, idx in enumerate(all_rows):
        mat = by_idx.get(idx)
        if mat is None:
            continue
        for c, lane, j in itertools.product(range(chunks), range(32), range(nb)):
            k, col = b_pos(shape, lane, j)
            out[r_, c, lane, j] = mat[c * shape.k + strip_offset(shape, k, con.details["permuted"]), col]
    return out


# --------------------------------------------------------------------------- emulation


def _mma(shape: MmaShape, a_frag: np.ndarray, b_frag: np.ndarray, c_frag: np.ndarray) -> np.ndarray:
    """One warp-wide mma.sync from per-lane fragments, returning per-lane D fragments."""
    A = np.zeros((shape.m, shape.k))
    B = np.zeros((shape.k, shape.n))
    C = np.zeros((shape.m, shape.n))
    for lane in range(32):
        for i in range(a_count(shape)):
            A[a_pos(shape, lane, i)] = a_frag[lane, i]
        for j in range(b_count(shape)):
            B[b_pos(shape, lane, j)] = b_frag[lane, j]
        for i in range(c_count(shape)):
            C[c_pos(shape, lane, i)] = c_frag[lane, i]
    D = A @ B + C
    return np.array([[D[c_pos(shape, lane, i)] for i in range(c_count(shape))] for lane in range(32)])


def emulate(x: np.ndarray, weights: np.ndarray, shape: MmaShape, permuted: bool = True,
            precision: str = "fp64") -> np.ndarray:
    """One periodic step through the kernel's dataflow, lane by lane and MMA by MMA.

    Mirrors ``kernels/tensor_cores.cu``: warp tiles of ``shape.m`` groups × 8
    outputs along x; the outermost axis is streamed, pending output rows are kept
    as accumulator fragments and shifted as each input slice arrives; A fragments
    are gathered from the input with the kernel's index formulas; B fragments come
    from :func:`fragments`.  Slow, for small test grids only.
    """
    w = np.asarray(weights, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    R = radius_of(w)
    n = 2 * R + 1
    dims = x.ndim
    con = construct(w, shape, permuted)
    chunks, k = con.details["chunks"], shape.k
    # Kernel rows as (stream offset p, inner offset a); 1D has one row, 2D streams y, 3D streams z with inner y.
    ns = 1 if dims == 1 else n
    ni = n if dims == 3 else 1
    all_rows = [(p, a) for p in range(ns) for a in range(ni)]
    row_key = {1: lambda p, a: (), 2: lambda p, a: (p,), 3: lambda p, a: (p, a)}[dims]
    frag = fragments(con, [row_key(p, a) for p, a in all_rows])
    nonzero = {row_key(p, a) for p, a in all_rows} & set(con.details["rows"])
    # Periodic padding: R on every axis, plus enough on the right for the last tile's strips.
    tile_x = shape.m * GROUP
    width = x.shape[-1]
    tiles = -(-width // tile_x)
    shift = con.details["lead"]
    extra = tiles * tile_x + con.details["K_pad"] - width
    pad = [(R, R)] * (dims - 1) + [(R + shift, R + extra)]
    xp = np.pad(x, pad, mode="wrap")
    # View every case as (stream, inner, x): 1D (1, 1, x), 2D (y, 1, x), 3D (z, y, x).
    as3 = {1: lambda a: a[None, None, :], 2: lambda a: a[:, None, :], 3: lambda a: a}[dims]
    x3 = as3(xp)
    out = as3(np.zeros(x.shape)).copy()
    n_s, n_i = out.shape[0], out.shape[1]
    rs, ri = (R if dims >= 2 else 0), (R if dims == 3 else 0)
    na, nc = a_count(shape), c_count(shape)
    def gather(tile, i_row, j):  # A fragments of every inner row of slice j
        x0 = tile * tile_x
        a_frags = np.zeros((ni, chunks, 32, na))
        for a, c, lane, e in itertools.product(range(ni), range(chunks), range(32), range(na)):
            q, kk = a_pos(shape, lane, e)
            col = x0 - R - shift + GROUP * q + c * k + strip_offset(shape, kk, permuted)
            a_frags[a, c, lane, e] = x3[j + rs, i_row + a if dims == 3 else 0, col + R + shift]
        return a_frags

    def chain(p, acc, a_frags):
        for a in range(ni):
            if row_key(p, a) not in nonzero:
                continue
            r_ = all_rows.index((p, a))
            for c in range(chunks):
                acc = _mma(shape, a_frags[a, c], frag[r_, c], acc)
        return acc

    def place(tile, i_row, y, done):
        for lane, e in itertools.product(range(32), range(nc)):
            q, col = c_pos(shape, lane, e)
            xo = tile * tile_x + GROUP * q + col
            if xo < width:
                out[y, i_row, xo] = done[lane, e]

    stream_tiles(tiles, n_i, n_s, rs, ns, nc, gather, chain, place)
    return out.reshape(x.shape)
