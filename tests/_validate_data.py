"""Recorded H100 measurements (tests/data/validate/kernels.csv) as the runner's results, for CPU tests."""
import csv
import os
from fractions import Fraction
from types import SimpleNamespace

from tcadvisor.hardware import load_spec_file
from tcadvisor.stencil import parse_stencil
from tcadvisor.validate import compare, runner
from tcadvisor.validate.calibrate import Calibration, Measured
from tcadvisor.validate.records import Measurement, Results
from tcadvisor.validate.suites import Config

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "validate")
SPEC = load_spec_file(os.path.join(DATA, "ceilings.yaml"))


def recorded() -> tuple[list[Measurement], list[dict]]:
    out, raw = [], rows()
    for row in raw:
        st = parse_stencil(row["stencil"])
        cfg = Config(f"{row['stencil']}-{row['dtype']}", st, row["dtype"], int(row["fuse"]), row["unit"], row["grid"],
                     5, int(row["steps"]) // int(row["fuse"]), 1)
        m = runner.base_measurement("recorded", cfg)
        runner.fill_from_result(m, run_result(row), SPEC, st)
        compare.derive(m)
        out.append(m)
    return out, raw


def recorded_results() -> Results:
    ms, _ = recorded()
    comps = compare.comparisons(ms, 0.1)
    res = Results(tool="test", date="2026-11-22", device=ms[0].device, spec=runner.spec_record(SPEC),
                  suites=["recorded"], band=0.1, measurements=ms, comparisons=comps)
    res.summary = compare.summarize(ms, comps)
    return res


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


def h100_like() -> Calibration:
    """A calibration with the rates measured on the project's H100 (its documented ceilings)."""
    def m(key, tflops, clock=1980.0):
        return Measured(key, key, tflops * 1e12, [0.02] * 5, 1.0, "test", clock)

    c = Calibration("NVIDIA H100 80GB HBM3", (9, 0), 132, "2026-11-23",
                        Measured("bandwidth", "bw", 3.021e12, [0.1], 1.0, "copy"),
                        clocks={"clocks.max.sm": 1980.0, "clocks.max.mem": 2619.0, "driver_version": "550.54.15"})
    c.fma = {"fp64": m("cuda_core/fp64", 30.6), "fp32": m("cuda_core/fp32", 65.9, 1755.0)}
    for unit, precision, shape, rate in [("tensor_core", "fp64", "m8n8k4", 33.2), ("tensor_core", "fp64", "m16n8k8", 66.5),
                                         ("tensor_core", "tf32", "m16n8k8", 326), ("tensor_core", "fp16", "m16n8k16", 662),
                                         ("sparse_tensor_core", "fp16", "m16n8k32", 919),
                                         ("sparse_tensor_core", "tf32", "m16n8k16", 459)]:
        c.mma[(unit, precision, shape)] = m(f"{unit}/{precision}/{shape}", rate)
    return c


FAKE_NCU = '''#!{python}
"""Stands in for ncu: runs no program, but writes the status file the profile driver would write and
the CSV ncu would log (a marker launch before each configuration, then its kernel)."""
import json, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
with open(args[-1]) as f:
    manifest = json.load(f)
rows = ['"ID","Kernel Name","Grid Size","dram__bytes_read.sum","dram__bytes_write.sum","{dfma}","{dmma}"',
        '"","","","byte","byte","inst","inst"']
n = 0
with open(manifest["status"], "w") as status:
    for e in manifest["entries"]:
        rows.append('"%d","tcadv_marker","(%d, 1, 1)","0","0","0","0"' % (n, e["index"] + 1)); n += 1
        failed = e["fuse"] == 5
        if not failed:
            name = "tc_stream" if e["unit"] == "tensor_core" else ("cc_stream3d" if "3D" in e["stencil"] else "cc_stream2d")
            rows.append('"%d","%s","(40, 1, 1)","870,000,000","850,000,000","%d","%d"'
                        % (n, name, 2 * 10**9 * e["fuse"], 10**6 * e["fuse"])); n += 1
        status.write(json.dumps({{"index": e["index"], "ok": not failed, "error": "RuntimeError: boom" if failed else ""}}) + "\\n")
with open(log, "w") as f:
    f.write("==PROF== Connected to process 1\\n" + "\\n".join(rows) + "\\n")
'''
