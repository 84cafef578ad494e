#!/usr/bin/env bash
# After a CUDA-core default changed: the H200 corpus recorded again with today's kernels, then the CUDA-core and
# apply GPU tests (gpu_session_corpus_and_tests.sh with their -k expression; the log is OUT/gpu-tests.log, named
# gpu-tests-cc-apply.log in the runs of 2026-12-01).  Under OUT.
#   bash benchmarks/gpu_session_corpus_and_cc_tests.sh OUT
set -u
exec bash "$(dirname "$0")/gpu_session_corpus_and_tests.sh" "${1:?output folder}" \
    "cuda or apply or advised or fixed or numpy or band"
