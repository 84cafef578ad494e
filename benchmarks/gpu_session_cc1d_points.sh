#!/usr/bin/env bash
# The scan `cc1d-points-again` (`cc1d-points` with the generic tile named: the 1D CUDA-core tile at depth with twice the points per thread, beside the
# defaults; every configuration checked on a small grid first), for a kernel file whose code generation changed:
# the source of `tile1d_deep` in kernels/defaults.yaml was measured on the code before.  Under OUT.
#   bash benchmarks/gpu_session_cc1d_points.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/cc1d-points"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 300 python "$here/tune_gpu_kernels.py" --out "$out/cc1d-points" --only cc1d-points-again > "$out/cc1d-points/tune.log" 2>&1
python "$here/summarize_knob_scan.py" "$out/cc1d-points/tuning.csv" > "$out/cc1d-points/summary.md"
python "$here/best_of_knob_scan.py" "$out/cc1d-points/tuning.csv"
