#!/usr/bin/env bash
# Nsight Compute's warp-stall samples per SASS instruction for the Tensor Core kernels at the depths where they
# run furthest below their own roofline (issue 21, targets 4 and 5): which instruction each warp waits on.
#   bash benchmarks/gpu_session_sass_stalls.sh OUT_DIR
# Writes, per configuration, ncu-LABEL.txt (sections) and sass-LABEL.csv (the source page, SASS, every metric).
set -u
out=${1:?output folder}
mkdir -p "$out"
sections="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --section SchedulerStats --section InstructionStats"
prof() {  # label kernel-regex unit stencil fuse dtype grid [knobs-json]
  local label=$1 kname=$2; shift 2
  timeout 150 ncu --clock-control none -k "regex:$kname" --launch-skip 2 --launch-count 1 $sections \
      -o "$out/rep-$label" -f python benchmarks/profile_kernel.py "$@" > "$out/run-$label.log" 2>&1
  ncu -i "$out/rep-$label.ncu-rep" $sections > "$out/ncu-$label.txt" 2>&1
  ncu -i "$out/rep-$label.ncu-rep" --page source --csv --print-source sass > "$out/sass-$label.csv" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/run-$label.log")"
}
prof sparse-Box-2D1R-half-t7 sptc_stream sparse_tensor_core Box-2D1R 7 half 10240x10240
prof dense-Box-2D1R-half-t8 tc_stream tensor_core Box-2D1R 8 half 10240x10240
prof sparse-Box-3D1R-half-t2 sptc_stream sparse_tensor_core Box-3D1R 2 half 512x512x512
prof sparse-Box-2D1R-half-t4 sptc_stream sparse_tensor_core Box-2D1R 4 half 10240x10240
