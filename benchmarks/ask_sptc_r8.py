"""What the refined model says of the sparse kernel at r·t = 8 (each line two matrices, its even and its odd taps),
with given fitted constants: the constants shipped before the change, fitted on r·t <= 7 only, answer what the
model would have said had it been asked first.

For the stencils of ``tune_gpu_kernels.py --only sptc-r8``: the refined GStencils/s of the sparse kernel at r·t = 7
(where the stencil has that depth) and 8, and of the dense kernel at r·t = 8, from the advisor (what ``tcadvisor advise`` reports) at
those constants, beside what the scan measured (its default configuration's row).

    git show 505cc79:models/fitted/refined-terms.yaml > /tmp/before.yaml
    python benchmarks/ask_sptc_r8.py --constants /tmp/before.yaml --measured DIR/tuning.csv [--out FILE.csv]
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.advisor import advise  # noqa: E402
from tcadvisor.hardware import find_spec  # noqa: E402

CONFIGS = [("Box-2D1R", 7, 8), ("Box-2D2R", None, 4), ("Box-2D4R", None, 2), ("Star-2D1R", 7, 8),
           ("Box-1D1R", 7, 8), ("Box-1D2R", None, 4)]
#: the scan's row of each unit's default configuration at r·t = 8 (the measured defaults of kernels/defaults.yaml)
DEFAULT_ROW = {1: "{'line_rows': True}", 2: "{'weights_shared': True, 'x_tiles': 2, 'prefetch': 1}"}


def refined(stencil: str, dtype: str, t: int, gpu: str) -> dict:
    """unit -> the refined GStencils/s of its bundled kernel at depth ``t`` (what ``tcadvisor advise`` reports)."""
    adv = advise(stencil, dtype, find_spec(gpu), fuse=t)
    return {o.unit: o.gstencils for o in adv.options if o.available}


def measured_runs(path: str) -> dict:
    """(stencil, dtype, unit, fuse, options) -> GStencils/s (0.1) of a tune_gpu_kernels.py scan's tuning.csv."""
    with open(path, newline="") as f:
        return {(r["stencil"], r["dtype"], r["unit"], int(r["fuse"]), r["options"]): round(float(r["gstencils"]), 1)
                for r in csv.DictReader(f)}


def scan_arguments(doc: str, argv, gpu: str):
    """The options every ask_* script over one scan takes (``--gpu``, default ``gpu``; ``--measured``, the scan's
    tuning.csv; ``--out``) and the measured runs they name: (args, :func:`measured_runs` or {})."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--gpu", default=gpu)
    ap.add_argument("--measured", help="the scan's tuning.csv")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    return args, measured_runs(args.measured) if args.measured else {}


def write_rows(rows: list[dict], path: str | None) -> None:
    """The answer as CSV, into ``path`` or onto standard output."""
    out = open(path, "w", newline="") if path else sys.stdout
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)


def predict_variants(variants, plan_of, description_of, precision_of: dict, gpu: str, measured: dict,
                     base: str = "default") -> list[dict]:
    """The refined model's prediction for each configuration of a ``tune_gpu_kernels.py`` scan, as a recorded run
    of that plan would be predicted (tcadvisor.validate.fitting: the plan read back from the kernel's description,
    the shipped constants), beside what the scan measured, and each over its configuration's variant with no knobs
    (columns ``predicted_vs_BASE``, ``measured_vs_BASE``).  ``plan_of(stencil, t, precision, knobs)`` gives the plan,
    ``description_of(plan)`` the part of the kernel's description the recorded-plan readers parse."""
    from tcadvisor.stencil import parse_stencil
    from tcadvisor.validate import fitting

    spec = find_spec(gpu)
    rows = []
    for name, dtype, grid, unit, t, _mma, kn in variants:
        st, precision = parse_stencil(name), precision_of[dtype]
        plan = plan_of(st, t, precision, kn)
        row = {"stencil": name, "offsets": "", "unit": unit, "dtype": dtype, "precision": precision, "mma": "",
               "fuse": t, "grid": grid, "status": "ok", "gstencils": 1.0, "alpha": "", "kernel": description_of(plan)}
        run = fitting.runs_from_rows([row], spec, gpu)[0]
        pred = float(fitting.predict([run], refinement.constants(spec))[0])
        rows.append({"stencil": name, "dtype": dtype, "fuse": t, "options": str(kn), "predicted": round(pred, 1),
                     "measured": measured.get((name, dtype, unit, t, str(kn)), "")})
    plain = {(r["stencil"], r["dtype"], r["fuse"]): r for r in rows if r["options"] == "{}"}
    for r in rows:
        b = plain[(r["stencil"], r["dtype"], r["fuse"])]
        r[f"predicted_vs_{base}"] = round(r["predicted"] / b["predicted"], 3)
        both = r["measured"] != "" and b["measured"] != ""
        r[f"measured_vs_{base}"] = round(r["measured"] / b["measured"], 3) if both else ""
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--constants", required=True, help="a refined-terms.yaml whose constants to ask with")
    ap.add_argument("--measured", required=True, help="the sptc-r8 scan's tuning.csv")
    ap.add_argument("--gpu", default="h100-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    raw = yaml.safe_load(Path(args.constants).read_text())
    values = {sym: float(raw["constants"][sym.name]["value"]) for sym in model.FITTED}
    measured = measured_runs(args.measured)
    rows = []
    with refinement.using_constants(values):
        for stencil, t7, t8 in CONFIGS:
            dims = int(stencil.split("-")[1][0])
            for dtype in ("half", "float"):
                at8 = refined(stencil, dtype, t8, args.gpu)
                at7 = refined(stencil, dtype, t7, args.gpu) if t7 else {}
                m8 = measured.get((stencil, dtype, "sparse_tensor_core", t8, DEFAULT_ROW[dims]))
                m7 = measured.get((stencil, dtype, "sparse_tensor_core", t7, "{}")) if t7 else None
                md = measured.get((stencil, dtype, "tensor_core", t8, "{}"))
                rows.append({"stencil": stencil, "dtype": dtype, "t_rt8": t8,
                             "sparse_rt8_predicted": round(at8["sparse_tensor_core"], 1), "sparse_rt8_measured": m8,
                             "dense_rt8_predicted": round(at8["tensor_core"], 1), "dense_rt8_measured": md,
                             "sparse_rt7_predicted": round(at7["sparse_tensor_core"], 1) if at7 else "",
                             "sparse_rt7_measured": m7 if m7 is not None else ""})
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
