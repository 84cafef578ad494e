#!/usr/bin/env bash
# 3D in 16 bits at shallow depth: why the Tensor Core kernels read DRAM at about half the copy bandwidth at t = 1
# (Box-3D1R FP16 348 GStencils/s of a 731 bound, TF32 66 %, FP64 72 %), and why the refined model over-predicts the
# dense kernel with four inner rows per warp (FP16/BF16 +48-50 % held out, one inner row -16 %:
# validation/results/refined-fit-2026-11-27/tc3d-residuals.txt).  Nsight Compute's DRAM bytes and throughput, L2
# hit rate and traffic, occupancy, issue, tensor pipe and stalls, one sweep each, clocks as found; beside each case
# its unit and knobs.  Then benchmarks/time_3d_shallow.py times t = 1 on grids of other x extents beside a copy.
#   bash benchmarks/gpu_session_tc3d_rows_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__warps_active.avg.per_cycle_active,launch__registers_per_thread,launch__grid_size,launch__block_size"
run_case() {  # label unit stencil fuse dtype grid knobs
  local label=$1 unit=$2 name=$3 fuse=$4 dtype=$5 grid=$6 knobs=$7
  timeout 90 ncu --clock-control none -k "regex:tc_stream|sptc_stream|cc_stream3d" --launch-skip 2 --launch-count 1 \
      --metrics "$metrics" python benchmarks/profile_kernel.py "$unit" "$name" "$fuse" "$dtype" "$grid" "$knobs" \
      > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -E 'gpu__time_duration|dram__bytes_(read|write).sum |dram__throughput|sector_hit|warps_active.avg.pct|issue_active|hmma_cycles|long_scoreboard|registers' "$out/ncu-$label.txt" | awk '{print $NF}' | tr '\n' ' ')"
}
g=512x512x512
run_case tc-box1-h-ir4 tensor_core Box-3D1R 1 half $g '{}'
run_case tc-box1-h-ir1 tensor_core Box-3D1R 1 half $g '{"inner_rows":1}'
run_case tc-box1-h-ir2 tensor_core Box-3D1R 1 half $g '{"inner_rows":2}'
run_case tc-box1-h-nx2048 tensor_core Box-3D1R 1 half 128x512x2048 '{}'
run_case tc-box1-f tensor_core Box-3D1R 1 float $g '{}'
run_case tc-box1-d tensor_core Box-3D1R 1 double $g '{}'
run_case sptc-box1-h sparse_tensor_core Box-3D1R 1 half $g '{}'
run_case sptc-box2-h sparse_tensor_core Box-3D1R 2 half $g '{}'
run_case cc-box1-h cuda_core Box-3D1R 1 half $g '{}'
run_case tc-star2-h-ir4 tensor_core Star-3D1R 2 half $g '{}'
run_case tc-star2-h-ir1 tensor_core Star-3D1R 2 half $g '{"inner_rows":1}'
run_case tc-star4-h-ir1 tensor_core Star-3D1R 4 half $g '{}'
python benchmarks/time_3d_shallow.py "$out/grids.csv" > "$out/grids.txt" 2>&1
tail -40 "$out/grids.txt"
