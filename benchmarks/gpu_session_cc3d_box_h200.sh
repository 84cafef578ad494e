#!/usr/bin/env bash
# Box-3D1R's radius-1 3D CUDA-core tiles measured again on the H200 (issue 21, target 4; cc3d_radius1 of
# kernels/defaults.yaml was measured on an H100, and Star-3D1R's tiles ran the box faster at some depths).  One run:
#   1. tune_gpu_kernels.py --only cc3d-box-h200: Box-3D1R FP64/FP32/FP16 t = 1-7, the default and each candidate tile
#      (every run checked on a small grid against the float64 reference first);
#   2. the pick per storage type and depth (Box-3D1R's fastest where it beat the default by over 2 %), timed on the
#      held-out edge-corner-3d (21 points) and box-25-3d (25) beside their defaults;
#   3. Nsight Compute on Box-3D1R FP16 x4 (36 % of its own roofline in the corpus) at its default.
#   bash benchmarks/gpu_session_cc3d_box_h200.sh OUT_DIR
# Writes scan/tuning.csv, heldout/tuning.csv, logs.txt, ncu.txt, gpu.txt (with the caller's session.log, 6 files);
# prints the tables last.
set -u
out=${1:?output folder}
mkdir -p "$out/scan" "$out/heldout"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
cat "$out/gpu.txt"
SECONDS=0
timeout 330 python benchmarks/tune_gpu_kernels.py --only cc3d-box-h200 --sweeps 4 --repeats 5 --out "$out/scan" > "$out/logs.txt" 2>&1
echo "scan rc $? after ${SECONDS}s: $(($(wc -l < "$out/scan/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/logs.txt") incorrect"
CC3D_BOX_TABLE=$out/scan/tuning.csv timeout 150 python benchmarks/tune_gpu_kernels.py --only cc3d-box-h200-heldout \
    --sweeps 4 --repeats 5 --out "$out/heldout" >> "$out/logs.txt" 2>&1
echo "heldout rc $? after ${SECONDS}s: $(($(wc -l < "$out/heldout/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/logs.txt") incorrect"
timeout 100 ncu --clock-control none -k "regex:cc_stream3d" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section MemoryWorkloadAnalysis \
    --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio \
    python benchmarks/profile_kernel.py cuda_core Box-3D1R 4 half 512x512x512 '{}' > "$out/ncu.txt" 2>&1
echo "ncu rc $? after ${SECONDS}s: $(grep -m1 -E 'Achieved Occupancy' "$out/ncu.txt" | tr -s ' ') | $(grep -m1 -E 'Issue Slots Busy|Issued Ipc Active' "$out/ncu.txt" | tr -s ' ') | $(grep -m1 -E 'Registers Per' "$out/ncu.txt" | tr -s ' ')"
python -c "import sys; from benchmarks.tune_gpu_kernels import print_cc3d_tile_tables as p; p(*sys.argv[1:])" \
    "$out/scan/tuning.csv" "$out/heldout/tuning.csv" Box-3D1R
