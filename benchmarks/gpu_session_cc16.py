"""CUDA cores in FP16 and BF16 (packed FMAs on two tiles per block, kernels/cc_values.cuh), one run.

For 1D, 2D and 3D box and star stencils over a range of depths, each FP16/BF16 configuration is
checked on a small odd grid (every sweep against its rounding interval) with a negative control (the
largest weight perturbed until the sound interval must see it, :func:`perturb_largest_weight` with
the kernel's model), then timed on the default grid (median of repeats, CUDA events, ghost refreshes
included).  The FP32 CUDA-core kernel and the FP16 dense Tensor Core kernel run the same stencils and
depths in the same process, so the ratios are side by side.  Bounds use the copy bandwidth measured at
the start and the compute peaks of hwspecs/h100-sxm-calibrated.yaml (CUDA cores FP16/BF16: the packed rate).

    python benchmarks/gpu_session_cc16.py --out DIR [--budget-s 420] [--mode depths|scan]

Writes cc16.csv, ceilings.yaml and summary.md into DIR and prints the summary last.  ``--mode scan`` times the
FP16 kernels' tile knobs instead (2D: strip columns x columns per thread; 3D: tile columns x columns per thread),
each configuration checked, and writes scan.csv and summary-scan.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.gpu_session_kernels import check_with_control, start_session, write_rows  # noqa: E402
from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["gpu", "date", "stencil", "unit", "dtype", "fuse", "options", "grid", "steps", "seconds", "gstencils",
           "bound_gstencils", "fraction_of_bound", "bound", "correct", "control_caught", "max_rel_error",
           "tolerance", "useful_tflops", "executed_tflops", "kernel"]
SMALL = {1: "12347", 2: "37x1031", 3: "11x29x133"}
GRID = {1: "134217728", 2: "10240x10240", 3: "512x512x512"}
#: stencil -> depths scanned
DEPTHS = {"Box-1D1R": (1, 2, 4, 8, 16), "Box-1D2R": (1, 2, 4, 8), "Box-2D1R": (1, 2, 3, 4, 6, 8, 10, 12),
          "Star-2D1R": (1, 2, 4, 8, 12), "Box-2D2R": (1, 2, 4), "Box-3D1R": (1, 2, 3, 4), "Star-3D1R": (1, 2, 4),
          "Box-3D2R": (1, 2)}


def check(stencil, unit, dtype, t, options=None):
    """Two checked sweeps on a small odd grid; with the default knobs also the negative control (knob scans: the
    check only)."""
    return check_with_control(stencil, unit, dtype, t, SMALL[stencil.dims], options, control=not options)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sweeps", type=int, default=4)
    ap.add_argument("--mode", choices=("depths", "scan"), default="depths")
    ap.add_argument("--scan", help="with --mode scan: a JSON list of [stencil, [depths], [{knob: value}, ...]] "
                                   "replacing the built-in SCAN")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    from tcadvisor.gpu.runner import model_bound, run

    cp, device, bandwidth, spec_path, spec, date = start_session(
        args.out, os.path.join(ROOT, "hwspecs", "h100-sxm-calibrated.yaml"))
    rows: list[dict] = []
    start = time.time()

    def flush():
        write_rows(os.path.join(args.out, "cc16.csv"), COLUMNS, rows)

    def measure(stencil, unit, dtype, t, checked, options=None):
        try:
            good, caught = check(stencil, unit, dtype, t, options) if checked else (None, None)
            res = run(stencil, dtype, unit, fuse=t, grid=GRID[stencil.dims], steps=t * args.sweeps, seed=1,
                      check=False, repeats=args.repeats, warmup=1, gpu=spec_path, kernel_options=options or {})
        except TcAdvisorError as exc:
            print(f"refused {stencil.name} {unit} {dtype} t={t}: {exc}", flush=True)
            return None
        opt = model_bound(stencil, unit, t, dtype, spec, None)
        bound = opt.gstencils if opt.available else None
        row = {"gpu": device, "date": date, "stencil": stencil.name, "unit": unit, "dtype": dtype, "fuse": t,
               "options": ";".join(f"{k}={v}" for k, v in (options or {}).items()),
               "grid": GRID[stencil.dims], "steps": res.steps, "seconds": res.seconds, "gstencils": res.gstencils,
               "bound_gstencils": bound, "fraction_of_bound": res.gstencils / bound if bound else None,
               "bound": opt.bound, "correct": None if good is None else bool(good.check.passed),
               "control_caught": caught, "max_rel_error": None if good is None else good.max_rel_error,
               "tolerance": None if good is None else good.tolerance,
               "useful_tflops": res.useful_tflops, "executed_tflops": res.executed_tflops, "kernel": res.kernel}
        rows.append(row)
        flush()
        print(f"{stencil.name:>10} {unit:>12} {dtype:>8} t={t:<2} {row['options']:>18} {res.gstencils:8.1f} GSt/s "
              f"bound {bound or float('nan'):8.1f} {100 * (row['fraction_of_bound'] or 0):5.1f}% "
              f"correct={row['correct']} control={caught}  {res.kernel}", flush=True)
        del res, good
        cp.get_default_memory_pool().free_all_blocks()
        return row

    if args.mode == "scan":
        return scan(args, measure, rows, device, date, start)
    for name, depths in DEPTHS.items():
        st = parse_stencil(name)
        for t in depths:
            if time.time() - start > args.budget_s:
                print(f"budget spent: {name} t={t} and later not run", flush=True)
                break
            for dtype in ("half", "bfloat16"):
                measure(st, "cuda_core", dtype, t, checked=True)
            measure(st, "cuda_core", "float", t, checked=False)
            if st.radius * t <= 4:
                measure(st, "tensor_core", "half", t, checked=False)
    flush()

    key = {(r["stencil"], r["unit"], r["dtype"], r["fuse"]): r for r in rows}
    lines = [f"# CUDA cores in FP16/BF16 (packed FMAs) beside FP32 CUDA cores and FP16 Tensor Cores ({device}, {date})",
             "", f"Copy bandwidth measured at the start: {bandwidth / 1e9:.0f} GB/s. GStencils/s on the default grids "
             f"({', '.join(GRID.values())}), median of {args.repeats}, {args.sweeps} sweeps; FP16/BF16 rows checked on "
             "a small odd grid (two sweeps) with their negative control. '% bound': of the base model's bound at that "
             "unit, precision and depth.", "",
             "| stencil | t | CC FP16 | % bound | CC BF16 | % bound | CC FP32 | FP16/FP32 | TC FP16 | CC/TC FP16 |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def g(r):
        return f"{r['gstencils']:.1f}" if r else "–"

    for name, depths in DEPTHS.items():
        for t in depths:
            h, b = key.get((name, "cuda_core", "half", t)), key.get((name, "cuda_core", "bfloat16", t))
            f, tc = key.get((name, "cuda_core", "float", t)), key.get((name, "tensor_core", "half", t))
            if not (h or b):
                continue
            lines.append(f"| {name} | {t} | {g(h)} | {100 * (h or {}).get('fraction_of_bound', 0) or 0:.0f}% | {g(b)} | "
                         f"{100 * (b or {}).get('fraction_of_bound', 0) or 0:.0f}% | {g(f)} | "
                         f"{h['gstencils'] / f['gstencils']:.2f} | " if h and f else
                         f"| {name} | {t} | {g(h)} | – | {g(b)} | – | {g(f)} | – | ")
            lines[-1] += f"{g(tc)} | " + (f"{h['gstencils'] / tc['gstencils']:.2f} |" if h and tc else "– |")
    checked = [r for r in rows if r["correct"] is not None]
    bad = [r for r in checked if not r["correct"] or not r["control_caught"]]
    lines += ["", f"Checked: {len(checked)}; failed checks: {sum(1 for r in checked if not r['correct'])}; "
              f"negative controls not caught: {sum(1 for r in checked if not r['control_caught'])}."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if not bad else 1


#: The scan: (stencil, depths, knob sets).  2D strips of 256-1024 columns, 2 or 4 per thread; 3D tiles of 32 or 64
#: columns, 2 or 4 per thread (a block of FP16 pairs covers twice the columns of an FP32 block of the same tile).
SCAN = [("Box-2D1R", (1, 2, 4, 8, 10, 12), [{"cols": c, "v": v} for c in (256, 512, 1024) for v in (2, 4)]),
        ("Star-2D1R", (2, 8, 12), [{"cols": c, "v": v} for c in (256, 512, 1024) for v in (2, 4)]),
        ("Box-3D1R", (1, 2, 3, 4), [{"cols": c, "v": v, "trap": True} for c in (32, 64) for v in (2, 4)])]


def scan(args, measure, rows, device, date, start):
    import json

    for name, depths, knobs in (json.loads(args.scan) if args.scan else SCAN):
        st = parse_stencil(name)
        for t in depths:
            measure(st, "cuda_core", "half", t, checked=True)  # the default of this moment
            for opts in knobs:
                if time.time() - start > args.budget_s:
                    break
                measure(st, "cuda_core", "half", t, checked=True, options=opts)
    write_rows(os.path.join(args.out, "scan.csv"), COLUMNS, rows)
    lines = [f"# FP16 CUDA-core tile knobs ({device}, {date})", "", "| stencil | t | options | GStencils/s | kernel |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['stencil']} | {r['fuse']} | {r['options'] or 'default'} | {r['gstencils']:.1f} | {r['kernel']} |"
              for r in rows]
    bad = [r for r in rows if not r["correct"]]
    lines += ["", f"Checked: {len(rows)}; failed: {len(bad)}."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary-scan.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
