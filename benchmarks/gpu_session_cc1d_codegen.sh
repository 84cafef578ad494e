#!/usr/bin/env bash
# The 1D CUDA-core tile kernel's code generation (vector stores as one instruction, the straddling vectors out of
# line, staging slots without a division): the 1D tile GPU tests with today's file, the scan `cc1d-codegen` (today
# beside build/kernels-at/12c6720/cuda_cores_1d.cu, which must be there: `mkdir -p build/kernels-at/12c6720 && git
# show 12c6720:kernels/cuda_cores_1d.cu > build/kernels-at/12c6720/cuda_cores_1d.cu`, carried to the GPU machine),
# then Nsight Compute (speed of light, warp states, instructions, occupancy) on one sweep of Box-1D1R x16 in FP16
# and FP32 with today's file (those of 12c6720 are in validation/results/h200-2026-12-01/corpus-session-2/).
#   bash benchmarks/gpu_session_cc1d_codegen.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
test -f build/kernels-at/12c6720/cuda_cores_1d.cu || { echo "build/kernels-at/12c6720/cuda_cores_1d.cu is missing"; exit 2; }
mkdir -p "$out/scan"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 90 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "cuda_core_1d_tiles" > "$out/gpu-tests.log" 2>&1
tail -1 "$out/gpu-tests.log"
timeout 380 python "$here/tune_gpu_kernels.py" --out "$out/scan" --only cc1d-codegen > "$out/scan/tune.log" 2>&1
python "$here/summarize_source_ab.py" "$out/scan/tuning.csv" > "$out/scan/summary.md"
for dtype in half float; do
  f="$out/ncu-Box-1D1R-$dtype-x16.txt"
  timeout 60 ncu --clock-control none -k "regex:cc_tile1d" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
      python "$here/profile_kernel.py" cuda_core Box-1D1R 16 "$dtype" 134217728 > "$f" 2>&1
  echo "$dtype | $(grep -m1 'GStencils' "$f" | cut -c1-150) | $(grep -m1 -E '^ +Duration' "$f" | tr -s ' ') | $(grep -m1 -E 'Compute \(SM\) Throughput' "$f" | tr -s ' ') | $(grep -m1 -E '^ +Issued Instructions ' "$f" | tr -s ' ')"
done
cat "$out/scan/summary.md"
