"""FP16/BF16 fragments of the dense Tensor Core kernel (m16n8k16, FP32 accumulation), and their NumPy twin.

The operands are :func:`tcadvisor.transforms.rowband.construct`'s banded weight
matrices (the ones the advisor counts α with).  16-bit fragments pack two
values per register in a different order than the 32/64-bit ones
(:mod:`tcadvisor.gpu.layouts`), so the kernel's strip columns feed the
instruction's k in the order :func:`tcadvisor.gpu.layouts.dense16_strip`: a
lane's four halves of a group row are adjacent (one 8-byte load), and the B
fragments are uploaded with their rows permuted the same way.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..mma import MmaShape
from ..reference import radius_of
from ..transforms import rowband
from ..transforms.base import Construction
from ..transforms.warp_stream import stream_tiles
from . import layouts

SHAPE = MmaShape(16, 8, 16)


def fragments(con: Construction, all_rows: list[tuple[int, ...]]) -> np.ndarray:
    """Weight matrices in upload order, float64 [row][chunk][lane][4 halves] (two registers per lane)."""
    chunks = con.details["chunks"]
    out = np.zeros((len(all_rows), chunks, 32, 4))
    by_idx = dict(zip(con.details["rows"], con.operands))
    for r_, idx in enumerate(all_rows):
        mat = by_idx.get(idx)
        if mat is None:
            continue
        for c, lane, e in itertools.product(range(chunks), range(32), range(4)):
            k, col = layouts.dense16_b(lane, e)
            out[r_, c, lane, e] = mat[c * SHAPE.k + layouts.dense16_strip(k), col]
    return out


def _mma(a_frag: np.ndarray, b_frag: np.ndarray, c_frag: np.ndarray) -> np.ndarray:
    """One warp-wide mma.m16n8k16 from per-lane fragments (a: [32][8] halves, b: [32][4], c: [32][4])."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    C = np.zeros((16, 8))
    for lane in range(32):
        for e in range(8):
            A[layouts.dense16_a(lane, e)] = a_frag[lane, e]
        for e in range(4):
            B[layouts.dense16_b(lane, e)] = b_frag[lane, e]
            C[layouts.acc_c(lane, e)] = c_frag[lane, e]
    D = A @ B + C
    return np.array([[D[layouts.acc_c(lane, e)] for e in range(4)] for lane in range(32)])


def emulate(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One periodic step through the 16-bit dense kernel's dataflow, lane by lane (float64 arithmetic).

    As :func:`tcadvisor.transforms.rowband.emulate`, but with the 16-bit
    layouts: register r of a lane's A fragment holds the halves at strip columns
    ``8·(g + 8·(r & 1)) + 16·c + 4t + 2·(r >> 1) + {0, 1}`` (the kernel's 8-byte load).
    """
    w = np.asarray(weights, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    R = radius_of(w)
    n = 2 * R + 1
    dims = x.ndim
    con = rowband.construct(w, SHAPE, permuted=True)
    chunks = con.details["chunks"]
    ns = 1 if dims == 1 else n
    ni = n if dims == 3 else 1
    row_key = {1: lambda p, a: (), 2: lambda p, a: (p,), 3: lambda p, a: (p, a)}[dims]
    all_rows = [row_key(p, a) for p in range(ns) for a in range(ni)]
    frag = fragments(con, all_rows)
    nonzero = set(con.details["rows"])
    tile_x = SHAPE.m * rowband.GROUP
    width = x.shape[-1]
    tiles = -(-width // tile_x)
    lead = con.details["lead"]
    extra = tiles * tile_x + con.details["K_pad"] - width
    pad = [(R, R)] * (dims - 1) + [(R + lead, R + extra)]
    as3 = {1: lambda a: a[None, None, :], 2: lambda a: a[:, None, :], 3: lambda a: a}[dims]
    x3 = as3(np.pad(x, pad, mode="wrap"))  # strip column s of tile x0 at padded column x0 + s
    out = as3(np.zeros(x.shape)).copy()
    n_s, n_i = out.shape[0], out.shape[1]
    rs = R if dims >= 2 else 0
    def gather(tile, i_row, j):
        x0 = tile * tile_x
        a_frags = np.zeros((ni, chunks, 32, 8))
        for a, c, lane, r, b in itertools.product(range(ni), range(chunks), range(32), range(4), range(2)):
            g, t = divmod(lane, 4)
            strip = 8 * (g + 8 * (r & 1)) + 16 * c + 4 * t + 2 * (r >> 1) + b
            a_frags[a, c, lane, 2 * r + b] = x3[j + rs, i_row + a if dims == 3 else 0, x0 + strip]
        return a_frags

    def chain(p, acc, a_frags):
        for a in range(ni):
            if row_key(p, a) not in nonzero:
                continue
            r_ = p * ni + a
            for c in range(chunks):
                acc = _mma(a_frags[a, c], frag[r_, c], acc)
        return acc

    def place(tile, i_row, y, done):
        for lane, e in itertools.product(range(32), range(4)):
            q, col = layouts.acc_c(lane, e)
            xo = tile * tile_x + rowband.GROUP * q + col
            if xo < width:
                out[y, i_row, xo] = done[lane, e]

    stream_tiles(tiles, n_i, n_s, rs, ns, 4, gather, chain, place)
    return out.reshape(x.shape)
