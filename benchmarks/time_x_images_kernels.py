"""Where the kernels' own x images cost time: the stencil kernel alone and the refresh alone, old against new.

Companion of benchmarks/time_x_images.py: the same experiment tree (a ``kernel-images.patch`` of
validation/results/h100-sxm-2026-11-28/x-images/ applied to 3135c3a) and the same ``--before`` package.  For each configuration both kernels are
built on the same two fields; timed with CUDA events over ``--launches`` back-to-back launches, alternating, three
rounds: the old kernel; the new kernel storing its images (``gimg`` = the field's x ghosts); the new kernel with
``gimg`` = 0 (the image code compiled in, never taken); then the refresh with and without its x ghosts.  The
CUDA-core kernels store no images: their rows are controls (the same kernel twice).

    python benchmarks/time_x_images_kernels.py --before build/before --out OUT.csv
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import astuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.gpu_session_kernels import write_rows  # noqa: E402
from tcadvisor.gpu import registry, runner  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

CASES = [
    ("tensor_core", "Box-3D1R", "half", 1, (512, 512, 512)),
    ("sparse_tensor_core", "Box-3D1R", "half", 2, (512, 512, 512)),
    ("cuda_core", "Box-3D1R", "float", 4, (512, 512, 512)),
    ("tensor_core", "Box-2D1R", "half", 2, (10240, 10240)),
    ("cuda_core", "Box-2D1R", "float", 15, (10240, 10240)),
    ("sparse_tensor_core", "Box-3D1R", "half", 1, (512, 512, 512)),
    ("tensor_core", "Star-3D1R", "half", 2, (512, 512, 512)),
    ("tensor_core", "Box-3D1R", "double", 1, (512, 512, 512)),
]


def event_time(cp, fn, launches: int) -> float:
    """Seconds per call of ``fn`` over ``launches`` back-to-back calls (one warm-up call first)."""
    fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(launches):
        fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3 / launches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--case", type=int, action="append", help="index into CASES (default: all)")
    ap.add_argument("--kernels-only", action="store_true", help="no refresh variants (for a profiler's run)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.before))
    from tcadvisor_before.gpu import registry as old_registry
    from tcadvisor_before.gpu import runner as old_runner
    from tcadvisor_before.stencil import parse_stencil as old_parse

    cp = runner.cupy()
    rows = []
    for unit, name, dtype, t, grid in [CASES[i] for i in args.case] if args.case else CASES:
        st, old_st = parse_stencil(name), old_parse(name)
        w = runner.default_weights(st, 0)
        new = runner.make_kernel(st, registry.resolve(unit, None), t, dtype, w)
        old = old_runner.make_kernel(old_st, old_registry.resolve(unit, None), t, dtype, w)
        fa, fb = runner.allocate_fields([new], grid, dtype)
        og = old.geometry((fa.nz, fa.ny, fa.nx))
        assert (og.gz, og.gy, og.gx, og.pitch) == astuple(fa.geometry), "old and new kernels want other fields"
        fa.load(runner.initial_data(grid, dtype, 0))
        fa.refresh()
        gx = fa.geometry.gx

        def new_sweep(gimg):
            """The new kernel's launch as its wrapper makes it, with the images' width ``gimg``."""
            i32 = np.int32
            if unit == "cuda_core":  # stores no images: the same launch either way (a control)
                return lambda: new.sweep(fa, fb)
            fn = new.compiled_for(new.alignment(fa))
            lead = (new.wfrag,) if unit == "tensor_core" else (new.avals, new.ameta)
            launches = [(grid_, (src, dst) + lead + (i32(nx), i32(ni), i32(ns), np.int64(pi), np.int64(ps),
                                                      i32(gx), i32(gi), i32(gs), i32(per), i32(new.alignment(fa)),
                                                      i32(gimg)))
                        for grid_, per, src, dst, nx, ni, ns, pi, ps, gi, gs in new._launches(fa, fb)]

            def go():
                for grid_, a in launches:
                    fn(grid_, (new.threads,), a, shared_mem=new.smem)
            return go

        variants = {
            "old_kernel": lambda: old.sweep(fa, fb),
            "new_kernel_images": new_sweep(gx),
            "new_kernel_no_images": new_sweep(0),
            "refresh_full": lambda: (setattr(fa, "x_images", False), fa.refresh()),
            "refresh_rows_only": lambda: (setattr(fa, "x_images", True), fa.refresh()),
        }
        if args.kernels_only:
            variants = {k: v for k, v in variants.items() if "kernel" in k}
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
            for k, fn in variants.items():
                times[k].append(event_time(cp, fn, args.launches))
        fa.x_images = False
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        row = {"unit": unit, "stencil": name, "dtype": dtype, "fuse": t, "grid": "x".join(map(str, grid)),
               **{f"{k}_us": round(v, 2) for k, v in med.items()}, "kernel": new.describe(), "old_kernel": old.describe()}
        rows.append(row)
        print(f"{unit:18s} {name:9s} {dtype:6s} t={t:<2d} " + "  ".join(f"{k} {v:8.1f}" for k, v in med.items()),
              flush=True)
        fa = fb = None  # the fields go before the next pair comes
        cp.get_default_memory_pool().free_all_blocks()
    write_rows(args.out, list(dict.fromkeys(k for r in rows for k in r)), rows)


if __name__ == "__main__":
    main()
