#!/usr/bin/env bash
# Nsight Compute on the Sparse Tensor Core kernel in 1D at 1, 2, 3 and 5 blocks of 32 window columns (Box-1D1R FP16
# x8, x16, x32, x64, the line as rows, today's defaults) and TF32 x16: the H200 runs these no faster than the H100,
# so DRAM is not what binds them; every mma.sp of a slice accumulates into one fragment (a chain of 2 x blocks,
# TF32 4 x blocks, dependent MMAs).  Stall reasons per issue, the tensor pipe, issue rate, DRAM, occupancy.
#   bash benchmarks/gpu_session_sptc_1d_deep_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats"
metrics="--metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__warps_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label stencil fuse dtype
  local label=$1 st=$2 t=$3 dt=$4
  timeout 120 ncu --clock-control none -k "regex:sptc_stream" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py sparse_tensor_core "$st" "$t" "$dt" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'smsp__inst_executed.sum|pipe_tensor|issue_active|stalled_(long|math|short|wait|mio|not_sel|lg|drain|tex)|warps_active|dram__throughput' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
for t in 8 16 32 64; do prof "Box-1D1R-half-t$t" Box-1D1R $t half; done
prof "Box-1D1R-float-t16" Box-1D1R 16 float
