"""SPIDER's public FP16 stencil programs and the bundled kernels on the same workloads, side by side in one run.

Issue 21, target 5: the bundled kernels against every public code of the field, measured in the same run.

    python benchmarks/spider_side_by_side.py --spider-bin DIR --out DIR [--repeats 5]

DIR holds SPIDER's three programs as the user built them from its own sources and build settings
(``stencil_2d_half_sparse``, ``stencil_2d_half_dense``, ``stencil_1d_half_sparse``); this script only runs them
(it fetches and builds nothing).  Each is run ``--repeats`` times with ``--profile`` and the sizes of SPIDER's own
benchmark script (2D: 10240 x 10240, 1000 steps; 1D: 1024 x 10000 points, 100000 steps), and in 1D also on the
bundled kernels' default grid of 2^27 points (1024 x 131072, 1000 steps): SPIDER's 1D size, 20 MB per field in
FP16, stays in the H100's 50 MB L2 cache.  The GStencils/s it prints (points x steps / s of its timed loop, CUDA
events) are kept, and the median reported.

The bundled kernels run the same stencil footprints: SPIDER's 2D step is one 15 x 15 box (Box-2D7R), which is
Box-2D1R fused x 7 as well; its 1D step is 15 points (Box-1D7R), Box-1D1R fused x 7.  SPIDER's 1D program applies
that stencil along the rows of an M x N array (-M 1024: N independent lines of 1024 points, each with its own
8-point halo, adjacent lines adjacent in memory), the bundled 1D kernels along one line of M·N points: the same
arithmetic and bytes per point, not the same boundaries or access pattern.  So SPIDER's own 1D problem is timed
too, on the bundled 2D kernels: a custom stencil of 15 offsets along y (``column-15``) on a 1024 x N grid.  Both
forms are timed
(each first checked sweep by sweep against the float64 reference on a small odd grid, then timed on the large
one, median of repeats), and their throughput is given per SPIDER step: GStencils/s of a fused x 7 kernel
counts Box-2D1R steps and is divided by 7.  SPIDER accumulates in FP16, the bundled kernels in FP32 by default;
the 2D sparse rows are also run with FP16 accumulators (``half_accumulators``, SPIDER's numerics; given alone, the
kernel takes what measured best with them, ``sparse_tensor_cores_half_accumulators`` of kernels/defaults.yaml).
``--only 2d`` runs SPIDER's 2D programs and the 2D rows alone.

Writes side-by-side.csv (every run) and summary.md (the medians and the ratios) into --out.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.stencil import Stencil, parse_stencil  # noqa: E402

#: (label, program, arguments, stencil footprint, grid as the bundled kernels name it) of SPIDER's runs.
SPIDER = [("2D 15x15 sparse", "stencil_2d_half_sparse", ["-M", "10240", "-N", "10240", "-T", "1000"], "Box-2D7R",
           "10240x10240"),
          ("2D 15x15 dense", "stencil_2d_half_dense", ["-M", "10240", "-N", "10240", "-T", "1000"], "Box-2D7R",
           "10240x10240"),
          ("1D 15-point sparse", "stencil_1d_half_sparse", ["-M", "1024", "-N", "10000", "-T", "100000"],
           "Box-1D7R", "10240000"),
          ("1D 15-point sparse", "stencil_1d_half_sparse", ["-M", "1024", "-N", "131072", "-T", "1000"],
           "Box-1D7R", "134217728")]
#: SPIDER's 1D problem itself: the 15-point stencil along y of a 2D array (each column an independent line with its
#: own halo rows), which the bundled 2D kernels run as a custom stencil of offsets (-7, 0) .. (7, 0).
COLUMN_15 = Stencil.from_offsets([(d, 0) for d in range(-7, 8)], name="column-15")
#: (footprint, unit, stencil, fuse, grid, small grid, SPIDER's grid to compare with[, kernel knobs]): the bundled
#: kernels on each footprint.
BUNDLED = [("Box-2D7R", "sparse_tensor_core", "Box-2D1R", 7, "10240x10240", "61x203", "10240x10240"),
           ("Box-2D7R", "sparse_tensor_core", "Box-2D7R", 1, "10240x10240", "61x203", "10240x10240"),
           ("Box-2D7R", "tensor_core", "Box-2D1R", 7, "10240x10240", "61x203", "10240x10240"),
           ("Box-2D7R", "tensor_core", "Box-2D7R", 1, "10240x10240", "61x203", "10240x10240")]
#: The sparse kernel with FP16 accumulators and the knobs measured best with them (the planner's table: at r·t = 7
#: four x tiles per warp, 1.16-1.18x the FP32 entry in sptc-half-acc/).  h100-sxm-2026-11-27/spider-half-acc/ was
#: recorded before that table, with a row at the FP32 entry's other knobs and one naming the four x tiles.
BUNDLED += [("Box-2D7R", "sparse_tensor_core", name, t, "10240x10240", "61x203", "10240x10240",
             {"half_accumulators": True}) for name, t in (("Box-2D1R", 7), ("Box-2D7R", 1))]
BUNDLED += [("Box-1D7R", unit, name, t, grid, "20011", grid) for grid in ("10240000", "134217728")
            for unit, name, t in (("sparse_tensor_core", "Box-1D1R", 7), ("sparse_tensor_core", "Box-1D7R", 1),
                                  ("tensor_core", "Box-1D1R", 7), ("tensor_core", "Box-1D7R", 1),
                                  ("cuda_core", "Box-1D1R", 7))]
#: 1D at the depths the Tensor Core kernels reach there (r·t ≤ 64: Box-1D7R fused x2 ... x9), SPIDER's 15 points per
#: step fused as the bundled kernels fuse them.
BUNDLED += [("Box-1D7R", unit, "Box-1D7R", t, grid, "20011", grid) for grid in ("10240000", "134217728")
            for unit in ("sparse_tensor_core", "tensor_core") for t in (2, 4, 8, 9)]
BUNDLED += [("Box-1D7R", unit, COLUMN_15, 1, grid, "61x203", spider) for grid, spider in
            (("1024x10000", "10240000"), ("1024x131072", "134217728"))
            for unit in ("sparse_tensor_core", "tensor_core", "cuda_core")]


def run_spider(path: str, args: list[str]) -> float:
    """One run of a SPIDER program: the GStencils/s it prints last on its result line."""
    proc = subprocess.run([path, *args, "--profile"], capture_output=True, text=True, timeout=300)
    if proc.returncode:
        raise RuntimeError(f"{path} exited with {proc.returncode}: {proc.stderr[-500:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SPTC")][-1]
    return float(line.rsplit(",", 1)[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spider-bin", required=True, help="folder of SPIDER's programs, built by the user")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", choices=["2d"], help="SPIDER's 2D programs and the bundled 2D rows alone")
    args = ap.parse_args(argv)
    from tcadvisor.gpu.backend import cupy, device_info
    from tcadvisor.gpu.runner import run

    cp = cupy()
    os.makedirs(args.out, exist_ok=True)
    gpu, today = device_info()["name"], datetime.date.today().isoformat()
    rows = []
    for label, prog, pargs, footprint, sgrid in SPIDER:
        if args.only == "2d" and not label.startswith("2D"):
            continue
        path = os.path.join(args.spider_bin, prog)
        for i in range(args.repeats):
            g = run_spider(path, pargs)
            rows.append({"gpu": gpu, "date": today, "code": "SPIDER", "workload": label, "footprint": footprint,
                         "unit": "dense" if "dense" in prog else "sparse", "stencil": footprint, "fuse": 1,
                         "grid": sgrid, "spider_grid": sgrid, "run": i, "knobs": "", "accumulators": "FP16",
                         "gstencils_per_step": g, "correct": "",
                         "kernel": f"{prog} {' '.join(pargs)} --profile"})
            print(f"SPIDER {label}: {g:.1f} GStencils/s", flush=True)
    for footprint, unit, name, t, grid, small, spider_grid, *knobs in BUNDLED:
        if args.only == "2d" and footprint != "Box-2D7R":
            continue
        kn = dict(knobs[0]) if knobs else {}
        st = parse_stencil(name) if isinstance(name, str) else name
        chk = run(st, "half", unit, fuse=t, grid=small, steps=2 * t + 1, seed=5, gpu="h100-measured",
                  kernel_options=kn)
        res = run(st, "half", unit, fuse=t, grid=grid, steps=10 * t, seed=1, check=False, repeats=args.repeats,
                  gpu="h100-measured", kernel_options=kn)
        per_step = res.gstencils * st.radius / 7  # steps of radius r: r/7 of a SPIDER step (radius 7) each
        rows.append({"gpu": gpu, "date": today, "code": "tcadvisor", "workload": f"{footprint} as {st.name} x{t}",
                     "footprint": footprint, "unit": unit, "stencil": st.name, "fuse": t, "grid": grid,
                     "spider_grid": spider_grid, "run": "median", "knobs": str(kn),
                     "accumulators": "FP16" if kn.get("half_accumulators") else "FP32",
                     "gstencils_per_step": per_step, "correct": chk.passed, "kernel": res.kernel})
        print(f"tcadvisor {unit} {st.name} x{t} on {grid}: {per_step:.1f} GStencils/s per {footprint} step, "
              f"correct={chk.passed}", flush=True)
        cp.get_default_memory_pool().free_all_blocks()
    with open(os.path.join(args.out, "side-by-side.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    spider = {(r["grid"], r["unit"]): [] for r in rows if r["code"] == "SPIDER"}
    for r in rows:
        if r["code"] == "SPIDER":
            spider[(r["grid"], r["unit"])].append(r["gstencils_per_step"])
    med = {k: statistics.median(v) for k, v in spider.items()}
    lines = [f"# SPIDER and the bundled kernels side by side ({gpu}, {today})", "",
             "Written by `benchmarks/spider_side_by_side.py`. GStencils/s per SPIDER step (one 15 x 15 box in 2D, "
             "15 points in 1D); SPIDER: median of its runs, FP16 accumulators; bundled: the accumulators named, at "
             "the kernel's defaults but for the knobs named.", "",
             "| workload | grid | knobs | accumulators | SPIDER sparse | SPIDER dense | bundled | correct | "
             "bundled / SPIDER sparse | bundled / SPIDER dense |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["code"] != "tcadvisor":
            continue
        s, d = med.get((r["spider_grid"], "sparse")), med.get((r["spider_grid"], "dense"))
        g = r["gstencils_per_step"]
        lines.append(f"| {r['workload']} ({r['unit']}) | {r['grid']} | {r['knobs'] or 'defaults'} | "
                     f"{r['accumulators']} | {s:.1f} | {'' if d is None else f'{d:.1f}'} | {g:.1f} | "
                     f"{r['correct']} | {g / s:.2f} | {'' if d is None else f'{g / d:.2f}'} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
