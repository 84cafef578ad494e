#!/usr/bin/env bash
# Nsight Compute on the Sparse Tensor Core kernel at r·t = 8 (each line two matrices, its even and its odd taps, on
# the same input fragments) beside r·t = 7 with the same knobs: the refined model, fitted on r·t <= 7, predicted the
# 2D r·t = 8 runs 36-39 % low (validation/results/refined-fit-2026-11-27/predictions.csv), while the measured MMA
# rate rose 1.36x.  Instructions per MMA, the tensor pipe, issue and stalls, occupancy.
#   bash benchmarks/gpu_session_sptc_r8_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis --section LaunchStats"
metrics="--metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label stencil fuse dtype knobs-json
  local label=$1 st=$2 t=$3 dt=$4 knobs=$5
  timeout 150 ncu --clock-control none -k "regex:sptc_stream" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py sparse_tensor_core "$st" "$t" "$dt" "" "$knobs" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'smsp__inst_executed.sum|pipe_tensor|issue_active|stalled_(long|math|short|wait|mio|not_sel|selected|dispatch)|dram__throughput' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
same='{"weights_shared": true, "x_tiles": 2, "prefetch": 1, "l2_prefetch": 0}'
for dt in half float; do
  prof "Box-2D1R-$dt-t7-xt2-ws-pf1" Box-2D1R 7 $dt "$same"
  prof "Box-2D1R-$dt-t8-xt2-ws-pf1" Box-2D1R 8 $dt "$same"
done
prof "Box-2D1R-half-t7-default" Box-2D1R 7 half '{}'
