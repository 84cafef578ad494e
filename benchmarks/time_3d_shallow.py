"""Why 3D at t = 1 reads DRAM at about half the copy bandwidth in 16 bits: time the bundled kernels at t = 1 on
grids of one size (2^27 points) and different x extents, beside a plain copy of the same bytes.

If the shortfall follows the length of the contiguous runs a block reads (the x extent), it is the memory system's
locality; if it follows the precision at a fixed x extent, it is the kernel's bytes in flight per warp.

    python benchmarks/time_3d_shallow.py OUT.csv
"""
from __future__ import annotations

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu.runner import cupy, run  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

GRIDS = ["512x512x512", "128x512x2048", "256x512x1024", "1024x512x256", "2048x512x128", "512x2048x128"]
CASES = [("tensor_core", "Box-3D1R", "half"), ("sparse_tensor_core", "Box-3D1R", "half"),
         ("cuda_core", "Box-3D1R", "half"), ("tensor_core", "Star-3D1R", "half"),
         ("tensor_core", "Box-3D1R", "float"), ("tensor_core", "Box-3D1R", "double")]
BYTES = {"half": 2, "float": 4, "double": 8}


def copy_bandwidth(cp, n: int, itemsize: int, repeats: int = 10) -> float:
    """Bytes read + written per second by CuPy's copy of an n-element array (the kernels' ideal at t = 1)."""
    dtype = {2: cp.float16, 4: cp.float32, 8: cp.float64}[itemsize]
    a = cp.ones(n, dtype=dtype)
    b = cp.empty_like(a)
    b[...] = a
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        b[...] = a
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    times.sort()
    return 2 * n * itemsize / times[len(times) // 2]


def main() -> None:
    out = sys.argv[1]
    cp = cupy()
    rows = []
    for item in (2, 4, 8):
        bw = copy_bandwidth(cp, 1 << 27, item)
        rows.append({"unit": "copy", "stencil": "-", "dtype": item, "grid": "2^27", "gstencils": "",
                     "tb_s": bw / 1e12, "kernel": "cupy copy"})
        print(f"copy {item} B: {bw / 1e12:.3f} TB/s", flush=True)
    for unit, name, dtype in CASES:
        for grid in GRIDS:
            try:
                res = run(parse_stencil(name), dtype, unit, fuse=1, grid=grid, steps=8, check=False, repeats=5)
            except Exception as exc:  # noqa: BLE001 - a shape a kernel refuses is a row, not the end of the run
                print(f"{unit} {name} {dtype} {grid}: {exc}", flush=True)
                continue
            tb = res.gstencils * 1e9 * 2 * BYTES[dtype] / 1e12
            rows.append({"unit": unit, "stencil": name, "dtype": dtype, "grid": grid, "gstencils": res.gstencils,
                         "tb_s": tb, "kernel": res.kernel})
            print(f"{unit:19s} {name} {dtype:6s} {grid:13s} {res.gstencils:7.1f} GSt/s {tb:.3f} TB/s", flush=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
