#!/usr/bin/env bash
# Issue 21, target 6, asked of the hardware before any kernel is written:
#   1. what wgmma / wgmma.sp deliver at N = 8 (the stencil kernels' tile) and up to N = 256, beside the
#      mma.sync / mma.sp shapes the kernels issue today, same process (benchmarks/wgmma_rates.py);
#   2. whether the dense Tensor Core kernel at its compute-bound depths is bound by the mma.sync issue rate
#      (Nsight Compute: tensor pipe, shared/L1 pipes, issue slots, stalls).
#   3. (CALIBRATE=1) 'tcadvisor calibrate' itself, which now times wgmma at N = 8 and 256 too.
#   bash benchmarks/gpu_session_wgmma.sh OUT_DIR   (everything also packed into OUT_DIR/all.tgz)
set -u
out=${1:?output folder}
mkdir -p "$out/wgmma" "$out/ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
timeout 330 python benchmarks/wgmma_rates.py --out "$out/wgmma" > "$out/wgmma/run.log" 2>&1
echo "wgmma_rates rc=$?"
if [ "${CALIBRATE:-0}" = 1 ]; then
  timeout 240 python -m tcadvisor calibrate -o "$out/calibrate.yaml" > "$out/calibrate.log" 2>&1
  echo "calibrate rc=$?"; grep -i "wgmma" "$out/calibrate.log" | head -20
fi
ncu --query-metrics --chip gh100 > "$out/ncu/query-metrics.txt" 2>&1
metrics=""
for m in sm__pipe_tensor_op_hmma_cycles_active sm__pipe_tensor_op_gmma_cycles_active \
         sm__inst_executed_pipe_tensor_op_hmma sm__inst_executed_pipe_tensor_op_gmma \
         sm__pipe_shared_cycles_active l1tex__data_pipe_lsu_wavefronts_mem_shared sm__inst_executed_pipe_lsu \
         l1tex__throughput smsp__issue_active sm__warps_active; do
  if grep -qw "$m" "$out/ncu/query-metrics.txt"; then metrics="$metrics,$m.avg.pct_of_peak_sustained_active"; fi
done
metrics=${metrics#,}
echo "metrics: $metrics"
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
prof() {  # label unit stencil fuse dtype grid
  local label=$1; shift
  timeout 90 ncu --clock-control none -k regex:tc_stream --launch-skip 2 --launch-count 1 $sections \
      ${metrics:+--metrics $metrics} python benchmarks/profile_kernel.py "$@" > "$out/ncu/ncu-$label.txt" 2>&1
  echo "$label rc=$? $(grep -m1 'GStencils' "$out/ncu/ncu-$label.txt")"
}
prof dense-Box-2D1R-half-t7 tensor_core Box-2D1R 7 half 10240x10240
prof dense-Box-2D1R-half-t4 tensor_core Box-2D1R 4 half 10240x10240
prof dense-Box-2D1R-float-t7 tensor_core Box-2D1R 7 float 10240x10240
prof dense-Box-3D1R-half-t3 tensor_core Box-3D1R 3 half 512x512x512
for f in "$out"/ncu/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E "GStencils|Compute \(SM\) Throughput|L1/TEX Cache Throughput|DRAM Throughput|pct_of_peak|Achieved Occupancy|Registers Per" "$f" | head -16
done
tail -60 "$out/wgmma/run.log"
(cd "$out" && tar czf all.tgz --exclude=all.tgz .)
