# Sourced by the 2D CUDA-core Nsight Compute sessions (gpu_session_cc2d_prefetch.sh, gpu_session_cc2d_pairs_ncu.sh,
# gpu_session_cc2d_pairs_async.sh): `prof LABEL STENCIL FUSE DTYPE KNOBS-JSON` profiles the third launch of
# cc_stream2d (one sweep) of benchmarks/profile_kernel.py on 10240x10240 with the caller's $sections and $metrics,
# writes $out/ncu/ncu-LABEL.txt and prints one line: label, throughput and description, duration.
# PROF_TIMEOUT (seconds, default 90) bounds each profile.
prof() {  # label stencil fuse dtype knobs-json
  timeout "${PROF_TIMEOUT:-90}" ncu --clock-control none -k "regex:cc_stream2d" --launch-skip 2 --launch-count 1 \
      $sections $metrics python "$here/profile_kernel.py" cuda_core "$2" "$3" "$4" 10240x10240 "$5" \
      > "$out/ncu/ncu-$1.txt" 2>&1
  echo "$1 | $(grep -m1 'GStencils' "$out/ncu/ncu-$1.txt" | cut -c1-200) | $(grep -m1 -E '^ +Duration' "$out/ncu/ncu-$1.txt" | tr -s ' ')"
}
