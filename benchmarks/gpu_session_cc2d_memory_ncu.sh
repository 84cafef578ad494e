#!/usr/bin/env bash
# Nsight Compute on the 2D CUDA-core kernel's memory side, by precision (docs/model.md, "CUDA cores in 2D follow the
# precision, on both sides of the roofline": against the model's Little's-law bandwidth at their resident blocks the
# runs at t <= 2 reach 1.13-1.18x in FP64, 1.05-1.15x in FP32 and 0.77-0.87x in FP16/BF16).  What tells the
# candidates apart: load instructions and requests, sectors per request, bytes per load, warps resident, DRAM bytes
# and throughput, long-scoreboard stalls.  Box-2D1R at t = 1 in FP64, FP32 and FP16, at t = 4 in FP32 and FP16,
# Star-2D1R FP64 at t = 11; the defaults, as `tcadvisor run` launches them.
#   bash benchmarks/gpu_session_cc2d_memory_ncu.sh OUT_DIR
# Writes ncu-LABEL.txt per configuration (sections, then the raw metrics that count loads, sectors and bytes).
set -u
out=${1:?output folder}
here=$(dirname "$0")
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt"
scratch=$(mktemp -d)
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats"
for cfg in "Box-2D1R 1 double" "Box-2D1R 1 float" "Box-2D1R 1 half" "Box-2D1R 4 float" "Box-2D1R 4 half" "Star-2D1R 11 double"; do
  set -- $cfg
  label="$1-x$2-$3"
  timeout 150 ncu --clock-control none -k "regex:cc_stream2d" --launch-skip 2 --launch-count 1 $sections \
      -o "$scratch/rep-$label" -f python "$here/profile_kernel.py" cuda_core "$1" "$2" "$3" 10240x10240 > "$scratch/run-$label.log" 2>&1
  {
    cat "$scratch/run-$label.log" | grep -m1 GStencils
    ncu -i "$scratch/rep-$label.ncu-rep" $sections 2>&1
    echo
    echo "----- raw: loads, requests, sectors, bytes, warps"
    ncu -i "$scratch/rep-$label.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, re, sys
rows = list(csv.reader(sys.stdin))
keep = re.compile(r"dram__bytes|dram__throughput|l1tex__t_(requests|sectors)_pipe_lsu_mem_global_op_(ld|st)\.sum|"
                  r"l1tex__m_xbar2l1tex_read_bytes|ldgsts|inst_executed_op_global_(ld|st)\.sum|lts__t_sectors_srcunit_tex_op_read\.sum|"
                  r"lts__t_sector_op_read_hit_rate|issue_stalled_long_scoreboard|warps_active\.avg|launch__registers|"
                  r"launch__occupancy_limit|launch__block_size|launch__grid_size|gpu__time_duration\.sum|l1tex__t_sector_hit_rate")
for n, u, v in zip(rows[0], rows[1], rows[2]):
    if keep.search(n):
        print(f"{n:90s} {u:12s} {v}")'
  } > "$out/ncu-$label.txt"
  echo "$label | $(grep -m1 GStencils "$out/ncu-$label.txt" | cut -c1-160) | $(grep -m1 -E 'DRAM Throughput' "$out/ncu-$label.txt" | tr -s ' ')"
done
