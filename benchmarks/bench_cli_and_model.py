"""Speed of the analytical part: a fresh ``tcadvisor advise`` process, and 10^6 model evaluations.

Targets (issue 2): advise answers in under 1.5 s wall time as a fresh process on
a 2-core machine; the vectorised model evaluates 10^6 configurations in under 1 s.

    python benchmarks/bench_cli_and_model.py            # uses the installed 'tcadvisor'
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np


def time_advise(runs: int = 7) -> list[float]:
    exe = shutil.which("tcadvisor")
    cmd = [exe] if exe else [sys.executable, "-m", "tcadvisor"]
    cmd += ["advise", "Box-3D1R", "--fuse", "3", "--dtype", "double"]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times


def time_model(n: int = 10**6, runs: int = 5) -> list[float]:
    from tcadvisor import model

    rng = np.random.default_rng(0)
    args = (rng.integers(1, 500, n).astype(float), rng.integers(1, 17, n).astype(float), rng.uniform(1, 20, n),
            rng.uniform(0.05, 1, n), rng.choice([2.0, 4.0, 8.0], n), rng.uniform(5e11, 8e12, n),
            rng.uniform(1e12, 1e14, n), rng.uniform(1e13, 5e15, n))
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        out = model.evaluate(*args)
        elapsed = time.perf_counter() - t0
        assert out["R"].shape == (n,)
        if i:  # the first call includes lambdify (once per process)
            times.append(elapsed)
    return times


def main() -> None:
    cores = os.cpu_count()
    adv = time_advise()
    mod = time_model()
    print(f"machine: {cores} cores, Python {sys.version.split()[0]}")
    print(f"tcadvisor advise (fresh process): median {statistics.median(adv):.3f} s, max {max(adv):.3f} s "
          f"over {len(adv)} runs (target < 1.5 s)")
    print(f"model over 10^6 configurations:  median {statistics.median(mod):.3f} s, max {max(mod):.3f} s "
          f"over {len(mod)} runs (target < 1 s)")


if __name__ == "__main__":
    main()
