"""Benchmark of every bundled kernel, unit x precision x fusion depth, against the model and the libraries.

For Box-2D1R, Box-2D3R, Star-2D1R, Box-2D2R (and Box-3D1R while the time budget
lasts): CUDA cores (FP64, FP32), dense Tensor Cores (FP64, TF32, FP16, BF16) and
Sparse Tensor Cores (TF32, FP16, BF16) at every fusion depth the kernel allows
(Tensor Cores r·t ≤ 8, Sparse r·t ≤ 7, CUDA cores until the kernel refuses or
r·t = 16); CuPy ``correlate`` and cuDNN (PyTorch) one step per call.  Every
configuration is first checked (every sweep against its rounding interval, the
result against the float64 reference) on an odd grid, then timed on a grid far
larger than L2 (CUDA events, median of repeats, ghost refreshes included).

Bounds use measured ceilings: the copy bandwidth measured at the start of this
run and the compute peaks of ``hwspecs/h100-sxm-measured.yaml`` (BF16 has no
measured rate there; the FP16 one stands in, marked in ceilings.yaml).

    python benchmarks/gpu_session_kernels.py --out DIR [--quick] [--budget-s 300]

Writes kernels.csv (the columns of the earlier results plus ``precision``),
ceilings.yaml and summary.md into DIR and prints the summary table last.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.hardware import load_spec_file  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

COLUMNS = ["gpu", "date", "unit", "impl", "stencil", "fuse", "dtype", "precision", "grid", "mma", "steps", "seconds",
           "gstencils", "bound_gstencils", "fraction_of_bound", "bound", "correct", "max_rel_error", "useful_tflops",
           "executed_tflops", "alpha", "kernel"]
DTYPES = {"cuda_core": ("double", "float"), "tensor_core": ("double", "float", "half", "bfloat16"),
          "sparse_tensor_core": ("float", "half", "bfloat16")}
#: Largest fused radius scanned per unit (the kernels' limits; CUDA cores: twice the Tensor Cores').
MAX_RADIUS = {"cuda_core": 16, "tensor_core": 8, "sparse_tensor_core": 7}
BIG = {2: "10240x10240", 3: "512x512x512"}
SMALL = {2: "517x1031", 3: "13x37x261"}
PRECISION_LABEL = {"fp64": "FP64", "fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16"}


def measure_copy_bandwidth(cp, nbytes=2 * 1024**3, repeats=10):
    a = cp.empty(nbytes // 8, dtype=cp.float64)
    a[...] = 1.0
    b = cp.empty_like(a)
    b[...] = a
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        b[...] = a
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
    del a, b
    cp.get_default_memory_pool().free_all_blocks()
    return 2 * nbytes / float(np.median(times))  # read + write


def write_ceilings(path, base_file, bandwidth, device):
    raw = yaml.safe_load(open(base_file))
    raw["name"] = f"{device} (copy bandwidth measured in this session; peaks from {os.path.basename(base_file)})"
    raw["aliases"] = ["session-measured"]
    raw["device_names"] = []
    raw.pop("default", None)
    src = raw.setdefault("sources", {})
    src["session"] = (f"device-to-device copy of 2 GiB measured by gpu_session_kernels.py "
                      f"({datetime.date.today().isoformat()}), bytes read plus written")
    src["bf16-assumed"] = "BF16 was not measured; the measured FP16 rate stands in (same hardware path)"
    raw["bandwidth"] = {"value": round(bandwidth / 1e9, 1), "unit": "GB/s", "source": "session"}
    for unit in ("tensor_core", "sparse_tensor_core"):
        peaks = raw["peak"].get(unit, {})
        if "fp16" in peaks and "bf16" not in peaks:
            peaks["bf16"] = {"value": peaks["fp16"]["value"], "source": "bf16-assumed"}
        shapes = raw.get("mma_shapes", {}).get(unit, {})
        if "fp16" in shapes and "bf16" not in shapes:
            shapes["bf16"] = shapes["fp16"]
    with open(path, "w") as f:
        yaml.safe_dump(raw, f, sort_keys=False)
    return load_spec_file(path)


def start_session(out_dir, base_file):
    """The opening of a GPU session script: CuPy, the device's name, the copy bandwidth measured now, and a spec
    of ``base_file``'s peaks with that bandwidth written to OUT_DIR/ceilings.yaml.  Returns
    (cupy, device name, bandwidth [B/s], spec path, spec, ISO date)."""
    from tcadvisor.gpu.backend import cupy, device_info

    cp = cupy()
    device = device_info()["name"]
    bandwidth = measure_copy_bandwidth(cp)
    spec_path = os.path.join(out_dir, "ceilings.yaml")
    spec = write_ceilings(spec_path, base_file, bandwidth, device)
    print(f"{device}: copy bandwidth {bandwidth / 1e9:.0f} GB/s", flush=True)
    return cp, device, bandwidth, spec_path, spec, datetime.date.today().isoformat()


def write_rows(path, columns, rows):
    """``rows`` (dicts) as a CSV of ``columns`` (other keys left out), rewritten whole: called after every row, so
    a session cut short keeps what it measured."""
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        wr.writeheader()
        wr.writerows(rows)


def check_with_control(stencil, unit, dtype, t, grid, options=None, control=True):
    """Two checked sweeps of ``stencil`` at depth ``t`` on ``grid`` (a small odd one), and, if ``control``, the same
    run with the largest weight perturbed (by as much as the kernel's own rounding model says the check must see,
    :func:`tcadvisor.gpu.checking.perturb_largest_weight`), which the same check must reject.
    Returns (the checked result, whether the control was caught; None without a control)."""
    from tcadvisor.gpu import runner as R
    from tcadvisor.gpu.checking import perturb_largest_weight

    w = R.default_weights(stencil, 1)

    def checked():
        return R.run(stencil, dtype, unit, fuse=t, grid=grid, steps=2 * t, weights=w, seed=1, check=True,
                     repeats=1, warmup=0, kernel_options=options or {})

    good = checked()
    if not control:
        return good, None
    real_make = R.make_kernel

    def perturbed(*a, **k):  # the reference keeps w, the kernel computes with a perturbed copy
        kern = real_make(*a, **k)
        kern.set_weights(perturb_largest_weight(w, kern.precision, kern.numerics()))
        return kern

    R.make_kernel = perturbed
    try:
        bad = checked()
    finally:
        R.make_kernel = real_make
    return good, not bad.check.passed


def depths(unit: str, radius: int, quick: bool, dims: int) -> list[int]:
    top = MAX_RADIUS[unit] // radius
    if dims == 3:
        top = min(top, 3 if unit != "cuda_core" else 7)  # 3D: partial scans (time), marked in the table
    return [t for t in range(1, top + 1) if not quick or t in (1, 3)]


class Session:
    def __init__(self, args, spec, device):
        self.args, self.spec, self.device = args, spec, device
        self.spec_path = os.path.join(args.out, "ceilings.yaml")
        self.rows: list[dict] = []
        self.date = datetime.date.today().isoformat()
        self.start = time.time()
        self.skipped: list[str] = []

    def over_budget(self) -> bool:
        return time.time() - self.start > self.args.budget_s

    def add(self, row):
        row.update({"gpu": self.device, "date": self.date})
        self.rows.append(row)
        frac = row["fraction_of_bound"]
        print(f"{row['stencil']:>9} {row['unit']:>18} {row['precision']:>4} t={row['fuse']:<2} {row['mma'] or '':>8} "
              f"{row['gstencils']:8.1f} GSt/s  bound {row['bound_gstencils'] or float('nan'):8.1f}  "
              f"{100 * frac if frac else float('nan'):5.1f}%  correct={row['correct']} "
              f"err={row['max_rel_error'] if row['max_rel_error'] is not None else float('nan'):.1e}", flush=True)
        self.flush()

    def flush(self):
        with open(os.path.join(self.args.out, "kernels.csv"), "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            wr.writeheader()
            wr.writerows(self.rows)

    def kernel(self, name, unit, dtype, t) -> bool:
        """Check on the small grid, time on the big one; False if the kernel refuses this depth."""
        from tcadvisor.gpu.backend import cupy
        from tcadvisor.gpu.runner import model_bound, run

        cp = cupy()
        st = parse_stencil(name)
        try:
            chk = run(st, dtype, unit, fuse=t, grid=SMALL[st.dims], steps=2 * t, seed=1, check=True, repeats=1,
                      warmup=0, gpu=self.spec_path)
            res = run(st, dtype, unit, fuse=t, grid=BIG[st.dims], steps=t * self.args.sweeps, seed=1, check=False,
                      repeats=self.args.repeats, warmup=1, gpu=self.spec_path)
        except TcAdvisorError as exc:
            print(f"stop {name} {unit} {dtype} at t={t}: {exc}", flush=True)
            return False
        opt = model_bound(st, unit, t, dtype, self.spec, res.alpha, mma=res.mma)
        bound = opt.gstencils if opt.available else None
        self.add({"unit": unit, "impl": res.impl, "stencil": name, "fuse": t, "dtype": dtype,
                  "precision": res.precision, "grid": BIG[st.dims], "mma": res.mma or "", "steps": res.steps,
                  "seconds": res.seconds, "gstencils": res.gstencils, "bound_gstencils": bound,
                  "fraction_of_bound": res.gstencils / bound if bound else None,
                  "bound": opt.bound if opt.available else None, "correct": bool(chk.passed),
                  "max_rel_error": chk.max_rel_error, "useful_tflops": res.useful_tflops,
                  "executed_tflops": res.executed_tflops,
                  "alpha": float(res.alpha) if res.alpha is not None else "", "kernel": res.kernel})
        del res, chk
        cp.get_default_memory_pool().free_all_blocks()
        return True

    def scan(self, name, unit, dtype, ts) -> None:
        """The depths ``ts`` in turn until the kernel refuses one; past the time budget each is listed as skipped."""
        for t in ts:
            if self.over_budget():
                self.skipped.append(f"{name} {unit} {dtype} t={t}")
                continue
            if not self.kernel(name, unit, dtype, t):
                break

    def baselines(self, name, dtypes):
        from tcadvisor.gpu.backend import cupy
        from tcadvisor.gpu.baselines import cupy_correlate, torch_cudnn
        from tcadvisor.gpu.checking import gamma
        from tcadvisor.gpu.numerics import UNIT_ROUNDOFF, from_storage, to_storage
        from tcadvisor.gpu.reference import reference_steps
        from tcadvisor.gpu.runner import DATA_RANGE, default_weights, model_bound

        cp = cupy()
        st = parse_stencil(name)
        steps = 8
        w = default_weights(st, 1)
        shape = tuple(int(v) for v in BIG[st.dims].split("x"))
        for dtype in dtypes:
            x0 = to_storage(cp.random.default_rng(1).uniform(*DATA_RANGE, size=shape), dtype)
            ref = reference_steps(from_storage(x0, dtype), w, steps)
            u = UNIT_ROUNDOFF[{"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}[dtype]]
            # one rounding of each weight and of the data, a K-term sum, a rounded output, per step
            tol = steps * (gamma(2 * st.K + 2, u) + u)
            bound1 = model_bound(st, "cuda_core", 1, dtype, self.spec, None) if dtype in ("double", "float") else None
            fns = (cupy_correlate, torch_cudnn) if dtype in ("double", "float") else (torch_cudnn,)
            for fn in fns:
                try:
                    out = fn(x0, w, steps, repeats=self.args.repeats, dtype=dtype)
                except Exception as exc:  # noqa: BLE001 - report and go on with the other baseline
                    print(f"baseline {fn.__name__} {dtype} failed: {str(exc).splitlines()[0]}", flush=True)
                    continue
                if out is None:
                    print("baseline torch: PyTorch with CUDA not available", flush=True)
                    continue
                vals = from_storage(out["output"], dtype)
                err = float(cp.max(cp.abs(vals - ref)) / cp.max(cp.abs(ref)))
                g = math.prod(shape) * steps / out["seconds"] / 1e9
                bound = bound1.gstencils if bound1 is not None and bound1.available else None
                self.add({"unit": "cuda_core", "impl": out["impl"], "stencil": name, "fuse": 1, "dtype": dtype,
                          "precision": out.get("precision", ""), "grid": BIG[st.dims], "mma": "", "steps": steps,
                          "seconds": out["seconds"], "gstencils": g, "bound_gstencils": bound,
                          "fraction_of_bound": g / bound if bound else None,
                          "bound": bound1.bound if bound else None, "correct": bool(err <= tol),
                          "max_rel_error": err, "useful_tflops": g * 2 * st.K / 1e3,
                          "executed_tflops": g * 2 * st.K / 1e3, "alpha": "", "kernel": "one step per call"})
                del out, vals
            del x0, ref
            cp.get_default_memory_pool().free_all_blocks()


def best_rows(rows, stencil, unit, precision):
    mine = [r for r in rows if r["stencil"] == stencil and r["unit"] == unit and r["precision"] == precision
            and r["impl"].startswith("tcadvisor")]
    return max(mine, key=lambda r: r["gstencils"]) if mine else None


def summary(rows, stencils, spec, skipped) -> str:
    lines = [f"## Summary ({spec.name}; B = {spec.bandwidth.value / 1e12:.3f} TB/s measured in this session)", "",
             "Best depth per unit and precision (measured best of the scan); bound = the model's with measured "
             "ceilings at that depth and α of the uploaded operands.", "",
             "| stencil | unit | prec | best t | GSt/s | bound | of bound | correct (all depths) |",
             "|---|---|---|---|---|---|---|---|"]
    for name in stencils:
        for unit, dtypes in DTYPES.items():
            for prec in sorted({r["precision"] for r in rows if r["stencil"] == name and r["unit"] == unit
                                and r["impl"].startswith("tcadvisor")}, key=list(PRECISION_LABEL).index):
                b = best_rows(rows, name, unit, prec)
                ok = all(r["correct"] for r in rows if r["stencil"] == name and r["unit"] == unit
                         and r["precision"] == prec and r["impl"].startswith("tcadvisor"))
                frac = f"{100 * b['fraction_of_bound']:.0f}%" if b["fraction_of_bound"] else "n/a"
                bound = f"{b['bound_gstencils']:.0f}" if b["bound_gstencils"] else "n/a"
                lines.append(f"| {name} | {unit} | {PRECISION_LABEL[prec]} | {b['fuse']} | {b['gstencils']:.0f} | "
                             f"{bound} | {frac} | {ok} |")
    lines += ["", "Sparse / dense at the same precision and depth: measured (predicted by the model); "
              "within ±15% marked ok.", ""]
    for name in stencils:
        for prec in ("tf32", "fp16", "bf16"):
            cells = []
            for t in sorted({r["fuse"] for r in rows if r["stencil"] == name}):
                sp = [r for r in rows if r["stencil"] == name and r["unit"] == "sparse_tensor_core"
                      and r["precision"] == prec and r["fuse"] == t]
                de = [r for r in rows if r["stencil"] == name and r["unit"] == "tensor_core"
                      and r["precision"] == prec and r["fuse"] == t]
                if not sp or not de or not sp[0]["bound_gstencils"] or not de[0]["bound_gstencils"]:
                    continue
                meas = sp[0]["gstencils"] / de[0]["gstencils"]
                pred = sp[0]["bound_gstencils"] / de[0]["bound_gstencils"]
                mark = "ok" if abs(meas / pred - 1) <= 0.15 else "OFF"
                cells.append(f"t{t} {meas:.2f} ({pred:.2f}) {mark}")
            if cells:
                lines.append(f"- {name} {PRECISION_LABEL[prec]}: " + "; ".join(cells))
    base = [r for r in rows if not r["impl"].startswith("tcadvisor")]
    if base:
        lines += ["", "Libraries, one step per call: " + "; ".join(
            f"{r['stencil']} {r['impl']} {r['dtype']} {r['gstencils']:.0f} GSt/s"
            f"{'' if r['correct'] else ' (error ' + format(r['max_rel_error'], '.1e') + ')'}" for r in base)]
    if skipped:
        lines += ["", f"Not run (time budget), {len(skipped)} configurations: " + ", ".join(skipped[:12])
                  + (" ..." if len(skipped) > 12 else "")]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ceilings", default=None, help="spec file with measured peaks (default hwspecs/h100-sxm-measured.yaml)")
    ap.add_argument("--quick", action="store_true", help="the new kernels once each and a few timings (~1 minute)")
    ap.add_argument("--sweeps", type=int, default=4, help="sweeps per timed repetition")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=300, help="stop starting new stencils after this many seconds")
    args = ap.parse_args()

    from tcadvisor.gpu.backend import cupy, device_info

    cp = cupy()
    os.makedirs(args.out, exist_ok=True)
    device = device_info()["name"]
    bw = measure_copy_bandwidth(cp)
    base = args.ceilings or os.path.join(os.path.dirname(__file__), "..", "hwspecs", "h100-sxm-measured.yaml")
    spec = write_ceilings(os.path.join(args.out, "ceilings.yaml"), base, bw, device)
    print(f"device {device}; measured copy bandwidth {bw / 1e12:.3f} TB/s; peaks from {os.path.basename(base)}",
          flush=True)
    session = Session(args, spec, device)
    if args.quick:
        plan = [("Box-2D1R", [("sparse_tensor_core", d, [1, 3]) for d in DTYPES["sparse_tensor_core"]]
                 + [("tensor_core", d, [3]) for d in DTYPES["tensor_core"]]
                 + [("cuda_core", d, [3]) for d in DTYPES["cuda_core"]]),
                ("Box-2D3R", [("sparse_tensor_core", d, [1]) for d in ("float", "half")]
                 + [("tensor_core", d, [1]) for d in ("float", "half")]),
                ("Box-3D1R", [("sparse_tensor_core", "half", [1]), ("tensor_core", "half", [1])])]
    else:
        # In order of priority, so that the time budget cuts the least important work: the Tensor Core
        # units on the 2D stencils, then CUDA cores, then the libraries, then 3D.
        plan = []
        two_d = ("Box-2D1R", "Box-2D3R", "Star-2D1R", "Box-2D2R")
        for units in (("sparse_tensor_core", "tensor_core"), ("cuda_core",)):
            for name in two_d:
                st = parse_stencil(name)
                plan.append((name, [(u, d, depths(u, st.radius, False, 2)) for u in units for d in DTYPES[u]]))
        plan += [(name, "baselines") for name in two_d]
        plan.append(("Box-3D1R", [(u, d, depths(u, 1, False, 3)) for u in DTYPES for d in DTYPES[u]]))
        plan.append(("Box-3D1R", "baselines"))
    stencils = []
    for name, work in plan:
        if name not in stencils:
            stencils.append(name)
        if work == "baselines":
            if session.over_budget():
                session.skipped.append(f"{name} libraries")
            else:
                session.baselines(name, ("double", "float", "half", "bfloat16"))
            continue
        for unit, dtype, ts in work:
            session.scan(name, unit, dtype, ts)
    session.flush()
    text = summary(session.rows, stencils, spec, session.skipped)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text + "\n")
    print(f"\nwrote {len(session.rows)} rows to {os.path.join(args.out, 'kernels.csv')} in "
          f"{time.time() - session.start:.0f} s\n")
    print(text)


if __name__ == "__main__":
    main()
