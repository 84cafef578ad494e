#!/usr/bin/env bash
# PTX and SASS of the 2D CUDA-core kernel, FP32 Star-2D1R t = 11, with the kernel files of 53fc223 (from
# build/kernels-at/, written by gpu_session_sptc2d.sh --prepare) and of today: what the pair commit changed in the
# FP32 code (validation/results/h100-sxm-2026-11-26/cc-ab/ptx/).   bash benchmarks/cc_ptx_ab.sh OUT_DIR
set -u
out=$1; mkdir -p $out
D="-DK_REAL=float -DK_RX=1 -DK_RY=1 -DK_T=11 -DK_STAR=1 -DK_V=4 -DK_NT=256 -DK_NR=1 -DK_KEEP=1"
for v in 53fc223 today; do
  if [ $v = today ]; then src=kernels/cuda_cores_2d.cu; inc=kernels; else src=build/kernels-at/$v/cuda_cores_2d.cu; inc=build/kernels-at/$v; fi
  nvcc -std=c++17 -arch=sm_90 -cubin -I$inc -Ikernels $D -o $out/$v.cubin $src 2> $out/$v.err
  nvcc -std=c++17 -arch=sm_90 -ptx -I$inc -Ikernels $D -o $out/$v.ptx $src 2>> $out/$v.err
  cuobjdump -sass $out/$v.cubin > $out/$v.sass
  echo "== $v: $(grep -c . $out/$v.sass) sass lines"
  grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+" $out/$v.sass | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -14
  grep -oE "ld\.global[.a-z0-9]*|st\.global[.a-z0-9]*|ld\.const[.a-z0-9]*" $out/$v.ptx | sort | uniq -c
done
