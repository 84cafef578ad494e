#!/usr/bin/env bash
# The SASS the 3D CUDA-core kernel runs (Nsight Compute's source page: executed instructions and stall samples per
# instruction) for Box-3D1R FP32 x4 and FP64 x3, today's file (residue and vector loads) and the file of before
# (build/kernels-at/before-cc3d/cuda_cores_3d.cu, commit 2b1b916), where the scan cc3d-addr found the hoisted
# addresses slower (0.88x and 0.76x).
#   bash benchmarks/gpu_session_cc3d_sass.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
source "$(dirname "$0")/ncu_sass_stalls.sh"
run_all() {
  local tag=$1
  prof "box4-$tag" cc_stream3d cuda_core Box-3D1R 4 float 512x512x512 '{}'
  prof "box4-$tag-vld" cc_stream3d cuda_core Box-3D1R 4 float 512x512x512 '{"vector_loads": true}'
  prof "box3d-$tag" cc_stream3d cuda_core Box-3D1R 3 double 512x512x512 '{}'
}
run_all now
cp kernels/cuda_cores_3d.cu "$out/now.cu"
cp build/kernels-at/before-cc3d/cuda_cores_3d.cu kernels/cuda_cores_3d.cu
prof box4-before cc_stream3d cuda_core Box-3D1R 4 float 512x512x512 '{}'
prof box3d-before cc_stream3d cuda_core Box-3D1R 3 double 512x512x512 '{}'
cp "$out/now.cu" kernels/cuda_cores_3d.cu && rm "$out/now.cu"
python benchmarks/summarize_sass_stalls.py "$out"/sass-*.csv > "$out/summary.txt"
rm -f "$out"/rep-*.ncu-rep
(cd "$out" && tar czf all.tgz ncu-*.txt sass-*.csv run-*.log && rm -f ncu-*.txt sass-*.csv run-*.log)
