"""Experiment (adopted): the 3D Tensor Core kernels' bytes in flight to DRAM, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_dram_rows_3d.py shipped|all-rows

The refined model's sustained bandwidth follows Little's law over q_b, the bytes one block has in flight to DRAM.  In
3D a Tensor Core warp loads ni + ir - 1 input rows per slice for its ir inner rows; the ni - 1 halo rows are the inner
rows of the warps beside it along y, which reach it from L2 (each row comes from DRAM once).  ``shipped`` (today's
model) counts the ir rows per slice; ``all-rows`` counts all ni + ir - 1, as the model did before 2026-11-27 (session
40).  Every variant refits all constants per held-out shape; per dimensions and unit it prints the median signed and
absolute held-out error.  Results: validation/results/refined-fit-2026-11-27/experiment-dram-rows-3d.txt.
"""
import sys
from pathlib import Path

import numpy as np

from tcadvisor import model, refinement
from tcadvisor.hardware import resolve_gpu
from tcadvisor.impls import find_impl
from tcadvisor.mma import MmaShape
from tcadvisor.validate import fitting as F

mode = sys.argv[1]
CORPORA = (("H100", "validation/results/h100-sxm-2026-11-27/corpus", "h100-calibrated"),
           ("H200", "validation/results/h200-2026-11-27/corpus", "h200-calibrated"))


def factor(run) -> float:
    """The variant's q_b over the shipped one for a run (1 but on 3D Tensor Core runs in ``all-rows``)."""
    if run.chain != "tensor_core" or run.stencil.dims != 3 or mode == "shipped":
        return 1.0
    row = run.row
    impl = find_impl(F.PROFILES[run.unit])
    mma = MmaShape.parse(row["mma"]) if row["mma"] else None
    ctx = refinement.Context(impl, impl.tiling, run.unit, run.stencil, run.fuse, row["dtype"], run.precision, mma,
                             None)
    o = refinement.recorded_plan(ctx, row["kernel"]).options
    return (o["ni"] + o.get("ir", 1) - 1) / o.get("ir", 1)


for gpu, folder, spec in CORPORA:
    runs = F.load_runs(Path(folder), resolve_gpu(spec).spec, gpu)
    for r in runs:
        r.inputs[model.q_b] = r.inputs[model.q_b] * factor(r)
    pred = F.leave_one_out(runs, lambda r: r.shape)
    rep = F.report(pred, runs)
    a = rep["all"]
    print(f"{mode} {gpu}: median {100 * a['median']:.1f} %, p90 {100 * a['p90']:.1f} %, worst {100 * a['worst']:.0f} % "
          f"({a['worst_run']}), winners {rep['winners'][0]}/{rep['winners'][1]}, best depth "
          f"{rep['best_depth'][0]}/{rep['best_depth'][1]}", flush=True)
    err = pred / np.array([r.measured for r in runs]) - 1
    for dims in (1, 2, 3):
        for unit in ("cuda_core", "tensor_core", "sparse_tensor_core"):
            e = err[[i for i, r in enumerate(runs) if r.stencil.dims == dims and r.unit == unit]]
            print(f"    {dims}D {unit}: {len(e)} runs, median {100 * np.median(e):+.1f} %, median absolute "
                  f"{100 * np.median(abs(e)):.1f} %", flush=True)
