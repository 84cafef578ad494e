"""Shared by the bytes-in-flight experiments (experiment_l2_in_flight.py, experiment_dram_rows_3d.py): one variant of
q_b, the bytes a block keeps in flight, judged leave-one-shape-out on both corpora with every constant refitted per
held-out shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tcadvisor import model, refinement
from tcadvisor.hardware import resolve_gpu
from tcadvisor.impls import find_impl
from tcadvisor.mma import MmaShape
from tcadvisor.validate import fitting as F

CORPORA = (("H100", "validation/results/h100-sxm-2026-11-27/corpus", "h100-calibrated"),
           ("H200", "validation/results/h200-2026-11-27/corpus", "h200-calibrated"))


def plan_options(run) -> dict:
    """The options of the plan a recorded Tensor Core run launched (read back from its kernel description)."""
    row = run.row
    impl = find_impl(F.PROFILES[run.unit])
    mma = MmaShape.parse(row["mma"]) if row["mma"] else None
    ctx = refinement.Context(impl, impl.tiling, run.unit, run.stencil, run.fuse, row["dtype"], run.precision, mma,
                             None)
    return refinement.recorded_plan(ctx, row["kernel"]).options


def judge(mode: str, factor, per_dims: bool = False) -> None:
    """Print, per GPU, the held-out errors, winners and best depths with q_b scaled by ``factor(run)``; with
    ``per_dims`` also the median signed and absolute error per dimensions and unit."""
    for gpu, folder, spec in CORPORA:
        runs = F.load_runs(Path(folder), resolve_gpu(spec).spec, gpu)
        for r in runs:
            r.inputs[model.q_b] = r.inputs[model.q_b] * factor(r)
        pred = F.leave_one_out(runs, lambda r: r.shape)
        rep = F.report(pred, runs)
        a = rep["all"]
        print(f"{mode} {gpu}: median {100 * a['median']:.1f} %, p90 {100 * a['p90']:.1f} %, worst "
              f"{100 * a['worst']:.0f} % ({a['worst_run']}), winners {rep['winners'][0]}/{rep['winners'][1]}, best "
              f"depth {rep['best_depth'][0]}/{rep['best_depth'][1]}", flush=True)
        if not per_dims:
            continue
        err = pred / np.array([r.measured for r in runs]) - 1
        for dims in (1, 2, 3):
            for unit in ("cuda_core", "tensor_core", "sparse_tensor_core"):
                e = err[[i for i, r in enumerate(runs) if r.stencil.dims == dims and r.unit == unit]]
                print(f"    {dims}D {unit}: {len(e)} runs, median {100 * np.median(e):+.1f} %, median absolute "
                      f"{100 * np.median(abs(e)):.1f} %", flush=True)
