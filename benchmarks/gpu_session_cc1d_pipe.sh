#!/usr/bin/env bash
# The 1D CUDA-core tile kernel with its next tile copied in while this one is computed (K_PIPE, prefetch 2):
# its GPU tests, the cc1d-pipe scan beside the defaults (tune_gpu_kernels.py --only cc1d-pipe, every configuration
# checked on a small grid first), and Nsight Compute's speed of light on Box-1D1R FP16 and FP32 x16 both ways.
#   bash benchmarks/gpu_session_cc1d_pipe.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 150 python -m pytest -q -m gpu tests/test_gpu.py -k "cuda_core_1d_tiles" > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log"
timeout 330 python "$here/tune_gpu_kernels.py" --out "$out" --only cc1d-pipe > "$out/tune.log" 2>&1
python "$here/summarize_knob_scan.py" "$out/tuning.csv" > "$out/summary.md"
for cfg in "half {}" "half {\"prefetch\":2}" "float {}" "float {\"prefetch\":2}"; do
  set -- $cfg
  label="Box-1D1R-$1-x16-$( [ "$2" = "{}" ] && echo default || echo pipe )"
  timeout 60 ncu --clock-control none -k "regex:cc_tile1d" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats \
      python "$here/profile_kernel.py" cuda_core Box-1D1R 16 "$1" 134217728 "$2" > "$out/ncu/ncu-$label.txt" 2>&1
  echo "$label | $(grep -m1 'GStencils' "$out/ncu/ncu-$label.txt" | cut -c1-160) | $(grep -m1 -E '^ +Duration' "$out/ncu/ncu-$label.txt" | tr -s ' ') | $(grep -m1 -E 'DRAM Throughput' "$out/ncu/ncu-$label.txt" | tr -s ' ')"
done
python - "$out/tuning.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["stencil"], r["dtype"], int(r["fuse"])), {})[r["options"]] = r
print("stencil dtype t | default | prefetch 2 | ratio | correct")
for k, v in by.items():
    a, b = v.get("{}"), v.get("{'prefetch': 2}")
    if a and b:
        print(f"{k[0]} {k[1]} {k[2]} | {float(a['gstencils']):.0f} | {float(b['gstencils']):.0f} | "
              f"{float(b['gstencils']) / float(a['gstencils']):.3f} | {a['correct']} {b['correct']}")
PY
