#!/usr/bin/env bash
# Why the FP16/BF16 pairs of the 2D CUDA-core kernel run no faster than FP32 at depth (issue 21, target 4): the
# H200 corpus measures Box-2D1R BF16 x11 at 1569 GStencils/s against FP32's 1552, where a packed FMA does two
# points.  Nsight Compute on one sweep of the pairs' defaults at t = 4, 8, 16 (Box-2D1R FP16, Star-2D1R FP16 x16)
# and of FP32's defaults at the same depth (x16: async copies, 4 iterations ahead), and the pairs with FP32's strip
# (1024 columns, 4 per thread) through registers.  Everything under OUT; the ncu reports tarred into one file.
#   bash benchmarks/gpu_session_cc2d_pairs_ncu.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_fmaheavy.sum,smsp__inst_executed_pipe_fp16.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active"
. "$here/ncu_cc2d_prof.sh"  # prof()
prof box-fp16-t4 Box-2D1R 4 half '{}'
prof box-fp16-t8 Box-2D1R 8 half '{}'
prof box-fp16-t16 Box-2D1R 16 half '{}'
prof box-fp32-t16 Box-2D1R 16 float '{}'
prof box-fp16-t16-wide Box-2D1R 16 half '{"v": 4, "cols": 1024}'
prof box-fp32-t16-regs Box-2D1R 16 float '{"async_copy": false}'
prof star-fp16-t16 Star-2D1R 16 half '{}'
prof star-fp32-t16 Star-2D1R 16 float '{}'
tar -C "$out" -czf "$out/ncu.tgz" ncu && rm -rf "$out/ncu"
