"""What the refined model says of the sparse kernel in 1D beyond r·t = 8 before it is measured.

The constants are those fitted before the kernel took these depths (``models/fitted/refined-terms.yaml`` of the
commit that asks), so the answer is a prediction for configurations the fit never saw.  For the default rows of
``tune_gpu_kernels.py --only sptc-1d-deep``: the refined GStencils/s of the sparse, dense and CUDA-core kernels (what
``tcadvisor advise`` reports at that depth), and with ``--measured`` the scan's rows beside them.

    python benchmarks/ask_sptc_1d_deep.py --out FILE.csv                       # before the scan
    python benchmarks/ask_sptc_1d_deep.py --measured DIR/tuning.csv --constants OLD.yaml --out FILE.csv  # after
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import measured_runs, refined, write_rows  # noqa: E402
from tcadvisor import model, refinement  # noqa: E402

CONFIGS = ([("Box-1D1R", t, d) for d in ("half", "float") for t in (8, 12, 16, 32, 64)]
           + [("Box-1D2R", t, d) for d in ("half", "float") for t in (8, 16)]
           + [("Box-1D3R", t, d) for d in ("half", "float") for t in (8, 16)]
           + [("Box-1D7R", t, "half") for t in (1, 2, 4, 8, 9)])
UNITS = ("sparse_tensor_core", "tensor_core", "cuda_core")


#: The planner's 1D rules the sptc-1d-deep scan gave (since replaced by those of sptc-1d-ilp2): TF32 3 stages from
#: r·t = 32, FP16/BF16 weights in registers beyond r·t = 8.
TF32_STAGES_FROM = 32


def scanned_default(stencil: str, dtype: str, t: int) -> str:
    """The scan's row (its ``options``) that the default sparse plan of its day ran: the planner's rule of the scan
    ({}), FP16/BF16 weights in registers beyond r·t = 8, TF32 stages from r·t = 32."""
    from tcadvisor.gpu import plans
    from tcadvisor.stencil import parse_stencil

    st = parse_stencil(stencil)
    R = st.radius * t
    precision = "tf32" if dtype == "float" else "fp16"
    if precision == "tf32":
        return "{'stages': 3, 'prefetch': 0}" if R >= TF32_STAGES_FROM else "{}"
    return "{'aregs': True}" if R >= plans.SPTC_1D_DEEP_FROM else "{}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--constants", help="a refined-terms.yaml whose constants to ask with (default: the shipped)")
    ap.add_argument("--measured", help="the sptc-1d-deep scan's tuning.csv")
    ap.add_argument("--gpu", default="h100-calibrated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    measured = {}
    if args.measured:
        measured = measured_runs(args.measured)
    values = None
    if args.constants:
        raw = yaml.safe_load(Path(args.constants).read_text())
        values = {sym: float(raw["constants"][sym.name]["value"]) for sym in model.FITTED}
    rows = []
    with refinement.using_constants(values) if values else contextlib.nullcontext():
        for stencil, t, dtype in CONFIGS:
            pred = refined(stencil, dtype, t, args.gpu)
            row = {"stencil": stencil, "dtype": dtype, "fuse": t}
            for unit in UNITS:
                row[f"{unit}_predicted"] = round(pred[unit], 1) if unit in pred else ""
                if args.measured:
                    knobs = scanned_default(stencil, dtype, t) if unit == "sparse_tensor_core" else "{}"
                    row[f"{unit}_measured"] = measured.get((stencil, dtype, unit, t, knobs), "")
                    if unit == "sparse_tensor_core":
                        row["sparse_row"] = knobs if row[f"{unit}_measured"] != "" else "not scanned"
            rows.append(row)
    write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
