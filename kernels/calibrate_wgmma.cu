// Warpgroup MMA microbenchmark behind `tcadvisor calibrate` on Hopper (sm_90a only; kernels/calibrate.cu holds
// the benchmarks every GPU runs).  Compiled by tcadvisor/validate/calibrate.py (measure_wgmma) and
// benchmarks/wgmma_rates.py with NVRTC for sm_90a, after the one wgmma wrapper tcadvisor/validate/wgmma.py writes.
//
// cal_wgmma  one wgmma.mma_async / wgmma.sp instruction, written by tcadvisor/validate/wgmma.py and
//            prepended to this file (it defines WG_NACC and wgmma_step).  Each block is CAL_WG
//            warpgroups; each issues CAL_UNROLL x CAL_CHAINS instructions per commit group into
//            CAL_CHAINS independent accumulator tiles, then waits until at most CAL_WAIT groups are
//            in flight.  (Keeping a group in flight while the next one writes the same accumulators
//            is allowed for instructions of one shape: the PTX ISA orders them.)  B, and A when it
//            comes from shared memory, are read through descriptors of a dynamic shared buffer
//            filled from the seed: the values are meaningless, the addresses valid (no swizzle,
//            core matrices 128 bytes apart along K and 256 along M/N, inside CAL_SMEM bytes).

#ifndef CAL_CHAINS
#define CAL_CHAINS 2
#endif
#ifndef CAL_UNROLL
#define CAL_UNROLL 4
#endif
#ifndef CAL_WG
#define CAL_WG 1
#endif
#ifndef CAL_WAIT
#define CAL_WAIT 0
#endif
#ifndef CAL_SMEM
#define CAL_SMEM 40960
#endif

__device__ __forceinline__ unsigned long long cal_smem_desc(const void* p) {
    const unsigned long long a = (unsigned long long)__cvta_generic_to_shared(p);
    // PTX ISA "Matrix Descriptor Format": start address, leading and stride byte offsets, all >> 4;
    // base offset 0, swizzle mode 0 (none).
    return ((a & 0x3FFFFULL) >> 4) | ((128ULL >> 4) << 16) | ((256ULL >> 4) << 32);
}

extern "C" __global__ void __launch_bounds__(128 * CAL_WG) cal_wgmma(const unsigned* __restrict__ seed, unsigned e,
                                                                     int iters, double* __restrict__ out) {
    extern __shared__ __align__(1024) unsigned cal_wsm[];
    for (int i = threadIdx.x; i < CAL_SMEM / 4; i += blockDim.x) cal_wsm[i] = seed[i & 15];
    // the generic-proxy stores above, visible to the async proxy that wgmma reads shared memory through
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    unsigned a[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = seed[i];
    const unsigned long long bdesc = cal_smem_desc(cal_wsm);
    const unsigned long long adesc = cal_smem_desc(cal_wsm + (CAL_SMEM / 4) * 3 / 4);
    float acc[CAL_CHAINS][WG_NACC];
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c)
#pragma unroll
        for (int i = 0; i < WG_NACC; ++i) acc[c][i] = 0.0f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int it = 0; it < iters; it += CAL_UNROLL) {
#pragma unroll
        for (int u = 0; u < CAL_UNROLL; ++u)
#pragma unroll
            for (int c = 0; c < CAL_CHAINS; ++c) wgmma_step(acc[c], a, adesc, bdesc, e);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(CAL_WAIT) : "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    double s = 0.0;
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c)
#pragma unroll
        for (int i = 0; i < WG_NACC; ++i) s += (double)acc[c][i];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
