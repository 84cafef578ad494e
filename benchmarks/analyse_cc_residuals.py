"""Where the refined model misses the CUDA-core kernels, and on which side (no GPU).

    PYTHONPATH=. python benchmarks/analyse_cc_residuals.py > validation/results/refined-fit-2026-11-27/cc-residuals.txt

Reads the leave-one-shape-out predictions of benchmarks/fit_refined.py (predictions.csv) and both corpora's
CUDA-core runs.  Prints (1) the median of predicted over measured, held out, by GPU, dimensions, precision and
depth; (2) the same by the side that binds the shipped model's prediction (memory: the prediction moves when the
bandwidth is made unlimited; compute otherwise); (3) for the 2D runs at t <= 2 the DRAM bandwidth each reached
(the model's bytes per point, 2 x S per sweep, at the measured rate) beside the bandwidth the model's bytes in
flight sustain (B_eff of docs/model.md) at that run's resident blocks.  A bias that follows the precision and not
the binding side points at a term both sides share, or at a mechanism the terms do not hold; the third table
separates the memory side's part.
"""
from __future__ import annotations

import collections
import csv
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import CORPORA  # noqa: E402
from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402

PREDICTIONS = "validation/results/refined-fit-2026-11-27/predictions.csv"


def depth_band(t: int) -> str:
    return "t = 1" if t == 1 else "t = 2-4" if t <= 4 else "t = 5-8" if t <= 8 else "t >= 9"


def b_eff(inputs: dict, constants: dict) -> float:
    """The bandwidth the plan's bytes in flight sustain (docs/model.md, "The achievable fraction of the bandwidth")."""
    flight = inputs[model.N_b] * inputs[model.q_b] * inputs[model.N_sm]
    return 1 / (constants[model.L_mem] / flight + 1 / (inputs[model.B] * constants[model.eta_B0]))


def main() -> int:
    held = {(r["gpu"], r["stencil"], r["unit"], r["precision"], r["fuse"], r["grid"]):
            float(r["leave_one_shape_out"]) / float(r["measured"]) for r in csv.DictReader(open(PREDICTIONS))}
    constants = refinement.constants()
    unlimited = {**constants, model.eta_B0: 1e6, model.L_mem: 1e-15}
    print(f"# CUDA-core runs: held-out predicted / measured ({PREDICTIONS}), medians\n")
    for gpu, folder, spec in CORPORA:
        runs = [r for r in F.load_runs(Path(folder), resolve_gpu(spec).spec, gpu) if r.unit == "cuda_core"]
        shipped, compute_only = F.predict(runs, constants), F.predict(runs, unlimited)
        by_depth, by_side = collections.defaultdict(list), collections.defaultdict(list)
        for r, p, c in zip(runs, shipped, compute_only):
            ratio = held[(gpu, r.row["stencil"], r.unit, r.precision, str(r.row["fuse"]), r.row["grid"])]
            by_depth[(r.stencil.dims, r.precision, depth_band(r.fuse))].append(ratio)
            by_side[(r.stencil.dims, r.precision, "memory" if p < 0.999 * c else "compute")].append(ratio)
        print(f"## {gpu}: by depth\n\n| dims | precision | depth | runs | held-out predicted / measured |\n"
              "|---|---|---|---|---|")
        for k in sorted(by_depth):
            print(f"| {k[0]}D | {k[1].upper()} | {k[2]} | {len(by_depth[k])} | {statistics.median(by_depth[k]):.2f} |")
        print(f"\n## {gpu}: by the side that binds the shipped prediction\n\n"
              "| dims | precision | side | runs | held-out predicted / measured |\n|---|---|---|---|---|")
        for k in sorted(by_side):
            print(f"| {k[0]}D | {k[1].upper()} | {k[2]} | {len(by_side[k])} | {statistics.median(by_side[k]):.2f} |")
        print(f"\n## {gpu}: 2D, t <= 2: DRAM bandwidth reached and the model's B_eff at the run's resident blocks\n\n"
              "| precision | runs | reached, TB/s (median, range) | B_eff, TB/s (median, range) | reached / B_eff |\n"
              "|---|---|---|---|---|")
        shallow = collections.defaultdict(list)
        for r in runs:
            if r.stencil.dims == 2 and r.fuse <= 2:
                reached = r.measured * 1e9 / r.fuse * 2 * r.inputs[model.S]
                shallow[r.precision].append((reached / 1e12, b_eff(r.inputs, constants) / 1e12))
        for prec in sorted(shallow):
            got, eff = zip(*shallow[prec])
            share = [g / e for g, e in shallow[prec]]
            print(f"| {prec.upper()} | {len(got)} | {statistics.median(got):.2f} ({min(got):.2f}-{max(got):.2f}) | "
                  f"{statistics.median(eff):.2f} ({min(eff):.2f}-{max(eff):.2f}) | {statistics.median(share):.2f} "
                  f"({min(share):.2f}-{max(share):.2f}) |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
