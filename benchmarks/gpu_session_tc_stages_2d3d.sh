#!/usr/bin/env bash
# The dense Tensor Core kernel's 2D rows and 3D slices staged in shared memory by cp.async (``stages``, K_STAGES;
# issue 21, target 4): the GPU tests of the staged kernel, the scan beside each configuration's default in one run,
# then Nsight Compute on Box-2D2R FP16 x2 (4 stages) and Box-2D1R TF32 x4 (2 stages) beside their defaults (what the refined
# model said first: tc-stages-2d3d/ask-model.csv, benchmarks/ask_tc_stages_2d3d.py).
#   bash benchmarks/gpu_session_tc_stages_2d3d.sh OUT_DIR
# (with build/kernels-at/1c6b82c carried: today's stages beside that commit's, lean/).
# Writes gpu-tests.log, scan/ and lean/ (tuning.csv, summary.md), their logs in logs.txt and the four profiles in
# ncu.txt -- 8 files with the caller's session.log, what the device tool returns (session 51 wrote 12 and lost both
# tuning.csv); prints one line per profile and the scan's ratios last.
set -u
out=${1:?output folder}
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "stages" > "$out/gpu-tests.log" 2>&1
echo "gpu tests rc $?: $(tail -1 "$out/gpu-tests.log")"
python benchmarks/tune_gpu_kernels.py --only tc-stages-2d3d --repeats 5 --out "$out/scan" > "$out/scan.log" 2>&1
echo "scan rc $?: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/scan.log") incorrect"
mv "$out/scan.log" "$out/logs.txt"
python benchmarks/summarize_knob_scan.py "$out/scan/tuning.csv" > "$out/scan/summary.md"
# today's staged kernel beside the file of 1c6b82c (build/kernels-at/1c6b82c, carried), same plans, alternating
mkdir -p "$out/lean"
python benchmarks/tune_gpu_kernels.py --only tc-stages-lean --repeats 5 --out "$out/lean" > "$out/lean.log" 2>&1
echo "lean rc $?: $(($(wc -l < "$out/lean/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/lean.log") incorrect"
{ echo "== lean.log"; cat "$out/lean.log"; } >> "$out/logs.txt" && rm "$out/lean.log"
python benchmarks/summarize_source_ab.py "$out/lean/tuning.csv" > "$out/lean/summary.md" 2>&1; tail -15 "$out/lean/summary.md"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
prof() {  # label stencil fuse dtype knobs
  local label=$1; shift
  timeout 120 ncu --clock-control none -k "regex:tc_stream" --launch-skip 2 --launch-count 1 $sections \
      --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum \
      python benchmarks/profile_kernel.py tensor_core "$1" "$2" "$3" "" "$4" > "$out/ncu-$label.txt" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/ncu-$label.txt" | cut -c1-40) | $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ')"
  { echo "== ncu-$label"; cat "$out/ncu-$label.txt"; } >> "$out/ncu.txt" && rm "$out/ncu-$label.txt"
}
# the scan's own variants: the default's knobs, and the same with 4 stages
base='"bregs": true, "weights_shared": false, "warps": 4, "l2_prefetch": 2, "min_blocks": 1, "x_tiles": 4'
prof Box-2D2R-half-t2-default Box-2D2R 2 half '{}'
prof Box-2D2R-half-t2-stages4 Box-2D2R 2 half "{$base, \"prefetch\": 0, \"stages\": 4}"
prof Box-2D1R-float-t4-default Box-2D1R 4 float '{}'
prof Box-2D1R-float-t4-stages2 Box-2D1R 4 float "{$base, \"prefetch\": 0, \"stages\": 2}"
python - "$out/scan/tuning.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["stencil"], r["dtype"], r["fuse"]): float(r["gstencils"]) for r in rows if r["options"] == "{}"}
print(f"{'stencil':9} {'dtype':8} {'t':>3} {'default':>9}  stages 2/3/4 over the default (*: 4 without the L2 prefetch)")
for key, b in base.items():
    ratios = [(float(r["gstencils"]) / b, "l2_prefetch': 0, 'min_blocks'" in r["options"] and "stages': 4" in r["options"])
              for r in rows if (r["stencil"], r["dtype"], r["fuse"]) == key and r["options"] != "{}"]
    print(f"{key[0]:9} {key[1]:8} {key[2]:>3} {b:9.1f}  " + " ".join(f"{x:.3f}" + ("*" if l2 else "") for x, l2 in ratios))
PY
