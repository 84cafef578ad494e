# Sourced by the Nsight Compute scripts of the Sparse Tensor Core kernel (gpu_session_sptc_r8_ncu.sh,
# gpu_session_sptc_r7_ncu.sh): sections and metrics of one configuration (instructions, the tensor pipe, issue,
# stalls per issue, DRAM) into $out/ncu-LABEL.txt, and a one-line summary.
#   prof LABEL STENCIL FUSE DTYPE KNOBS-JSON
sections="--section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis --section LaunchStats"
metrics="--metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label stencil fuse dtype knobs-json
  local label=$1 st=$2 t=$3 dt=$4 knobs=$5
  timeout 150 ncu --clock-control none -k "regex:sptc_stream" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py sparse_tensor_core "$st" "$t" "$dt" "" "$knobs" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'smsp__inst_executed.sum|pipe_tensor|issue_active|stalled_(long|math|short|wait|mio|not_sel|selected|dispatch)|dram__throughput' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
