#!/usr/bin/env bash
# Nsight Compute on a 1D line launched as one row against as rows (kernels/defaults.yaml tensor_cores_1d_rows):
# why the rows, faster in FP16 and at deep fusion, are slower for FP64/TF32 at r·t <= 6 and for sparse TF32 on the
# H100 (validation/results/h100-sxm-2026-11-27/tc-1d-rows).  Same sections as gpu_session_tc1d_ncu.sh plus DRAM
# bytes, the L2 hit rate and the long-scoreboard stalls.
#   bash benchmarks/gpu_session_tc1d_rows_ncu.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
metrics="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum"
prof() {  # label unit stencil fuse dtype rows
  local label=$1 unit=$2 st=$3 t=$4 dt=$5 rows=$6
  timeout 150 ncu --clock-control none -k "regex:tc_stream|sptc_stream" --launch-skip 2 --launch-count 1 $sections $metrics \
      python benchmarks/profile_kernel.py "$unit" "$st" "$t" "$dt" "" "{\"line_rows\": $rows}" > "$out/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-22) | $(grep -m1 -E '^ +Duration' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -E 'dram__bytes_read.sum|dram__bytes_write.sum|lts__t_sector_hit_rate|long_scoreboard|inst_executed.sum' "$out/ncu-$label.txt" | tr -s ' ' | tr '\n' ';')"
}
for rows in false true; do
  prof "dense-Box-1D1R-double-t1-rows-$rows" tensor_core Box-1D1R 1 double $rows
  prof "dense-Box-1D1R-float-t2-rows-$rows" tensor_core Box-1D1R 2 float $rows
  prof "sparse-Box-1D1R-float-t3-rows-$rows" sparse_tensor_core Box-1D1R 3 float $rows
  prof "dense-Box-1D2R-half-t16-rows-$rows" tensor_core Box-1D2R 16 half $rows
done
