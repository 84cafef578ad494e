"""The Tensor Core kernels' streaming loop, shared by their NumPy emulations.

Every bundled Tensor Core kernel (dense FP64/TF32 in :mod:`tcadvisor.transforms.rowband`,
dense 16-bit in :mod:`tcadvisor.gpu.dense16`, sparse in :mod:`tcadvisor.gpu.sparse_operands`)
streams the outermost axis the same way: a warp tile holds one accumulator
fragment per output slice still in progress; at each input slice j, kernel row p
of the stencil's streamed axis adds its MMAs to the slice that row p completes
or advances (row ns − 1 finishes the oldest pending slice, row 0 starts a new
one), and the finished slice is stored.  The kernels differ in how operand
fragments are gathered, which MMA they chain and where an accumulator element
lands; those are the callbacks here, so the loop itself is written once.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np


def stream_tiles(tiles: int, n_i: int, n_s: int, rs: int, ns: int, acc_width: int,
                 gather: Callable[[int, int, int], object],
                 chain: Callable[[int, np.ndarray, object], np.ndarray],
                 place: Callable[[int, int, int, np.ndarray], None]) -> None:
    """Run the loop over ``tiles`` warp tiles × ``n_i`` inner rows × the ``n_s`` streamed slices.

    ``rs``: the streamed axis' radius (slices −rs … n_s + rs − 1 are read);
    ``ns``: kernel rows along it (2·rs + 1, or 1 in 1D); ``acc_width``:
    accumulator registers per lane.  ``gather(tile, i_row, j)`` returns the
    operand fragments of input slice j; ``chain(p, acc, fragments)`` adds kernel
    row p's MMAs to ``acc`` and returns it; ``place(tile, i_row, y, done)``
    stores the finished accumulator of output slice y.
    """
    for tile, i_row in itertools.product(range(tiles), range(n_i)):
        pend = [np.zeros((32, acc_width)) for _ in range(ns - 1)]
        for j in range(-rs, n_s + rs):  # stream slices (padded coordinate j + rs)
            frags = gather(tile, i_row, j)
            done = chain(ns - 1, pend[0] if ns > 1 else np.zeros((32, acc_width)), frags)
            new = [chain(ns - 1 - m, pend[m], frags) for m in range(1, ns - 1)]
            if ns > 1:
                new.append(chain(0, np.zeros((32, acc_width)), frags))
            pend = new
            y = j - rs  # the slice whose output is now complete
            if 0 <= y < n_s:
                place(tile, i_row, y, done)
