#!/usr/bin/env bash
# Kernel scans of 2026-11-26 (evening), one call each (tune_gpu_kernels.py --only $SCAN, default sptc2d): the 2D
# Sparse Tensor Core kernel with x tiles per warp (sptc2d, sptc2d-grid, sptc2d-shape) and the side-by-side runs of
# older kernel files (the `source` option: the sparse file of 0496040, the CUDA-core files of 413caf3, 53fc223,
# 5308c1a, 4230aa8 and 5e8cafb for cc-ab, cc-bisect, cc-fix), written to build/kernels-at/ by --prepare on the
# machine that has the git history.  NCU=1 adds Nsight Compute on four 2D sparse defaults, NCU3D=1 on three 3D ones.
#   bash benchmarks/gpu_session_sptc2d.sh OUT_DIR          (on the GPU machine; build/kernels-at carried)
#   bash benchmarks/gpu_session_sptc2d.sh --prepare        (here: write build/kernels-at/COMMIT/)
set -u
if [ "${1:-}" = "--prepare" ]; then
  for cf in 0496040:sparse_tensor_cores.cu 0496040:l2_prefetch.cuh 413caf3:cuda_cores_2d.cu 413caf3:cuda_cores_3d.cu \
            53fc223:cuda_cores_2d.cu 53fc223:cuda_cores_3d.cu 5308c1a:cuda_cores_2d.cu 5308c1a:cuda_cores_3d.cu \
            5308c1a:cc_values.cuh 4230aa8:cuda_cores_2d.cu 4230aa8:cuda_cores_3d.cu 4230aa8:cc_values.cuh \
            5e8cafb:cuda_cores_2d.cu 5e8cafb:cuda_cores_3d.cu 5e8cafb:cc_values.cuh; do
    c=${cf%%:*} f=${cf#*:}
    mkdir -p "build/kernels-at/$c"
    git show "$c:kernels/$f" > "build/kernels-at/$c/$f"
  done
  exit 0
fi
out=${1:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
timeout ${SCAN_S:-470} python benchmarks/tune_gpu_kernels.py --only ${SCAN:-sptc2d} --out "$out" > "$out/tune.log" 2>&1
echo "scan rc=$?"
if [ -n "${NCU:-}" ]; then  # Nsight Compute on the 2D defaults: what binds them now
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
  for cfg in "Box-2D1R 7 half" "Box-2D1R 4 half" "Box-2D1R 4 float" "Box-2D1R 1 half"; do
    set -- $cfg
    timeout 120 ncu --clock-control none -k regex:sptc_stream --launch-skip 2 --launch-count 1 $sections \
        python benchmarks/profile_kernel.py sparse_tensor_core $1 $2 $3 10240x10240 > "$out/ncu-$1-$3-t$2.txt" 2>&1
    echo "ncu $cfg rc=$? $(grep -m1 'GStencils' "$out/ncu-$1-$3-t$2.txt")"
  done
fi
if [ -n "${NCU3D:-}" ]; then  # the 3D sparse kernel where the refined model misses it most (few lines; deep)
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
  for cfg in "Star-3D3R 1 half" "Box-3D1R 4 half" "Box-3D1R 2 half"; do
    set -- $cfg
    timeout 120 ncu --clock-control none -k regex:sptc_stream --launch-skip 2 --launch-count 1 $sections \
        python benchmarks/profile_kernel.py sparse_tensor_core $1 $2 $3 512x512x512 > "$out/ncu-$1-$3-t$2.txt" 2>&1
    echo "ncu $cfg rc=$? $(grep -m1 'GStencils' "$out/ncu-$1-$3-t$2.txt")"
  done
fi
python - "$out/tuning.csv" <<'PY'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
groups = defaultdict(list)
for r in rows:
    groups[(r["stencil"], r["dtype"], r["unit"], r["fuse"])].append(r)
print("config | default | best knobs | best | ratio | all correct")
for key, rs in groups.items():
    base = [float(r["gstencils"]) for r in rs if r["options"] == "{}"]
    b = base[0] if base else float("nan")
    best = max(rs, key=lambda r: float(r["gstencils"]))
    ok = all(r["correct"] == "True" for r in rs)
    print(f"{' '.join(key)} | {b:.0f} | {best['options']} | {float(best['gstencils']):.0f} | "
          f"{float(best['gstencils']) / b:.2f} | {ok}")
for r in rows:
    if "source" in r["options"] or r["unit"] == "tensor_core" or (r["options"] == "{}" and r["stencil"] != "Box-2D1R"
                                                                   and r["stencil"][:3] != "Box"):
        print(r["stencil"], r["dtype"], r["unit"], r["fuse"], r["options"], f"{float(r['gstencils']):.0f}")
PY
