"""Experiment (adopted): the 3D Tensor Core kernels' bytes in flight to DRAM, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_dram_rows_3d.py shipped|all-rows

The refined model's sustained bandwidth follows Little's law over q_b, the bytes one block has in flight to DRAM.  In
3D a Tensor Core warp loads ni + ir - 1 input rows per slice for its ir inner rows; the ni - 1 halo rows are the inner
rows of the warps beside it along y, which reach it from L2 (each row comes from DRAM once).  ``shipped`` (today's
model) counts the ir rows per slice; ``all-rows`` counts all ni + ir - 1, as the model did before 2026-11-27 (session
40).  Every variant refits all constants per held-out shape; per dimensions and unit it prints the median signed and
absolute held-out error.  Results: validation/results/refined-fit-2026-11-27/experiment-dram-rows-3d.txt.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import judge, plan_options  # noqa: E402

mode = sys.argv[1]


def factor(run) -> float:
    """The variant's q_b over the shipped one for a run (1 but on 3D Tensor Core runs in ``all-rows``)."""
    if run.chain != "tensor_core" or run.stencil.dims != 3 or mode == "shipped":
        return 1.0
    o = plan_options(run)
    return (o["ni"] + o.get("ir", 1) - 1) / o.get("ir", 1)


judge(mode, factor, per_dims=True)
