# Sourced by the memory-side Nsight Compute sessions (gpu_session_shallow_ncu.sh, gpu_session_sptc2d_shallow_ncu.sh):
# `prof LABEL UNIT KERNEL-REGEX STENCIL FUSE DTYPE [GRID] [KNOBS-JSON]` profiles the third launch (one sweep) of
# benchmarks/profile_kernel.py with the sections and metrics below (DRAM bytes and throughput, L2 and L1 hit rates and
# sectors, warps resident, long-scoreboard, barrier and throttle stalls, instructions), writes $out/ncu-LABEL.txt and
# prints one line of its headline figures.
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label unit kernel-regex stencil fuse dtype [grid] [knobs-json]
  local label=$1 unit=$2 kre=$3 st=$4 t=$5 dt=$6 grid=${7:-} knobs=${8:-'{}'}
  timeout 150 ncu --clock-control none -k "regex:$kre" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py "$unit" "$st" "$t" "$dt" "$grid" "$knobs" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'dram__throughput|dram__bytes_(read|write).sum |lts__t_sector_hit|l1tex__t_sector_hit|sm__warps_active|long_scoreboard|stalled_barrier|lg_throttle|issue_active|inst_executed.sum|l1tex__throughput|lts__throughput' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
