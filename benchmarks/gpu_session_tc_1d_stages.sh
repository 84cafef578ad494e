#!/usr/bin/env bash
# The dense Tensor Core kernel's 1D strips staged in shared memory by cp.async (``stages``, K_STAGES; issue 21,
# target 4): the scan beside each configuration's default in one run, then Nsight Compute on Box-1D3R FP16 and
# FP64 x16 at the default and with 3 stages (what the refined model said first: tc-1d-stages/ask-model.csv).
#   bash benchmarks/gpu_session_tc_1d_stages.sh OUT_DIR
# Writes scan/tuning.csv, scan/summary.md, scan.log and ncu-LABEL.txt, and prints one line per profile.
set -u
out=${1:?output folder}
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python benchmarks/tune_gpu_kernels.py --only tc-1d-stages --repeats 5 --out "$out/scan" > "$out/scan.log" 2>&1
echo "scan rc $?: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/scan.log") incorrect"
python benchmarks/summarize_knob_scan.py "$out/scan/tuning.csv" > "$out/scan/summary.md"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
prof() {  # label stencil fuse dtype knobs
  local label=$1; shift
  timeout 150 ncu --clock-control none -k "regex:tc_stream" --launch-skip 2 --launch-count 1 $sections \
      --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum \
      python benchmarks/profile_kernel.py tensor_core "$1" "$2" "$3" "" "$4" > "$out/ncu-$label.txt" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-40) | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'L1/TEX Cache Throughput' "$out/ncu-$label.txt" | tr -s ' ')"
}
prof Box-1D3R-half-t16-default Box-1D3R 16 half '{}'
prof Box-1D3R-half-t16-stages3 Box-1D3R 16 half '{"prefetch": 0, "stages": 3}'
prof Box-1D3R-double-t16-default Box-1D3R 16 double '{}'
prof Box-1D3R-double-t16-stages3 Box-1D3R 16 double '{"prefetch": 0, "stages": 3}'
python - "$out/scan/tuning.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
print(f"{'stencil':9} {'dtype':8} {'t':>3} {'default':>9}  stages 2/3/4 over the default")
for key, b in base.items():
    ratios = [float(r["gstencils"]) / b for r in rows if (r["stencil"], r["dtype"], r["fuse"]) == key and r["options"] != "{}"]
    print(f"{key[0]:9} {key[1]:8} {key[2]:>3} {b:9.1f}  " + " ".join(f"{x:.3f}" for x in ratios))
PY
