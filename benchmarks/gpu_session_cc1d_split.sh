#!/usr/bin/env bash
# The 1D CUDA-core tile kernel with each step's edge exchange split into an mbarrier's arrive and wait (K_SPLIT; the
# interior points are updated between them): the 1D tile GPU tests with today's file, the scan `cc1d-split` (today
# beside build/kernels-at/16b1a98/cuda_cores_1d.cu, one __syncthreads per step, which must be there: `mkdir -p
# build/kernels-at/16b1a98 && git show 16b1a98:kernels/cuda_cores_1d.cu > build/kernels-at/16b1a98/cuda_cores_1d.cu`,
# carried to the GPU machine), then Nsight Compute (speed of light, warp states, instructions, occupancy) on one sweep
# of Box-1D2R FP16 x16 and Box-1D1R FP32 x16 with both files, into one ncu.txt (the device tool returns 8 files).
#   bash benchmarks/gpu_session_cc1d_split.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
test -f build/kernels-at/16b1a98/cuda_cores_1d.cu || { echo "build/kernels-at/16b1a98/cuda_cores_1d.cu is missing"; exit 2; }
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 90 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "cuda_core_1d_tiles" > "$out/gpu-tests.log" 2>&1
tail -1 "$out/gpu-tests.log"
timeout 330 python "$here/tune_gpu_kernels.py" --out "$out/scan" --only cc1d-split > "$out/scan/tune.log" 2>&1
python "$here/summarize_source_ab.py" "$out/scan/tuning.csv" > "$out/scan/summary.md"
: > "$out/ncu.txt"
for cfg in "Box-1D2R half" "Box-1D1R float"; do
  set -- $cfg
  for src in "" 16b1a98; do
    tmp=$(mktemp)
    PROFILE_SOURCE=$src timeout 60 ncu --clock-control none -k "regex:cc_tile1d" --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
        python "$here/profile_kernel.py" cuda_core "$1" 16 "$2" 134217728 > "$tmp" 2>&1
    { echo "===== $1 $2 x16, kernel file: ${src:-today (K_SPLIT)}"; cat "$tmp"; } >> "$out/ncu.txt"
    echo "$1 $2 ${src:-today} | $(grep -m1 'GStencils' "$tmp" | cut -c1-150) | $(grep -m1 -E 'Compute \(SM\) Throughput' "$tmp" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$tmp" | tr -s ' ') | $(grep -m1 -E 'Stall Barrier|Achieved Active Warps' "$tmp" | tr -s ' ') | $(grep -m1 -E '^ +Issued Instructions ' "$tmp" | tr -s ' ')"
    rm -f "$tmp"
  done
done
cat "$out/scan/summary.md"
