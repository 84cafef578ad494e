#!/usr/bin/env bash
# After a CUDA-core default changed: benchmarks/gpu_session_corpus_and_cc_tests.sh (the H200 corpus recorded again,
# the CUDA-core and apply GPU tests), then Nsight Compute (speed of light, warp states, instruction mix) on one sweep
# of the 1D tile kernel at its defaults, Box-1D1R x16 in FP16 and FP32.  Under OUT.
#   bash benchmarks/gpu_session_corpus_cc_ncu.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
bash "$here/gpu_session_corpus_and_cc_tests.sh" "$out"
for dtype in half float; do
  f="$out/ncu-Box-1D1R-$dtype-x16.txt"
  timeout 90 ncu --clock-control none -k "regex:cc_tile1d" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
      python "$here/profile_kernel.py" cuda_core Box-1D1R 16 "$dtype" 134217728 > "$f" 2>&1
  echo "$dtype | $(grep -m1 'GStencils' "$f" | cut -c1-150) | $(grep -m1 -E '^ +Duration' "$f" | tr -s ' ') | $(grep -m1 -E 'Compute \(SM\) Throughput' "$f" | tr -s ' ')"
done
