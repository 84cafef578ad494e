"""Where the refined model misses the dense Tensor Core kernel in 3D, and on which side (no GPU).

    PYTHONPATH=. python benchmarks/analyse_tc3d_residuals.py > validation/results/refined-fit-2026-11-27/tc3d-residuals.txt

Reads the leave-one-shape-out predictions of benchmarks/fit_refined.py (predictions.csv) and, for every Tensor Core
run of both corpora, the plan its kernel description records.  Prints (1) the median signed held-out error by unit,
dimensions, precision and lines per warp (x tiles in 1D/2D, inner rows in 3D: ``ir``), and (2) for the H100's 3D
dense FP16 runs the shipped model's prediction beside the same with no bandwidth limit ("compute only") and with
no latency term ("no latency"): where the prediction equals "no latency" the memory side binds it, where it equals
"compute only" the compute side.
"""
from __future__ import annotations

import collections
import csv
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import CORPORA, plan_options  # noqa: E402
from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402

PREDICTIONS = "validation/results/refined-fit-2026-11-27/predictions.csv"


def main() -> int:
    held = {(r["gpu"], r["stencil"], r["unit"], r["precision"], r["fuse"], r["grid"]):
            float(r["leave_one_shape_out"]) / float(r["measured"]) - 1 for r in csv.DictReader(open(PREDICTIONS))}
    print(f"# Held-out signed error of the Tensor Core kernels by lines per warp ({PREDICTIONS})\n")
    constants = refinement.constants()
    for gpu, folder, spec in CORPORA:
        runs = [r for r in F.load_runs(Path(folder), resolve_gpu(spec).spec, gpu) if r.unit != "cuda_core"]
        groups = collections.defaultdict(list)
        for r in runs:
            key = (gpu, r.row["stencil"], r.unit, r.precision, str(r.row["fuse"]), r.row["grid"])
            prec = "FP16/BF16" if r.precision in ("fp16", "bf16") else r.precision.upper()
            groups[(r.unit, r.stencil.dims, prec, plan_options(r).get("ir", 1))].append(held[key])
        print(f"## {gpu}\n\n| unit | dims | precision | lines per warp | runs | median signed error |\n|---|---|---|---|---|---|")
        for k in sorted(groups):
            e = groups[k]
            print(f"| {k[0]} | {k[1]}D | {k[2]} | {k[3]} | {len(e)} | {100 * statistics.median(e):+.1f} % |")
        print()
        if gpu != "H100":
            continue
        dense3 = [r for r in runs if r.unit == "tensor_core" and r.stencil.dims == 3 and r.precision == "fp16"]
        shipped = F.predict(dense3, constants)
        compute_only = F.predict(dense3, {**constants, model.eta_B0: 1e6, model.L_mem: 1e-15})
        no_latency = F.predict(dense3, {**constants, model.lambda_0: 1e-9, model.lambda_1: 1e-9})
        print("## H100, 3D dense FP16: which side binds the shipped model's prediction\n")
        print("| stencil | t | inner rows | DRAM bytes in flight q_b | measured | predicted | compute only | no latency |"
              "\n|---|---|---|---|---|---|---|---|")
        for r, p, c, n in sorted(zip(dense3, shipped, compute_only, no_latency),
                                 key=lambda x: (plan_options(x[0]).get("ir", 1), x[0].row["stencil"], x[0].fuse)):
            print(f"| {r.row['stencil']} | {r.fuse} | {plan_options(r).get('ir', 1)} | {r.inputs[model.q_b]:.0f} | "
                  f"{r.measured:.0f} | {p:.0f} ({p / r.measured - 1:+.0%}) | {c:.0f} | {n:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
