#!/usr/bin/env bash
# Nsight Compute on memory-bound (t = 1) configurations that stay far below the copy bandwidth (kernels-12/,
# corpus): Box-3D1R in FP16 on both Tensor Core kernels (46 % of the bound) beside FP64 on the dense kernel (70 %)
# and FP32 on CUDA cores (59 %); Box-1D1R FP16 on the dense kernel (77 %) beside CUDA cores (95 %); and Box-3D1R
# FP16 x2 on the sparse kernel (46 %, issue 21's target 3).  Memory-side metrics: DRAM bytes and throughput, L2 and
# L1 hit rates and sectors, warps resident, long-scoreboard stalls, instructions.
# Recorded (validation/results/h100-sxm-2026-11-27/shallow-ncu/) with the defaults of before the dense kernel's x tiles at
# shallow fusion; today the 1D and 2D FP16 dense rows take four x tiles (tensor_cores_1d_x_tiles, tensor_cores): give
# them '{"x_tiles": 1}' (the 8th argument of prof) to profile the configurations of that record again.
#   bash benchmarks/gpu_session_shallow_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
prof() {  # label unit kernel-regex stencil fuse dtype [grid] [knobs-json]
  local label=$1 unit=$2 kre=$3 st=$4 t=$5 dt=$6 grid=${7:-} knobs=${8:-'{}'}
  timeout 150 ncu --clock-control none -k "regex:$kre" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py "$unit" "$st" "$t" "$dt" "$grid" "$knobs" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per Thread' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'dram__throughput|dram__bytes_(read|write).sum |lts__t_sector_hit|l1tex__t_sector_hit|sm__warps_active|long_scoreboard|stalled_barrier|lg_throttle|issue_active|inst_executed.sum|l1tex__throughput|lts__throughput' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
prof 3d-tc-half-t1 tensor_core tc_stream Box-3D1R 1 half
prof 3d-sptc-half-t1 sparse_tensor_core sptc_stream Box-3D1R 1 half
prof 3d-tc-double-t1 tensor_core tc_stream Box-3D1R 1 double
prof 3d-tc-float-t1 tensor_core tc_stream Box-3D1R 1 float
prof 3d-cc-float-t1 cuda_core cc_stream3d Box-3D1R 1 float
prof 3d-sptc-half-t2 sparse_tensor_core sptc_stream Box-3D1R 2 half
prof 1d-tc-half-t1 tensor_core tc_stream Box-1D1R 1 half 134217728
prof 1d-cc-half-t1 cuda_core cc_tile1d Box-1D1R 1 half 134217728
prof 2d-tc-half-t1 tensor_core tc_stream Box-2D1R 1 half 10240x10240
prof 2d-tc-double-t1 tensor_core tc_stream Box-2D1R 1 double 10240x10240
