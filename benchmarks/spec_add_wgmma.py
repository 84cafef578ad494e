"""Put the wgmma rates benchmarks/wgmma_rates.py measured into a calibrated spec file's ``warpgroup_mma`` section.

The spec's other numbers come from an earlier ``tcadvisor calibrate`` run and stay as they are (re-calibrating
would move every ceiling the refined model's constants were fitted with); this adds the one section that run
did not have, each rate with the results file as its source, A from registers (what a stencil kernel's
strips would be).  The file is rewritten only if the section changes.

    python benchmarks/spec_add_wgmma.py hwspecs/h200-calibrated.yaml validation/results/h200-2026-11-27/wgmma \
        "NVIDIA H200"
"""
from __future__ import annotations

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.mma import MmaShape  # noqa: E402

MARK = "# --- warpgroup_mma: added by benchmarks/spec_add_wgmma.py"


def section(folder: str, device: str) -> str:
    with open(os.path.join(folder, "wgmma-rates.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["instruction"].startswith("wgmma") and r["a_from"] == "registers"
                and r["rate_tflops"]]
    per: dict[str, dict[str, list[tuple[MmaShape, float]]]] = {}
    for r in rows:
        unit = "sparse_tensor_core" if r["instruction"] == "wgmma.sp" else "tensor_core"
        per.setdefault(unit, {}).setdefault(r["precision"], []).append((MmaShape.parse(r["shape"]),
                                                                        float(r["rate_tflops"])))
    date = os.path.basename(os.path.dirname(os.path.abspath(folder))).split("-", 1)[-1]
    lines = [MARK,
             f"# wgmma (sm_90a) measured by benchmarks/wgmma_rates.py on {device}, {date}: A from registers, B from",
             "# shared memory, 2 warpgroups per block, one commit group in flight; rates per warpgroup instruction",
             "# (sparse: dense-equivalent).  No bundled kernel issues wgmma: the model never counts these as an",
             "# executed rate.  They answer what a wgmma kernel would get at a tile width N.",
             "warpgroup_mma:"]
    for unit in ("tensor_core", "sparse_tensor_core"):
        if unit not in per:
            continue
        lines.append(f"  {unit}:")
        for precision in ("tf32", "fp16", "bf16"):
            if precision not in per[unit]:
                continue
            lines.append(f"    {precision}:")
            for shape, value in sorted(per[unit][precision], key=lambda sv: sv[0].n):
                lines.append(f"      {shape}: {{value: {value:.4g}, source: wgmma}}")
    return "\n".join(lines) + "\n"


def main() -> int:
    spec_path, folder, device = sys.argv[1], sys.argv[2], sys.argv[3]
    text = open(spec_path).read()
    body = text.split(MARK)[0].rstrip("\n") + "\n"
    source_line = (f"  wgmma: benchmarks/wgmma_rates.py on {device} "
                   f"({os.path.relpath(os.path.join(folder, 'wgmma-rates.csv'))})\n")
    if "\n  wgmma: " not in body:
        body = body.replace("\nsources:\n", "\nsources:\n" + source_line, 1)
    new = body + section(folder, device)
    if new != text:
        with open(spec_path, "w") as f:
            f.write(new)
    from tcadvisor.hardware_schema import load_spec_file

    spec = load_spec_file(spec_path)
    n = sum(len(s) for per in spec.warpgroup_rates.values() for s in per.values())
    print(f"{spec_path}: {n} wgmma rates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
