#!/usr/bin/env bash
# Input rows copied, 1 and 4 iterations ahead, at radii 2-4 on 2D CUDA cores (FP16 pairs, FP32, FP64), beside the
# defaults: tune_gpu_kernels.py --only cc-ahead-radii (every configuration checked on a small grid first).
#   bash benchmarks/gpu_session_cc2d_ahead_radii.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 400 python "$here/tune_gpu_kernels.py" --out "$out" --only cc-ahead-radii > "$out/tune.log" 2>&1
python "$here/summarize_knob_scan.py" "$out/tuning.csv" > "$out/summary.md"
tail -60 "$out/summary.md"
