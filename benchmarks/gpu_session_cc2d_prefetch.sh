#!/usr/bin/env bash
# The 2D CUDA-core kernel with input rows of several iterations in flight (K_PF), issue 21 targets 4 and 5:
# the replicate scan in both orders (tune_gpu_kernels.py --only cc-prefetch2, cc-prefetch2-reversed), then Nsight
# Compute on the deep configurations where rows ahead gained or did not (Star-2D1R FP64 t = 11, FP32 t = 10,
# Box-2D1R FP64 t = 16; one iteration ahead and three), then the in-flight profiles of
# gpu_session_cc2d_inflight_ncu.sh.  Everything under OUT; the ncu reports tarred into one file.
#   bash benchmarks/gpu_session_cc2d_prefetch.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/scan-a" "$out/scan-b" "$out/ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 150 python "$here/tune_gpu_kernels.py" --out "$out/scan-a" --only cc-prefetch2 > "$out/scan-a/tune.log" 2>&1
timeout 150 python "$here/tune_gpu_kernels.py" --out "$out/scan-b" --only cc-prefetch2-reversed > "$out/scan-b/tune.log" 2>&1
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active"
. "$here/ncu_cc2d_prof.sh"  # prof()
prof star-fp64-t11-pf1 Star-2D1R 11 double '{"async_copy": true}'
prof star-fp64-t11-pf3 Star-2D1R 11 double '{"async_copy": true, "prefetch": 3}'
prof star-fp32-t10-default Star-2D1R 10 float '{}'
prof star-fp32-t10-pf3 Star-2D1R 10 float '{"async_copy": true, "prefetch": 3}'
prof box-fp64-t16-pf1 Box-2D1R 16 double '{"async_copy": true}'
prof box-fp64-t16-pf3 Box-2D1R 16 double '{"async_copy": true, "prefetch": 3}'
timeout 200 bash "$here/gpu_session_cc2d_inflight_ncu.sh" "$out/ncu/inflight" > "$out/ncu/inflight.log" 2>&1
tar -C "$out" -czf "$out/ncu.tgz" ncu && rm -rf "$out/ncu"
