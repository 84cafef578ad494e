"""Benchmark of the bundled kernels against what users run instead, all in one process.

For each case: the bundled CUDA-core and Tensor Core kernels at several fusion
depths, CuPy ``correlate`` and cuDNN (PyTorch) one step per call, each checked
against the float64 reference, timed with CUDA events (median of repeats), and
set against the model's bound computed with measured ceilings: the copy
bandwidth measured at the start of this run, and the compute peaks of
``--ceilings`` (default: the project's measured H100 file, hwspecs/h100-sxm-measured.yaml).

    python benchmarks/bench_gpu_kernels.py --out validation/results/h100-... [--quick]

Writes ``kernels.csv`` (one row per kernel or baseline run) and ``ceilings.yaml``
(the spec the bounds used) into --out, and prints a table.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.hardware import find_spec, load_spec_file  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402
from gpu_session_kernels import measure_copy_bandwidth  # noqa: E402  (benchmarks/, this script's folder)

COLUMNS = ["gpu", "date", "unit", "impl", "stencil", "fuse", "dtype", "grid", "mma", "steps", "seconds", "gstencils",
           "bound_gstencils", "fraction_of_bound", "bound", "correct", "max_rel_error", "useful_tflops",
           "executed_tflops", "alpha", "kernel"]


def write_ceilings(path, base_file, bandwidth, device):
    raw = yaml.safe_load(open(base_file))
    raw["name"] = f"{device} (copy bandwidth measured by bench_gpu_kernels.py; peaks from {os.path.basename(base_file)})"
    raw["aliases"] = ["bench-measured"]
    raw["device_names"] = []
    raw.pop("default", None)
    raw.setdefault("sources", {})["bench"] = (f"device-to-device copy of 2 GiB measured in this benchmark run "
                                              f"({datetime.date.today().isoformat()}), bytes read plus written")
    raw["bandwidth"] = {"value": round(bandwidth / 1e9, 1), "unit": "GB/s", "source": "bench"}
    with open(path, "w") as f:
        yaml.safe_dump(raw, f, sort_keys=False)
    return load_spec_file(path)


def cases(quick: bool):
    big2, big3 = "10240x10240", "512x512x512"
    out = []
    for dtype, cc_t, tc_t in (("double", range(1, 9), (1, 2, 3, 4)), ("float", range(1, 11), (1, 2, 3, 4))):
        if quick:
            cc_t, tc_t = (1, 3, 6), (1, 3)
        out.append(("Box-2D1R", dtype, big2, list(cc_t), list(tc_t)))
    for dtype in ("double", "float"):
        out.append(("Box-3D1R", dtype, big3, [1, 2, 3] if not quick else [1, 2], [1, 2, 3] if not quick else [1]))
    if not quick:
        out.append(("Star-2D1R", "double", big2, [1, 2, 4, 8], [1, 2, 3]))
        out.append(("Box-2D2R", "double", big2, [1, 2, 3], [1, 2]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ceilings", default=None, help="spec file with measured peaks (default hwspecs/h100-sxm-measured.yaml)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sweeps", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--extra-tc-shapes", action="store_true", help="also time the other FP64 shapes at t = 3")
    args = ap.parse_args()

    from tcadvisor.gpu.backend import cupy, device_info
    from tcadvisor.gpu.baselines import cupy_correlate, torch_cudnn
    from tcadvisor.gpu.reference import reference_steps
    from tcadvisor.gpu.runner import default_weights, model_bound, run

    cp = cupy()
    os.makedirs(args.out, exist_ok=True)
    device = device_info()["name"]
    bw = measure_copy_bandwidth(cp)
    base = args.ceilings or os.path.join(os.path.dirname(__file__), "..", "hwspecs", "h100-sxm-measured.yaml")
    spec = write_ceilings(os.path.join(args.out, "ceilings.yaml"), base, bw, device)
    print(f"device {device}; measured copy bandwidth {bw / 1e12:.3f} TB/s; peaks from {os.path.basename(base)}",
          flush=True)
    date = datetime.date.today().isoformat()
    rows = []

    def add(row):
        row.update({"gpu": device, "date": date})
        rows.append(row)
        print(f"{row['stencil']:>9} {row['dtype']:>6} {row['unit']:>12} {row['impl']:>18} t={row['fuse']:<2} "
              f"{row.get('mma') or '':>8} {row['gstencils']:8.1f} GSt/s  bound {row['bound_gstencils']:8.1f}  "
              f"{100 * row['fraction_of_bound']:5.1f}%  correct={row['correct']} err={row['max_rel_error']:.1e}",
              flush=True)

    for name, dtype, grid, cc_depths, tc_depths in cases(args.quick):
        stencil = parse_stencil(name)
        runs = [("cuda_core", t, None) for t in cc_depths] + [("tensor_core", t, None) for t in tc_depths]
        if args.extra_tc_shapes and dtype == "double" and name == "Box-2D1R":
            runs += [("tensor_core", 3, m) for m in ("m16n8k8", "m16n8k4", "m8n8k4")]
        for unit, t, mma in runs:
            try:
                res = run(stencil, dtype, unit, fuse=t, grid=grid, steps=t * args.sweeps, seed=1, gpu=None,
                          mma=mma, repeats=args.repeats)
            except TcAdvisorError as exc:
                print(f"skip {name} {dtype} {unit} t={t}: {exc}", flush=True)
                continue
            bound = model_bound(stencil, unit, t, dtype, spec, res.alpha, mma=res.mma)
            add({"unit": unit, "impl": res.impl, "stencil": name, "fuse": t, "dtype": dtype, "grid": grid,
                 "mma": res.mma or "", "steps": res.steps,
                 "seconds": res.seconds, "gstencils": res.gstencils, "bound_gstencils": bound.gstencils,
                 "fraction_of_bound": res.gstencils / bound.gstencils, "bound": bound.bound,
                 "correct": bool(res.passed), "max_rel_error": res.max_rel_error,
                 "useful_tflops": res.useful_tflops, "executed_tflops": res.executed_tflops,
                 "alpha": float(res.alpha) if res.alpha is not None else "", "kernel": res.kernel})
            del res
            cp.get_default_memory_pool().free_all_blocks()
        # baselines: one step per call
        steps = 8
        w = default_weights(stencil, 1)
        shape = tuple(int(v) for v in grid.split("x"))
        np_dtype = np.float64 if dtype == "double" else np.float32
        x0 = cp.random.default_rng(1).uniform(-1, 1, size=shape).astype(np_dtype)
        ref = reference_steps(x0, w, steps)
        bound1 = model_bound(stencil, "cuda_core", 1, dtype, spec, None)
        tol = 1e-12 if dtype == "double" else 1e-5
        for fn in (cupy_correlate, torch_cudnn):
            try:
                out = fn(x0, w, steps, repeats=args.repeats)
            except Exception as exc:  # noqa: BLE001 - report and go on with the other baseline
                print(f"baseline {fn.__name__} failed: {exc}", flush=True)
                continue
            if out is None:
                print("baseline torch: PyTorch with CUDA not available", flush=True)
                continue
            err = float(cp.max(cp.abs(out["output"].astype(cp.float64) - ref)) / cp.max(cp.abs(ref)))
            g = math.prod(shape) * steps / out["seconds"] / 1e9
            add({"unit": "cuda_core", "impl": out["impl"], "stencil": name, "fuse": 1, "dtype": dtype, "grid": grid,
                 "mma": "", "steps": steps, "seconds": out["seconds"], "gstencils": g,
                 "bound_gstencils": bound1.gstencils, "fraction_of_bound": g / bound1.gstencils,
                 "bound": bound1.bound, "correct": bool(err <= tol * math.sqrt(steps)), "max_rel_error": err,
                 "useful_tflops": g * 2 * stencil.K / 1e3, "executed_tflops": g * 2 * stencil.K / 1e3,
                 "alpha": "", "kernel": "one step per call"})
            del out
        del x0, ref
        cp.get_default_memory_pool().free_all_blocks()

    with open(os.path.join(args.out, "kernels.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        wr.writeheader()
        for row in rows:
            wr.writerow(row)
    print(f"wrote {len(rows)} rows to {os.path.join(args.out, 'kernels.csv')}")


if __name__ == "__main__":
    main()
