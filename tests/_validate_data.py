"""Recorded H100 measurements (tests/data/validate/kernels.csv) as the runner's results, for CPU tests."""
import csv
import os
from fractions import Fraction
from types import SimpleNamespace

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "validate")


def rows():
    with open(os.path.join(DATA, "kernels.csv"), newline="") as f:
        return list(csv.DictReader(f))


def run_result(row: dict) -> SimpleNamespace:
    """A RunResult of the bundled-kernel interface with the recorded numbers of one CSV row."""
    unit, dtype, fuse = row["unit"], row["dtype"], int(row["fuse"])
    precision = {"double": "fp64", "float": "fp32" if unit == "cuda_core" else "tf32"}[dtype]
    steps = int(row["steps"])
    seconds = float(row["seconds"])
    return SimpleNamespace(
        impl=row["impl"], kernel_name="cuda_cores" if unit == "cuda_core" else "tensor_cores",
        cuda_function=("cc_stream3d" if "3D" in row["stencil"] else "cc_stream2d") if unit == "cuda_core" else "tc_stream",
        precision=precision,
        mma=row["mma"] or None,
        alpha=Fraction(row["alpha"]).limit_denominator(1000) if row["alpha"] else None,
        grid=tuple(int(v) for v in row["grid"].split("x")), steps=steps, sweeps=[fuse] * (steps // fuse),
        device=row["gpu"], kernel=row["kernel"], checked=True, passed=row["correct"] == "True",
        max_rel_error=float(row["max_rel_error"]), tolerance=1e-12 if dtype == "double" else 1e-3, unwritten=0,
        seconds=seconds, seconds_all=[seconds], gstencils=float(row["gstencils"]),
        useful_tflops=float(row["useful_tflops"]), executed_tflops=float(row["executed_tflops"]), prediction=None,
    )
