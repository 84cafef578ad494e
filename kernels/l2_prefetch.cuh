// Asking the L2 for input rows some slices ahead of their use (K_L2PF of the Tensor Core kernels).
//
// Why: at shallow fusion the streaming kernels are memory-bound, and what a warp keeps in flight
// is the slices it has loaded ahead into registers -- with the registers the kernels need, too
// few bytes to cover DRAM latency.  An L2 prefetch costs no register: the rows arrive in L2
// while the warp multiplies, and the fragment loads later wait for L2, not DRAM.
//
// Included by kernels/tensor_cores.cu and kernels/sparse_tensor_cores.cu (tcadvisor.gpu.backend
// inlines the file before NVRTC compiles them; nvcc finds it beside them).

#ifndef TCADVISOR_L2_PREFETCH_CUH
#define TCADVISOR_L2_PREFETCH_CUH

// Ask the L2 for the n elements from p.  Hopper: one bulk prefetch (the TMA unit fetches the
// whole run of 16-byte units) issued by the calling thread; older GPUs: one prefetch per
// 128-byte line, spread over the warp's lanes (every lane calls it).
template <typename T>
__device__ __forceinline__ void l2_prefetch_run(const T* p, int n, int lane) {
    const unsigned long long a0 = reinterpret_cast<unsigned long long>(p) & ~15ULL;
    const unsigned long long a1 = (reinterpret_cast<unsigned long long>(p + n) + 15ULL) & ~15ULL;
#if defined(TCADVISOR_HOST_EMU)  // the CPU tests (tests/host_cuda/emu.h): a hint with nothing to do
    (void)a0, (void)a1, (void)lane;
#elif __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a0), "r"((unsigned)(a1 - a0)) : "memory");
#else
    for (unsigned long long a = (a0 & ~127ULL) + 128ULL * lane; a < a1; a += 32 * 128ULL)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
#endif
}

// Whether one thread's call prefetches a whole run (Hopper) or every lane must call (older GPUs).  Each
// kernel spells out its own row loop with it: a shared helper over the rows of a slice compiled to other
// register assignments and measured 2-6 % slower for the sparse kernel
// (validation/results/h100-sxm-2026-11-24/l2-refactor-check/).
#if __CUDA_ARCH__ >= 900
#define L2_PREFETCH_ONE_THREAD 1
#else
#define L2_PREFETCH_ONE_THREAD 0
#endif

#endif
