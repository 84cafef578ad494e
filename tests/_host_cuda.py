"""The bundled kernels of kernels/ compiled for the host and run on NumPy arrays (CPU tests).

:func:`compile_module` translates a kernel source with ``tests/host_cuda/emu.h``
(one coroutine per CUDA thread, see that header) and builds it with g++ into a
shared library; :class:`HostModule` and :class:`HostFunction` stand in for the
CuPy ``RawModule`` and ``RawKernel`` the kernel classes use, and
:class:`HostField` for :class:`tcadvisor.gpu.fields.PaddedField`, so the kernel
class's own host logic (plan, ghost widths, launch split, arguments) drives the
emulated launch.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from tcadvisor.data import data_dir
from tcadvisor.gpu.fields import PaddedField

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMU_DIR = os.path.join(ROOT, "tests", "host_cuda")
_BUILD = os.path.join(tempfile.gettempdir(), f"tcadvisor-host-cuda-{os.getuid()}")
_CTYPE = {np.dtype(np.int32): ctypes.c_int32, np.dtype(np.int64): ctypes.c_int64,
          np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double,
          np.dtype(np.uint32): ctypes.c_uint32}


def available() -> bool:
    return shutil.which("g++") is not None


def translate(source: str) -> str:
    """CUDA → C++ for emu.h: the two constructs a macro cannot rewrite."""
    source, n = re.subn(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?unsigned\s+char\s+(\w+)\s*\[\s*\]\s*;",
                        r"unsigned char* \1 = emu::dynamic_smem;", source)
    # `extern "C" __constant__ T x[N];` defines x in CUDA; in C++ only the braced linkage block does.
    source = re.sub(r'extern\s+"C"\s+__constant__\s+([^;]*);', r'extern "C" { \1; }', source)
    return source


def compile_module(filename: str, defines, function: str, text: str | None = None) -> "HostModule":
    """``text``: the source to compile in place of the file's (a test's deliberately broken copy)."""
    if text is None:
        with open(data_dir("kernels") / filename) as fh:
            text = fh.read()
    source = translate(text)
    driver = (f'#include "emu.h"\n#line 1 "kernels/{filename}"\n{source}\n'
              f'extern "C" int emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, '
              f'unsigned bz, unsigned long smem, void** argv, int reverse) {{\n'
              f'    return emu::launch({function}, dim3{{gx, gy, gz}}, dim3{{bx, by, bz}}, smem, argv, reverse);\n}}\n'
              'extern "C" unsigned long long emu_fma_count() { return emu::fma_count; }\n')
    with open(os.path.join(EMU_DIR, "emu.h")) as fh:
        emu = fh.read()
    flags = ["-std=c++17", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-Wno-unknown-pragmas",
             "-Wno-unused-variable"] + [f"-D{k}={v}" for k, v in defines]
    key = hashlib.sha256("\0".join([driver, emu] + flags).encode()).hexdigest()[:20]
    os.makedirs(_BUILD, exist_ok=True)
    lib = os.path.join(_BUILD, f"{key}.so")
    if not os.path.exists(lib):
        src = os.path.join(_BUILD, f"{key}.cpp")
        with open(src, "w") as fh:
            fh.write(driver)
        tmp = f"{lib}.{os.getpid()}"
        proc = subprocess.run(["g++", *flags, f"-I{EMU_DIR}", f"-I{data_dir('kernels')}", "-o", tmp, src],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(f"g++ failed on kernels/{filename} {defines}:\n{proc.stderr[-3000:]}")
        os.replace(tmp, lib)
    return HostModule(lib, function)


class HostFunction:
    """A kernel launch like CuPy's ``RawKernel.__call__``; ``reverse`` runs each barrier interval's threads
    in descending order."""

    num_regs = 0  # not known on the host

    def __init__(self, module: "HostModule"):
        self.module = module
        self.reverse = False
        self.max_dynamic_shared_size_bytes = 0
        self.launches = []

    def __call__(self, grid, block, args, shared_mem=0):
        keep, ptrs = [], []
        for a in args:
            if isinstance(a, np.ndarray):
                assert a.flags.c_contiguous
                s = ctypes.c_void_p(a.ctypes.data)
            else:
                s = _CTYPE[np.asarray(a).dtype](a)
            keep.append(s)
            ptrs.append(ctypes.cast(ctypes.pointer(s), ctypes.c_void_p))
        argv = (ctypes.c_void_p * len(ptrs))(*ptrs)
        g = tuple(grid) + (1,) * (3 - len(grid))
        b = tuple(block) + (1,) * (3 - len(block))
        self.launches.append((g, b, shared_mem))
        before = self.module.fma_count()
        rc = self.module.lib.emu_launch(*(ctypes.c_uint(v) for v in g + b), ctypes.c_ulong(shared_mem), argv,
                                        ctypes.c_int(int(self.reverse)))
        if rc:
            raise RuntimeError({1: "host emulation could not allocate thread stacks",
                                2: "a thread ended with asynchronous copies it never waited for",
                                3: "lanes of a warp met in different warp collectives (mma, shfl)"}.get(rc, f"rc {rc}"))
        self.fmas = self.module.fma_count() - before  # fused multiply-adds the last launch executed


class HostModule:
    def __init__(self, path: str, function: str):
        self.lib = ctypes.CDLL(path)
        self.function = function
        self._kernel = HostFunction(self)

    def fma_count(self) -> int:
        self.lib.emu_fma_count.restype = ctypes.c_ulonglong
        return int(self.lib.emu_fma_count())

    def get_function(self, name: str) -> HostFunction:
        assert name == self.function, name
        return self._kernel

    def array(self, name: str, dtype, n: int) -> np.ndarray:
        """The module's global ``name`` (a ``__constant__`` array or value) as a writable NumPy view."""
        ctype = _CTYPE[np.dtype(dtype)] * n
        return np.ctypeslib.as_array(ctype.in_dll(self.lib, name))


class HostField(PaddedField):
    """A :class:`tcadvisor.gpu.fields.PaddedField` in host memory: the same layout and properties, NumPy data,
    and the periodic ghost refresh done by NumPy instead of the ``ghost_shell`` kernel."""

    def __init__(self, shape3, dtype, geometry):  # no super().__init__: that allocates on the GPU
        self.nz, self.ny, self.nx = shape3
        self.geometry = g = geometry
        self.dtype = np.dtype(dtype)
        self.data = np.zeros((self.nz + 2 * g.gz, self.ny + 2 * g.gy, g.pitch), dtype=self.dtype)

    def refresh(self) -> None:
        """Periodic ghost layers around the interior; the columns past the right ghost layer stay zero."""
        g = self.geometry
        wrapped = np.pad(self.interior.copy(), ((g.gz, g.gz), (g.gy, g.gy), (g.gx, g.gx)), mode="wrap")
        self.data[:, :, :self.nx + 2 * g.gx] = wrapped
        self.data[:, :, self.nx + 2 * g.gx:] = 0


def patch_cuda_core_kernels(monkeypatch, device: dict, blocks_per_sm: int = 2):
    """Make :class:`tcadvisor.gpu.cuda_cores.CudaCoreKernel` compile and launch through this emulation: the
    kernel source of its plan, ``device`` in place of the GPU's properties, ``blocks_per_sm`` resident blocks
    (few, so that small grids are still cut into several chunks along the streamed axis).  Returns the class."""
    from tcadvisor.gpu import cuda_cores

    def module(filename, defines):
        function = {"cuda_cores_1d.cu": "cc_tile1d", "cuda_cores_3d.cu": "cc_stream3d"}.get(filename, "cc_stream2d")
        return compile_module(filename, defines, function)

    def const_int(self, name):
        return int(self.mod.array(name, np.int32, 1)[0])

    def set_weights(self, weights):  # the words CudaCoreKernel.set_weights uploads, written into the library
        w = self._constant_words(weights)
        self._w_upload = np.asarray(weights, dtype=np.float64)
        self.mod.array("c_w", w.dtype, w.size)[:] = w

    monkeypatch.setattr(cuda_cores, "module", module)
    monkeypatch.setattr(cuda_cores, "device_info", lambda: device)
    monkeypatch.setattr(cuda_cores, "blocks_per_sm", lambda kernel, threads, smem: blocks_per_sm)
    monkeypatch.setattr(cuda_cores.CudaCoreKernel, "_const_int", const_int)
    monkeypatch.setattr(cuda_cores.CudaCoreKernel, "set_weights", set_weights)
    return cuda_cores.CudaCoreKernel


def run_sweep(kernel, x, reverse: bool = False):
    """One sweep of ``kernel`` from ``x`` (storage values, (nz, ny, nx)) on host fields of the kernel's own
    geometry, the output poisoned with all-ones bits (NaN in every storage type) and the threads of every
    barrier interval run in reverse order if asked; returns a copy of the output's interior.  Afterwards
    ``kernel.kernel.fmas`` counts the multiply-adds of the whole sweep."""
    geometry = kernel.geometry(x.shape)
    fin = HostField(x.shape, x.dtype, geometry)
    fout = HostField(x.shape, x.dtype, geometry)
    fin.interior[...] = x
    fin.refresh()
    fout.data.view(np.uint8)[...] = 0xFF
    kernel.kernel.reverse = reverse
    before = kernel.kernel.module.fma_count()
    kernel.sweep(fin, fout)
    kernel.kernel.fmas = kernel.kernel.module.fma_count() - before  # every launch of the sweep (1D rows: two)
    return fout.interior.copy()
