#!/usr/bin/env bash
# Nsight Compute on memory-bound (t = 1) configurations that stay far below the copy bandwidth (kernels-12/,
# corpus): Box-3D1R in FP16 on both Tensor Core kernels (46 % of the bound) beside FP64 on the dense kernel (70 %)
# and FP32 on CUDA cores (59 %); Box-1D1R FP16 on the dense kernel (77 %) beside CUDA cores (95 %); and Box-3D1R
# FP16 x2 on the sparse kernel (46 %, issue 21's target 3).  Memory-side metrics: DRAM bytes and throughput, L2 and
# L1 hit rates and sectors, warps resident, long-scoreboard stalls, instructions.
# Recorded (validation/results/h100-sxm-2026-11-27/shallow-ncu/) with the defaults of before the dense kernel's x tiles at
# shallow fusion; today the 1D and 2D FP16 dense rows take four x tiles (tensor_cores_1d_x_tiles, tensor_cores): give
# them '{"x_tiles": 1}' (the 8th argument of prof) to profile the configurations of that record again.
#   bash benchmarks/gpu_session_shallow_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
. "$(dirname "$0")/ncu_shallow_prof.sh"
prof 3d-tc-half-t1 tensor_core tc_stream Box-3D1R 1 half
prof 3d-sptc-half-t1 sparse_tensor_core sptc_stream Box-3D1R 1 half
prof 3d-tc-double-t1 tensor_core tc_stream Box-3D1R 1 double
prof 3d-tc-float-t1 tensor_core tc_stream Box-3D1R 1 float
prof 3d-cc-float-t1 cuda_core cc_stream3d Box-3D1R 1 float
prof 3d-sptc-half-t2 sparse_tensor_core sptc_stream Box-3D1R 2 half
prof 1d-tc-half-t1 tensor_core tc_stream Box-1D1R 1 half 134217728
prof 1d-cc-half-t1 cuda_core cc_tile1d Box-1D1R 1 half 134217728
prof 2d-tc-half-t1 tensor_core tc_stream Box-2D1R 1 half 10240x10240
prof 2d-tc-double-t1 tensor_core tc_stream Box-2D1R 1 double 10240x10240
