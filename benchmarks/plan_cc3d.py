"""Ask the model first: the 3D CUDA-core kernel's knobs, compiled and predicted before any GPU time.

For every candidate configuration of kernels/cuda_cores_3d.cu (Box-3D1R, double
and float, t = 1..6; tile width and columns per thread, tile rows, rows trimmed
per step, input planes in flight) this script

* compiles the kernel for sm_90 with nvcc and reads ptxas's register count and
  spill bytes (no GPU needed);
* takes occupancy from those registers and the plan's shared memory on the
  calibrated H100 spec (hwspecs/h100-sxm-calibrated.yaml);
* evaluates the refined model (tcadvisor.refinement, the constants fitted on the
  validation runs) on that plan: the redundancy h_cc (points computed per point
  owned, rows a step skips not counted), the FMA pipe's share eta_cc, the bandwidth
  share eta_B and the predicted GStencils/s;
* marks the configurations to time on a GPU (``scan``): per precision and depth the
  default, the default with each knob alone and with both (so that the scan says
  what each one buys), and the best predicted configurations without spills.

It writes candidates.csv and a summary.md to --out; benchmarks/tune_gpu_kernels.py
--only cc3d times the marked rows.  The model's constants were fitted on the
default kernel only: where a knob changes something the model does not describe
(the instruction mix, the latency a prefetch hides) its ranking is a hypothesis the
scan tests, not a result.

    PYTHONPATH=. python benchmarks/plan_cc3d.py --out validation/results/cc3d-plan-2026-11-23

``--wide`` (after the first scan showed that rows trimmed per step and two planes
in flight pay, and that the ranking is cheap to measure, about half a second a
configuration): depths 1..7, tiles whose outputs fit a 512-point axis exactly
(64 or 128 outputs plus the halo) beside the power-of-two ones, 1 to 4 planes in
flight, rows trimmed per step; every spill-free configuration that fits on an SM
is marked for the scan, so the best is measured, not predicted.

    PYTHONPATH=. python benchmarks/plan_cc3d.py --wide --out validation/results/cc3d-plan-2026-11-24

``--focus``: FP32 at t = 3..6 with three and four rows per thread (the wide scan's
best float stayed under the target), every spill-free configuration marked.

    PYTHONPATH=. python benchmarks/plan_cc3d.py --focus --out validation/results/cc3d-plan-2026-11-24-focus
"""
from __future__ import annotations

import argparse
import csv
import itertools
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tcadvisor.validate import fitting  # noqa: E402  (the fit's vectorised evaluation)
from tcadvisor import refinement  # noqa: E402
from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.gpu import plans  # noqa: E402
from tcadvisor.hardware_schema import load_spec_file  # noqa: E402
from tcadvisor.impls import find_impl  # noqa: E402
from tcadvisor.stencil import Stencil  # noqa: E402

SPEC = ROOT / "hwspecs" / "h100-sxm-calibrated.yaml"
DEPTHS = range(1, 7)
TILES = ((4, 64), (2, 64), (4, 128))  # (columns per thread, tile columns)
ROWS = (16, 24, 32, 48)
#: Scan per precision and depth: the default and this many of the best predicted spill-free configurations.
SCAN_BEST = 4


WIDE_DEPTHS = range(1, 8)


def wide_space():
    """(precision, t, v, cols, rows, trap, prefetch, rows per thread) of the wide scan: rows trimmed per step
    always; power-of-two tiles and tiles whose outputs (cols - 2t, rows - 2t for radius 1) are 64/128 and 16/32
    points; one or two rows per thread."""
    for precision, t in itertools.product(("fp64", "fp32"), WIDE_DEPTHS):
        h = t  # halo r*t, r = 1
        tiles = {(2, 64), (4, 64), (4, 128), (2, 64 + 2 * h), (2, 128 + 2 * h)}
        tiles |= {(4, c) for c in (64 + 2 * h, 128 + 2 * h) if c % 4 == 0}
        all_rows = sorted({16, 24, 32, 48, 64, 16 + 2 * h, 32 + 2 * h})
        for (v, cols), rows, pf, w in itertools.product(sorted(tiles), all_rows, (1, 2, 3), (1, 2)):
            if (cols // v) * (rows // w) > 1024 or rows % w or (pf == 3 and v != 2) or (w == 1 and rows == 64):
                continue
            yield precision, t, v, cols, rows, True, pf, w


def focus_space():
    """FP32 at t = 3..6, where the wide scan's best (422 GSt/s at t = 4) stayed short of 450: three and four rows
    per thread (fewer shared loads per FMA again) and the row counts they divide, beside two rows per thread on
    rows the wide scan did not take."""
    for t in range(3, 7):
        h = t
        tiles = {(2, 64), (4, 64), (2, 64 + 2 * h), (2, 128 + 2 * h)}
        tiles |= {(4, c) for c in (64 + 2 * h, 128 + 2 * h) if c % 4 == 0}
        for (v, cols), rows, pf, w in itertools.product(sorted(tiles), (18, 24, 30, 36, 40, 42, 48, 60, 64),
                                                        (1, 2), (2, 3, 4)):
            wide_rows = {16, 24, 32, 48, 64, 16 + 2 * h, 32 + 2 * h}
            if rows % w or (cols // v) * (rows // w) > 1024 or (w == 2 and rows in wide_rows):
                continue
            yield "fp32", t, v, cols, rows, True, pf, w


def candidates(wide: bool = False, focus: bool = False):
    st = Stencil.box(3, 1)
    space = focus_space() if focus else wide_space() if wide else (
        (precision, t, v, cols, rows, trap, pf, 1) for precision, t, (v, cols), rows, trap, pf
        in itertools.product(("fp64", "fp32"), DEPTHS, TILES, ROWS, (False, True), (1, 2)))
    for precision, t, v, cols, rows, trap, pf, w in space:
        try:
            plan = plans.plan_cuda_cores(st, t, precision, v=v, cols=cols, rows=rows, trap=trap, prefetch=pf,
                                         rows_per_thread=w)
        except TcAdvisorError:
            continue
        if plan.smem > 227 * 1024:
            continue
        yield precision, t, dict(v=v, cols=cols, rows=rows, trap=trap, prefetch=pf, rows_per_thread=w), plan
    for precision, t in ([] if focus else itertools.product(("fp64", "fp32"), WIDE_DEPTHS if wide else DEPTHS)):
        try:
            yield precision, t, None, plans.plan_cuda_cores(st, t, precision)
        except TcAdvisorError:
            continue


def ptxas(plan) -> tuple[int, int]:
    """(registers, spill store bytes) of the plan's kernel compiled for sm_90."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nvcc", "-arch=sm_90", "-cubin", "-std=c++17", "-Xptxas", "-v", "-o", os.path.join(tmp, "k.cubin")]
        cmd += [f"-D{k}={v}" for k, v in plan.defines] + [str(ROOT / "kernels" / plan.source)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    regs = int(re.search(r"Used (\d+) registers", out.stderr).group(1))
    spill = int(re.search(r"(\d+) bytes spill stores", out.stderr).group(1))
    return regs, spill


def predict(plan, precision: str, registers: int, spec) -> dict:
    """Occupancy, the refined terms and the refined GStencils/s of ``plan`` with ``registers`` per thread
    (the fit's own evaluation, tcadvisor.validate.fitting, at the shipped constants)."""
    occ = plan.occupancy(spec.multiprocessors, registers)
    if occ.blocks == 0:
        return {"blocks_per_sm": 0, "warps": 0, "limiter": occ.limiter, "h_cc": float("nan"), "eta_cc": float("nan"),
                "eta_B": float("nan"), "pred_gstencils": 0.0}
    impl = find_impl("tcadvisor-cc")
    dtype = {"fp64": "double", "fp32": "float"}[precision]
    st = Stencil.box(3, 1)
    ctx = refinement.Context(impl, impl.tiling, "cuda_core", st, plan.fuse, dtype, precision, None, spec, None)
    inputs, _, occ, _ = refinement.plan_inputs(ctx, plan=plan, registers=registers)
    steps = refinement.evaluate_chain("cuda_core", inputs)
    row = {"fuse": plan.fuse, "unit": "cuda_core", "precision": precision}
    run = fitting.Run(row, "h100", "3D-box-r1", st, "cuda_core", inputs, 1.0, 1.0)
    gstencils = float(fitting.predict([run], refinement.constants())[0])
    return {"blocks_per_sm": occ.blocks, "warps": occ.warps, "limiter": occ.limiter,
            "h_cc": steps["h_cc"], "eta_cc": steps["eta_cc"], "eta_B": steps["eta_B_cc"],
            "pred_gstencils": gstencils}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--wide", action="store_true", help="the wide space; mark every spill-free configuration")
    ap.add_argument("--focus", action="store_true", help="FP32 t = 3..6 with 2-4 rows per thread (after --wide)")
    args = ap.parse_args(argv)
    args.wide = args.wide or args.focus
    spec = load_spec_file(SPEC)
    cands = list(candidates(args.wide, args.focus))
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        compiled = list(pool.map(lambda c: ptxas(c[3]), cands))
    rows = []
    for (precision, t, opts, plan), (regs, spill) in zip(cands, compiled):
        o = plan.options
        row = {"precision": precision, "fuse": t, "default": opts is None, "v": o["v"], "cols": plan.tile["x"],
               "rows": o["by"], "trap": o["trap"], "prefetch": o["prefetch"], "rows_per_thread": o["w"],
               "threads": plan.threads,
               "smem_kib": round(plan.smem / 1024, 1), "registers": regs, "spill_bytes": spill,
               "computed_rows_warp": round(float(plans.computed_rows(plan, per_warp=True)), 4)}
        if regs > plan.register_cap:
            raise RuntimeError(f"ptxas reports {regs} registers above the cap {plan.register_cap}: {row}")
        row.update({k: (round(v, 4) if isinstance(v, float) else v) for k, v in predict(plan, precision, regs, spec).items()})
        rows.append(row)
    # one row per distinct configuration (the default plan repeats one of the knob grid's)
    seen, unique = {}, []
    for r in rows:
        key = (r["precision"], r["fuse"], r["v"], r["cols"], r["rows"], r["trap"], r["prefetch"], r["rows_per_thread"])
        if key in seen:
            seen[key]["default"] = seen[key]["default"] or r["default"]
            continue
        seen[key] = r
        unique.append(r)
    for precision, t in itertools.product(("fp64", "fp32"), WIDE_DEPTHS if args.wide else DEPTHS):
        group = [r for r in unique if r["precision"] == precision and r["fuse"] == t]
        ranked = sorted((r for r in group if r["spill_bytes"] == 0 and r["blocks_per_sm"] > 0),
                        key=lambda r: -r["pred_gstencils"])
        base = next((r for r in group if r["default"]), None)
        for r in group:
            # the default, each knob added to it alone and together (which limit each attacks), the best predicted
            ablation = base is not None and all(r[k] == base[k] for k in ("v", "cols", "rows", "rows_per_thread"))
            r["scan"] = r["blocks_per_sm"] > 0 and (ablation or r in ranked[:SCAN_BEST]
                                                    or (args.wide and r["spill_bytes"] == 0))
    os.makedirs(args.out, exist_ok=True)
    fields = list(unique[0])
    with open(os.path.join(args.out, "candidates.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(unique)
    lines = ["# 3D CUDA-core kernel: candidates compiled for sm_90 and predicted by the refined model",
             "", f"Box-3D1R on {spec.name}; registers and spills from ptxas (nvcc "
             f"{subprocess.run(['nvcc', '--version'], capture_output=True, text=True).stdout.split('release ')[-1].split(',')[0]}),"
             " occupancy from them; h_cc = points computed per point owned; prediction = refined model with the "
             "constants of models/fitted/refined-terms.yaml. `scan`: timed by `tune_gpu_kernels.py --only cc3d`.",
             "", "| prec | t | default | v x cols x rows | rows/thread | trap | planes in flight | regs | spill B | smem KiB | "
             "blocks/SM | h_cc | eta_cc | eta_B | predicted GSt/s | scan |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in unique:
        if not r["scan"]:
            continue
        lines.append(f"| {r['precision']} | {r['fuse']} | {'yes' if r['default'] else ''} | {r['v']} x {r['cols']} x "
                     f"{r['rows']} | {r['rows_per_thread']} | {'yes' if r['trap'] else ''} | {r['prefetch']} | {r['registers']} | "
                     f"{r['spill_bytes']} | {r['smem_kib']} | {r['blocks_per_sm']} | {r['h_cc']:.2f} | "
                     f"{r['eta_cc']:.2f} | {r['eta_B']:.2f} | {r['pred_gstencils']:.0f} | yes |")
    lines += ["", f"{len(unique)} configurations compiled, {sum(r['spill_bytes'] > 0 for r in unique)} spill; "
              f"{sum(r['scan'] for r in unique)} marked for the scan."]
    Path(args.out, "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
