#!/usr/bin/env bash
# FP16/BF16 pairs on 2D CUDA cores with their input rows copied by cp.async (issue 21, target 4): the GPU tests of
# the 2D copies, the scan beside the defaults (tune_gpu_kernels.py --only cc-pairs-async, every configuration
# checked on a small grid first), then Nsight Compute on Box-2D1R and Star-2D1R FP16 x16 with four iterations
# ahead (the counterpart of gpu_session_cc2d_pairs_ncu.sh's register path).  Everything under OUT.
#   bash benchmarks/gpu_session_cc2d_pairs_async.sh OUT
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out/scan" "$out/ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
timeout 120 python -m pytest -q -p no:cacheprovider tests/test_gpu.py -k "cuda_core_2d_async_copies or refuses" \
    > "$out/gpu-tests-cc2d-pairs.log" 2>&1
tail -1 "$out/gpu-tests-cc2d-pairs.log"
timeout 330 python "$here/tune_gpu_kernels.py" --out "$out/scan" --only cc-pairs-async > "$out/scan/tune.log" 2>&1
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
metrics="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
PROF_TIMEOUT=60
. "$here/ncu_cc2d_prof.sh"  # prof()
prof box-fp16-t16-pf4 Box-2D1R 16 half '{"async_copy": true, "prefetch": 4}'
prof box-fp16-t16-wide-pf4 Box-2D1R 16 half '{"v": 4, "cols": 1024, "async_copy": true, "prefetch": 4}'
prof star-fp16-t16-pf4 Star-2D1R 16 half '{"async_copy": true, "prefetch": 4}'
tar -C "$out" -czf "$out/ncu.tgz" ncu && rm -rf "$out/ncu"
python "$here/summarize_knob_scan.py" "$out/scan/tuning.csv" > "$out/scan/summary.md"
tail -60 "$out/scan/summary.md"
