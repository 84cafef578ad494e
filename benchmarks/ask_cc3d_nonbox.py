"""What the refined model says of the cc3d-nonbox scan's tiles, beside what the scan measured.

Each run of ``tune_gpu_kernels.py --only cc3d-nonbox`` (and of its held-out part) is predicted as a recorded run of
its plan: the plan read back from the kernel's own description (with the registers the compiler gave it), the
constants shipped.  Per storage type and depth: does the model rank the tiles as the GPU did, and does it see why
the box's tile holds the 7-point star back?  Written after the scan (the planner's choice is the scan's, not the
model's), as the "ask the model" record of the change.

    python benchmarks/ask_cc3d_nonbox.py DIR/scan/tuning.csv [DIR/heldout/tuning.csv] --gpu h200-calibrated --out FILE.csv
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ask_sptc_r8 import write_rows  # noqa: E402
from benchmarks.tune_gpu_kernels import DIAGONAL_3D, FACE_EDGE_3D  # noqa: E402
from tcadvisor import refinement  # noqa: E402
from tcadvisor.hardware import find_spec  # noqa: E402
from tcadvisor.validate import fitting  # noqa: E402

PRECISION = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}
CUSTOM = {s.name: s for s in (DIAGONAL_3D, FACE_EDGE_3D)}


def offsets_of(name: str) -> str:
    """The corpus's offsets field for the custom shapes (empty for named stencils)."""
    st = CUSTOM.get(name)
    return "" if st is None else json.dumps([list(off) for off in st.offsets])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--gpu", default="h200-calibrated")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    spec = find_spec(args.gpu)
    fitted = refinement.constants(spec)
    out = []
    for path in args.tables:
        with open(path) as f:
            table = list(csv.DictReader(f))
        for r in table:
            if r["correct"] != "True":
                continue
            row = {"stencil": r["stencil"], "offsets": offsets_of(r["stencil"]), "unit": r["unit"],
                   "dtype": r["dtype"], "precision": PRECISION[r["dtype"]], "mma": "", "fuse": r["fuse"],
                   "grid": "512x512x512", "status": "ok", "gstencils": float(r["gstencils"]), "alpha": "",
                   "kernel": r["kernel"]}
            run = fitting.runs_from_rows([row], spec, args.gpu)[0]
            pred = float(fitting.predict([run], fitted)[0])
            out.append({"table": Path(path).parent.name, "stencil": r["stencil"], "dtype": r["dtype"],
                        "fuse": int(r["fuse"]), "options": r["options"], "measured": round(float(r["gstencils"]), 1),
                        "predicted": round(pred, 1), "kernel": r["kernel"]})
    base = {(o["table"], o["stencil"], o["dtype"], o["fuse"]): o for o in out if o["options"] == "{}"}
    for o in out:
        b = base.get((o["table"], o["stencil"], o["dtype"], o["fuse"]))
        o["measured_vs_default"] = round(o["measured"] / b["measured"], 3) if b else ""
        o["predicted_vs_default"] = round(o["predicted"] / b["predicted"], 3) if b else ""
    write_rows(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
