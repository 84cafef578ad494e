"""Speed of the analytical part: a fresh ``tcadvisor advise`` process, and 10^6 model evaluations.

Targets (issue 2): advise answers in under 1.5 s wall time as a fresh process on
a 2-core machine; the vectorised model (base, and refined with every term free)
evaluates 10^6 configurations in under 1 s.

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


def time_model(n: int = 10**6, runs: int = 5, variant: str = "base") -> list[float]:
    from tcadvisor import model

    rng = np.random.default_rng(0)
    args = dict(K=rng.integers(1, 500, n).astype(float), t=rng.integers(1, 17, n).astype(float),
                beta=rng.uniform(1, 20, n), alpha=rng.uniform(0.05, 1, n), S=rng.choice([2.0, 4.0, 8.0], n),
                B=rng.uniform(5e11, 8e12, n), P_cc=rng.uniform(1e12, 1e14, n), P_tc=rng.uniform(1e13, 5e15, n))
    if variant == "refined":  # every term free, so no part of the refined chain is skipped
        args.update(h_cc=rng.uniform(1, 2, n), m_cc=rng.uniform(0, 8, n), eta_cc=rng.uniform(0.5, 1, n),
                    eta_B_cc=rng.uniform(0.5, 1, n), omega_cc=rng.uniform(0, 1, n), tmax_cc=rng.uniform(4, 16, n),
                    k_tc=rng.uniform(1, 2, n), m_tc=rng.uniform(0, 8, n), eta_tc=rng.uniform(0.5, 1, n),
                    eta_B_tc=rng.uniform(0.5, 1, n), omega_tc=rng.uniform(0, 1, n), tmax_tc=rng.uniform(4, 16, n))
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        out = model.evaluate(**args, variant=variant)
        elapsed = time.perf_counter() - t0
        assert out["R"].shape == (n,)
        if i:  # the first call includes lambdify (once per process)
            times.append(elapsed)
    return times


def main() -> None:
    cores = os.cpu_count()
    adv = time_advise()
    print(f"machine: {cores} cores, Python {sys.version.split()[0]}")
    print(f"tcadvisor advise (fresh process): median {statistics.median(adv):.3f} s, max {max(adv):.3f} s "
          f"over {len(adv)} runs (target < 1.5 s)")
    for variant in ("base", "refined"):
        mod = time_model(variant=variant)
        print(f"{variant} model over 10^6 configurations: median {statistics.median(mod):.3f} s, "
              f"max {max(mod):.3f} s over {len(mod)} runs (target < 1 s)")


if __name__ == "__main__":
    main()
