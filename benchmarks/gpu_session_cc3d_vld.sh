#!/usr/bin/env bash
# The 3D CUDA-core kernel with its shared rows read as vectors (vector_loads, K_VLD) beside the residue layout:
# the scan (benchmarks/tune_gpu_kernels.py --only cc3d-vld) and Nsight Compute's issue and pipe figures for
# Box-3D1R FP32 x4 and Star-3D1R FP32 x6 both ways.
#   bash benchmarks/gpu_session_cc3d_vld.sh OUT_DIR
set -u
out=${1:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
python benchmarks/tune_gpu_kernels.py --out "$out" --only cc3d-vld --repeats 5 > "$out/scan.log" 2>&1
metrics="smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,gpu__time_duration.sum,launch__registers_per_thread"
for spec in "box4 Box-3D1R 4 {}" "box4-vld Box-3D1R 4 {\"vector_loads\":true}" \
            "star6 Star-3D1R 6 {}" "star6-vld Star-3D1R 6 {\"vector_loads\":true}"; do
  set -- $spec
  timeout 120 ncu --clock-control none -k "regex:cc_stream3d" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
      python benchmarks/profile_kernel.py cuda_core "$2" "$3" float 512x512x512 "$4" > "$out/ncu-$1.txt" 2>&1
done
tail -n 3 "$out/scan.log"
