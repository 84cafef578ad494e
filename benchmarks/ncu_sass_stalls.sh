# Sourced by the Nsight Compute stall-sample scripts (gpu_session_sass_stalls.sh, gpu_session_sptc_stalls_now.sh):
# one configuration's sections and warp-stall samples per SASS instruction into the folder $out.
#   prof LABEL KERNEL-REGEX UNIT STENCIL FUSE DTYPE GRID [KNOBS-JSON]
# Writes ncu-LABEL.txt (sections), sass-LABEL.csv (the source page, SASS, every metric), run-LABEL.log and the
# report rep-LABEL.ncu-rep, and prints the run's GStencils/s line.
sections="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --section SchedulerStats --section InstructionStats"
prof() {
  local label=$1 kname=$2; shift 2
  timeout 150 ncu --clock-control none -k "regex:$kname" --launch-skip 2 --launch-count 1 $sections \
      -o "$out/rep-$label" -f python benchmarks/profile_kernel.py "$@" > "$out/run-$label.log" 2>&1
  ncu -i "$out/rep-$label.ncu-rep" $sections > "$out/ncu-$label.txt" 2>&1
  ncu -i "$out/rep-$label.ncu-rep" --page source --csv --print-source sass > "$out/sass-$label.csv" 2>&1
  echo "$label $(grep -m1 'GStencils' "$out/run-$label.log")"
}
