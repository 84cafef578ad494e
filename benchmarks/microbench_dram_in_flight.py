"""Microbenchmark: the DRAM bandwidth a streaming kernel sustains against what it keeps in flight (needs a GPU).

    python benchmarks/microbench_dram_in_flight.py --out DIR

Why: the refined model's sustained bandwidth is Little's law over the bytes in flight per SM (N_b blocks x q_b
bytes), whatever the warps that carry them and the size of each request.  The 2D CUDA-core kernel at t = 1 reached 70,
72 and 57 % of the DRAM bandwidth in FP64, FP32 and FP16 with about the same bytes in flight by the plan's count, at
37, 58 and 33 warps per SM and requests of 256, 128 and 128 bytes (validation/results/h200-2026-12-01/cc2d-memory-ncu/).
This kernel separates the three: every thread of a block loads N values of W bytes per iteration (each warp load is
32·W contiguous bytes, the block's N·T·W bytes of an iteration contiguous), adds them and stores them, and the
resident blocks per SM are set by the dynamic shared memory each asks for (one wave of persistent blocks).  Bytes in
flight per SM = blocks x T x N x W; requests in flight per SM = blocks x (T/32) x N.  Read and written bytes over the
best of the timed launches (CUDA events) give the bandwidth.  Writes ``in-flight.csv`` and prints a table.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

SOURCE = r"""
#if W == 4
typedef unsigned val_t;
__device__ __forceinline__ val_t add(val_t a, unsigned k) { return a + k; }
#elif W == 8
typedef uint2 val_t;
__device__ __forceinline__ val_t add(val_t a, unsigned k) { return make_uint2(a.x + k, a.y + k); }
#else
typedef uint4 val_t;
__device__ __forceinline__ val_t add(val_t a, unsigned k) { return make_uint4(a.x + k, a.y + k, a.z + k, a.w + k); }
#endif
extern "C" __global__ void stream_n(const val_t* __restrict__ in, val_t* __restrict__ out, long long n, unsigned k) {
    extern __shared__ unsigned char pad[];  // only to set the resident blocks per SM
    if (n < 0) pad[threadIdx.x] = 0;
    const long long chunk = (long long)N * blockDim.x;
    for (long long base = (long long)blockIdx.x * chunk; base + chunk <= n; base += (long long)gridDim.x * chunk) {
        val_t v[N];
#pragma unroll
        for (int j = 0; j < N; ++j) v[j] = __ldg(in + base + (long long)j * blockDim.x + threadIdx.x);
#pragma unroll
        for (int j = 0; j < N; ++j) out[base + (long long)j * blockDim.x + threadIdx.x] = add(v[j], k);
    }
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mib", type=int, default=1024, help="bytes read per launch, MiB (as many written)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    os.makedirs(args.out, exist_ok=True)
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    smem_sm = props["sharedMemPerMultiprocessor"]
    smem_block_max = props["sharedMemPerBlockOptin"]
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    nbytes = args.mib << 20
    src = cp.zeros(nbytes // 4, dtype=cp.uint32)
    src[...] = cp.arange(src.size, dtype=cp.uint32)
    dst = cp.empty_like(src)
    rows = []
    modules = {}
    for w in (4, 8, 16):
        for threads in (128, 256):
            for nload in (1, 2, 4, 8):
                key = (w, nload)
                if key not in modules:
                    modules[key] = cp.RawModule(code=SOURCE, options=("-std=c++17", f"-DW={w}", f"-DN={nload}"))
                fn = modules[key].get_function("stream_n")
                for blocks in (1, 2, 4, 8, 16):
                    if blocks * threads > 2048:
                        continue
                    # shared memory that leaves exactly `blocks` resident (1 KiB per block is the system's)
                    smem = min(smem_sm // blocks - 1024, smem_block_max)
                    if blocks < 16 and smem_sm // (smem + 1024) != blocks:
                        continue
                    smem = smem if blocks < 16 else 0
                    fn.max_dynamic_shared_size_bytes = max(smem, 0)
                    n = nbytes // w
                    grid = blocks * sms
                    call_args = (src, dst, np.int64(n), np.uint32(1))
                    fn((grid,), (threads,), call_args, shared_mem=smem)
                    cp.cuda.runtime.deviceSynchronize()
                    best = None
                    for _ in range(args.repeats):
                        a, b = cp.cuda.Event(), cp.cuda.Event()
                        a.record()
                        fn((grid,), (threads,), call_args, shared_mem=smem)
                        b.record()
                        b.synchronize()
                        ms = cp.cuda.get_elapsed_time(a, b)
                        best = ms if best is None else min(best, ms)
                    moved = 2 * (n // (nload * threads)) * nload * threads * w
                    dst[...] = 0
                    fn((grid,), (threads,), call_args, shared_mem=smem)
                    ok = bool((dst[:4096] == src[:4096] + 1).all())  # every 32-bit word of the first chunks
                    rows.append({"gpu": name, "W": w, "threads": threads, "N": nload, "blocks_per_sm": blocks,
                                 "warps_per_sm": blocks * threads // 32,
                                 "requests_in_flight_per_sm": blocks * threads // 32 * nload,
                                 "bytes_in_flight_per_sm": blocks * threads * nload * w,
                                 "smem_per_block": smem, "ms": round(best, 4),
                                 "tbs": round(moved / best / 1e9, 4), "checked": ok})
                    print(f"W={w:2d} T={threads} N={nload} blocks={blocks:2d} warps={blocks * threads // 32:2d} "
                          f"in flight {blocks * threads * nload * w / 1024:6.1f} KiB/SM: {moved / best / 1e9:.3f} TB/s",
                          flush=True)
    with open(os.path.join(args.out, "in-flight.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
