#!/usr/bin/env bash
# After a kernel default changed: the H200 corpus recorded again with today's kernels (record_corpus.py, the
# validation corpus of the refined model, every run checked), then the GPU tests a -k expression selects.  Under OUT.
#   bash benchmarks/gpu_session_corpus_and_tests.sh OUT "PYTEST -k EXPRESSION"
set -u
out=${1:?output folder}
tests=${2:?a pytest -k expression}
here=$(dirname "$0")
mkdir -p "$out/corpus"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 330 python "$here/record_corpus.py" --out "$out/corpus" --gpu-spec h200-calibrated --n 1100 --seed 2 \
    --budget-s 300 --workers 14 > "$out/corpus/record.log" 2>&1
tail -3 "$out/corpus/record.log"
timeout 240 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_apply_gpu.py -k "$tests" \
    > "$out/gpu-tests.log" 2>&1
tail -1 "$out/gpu-tests.log"
