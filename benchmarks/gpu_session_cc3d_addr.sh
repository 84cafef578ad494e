#!/usr/bin/env bash
# The 3D CUDA-core kernel with its addresses hoisted out of the streaming loop, beside the file of before
# (commit 2b1b916, written to build/kernels-at/before-cc3d/) and with the vector loads: the scan
# (benchmarks/tune_gpu_kernels.py --only cc3d-addr), the loop's SASS counts (benchmarks/sass_cc3d_vld.py), and
# Nsight Compute's issue and pipe figures for Box-3D1R FP32 x4 both layouts.
#   bash benchmarks/gpu_session_cc3d_addr.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out" build/kernels-at/before-cc3d
[ -s build/kernels-at/before-cc3d/cuda_cores_3d.cu ] || bash benchmarks/cc3d_variants.sh  # or carried in
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
python benchmarks/tune_gpu_kernels.py --out "$out" --only cc3d-addr --repeats 5 > "$out/scan.log" 2>&1
python benchmarks/sass_cc3d_vld.py --out "$out/sass" > "$out/sass-summary.txt" 2>&1
(cd "$out" && tar czf sass.tgz sass && rm -rf sass)
metrics="smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,gpu__time_duration.sum,launch__registers_per_thread"
for spec in "box4 Box-3D1R 4 {}" "box4-vld Box-3D1R 4 {\"vector_loads\":true}"; do
  set -- $spec
  timeout 120 ncu --clock-control none -k "regex:cc_stream3d" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
      python benchmarks/profile_kernel.py cuda_core "$2" "$3" float 512x512x512 "$4" > "$out/ncu-$1.txt" 2>&1
done
tail -n 3 "$out/scan.log"
