#!/usr/bin/env bash
# The dense Tensor Core kernel's 3D slices staged in shared memory with 2, 4 (or 8) warps per block, beside each
# configuration's default in one run (issue 21, target 4; ``tune_gpu_kernels.py --only tc-stages-3d-warps``; what
# the refined model said first: benchmarks/ask_tc_stages_3d_warps.py), then Nsight Compute on Star-3D3R TF32 x1 at its
# default and staged (4 warps, 3 stages).
#   bash benchmarks/gpu_session_tc_stages_3d_warps.sh OUT_DIR
# Writes gpu-tests.log, scan/tuning.csv, scan/summary.md, logs.txt and ncu.txt (with the caller's session.log, 6 files:
# the device tool returns 8); prints one line per profile and the scan's ratios last.
set -u
out=${1:?output folder}
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "stages" > "$out/gpu-tests.log" 2>&1
echo "gpu tests rc $?: $(tail -1 "$out/gpu-tests.log")"
python benchmarks/tune_gpu_kernels.py --only tc-stages-3d-warps --repeats 5 --out "$out/scan" > "$out/logs.txt" 2>&1
echo "scan rc $?: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/logs.txt") incorrect"
python benchmarks/summarize_knob_scan.py "$out/scan/tuning.csv" > "$out/scan/summary.md" 2>&1
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
prof() {  # label stencil fuse dtype knobs
  local label=$1; shift
  timeout 120 ncu --clock-control none -k "regex:tc_stream" --launch-skip 2 --launch-count 1 $sections \
      --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      python benchmarks/profile_kernel.py tensor_core "$1" "$2" "$3" "512x512x512" "$4" > "$out/ncu-$label.txt" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-40) | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'hmma_cycles' "$out/ncu-$label.txt" | tr -s ' ')"
  { echo "== ncu-$label"; cat "$out/ncu-$label.txt"; } >> "$out/ncu.txt" && rm "$out/ncu-$label.txt"
}
base='"weights_shared": true, "prefetch": 0, "l2_prefetch": 0, "min_blocks": 1, "inner_rows": 4'
prof Star-3D3R-float-t1-default Star-3D3R 1 float '{}'
prof Star-3D3R-float-t1-w4s3 Star-3D3R 1 float "{$base, \"warps\": 4, \"stages\": 3}"
python - "$out/scan/tuning.csv" <<'PY'
import ast, csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
print(f"{'stencil':9} {'dtype':6} {'t':>2} {'default':>8}  staged over the default, warps x stages")
for key, b in base.items():
    cells = []
    for r in rows:
        if (r["stencil"], r["dtype"], r["fuse"]) == key and r["options"] != "{}":
            kn = ast.literal_eval(r["options"])
            cells.append(f"w{kn['warps']}s{kn['stages']} {float(r['gstencils']) / b:.3f}")
    print(f"{key[0]:9} {key[1]:6} {key[2]:>2} {b:8.1f}  " + " ".join(cells))
PY
