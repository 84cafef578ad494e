"""Whether the refined model should count the 3D CUDA-core kernel's vector loads as fewer instructions (n_vl, the
values one shared-memory load instruction reads; 2026-11-28), judged leave-one-shape-out on both corpora with every
constant refitted per held-out shape: n_vl as the plans give it against n_vl = 1 for every run (the loads counted
as values, as before).  Only the 28 runs per corpus that read their rows as vectors differ; the figures are the
whole corpus's and those runs' own.

    PYTHONPATH=. python benchmarks/experiment_vector_loads.py > validation/results/refined-fit-2026-11-27/experiment-vector-loads.txt
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import CORPORA  # noqa: E402
from tcadvisor import model  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402


def main() -> int:
    for mode in ("n_vl from the plan", "n_vl = 1"):
        for gpu, folder, spec in CORPORA:
            runs = F.load_runs(Path(folder), resolve_gpu(spec).spec, gpu)
            vector = [i for i, r in enumerate(runs) if r.inputs.get(model.n_vl, 1) != 1]
            if mode == "n_vl = 1":
                for r in runs:
                    if model.n_vl in r.inputs:
                        r.inputs[model.n_vl] = 1
            pred = F.leave_one_out(runs, lambda r: r.shape)
            rep = F.report(pred, runs)
            a = rep["all"]
            err = pred / np.array([r.measured for r in runs]) - 1
            e = err[vector]
            print(f"{mode} {gpu}: median {100 * a['median']:.1f} %, p90 {100 * a['p90']:.1f} %, winners "
                  f"{rep['winners'][0]}/{rep['winners'][1]}, best depth {rep['best_depth'][0]}/{rep['best_depth'][1]}; "
                  f"the {len(e)} vector-load runs: median {100 * np.median(e):+.1f} %, median absolute "
                  f"{100 * np.median(abs(e)):.1f} %", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
