#!/usr/bin/env bash
# Nsight Compute's warp-stall samples per SASS instruction for the 1D CUDA-core tile at its default x16 plans, where
# the FP16/BF16 pairs stay below 60 % of their FMA rate (issue 21, target 4): Box-1D2R and Box-1D1R in FP16, and
# Box-1D1R in FP32 beside them (0.85 instructions issued per scheduler and cycle against the pairs' 0.67).
#   bash benchmarks/gpu_session_cc1d_stalls.sh OUT_DIR
# Writes, per configuration, ncu-LABEL.txt (sections, then every stall metric of the raw page) and sass-LABEL.csv
# (the source page: SASS with its stall samples); the reports and run logs stay in a scratch folder (the device tool
# returns at most 8 files).
set -u
final=${1:?output folder}
mkdir -p "$final"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$final/gpu.txt"
out=$(mktemp -d)
source "$(dirname "$0")/ncu_sass_stalls.sh"
sections="$sections --section ComputeWorkloadAnalysis"
for cfg in "Box-1D2R-half Box-1D2R half" "Box-1D1R-half Box-1D1R half" "Box-1D1R-float Box-1D1R float"; do
  set -- $cfg
  prof "$1-x16" cc_tile1d cuda_core "$2" 16 "$3" 134217728
  ncu -i "$out/rep-$1-x16.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
names, units, vals = rows[0], rows[1], rows[2]
for n, u, v in zip(names, units, vals):
    if "stall" in n or "issue_active" in n or "inst_executed_pipe" in n or "warps_active" in n:
        print(f"{n:90s} {u:10s} {v}")' > "$out/raw.txt"
  { cat "$out/ncu-$1-x16.txt"; echo; echo "----- raw stall and pipe metrics"; cat "$out/raw.txt"; } > "$final/ncu-$1-x16.txt"
  cp "$out/sass-$1-x16.csv" "$final/"
done
