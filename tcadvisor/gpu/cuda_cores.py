"""The bundled CUDA-core kernels (temporal fusion), set up and launched from Python.

``kernels/cuda_cores_1d.cu`` serves 1D (tiles in registers), ``kernels/cuda_cores_2d.cu`` 2D;
``kernels/cuda_cores_3d.cu`` serves 3D.  The compile-time shape of a launch
(columns per thread, threads, tile) and the FLOPs a sweep executes come from
:func:`tcadvisor.gpu.plans.plan_cuda_cores`; this module compiles and launches
that plan and sizes the ghost layers and row pitch the kernel reads.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from ..errors import TcAdvisorError
from ..mma import MmaShape
from ..stencil import Stencil
from . import plans
from .backend import blocks_per_sm, cupy, device_info, module, use_shared_memory
from .checking import Stage, SweepModel
from .fields import Geometry, PaddedField
from .kernel import BundledKernel
from .numerics import STORAGE, UNIT_ROUNDOFF, from_storage, to_storage

def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


#: Which kernel's weights each compiled module's ``__constant__`` array holds (modules are cached for the
#: life of the process, so their ids are stable; the kernels are held weakly).
_WEIGHTS_OWNER: "weakref.WeakValueDictionary[int, CudaCoreKernel]" = weakref.WeakValueDictionary()


class CudaCoreKernel(BundledKernel):
    """t fused steps of a stencil on CUDA cores, one sweep per call.

    Box and star stencils take the kernels' built-in tap predicate (``K_STAR``); any other offsets within the
    radius r are compiled in as a tap set (``K_TAPS``, :func:`tcadvisor.gpu.plans.plan_cuda_cores`), so absent
    taps cost no instruction.  The weights are the (2r+1)^d box of :meth:`Stencil.mask` either way.

    FP16 and BF16 fields are computed with packed FMAs (``fma.rn.f16x2``, ``fma.rn.bf16x2``), two tiles per
    block, every multiply-add rounded to the 16-bit format (kernels/cc_values.cuh)."""

    name = "cuda_cores"
    unit = "cuda_core"
    cuda_function = "cc_stream2d|cc_stream3d"
    precisions = ("fp64", "fp32", "fp16", "bf16")
    REAL = {"fp64": "double", "fp32": "float", "fp16": "half", "bf16": "bfloat16"}  # precision -> field dtype

    @classmethod
    def unsupported(cls, stencil: Stencil, fuse: int, dtype: str, precision: str,
                    device: dict | None = None) -> str | None:
        why = super().unsupported(stencil, fuse, dtype, precision, device)
        if why:
            return why
        if cls.REAL[precision] != dtype:
            return f"the CUDA-core kernel stores {precision.upper()} fields, not {dtype}"
        terms = 2 * stencil.K  # roundings of one stage's chain of multiply-adds (numerics)
        if terms * UNIT_ROUNDOFF[precision] >= 0.5:
            # γ_2K ≥ 1: the rounding bound of one step exceeds 100 %, so no check can tell a right result from a
            # wrong one (BF16 from K = 64 taps, FP16 from K = 512)
            return (f"{stencil.name} has {stencil.K} taps: a chain of {terms} {precision.upper()} roundings per step "
                    f"has no error bound below 100 % on CUDA cores (at most {int(0.25 / UNIT_ROUNDOFF[precision]) - 1} "
                    f"taps in {precision.upper()}); use float, or Tensor Cores, which accumulate in FP32")
        if device is not None and cls.device_reason(precision, device):
            return cls.device_reason(precision, device)
        if device is not None and tuple(device["cc"]) < (8, 0) and stencil.dims <= 2:
            try:
                copies = plans.plan_cuda_cores(stencil, fuse, precision).options.get("async")
            except TcAdvisorError:
                copies = False  # refused for its own reason where it is planned
            if copies:
                return (f"{stencil.name} fused x{fuse} copies its rows with cp.async, which needs compute "
                        f"capability 8.0 or newer; this GPU has {tuple(device['cc'])}")
        return None

    @classmethod
    def field_dtypes(cls) -> dict[str, str]:
        return dict(cls.REAL)

    @classmethod
    def device_reason(cls, precision: str, device: dict) -> str | None:
        if precision == "bf16" and tuple(device["cc"]) < (8, 0):  # fma.rn.bf16x2: sm_80
            return f"BF16 fma.rn.bf16x2 needs compute capability 8.0 or newer; this GPU has {tuple(device['cc'])}"
        if precision == "fp16" and tuple(device["cc"]) < (5, 3):  # fma.rn.f16x2: sm_53
            return f"FP16 fma.rn.f16x2 needs compute capability 5.3 or newer; this GPU has {tuple(device['cc'])}"
        return None

    def __init__(self, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                 mma: MmaShape | None = None, v: int | None = None, cols: int | None = None,
                 rows_per_iter: int | None = None, rows: int | None = None, trap: bool | None = None,
                 prefetch: int | None = None, rows_per_thread: int | None = None, async_copy: bool | None = None,
                 direct_store: bool | None = None, keep_columns: bool | None = None, layout: str | None = None,
                 stage: bool | None = None, vector_loads: bool | None = None):
        why = self.unsupported(stencil, fuse, dtype, precision)
        if why:
            raise TcAdvisorError(why)
        if mma is not None:
            raise TcAdvisorError("--mma applies to the Tensor Core kernels only")
        super().__init__(stencil, fuse, dtype, precision, weights)
        self.real = self.REAL[precision]
        # The launch shape comes from the planner, which the refined model reads too.
        self.plan = plans.plan_cuda_cores(stencil, fuse, precision, v=v, cols=cols, rows_per_iter=rows_per_iter,
                                          rows=rows, trap=trap, prefetch=prefetch, rows_per_thread=rows_per_thread,
                                          async_copy=async_copy, direct_store=direct_store,
                                          keep_columns=keep_columns, layout=layout, stage=stage,
                                          vector_loads=vector_loads)
        plan = self.plan
        self.halo = plan.halo
        self.v = plan.options["v"]
        self.cols, self.txo = plan.tile["x"], plan.outputs["x"]
        source = plan.source
        self.mod = module(source, plan.defines)
        self.tile1d = plan.options.get("layout") == "tile1d"
        if self.tile1d:
            self.nt = plan.options["nt"]
            self.kernel = self.mod.get_function("cc_tile1d")
            layout = None
        elif stencil.dims <= 2:
            self.nt, self.ry, self.nr = plan.options["nt"], plan.options["ry"], plan.options["nr"]
            self.kernel = self.mod.get_function("cc_stream2d")
            layout = ("k_rowbuf", plan.options["rowbuf"])
        else:
            self.bx, self.by = plan.block[0], plan.block[1]  # threads along x and y
            self.rows, self.tyo = plan.tile["y"], plan.outputs["y"]
            self.kernel = self.mod.get_function("cc_stream3d")
            layout = ("k_planebuf", plan.options["planebuf"])
        if layout is not None and self._const_int(layout[0]) != layout[1]:  # the CUDA code exports its layout: the plan must agree
            raise RuntimeError(f"kernels/{source} lays out {layout[0]} = {self._const_int(layout[0])} elements; "
                               f"tcadvisor.gpu.plans computed {layout[1]}")
        # Dynamic shared memory of the launch (the 1D kernel's edges are static: its plan's smem counts them
        # for the occupancy, the launch asks for none).
        self.smem = 0 if self.tile1d else plan.smem
        self.threads = plan.block
        use_shared_memory(self.kernel, self.smem, device_info(), f"{stencil.name} fused x{fuse} on CUDA cores",
                          " (use a smaller fusion depth)")
        self.set_weights(self.weights)

    def _const_int(self, name: str) -> int:
        cp = cupy()
        ptr = self.mod.get_global(name)
        return int(cp.ndarray((1,), dtype=np.int32, memptr=ptr).get()[0])

    def uploaded_weights(self) -> np.ndarray:
        """The base weights as the kernel holds them, as float64 values (rounded to its storage precision)."""
        return self._rounded(self.weights, self.dtype)

    @staticmethod
    def _rounded(weights: np.ndarray, dtype: str) -> np.ndarray:
        """float64 values of ``weights`` rounded to ``dtype`` (FP16/BF16 via float32 to nearest even, as
        :func:`tcadvisor.gpu.numerics.to_storage` rounds what the kernel uploads)."""
        w = np.asarray(weights, dtype=np.float64)
        if dtype in ("half", "bfloat16"):
            return from_storage(to_storage(w, dtype), dtype)
        return w.astype(STORAGE[dtype]).astype(np.float64)

    def _constant_words(self, weights: np.ndarray) -> np.ndarray:
        """``weights`` as the module's ``c_w`` array: values of the storage type, or for FP16/BF16 one 32-bit
        word per weight holding it in both halves (both lanes multiply by it)."""
        w = np.ascontiguousarray(weights, dtype=np.float64).reshape(-1)
        if self.plan.lanes == 1:
            return w.astype(self.np_dtype)
        bits = to_storage(w, self.dtype).view(np.uint16).astype(np.uint32)
        return bits | (bits << 16)

    def set_weights(self, weights: np.ndarray) -> None:
        """Upload the base weights into the module's ``__constant__`` array.

        Compiled modules are cached per configuration, so two kernels of the same
        configuration (a correct one and a negative control, or two weight sets)
        share that constant memory: the module remembers whose weights it holds and
        :meth:`sweep` re-uploads when another instance ran last.
        """
        cp = cupy()
        w = self._constant_words(weights)
        self._w_upload = np.asarray(weights, dtype=np.float64)
        ptr = self.mod.get_global("c_w")
        cp.ndarray(w.shape, dtype=w.dtype, memptr=ptr).set(w)
        _WEIGHTS_OWNER[id(self.mod)] = self

    def numerics(self) -> SweepModel:
        """t stages of the base stencil, each a chain of K multiply-adds rounded to nearest in the storage
        precision (the intermediate steps live in shared memory in that precision; FP16/BF16 round every
        packed FMA to the 16-bit format).  2K roundings per output: one per FMA, or two where the compiler
        keeps a multiply and an add apart."""
        return self.sweep_model(self.stencil, self.fuse, self.dtype, self.precision, self.weights)

    @classmethod
    def sweep_model(cls, stencil: Stencil, fuse: int, dtype: str, precision: str, weights: np.ndarray,
                    mma: MmaShape | None = None) -> SweepModel:
        """:meth:`numerics` of this configuration without building the kernel (no CuPy, nothing compiled), so
        that the rounding bound can be given on any machine (:mod:`tcadvisor.accuracy`)."""
        if precision not in cls.REAL:
            raise TcAdvisorError(f"the CUDA-core kernel runs {', '.join(p.upper() for p in cls.REAL)}, "
                                 f"not {precision.upper()}")
        exact = np.asarray(weights, dtype=np.float64)
        w = cls._rounded(exact, dtype)  # as uploaded (uploaded_weights)
        stage = Stage(weights=w, exact=exact, operand=None, u_acc=UNIT_ROUNDOFF[precision], terms=2 * stencil.K)
        return SweepModel((stage,) * int(fuse))

    # ------------------------------------------------------------------ geometry
    def geometry(self, shape3: tuple[int, int, int]) -> Geometry:
        nz, ny, nx = shape3
        gx = self.halo
        if self.tile1d:
            # Block k reads TILE padded columns from (at most) gx - halo + k·TXO, and (k - 1)·TXO < nx: every read
            # ends before gx + nx + TILE, also on fields whose ghosts a deeper sweep widened.
            return Geometry(0, 0, gx, _round_up(2 * gx + nx + self.cols, 32))
        if self.stencil.dims <= 2:
            blocks_x = math.ceil(nx / self.txo)
            return Geometry(0, self.ry * self.fuse, gx, _round_up(gx + blocks_x * self.txo + self.halo + 8, 32))
        blocks_x = math.ceil(nx / self.txo)
        return Geometry(self.halo, self.halo, gx, _round_up(gx + blocks_x * self.txo + self.halo + 8, 32))

    def _launch_shape(self, shape3):
        threads = self.threads[0] * self.threads[1]
        slots = device_info()["sms"] * blocks_per_sm(self.kernel, threads, self.smem)
        return self.plan.launch(shape3, slots)

    def sweep(self, fin: PaddedField, fout: PaddedField) -> None:
        if _WEIGHTS_OWNER.get(id(self.mod)) is not self:
            self.set_weights(self._w_upload)
        shape3 = (fin.nz, fin.ny, fin.nx)
        grid, per = self._launch_shape(shape3)
        g = fin.geometry
        i32 = np.int32
        if self.tile1d:
            if g.gx < self.halo or g.pitch < g.gx - self.halo + (grid[0] - 1) * self.txo + self.cols:
                raise RuntimeError(f"the 1D CUDA-core kernel needs ghosts of at least {self.halo} and a pitch covering "
                                   f"its tiles; the fields have {g}")
            tiles = -(-fin.nx // self.txo)  # the launch's blocks take `lanes` tiles each
            args = (fin.data, fout.data, i32(fin.nx), i32(g.gx), i32(tiles))
        elif self.stencil.dims <= 2:
            args = (fin.data, fout.data, i32(fin.nx), i32(fin.ny), np.int64(fin.pitch_y), i32(g.gx), i32(g.gy), i32(per))
        else:
            args = (fin.data, fout.data, i32(fin.nx), i32(fin.ny), i32(fin.nz), np.int64(fin.pitch_y),
                    np.int64(fin.pitch_z), i32(g.gx), i32(g.gy), i32(g.gz), i32(per))
        self.kernel(grid, self.threads, args, shared_mem=self.smem)

    def executed_flops(self, shape3) -> float:
        """FLOPs one sweep executes, halo columns and pipeline fill included."""
        threads = self.threads[0] * self.threads[1]
        slots = device_info()["sms"] * blocks_per_sm(self.kernel, threads, self.smem)
        return self.plan.executed_flops(shape3, slots)

    def describe(self) -> str:
        """One line naming the configuration; result files keep it, and plans.recorded_cuda_core_plan reads it."""
        opts = self.plan.options
        if self.tile1d:
            return (f"1D tiles of {self.nt} threads x {self.v} points{', staged' if opts.get('stage') else ''}, "
                    f"{self.txo} outputs, halo {self.halo}, "
                    f"{self.plan.smem} B shared, {self.kernel.num_regs} registers")
        if self.stencil.dims <= 2:
            layout = (f"{self.nt} threads x {self.v} columns, {self.nr} rows/iteration"
                      + (", rows copied asynchronously" if opts.get("async") else "")
                      + (f", {opts['prefetch']} iterations ahead" if opts.get("prefetch", 1) != 1 else "")
                      + (", outputs stored from registers" if opts.get("direct") else "")
                      + (", own columns kept in registers" if opts.get("keep") else ""))
        else:
            layout = (f"{self.bx}x{self.by} threads x {self.v} columns"
                      + (f" x {opts['w']} rows" if opts.get("w", 1) != 1 else "")
                      + (", rows trimmed per step" if opts.get("trap") else "")
                      + (f", {opts['prefetch']} planes in flight" if opts.get("prefetch", 1) != 1 else "")
                      + (", rows read as vectors" if opts.get("vector_loads") else ""))
        return f"{layout}, halo {self.halo}, {self.smem // 1024} KiB shared, {self.kernel.num_regs} registers"


KERNEL = CudaCoreKernel
