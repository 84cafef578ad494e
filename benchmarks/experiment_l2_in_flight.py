"""Experiment (not adopted): the L2 prefetches counted as bytes in flight, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_l2_in_flight.py shipped|sum|max

The refined model's sustained bandwidth follows Little's law over q_b, the bytes one block has in flight: on
Tensor Cores its input rows times (1 + prefetch), the slices of A fragments loaded ahead.  The kernels' L2
prefetch (K_L2PF: the rows of the slice l2 ahead requested into L2 each iteration) keeps requests outstanding
too, which q_b does not count.  ``sum`` counts them on top, (1 + prefetch + l2); ``max`` takes the deeper of the
two, max(1 + prefetch, l2); ``shipped`` is today's model.  Every variant refits all constants per held-out shape.
Results: validation/results/refined-fit-2026-11-27/experiment-l2-in-flight.txt.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import judge, plan_options  # noqa: E402

mode = sys.argv[1]


def factor(run) -> float:
    """The variant's q_b over the shipped one for a Tensor Core run (1 on CUDA cores)."""
    if run.chain != "tensor_core" or mode == "shipped":
        return 1.0
    o = plan_options(run)
    pf, l2 = o["prefetch"], o.get("l2_prefetch", 0)
    return (1 + pf + l2) / (1 + pf) if mode == "sum" else max(1 + pf, l2) / (1 + pf)


judge(mode, factor)
