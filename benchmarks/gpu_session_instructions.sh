#!/usr/bin/env bash
# Instructions executed per sweep of bundled-kernel configurations (Nsight Compute, one pass of plain counters),
# for the refined model's instruction-issue term on Tensor Cores (docs/model.md, "Instructions per MMA").
#
#   OUT=/some/dir TARGETS=benchmarks/instruction-targets.txt bash benchmarks/gpu_session_instructions.sh
#
# TARGETS: "unit stencil t dtype" per line.  Writes $OUT/instructions.txt (every ncu report, headed by its target)
# and prints one line per target: instructions, issue-active and warps-active per cycle, the sweep's cycles.
set -u
OUT=${OUT:?set OUT}
TARGETS=${TARGETS:?set TARGETS}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
. "$(dirname "$0")/kernel_function.sh"
REPORT=$OUT/instructions.txt
: > "$REPORT"
grep -v '^\s*#' "$TARGETS" | while read -r unit stencil t dtype; do
  [ -n "$unit" ] || continue
  kernel=$(kernel_function "$unit" "$stencil") || { echo "unknown unit $unit" >> "$REPORT"; continue; }
  echo "######## $unit $stencil $t $dtype" >> "$REPORT"
  timeout 60 ncu --clock-control none -k "regex:$kernel" --launch-skip 2 --launch-count 1 \
      --metrics smsp__inst_executed.sum,sm__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,sm__cycles_elapsed.avg \
      $PY benchmarks/profile_kernel.py "$unit" "$stencil" "$t" "$dtype" >> "$REPORT" 2>&1
done
awk '/^########/ {printf "%s", $0} /GStencils\/s \|/ {printf " | %s", $1} /smsp__inst_executed.sum|warps_active|issue_active|cycles_elapsed/ {printf " | %s %s", $1, $NF} /^==PROF== Disconnected/ {print ""}' "$REPORT"
