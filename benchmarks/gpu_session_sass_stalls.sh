#!/usr/bin/env bash
# Nsight Compute's warp-stall samples per SASS instruction for the Tensor Core kernels at the depths where they
# run furthest below their own roofline (issue 21, targets 4 and 5): which instruction each warp waits on.
#   bash benchmarks/gpu_session_sass_stalls.sh OUT_DIR
# Writes, per configuration, ncu-LABEL.txt (sections) and sass-LABEL.csv (the source page, SASS, every metric).
set -u
out=${1:?output folder}
mkdir -p "$out"
source "$(dirname "$0")/ncu_sass_stalls.sh"
prof sparse-Box-2D1R-half-t7 sptc_stream sparse_tensor_core Box-2D1R 7 half 10240x10240
prof dense-Box-2D1R-half-t8 tc_stream tensor_core Box-2D1R 8 half 10240x10240
prof sparse-Box-3D1R-half-t2 sptc_stream sparse_tensor_core Box-3D1R 2 half 512x512x512
prof sparse-Box-2D1R-half-t4 sptc_stream sparse_tensor_core Box-2D1R 4 half 10240x10240
