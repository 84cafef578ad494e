#!/usr/bin/env bash
# Nsight Compute on a list of bundled-kernel configurations, one report file (issue 11's evidence: what limits
# each kernel at its measured best).
#
#   OUT=/some/dir TARGETS=path/to/targets.txt bash benchmarks/gpu_session_profiles.sh
#
# TARGETS: one configuration per line, "unit stencil t dtype [json options]", e.g.
#   cuda_core Box-3D1R 3 double {"v":2,"cols":64,"rows":24,"trap":true,"prefetch":2}
# Lines starting with # are skipped.  Writes $OUT/ncu-profiles.txt (every report, each headed by its target line)
# and prints the headline metrics per target.
set -u
OUT=${OUT:?set OUT to the directory for the results}
TARGETS=${TARGETS:?set TARGETS to the list of configurations}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
. "$(dirname "$0")/kernel_function.sh"
REPORT=$OUT/ncu-profiles.txt
: > "$REPORT"
grep -v '^\s*#' "$TARGETS" | while read -r unit stencil t dtype opts; do
  [ -n "$unit" ] || continue
  kernel=$(kernel_function "$unit" "$stencil") || { echo "unknown unit $unit" >> "$REPORT"; continue; }
  echo "######## $unit $stencil t=$t $dtype ${opts:-{\}}" >> "$REPORT"
  # the sections (always valid), then stall reasons and shared-memory traffic (a second pass, so that a metric
  # name this ncu does not know costs only that pass)
  timeout 120 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section LaunchStats \
      --section SchedulerStats --section InstructionStats \
      $PY benchmarks/profile_kernel.py "$unit" "$stencil" "$t" "$dtype" "" ${opts:+"$opts"} >> "$REPORT" 2>&1
  m=smsp__average_warps_issue_stalled
  timeout 90 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
      --metrics ${m}_barrier_per_issue_active.ratio,${m}_short_scoreboard_per_issue_active.ratio,${m}_long_scoreboard_per_issue_active.ratio,${m}_mio_throttle_per_issue_active.ratio,${m}_math_pipe_throttle_per_issue_active.ratio,${m}_wait_per_issue_active.ratio,${m}_not_selected_per_issue_active.ratio,${m}_selected_per_issue_active.ratio,${m}_dispatch_stall_per_issue_active.ratio,${m}_lg_throttle_per_issue_active.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__cycles_active.avg \
      $PY benchmarks/profile_kernel.py "$unit" "$stencil" "$t" "$dtype" "" ${opts:+"$opts"} >> "$REPORT" 2>&1
done
# headline per target
awk '/^########/ {print} /GStencils\/s \|/ {print "   " $0}
     /^ +(Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Issue Slots Busy) / {print}
     /is the highest-utilized pipeline/ {print}
     /(issue_stalled_(barrier|short_scoreboard|long_scoreboard|mio_throttle|math_pipe_throttle|wait)_per|wavefronts_mem_shared)/ {print}' "$REPORT"
