#!/usr/bin/env bash
# One device session for the bundled kernels (issue 8): GPU tests, then the benchmark.
#
#   OUT=/some/dir bash benchmarks/gpu_session_kernels.sh          # ~7 minutes on an H100
#   OUT=/some/dir bash benchmarks/gpu_session_kernels.sh quick    # ~1 minute: build, check, a few timings
#   OUT=/some/dir bash benchmarks/gpu_session_kernels.sh notune   # full, without the sparse-knob scan (~6 minutes)
#
# Writes into $OUT: gpu_tests.log, bench.log, kernels.csv, ceilings.yaml, summary.md, and (full mode)
# tuning.csv + tune_sptc.log from the sparse kernel's knobs: 7 files at most.
# The last lines printed are the test summary and the benchmark's summary table.
set -u
OUT=${OUT:?set OUT to the directory for the results}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
MODE=${1:-full}

nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,memory.total --format=csv,noheader > "$OUT/gpu_tests.log" 2>&1 || true
$PY -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__)" >> "$OUT/gpu_tests.log" 2>&1

if [ "$MODE" = quick ]; then
  # the MMA operand layouts, the new kernels' negative controls, the CLI and one long run; then timings
  timeout 150 $PY -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -rfE \
      -k "operand_layouts or negative_controls or cli_runs or long_runs_pass and sparse and half" \
      >> "$OUT/gpu_tests.log" 2>&1
  TESTS=$?
  timeout 200 $PY benchmarks/gpu_session_kernels.py --quick --out "$OUT" --repeats 3 > "$OUT/bench.log" 2>&1
  BENCH=$?
else
  timeout 230 $PY -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -rfE --durations=5 \
      >> "$OUT/gpu_tests.log" 2>&1
  TESTS=$?
  [ "$MODE" = notune ] || timeout 75 $PY benchmarks/tune_gpu_kernels.py --only sptc --out "$OUT" --sweeps 4 --repeats 3 \
      > "$OUT/tune_sptc.log" 2>&1
  timeout 260 $PY benchmarks/gpu_session_kernels.py --out "$OUT" --budget-s 215 > "$OUT/bench.log" 2>&1
  BENCH=$?
fi

echo "== GPU tests (exit $TESTS): $(tail -n 1 "$OUT/gpu_tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.log" | head -20
[ -f "$OUT/tune_sptc.log" ] && { echo "== sparse kernel knobs (tuning.csv)"; grep -E "GSt/s|skip" "$OUT/tune_sptc.log" | sed -e 's/ | .*//' | cut -c1-150; }
echo "== benchmark (exit $BENCH)"
grep -E "^(stop|baseline|Traceback)|Error" "$OUT/bench.log" | head -15
sed -n '/^## Summary/,$p' "$OUT/bench.log"
[ "$BENCH" = 0 ] || tail -n 30 "$OUT/bench.log"
