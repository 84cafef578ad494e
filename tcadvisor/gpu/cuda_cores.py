"""The bundled CUDA-core kernels (temporal fusion), set up and launched from Python.

``kernels/cuda_cores_2d.cu`` serves 1D (as one row, y-radius 0) and 2D;
``kernels/cuda_cores_3d.cu`` serves 3D.  This module picks the compile-time
shape of a launch (columns per thread, threads, tile), sizes the ghost layers
and row pitch the kernel reads, and counts the FLOPs it executes.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..stencil import Stencil
from .backend import blocks_per_sm, cupy, device_info, module, split_stream
from .checking import Stage, SweepModel
from .fields import Geometry, PaddedField
from .kernel import BundledKernel
from .numerics import UNIT_ROUNDOFF

#: Pending partial sums a thread may keep per launch before columns per thread are reduced.
PEND_LIMIT = 64
#: Rows each 1D/2D block advances per iteration (input rows in flight per block); one row from this depth
#: on (FP64 / FP32), where the t + 1 buffered steps make shared memory the limit on resident warps
#: (validation/results/h100-sxm-2026-11-23/kernels/tuning-cc-deep.csv: Box-2D1R double t = 13 695 vs 417
#: GStencils/s, t = 7 736 vs 652; float t = 8 1159 vs 956).
DEFAULT_ROWS_PER_ITER = 2
ONE_ROW_FROM = {"fp64": 7, "fp32": 8}


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


#: Which kernel's weights each compiled module's ``__constant__`` array holds (modules are cached for the
#: life of the process, so their ids are stable; the kernels are held weakly).
_WEIGHTS_OWNER: "weakref.WeakValueDictionary[int, CudaCoreKernel]" = weakref.WeakValueDictionary()


class CudaCoreKernel(BundledKernel):
    """t fused steps of a box or star stencil on CUDA cores, one sweep per call."""

    name = "cuda_cores"
    unit = "cuda_core"
    cuda_function = "cc_stream2d|cc_stream3d"
    precisions = ("fp64", "fp32")
    REAL = {"fp64": "double", "fp32": "float"}

    @classmethod
    def unsupported(cls, stencil: Stencil, fuse: int, dtype: str, precision: str,
                    device: dict | None = None) -> str | None:
        why = super().unsupported(stencil, fuse, dtype, precision, device)
        if why:
            return why
        if stencil.shape not in ("box", "star"):
            return f"the bundled CUDA-core kernel runs box and star stencils, not {stencil.name}"
        if cls.REAL[precision] != dtype:
            return f"the CUDA-core kernel stores {precision.upper()} fields, not {dtype}"
        return None

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                 mma: MmaShape | None = None, v: int | None = None, cols: int | None = None,
                 rows_per_iter: int | None = None):
        why = self.unsupported(stencil, fuse, dtype, precision)
        if why:
            raise TcAdvisorError(why)
        if mma is not None:
            raise TcAdvisorError("--mma applies to the Tensor Core kernels only")
        super().__init__(stencil, fuse, dtype, precision, weights)
        self.real = self.REAL[precision]
        r, t = stencil.radius, fuse
        self.halo = r * t
        star = int(stencil.shape == "star" and stencil.dims > 1)
        if stencil.dims <= 2:
            ry = r if stencil.dims == 2 else 0
            # Defaults measured on an H100 (validation/results/*/tuning.csv): narrow strips of
            # 2 columns per thread keep enough blocks resident; wide ones pay off at deep fusion.
            dv, dcols = (2, 256) if precision == "fp64" else ((2, 512) if t < ONE_ROW_FROM["fp32"] else (4, 1024))
            if v is None:
                v = dv
                while v > 1 and t * 2 * ry * v > PEND_LIMIT:
                    v //= 2
            if cols is None:
                cols = dcols * v // dv
                while cols - 2 * self.halo < cols // 2 and cols < 1024 * v:
                    cols *= 2
            nt = min(cols // v, 1024)
            if rows_per_iter is None:
                rows_per_iter = 1 if t >= ONE_ROW_FROM.get(precision, 10**9) else DEFAULT_ROWS_PER_ITER
            nr = rows_per_iter
            self.v, self.nt, self.ry, self.nr = v, nt, ry, nr
            self.cols = nt * v
            self.txo = self.cols - 2 * self.halo
            if self.txo <= 0:
                raise TcAdvisorError(f"{stencil.name} fused x{t}: the halo r·t = {self.halo} is too wide for the "
                                     f"CUDA-core kernel's {self.cols}-column strips")
            defines = (("K_REAL", self.real), ("K_RX", r), ("K_RY", ry), ("K_T", t), ("K_STAR", star),
                       ("K_V", v), ("K_NT", nt), ("K_NR", nr))
            self.mod = module("cuda_cores_2d.cu", defines)
            self.kernel = self.mod.get_function("cc_stream2d")
            rowbuf = self._const_int("k_rowbuf")
            self.smem = (t + 1) * 2 * nr * rowbuf * np.dtype(self.np_dtype).itemsize  # t steps + finished rows
            self.threads = (nt, 1, 1)
        else:
            v, bx = 4, 16
            while v > 1 and t * 2 * r * v > PEND_LIMIT:
                v //= 2
                bx *= 2
            by = 16 if self.halo <= 4 else 32
            self.v, self.bx, self.by = v, bx, by
            self.cols, self.rows = bx * v, by
            self.txo, self.tyo = self.cols - 2 * self.halo, self.rows - 2 * self.halo
            if self.txo <= 0 or self.tyo <= 0 or bx * by > 1024:
                raise TcAdvisorError(f"{stencil.name} fused x{t}: the halo r·t = {self.halo} is too wide for the "
                                     "3D CUDA-core kernel's tiles (use a smaller fusion depth)")
            defines = (("K_REAL", self.real), ("K_R", r), ("K_T", t), ("K_STAR", star), ("K_V", v),
                       ("K_BX", bx), ("K_BY", by))
            self.mod = module("cuda_cores_3d.cu", defines)
            self.kernel = self.mod.get_function("cc_stream3d")
            planebuf = self._const_int("k_planebuf")
            self.smem = t * 2 * planebuf * np.dtype(self.np_dtype).itemsize
            self.threads = (bx, by, 1)
        limit = device_info()["smem_optin"]
        if self.smem > limit:
            raise TcAdvisorError(
                f"{stencil.name} fused x{t} on CUDA cores needs {self.smem // 1024} KiB of shared memory per block; "
                f"this GPU allows {limit // 1024} KiB (use a smaller fusion depth)"
            )
        if self.smem > 48 * 1024:
            self.kernel.max_dynamic_shared_size_bytes = self.smem
        self.set_weights(self.weights)

    def _const_int(self, name: str) -> int:
        cp = cupy()
        ptr = self.mod.get_global(name)
        return int(cp.ndarray((1,), dtype=np.int32, memptr=ptr).get()[0])

    def uploaded_weights(self) -> np.ndarray:
        """The base weights as the kernel holds them (in its storage precision)."""
        return np.asarray(self.weights, dtype=self.np_dtype)

    def set_weights(self, weights: np.ndarray) -> None:
        """Upload the base weights into the module's ``__constant__`` array.

        Compiled modules are cached per configuration, so two kernels of the same
        configuration (a correct one and a negative control, or two weight sets)
        share that constant memory: the module remembers whose weights it holds and
        :meth:`sweep` re-uploads when another instance ran last.
        """
        cp = cupy()
        w = np.ascontiguousarray(weights, dtype=self.np_dtype).reshape(-1)
        self._w_upload = w
        ptr = self.mod.get_global("c_w")
        cp.ndarray(w.shape, dtype=self.np_dtype, memptr=ptr).set(w)
        _WEIGHTS_OWNER[id(self.mod)] = self

    def numerics(self) -> SweepModel:
        """t stages of the base stencil, each a chain of K multiply-adds rounded to nearest in the storage
        precision (the intermediate steps live in shared memory in that precision).  2K roundings per
        output: one per FMA, or two where the compiler keeps a multiply and an add apart."""
        w = self.uploaded_weights().astype(np.float64)
        stage = Stage(weights=w, exact=self.weights, operand=None, u_acc=UNIT_ROUNDOFF[self.precision],
                      terms=2 * self.stencil.K)
        return SweepModel((stage,) * self.fuse)

    # ------------------------------------------------------------------ geometry
    def geometry(self, shape3: tuple[int, int, int]) -> Geometry:
        nz, ny, nx = shape3
        gx = self.halo
        if self.stencil.dims <= 2:
            blocks_x = math.ceil(nx / self.txo)
            return Geometry(0, self.ry * self.fuse, gx, _round_up(gx + blocks_x * self.txo + self.halo + 8, 32))
        blocks_x = math.ceil(nx / self.txo)
        return Geometry(self.halo, self.halo, gx, _round_up(gx + blocks_x * self.txo + self.halo + 8, 32))

    def _launch_shape(self, shape3):
        nz, ny, nx = shape3
        info = device_info()
        threads = self.threads[0] * self.threads[1]
        slots = info["sms"] * blocks_per_sm(self.kernel, threads, self.smem)
        gx = math.ceil(nx / self.txo)
        if self.stencil.dims <= 2:
            chunks, per = split_stream(ny, gx, slots, self.fuse * (1 + 2 * self.ry) + self.nr)
            return (gx, chunks, 1), per
        gy = math.ceil(ny / self.tyo)
        chunks, per = split_stream(nz, gx * gy, slots, self.fuse * (1 + 2 * self.stencil.radius))
        return (gx, gy, chunks), per

    def sweep(self, fin: PaddedField, fout: PaddedField) -> None:
        if _WEIGHTS_OWNER.get(id(self.mod)) is not self:
            self.set_weights(self._w_upload)
        shape3 = (fin.nz, fin.ny, fin.nx)
        grid, per = self._launch_shape(shape3)
        g = fin.geometry
        i32 = np.int32
        if self.stencil.dims <= 2:
            args = (fin.data, fout.data, i32(fin.nx), i32(fin.ny), np.int64(fin.pitch_y), i32(g.gx), i32(g.gy), i32(per))
        else:
            args = (fin.data, fout.data, i32(fin.nx), i32(fin.ny), i32(fin.nz), np.int64(fin.pitch_y),
                    np.int64(fin.pitch_z), i32(g.gx), i32(g.gy), i32(g.gz), i32(per))
        self.kernel(grid, self.threads, args, shared_mem=self.smem)

    def executed_flops(self, shape3) -> float:
        """FLOPs one sweep executes, halo columns and pipeline fill included."""
        nz, ny, nx = shape3
        grid, per = self._launch_shape(shape3)
        k = self.stencil.K
        t = self.fuse
        if self.stencil.dims <= 2:
            iters = sum(math.ceil((min(per, ny - by * per) + 2 * self.ry * t) / self.nr) + t - 1
                        for by in range(grid[1]))
            return 2.0 * k * t * self.cols * iters * self.nr * grid[0]
        lead = t * (1 + 2 * self.stencil.radius) - 1
        planes = sum(min(per, nz - bz * per) + lead for bz in range(grid[2]))
        return 2.0 * k * t * self.cols * self.rows * planes * grid[0] * grid[1]

    def describe(self) -> str:
        layout = (f"{self.nt} threads x {self.v} columns, {self.nr} rows/iteration" if self.stencil.dims <= 2
                  else f"{self.bx}x{self.by} threads x {self.v} columns")
        return f"{layout}, halo {self.halo}, {self.smem // 1024} KiB shared, {self.kernel.num_regs} registers"


KERNEL = CudaCoreKernel
