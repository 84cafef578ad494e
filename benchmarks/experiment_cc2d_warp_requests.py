"""Experiment: the 2D CUDA-core kernel's bytes in flight as one load request per thread, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_cc2d_warp_requests.py shipped|requests

Nsight Compute on Box-2D1R t = 1 (validation/results/h200-2026-12-01/cc2d-memory-ncu/): FP64, FP32 and FP16 keep the
same 4 KiB per block in flight by the plan's count (the rows of one iteration), yet reach 70, 72 and 57 % of the DRAM
bandwidth at 37, 58 and 33 resident warps per SM, with load requests of 256 B (FP64) and 128 B (FP32, and the FP16
pairs' 32-bit words).  The plan's bytes per SM (achieved blocks x 4 KiB: 37, 29 and 33 KiB) do not order those
bandwidths; the resident threads times one access each (9.5, 7.4 and 4.2 KiB) do.  ``requests`` takes q_b of every
2D CUDA-core run as the block's threads times the bytes of one access (8 in FP64, 4 otherwise) times the iterations
copied ahead; ``shipped`` is today's model.  Every variant refits all constants per held-out shape.
Results (not adopted: worse held out on both GPUs, H100 median 11.2 -> 13.4 %, H200 13.1 -> 16.7 %, though the H200
named 140 winners of 180 against 130): validation/results/refined-fit-2026-11-27/experiment-cc2d-warp-requests.txt.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.q_b_experiment import judge  # noqa: E402
from tcadvisor import model  # noqa: E402

mode = sys.argv[1]
THREADS = re.compile(r"^(\d+) threads x (\d+) columns")
AHEAD = re.compile(r"(\d+) iterations ahead")


def factor(run) -> float:
    """The variant's q_b over the shipped one for a 2D CUDA-core run (1 elsewhere)."""
    if mode == "shipped" or run.chain != "cuda_core" or run.stencil.dims != 2:
        return 1.0
    m = THREADS.match(run.row.get("kernel", ""))
    if not m:
        return 1.0
    ahead = AHEAD.search(run.row["kernel"])
    access = 8 if run.precision == "fp64" else 4
    return int(m[1]) * access * (int(ahead[1]) if ahead else 1) / run.inputs[model.q_b]


judge(mode, factor, per_dims=True)
