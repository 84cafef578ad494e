"""Why a checked run (``tcadvisor run``'s default) timed memory-bound configurations slower than an unchecked one.

Side by side in one process (validation/results/h100-sxm-2026-11-28/shallow-3d/refresh.csv showed checked runs
0.86-0.96x where the sweep is memory-bound and 0.99-1.00x where it is compute-bound, when ``run`` timed after its
check): each configuration timed

* ``checked``: ``run(check=True)``, as the CLI runs it (since 2026-11-28 the timing comes before the check, so
  the modes below that add something between check and timing add it before the check's sweeps instead);
* ``unchecked``: ``run(check=False)``;
* ``checked+sleep``: checked, with two seconds idle between the check and the timing (the GPU's clocks and
  temperature settle after the float64 reference);
* ``unchecked+heat``: unchecked, right after the float64 reference of the same steps runs on a field of the same
  size (the check's GPU work without the check);
* ``checked+free``: checked, with the memory pool's cached blocks released and re-acquired before the timing.

    python benchmarks/checked_timing.py OUT.csv
"""
from __future__ import annotations

import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu import runner  # noqa: E402
from tcadvisor.gpu.reference import reference_steps  # noqa: E402
from tcadvisor.gpu.runner import cupy, default_grid, run  # noqa: E402
from tcadvisor.gpu.timing import timed_runs  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

CASES = [("tensor_core", "Box-3D1R", 1, "half"), ("tensor_core", "Box-1D1R", 4, "half"),
         ("tensor_core", "Box-2D1R", 2, "half"), ("cuda_core", "Box-3D1R", 4, "float")]
MODES = ["checked", "unchecked", "checked+sleep", "unchecked+heat", "checked+free", "checked", "unchecked"]


def main() -> None:
    cp = cupy()
    rows = []
    for unit, name, fuse, dtype in CASES:
        stencil = parse_stencil(name)
        grid = default_grid(stencil)
        for mode in MODES:
            def timed(fn, repeats, warmup, mode=mode):
                if mode == "checked+sleep":
                    cp.cuda.Device().synchronize()
                    time.sleep(2.0)
                if mode == "checked+free":
                    cp.get_default_memory_pool().free_all_blocks()
                return timed_runs(fn, repeats, warmup)
            if mode == "unchecked+heat":
                x = cp.random.random(runner.parse_grid(grid, stencil.dims))
                reference_steps(x, runner.default_weights(stencil, 0), 4 * fuse)
                cp.cuda.Device().synchronize()
                del x
            runner.timed_runs = timed
            try:
                r = run(stencil, dtype, unit, fuse=fuse, grid=grid, steps=4 * fuse,
                        check=mode.startswith("checked"), repeats=5)
            finally:
                runner.timed_runs = timed_runs
            rows.append({"case": f"{unit} {name} x{fuse} {dtype}", "mode": mode, "gstencils": r.gstencils,
                         "seconds": r.seconds, "spread": (max(r.seconds_all) - min(r.seconds_all)) / r.seconds})
            print(f"{unit:12s} {name} x{fuse} {dtype:5s} {mode:15s} {r.gstencils:8.1f} GSt/s", flush=True)
    with open(sys.argv[1], "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
