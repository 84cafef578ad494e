#!/usr/bin/env bash
# Nsight Compute on the sparse kernel compiled for its fields alignment (K_ALIGN) against the kernel of before
# (build/kernels-at/before-align/, copied over kernels/ on the GPU machine for the second half: run it there only),
# Box-2D1R FP16 at t = 4 (where K_ALIGN lost 0.80x) and t = 6 (where it gained 1.18x).  Writes $OUT/ncu/.
set -u
out=$OUT/ncu; mkdir -p $out
metrics="--metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,smsp__inst_executed_op_global_ld.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active"
prof() {
  timeout 120 ncu --clock-control none -k "regex:sptc_stream" --launch-skip 2 --launch-count 1 $metrics \
    python benchmarks/profile_kernel.py sparse_tensor_core Box-2D1R $2 half > $out/ncu-$1-t$2.txt 2>&1
  echo "$1 t=$2 | $(grep -m1 GStencils $out/ncu-$1-t$2.txt | cut -c1-20) | $(grep -E 'inst_executed|pipe_tensor|issue_active|stalled|dram__|hit_rate|registers|warps_active' $out/ncu-$1-t$2.txt | awk '{print $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr '\n' ';')"
}
for t in 4 6; do prof now $t; done
cp build/kernels-at/before-align/sparse_tensor_cores.cu kernels/sparse_tensor_cores.cu
for t in 4 6; do prof before $t; done
