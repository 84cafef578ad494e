"""1D on CUDA cores: the tile kernel (kernels/cuda_cores_1d.cu) beside the streaming kernel it replaces, one run.

For Box-1D1R, Box-1D2R, Box-1D3R (FP64 and FP32) at every depth up to r·t = 16, and a custom
asymmetric 1D stencil: each configuration is checked on an odd grid (every sweep against its
rounding interval, negative control of a perturbed weight) and timed on the default 2^27-point grid
(median of repeats, CUDA events, ghost refreshes included), the new tile kernel and -- for the box
stencils -- the 2D streaming kernel on one row (``layout="stream"``, what 1D ran before) in the same
process.  A scan of the tile's knobs (points per thread, threads) at a few depths, and CuPy's
``correlate`` one step per call, close the run.  Bounds use the copy bandwidth measured at the start and
the compute peaks of hwspecs/h100-sxm-measured.yaml.

    python benchmarks/gpu_session_cc1d.py --out DIR [--budget-s 420]

Writes cc1d.csv, ceilings.yaml and summary.md into DIR and prints the summary last.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


from benchmarks.gpu_session_kernels import check_with_control, start_session, write_rows  # noqa: E402
from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.stencil import Stencil, parse_stencil  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["gpu", "date", "stencil", "dtype", "fuse", "layout", "options", "grid", "steps", "seconds", "gstencils",
           "bound_gstencils", "fraction_of_bound", "bound", "correct", "control_caught", "max_rel_error",
           "useful_tflops", "executed_tflops", "kernel"]
UPWIND = Stencil.from_offsets([(0,), (-1,), (-2,), (1,)], name="Upwind-1D")
SMALL = "12347"


def check(stencil, dtype, t, options):
    """The configuration checked on a small odd grid over two sweeps; and a negative control (the largest
    weight perturbed as the GPU tests do) that the same check must reject."""
    return check_with_control(stencil, "cuda_core", dtype, t, SMALL, options)


def target_summary(rows, device, date, bandwidth, repeats) -> str:
    """Issue 21's target 2 read off a depth scan: per stencil and precision, the fraction of the model's bound at
    t = 1, and whether the throughput falls with depth before the depth where the model's bound turns from memory
    to compute (the ceiling it names); every fall of more than 2 % (run-to-run) is listed."""
    lines = [f"# 1D on CUDA cores at every depth ({device}, {date})", "",
             f"Written by `benchmarks/gpu_session_cc1d.py --mode target`.  Copy bandwidth measured at the start: "
             f"{bandwidth / 1e9:.0f} GB/s; compute peaks of hwspecs/h100-sxm-calibrated.yaml.  GStencils/s on 2^27 "
             f"points, median of {repeats}; every row checked on a {SMALL}-point grid over two sweeps, with its "
             "negative control.  Target 2: at least 80 % of the bound at t = 1, and throughput that does not fall "
             "with depth until a ceiling the model names (here: the first depth whose bound is compute).", "",
             "| stencil | dtype | t = 1 (% of bound) | best (t) | % of bound at best | memory-bound depths | "
             "falls > 2 % before the compute ceiling | target 2 |", "|---|---|---|---|---|---|---|---|"]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["stencil"], r["dtype"]), []).append(r)
    for (name, dtype), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["fuse"])
        first = rs[0]
        best = max(rs, key=lambda r: r["gstencils"])
        ceiling = next((r["fuse"] for r in rs if r["bound"] == "compute"), None)
        falls = []
        for prev, cur in zip(rs, rs[1:]):
            if ceiling is not None and cur["fuse"] >= ceiling:
                break
            if cur["gstencils"] < 0.98 * prev["gstencils"]:
                falls.append(f"t {prev['fuse']} → {cur['fuse']}: {prev['gstencils']:.0f} → {cur['gstencils']:.0f}")
        frac1 = first["fraction_of_bound"] or 0
        met = first["fuse"] == 1 and frac1 >= 0.8 and not falls
        mem = [r["fuse"] for r in rs if r["bound"] == "memory"]
        span = f"{min(mem)}-{max(mem)}" if mem else "none"
        lines.append(f"| {name} | {dtype} | {first['gstencils']:.0f} ({100 * frac1:.0f} %) | {best['gstencils']:.0f} "
                     f"({best['fuse']}) | {100 * (best['fraction_of_bound'] or 0):.0f} % | {span} | "
                     f"{'; '.join(falls) or 'none'} | {'met' if met else 'not met'} |")
    lines += ["", f"Configurations: {len(rows)}; checks failed: {sum(1 for r in rows if not r['correct'])}; negative "
              f"controls not caught: {sum(1 for r in rows if not r['control_caught'])}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sweeps", type=int, default=4)
    ap.add_argument("--mode", choices=("depths", "stage", "target"), default="depths",
                    help="depths: the depth scans beside the streaming kernel, a knob scan and CuPy (default); "
                         "stage: staged against direct global access over points per thread, threads and depth; "
                         "target: the tile kernel alone at every depth in every precision (issue 21, target 2)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    from tcadvisor.gpu.baselines import cupy_correlate
    from tcadvisor.gpu.runner import DATA_RANGE, default_weights, model_bound, run
    from tcadvisor.gpu.numerics import to_storage

    # The target's scan needs FP16/BF16 bounds: the calibrated spec has the CUDA cores' 16-bit rates, the measured
    # one (the earlier scans' ceilings) does not.
    base = "h100-sxm-calibrated.yaml" if args.mode == "target" else "h100-sxm-measured.yaml"
    cp, device, bandwidth, spec_path, spec, date = start_session(args.out, os.path.join(ROOT, "hwspecs", base))
    rows: list[dict] = []
    start = time.time()

    def flush():
        write_rows(os.path.join(args.out, "cc1d.csv"), COLUMNS, rows)

    def measure(stencil, dtype, t, layout, options):
        opts = dict(options)
        if layout == "stream":
            opts["layout"] = "stream"
        try:
            good, caught = check(stencil, dtype, t, opts)
            res = run(stencil, dtype, "cuda_core", fuse=t, grid="134217728", steps=t * args.sweeps, seed=1,
                      check=False, repeats=args.repeats, warmup=1, gpu=spec_path, kernel_options=opts)
        except TcAdvisorError as exc:
            print(f"refused {stencil.name} {dtype} t={t} {layout} {options}: {exc}", flush=True)
            return None
        opt = model_bound(stencil, "cuda_core", t, dtype, spec, None)
        bound = opt.gstencils if opt.available else None
        row = {"gpu": device, "date": date, "stencil": stencil.name, "dtype": dtype, "fuse": t, "layout": layout,
               "options": ";".join(f"{k}={v}" for k, v in options.items()), "grid": "134217728",
               "steps": res.steps, "seconds": res.seconds, "gstencils": res.gstencils, "bound_gstencils": bound,
               "fraction_of_bound": res.gstencils / bound if bound else None, "bound": opt.bound,
               "correct": bool(good.check.passed), "control_caught": caught,
               "max_rel_error": good.max_rel_error, "useful_tflops": res.useful_tflops,
               "executed_tflops": res.executed_tflops, "kernel": res.kernel}
        rows.append(row)
        flush()
        print(f"{stencil.name:>10} {dtype:>6} t={t:<2} {layout:>6} {row['options']:>16} {res.gstencils:8.1f} GSt/s "
              f"bound {bound or float('nan'):8.1f} {100 * (row['fraction_of_bound'] or 0):5.1f}% "
              f"correct={row['correct']} control={caught}  {res.kernel}", flush=True)
        del res, good
        cp.get_default_memory_pool().free_all_blocks()
        return row

    if args.mode == "stage":
        st = parse_stencil("Box-1D1R")
        for dtype, vs in (("double", (2, 4, 8)), ("float", (4, 8, 16))):
            for t in (1, 2, 4, 8, 16):
                for v in vs:
                    for nt in (256, 512):
                        for stage in (True, False):
                            measure(st, dtype, t, "tile", {"v": v, "cols": v * nt, "stage": stage})
        flush()
        pivot = {}
        for r in rows:
            opts = dict(kv.split("=") for kv in r["options"].split(";"))
            pivot.setdefault((r["dtype"], r["fuse"], int(opts["v"]), int(opts["cols"]) // int(opts["v"])), {})[
                opts["stage"]] = r["gstencils"]
        lines = [f"# 1D tile kernel: staged vs direct global access ({device}, {date}, Box-1D1R, 2^27 points)", "",
                 "| dtype | t | v | threads | staged | direct |", "|---|---|---|---|---|---|"]
        lines += [f"| {d} | {t} | {v} | {nt} | {p.get('True', float('nan')):.1f} | {p.get('False', float('nan')):.1f} |"
                  for (d, t, v, nt), p in sorted(pivot.items())]
        text = "\n".join(lines) + "\n"
        with open(os.path.join(args.out, "summary-stage.md"), "w") as f:
            f.write(text)
        print(text)
        return 0
    if args.mode == "target":
        for name, dtypes in (("Box-1D2R", ("double", "float", "half", "bfloat16")),
                             ("Box-1D1R", ("double", "float", "half")), ("Box-1D3R", ("double", "float", "half")),
                             ("Box-1D4R", ("double", "float", "half"))):
            st = parse_stencil(name)
            for dtype in dtypes:
                for t in range(1, 16 // st.radius + 1):
                    if time.time() - start > args.budget_s:
                        print(f"budget: stop before {name} {dtype} t={t}", flush=True)
                        break
                    measure(st, dtype, t, "tile", {})
        flush()
        text = target_summary(rows, device, date, bandwidth, args.repeats)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write(text)
        print(text)
        return 0 if all(r["correct"] and r["control_caught"] for r in rows) else 1
    # 1. Depth scans, new beside old.
    for name in ("Box-1D2R", "Box-1D1R", "Box-1D3R"):
        st = parse_stencil(name)
        for dtype in ("double", "float"):
            for t in range(1, 16 // st.radius + 1):
                if time.time() - start > args.budget_s:
                    break
                measure(st, dtype, t, "tile", {})
                if t in (1, 2, 4, 8) or name == "Box-1D2R":
                    measure(st, dtype, t, "stream", {})
    for dtype in ("double", "float"):
        for t in (1, 2, 4, 8):
            measure(UPWIND, dtype, t, "tile", {})
    # 2. Knobs of the tile kernel.
    st = parse_stencil("Box-1D2R")
    for dtype, vs in (("double", (4, 8, 16)), ("float", (8, 16, 32))):
        for t in (1, 4, 8):
            for v in vs:
                for nt in (128, 256, 512):
                    if time.time() - start > args.budget_s * 1.3:
                        break
                    measure(st, dtype, t, "tile", {"v": v, "cols": v * nt})
    # 3. CuPy correlate, one step per call.
    for dtype in ("double", "float"):
        w = default_weights(st, 1)
        x0 = to_storage(cp.random.default_rng(1).uniform(*DATA_RANGE, size=(134217728,)), dtype)
        out = cupy_correlate(x0, w, 4, repeats=args.repeats, dtype=dtype)
        g = 134217728 * 4 / out["seconds"] / 1e9
        opt = model_bound(st, "cuda_core", 1, dtype, spec, None)
        rows.append({"gpu": device, "date": date, "stencil": st.name, "dtype": dtype, "fuse": 1, "layout": "cupy",
                     "options": "correlate", "grid": "134217728", "steps": 4, "seconds": out["seconds"],
                     "gstencils": g, "bound_gstencils": opt.gstencils, "fraction_of_bound": g / opt.gstencils,
                     "bound": opt.bound, "kernel": "cupyx.scipy.ndimage.correlate1d, one step per call"})
        print(f"cupy correlate {dtype}: {g:.1f} GSt/s", flush=True)
        del x0, out
        cp.get_default_memory_pool().free_all_blocks()
    flush()

    # Summary: per stencil, dtype and depth, tile vs stream.
    lines = [f"# 1D on CUDA cores: tile kernel vs streaming kernel ({device}, {date})", "",
             f"Copy bandwidth measured at the start: {bandwidth / 1e9:.0f} GB/s. GStencils/s on 2^27 points, median "
             f"of {args.repeats}; every row checked on a {SMALL}-point grid (two sweeps) with its negative control.", "",
             "| stencil | dtype | t | tile | stream | tile/stream | tile % of bound |", "|---|---|---|---|---|---|---|"]
    key = {}
    for r in rows:
        if not r["options"]:
            key[(r["stencil"], r["dtype"], r["fuse"], r["layout"])] = r
    for (name, dtype, t, layout), r in sorted(key.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        if layout != "tile":
            continue
        old = key.get((name, dtype, t, "stream"))
        ratio = f"{r['gstencils'] / old['gstencils']:.2f}" if old else "–"
        lines.append(f"| {name} | {dtype} | {t} | {r['gstencils']:.1f} | {old['gstencils']:.1f} | {ratio} | "
                     f"{100 * (r['fraction_of_bound'] or 0):.0f}% |" if old else
                     f"| {name} | {dtype} | {t} | {r['gstencils']:.1f} | – | – | {100 * (r['fraction_of_bound'] or 0):.0f}% |")
    bad = [r for r in rows if r.get("correct") is False or r.get("control_caught") is False]
    lines += ["", f"Checks failed: {len(bad)}; negative controls not caught: "
              f"{sum(1 for r in rows if r.get('control_caught') is False)}."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
