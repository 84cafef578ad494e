#!/usr/bin/env bash
# Two CUDA-core scans beside the defaults in one call (every configuration checked on a small grid first):
# cc-ahead-deep (2D FP32/FP64 input rows copied 2, 4 or 6 iterations ahead at radius 2, t = 6-12, and radius 3,
# t = 4-8) and cc1d-points (the 1D tile kernel at depth with twice the points per thread).
#   bash benchmarks/gpu_session_cc_deep_scans.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/cc-ahead-deep" "$out/cc1d-points"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 360 python "$here/tune_gpu_kernels.py" --out "$out/cc-ahead-deep" --only cc-ahead-deep > "$out/cc-ahead-deep/tune.log" 2>&1
timeout 170 python "$here/tune_gpu_kernels.py" --out "$out/cc1d-points" --only cc1d-points > "$out/cc1d-points/tune.log" 2>&1
for s in cc-ahead-deep cc1d-points; do
  python "$here/summarize_knob_scan.py" "$out/$s/tuning.csv" > "$out/$s/summary.md"
  python "$here/best_of_knob_scan.py" "$out/$s/tuning.csv"
done
