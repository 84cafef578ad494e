#!/usr/bin/env bash
# One device session for the 3D CUDA-core kernel's knobs (issue 11), prepared without a GPU:
#   1. the GPU tests of the knobs (odd grids, box and star, per-sweep checks) and of the default 3D kernel;
#   2. the scan benchmarks/plan_cc3d.py marked in validation/results/cc3d-plan-2026-11-23/candidates.csv
#      (each configuration checked on a small grid, then timed on 512^3, median of 5);
#   3. CuPy correlate on the same grid in the same run (the library a user would pick);
#   4. Nsight Compute on the measured best configuration per precision and on the default at that depth.
#
#   OUT=/some/dir bash benchmarks/gpu_session_cc3d.sh                 # all steps (about 15 minutes)
#   OUT=/some/dir PART=scan bash benchmarks/gpu_session_cc3d.sh       # step 2 alone (fits one 10-minute call)
#   OUT=/some/dir PART=check TUNING=path/to/tuning.csv bash benchmarks/gpu_session_cc3d.sh   # steps 1, 3, 4
# CANDIDATES=path/to/candidates.csv scans another plan_cc3d.py table (default: the 2026-11-23 one);
# DTYPE=double|float scans one storage type (the 2026-11-24 wide table takes two calls).
#
# Writes into $OUT: gpu.txt, gpu_tests.log, tune_cc3d.log, tuning.csv, baseline.log, profile-targets.txt,
# ncu-profiles.txt, profiles.log (8 files).
set -u
OUT=${OUT:?set OUT to the directory for the results}
PART=${PART:-all}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
TESTS=skipped
TUNE=skipped

nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,memory.total,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1 || true
if [ "$PART" != scan ]; then
  timeout 200 $PY -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -rfE \
      -k "cuda_core_3d_knobs or (matches_the_references and cuda_core)" > "$OUT/gpu_tests.log" 2>&1
  TESTS=$?
fi

if [ "$PART" != check ]; then
  timeout ${TUNE_S:-500} $PY benchmarks/tune_gpu_kernels.py --only cc3d --out "$OUT" --sweeps 4 --repeats 5 \
      ${CANDIDATES:+--candidates "$CANDIDATES"} ${DTYPE:+--dtype "$DTYPE"} \
      > "$OUT/tune_cc3d.log" 2>&1
  TUNE=$?
  TUNING=$OUT/tuning.csv
fi
[ "$PART" = scan ] && { grep -E "GSt/s|skip" "$OUT/tune_cc3d.log" | sed -e 's/ | .*//' | cut -c1-160; echo "scan exit $TUNE"; exit 0; }

timeout 90 $PY - > "$OUT/baseline.log" 2>&1 <<'EOF'
import numpy as np
from tcadvisor.gpu import baselines
from tcadvisor.gpu.backend import cupy
from tcadvisor.gpu.runner import default_weights
from tcadvisor.stencil import Stencil

cp = cupy()
st = Stencil.box(3, 1)
for dtype, np_dtype in (("double", np.float64), ("float", np.float32)):
    x0 = cp.random.default_rng(1).uniform(1, 2, size=(512, 512, 512)).astype(np_dtype)
    res = baselines.cupy_correlate(x0, default_weights(st, 0), steps=4, repeats=5)
    print(f"baseline Box-3D1R cupy.correlate {dtype} {512**3 * 4 / res['seconds'] / 1e9:.1f} GSt/s")
    del x0, res
    cp.get_default_memory_pool().free_all_blocks()
EOF

# Nsight Compute (benchmarks/gpu_session_profiles.sh): the measured best per precision, and the default at the
# same depth.
TARGETS=$OUT/profile-targets.txt
if command -v ncu >/dev/null 2>&1 && [ -f "${TUNING:-}" ]; then
  $PY - "$TUNING" > "$TARGETS" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["correct"] == "True"]
for dtype in ("double", "float"):
    mine = [r for r in rows if r["dtype"] == dtype]
    if not mine:
        continue
    best = max(mine, key=lambda r: float(r["gstencils"]))
    opts = best["options"].replace(" ", "").replace("True", "true").replace("False", "false").replace("'", '"')
    print("cuda_core Box-3D1R", best["fuse"], dtype, opts)
    print("cuda_core Box-3D1R", best["fuse"], dtype, "{}")
EOF
  OUT=$OUT TARGETS=$TARGETS bash benchmarks/gpu_session_profiles.sh > "$OUT/profiles.log" 2>&1
fi

echo "== GPU tests (exit $TESTS): $(tail -n 1 "$OUT/gpu_tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.log" | head -20
echo "== scan (exit $TUNE)"
grep -E "GSt/s|skip" "$OUT/tune_cc3d.log" | sed -e 's/ | .*//' | cut -c1-160
cat "$OUT/baseline.log"
[ -f "$OUT/profiles.log" ] && cat "$OUT/profiles.log"
