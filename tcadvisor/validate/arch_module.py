"""Kernels compiled for an architecture-specific target (``sm_90a``), which CuPy's RawModule does not choose.

Why apart from :mod:`tcadvisor.gpu.backend`: RawModule adds its own ``-arch`` for the device (sm_90 on a
Hopper), which has no ``wgmma``; NVRTC is therefore called directly, and the cubin loaded as a module.
Only calibration's wgmma benchmark needs it; the bundled stencil kernels keep the backend's path (and
its kernel fingerprint, :mod:`tcadvisor.fingerprint`).
"""
from __future__ import annotations

from functools import lru_cache


class ArchKernel:
    """A kernel of such a module, called like CuPy's RawKernel (``kernel(grid, block, args, shared_mem=...)``),
    with the attributes the launch code reads (``kernel.ptr`` for the occupancy API, ``num_regs``, ...)."""

    def __init__(self, function, log: str):
        self._function = function
        self.log = log  # NVRTC's messages for the module (ptxas warnings included)

    def __call__(self, grid, block, args, shared_mem: int = 0):
        self._function(grid, block, args, shared_mem=shared_mem)

    @property
    def kernel(self):
        return self._function

    def _attribute(self, name: str) -> int:
        from ..gpu.backend import cupy

        cp = cupy()
        return cp.cuda.driver.funcGetAttribute(getattr(cp.cuda.driver, name), self._function.ptr)

    @property
    def num_regs(self) -> int:
        return self._attribute("CU_FUNC_ATTRIBUTE_NUM_REGS")

    @property
    def local_size_bytes(self) -> int:
        return self._attribute("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES")


class ArchModule:
    def __init__(self, mod, log: str):
        self._module, self.log = mod, log

    def get_function(self, name: str) -> ArchKernel:
        return ArchKernel(self._module.get_function(name), self.log)


@lru_cache(maxsize=None)
def arch_module(filename: str, defines: tuple[tuple[str, object], ...], prelude: str, arch: str) -> ArchModule:
    """``kernels/filename`` after ``prelude`` (code a generator wrote), ``-Dkey=value`` per define, compiled
    by NVRTC for ``arch`` (e.g. ``sm_90a``); a compile error is a RuntimeError carrying NVRTC's log."""
    from cupy_backends.cuda.libs import nvrtc

    from ..gpu.backend import _source, cupy

    cp = cupy()
    options = ("-std=c++17", f"--gpu-architecture={arch}") + tuple(f"-D{k}={v}" for k, v in defines)
    prog = nvrtc.createProgram(prelude + _source(filename), filename, (), ())
    try:
        try:
            nvrtc.compileProgram(prog, options)
        except nvrtc.NVRTCError as exc:
            raise RuntimeError(f"compiling kernels/{filename} with {options} failed:\n"
                               f"{nvrtc.getProgramLog(prog)}") from exc
        log = nvrtc.getProgramLog(prog)
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    mod = cp.cuda.function.Module()
    mod.load(cubin)
    text = log if isinstance(log, str) else bytes(log).decode(errors="replace")
    return ArchModule(mod, text.replace("\x00", "").strip())
