#!/usr/bin/env bash
# Writes the 3D CUDA-core kernel files the scans cc3d-addr, cc3d-parts and cc3d-pairs compared (2026-11-28) into
# build/kernels-at/ (ignored by git): before-cc3d (kernels/cuda_cores_3d.cu of commit 2b1b916) and, from the
# patches in benchmarks/cc3d-variants/ against it, vld-only (the vector loads alone), rowhoist (and each row's
# global offset computed once) and smembase (the vector loads with one shared-memory thread base and the two
# plane buffers chosen once per iteration, the rows' offsets per plane as before).
#   bash benchmarks/cc3d_variants.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p build/kernels-at/before-cc3d
git show 2b1b916:kernels/cuda_cores_3d.cu > build/kernels-at/before-cc3d/cuda_cores_3d.cu
for v in vld-only rowhoist smembase; do
  mkdir -p "build/kernels-at/$v"
  patch -s -o "build/kernels-at/$v/cuda_cores_3d.cu" build/kernels-at/before-cc3d/cuda_cores_3d.cu \
      "benchmarks/cc3d-variants/$v.patch"
done
