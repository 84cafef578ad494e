#!/usr/bin/env bash
# Why the refined model over-predicts the Tensor Core kernels in 3D (dense: median +34 % held out on the H100, 2D +5 %):
# the static SASS order of each streaming loop's global loads and MMAs (benchmarks/sass_load_order.py) and Nsight
# Compute's warp-stall samples per SASS instruction on the dense kernel at Box-3D1R and Star-3D1R FP16 x2, Box-3D1R
# FP16 x1, and Box-2D1R FP16 x4 (predicted within 8 %) beside them.
#   bash benchmarks/gpu_session_tc3d_order.sh OUT_DIR
# Writes order.txt, summary.txt (benchmarks/summarize_sass_stalls.py), and ncu-LABEL.txt, sass-LABEL.csv and the
# loops' SASS in one tarball (all.tgz); the reports are removed.
set -u
out=${1:?output folder}
mkdir -p "$out/sass"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
python benchmarks/sass_load_order.py --out "$out/sass" | tee "$out/order.txt"
source "$(dirname "$0")/ncu_sass_stalls.sh"
prof dense-Star-3D1R-half-t2 tc_stream tensor_core Star-3D1R 2 half 512x512x512
prof dense-Box-3D1R-half-t2 tc_stream tensor_core Box-3D1R 2 half 512x512x512
prof dense-Box-3D1R-half-t1 tc_stream tensor_core Box-3D1R 1 half 512x512x512
prof dense-Box-2D1R-half-t4 tc_stream tensor_core Box-2D1R 4 half 10240x10240
python benchmarks/summarize_sass_stalls.py "$out"/sass-*.csv > "$out/summary.txt"
rm -f "$out"/rep-*.ncu-rep
(cd "$out" && tar czf all.tgz ncu-*.txt sass-*.csv run-*.log sass && rm -rf ncu-*.txt sass-*.csv run-*.log sass)
cat "$out/summary.txt"
