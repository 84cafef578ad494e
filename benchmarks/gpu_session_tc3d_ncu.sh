#!/usr/bin/env bash
# Nsight Compute on the 3D Tensor Core kernels, dense and sparse, where the refined model misses them
# (validation/results/h100-sxm-2026-11-26/tc3d-ncu): what binds each (tensor pipe, L1/shared, L2, DRAM, issue),
# and the sparse kernel's inner rows per warp against one row, in one run.
#   bash benchmarks/gpu_session_tc3d_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
prof() {  # label kernel-regex unit stencil fuse dtype [knobs-json]
  local label=$1 kname=$2; shift 2
  timeout 120 ncu --clock-control none -k "regex:$kname" --launch-skip 2 --launch-count 1 $sections \
      python benchmarks/profile_kernel.py "$@" > "$out/ncu-$label.txt" 2>&1
  echo "$label rc=$? $(grep -m1 'GStencils' "$out/ncu-$label.txt")"
}
prof dense-Box-3D1R-half-t1 tc_stream tensor_core Box-3D1R 1 half 512x512x512
prof dense-Box-3D1R-half-t2 tc_stream tensor_core Box-3D1R 2 half 512x512x512
prof dense-Star-3D3R-half-t1 tc_stream tensor_core Star-3D3R 1 half 512x512x512
prof dense-Box-3D1R-double-t3 tc_stream tensor_core Box-3D1R 3 double 512x512x512
prof dense-Box-2D1R-half-t3 tc_stream tensor_core Box-2D1R 3 half 10240x10240
prof sparse-Box-3D1R-half-t2 sptc_stream sparse_tensor_core Box-3D1R 2 half 512x512x512
prof sparse-Box-3D1R-half-t2-ir1 sptc_stream sparse_tensor_core Box-3D1R 2 half 512x512x512 '{"prefetch": 1}'
prof sparse-Box-2D1R-half-t3 sptc_stream sparse_tensor_core Box-2D1R 3 half 10240x10240
