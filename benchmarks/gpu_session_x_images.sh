#!/bin/bash
# One device call: the kernels storing their own x images (kernels/x_images.cuh) against the kernels before them,
# (An experiment: run on 3135c3a with validation/results/h100-sxm-2026-11-28/x-images/*/kernel-images.patch applied.)
# side by side in one process (benchmarks/time_x_images.py), each configuration then checked on a small grid.
# Needs the "before" package, made here first and carried:
#     bash benchmarks/make_before_tree.sh 3135c3a build/before      # carry ["build/before"]
#     bash benchmarks/gpu_session_x_images.sh
set -u
out=${OUT:-/tmp/x-images}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/smi.csv"
date -u +%FT%TZ | tee "$out/date.txt"
python benchmarks/time_x_images.py --before build/before --out "$out/x-images.csv" "$@" 2>&1 | tee "$out/x-images.log"
