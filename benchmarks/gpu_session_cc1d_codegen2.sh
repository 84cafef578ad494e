#!/usr/bin/env bash
# The 1D CUDA-core tile kernel with its straddling vectors inline again (conditions in domain points): the 1D tile
# GPU tests, the scan `cc1d-codegen2` (today beside build/kernels-at/d52938a/ and build/kernels-at/12c6720/, each
# cuda_cores_1d.cu from git: `git show COMMIT:kernels/cuda_cores_1d.cu > build/kernels-at/COMMIT/cuda_cores_1d.cu`,
# carried to the GPU machine), then `cc1d-points-final` (the wider tiles against the rule's at t = 4, 8, 10, 12, 16
# on today's file: the source of tile1d_deep).  Under OUT.
#   bash benchmarks/gpu_session_cc1d_codegen2.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
for c in d52938a 12c6720; do
  test -f "build/kernels-at/$c/cuda_cores_1d.cu" || { echo "build/kernels-at/$c/cuda_cores_1d.cu is missing"; exit 2; }
done
mkdir -p "$out/codegen2" "$out/points-final"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 60 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "cuda_core_1d_tiles" > "$out/gpu-tests.log" 2>&1
tail -1 "$out/gpu-tests.log"
timeout 200 python "$here/tune_gpu_kernels.py" --out "$out/codegen2" --only cc1d-codegen2 > "$out/codegen2/tune.log" 2>&1
timeout 200 python "$here/tune_gpu_kernels.py" --out "$out/points-final" --only cc1d-points-final > "$out/points-final/tune.log" 2>&1
python "$here/summarize_knob_scan.py" "$out/points-final/tuning.csv" > "$out/points-final/summary.md"
python "$here/summarize_source_ab.py" "$out/codegen2/tuning.csv" > "$out/codegen2/summary.md"
cat "$out/codegen2/summary.md"
python "$here/best_of_knob_scan.py" "$out/points-final/tuning.csv"
