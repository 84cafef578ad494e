#!/usr/bin/env bash
# Nsight Compute on the 2D Tensor Core kernels where issue 21's target 4 misses by the most rows: the sparse kernel in
# FP16 and TF32 at fused radius 1-3 (41-47 % of its own roofline at every 2D best depth, neither DRAM nor the tensor
# pipe near its ceiling) and the dense kernel's memory-bound FP16 rows at r·t = 4 (59 % of the bandwidth), beside
# the dense kernel at t = 1.  Memory-side metrics and warp states (ncu_shallow_prof.sh).
#   bash benchmarks/gpu_session_sptc2d_shallow_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
. "$(dirname "$0")/ncu_shallow_prof.sh"
prof 2d-sptc-half-t1 sparse_tensor_core sptc_stream Box-2D1R 1 half 10240x10240
prof 2d-sptc-half-t3 sparse_tensor_core sptc_stream Box-2D1R 3 half 10240x10240
prof 2d-sptc-float-t3 sparse_tensor_core sptc_stream Box-2D1R 3 float 10240x10240
prof 2d-sptc-half-r3 sparse_tensor_core sptc_stream Box-2D3R 1 half 10240x10240
prof 2d-tc-half-r4 tensor_core tc_stream Box-2D2R 2 half 10240x10240
prof 2d-tc-half-t1 tensor_core tc_stream Box-2D1R 1 half 10240x10240
