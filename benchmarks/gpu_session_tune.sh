#!/usr/bin/env bash
# One device session of knob scans: a few GPU tests, then tune_gpu_kernels.py scans, each under its own limit.
#
#   OUT=/some/dir SCANS="tc-mem:330 cc-fp32-deep:200" TESTS_K="knobs" bash benchmarks/gpu_session_tune.sh
#
# SCANS: "name:seconds" pairs, each a --only choice of benchmarks/tune_gpu_kernels.py; TESTS_K: a pytest -k
# expression over tests/test_gpu.py (empty: no tests).  Writes into $OUT: gpu.txt, gpu_tests.log, and per scan
# NAME/tuning.csv (rows written as measured, so a scan cut off by its limit still leaves them) and NAME.log.
# The last lines printed are each scan's table, best first per (stencil, dtype, depth).
set -u
OUT=${OUT:?set OUT to the directory for the results}
SCANS=${SCANS:?set SCANS to name:seconds pairs}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/gpu.txt"
if [ -n "${TESTS_K:-}" ]; then
  timeout 120 $PY -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -rfE -k "$TESTS_K" > "$OUT/gpu_tests.log" 2>&1
  echo "== GPU tests -k '$TESTS_K' (exit $?): $(tail -n 1 "$OUT/gpu_tests.log")"
  grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.log" | head -10
fi
for scan in $SCANS; do
  name=${scan%%:*}
  limit=${scan##*:}
  start=$(date +%s)
  timeout "$limit" $PY benchmarks/tune_gpu_kernels.py --only "$name" --out "$OUT/$name" > "$OUT/$name.log" 2>&1
  echo "== $name (exit $?, $(( $(date +%s) - start )) s, $(grep -c 'GSt/s' "$OUT/$name.log") timed, $(grep -c '^skip' "$OUT/$name.log") skipped)"
done
for scan in $SCANS; do
  name=${scan%%:*}
  [ -f "$OUT/$name/tuning.csv" ] || continue
  echo "== $name: per configuration, GStencils/s (correct)"
  $PY - "$OUT/$name/tuning.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(f"{r['stencil']:9} {r['dtype']:8} t={r['fuse']:2} {r['mma']:9} {r['options'][:70]:70} "
          f"{float(r['gstencils']):7.1f} {r['correct']}")
EOF
done
