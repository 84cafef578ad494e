"""The periodic ghost refresh before and after ``ghost_shell`` (one launch for the whole shell), side by side in
one process: the refresh alone on the fields the bundled kernels use (device time, the GPU held busy while the host
launches, as in the timed runs), then whole timed runs as ``tcadvisor run`` times them (refresh
included), each configuration with the refresh of before and with the new one.

Why: at t = 1-2 a 512^3 sweep took 79-99 us longer than Nsight Compute's kernel time
(validation/results/h100-sxm-2026-11-28/shallow-3d/), and the refresh was the only other work of a sweep.

    python benchmarks/time_ghost_refresh.py OUT_DIR [--old FIELDS_CU] [--variant NAME=FIELDS_CU ...] [--refresh-only]
    ncu -k regex:ghost --metrics ... python benchmarks/time_ghost_refresh.py --profile

--old (default build/kernels-at/fields-before.cu, ``git show 821dc41:kernels/fields.cu``) holds the
``ghost_fill`` kernel of before; it is launched the way ``PaddedField.refresh`` launched it then, one launch per
region of ``ghost_regions()``.
"""
from __future__ import annotations

import argparse
import csv
import functools
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu.fields import COPY_TYPE, GHOST_THREADS, Geometry, PaddedField  # noqa: E402
from tcadvisor.gpu.runner import cupy, default_grid, run  # noqa: E402
from tcadvisor.gpu.timing import timed_runs  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

FIELDS = [  # (label, (nz, ny, nx), dtype, Geometry(gz, gy, gx, pitch)): the kernels' fields at the default grids
    ("3D 512^3 FP16 G1", (512, 512, 512), np.float16, Geometry(1, 1, 2, 544)),
    ("3D 512^3 FP16 G2", (512, 512, 512), np.float16, Geometry(2, 2, 2, 544)),
    ("3D 512^3 FP32 G1", (512, 512, 512), np.float32, Geometry(1, 1, 2, 544)),
    ("3D 512^3 FP64 G3", (512, 512, 512), np.float64, Geometry(3, 3, 4, 544)),
    ("2D 10240^2 FP16 G1", (1, 10240, 10240), np.float16, Geometry(0, 1, 2, 10272)),
    ("2D 10240^2 FP32 G8", (1, 10240, 10240), np.float32, Geometry(0, 8, 8, 10304)),
    ("1D 2^27 FP16 G8", (1, 1, 1 << 27), np.float16, Geometry(0, 0, 8, (1 << 27) + 32)),
]
RUNS = [  # (unit, stencil, fuse, dtype)
    ("tensor_core", "Box-3D1R", 1, "half"), ("sparse_tensor_core", "Box-3D1R", 1, "half"),
    ("cuda_core", "Box-3D1R", 1, "half"), ("sparse_tensor_core", "Box-3D1R", 2, "half"),
    ("tensor_core", "Box-3D1R", 3, "half"), ("tensor_core", "Box-3D1R", 1, "float"),
    ("cuda_core", "Box-3D1R", 4, "float"), ("tensor_core", "Box-3D1R", 2, "double"),
    ("tensor_core", "Star-3D1R", 2, "half"), ("tensor_core", "Box-2D1R", 2, "half"),
    ("cuda_core", "Box-2D1R", 11, "double"), ("tensor_core", "Box-1D1R", 4, "half"),
]


#: The order of the timed runs of each configuration: (refresh, checked).  Interleaved, so that drift shows as
#: a difference between repeats; checked and unchecked, because ``run`` then checked before it timed (it times
#: first since 2026-11-28: benchmarks/checked_timing.py).
SEQUENCE = [("old", False), ("new", False), ("old", True), ("new", True), ("new", False), ("old", False),
            ("new", True), ("old", True)]


class OldRefresh:
    """The refresh of before: ``ghost_fill`` once per region, 256 threads, at most 4096 blocks."""

    def __init__(self, cp, source: str):
        self.cp, self.source, self.functions = cp, source, {}

    def __call__(self, f: PaddedField) -> None:
        key = f.dtype.itemsize
        if key not in self.functions:
            mod = self.cp.RawModule(code=self.source, options=("-std=c++17", f"-DK_REAL={COPY_TYPE[key]}"))
            self.functions[key] = mod.get_function("ghost_fill")
        fn, g, i32 = self.functions[key], f.geometry, np.int32
        for z0, z1, y0, y1, x0, x1 in f.ghost_regions():
            n = (z1 - z0) * (y1 - y0) * (x1 - x0)
            fn((min(max(1, (n + 255) // 256), 4096),), (256,),
               (f.data, i32(f.nz), i32(f.ny), i32(f.nx), i32(g.gz), i32(g.gy), i32(g.gx), np.int64(f.pitch_z),
                np.int64(f.pitch_y), i32(z0), i32(z1), i32(y0), i32(y1), i32(x0), i32(x1)))


def time_refresh(fn, repeats: int = 30) -> float:
    """Median µs of device time of ``fn()``, the GPU held busy while the host launches (as the timed runs)."""
    times, _ = timed_runs(fn, repeats, 1)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--old", default="build/kernels-at/fields-before.cu", help="the fields.cu of before")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=PATH",
                    help="another fields.cu whose ghost_shell takes the same launch: timed beside, refresh alone")
    ap.add_argument("--refresh-only", action="store_true", help="skip the timed runs")
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    cp = cupy()
    old = OldRefresh(cp, open(args.old).read())
    variants = {}
    for item in args.variant:
        name, path = item.split("=", 1)
        variants[name] = {k: cp.RawModule(code=open(path).read(), options=("-std=c++17", f"-DK_REAL={t}"))
                          .get_function("ghost_shell") for k, t in COPY_TYPE.items()}
    rows = []
    for label, shape3, dtype, geo in FIELDS:
        f = PaddedField(shape3, dtype, geo)
        f.interior[...] = cp.random.random(shape3).astype(dtype)
        old(f)
        before = f.data.copy()
        f.data[...] = 0
        f.interior[...] = before[geo.gz:geo.gz + shape3[0], geo.gy:geo.gy + shape3[1], geo.gx:geo.gx + shape3[2]]
        f.refresh()
        same = bool((f.data == before).all())  # the new refresh writes what the old one wrote, bit for bit
        t_old = time_refresh(functools.partial(old, f))
        t_new = time_refresh(f.refresh)
        rows.append({"what": "refresh", "case": label, "old": t_old, "new": t_new, "ratio": t_old / t_new,
                     "same": same, "unit": "us"})
        print(f"refresh {label:22s} old {t_old:8.1f} us  new {t_new:7.1f} us  {t_old / t_new:5.2f}x  same {same}",
              flush=True)
        for name, fns in variants.items():
            blocks, launch_args = f.shell_launch()
            fn = fns[f.dtype.itemsize]
            f.data[...] = 0
            f.interior[...] = before[geo.gz:geo.gz + shape3[0], geo.gy:geo.gy + shape3[1],
                                     geo.gx:geo.gx + shape3[2]]
            fn((blocks,), (GHOST_THREADS,), launch_args)
            ok = bool((f.data == before).all())
            t_var = time_refresh(functools.partial(fn, (blocks,), (GHOST_THREADS,), launch_args))
            rows.append({"what": f"refresh {name}", "case": label, "old": t_new, "new": t_var,
                         "ratio": t_new / t_var, "same": ok, "unit": "us"})
            print(f"refresh {label:22s} new {t_new:7.1f} us  {name} {t_var:7.1f} us  {t_new / t_var:5.2f}x  "
                  f"same {ok}", flush=True)
        del f, before
        cp.get_default_memory_pool().free_all_blocks()
    new_refresh = PaddedField.refresh

    def old_refresh(field: PaddedField) -> None:
        old(field)
    for unit, name, fuse, dtype in ([] if args.refresh_only else RUNS):
        stencil = parse_stencil(name)
        got = {}
        for which, checked in SEQUENCE:
            PaddedField.refresh = old_refresh if which == "old" else new_refresh
            try:
                r = run(stencil, dtype, unit, fuse=fuse, grid=default_grid(stencil), steps=4 * fuse, check=checked,
                        repeats=5)
            finally:
                PaddedField.refresh = new_refresh
            got.setdefault((which, checked), []).append(r.gstencils)
            if checked and not r.check.passed:
                raise SystemExit(f"{unit} {name} x{fuse} {dtype} with the {which} refresh: check failed")
        for checked in (False, True):
            o, n = statistics.mean(got[("old", checked)]), statistics.mean(got[("new", checked)])
            rows.append({"what": "run checked" if checked else "run", "case": f"{unit} {name} x{fuse} {dtype}",
                         "old": o, "new": n, "ratio": n / o, "same": True, "unit": "GStencils/s"})
        line = "  ".join(f"{w}{'-c' if c else ''} " + " ".join(f"{v:7.1f}" for v in got[(w, c)])
                         for w, c in sorted(got))
        print(f"run {unit:19s} {name} x{fuse:<2d} {dtype:6s} {line}", flush=True)
    with open(os.path.join(out, "refresh.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def profile_once(old_src: str = "build/kernels-at/fields-before.cu") -> None:
    """One refresh of each kind on the 512^3 FP16 field of Box-3D1R x1, for Nsight Compute (``-k regex:ghost``)."""
    cp = cupy()
    _, shape3, dtype, geo = FIELDS[0]
    f = PaddedField(shape3, dtype, geo)
    OldRefresh(cp, open(old_src).read())(f)
    f.refresh()
    cp.cuda.Device().synchronize()


if __name__ == "__main__":
    if sys.argv[1] == "--profile":
        profile_once()
    else:
        main()
