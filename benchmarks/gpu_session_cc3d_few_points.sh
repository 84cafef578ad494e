#!/usr/bin/env bash
# After cc3d_radius1_few_points (kernels/defaults.yaml) became the default for radius-1 3D stencils of few points
# (issue 21, target 4).  One run:
#   1. tune_gpu_kernels.py --only cc3d-few-points-check: each entry of the table on three radius-1 shapes no scan
#      or choice saw (backward-3d, 4 points; face-corner-3d, 15; edge-corner-3d, 21), at the entry's tile and at
#      the tile the shape took before, both as knobs, every run checked against the float64 reference;
#   2. the H200 corpus recorded again with today's defaults (record_corpus.py, as gpu_session_corpus_and_tests.sh);
#   3. the GPU tests of the 3D kernels, in the time left.
#   bash benchmarks/gpu_session_cc3d_few_points.sh OUT_DIR
# Writes check/tuning.csv, check.log, corpus/{corpus.csv,corpus.json,record.log}, gpu.txt, gpu-tests.log (with the
# caller's session.log, 8 files); prints the check's table last.
set -u
out=${1:?output folder}
mkdir -p "$out/check" "$out/corpus"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
cat "$out/gpu.txt"
SECONDS=0
timeout 150 python benchmarks/tune_gpu_kernels.py --only cc3d-few-points-check --sweeps 4 --repeats 5 \
    --out "$out/check" > "$out/check.log" 2>&1
echo "check rc $? after ${SECONDS}s: $(($(wc -l < "$out/check/tuning.csv") - 1)) runs, $(grep -c 'correct=False' "$out/check.log") incorrect"
timeout 330 python benchmarks/record_corpus.py --out "$out/corpus" --gpu-spec h200-calibrated --n 1100 --seed 2 \
    --budget-s 300 --workers 14 > "$out/corpus/record.log" 2>&1
echo "corpus rc $? after ${SECONDS}s"
tail -3 "$out/corpus/record.log"
left=$((560 - SECONDS))
if [ "$left" -gt 30 ]; then
  timeout "$left" python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_apply_gpu.py \
      -k "three_d or 3d" > "$out/gpu-tests.log" 2>&1
  echo "gpu tests rc $? after ${SECONDS}s: $(tail -1 "$out/gpu-tests.log")"
fi
python - "$out/check/tuning.csv" <<'PY'
import ast, csv, sys
from tcadvisor.gpu import defaults
table = defaults.measured().cc3d_few_points
prec = {"double": "fp64", "float": "fp32", "half": "fp16"}
rows = list(csv.DictReader(open(sys.argv[1])))
print("entry tile over the tile before (both as knobs); * = the shape takes the entry by its points")
seen = {}
for r in rows:
    seen.setdefault((r["stencil"], r["dtype"], int(r["fuse"])), []).append(r)
pts = {"backward-3d": 4, "face-corner-3d": 15, "edge-corner-3d": 21}
for (st, dt, t), pair in seen.items():
    if len(pair) != 2:
        print(f"{st:15} {dt:6} t={t} {len(pair)} runs recorded, not 2")
        continue
    old, new = pair
    most = table[prec[dt], t][0]
    ratio = float(new["gstencils"]) / float(old["gstencils"])
    ok = old["correct"] == new["correct"] == "True"
    print(f"{st:15} {dt:6} t={t} {float(old['gstencils']):7.1f} -> {float(new['gstencils']):7.1f} {ratio:.3f}"
          f"{' *' if pts[st] <= most else '  '} correct={ok}")
PY
