#!/usr/bin/env bash
# The recorded evidence of the validation suite, in one GPU session of at most ~9 minutes:
#
#   1. tcadvisor calibrate            -> calibrated.yaml (this GPU's measured ceilings)
#   2. the ncu metric names this GPU offers (for the record) -> ncu-metrics.txt
#   3. tcadvisor validate --suite paper --suite depth-sweep --profile --gpu calibrated.yaml
#                                     -> results.csv, comparisons.csv, results.json, report.html
#
# Everything goes to $OUT/<gpu>-<date>/ (one folder, 7 files with session.log), which is what the
# device tool brings back.  Run from anywhere, on the GPU machine, with CuPy installed:
#
#   OUT=/some/dir bash benchmarks/gpu_session_validate.sh            # ~9 minutes
#   OUT=/some/dir bash benchmarks/gpu_session_validate.sh --quick    # ~3 minutes (quick + paper, calibrate --quick)
#
# BUDGET (seconds, default 540; --quick 200) bounds the whole script: validate gets what calibration
# left, minus a margin, as its --time-limit, and records what it could not start as skipped.
# PYTHON (default python3) is the interpreter with CuPy.  Nothing here changes a clock or a setting.
set -uo pipefail
cd "$(dirname "$0")/.."
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
: "${OUT:?set OUT to the directory the results go to}"
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-$([ $QUICK = 1 ] && echo 200 || echo 540)}
start=$(date +%s)
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

short=$($PY -c 'from tcadvisor.hardware import detect_local_gpu_name as d
from tcadvisor.validate.calibrate import short_name
print(short_name(d() or "gpu"))' 2>/dev/null || echo gpu)
dir="$OUT/${short}-$(date +%F)"
mkdir -p "$dir"

session() {
echo "== $(date -Is) tcadvisor validation session, $([ $QUICK = 1 ] && echo quick || echo full), budget ${BUDGET}s"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv 2>&1 || true
$PY -c 'import sys, cupy; print("python", sys.version.split()[0], "cupy", cupy.__version__,
"CUDA runtime", cupy.cuda.runtime.runtimeGetVersion(), "NVRTC", cupy.cuda.nvrtc.getVersion())' 2>&1 || true

echo "== $(date -Is) calibrate"
spec="$dir/calibrated.yaml"
if ! $PY -m tcadvisor calibrate $([ $QUICK = 1 ] && echo --quick) -o "$spec"; then
    echo "calibration failed: the predictions use the detected GPU's bundled spec"
    spec=""
fi

profile=()
if command -v ncu >/dev/null 2>&1; then
    echo "== $(date -Is) Nsight Compute: $(ncu --version | tail -n 1)"
    $PY -m tcadvisor.validate.ncu --candidates > "$dir/ncu-metrics.txt" 2>&1 || true
    head -n 40 "$dir/ncu-metrics.txt"
    profile=(--profile)
else
    echo "== no ncu on PATH: validating without --profile (no measured C, M, I)"
fi

suites=(--suite paper --suite depth-sweep)
[ $QUICK = 1 ] && suites=(--suite quick --suite paper)
left=$(( BUDGET - ($(date +%s) - start) - 25 ))
[ $left -lt 60 ] && left=60
echo "== $(date -Is) validate ${suites[*]} ${profile[*]}, time limit ${left}s"
$PY -m tcadvisor validate "${suites[@]}" ${spec:+--gpu "$spec"} "${profile[@]}" --time-limit "$left" -o "$dir"
status=$?

echo "== $(date -Is) done (validate exit status $status) in $(( $(date +%s) - start ))s"
ls -la "$dir"
}

# A pipeline, not a process substitution: the script ends only when the log is complete.
session 2>&1 | tee -a "$dir/session.log"
