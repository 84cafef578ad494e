#!/usr/bin/env bash
# Nsight Compute on the 2D CUDA-core kernel where the refined model misses it by precision
# (benchmarks/analyse_cc_residuals.py, validation/results/refined-fit-2026-11-27/cc-residuals.txt): at t <= 2 every
# block keeps 4 KiB in flight, yet FP64 runs reach 1.13-1.18x the bandwidth the model's Little's law gives, FP32
# 1.05-1.15x and FP16/BF16 0.77-0.87x; deep FP64 with its rows copied by cp.async (Star-2D1R t = 11) moved 1.67 TB/s
# where the model allows 1.16.  Box-2D1R and Box-2D2R at t = 1 in the three precisions, and Star-2D1R FP64 at
# t = 6 and 11 with the rows copied by cp.async and through registers: DRAM bytes and throughput, global load
# requests and sectors (bytes per request), warps resident, long-scoreboard stalls, issue.
#   bash benchmarks/gpu_session_cc2d_inflight_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
here=$(dirname "$0")
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label stencil fuse dtype [knobs-json]
  local label=$1 st=$2 t=$3 dt=$4 knobs=${5:-'{}'}
  timeout 150 ncu --clock-control none -k "regex:cc_stream2d" --launch-skip 2 --launch-count 1 $sections $metrics \
      python "$here/profile_kernel.py" cuda_core "$st" "$t" "$dt" 10240x10240 "$knobs" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'dram__throughput|dram__bytes_(read|write).sum |l1tex__t_(sectors|requests)_pipe_lsu_mem_global_op_ld.sum|sm__warps_active|long_scoreboard|lg_throttle|issue_active' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
for dt in double float half; do
  prof box1-t1-$dt Box-2D1R 1 $dt
  prof box2-t1-$dt Box-2D2R 1 $dt
done
for t in 6 11; do
  prof star1-t$t-double-async Star-2D1R $t double '{"async_copy": true}'
  prof star1-t$t-double-registers Star-2D1R $t double '{"async_copy": false}'
done
