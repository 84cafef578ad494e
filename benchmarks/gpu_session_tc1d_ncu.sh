#!/usr/bin/env bash
# Nsight Compute on the dense Tensor Core kernel in 1D, shallow and deep (issue 21, targets 4 and 7): why it slows
# per sweep as r·t grows (a warp computes one tile and exits; the resident warps carry the bytes in flight).
#   bash benchmarks/gpu_session_tc1d_ncu.sh OUT_DIR
# Writes ncu-LABEL.txt (sections) and run-LABEL.log per configuration, and a one-line summary per configuration.
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
prof() {  # label unit stencil fuse dtype [grid]
  local label=$1; shift
  timeout 120 ncu --clock-control none -k "regex:tc_stream|sptc_stream|cc_" --launch-skip 2 --launch-count 1 $sections \
      python benchmarks/profile_kernel.py "$@" > "$out/ncu-$label.txt" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/ncu-$label.txt") | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ')"
}
prof dense-Box-1D1R-half-t1 tensor_core Box-1D1R 1 half
prof dense-Box-1D2R-half-t4 tensor_core Box-1D2R 4 half
prof dense-Box-1D2R-half-t16 tensor_core Box-1D2R 16 half
prof dense-Box-1D1R-double-t16 tensor_core Box-1D1R 16 double
prof sparse-Box-1D7R-half-t1 sparse_tensor_core Box-1D7R 1 half
prof cc-Box-1D1R-half-t16 cuda_core Box-1D1R 16 half
