"""The periodic ghost refresh (``ghost_shell`` in kernels/fields.cu) compiled for the host and launched the way
:meth:`tcadvisor.gpu.fields.PaddedField.refresh` launches it, against the periodic image NumPy pads.

Every kernel's check on the GPU goes through this refresh, so a ghost cell it misses or fills from the wrong
image would show there only as a stencil error; here it shows as the cell it is."""
from __future__ import annotations

import numpy as np
import pytest

import _host_cuda
from tcadvisor.data import data_dir
from tcadvisor.gpu import fields
from tcadvisor.gpu.fields import COPY_TYPE, Geometry, PaddedField

pytestmark = pytest.mark.skipif(not _host_cuda.available(), reason="needs g++ to build the kernels for the host")

POISON = -7  # every cell before the refresh: a cell it should write and does not keeps it


def _field(shape3, dtype, geometry, text=None):
    f = _host_cuda.HostField(shape3, dtype, geometry)
    f.data[...] = POISON
    rng = np.random.default_rng(sum(shape3) + geometry.gx)
    f.interior[...] = rng.integers(0, 1000, size=shape3).astype(dtype)
    defines = (("K_REAL", COPY_TYPE[np.dtype(dtype).itemsize]),)
    f._ghost = _host_cuda.compile_module("fields.cu", defines, "ghost_shell", text=text).get_function("ghost_shell")
    return f


def _refreshed_by_kernel(f) -> np.ndarray:
    PaddedField.refresh(f)  # the class's own launch, on the emulated kernel
    return f.data.copy()


def _expected(f) -> np.ndarray:
    """The periodic image in the shell, the interior as it was, the columns past the right ghost layer untouched."""
    g = f.geometry
    out = f.data.copy()
    out[:, :, :f.nx + 2 * g.gx] = np.pad(f.interior.copy(), ((g.gz, g.gz), (g.gy, g.gy), (g.gx, g.gx)), mode="wrap")
    return out


CASES = [  # (nz, ny, nx), (gz, gy, gx, pitch)
    ((5, 7, 9), (1, 2, 3, 20)),      # 3D, unequal ghost widths
    ((4, 3, 6), (2, 2, 2, 12)),      # 3D, ghosts two thirds of the interior's y extent
    ((2, 3, 2), (3, 4, 3, 16)),      # ghosts wider than the interior: the image wraps more than once
    ((1, 6, 11), (0, 2, 2, 32)),     # 2D
    ((1, 1, 13), (0, 0, 4, 24)),     # 1D
    ((6, 5, 4), (1, 1, 0, 8)),       # no x ghosts
    ((6, 9, 10), (1, 1, 3, 20)),     # 324 x ghost cells: more than one block of them
]


@pytest.mark.parametrize("shape3,geo", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_refresh_fills_the_shell_with_the_periodic_image(shape3, geo, dtype):
    f = _field(shape3, dtype, Geometry(*geo))
    want = _expected(f)
    got = _refreshed_by_kernel(f)
    np.testing.assert_array_equal(got, want)
    assert (got[:, :, f.nx + 2 * f.geometry.gx:] == POISON).all()  # beyond the shell: not written


@pytest.mark.parametrize("chunk", [1, 4, 5])
def test_ghost_rows_cut_into_chunks(monkeypatch, chunk):
    """A ghost row longer than one warp's chunk is copied by several warps, each its own cells (chunks of whole
    vectors, and of cells that split them)."""
    monkeypatch.setattr(fields, "ROW_CHUNK_BYTES", 4 * chunk)  # FP32: `chunk` cells
    f = _field((3, 4, 10), np.float32, Geometry(1, 2, 2, 16))
    blocks, args = f.shell_launch()
    assert args[10] == -(-14 // chunk)  # chunks per row: nx + 2gx = 14 cells
    np.testing.assert_array_equal(_refreshed_by_kernel(f), _expected(f))


def test_launch_covers_the_shell_once():
    """The ghost rows (whole padded rows) and the x ghosts of the interior rows are the padded box less the
    interior, cell for cell; the x ghosts' blocks are as many as their threads need."""
    g = Geometry(2, 1, 3, 32)
    nz, ny, nx = 4, 5, 6
    f = _field((nz, ny, nx), np.float64, g)
    blocks, args = f.shell_launch()
    chunks, row_blocks, edge_cells, units = args[10], args[11], args[12], args[13]
    X, Y, Z = nx + 2 * g.gx, ny + 2 * g.gy, nz + 2 * g.gz
    assert chunks == 1 and units * X + edge_cells == Z * Y * X - nz * ny * nx
    assert row_blocks == -(-units // (fields.GHOST_THREADS // 32))  # a warp per row chunk
    assert (blocks - row_blocks - 1) * fields.GHOST_THREADS < edge_cells <= (blocks - row_blocks) * fields.GHOST_THREADS


def test_no_ghosts_no_launch():
    f = _field((1, 1, 8), np.float64, Geometry(0, 0, 0, 8))
    before = f.data.copy()
    f._ghost = None  # calling it would fail
    PaddedField.refresh(f)
    np.testing.assert_array_equal(f.data, before)


@pytest.mark.parametrize("dtype, pitch, vec", [(np.float64, 20, 2), (np.float32, 20, 4), (np.float16, 24, 8),
                                              (np.float16, 20, 0), (np.float32, 22, 0)])
def test_rows_move_as_vectors_where_they_are_aligned(dtype, pitch, vec):
    """Rows whose pitch is a whole number of 16-byte vectors copy their interior columns as vectors (``vec``
    elements), the ghost columns at their ends one by one; other pitches element by element.  Both fill the shell
    with the periodic image."""
    f = _field((5, 6, 13), dtype, Geometry(2, 3, 3, pitch))
    assert f.shell_launch()[1][-1] == vec
    np.testing.assert_array_equal(_refreshed_by_kernel(f), _expected(f))


@pytest.mark.parametrize("broken", [
    ("return k < g ? k : n + k;", "return k < g ? k : n + k - 1;"),  # right-hand ghosts one cell off
    # the first vector starts before the interior: it copies the source row's ghost columns, not their image
    ("m0 = (max(x0, Gx) + vec - 1) / vec * vec;", "m0 = max(x0, Gx) / vec * vec;"),
    ("reinterpret_cast<const vec16*>(src)[v]", "reinterpret_cast<const vec16*>(src)[v + 1]"),  # vectors shifted
    ("if (i >= edge_cells) return;", "if (i >= edge_cells / 2) return;"),  # half the x ghosts never written
    ("z = Gz + (int)(r / (2 * Gy));", "z = Gz + (int)(r / (2 * Gy)) / 2;"),  # y ghost rows of the wrong planes
    ("(b - row_blocks) * blockDim.x", "(b - row_blocks) * 64"),  # the x ghosts' blocks overlap, cells left
])
def test_a_broken_refresh_fails(broken):
    """Negative controls: each of these wrong kernels leaves or writes a wrong cell the comparison sees."""
    text = (data_dir("kernels") / "fields.cu").read_text()
    assert broken[0] in text
    f = _field((6, 9, 10), np.float64, Geometry(1, 2, 3, 20), text=text.replace(broken[0], broken[1]))
    assert f.shell_launch()[1][-1] == 2  # the vector path: its two mutants must show
    assert not np.array_equal(_refreshed_by_kernel(f), _expected(f))
