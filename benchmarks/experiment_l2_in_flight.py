"""Experiment (not adopted): the L2 prefetches counted as bytes in flight, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_l2_in_flight.py shipped|sum|max

The refined model's sustained bandwidth follows Little's law over q_b, the bytes one block has in flight: on
Tensor Cores its input rows times (1 + prefetch), the slices of A fragments loaded ahead.  The kernels' L2
prefetch (K_L2PF: the rows of the slice l2 ahead requested into L2 each iteration) keeps requests outstanding
too, which q_b does not count.  ``sum`` counts them on top, (1 + prefetch + l2); ``max`` takes the deeper of the
two, max(1 + prefetch, l2); ``shipped`` is today's model.  Every variant refits all constants per held-out shape.
Results: validation/results/refined-fit-2026-11-27/experiment-l2-in-flight.txt.
"""
import sys
from pathlib import Path

from tcadvisor import model, refinement
from tcadvisor.hardware import resolve_gpu
from tcadvisor.impls import find_impl
from tcadvisor.mma import MmaShape
from tcadvisor.validate import fitting as F

mode = sys.argv[1]
CORPORA = (("H100", "validation/results/h100-sxm-2026-11-27/corpus", "h100-calibrated"),
           ("H200", "validation/results/h200-2026-11-27/corpus", "h200-calibrated"))


def factor(run) -> float:
    """The variant's q_b over the shipped one for a Tensor Core run (1 on CUDA cores)."""
    if run.chain != "tensor_core" or mode == "shipped":
        return 1.0
    row = run.row
    impl = find_impl(F.PROFILES[run.unit])
    mma = MmaShape.parse(row["mma"]) if row["mma"] else None
    ctx = refinement.Context(impl, impl.tiling, run.unit, run.stencil, run.fuse, row["dtype"], run.precision, mma,
                             None)
    plan = refinement.recorded_plan(ctx, row["kernel"])
    pf, l2 = plan.options["prefetch"], plan.options.get("l2_prefetch", 0)
    return (1 + pf + l2) / (1 + pf) if mode == "sum" else max(1 + pf, l2) / (1 + pf)


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
