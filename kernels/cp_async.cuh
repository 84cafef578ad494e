// Asynchronous global -> shared copies (cp.async, sm_80 and newer) as the Tensor Core kernels' stages use them.
//
// Why: a slice loaded ahead into registers holds its registers while in flight, so the bytes a warp keeps in
// flight to DRAM cost occupancy; a slice copied into shared memory by cp.async holds none, and
// cp.async.wait_group waits for a slice's group alone, not for the later ones.
//
// Included by kernels/sparse_tensor_cores.cu (K_BSTAGES) and kernels/tensor_cores.cu (K_STAGES) where they stage
// slices (tcadvisor.gpu.backend inlines the file before NVRTC compiles them; nvcc finds it beside them).  Under
// the host emulation (tests/host_cuda/emu.h) a copy lands only when its thread waits for its group.

#ifndef TCADVISOR_CP_ASYNC_CUH
#define TCADVISOR_CP_ASYNC_CUH

__device__ __forceinline__ void copy16_async(uint4* dst, const void* src) {
#if defined(TCADVISOR_HOST_EMU)
    emu::cp_async(dst, src, 16, 16);
#else
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#endif
}
__device__ __forceinline__ void commit_copies() {
#if defined(TCADVISOR_HOST_EMU)
    emu::cp_async_commit();
#else
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// Waits until at most N committed groups (the N latest slices) are still in flight.
template <int N>
__device__ __forceinline__ void wait_copies() {
#if defined(TCADVISOR_HOST_EMU)
    emu::cp_async_wait_group(N);
#else
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

#endif  // TCADVISOR_CP_ASYNC_CUH
