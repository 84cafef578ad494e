"""CuPy, imported only when a GPU command runs, and the compiled-kernel cache.

Kernels are CUDA C++ files in ``kernels/`` compiled at run time by NVRTC through
CuPy, specialised with ``-D`` constants.  Each (file, constants) pair is compiled
once per process (and CuPy caches the binary on disk across processes).
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..data import data_dir
from ..errors import TcAdvisorError
from .plans import split_stream  # noqa: F401  (launch splitting lives with the plans; kept importable here)


def cupy():
    """The ``cupy`` module, or a one-line error saying how to get a usable GPU stack."""
    try:
        import cupy as cp
    except ImportError:
        raise TcAdvisorError(
            "running kernels needs CuPy and an NVIDIA GPU; install with pip install 'tcadvisor[gpu]' "
            "(cupy-cuda12x, or cupy-cuda13x for CUDA 13)"
        ) from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - the CUDA runtime raises its own types
        raise TcAdvisorError(f"CuPy is installed but no CUDA device is usable ({exc})") from None
    if count < 1:
        raise TcAdvisorError("CuPy is installed but no CUDA device is visible")
    return cp


def available() -> bool:
    try:
        cupy()
        return True
    except TcAdvisorError:
        return False


@lru_cache(maxsize=1)
def device_info() -> dict:
    cp = cupy()
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return {
        "name": name,
        "cc": (props["major"], props["minor"]),
        "sms": props["multiProcessorCount"],
        "smem_optin": props.get("sharedMemPerBlockOptin", props["sharedMemPerBlock"]),
        "smem_per_sm": props.get("sharedMemPerMultiprocessor", 228 * 1024),
        "regs_per_sm": props.get("regsPerMultiprocessor", 65536),
        # for the spec's multiprocessors section that 'tcadvisor calibrate' writes (None: not reported)
        "smem_reserved": props.get("reservedSharedMemPerBlock"),
        "max_threads_per_sm": props.get("maxThreadsPerMultiProcessor"),
        "max_blocks_per_sm": props.get("maxBlocksPerMultiProcessor"),
        "clock_khz": props.get("clockRate"),
    }


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_.]+)"\s*$', re.MULTILINE)


@lru_cache(maxsize=None)
def _source(name: str) -> str:
    """The text of ``kernels/name`` with its local ``#include "x.cuh"`` lines replaced by those files.

    NVRTC compiles a string; inlining the headers here (instead of an include path) also keeps
    CuPy's cache, keyed by the source text, right when a header changes.
    """
    text = (data_dir("kernels") / name).read_text()
    return _LOCAL_INCLUDE.sub(lambda m: _source(m.group(1)), text)


@lru_cache(maxsize=None)
def module(filename: str, defines: tuple[tuple[str, object], ...]):
    """Compile ``kernels/filename`` with ``-Dkey=value`` for each define (cached)."""
    cp = cupy()
    options = ("-std=c++17",) + tuple(f"-D{k}={v}" for k, v in defines)
    mod = cp.RawModule(code=_source(filename), options=options)
    try:
        mod.compile()
    except Exception as exc:  # noqa: BLE001 - NVRTC errors carry the compiler log
        raise RuntimeError(f"compiling kernels/{filename} with {options} failed:\n{exc}") from exc
    return mod


def use_shared_memory(kernel, smem: int, device: dict, what: str, hint: str = "") -> None:
    """Let ``kernel`` launch with ``smem`` bytes of dynamic shared memory per block: refused in one line (``what``
    needs ..., then ``hint``) beyond what one block may have on ``device`` (:func:`device_info`); opted in above
    the default 48 KiB."""
    limit = device["smem_optin"]
    if smem > limit:
        raise TcAdvisorError(f"{what} needs {smem // 1024} KiB of shared memory per block; "
                             f"this GPU allows {limit // 1024} KiB{hint}")
    if smem > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = smem


def blocks_per_sm(kernel, threads: int, smem: int) -> int:
    """Resident blocks per multiprocessor for a compiled kernel (occupancy API, else an estimate)."""
    cp = cupy()
    try:
        return max(1, cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, smem))
    except Exception:  # noqa: BLE001 - fall back to registers and shared memory
        info = device_info()
        regs = max(1, kernel.num_regs) * ((threads + 31) // 32 * 32)
        by_regs = info["regs_per_sm"] // regs
        by_smem = info["smem_per_sm"] // smem if smem else 32
        return max(1, min(by_regs, by_smem, 2048 // threads))
