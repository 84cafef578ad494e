#!/usr/bin/env bash
# The radius-1 3D CUDA-core tiles for stencils other than the 27-point box (issue 21, target 4; cc3d_radius1 of
# kernels/defaults.yaml was measured on Box-3D1R alone).  One run:
#   1. tune_gpu_kernels.py --only cc3d-nonbox: Star-3D1R FP64/FP32 t = 1-7, FP16 t = 1-6, the default and each
#      candidate tile (every run checked on a small grid against the float64 reference first);
#   2. the pick per storage type and depth (cc3d_nonbox_picks: Star-3D1R's fastest where it beat the default by
#      over 2 %), timed on the held-out diagonal-3d and face-edge-3d beside their defaults, and on Box-3D1R;
#   3. Nsight Compute on Star-3D1R FP32 x2 at the default and at its pick.
#   bash benchmarks/gpu_session_cc3d_nonbox.sh OUT_DIR
# Writes scan/tuning.csv, heldout/tuning.csv, logs.txt, ncu.txt (with the caller's session.log, 5 files); prints the
# tables last.
set -u
out=${1:?output folder}
mkdir -p "$out/scan" "$out/heldout"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
SECONDS=0
timeout 340 python benchmarks/tune_gpu_kernels.py --only cc3d-nonbox --sweeps 4 --repeats 5 --out "$out/scan" > "$out/logs.txt" 2>&1
echo "scan rc $? after ${SECONDS}s: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/logs.txt") incorrect"
CC3D_NONBOX_TABLE=$out/scan/tuning.csv timeout 150 python benchmarks/tune_gpu_kernels.py --only cc3d-nonbox-heldout \
    --sweeps 4 --repeats 5 --out "$out/heldout" >> "$out/logs.txt" 2>&1
echo "heldout rc $? after ${SECONDS}s: $(($(wc -l < "$out/heldout/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/logs.txt") incorrect"
pick=$(python - "$out/scan/tuning.csv" <<'PY'
import sys
from benchmarks.tune_gpu_kernels import cc3d_nonbox_picks, _cc3d_knobs
import json
p = cc3d_nonbox_picks(sys.argv[1]).get(("float", 2))
print(json.dumps(_cc3d_knobs(p)) if p else "{}")
PY
)
prof() {  # label knobs
  timeout 100 ncu --clock-control none -k "regex:cc_stream3d" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio \
      python benchmarks/profile_kernel.py cuda_core Star-3D1R 2 float 512x512x512 "$2" > "$out/ncu-$1.txt" 2>&1
  echo "$1 $(grep -m1 -E 'Achieved Occupancy' "$out/ncu-$1.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$1.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per' "$out/ncu-$1.txt" | tr -s ' ')"
  { echo "== ncu-$1 $2"; cat "$out/ncu-$1.txt"; } >> "$out/ncu.txt" && rm "$out/ncu-$1.txt"
}
prof star-float-t2-default '{}'
[ "$pick" != "{}" ] && prof star-float-t2-pick "$pick"
echo "after ${SECONDS}s"
python -c "import sys; from benchmarks.tune_gpu_kernels import print_cc3d_tile_tables as p; p(*sys.argv[1:])" \
    "$out/scan/tuning.csv" "$out/heldout/tuning.csv" Star-3D1R
