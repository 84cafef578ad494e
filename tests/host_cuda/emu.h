// Host emulation of the CUDA subset the bundled kernels use (CUDA cores; Tensor Cores: see the end), for the CPU tests.
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
    // cp.async: copies issued and not yet waited for (destination, source, bytes, source bytes, the group
    // cp.async.commit_group closed them into: ``committed`` while still open)
    struct Copy { void* dst; const void* src; unsigned bytes, src_bytes; unsigned long long group; };
    std::vector<Copy> pending;
    unsigned long long committed = 0;  // groups this thread has committed
    unsigned tid = 0;                  // linear index in the block (lane = tid % 32)
    unsigned long long collectives = 0;  // warp collectives (mma, shuffles) this thread has entered
};
inline ucontext_t scheduler;
inline Thread* current = nullptr;
inline dim3 block_idx, block_dim, grid_dim;
inline unsigned char* dynamic_smem = nullptr;
inline std::function<void()> body;
// Warp collectives: one lane's operands (see warp_exchange below), two sets by the parity of the collective.
struct WarpOp {
    unsigned long long seq;
    unsigned long long a[8], b[4], meta;
    double c[4];
};
inline std::vector<WarpOp> warp_ops[2];
inline bool collective_mismatch = false;
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
        t.collectives = 0;
        t.committed = 0;
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
    for (auto& ops : warp_ops) ops.assign(n + 32, WarpOp{});
    collective_mismatch = false;
    for (std::size_t i = 0; i < n; ++i) {
        threads[i].tid = unsigned(i);
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
        for (auto& ops : warp_ops)
            for (auto& op : ops) op.seq = ~0ULL;
        rc = run_block(threads, reverse != 0);
        if (!rc && collective_mismatch) rc = 3;  // lanes of a warp met in different collectives
    }
    for (auto& t : threads) std::free(t.stack);
    return rc;
}
}  // namespace emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
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
    current->pending.push_back({dst, src, bytes, src_bytes, current->committed});
}
inline void land(const Thread::Copy& c) {
    std::memset(c.dst, 0, c.bytes);
    if (c.src_bytes) std::memcpy(c.dst, c.src, c.src_bytes);
}
inline void cp_async_wait_all() {
    for (const auto& c : current->pending) land(c);
    current->pending.clear();
}
// cp.async.commit_group / cp.async.wait_group n: the copies of every committed group but the n most recent land
// (in the order issued); the rest, and copies not yet committed, stay pending.
inline void cp_async_commit() { ++current->committed; }
inline void cp_async_wait_group(unsigned n) {
    std::vector<Thread::Copy> keep;
    for (const auto& c : current->pending) {
        if (c.group + n < current->committed) land(c);
        else keep.push_back(c);
    }
    current->pending.swap(keep);
}
}  // namespace emu
using std::max;
using std::min;
// __byte_perm(x, y, s): byte i of the result is byte (s >> 4i) & 7 of the eight bytes y:x (x the low four), as PRMT
// without its sign modes (the kernels use none).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const unsigned long long xy = (unsigned long long)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= unsigned(xy >> (8 * ((s >> (4 * i)) & 7)) & 0xFFu) << (8 * i);
    return r;
}

// The 16-byte vector types the 1D CUDA-core kernel loads and stores (kernels/cuda_cores_1d.cu).
struct double2 { double x, y; };
struct float4 { float x, y, z, w; };
inline double2 make_double2(double x, double y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

// ----------------------------------------------------------------------------------------------------------
// Warp-level instructions of the Tensor Core kernels (kernels/tensor_cores.cu, kernels/sparse_tensor_cores.cu),
// which call these in place of their inline PTX when TCADVISOR_HOST_EMU is defined.
//
// A warp collective (mma.sync, mma.sp, shfl.sync): each lane leaves its operands in its slot and yields to the
// scheduler, which runs every other live thread of the block up to its next yield; the lanes of a warp run the
// same collectives in the same order (the kernels call them in warp-uniform code), so when a lane resumes every
// lane of its warp has left its operands, and the lane computes its own results from all 32.  The slots come in
// two sets by the parity of the collective: a lane that goes on to its next collective in the same round does
// not overwrite what a later lane of its warp has yet to read.  A lane finding another at a different
// collective sets collective_mismatch (the launch returns 3).
//
// Arithmetic: FP64 products accumulated by fused multiply-adds in k order from C; TF32, FP16 and BF16 products
// (exact in double) summed with C in double and rounded once to float -- at least as accurate as the FP32
// accumulation of the hardware, whose error the checks' rounding interval bounds.  Layouts: the PTX ISA's
// "Matrix Fragments for mma.m16n8k4 / m16n8k8 / m16n8k16 / m8n8k4" and "... for sparse mma", the formulas of
// tcadvisor/transforms/rowband.py (a_pos, b_pos, c_pos) and tcadvisor/gpu/layouts.py, written out again here.
namespace emu {
inline WarpOp* warp_exchange(const WarpOp& mine) {
    Thread& t = *current;
    const unsigned par = unsigned(t.collectives & 1);
    WarpOp& slot = warp_ops[par][t.tid];
    slot = mine;
    slot.seq = t.collectives;
    sync();
    WarpOp* warp = &warp_ops[par][t.tid & ~31u];
    for (int l = 0; l < 32; ++l)
        if (warp[l].seq != t.collectives) collective_mismatch = true;
    ++t.collectives;
    return warp;
}
inline unsigned lane_of() { return current->tid & 31u; }

template <class T>
inline unsigned long long word_of(T v) {
    if constexpr (std::is_same_v<T, double>) {
        unsigned long long w;
        std::memcpy(&w, &v, 8);
        return w;
    } else if constexpr (std::is_same_v<T, float>) {
        unsigned w;
        std::memcpy(&w, &v, 4);
        return w;
    } else {
        return (unsigned long long)v;
    }
}
inline double f64_of(unsigned long long w) { double v; std::memcpy(&v, &w, 8); return v; }
inline float f32_of(unsigned w) { float v; std::memcpy(&v, &w, 4); return v; }
inline unsigned f32_bits(float v) { unsigned w; std::memcpy(&w, &v, 4); return w; }
// The Tensor Cores read the 19 bits of a TF32 operand (sign, exponent, 10 mantissa bits).
inline double tf32_of(unsigned w) { return f32_of(w & 0xFFFFE000u); }
inline double f16_of(unsigned h) {
    const unsigned short b = (unsigned short)h;
    _Float16 v;
    std::memcpy(&v, &b, 2);
    return (double)v;
}
inline double bf16_of(unsigned h) { return f32_of((h & 0xFFFFu) << 16); }
// cvt.rna.tf32.f32: nearest, ties away from zero (tcadvisor.gpu.numerics.round_tf32).
inline unsigned cvt_rna_tf32(float v) { return (f32_bits(v) + 0x1000u) & 0xFFFFE000u; }
// cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 of one value: nearest, ties to even.
inline unsigned cvt_rn_f16(float v) {
    const _Float16 h = (_Float16)v;
    unsigned short b;
    std::memcpy(&b, &h, 2);
    return b;
}
inline unsigned cvt_rn_bf16(float v) {
    const unsigned w = f32_bits(v);
    return (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
}
// Two values as one word of FP16 (f16) or BF16 halves, lo in the low half.
inline unsigned cvt_rn_16x2(bool f16, float lo, float hi) {
    return f16 ? cvt_rn_f16(lo) | cvt_rn_f16(hi) << 16 : cvt_rn_bf16(lo) | cvt_rn_bf16(hi) << 16;
}

// Operand types: 0 FP64, 1 TF32, 2 FP16, 3 BF16.
inline double half_of(int type, unsigned long long word, int e) {  // 16-bit value e (0: low) of a register
    const unsigned h = unsigned(word >> (16 * e)) & 0xFFFFu;
    return type == 2 ? f16_of(h) : bf16_of(h);
}
// fma.rn.f16x2 / fma.rn.bf16x2 (kernels/cc_values.cuh): per 16-bit lane, a·b + c rounded once to the format
// (the exact product and sum in double, then one rounding to nearest even; subnormals and overflow to
// infinity as the GPU's).  Counts two multiply-adds, one per lane.
inline double round_to_16(double x, bool f16) {
    if (!std::isfinite(x) || x == 0.0) return x;
    const int mant = f16 ? 11 : 8, emin = f16 ? -14 : -126;   // significand bits, smallest normal exponent
    const double biggest = f16 ? 65504.0 : 3.3895313892515355e38;
    const int e = std::max(std::ilogb(x), emin);
    const double q = std::ldexp(std::nearbyint(std::ldexp(x, mant - 1 - e)), e - (mant - 1));
    return std::fabs(q) > biggest ? std::copysign(INFINITY, x) : q;
}
inline unsigned fma_16x2(bool f16, unsigned a, unsigned b, unsigned c) {
    fma_count += 2;
    unsigned d = 0;
    for (int l = 0; l < 2; ++l) {
        const int type = f16 ? 2 : 3;
        const double r = round_to_16(__builtin_fma(half_of(type, a, l), half_of(type, b, l), half_of(type, c, l)), f16);  // fma is the counting macro here
        // r is representable in the format, so the float conversions below are exact
        d |= (f16 ? cvt_rn_f16((float)r) : cvt_rn_bf16((float)r)) << (16 * l);
    }
    return d;
}

// mma.sync.aligned.m{M}n8k{K}: A (M x K) row-major fragments, B (K x 8), C/D (M x 8).
template <int M, int K, int TYPE, class AR, class BR, class CR, int NA_, int NB_, int NC_>
void mma_sync(CR (&d)[NC_], const AR (&a)[NA_], const BR (&b)[NB_], const CR (&c)[NC_]) {
    static_assert(NA_ <= 8 && NB_ <= 4 && NC_ <= 4, "fragment larger than a slot");
    WarpOp mine{};
    for (int i = 0; i < NA_; ++i) mine.a[i] = word_of(a[i]);
    for (int i = 0; i < NB_; ++i) mine.b[i] = word_of(b[i]);
    for (int i = 0; i < NC_; ++i) mine.c[i] = double(c[i]);
    const WarpOp* w = warp_exchange(mine);
    double A[16][16] = {}, B[16][8] = {}, C[16][8] = {};
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        if (TYPE >= 2) {  // m16n8k16 .f16/.bf16: register i holds halves 2i (low) and 2i + 1
            for (int e = 0; e < 8; ++e)
                A[g + 8 * ((e >> 1) & 1)][2 * t + (e & 1) + 8 * (e >> 2)] = half_of(TYPE, w[lane].a[e >> 1], e & 1);
            for (int e = 0; e < 4; ++e) B[2 * t + (e & 1) + 8 * (e >> 1)][g] = half_of(TYPE, w[lane].b[e >> 1], e & 1);
        } else {
            for (int i = 0; i < NA_; ++i) {
                const int row = M == 8 ? g : g + 8 * (i & 1), k = M == 8 ? t : t + 4 * (i >> 1);
                A[row][k] = TYPE == 0 ? f64_of(w[lane].a[i]) : tf32_of(unsigned(w[lane].a[i]));
            }
            for (int j = 0; j < NB_; ++j)
                B[t + 4 * j][g] = TYPE == 0 ? f64_of(w[lane].b[j]) : tf32_of(unsigned(w[lane].b[j]));
        }
        for (int i = 0; i < NC_; ++i) {
            const int row = M == 8 ? g : g + 8 * (i >> 1), col = M == 8 ? 2 * t + i : 2 * t + (i & 1);
            C[row][col] = w[lane].c[i];
        }
    }
    fma_count += M * 8 * K / 32;  // the MMA's multiply-adds, a 32nd per lane (the plans' executed FLOPs)
    const int lane = int(lane_of()), g = lane >> 2, t = lane & 3;
    for (int i = 0; i < NC_; ++i) {
        const int row = M == 8 ? g : g + 8 * (i >> 1), col = M == 8 ? 2 * t + i : 2 * t + (i & 1);
        double acc = C[row][col];
        for (int k = 0; k < K; ++k)
            acc = TYPE == 0 ? __builtin_fma(A[row][k], B[k][col], acc) : acc + A[row][k] * B[k][col];
        d[i] = CR(acc);
    }
}

// mma.sp (sparsity selector 0) m16n8k32 .f16/.bf16 (TYPE 2, 3) or m16n8k16 .tf32 (TYPE 1): A compressed, 2:4 or
// 1:2, its metadata in the lanes t = 0, 1 of each quad (tcadvisor.gpu.layouts.sparse_a, sparse_meta, sparse_b).
template <int TYPE>
void mma_sp(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[4], unsigned meta, const float (&c)[4]) {
    constexpr int K = TYPE == 1 ? 16 : 32, WIDTH = TYPE == 1 ? 2 : 4;
    WarpOp mine{};
    for (int i = 0; i < 4; ++i) {
        mine.a[i] = a[i];
        mine.b[i] = b[i];
        mine.c[i] = c[i];
    }
    mine.meta = meta;
    const WarpOp* w = warp_exchange(mine);
    double A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
    int pos[16][8][2];  // kept positions of each row's group
    for (auto& row : pos)
        for (auto& grp : row) grp[0] = grp[1] = -1;
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        if (t >= 2) continue;
        for (int nb = 0; nb < 8; ++nb) {
            const unsigned v = unsigned(w[lane].meta >> (4 * nb)) & 0xFu;
            int* kept = pos[g + 8 * (nb >> 2)][4 * t + (nb & 3)];
            if (TYPE == 1) {
                kept[0] = v == 0x4u ? 0 : (v == 0xEu ? 1 : -2);  // 0b0100: position 0, 0b1110: position 1
            } else {
                kept[0] = int(v & 3u);
                kept[1] = int(v >> 2);
                if (kept[0] >= kept[1]) kept[0] = -2;
            }
        }
    }
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int r = 0; r < 4; ++r) {
            const int row = g + 8 * (r & 1), grp = t + 4 * (r >> 1);
            const int* kept = pos[row][grp];
            if (kept[0] < 0) { collective_mismatch = true; continue; }  // invalid or missing metadata
            if (TYPE == 1) {
                A[row][grp * WIDTH + kept[0]] = tf32_of(unsigned(w[lane].a[r]));
            } else {
                for (int s = 0; s < 2; ++s) A[row][grp * WIDTH + kept[s]] = half_of(TYPE, w[lane].a[r], s);
            }
        }
        for (int e = 0; e < (TYPE == 1 ? 4 : 8); ++e) {
            if (TYPE == 1) B[t + 4 * e][g] = tf32_of(unsigned(w[lane].b[e]));
            else B[8 * (e >> 1) + 2 * t + (e & 1)][g] = half_of(TYPE, w[lane].b[e >> 1], e & 1);
        }
        for (int e = 0; e < 4; ++e) C[g + 8 * (e >> 1)][2 * t + (e & 1)] = w[lane].c[e];
    }
    fma_count += 16 * 8 * K / 32;  // dense-equivalent m·n·k, as α and the plans count mma.sp
    const int lane = int(lane_of()), g = lane >> 2, t = lane & 3;
    for (int e = 0; e < 4; ++e) {
        const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
        double acc = C[row][col];
        for (int k = 0; k < K; ++k) acc += A[row][k] * B[k][col];
        d[e] = float(acc);
    }
}
// The same with FP16 accumulators (.f16.f16.f16.f16): C and D are two words of two FP16 values each, row g then row
// g + 8, column 2t in the low half.  The sum is rounded to float, then to FP16 (nearest even): at most one FP16 ulp
// from the hardware's own order and rounding, which the checks' bound for FP16 accumulators allows.
template <int TYPE>
void mma_sp(unsigned (&d)[2], const unsigned (&a)[4], const unsigned (&b)[4], unsigned meta, const unsigned (&c)[2]) {
    static_assert(TYPE == 2, "FP16 accumulators with FP16 operands only");
    float cf[4], df[4];
    for (int e = 0; e < 4; ++e) cf[e] = float(half_of(2, c[e >> 1], e & 1));
    mma_sp<TYPE>(df, a, b, meta, cf);
    for (int r = 0; r < 2; ++r)
        d[r] = cvt_rn_f16(df[2 * r]) | cvt_rn_f16(df[2 * r + 1]) << 16;
}
}  // namespace emu

// shfl.sync.down: the value of lane + delta, the caller's own where that is past the warp.
inline unsigned __shfl_down_sync(unsigned, unsigned v, unsigned delta) {
    emu::WarpOp mine{};
    mine.a[0] = v;
    const emu::WarpOp* w = emu::warp_exchange(mine);
    const unsigned src = emu::lane_of() + delta;
    return src < 32 ? unsigned(w[src].a[0]) : v;
}
// __syncwarp: a collective every lane of the warp enters; when a lane leaves it, every other lane has done what
// it did before entering (its cp.async copies landed at its own wait, its shared-memory stores).
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_exchange(emu::WarpOp{}); }
template <class T>
inline T __ldg(const T* p) { return *p; }
inline unsigned __float_as_uint(float v) { return emu::f32_bits(v); }
inline float __uint_as_float(unsigned w) { return emu::f32_of(w); }
inline double __hiloint2double(int hi, int lo) {
    const unsigned long long bits = ((unsigned long long)(unsigned)hi << 32) | (unsigned)lo;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}
// The vector types the Tensor Core kernels (and the CUDA-core kernels in FP16/BF16) load and store.
struct float2 { float x, y; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
