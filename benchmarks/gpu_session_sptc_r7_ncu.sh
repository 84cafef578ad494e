#!/usr/bin/env bash
# Nsight Compute on the Sparse Tensor Core kernel at SPIDER's workload (Box-2D1R FP16 x7, one 15 x 15 step fused):
# the FP32 entry before its register cap (2 blocks of 4 warps per SM), the defaults with it (3 blocks), FP16
# accumulators at the entry's other knobs and with their own measured knobs (four x tiles).  The issue quotes SPIDER
# at 24 % warps active and the tensor pipe 53 % active; this says where the bundled kernel's variants stand.
#   bash benchmarks/gpu_session_sptc_r7_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
source "$(dirname "$0")/ncu_sparse_metrics.sh"
entry='"x_tiles": 2, "weights_shared": true, "prefetch": 0, "stages": 3, "l2_prefetch": 0, "fixed_alignment": true'
prof Box-2D1R-half-t7-fp32-1block Box-2D1R 7 half "{$entry, \"min_blocks\": 1}"
prof Box-2D1R-half-t7-defaults Box-2D1R 7 half '{}'
prof Box-2D1R-half-t7-fp16acc-entry Box-2D1R 7 half "{$entry, \"min_blocks\": 1, \"half_accumulators\": true}"
prof Box-2D1R-half-t7-fp16acc Box-2D1R 7 half '{"half_accumulators": true}'
