"""Speed of the figures: a sweet-spot map rendered to HTML by a fresh ``tcadvisor`` process.

Targets (issue 3), on a 2-core machine: the default map (8 radii × 16 depths × 3
units) in under 3 s, a 4-GPU comparison in under 6 s, each as a fresh process
from start to the HTML file on disk (Python start-up, imports, the model, the
figure and writing ~5 MB of self-contained HTML included).

    python benchmarks/bench_plots.py            # uses the installed 'tcadvisor'
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = [
    ("default map (1 GPU, 8 x 16 x 3)", ["map", "--gpu", "h100", "--dtype", "float", "--shape", "box", "--dims", "2"],
     3.0),
    ("4-GPU map (a100,h100,h200,b200)", ["map", "--gpu", "a100,h100,h200,b200", "--dtype", "float", "--shape", "box",
                                         "--dims", "2"], 6.0),
    ("roofline", ["roofline", "Box-2D1R", "--fuse", "7", "--dtype", "float", "--gpu", "a100"], None),
]


def time_command(args: list[str], runs: int) -> list[float]:
    exe = shutil.which("tcadvisor")
    cmd = [exe] if exe else [sys.executable, "-m", "tcadvisor"]
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            out = os.path.join(tmp, f"out{i}.html")
            t0 = time.perf_counter()
            subprocess.run(cmd + args + ["-o", out], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
            assert os.path.getsize(out) > 1_000_000
    return times


def main(runs: int = 5) -> int:
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    ok = True
    for label, args, target in CASES:
        times = time_command(args, runs)
        med = statistics.median(times)
        verdict = "" if target is None else (f" (target < {target:g} s: {'met' if max(times) < target else 'MISSED'})")
        ok &= target is None or max(times) < target
        print(f"{label:34s} median {med:.2f} s, max {max(times):.2f} s over {runs} fresh processes{verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
