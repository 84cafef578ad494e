#!/usr/bin/env bash
# Nsight Compute's warp-stall samples per SASS instruction for the Sparse Tensor Core kernel at today's defaults
# where it runs furthest from its bound in 2D and 3D (issue 21, targets 3 and 5): Box-2D1R FP16 x7 (SPIDER's
# 15 x 15 step fused), the same with one x tile per warp (fewer registers, more warps), Box-3D1R FP16 x2 and x3.
#   bash benchmarks/gpu_session_sptc_stalls_now.sh OUT_DIR
# Writes, per configuration, ncu-LABEL.txt (sections) and sass-LABEL.csv (the source page, SASS, every metric);
# the reports (rep-LABEL.ncu-rep) are removed at the end.
set -u
out=${1:?output folder}
mkdir -p "$out"
source "$(dirname "$0")/ncu_sass_stalls.sh"
prof sparse-Box-2D1R-half-t7 sptc_stream sparse_tensor_core Box-2D1R 7 half 10240x10240
prof sparse-Box-2D1R-half-t7-xt1 sptc_stream sparse_tensor_core Box-2D1R 7 half 10240x10240 '{"x_tiles": 1, "stages": 3, "prefetch": 0, "weights_shared": true, "fixed_alignment": true}'
prof sparse-Box-3D1R-half-t2 sptc_stream sparse_tensor_core Box-3D1R 2 half 512x512x512
prof sparse-Box-3D1R-half-t3 sptc_stream sparse_tensor_core Box-3D1R 3 half 512x512x512
rm -f "$out"/rep-*.ncu-rep
