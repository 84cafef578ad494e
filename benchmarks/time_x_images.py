"""Kernels that store their own periodic x images against the kernels before them, side by side in one process.

An experiment, measured and not taken (validation/results/h100-sxm-2026-11-28/x-images/NOTES.md): it runs on a
tree with one of that folder's ``kernel-images.patch`` applied to 3135c3a (``git apply``), which adds
kernels/x_images.cuh, the kernels' ``gimg`` argument and ``PaddedField.x_images``.  ``--before DIR`` names a
directory holding the package as it was, importable as ``tcadvisor_before`` with its data inside
(``tcadvisor_before/_data/{kernels,models,hwspecs}``), made by benchmarks/make_before_tree.sh.

Each configuration is timed three ways, alternating, ``--rounds`` times: ``before`` (the old kernels, the whole
shell refreshed), ``full`` (the new kernels, which store their x images, with the refresh still copying the x
ghosts: what the image stores cost) and ``after`` (the new kernels, the refresh copying ghost rows only: what a
user runs).  Unchecked (``run(check=False)``, as the depth scans time); each new configuration is then checked on
a smaller grid with ``run(check=True)``, whose check now includes the x ghosts.

    python benchmarks/time_x_images.py --before build/before --out OUT.csv
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.gpu_session_kernels import write_rows  # noqa: E402
from tcadvisor.gpu import runner  # noqa: E402
from tcadvisor.gpu.fields import PaddedField  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

#: (unit, stencil, dtype, t, grid, check grid): the 3D depths of the issue's targets 3 and 5 and the shallow
#: ones the refresh weighs most on, 2D, and a 1D control whose kernel stores no images (expected 1.00x).
CASES = [
    ("sparse_tensor_core", "Box-3D1R", "half", 2, "512x512x512", "96x64x200"),
    ("sparse_tensor_core", "Box-3D1R", "bfloat16", 2, "512x512x512", "96x64x200"),
    ("sparse_tensor_core", "Box-3D1R", "half", 1, "512x512x512", "96x64x200"),
    ("sparse_tensor_core", "Box-3D1R", "float", 2, "512x512x512", "96x64x200"),
    ("tensor_core", "Box-3D1R", "half", 1, "512x512x512", "96x64x200"),
    ("tensor_core", "Star-3D1R", "half", 2, "512x512x512", "96x64x200"),
    ("tensor_core", "Box-3D1R", "double", 1, "512x512x512", "96x64x200"),
    ("tensor_core", "Box-3D1R", "double", 2, "512x512x512", "96x64x200"),
    ("cuda_core", "Box-3D1R", "float", 4, "512x512x512", "96x64x200"),
    ("cuda_core", "Box-3D1R", "double", 3, "512x512x512", "96x64x200"),
    ("cuda_core", "Box-3D1R", "half", 1, "512x512x512", "96x64x200"),
    ("tensor_core", "Box-2D1R", "half", 2, "10240x10240", "300x1000"),
    ("cuda_core", "Box-2D1R", "float", 15, "10240x10240", "300x1000"),
    ("cuda_core", "Box-1D2R", "double", 1, "134217728", "100000"),
]


class FullRefresh(PaddedField):
    """A field whose x ghosts are never marked current: the refresh copies them as before the kernels stored
    images (the image stores are still made)."""

    @property
    def x_images(self) -> bool:
        return False

    @x_images.setter
    def x_images(self, value) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="directory holding the package before, as tcadvisor_before")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sweeps", type=int, default=8, help="sweeps per timed run")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.before))
    from tcadvisor_before.gpu import runner as before_runner
    from tcadvisor_before.stencil import parse_stencil as before_parse

    allocate = runner.allocate_fields

    def full_fields(kernels, grid, dtype):
        fa, fb = allocate(kernels, grid, dtype)
        fa.__class__ = fb.__class__ = FullRefresh
        return fa, fb

    rows = []
    for unit, name, dtype, t, grid, small in CASES:
        times = {"before": [], "full": [], "after": []}
        kernel = ""
        try:
            for _ in range(args.rounds):
                for variant in ("before", "full", "after"):
                    if variant == "before":
                        res = before_runner.run(before_parse(name), dtype, unit, fuse=t, grid=grid,
                                                steps=t * args.sweeps, check=False)
                    else:
                        runner.allocate_fields = full_fields if variant == "full" else allocate
                        try:
                            res = runner.run(parse_stencil(name), dtype, unit, fuse=t, grid=grid,
                                             steps=t * args.sweeps, check=False)
                        finally:
                            runner.allocate_fields = allocate
                        kernel = res.kernel
                    times[variant].append(res.gstencils)
            check = runner.run(parse_stencil(name), dtype, unit, fuse=t, grid=small, steps=2 * t, check=True)
        except Exception as exc:  # noqa: BLE001 - one configuration's failure is a row, not the end of the run
            print(f"{unit} {name} {dtype} t={t}: {type(exc).__name__}: {exc}", flush=True)
            rows.append({"unit": unit, "stencil": name, "dtype": dtype, "fuse": t, "grid": grid,
                         "error": f"{type(exc).__name__}: {exc}"})
            continue
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"unit": unit, "stencil": name, "dtype": dtype, "fuse": t, "grid": grid,
               **{f"{k}_gstencils": round(v, 2) for k, v in med.items()},
               **{f"{k}_all": " ".join(f"{x:.2f}" for x in v) for k, v in times.items()},
               "after_over_before": round(med["after"] / med["before"], 4),
               "full_over_before": round(med["full"] / med["before"], 4),
               "after_over_full": round(med["after"] / med["full"], 4),
               "bound_gstencils": round(check.bound_gstencils, 1) if check.bound_gstencils else "",
               "checked_grid": small, "check_passed": check.passed, "stale_ghosts": check.stale_ghosts,
               "kernel": kernel, "error": ""}
        rows.append(row)
        print(f"{unit:18s} {name:9s} {dtype:8s} t={t:<2d} before {med['before']:8.1f} full {med['full']:8.1f} "
              f"after {med['after']:8.1f}  after/before {row['after_over_before']:.3f} "
              f"full/before {row['full_over_before']:.3f}  check {check.passed}", flush=True)
    write_rows(args.out, list(dict.fromkeys(k for r in rows for k in r)), rows)


if __name__ == "__main__":
    main()
