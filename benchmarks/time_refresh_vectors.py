"""The ghost refresh with its rows' interior columns moved as 16-byte vectors, against the refresh before it, side
by side in one process: the refresh alone on the bundled kernels' fields, then whole timed runs.

``--before DIR`` holds the package before the change, importable as ``tcadvisor_before``
(``bash benchmarks/make_before_tree.sh COMMIT DIR``).  Each field is refreshed by both and compared bit for bit;
each run alternates old and new ``--rounds`` times (unchecked, as the depth scans time), then the new one is checked
on a smaller grid.

    python benchmarks/time_refresh_vectors.py --before build/before --out OUT_DIR
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.gpu_session_kernels import write_rows  # noqa: E402
from benchmarks.time_ghost_refresh import time_refresh  # noqa: E402
from tcadvisor.gpu.fields import Geometry, PaddedField  # noqa: E402
from tcadvisor.gpu.runner import cupy, run  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

FIELDS = [  # (label, (nz, ny, nx), dtype, (gz, gy, gx, pitch)): fields the bundled kernels allocate
    ("3D 512^3 FP16 G1 (dense x1)", (512, 512, 512), np.float16, (1, 1, 2, 544)),
    ("3D 512^3 FP16 G2 (sparse x2)", (512, 512, 512), np.float16, (2, 2, 2, 576)),
    ("3D 512^3 FP32 G4 (CUDA cores x4)", (512, 512, 512), np.float32, (4, 4, 4, 576)),
    ("3D 512^3 FP64 G3", (512, 512, 512), np.float64, (3, 3, 4, 544)),
    ("2D 10240^2 FP16 G1", (1, 10240, 10240), np.float16, (0, 1, 2, 10272)),
    ("2D 10240^2 FP64 G11", (1, 10240, 10240), np.float64, (0, 11, 11, 10304)),
    ("1D 2^27 FP16 G8", (1, 1, 1 << 27), np.float16, (0, 0, 8, (1 << 27) + 32)),
]
RUNS = [  # (unit, stencil, fuse, dtype, grid, check grid)
    ("sparse_tensor_core", "Box-3D1R", 2, "half", "512x512x512", "96x64x200"),
    ("sparse_tensor_core", "Box-3D1R", 2, "bfloat16", "512x512x512", "96x64x200"),
    ("cuda_core", "Box-3D1R", 4, "float", "512x512x512", "96x64x200"),
    ("tensor_core", "Box-3D1R", 1, "half", "512x512x512", "96x64x200"),
    ("tensor_core", "Box-3D1R", 3, "half", "512x512x512", "96x64x200"),
    ("cuda_core", "Box-3D1R", 3, "double", "512x512x512", "96x64x200"),
    ("tensor_core", "Box-2D1R", 2, "half", "10240x10240", "300x1000"),
    ("cuda_core", "Box-2D1R", 11, "double", "10240x10240", "300x1000"),
    ("tensor_core", "Box-1D1R", 4, "half", "134217728", "100000"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sweeps", type=int, default=8)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sys.path.insert(0, os.path.abspath(args.before))
    from tcadvisor_before.gpu import fields as old_fields
    from tcadvisor_before.gpu import runner as old_runner
    from tcadvisor_before.stencil import parse_stencil as old_parse

    cp = cupy()
    rows = []
    for label, shape3, dtype, geo in FIELDS:
        new = PaddedField(shape3, dtype, Geometry(*geo))
        old = old_fields.PaddedField(shape3, dtype, old_fields.Geometry(*geo))
        rng = cp.random.default_rng(1)
        new.interior[...] = rng.random(shape3).astype(dtype)
        old.data[...] = new.data
        new.refresh()
        old.refresh()
        same = bool((new.data.view(np.uint8) == old.data.view(np.uint8)).all())
        t_old, t_new = [], []
        for _ in range(3):
            t_old.append(time_refresh(old.refresh))
            t_new.append(time_refresh(new.refresh))
        o, n = statistics.median(t_old), statistics.median(t_new)
        vec = int(new.shell_launch()[1][-1])
        rows.append({"what": "refresh", "case": label, "old": round(o, 2), "new": round(n, 2),
                     "new_over_old": round(o / n, 4), "same_bits": same, "vec": vec, "unit": "us"})
        print(f"refresh {label:34s} old {o:7.1f} us  new {n:7.1f} us  {o / n:5.2f}x  same {same}  vec {vec}",
              flush=True)
        new = old = None
        cp.get_default_memory_pool().free_all_blocks()
    for unit, name, fuse, dtype, grid, small in RUNS:
        got = {"old": [], "new": []}
        refresh = {"old": [], "new": []}
        for _ in range(args.rounds):
            for which in ("old", "new"):
                if which == "old":
                    r = old_runner.run(old_parse(name), dtype, unit, fuse=fuse, grid=grid, steps=fuse * args.sweeps,
                                       check=False)
                else:
                    r = run(parse_stencil(name), dtype, unit, fuse=fuse, grid=grid, steps=fuse * args.sweeps,
                            check=False)
                got[which].append(r.gstencils)
                refresh[which].append(r.refresh_seconds * 1e6)
        chk = run(parse_stencil(name), dtype, unit, fuse=fuse, grid=small, steps=2 * fuse, check=True)
        o, n = statistics.median(got["old"]), statistics.median(got["new"])
        rows.append({"what": "run", "case": f"{unit} {name} x{fuse} {dtype} {grid}", "old": round(o, 2),
                     "new": round(n, 2), "new_over_old": round(n / o, 4), "same_bits": "", "vec": "",
                     "unit": "GStencils/s", "old_all": " ".join(f"{v:.1f}" for v in got["old"]),
                     "new_all": " ".join(f"{v:.1f}" for v in got["new"]),
                     "refresh_old_us": round(statistics.median(refresh["old"]), 2),
                     "refresh_new_us": round(statistics.median(refresh["new"]), 2),
                     "check_passed": chk.passed})
        print(f"run {unit:18s} {name} x{fuse:<2d} {dtype:8s} old {o:8.1f} new {n:8.1f}  {n / o:.3f}x  refresh "
              f"{statistics.median(refresh['old']):.1f} -> {statistics.median(refresh['new']):.1f} us  "
              f"check {chk.passed}", flush=True)
    write_rows(os.path.join(args.out, "refresh-vectors.csv"), list(dict.fromkeys(k for r in rows for k in r)), rows)


if __name__ == "__main__":
    main()
