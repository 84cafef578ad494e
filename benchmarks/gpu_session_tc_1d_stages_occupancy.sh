#!/usr/bin/env bash
# The staged 1D dense kernel in FP64 and TF32 against its registers (``tc-1d-stages-occupancy``): weights in
# shared memory, more stages, one x tile, each beside today's default in one run.
#   bash benchmarks/gpu_session_tc_1d_stages_occupancy.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python benchmarks/tune_gpu_kernels.py --only tc-1d-stages-occupancy --repeats 5 --out "$out/scan" > "$out/scan.log" 2>&1
echo "scan rc $?: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/scan.log") incorrect"
python benchmarks/summarize_knob_scan.py "$out/scan/tuning.csv" > "$out/scan/summary.md"
python - "$out/scan/tuning.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
for r in rows:
    b = base[(r["stencil"], r["dtype"], r["fuse"])]
    regs = r["kernel"].rsplit(",", 1)[-1].strip()
    print(f"{r['stencil']:9} {r['dtype']:7} {r['fuse']:>3} {float(r['gstencils']):8.1f} {float(r['gstencils']) / b:6.3f} {regs:14} {r['options'][:90]}")
PY
