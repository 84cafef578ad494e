"""The refined model against a recorded kernel benchmark: its error per stencil, precision and kernel path.

Every bundled-kernel row of the benchmark's kernels.csv is predicted by the refined model on the configuration
the kernel printed about itself (tcadvisor.refinement.recorded_plan), with the calibrated spec given, and the
table groups the signed errors (predicted / measured - 1).  Nothing is fitted here.

    PYTHONPATH=. python benchmarks/refined_on_kernels.py KERNELS_CSV CALIBRATED_YAML [--out FILE]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.hardware_schema import load_spec_file  # noqa: E402
from tcadvisor.impls import find_impl  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402
from tcadvisor.validate.compare import predict  # noqa: E402

PROFILES = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc", "sparse_tensor_core": "tcadvisor-sptc"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels")
    ap.add_argument("spec")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    spec = load_spec_file(args.spec)
    groups: dict[tuple, list[float]] = {}
    with open(args.kernels) as f:
        for r in csv.DictReader(f):
            if r["impl"] != PROFILES.get(r["unit"]) or r["correct"] != "True":
                continue
            st = parse_stencil(r["stencil"])
            grid = (1,) * (3 - st.dims) + tuple(int(v) for v in r["grid"].split("x"))
            try:
                opt = predict(st, r["dtype"], r["unit"], int(r["fuse"]), spec,
                              None, find_impl(PROFILES[r["unit"]]), r["mma"] or None, model="refined", grid=grid,
                              kernel=r["kernel"])
            except TcAdvisorError:
                continue
            if not opt.available:
                continue
            path = " + ".join(name for name, text in (("copies", "copied asynchronously"),
                                                      ("kept columns", "own columns kept in registers"),
                                                      ("shared weights", "weights in shared memory"),
                                                      ("L2 prefetch", "L2 prefetch")) if text in r["kernel"])
            groups.setdefault((r["unit"], r["stencil"], r["dtype"], path), []).append(
                opt.gstencils / float(r["gstencils"]) - 1)
    lines = [f"# Refined model against {args.kernels}", "", f"Spec: {args.spec}; error = predicted / measured - 1.",
             "", "| unit | stencil | dtype | path | runs | median error | median abs error | worst |",
             "|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups):
        e = np.array(groups[key])
        worst = e[np.argmax(np.abs(e))]
        lines.append(f"| {' | '.join(key)} | {len(e)} | {100 * np.median(e):+.1f} % | {100 * np.median(np.abs(e)):.1f} % "
                     f"| {100 * worst:+.0f} % |")
    cc2d = np.concatenate([np.array(v) for k, v in groups.items() if k[0] == "cuda_core" and "3D" not in k[1]
                           and not k[3]] or [np.zeros(0)])
    if cc2d.size:
        lines += ["", f"2D CUDA-core runs on the plain path (no copies, no kept columns): {cc2d.size}, "
                      f"median error {100 * np.median(cc2d):+.1f} %, median abs error {100 * np.median(np.abs(cc2d)):.1f} %."]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
