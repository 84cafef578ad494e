#!/usr/bin/env bash
# Why the refined model over-predicts the dense Tensor Core kernel in 3D with four inner rows per warp (FP16/BF16
# +48-50 % held out, one inner row -16 %: validation/results/refined-fit-2026-11-27/tc3d-residuals.txt): Nsight
# Compute's DRAM traffic and throughput, L2 hit rate, occupancy, tensor pipe and long-scoreboard stalls of Box-3D1R
# FP16 x1 and Star-3D1R FP16 x2 at four inner rows (their defaults) and at one, and Star-3D1R FP16 x4 (one, its
# default).  One sweep each on 512^3, clocks as found.
#   bash benchmarks/gpu_session_tc3d_rows_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,launch__registers_per_thread,launch__grid_size"
for spec in "box1-ir4 Box-3D1R 1 {}" "box1-ir1 Box-3D1R 1 {\"inner_rows\":1}" \
            "star2-ir4 Star-3D1R 2 {}" "star2-ir1 Star-3D1R 2 {\"inner_rows\":1}" "star4-ir1 Star-3D1R 4 {}"; do
  set -- $spec
  timeout 60 ncu --clock-control none -k "regex:tc_" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
      python benchmarks/profile_kernel.py tensor_core "$2" "$3" half 512x512x512 "$4" > "$out/ncu-$1.txt" 2>&1
  echo "$1 $(grep -m1 GStencils "$out/ncu-$1.txt")"
done
