"""Padded fields on the GPU: the interior plus periodic ghost layers.

A 1D/2D/3D domain is stored as (nz + 2Gz) × (ny + 2Gy) × pitch elements with
the interior at offset (Gz, Gy, Gx).  Before each sweep :meth:`PaddedField.refresh`
copies the periodic image into the ghost cells, so a fused sweep of t steps
computes exactly t steps of the periodic problem.  Extra columns beyond the right
ghost layer (kernels read a little past it for padded MMA operands) are zero
and stay zero.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import cupy, module

#: C type the ghost refresh copies elements as (a bitwise copy: 16-bit types are FP16 or BF16 patterns).
COPY_TYPE = {8: "double", 4: "float", 2: "short"}
#: Threads per block of the ghost refresh, and the bytes of a ghost row one of its warps copies: two 16-byte
#: vectors per lane, so that even the few long rows of a 2D field are cut among many warps (4096-cell chunks, 4-64
#: vectors per lane, measured 0.31-0.60x on 10240^2: validation/results/h100-sxm-2026-11-28/refresh-vectors/).
GHOST_THREADS = 256
ROW_CHUNK_BYTES = 1024
#: Bytes of the vectors the refresh copies a ghost row's interior columns with, where the rows are aligned to them.
VECTOR_BYTES = 16


@dataclass(frozen=True)
class Geometry:
    """Ghost widths and row pitch (elements) needed by a kernel."""

    gz: int
    gy: int
    gx: int
    pitch: int

    def merge(self, other: "Geometry") -> "Geometry":
        return Geometry(max(self.gz, other.gz), max(self.gy, other.gy), max(self.gx, other.gx),
                        max(self.pitch, other.pitch))


class PaddedField:
    def __init__(self, shape3: tuple[int, int, int], dtype, geometry: Geometry):
        cp = cupy()
        self.nz, self.ny, self.nx = shape3
        self.geometry = geometry
        self.dtype = np.dtype(dtype)
        g = geometry
        if g.pitch < g.gx * 2 + self.nx:
            raise ValueError("pitch too small for the interior and its ghosts")
        self.data = cp.zeros((self.nz + 2 * g.gz, self.ny + 2 * g.gy, g.pitch), dtype=self.dtype)
        self._ghost = module("fields.cu", (("K_REAL", COPY_TYPE[self.dtype.itemsize]),)).get_function("ghost_shell")

    @property
    def interior(self):
        g = self.geometry
        return self.data[g.gz:g.gz + self.nz, g.gy:g.gy + self.ny, g.gx:g.gx + self.nx]

    @property
    def pitch_y(self) -> int:
        return self.geometry.pitch

    @property
    def pitch_z(self) -> int:
        return (self.ny + 2 * self.geometry.gy) * self.geometry.pitch

    def ghost_regions(self) -> list[tuple[int, int, int, int, int, int]]:
        """Boxes (z0, z1, y0, y1, x0, x1) in padded coordinates that cover the ghost shell once."""
        g = self.geometry
        Z, Y, X = self.nz + 2 * g.gz, self.ny + 2 * g.gy, self.nx + 2 * g.gx
        out = []
        if g.gz:
            out += [(0, g.gz, 0, Y, 0, X), (g.gz + self.nz, Z, 0, Y, 0, X)]
        if g.gy:
            out += [(g.gz, g.gz + self.nz, 0, g.gy, 0, X), (g.gz, g.gz + self.nz, g.gy + self.ny, Y, 0, X)]
        if g.gx:
            out += [(g.gz, g.gz + self.nz, g.gy, g.gy + self.ny, 0, g.gx),
                    (g.gz, g.gz + self.nz, g.gy, g.gy + self.ny, g.gx + self.nx, X)]
        return out

    def shell_launch(self) -> tuple[int, tuple]:
        """Blocks of :data:`GHOST_THREADS` threads and the arguments of ``ghost_shell`` (kernels/fields.cu) for
        this field: ghost rows cut into chunks of :data:`ROW_CHUNK_BYTES`, one warp per chunk, then one thread per
        x ghost cell of the interior rows.  Where every row starts on a :data:`VECTOR_BYTES` boundary, the rows'
        interior columns move as vectors (``vec`` elements each; 0: one by one)."""
        g = self.geometry
        rows = 2 * g.gz * (self.ny + 2 * g.gy) + self.nz * 2 * g.gy
        chunk = max(1, ROW_CHUNK_BYTES // self.dtype.itemsize)
        chunks = -(-(self.nx + 2 * g.gx) // chunk)
        units = rows * chunks
        row_blocks = -(-units // (GHOST_THREADS // 32))
        edge_cells = self.nz * self.ny * 2 * g.gx
        blocks = row_blocks + -(-edge_cells // GHOST_THREADS)
        vec = VECTOR_BYTES // self.dtype.itemsize
        if self.pitch_y % vec or self._address() % VECTOR_BYTES:
            vec = 0
        i32, i64 = np.int32, np.int64
        return blocks, (self.data, i32(self.nz), i32(self.ny), i32(self.nx), i32(g.gz), i32(g.gy), i32(g.gx),
                        i64(self.pitch_z), i64(self.pitch_y), i32(chunk), i32(chunks), i64(row_blocks),
                        i64(edge_cells), i64(units), i32(vec))

    def _address(self) -> int:
        """The data's address (CuPy's device pointer; a NumPy array's, for the host emulation of the tests)."""
        mem = self.data.data
        return mem.ptr if hasattr(mem, "ptr") else self.data.ctypes.data

    def refresh(self) -> None:
        """The periodic image into every ghost cell, one launch (nothing to do without ghosts)."""
        blocks, args = self.shell_launch()
        if blocks:
            self._ghost((blocks,), (GHOST_THREADS,), args)
