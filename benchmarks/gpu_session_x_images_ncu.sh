#!/bin/bash
# Nsight Compute on the stencil kernels with and without their x images (benchmarks/time_x_images_kernels.py,
# (An experiment: run on 3135c3a with validation/results/h100-sxm-2026-11-28/x-images/*/kernel-images.patch applied.)
# one round, one launch after one warm-up per variant: old kernel, new storing images, new with gimg = 0).
#     bash benchmarks/gpu_session_x_images_ncu.sh CASE_INDEX KERNEL_REGEX
set -u
out=${OUT:-/tmp/x-images-ncu}
mkdir -p "$out"
case_index=$1
regex=$2
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,\
lts__t_sectors_op_read.sum,smsp__inst_executed.sum,sm__cycles_active.max,sm__cycles_active.avg,\
smsp__thread_inst_executed_per_inst_executed.ratio,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
ncu --kernel-name "regex:$regex" --metrics "$metrics" --csv \
    python benchmarks/time_x_images_kernels.py --before build/before --out "$out/ncu-run.csv" --case "$case_index" \
    --rounds 1 --launches 1 --kernels-only > "$out/ncu-case$case_index.csv" 2> "$out/ncu-case$case_index.err"
python - "$out/ncu-case$case_index.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
ids, names, vals = head.index("ID"), head.index("Metric Name"), head.index("Metric Value")
by = {}
for r in rows[1:]:
    by.setdefault(int(r[ids]), {})[r[names]] = r[vals]
for i, m in sorted(by.items()):
    print(i, "  ".join(f"{k.split('__')[1] if '__' in k else k}={v}" for k, v in m.items()))
PY
