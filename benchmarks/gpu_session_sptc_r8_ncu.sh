#!/usr/bin/env bash
# Nsight Compute on the Sparse Tensor Core kernel at r·t = 8 (each line two matrices, its even and its odd taps, on
# the same input fragments) beside r·t = 7 with the same knobs: the refined model, fitted on r·t <= 7, predicted the
# 2D r·t = 8 runs 36-39 % low (validation/results/refined-fit-2026-11-27/predictions.csv), while the measured MMA
# rate rose 1.36x.  Instructions per MMA, the tensor pipe, issue and stalls, occupancy.
#   bash benchmarks/gpu_session_sptc_r8_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
source "$(dirname "$0")/ncu_sparse_metrics.sh"
same='{"weights_shared": true, "x_tiles": 2, "prefetch": 1, "l2_prefetch": 0}'
for dt in half float; do
  prof "Box-2D1R-$dt-t7-xt2-ws-pf1" Box-2D1R 7 $dt "$same"
  prof "Box-2D1R-$dt-t8-xt2-ws-pf1" Box-2D1R 8 $dt "$same"
done
prof "Box-2D1R-half-t7-default" Box-2D1R 7 half '{}'
