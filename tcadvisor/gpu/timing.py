"""Timing on the GPU with CUDA events: warm up, then the median of repeats, the GPU held busy before each.

Between the start and stop events the GPU must not wait for the host.  Left
alone it does: the host needs tens of microseconds per launch (CuPy argument
packing), so after ``start`` the GPU idles until the first launch arrives, and a
timed run of N sweeps measures ``F + N·k`` with a fixed F of 134–238 µs on
the project's H100 (the same 2D CUDA-core kernels timed over 12 and over 4 sweeps
in the 2026-11-22 and 2026-11-23 runs: validation/results/timing-offset-2026-11-23,
up to 12 % of a 4-sweep interval).  So each repeat first launches a one-thread kernel (``kernels/hold.cu``)
that spins for twice the time the host took to enqueue the previous run (at least
:data:`HOLD_MIN_S`); the start event, the work and the stop event queue up behind
it and the interval holds the GPU's work alone.
"""
from __future__ import annotations

import statistics
import time
from functools import lru_cache

import numpy as np

from .backend import cupy, device_info, module

#: Shortest hold before a timed interval, and the hold before the first one when nothing was enqueued yet.
HOLD_MIN_S = 1e-3
HOLD_FIRST_S = 5e-3


@lru_cache(maxsize=1)
def _hold_kernel():
    return module("hold.cu", ()).get_function("hold")


def hold_gpu(seconds: float) -> None:
    """Enqueue a kernel that keeps the GPU busy for about ``seconds`` (longer if the SM clock runs below its
    maximum: the kernel counts cycles at the maximum clock the device reports)."""
    khz = device_info().get("clock_khz") or 2_000_000
    _hold_kernel()((1,), (1,), (np.int64(seconds * khz * 1e3),))


def timed_runs(fn, repeats: int = 3, warmup: int = 1) -> tuple[list[float], object]:
    """Seconds of device time of each of ``repeats`` calls of ``fn()`` (after ``warmup`` untimed calls), and
    the last call's result."""
    cp = cupy()
    out = None
    enqueue = None
    for _ in range(warmup):
        t0 = time.perf_counter()
        out = fn()
        enqueue = time.perf_counter() - t0
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        hold_gpu(HOLD_FIRST_S if enqueue is None else max(HOLD_MIN_S, 2 * enqueue))
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        t0 = time.perf_counter()
        out = fn()
        enqueue = time.perf_counter() - t0
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return times, out


def time_gpu(fn, repeats: int = 3, warmup: int = 1):
    """Median seconds of ``fn()`` (device time between events) and its last result."""
    times, out = timed_runs(fn, repeats, warmup)
    return statistics.median(times), out
