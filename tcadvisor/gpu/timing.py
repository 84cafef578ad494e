"""Timing on the GPU with CUDA events: warm up once, then take the median of repeats."""
from __future__ import annotations

import statistics

from .backend import cupy


def time_gpu(fn, repeats: int = 3, warmup: int = 1):
    """Median seconds of ``fn()`` (device time between events) and its last result."""
    cp = cupy()
    out = None
    for _ in range(warmup):
        out = fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        out = fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times), out
