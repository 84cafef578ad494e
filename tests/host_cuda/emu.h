// Host emulation of the CUDA subset the CUDA-core kernels use, for the CPU tests.
//
// A kernel source from kernels/ is compiled by g++ after this header (and a few
// textual rewrites done by tests/_host_cuda.py: dynamic shared memory and
// __constant__ definitions).  Every CUDA thread of a block is a ucontext
// coroutine with its own stack; __syncthreads() hands control back to the
// scheduler, which runs each live thread of the block up to its next barrier,
// then releases them all.  Blocks run one after another, so static __shared__
// arrays may be plain function statics.
//
// Why coroutines and not OS threads: runs are deterministic, a block of 1024
// threads costs 1024 small stacks rather than 1024 OS threads, and the order in
// which the threads of a barrier interval run can be reversed.  A kernel whose
// output depends on that order reads shared memory another thread writes in the
// same barrier interval (a race on a GPU), or blocks that write the same
// output, give different bits in the two orders; the tests demand identical ones.  Dynamic shared memory is filled with NaN
// before each block, so a read of a slot nobody wrote shows up in the results.
//
// Arithmetic is IEEE like the GPU's: fma() is the fused multiply-add of <cmath>
// (counted, see below) and the file is compiled with -ffp-contract=off, so float and double results
// are those of the same operations rounded the same way.
#pragma once
#define TCADVISOR_HOST_EMU 1  // the kernels' host fallbacks (e.g. cp.async) use the emulation below
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace emu {
struct Thread {
    ucontext_t ctx;
    dim3 idx;
    bool done = false;
    char* stack = nullptr;
    // cp.async: copies issued and not yet waited for (destination, source, bytes, source bytes)
    struct Copy { void* dst; const void* src; unsigned bytes, src_bytes; };
    std::vector<Copy> pending;
};
inline ucontext_t scheduler;
inline Thread* current = nullptr;
inline dim3 block_idx, block_dim, grid_dim;
inline unsigned char* dynamic_smem = nullptr;
inline std::function<void()> body;
inline constexpr std::size_t STACK_BYTES = 256 * 1024;

inline void trampoline() {
    body();
    current->done = true;  // returning resumes the scheduler through uc_link
}

inline void sync() { swapcontext(&current->ctx, &scheduler); }

// Runs one block: every live thread up to its next barrier, until all are done.
inline int run_block(std::vector<Thread>& threads, bool reverse) {
    const std::size_t n = threads.size();
    for (std::size_t i = 0; i < n; ++i) {
        Thread& t = threads[i];
        t.done = false;
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = t.stack;
        t.ctx.uc_stack.ss_size = STACK_BYTES;
        t.ctx.uc_link = &scheduler;
        makecontext(&t.ctx, trampoline, 0);
    }
    for (;;) {
        std::size_t live = 0;
        for (std::size_t k = 0; k < n; ++k) {
            Thread& t = threads[reverse ? n - 1 - k : k];
            if (t.done) continue;
            current = &t;
            swapcontext(&scheduler, &t.ctx);
            if (!t.done) ++live;
        }
        for (auto& t : threads)
            if (t.done && !t.pending.empty()) return 2;  // a thread ended with copies it never waited for
        if (live == 0) return 0;
    }
}

template <class... A, std::size_t... I>
void call(void (*f)(A...), void** argv, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(argv[I])...);
}

// Launches f over grid x block with `smem` bytes of dynamic shared memory; argv[i] points at argument i.
// `reverse` runs the blocks, and the threads of every barrier interval, in descending order: two blocks
// writing the same output (a race between blocks on a GPU) then leave a different value too.
template <class... A>
int launch(void (*f)(A...), dim3 grid, dim3 block, std::size_t smem, void** argv, int reverse) {
    const std::size_t n = std::size_t(block.x) * block.y * block.z;
    std::vector<Thread> threads(n);
    for (std::size_t i = 0; i < n; ++i) {
        threads[i].idx = dim3{unsigned(i % block.x), unsigned(i / block.x % block.y), unsigned(i / (block.x * block.y))};
        threads[i].stack = static_cast<char*>(std::malloc(STACK_BYTES));
        if (!threads[i].stack) return 1;
    }
    std::vector<unsigned char> shared(smem + 16);
    dynamic_smem = shared.data();
    block_dim = block;
    grid_dim = grid;
    body = [&] { call(f, argv, std::index_sequence_for<A...>{}); };
    int rc = 0;
    const std::size_t blocks = std::size_t(grid.x) * grid.y * grid.z;
    for (std::size_t k = 0; k < blocks && !rc; ++k) {
        const std::size_t b = reverse ? blocks - 1 - k : k;
        block_idx = dim3{unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (grid.x * grid.y))};
        std::memset(shared.data(), 0xFF, shared.size());  // all-ones bits: NaN in float and double
        rc = run_block(threads, reverse != 0);
    }
    for (auto& t : threads) std::free(t.stack);
    return rc;
}
}  // namespace emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __constant__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define threadIdx (emu::current->idx)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
inline void __syncthreads() { emu::sync(); }
// fma() counts the fused multiply-adds executed (per thread, as Nsight Compute's thread-level FMA counts do),
// so the tests can compare them with the FLOPs the launch plans say a sweep executes.
namespace emu {
inline unsigned long long fma_count = 0;
inline double counted_fma(double a, double b, double c) { ++fma_count; return std::fma(a, b, c); }
inline float counted_fma(float a, float b, float c) { ++fma_count; return std::fma(a, b, c); }
}  // namespace emu
#define fma emu::counted_fma
// Asynchronous global -> shared copies (cp.async) as the kernels use them: a copy lands only when its thread
// waits (cp.async.wait_all), so a kernel that reads the destination before waiting, or never waits, reads
// what was there before (NaN on a fresh block) and fails the tests.  A source size below the copy's size
// zero-fills the rest, as on the GPU.
namespace emu {
inline void cp_async(void* dst, const void* src, unsigned bytes, unsigned src_bytes) {
    current->pending.push_back({dst, src, bytes, src_bytes});
}
inline void cp_async_wait_all() {
    for (const auto& c : current->pending) {
        std::memset(c.dst, 0, c.bytes);
        if (c.src_bytes) std::memcpy(c.dst, c.src, c.src_bytes);
    }
    current->pending.clear();
}
}  // namespace emu
using std::max;
using std::min;

// The 16-byte vector types the 1D CUDA-core kernel loads and stores (kernels/cuda_cores_1d.cu).
struct double2 { double x, y; };
struct float4 { float x, y, z, w; };
inline double2 make_double2(double x, double y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
