// Sparse Tensor Cores (2:4 / 1:2 mma.sp), kernel fusion: SPIDER's strided swap.
//
// Transformation (tcadvisor/transforms/spider.py builds the operands,
// tcadvisor/gpu/sparse_operands.py permutes, compresses and packs them): each
// non-empty line of the t-step fused kernel (1D: the kernel; 2D: a row; 3D: a
// row of a plane) is a banded L x 2L matrix, L = 16, whose columns the strided
// swap exchanged so that every group of the instruction holds at most 2 of 4
// (FP16/BF16) or 1 of 2 (TF32) non-zeros.  The compressed values and the 2-bit
// metadata are built on the host and sit in registers (or L1) for the whole launch.
// At r·t = 8 (L = 2R) the band is too dense for 2:4: each line is two matrices, its
// even and its odd taps, each 1:2 after the swap, both applied to the line's B
// fragments (HALVES = 2: twice the mma.sp per line, the same loads and accumulators).
// In 1D (nothing pending between slices) r·t goes on to 64: the window is NB blocks of
// 2L columns (L + 2R in whole blocks), each loaded and swapped like the one block, every
// line its two halves; KC counts the K chunks of all blocks.
//
// One warp computes a tile of 8 segments x 16 outputs along x (the instruction's
// N = 8 columns are the 8 segments), for one inner row (3D), streaming the
// outermost axis (y in 2D, z in 3D): every input slice is loaded once into B
// fragments and multiplied by every kernel line, whose partial results go to the
// NS-1 pending output slices held in accumulator fragments (as in
// kernels/tensor_cores.cu).  FP16/BF16 issue one mma.sp m16n8k32 per line, TF32
// two mma.sp m16n8k16; accumulation is FP32; the output is rounded to the storage
// type (float, half, or bfloat16 bits) when stored.
//
// PTX ISA sections relied on: "Sparse matrix storage" (2:4 for .f16/.bf16 with
// 2-bit indices, 1:2 for .tf32 with the 4-bit values 0b0100/0b1110; sparsity
// selector 0 = threads T0, T1 of each quad for m16n8k32 and .tf32 m16n8k16),
// "Matrix Fragments for sparse mma.m16n8k32 with .f16/.bf16 type", "Matrix
// Fragments for sparse mma.m16n8k16 with .tf32 floating point type", "Matrix
// Fragments for mma.m16n8k16 with floating point type" (the f32 accumulators),
// "Warp-level matrix multiply-accumulate instructions: mma.sp" (the
// ::ordered_metadata variant, used on sm_90; plain mma.sp on sm_80/86/89), and
// cvt (.rna.tf32.f32, .rn.f16x2.f32, .rn.bf16x2.f32).  The same layouts, in
// Python, are in tcadvisor/gpu/layouts.py.
//
// The permutations are folded into addresses: lane (g, t) loads ONE 16-byte
// vector per K chunk from window column START(t, kc) of segment g (window =
// input columns x0 + 16g - R ... + 32 NB - 1); B element e is vector element e (FP16/
// BF16) or e ^ (t & 1) (TF32).  Instruction row m computes segment output
// 2(m % 8) + m / 8, so lane (g, t) holds outputs 2g and 2g+1 of segments 2t and
// 2t+1 and writes each pair with one store.
//
// Compile-time parameters (-D, prefixed K_): K_PREC (0: TF32 on float fields,
// 1: FP16 on half fields, 2: BF16 on bfloat16 bit patterns), K_R (fused radius,
// at most 8 in 2D/3D, 64 in 1D), K_NS (kernel extent along the stream axis: 1 in 1D), K_NI (inner
// extent: K_NS in 3D, else 1), K_LINEMASK (bit p*NI+a set when kernel line (p, a)
// is non-empty; lines 0-63), K_LINEMASK_HI (only with more than 64 lines: lines
// 64-127), K_WX, K_WI (warps per block along x / the inner axis), K_AREGS
// (1: weight fragments in registers; 0: read from L1 at every use), K_PF (0-2: slices
// loaded ahead while this one is multiplied), K_MINB (blocks per SM for the register allocation),
// K_ORDERED (optional; default 1 on sm_90+, else 0), K_UNROLL (optional, default 1: slices per trip of
// the streaming loop), K_L2PF (optional; slices ahead whose input rows the warp asks the L2 for,
// kernels/l2_prefetch.cuh; 0 or absent: none), K_ASMEM (optional, with K_AREGS 0: the number of non-empty
// lines, whose weight fragments are copied into shared memory once per block and read from there before
// each use; 0 or absent: not in shared memory),
// K_IR (optional: output lines per warp, 1, 2 or 4, default 1; in 3D adjacent inner rows, in 1D/2D adjacent
// tiles of TILE_X columns along x), K_BSTAGES (optional, 2-8; 0 or absent: none, and with it K_PF must be 0): input
// slices staged in shared memory by cp.async, K_BSTAGES - 1 of them in flight while one is multiplied;
// K_ALIGN (optional: bit 0 16-byte window loads, bit 1 pair stores; absent: the kernel argument ``align`` decides at
// run time): the alignment the kernel is compiled for.  K_WHOLE (optional, default 0): every lane loads both halves
// of its window itself instead of taking the upper one from its neighbour by shuffle.  K_ACC2 (optional, 1D only,
// default 0): the MMAs of a slice go alternately into two accumulator sets, added before the store.  K_ACC16
// (optional, FP16 only, default 0): the accumulators are FP16 (mma.sp ... .f16.f16.f16.f16), as SPIDER's are.
//
// Why K_ASMEM: every mma.sp needs its weight fragment, 20 bytes per lane (640 per warp), and reading it
// from L1 at every use was what the 3D kernel waited for (Box-3D1R x2: 25 fragment loads of 16 + 4 bytes
// per slice; the compiler issues them early, 210-255 registers, two blocks per SM).  Volatile loads from
// shared memory stay next to their MMA, as in kernels/tensor_cores.cu (K_BSMEM).
// Why K_IR = 2 (or 4): in 3D a warp computing inner rows I and I + 1 applies each weight fragment to two input
// rows (row a for output I, row a + 1 for output I + 1): one fragment load per two MMAs, and NI + 1 input
// rows loaded per slice for two output rows instead of 2 NI.  In 1D/2D there is no inner axis and a warp's
// IR lines are IR adjacent x tiles: each weight fragment read still serves IR MMAs (the lines' inputs are
// disjoint windows, IR per slice), at the price of IR sets of pending accumulators.
// Why K_WHOLE and K_ACC2 (1D beyond r·t = 8): there a warp is bound by the instructions it issues, not by the memory
// or the tensor pipe (sptc-1d-deep-ncu: 58-65 % of the issue slots used, 24 instructions per mma.sp at r·t = 64).
// Taking the neighbour's half costs four shuffles and four selects per 16-byte vector where a second load is one
// instruction; and the 2 NB MMAs of a slice all accumulate into one fragment, each waiting for the one before.
// Why K_ACC16: at r·t = 7 in 2D a warp with two x tiles holds 14 pending output slices of 4 FP32 accumulators per
// tile, 112 registers of its 224 (sptc-stalls-now: 2 blocks of 4 warps per SM, 55 % of the stall samples "wait"
// between independent MMAs); FP16 accumulators are two registers per fragment.  They round every MMA's sum to
// FP16, so the sweep's error bound grows with the MMAs per output (tcadvisor/gpu/sparse_tensor_cores.py).
// Why K_BSTAGES: slices loaded ahead into registers (K_PF) are moved into place at every slice, and a move of a
// register whose load is still in flight waits for it -- and, the loads sharing a scoreboard, for the later
// slice's loads too: Nsight Compute's stall samples of Box-2D1R x7 FP16 (K_PF 2) put 12 % of all samples on the
// first of those moves (long scoreboard), so the prefetch reached one slice ahead, not two.  cp.async copies into
// per-warp stages of shared memory are waited for by group (cp.async.wait_group), which waits for none of the
// later ones, and the odd lanes read their neighbour's half of the window from its stage instead of by shuffle.

#define PREC K_PREC
#define R K_R
#define NS K_NS
#define NI K_NI
#define LINEMASK K_LINEMASK
#define WX K_WX
#define WI K_WI
#define A_IN_REGS K_AREGS
#define PF K_PF
#define MINB K_MINB
#ifndef K_UNROLL
#define K_UNROLL 1
#endif
#ifndef K_L2PF
#define K_L2PF 0
#endif
#define L2PF K_L2PF
#if L2PF > 0
#include "l2_prefetch.cuh"
#endif
#ifndef K_ASMEM
#define K_ASMEM 0
#endif
#define A_SHARED (K_ASMEM > 0)
#define A_SLOTS K_ASMEM
#if A_SHARED && A_IN_REGS
#error "K_ASMEM reads the weight fragments from shared memory; K_AREGS must be 0"
#endif
#ifndef K_IR
#define K_IR 1
#endif
#define IR K_IR
#if IR != 1 && IR != 2 && IR != 4
#error "K_IR: a warp computes 1, 2 or 4 inner rows"
#endif
#ifndef K_BSTAGES
#define K_BSTAGES 0
#endif
#define BSTAGES K_BSTAGES
#if BSTAGES != 0 && (BSTAGES < 2 || BSTAGES > 8)
#error "K_BSTAGES: 2 to 8 stages of input slices in shared memory"
#endif
#if BSTAGES && PF
#error "K_BSTAGES stages the slices ahead in shared memory; K_PF (slices ahead in registers) must be 0"
#endif
#define NROWS_IN (NI + IR - 1)  // input rows (1D/2D: x tiles) per slice a warp loads
#define X_LINES (NI == 1)       // 1D/2D: the IR lines of a warp lie along x, TILE_X columns apart
#define TCA_STR(x) #x
#define TCA_UNROLL(n) _Pragma(TCA_STR(unroll n))

#ifndef K_ORDERED
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define K_ORDERED 1
#else
#define K_ORDERED 0
#endif
#endif

#define L 16
#define TILE_X (8 * L)
#define RS ((NS - 1) / 2)
#define RI ((NI - 1) / 2)
#define NPEND (NS - 1)
#ifndef K_WHOLE
#define K_WHOLE 0
#endif
#ifndef K_ACC2
#define K_ACC2 0
#endif
// The lane takes its window's upper half from lane + 3 (by shuffle or from its stage) unless it loads it itself.
#define NEIGHBOUR_HALF (!K_WHOLE)
#ifndef K_ACC16
#define K_ACC16 0
#endif
#if K_ACC16 && PREC != 1
#error "K_ACC16: FP16 accumulators with FP16 operands only (mma.sp has no BF16 or TF32 accumulator)"
#endif
#if K_ACC16 && K_ACC2
#error "K_ACC16 and K_ACC2: the second accumulator chain is added in FP32"
#endif
// An accumulator fragment: 4 FP32 values (rows g, g + 8 x columns 2t, 2t + 1), or with K_ACC16 2 words of two FP16
// values each (row g, then row g + 8; column 2t in the low half).
#if K_ACC16
typedef unsigned acc_t;
#define ACC_N 2
#else
typedef float acc_t;
#define ACC_N 4
#endif
#if K_ACC2 && NS != 1
#error "K_ACC2: two accumulator sets per output in 1D only (NS = 1: one chain of MMAs per slice)"
#endif
#define NLINES (NS * NI)
#if NLINES > 64
// More than 64 kernel lines (3D at r·t = 4 or 5: 81 or 121): K_LINEMASK holds lines 0-63, K_LINEMASK_HI lines
// 64-127.  Configurations of at most 64 lines pass no K_LINEMASK_HI and take the one-word test below.
#ifndef K_LINEMASK_HI
#error "more than 64 kernel lines: K_LINEMASK_HI must hold lines 64-127"
#endif
#if NLINES > 128
#error "the kernel line mask holds at most 128 lines (3D: r·t <= 5)"
#endif
#define LINE_BIT(i) ((i) < 64 ? ((unsigned long long)(LINEMASK) >> ((i) & 63)) & 1ULL \
                              : ((unsigned long long)(K_LINEMASK_HI) >> (((i) - 64) & 63)) & 1ULL)
#define LINE_ON(p, a) LINE_BIT((p) * NI + (a))
#else
#define LINE_ON(p, a) (((unsigned long long)(LINEMASK) >> ((p) * NI + (a))) & 1ULL)
#endif

#if A_SHARED
__device__ __forceinline__ int popc64(unsigned long long x) {
#if defined(TCADVISOR_HOST_EMU)
    return __builtin_popcountll(x);
#else
    return __popcll(x);
#endif
}
// Position of kernel line li among the non-empty lines: where its fragments sit in shared memory.
// li is a compile-time constant wherever a fragment is read, so this folds to a number.
__device__ __forceinline__ int line_slot(int li) {
#if NLINES > 64
    return li < 64 ? popc64((unsigned long long)(LINEMASK) & ((1ULL << li) - 1ULL))
                   : popc64((unsigned long long)(LINEMASK))
                         + popc64((unsigned long long)(K_LINEMASK_HI) & ((1ULL << (li - 64)) - 1ULL));
#else
    return popc64((unsigned long long)(LINEMASK) & ((1ULL << li) - 1ULL));
#endif
}
__device__ __forceinline__ bool line_on(int li) {
#if NLINES > 64
    return LINE_BIT(li);
#else
    return ((unsigned long long)(LINEMASK) >> li) & 1ULL;
#endif
}
// One weight fragment (16 bytes of values, 4 of metadata) from shared memory.  volatile: the loads stay where
// they are written, next to their MMA, instead of being hoisted into registers.
__device__ __forceinline__ void lds_frag(const uint4* pv, const unsigned* pm, unsigned (&a)[4], unsigned& m) {
#if defined(TCADVISOR_HOST_EMU)
    const volatile uint4* w = pv;
    a[0] = w->x; a[1] = w->y; a[2] = w->z; a[3] = w->w;
    m = *(volatile const unsigned*)pm;
#else
    const unsigned av = (unsigned)__cvta_generic_to_shared(pv), am = (unsigned)__cvta_generic_to_shared(pm);
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(av));
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(m) : "r"(am));
#endif
}
#endif

#if R > L / 2 && NLINES > 1
#error "2D and 3D: the strided swap with L = 16 takes a fused radius of at most 8"
#endif
#if R > 64
#error "1D: a fused radius of at most 64"
#endif
// Matrices per kernel line: from R = L / 2 on the band is too dense for 2:4 and each line is two matrices, its taps
// at even and at odd offsets (tcadvisor/transforms/spider.py, halves), both multiplied by the line's B fragments.
#define HALVES (R >= L / 2 ? 2 : 1)
// Blocks of 2L window columns per line (1 up to R = 8; in 1D beyond, L + 2R columns in whole blocks): block b is
// loaded, ordered and swapped as the first, 2L columns further on (tcadvisor/gpu/sparse_operands.py, lane_load).
#define NB ((L + 2 * R + 2 * L - 1) / (2 * L))

#if PREC == 0
typedef float real;             // storage: float; operands TF32
#define KCB 2                   // two m16n8k16 per block (K = 2L = 32)
#define VEC 4                   // elements per 16-byte vector
#define START(t, kc) (((kc) / KCB) * 2 * L + ((t) & 1) * L + 8 * ((kc) % KCB) + 4 * ((t) >> 1))
#else
typedef unsigned short real;    // storage: FP16 or BF16 bit patterns
#define KCB 1                   // one m16n8k32 per block
#define VEC 8
#define START(t, kc) ((kc) * 2 * L + ((t) & 1) * L + 8 * ((t) >> 1))
#endif
#define KC (NB * KCB)           // K chunks (B fragments) per line and input row
#define KA (HALVES * KC)        // A fragments (instructions) per line: fragment hv * KC + kc multiplies B chunk kc

#if K_ORDERED
#define MMA_SP "mma.sp::ordered_metadata.sync.aligned."
#else
#define MMA_SP "mma.sp.sync.aligned."
#endif

__device__ __forceinline__ void mma_sp(acc_t (&d)[ACC_N], const unsigned (&a)[4], const unsigned (&b)[4],
                                       unsigned meta, const acc_t (&c)[ACC_N]) {
#if defined(TCADVISOR_HOST_EMU)  // the warp's mma.sp computed on the CPU (tests/host_cuda/emu.h)
    emu::mma_sp<PREC == 0 ? 1 : PREC + 1>(d, a, b, meta, c);
#elif K_ACC16
    asm(MMA_SP "m16n8k32.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7,%8,%9}, {%10,%11}, %12, 0x0;"
        : "=r"(d[0]), "=r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
          "r"(c[0]), "r"(c[1]), "r"(meta));
#elif PREC == 0
    asm(MMA_SP "m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, %16, 0x0;"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "r"(meta));
#elif PREC == 1
    asm(MMA_SP "m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, %16, 0x0;"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "r"(meta));
#elif PREC == 2
    asm(MMA_SP "m16n8k32.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, %16, 0x0;"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "r"(meta));
#else
#error "K_PREC must be 0 (TF32), 1 (FP16) or 2 (BF16)"
#endif
}

#if PREC == 0
__device__ __forceinline__ unsigned to_tf32(float v) {
#if defined(TCADVISOR_HOST_EMU)
    return emu::cvt_rna_tf32(v);
#else
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
#endif
}
#else
// Two FP32 accumulators as one 32-bit word of 16-bit values: lo at the lower address.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
#if defined(TCADVISOR_HOST_EMU)
    r = emu::cvt_rn_16x2(PREC == 1, lo, hi);
#elif PREC == 1
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}
#endif

__device__ __forceinline__ int opaque_zero() {
#if defined(TCADVISOR_HOST_EMU)
    return 0;
#else
    int z;
    asm volatile("mov.u32 %0, 0;" : "=r"(z));
    return z;
#endif
}

// B fragments of one input slice for every inner offset a and K chunk: lane (g, t) needs the
// 16-byte vector at window column START(t, kc) of its segment g.  Windows of adjacent segments
// overlap by L columns: the upper half of segment g's window (odd t) is the lower half of segment
// g + 1's, which lane (g + 1, t - 1) = lane + 3 loads anyway.  So odd lanes of segments 0..6 take
// it by a warp shuffle instead of a second load, which halves the load requests per slice (the
// first version loaded both and was L2-throughput bound: L2 87%, DRAM 38% on the H100).
__device__ __forceinline__ uint4 shared_half(uint4 w, bool from_next) {
    uint4 s;
    s.x = __shfl_down_sync(0xffffffffu, w.x, 3);
    s.y = __shfl_down_sync(0xffffffffu, w.y, 3);
    s.z = __shfl_down_sync(0xffffffffu, w.z, 3);
    s.w = __shfl_down_sync(0xffffffffu, w.w, 3);
    return from_next ? s : w;
}

// Loading a slice is split in two so that slices loaded ahead (K_PF) stay in flight: fetch_b only
// issues the loads into raw registers; form_b, when the slice's turn comes, takes the neighbour's half
// by shuffle (which waits for the data) and converts to TF32 where needed.
// With IR > 1, input rows a = 0 .. NI + IR - 2 serve output rows I .. I + IR - 1; where some of those are past
// the grid (an inner extent not a multiple of IR) their last input rows would be past the ghost rows, so row
// offsets stop at ``last`` (those rows' results are computed and not stored).  In 1D/2D ``pitch_i`` is the
// step between the warp's x tiles (TILE_X) and ``last`` the last tile that starts inside the grid.
__device__ __forceinline__ void fetch_b(uint4 (&raw)[NROWS_IN][KC], const real* row, long long pitch_i,
                                        int t4, int g, bool vec, int last) {
    const bool from_next = NEIGHBOUR_HALF && (t4 & 1) && g < 7;
#pragma unroll
    for (int a = 0; a < NROWS_IN; ++a) {
#if IR > 1
        const int off = min(a - RI, last);
#else
        const int off = a - RI;
        (void)last;
#endif
#pragma unroll
        for (int kc = 0; kc < KC; ++kc) {
            const real* p = row + (long long)off * pitch_i + START(t4, kc);
            uint4 w = make_uint4(0u, 0u, 0u, 0u);
            if (vec) {
                if (!from_next) w = __ldg(reinterpret_cast<const uint4*>(p));
            } else {  // unaligned field: every lane loads its own elements
#if PREC == 0
                w.x = __float_as_uint(__ldg(p)); w.y = __float_as_uint(__ldg(p + 1));
                w.z = __float_as_uint(__ldg(p + 2)); w.w = __float_as_uint(__ldg(p + 3));
#else
                w.x = (unsigned)__ldg(p) | ((unsigned)__ldg(p + 1) << 16);
                w.y = (unsigned)__ldg(p + 2) | ((unsigned)__ldg(p + 3) << 16);
                w.z = (unsigned)__ldg(p + 4) | ((unsigned)__ldg(p + 5) << 16);
                w.w = (unsigned)__ldg(p + 6) | ((unsigned)__ldg(p + 7) << 16);
#endif
            }
            raw[a][kc] = w;
        }
    }
}

__device__ __forceinline__ void form_b(unsigned (&bf)[NROWS_IN][KC][4], const uint4 (&raw)[NROWS_IN][KC], int t4,
                                       int g, bool vec) {
    const bool from_next = NEIGHBOUR_HALF && vec && (t4 & 1) && g < 7;
#pragma unroll
    for (int a = 0; a < NROWS_IN; ++a) {
#pragma unroll
        for (int kc = 0; kc < KC; ++kc) {
            const uint4 w = shared_half(raw[a][kc], from_next);
#if PREC == 0
            // odd lanes hold the other column of each swapped pair: element e is float e ^ 1
            const bool odd = t4 & 1;
            bf[a][kc][0] = to_tf32(__uint_as_float(odd ? w.y : w.x));
            bf[a][kc][1] = to_tf32(__uint_as_float(odd ? w.x : w.y));
            bf[a][kc][2] = to_tf32(__uint_as_float(odd ? w.w : w.z));
            bf[a][kc][3] = to_tf32(__uint_as_float(odd ? w.z : w.w));
#else
            bf[a][kc][0] = w.x; bf[a][kc][1] = w.y; bf[a][kc][2] = w.z; bf[a][kc][3] = w.w;
#endif
        }
    }
}

#if BSTAGES
// Unaligned field: every lane loads its own elements.
__device__ __forceinline__ uint4 load_unaligned(const real* p) {
    uint4 w;
#if PREC == 0
    w.x = __float_as_uint(__ldg(p)); w.y = __float_as_uint(__ldg(p + 1));
    w.z = __float_as_uint(__ldg(p + 2)); w.w = __float_as_uint(__ldg(p + 3));
#else
    w.x = (unsigned)__ldg(p) | ((unsigned)__ldg(p + 1) << 16);
    w.y = (unsigned)__ldg(p + 2) | ((unsigned)__ldg(p + 3) << 16);
    w.z = (unsigned)__ldg(p + 4) | ((unsigned)__ldg(p + 5) << 16);
    w.w = (unsigned)__ldg(p + 6) | ((unsigned)__ldg(p + 7) << 16);
#endif
    return w;
}

// Input row offset a of a slice (see fetch_b): rows past ``last`` are clamped to it.
__device__ __forceinline__ int row_offset(int a, int last) {
#if IR > 1
    return min(a - RI, last);
#else
    (void)last;
    return a - RI;
#endif
}

// One B fragment from the lane's window vector.
__device__ __forceinline__ void to_frag(unsigned (&f)[4], uint4 w, int t4) {
#if PREC == 0
    // odd lanes hold the other column of each swapped pair: element e is float e ^ 1
    const bool odd = t4 & 1;
    f[0] = to_tf32(__uint_as_float(odd ? w.y : w.x));
    f[1] = to_tf32(__uint_as_float(odd ? w.x : w.y));
    f[2] = to_tf32(__uint_as_float(odd ? w.w : w.z));
    f[3] = to_tf32(__uint_as_float(odd ? w.z : w.w));
#else
    (void)t4;
    f[0] = w.x; f[1] = w.y; f[2] = w.z; f[3] = w.w;
#endif
}

#endif

#if BSTAGES
// A stage holds one slice's window vectors of a warp: [NROWS_IN][KC][32 lanes] x 16 bytes.
#define STAGE_VECS (NROWS_IN * KC * 32)
#include "cp_async.cuh"
// One slice into a stage: lanes that take their window's upper half from the neighbour (aligned fields) copy
// nothing; an unaligned field is loaded element by element and stored (a plain store: visible after __syncwarp).
__device__ __forceinline__ void stage_b(uint4* stage, const real* row, long long pitch_i, int t4, int g, int lane,
                                        bool vec, int last) {
    const bool from_next = NEIGHBOUR_HALF && (t4 & 1) && g < 7;
#pragma unroll
    for (int a = 0; a < NROWS_IN; ++a) {
        const int off = row_offset(a, last);
#pragma unroll
        for (int kc = 0; kc < KC; ++kc) {
            const real* p = row + (long long)off * pitch_i + START(t4, kc);
            uint4* d = stage + (a * KC + kc) * 32 + lane;
            if (vec) {
                if (!from_next) copy16_async(d, p);
            } else {
                *d = load_unaligned(p);
            }
        }
    }
}
// The slice's B fragments from its stage: lane + 3's vector where the window's upper half is the neighbour's.
__device__ __forceinline__ void read_b(unsigned (&bf)[NROWS_IN][KC][4], const uint4* stage, int t4, int g, int lane,
                                       bool vec) {
    const int src = (NEIGHBOUR_HALF && vec && (t4 & 1) && g < 7) ? lane + 3 : lane;
#pragma unroll
    for (int a = 0; a < NROWS_IN; ++a) {
#pragma unroll
        for (int kc = 0; kc < KC; ++kc) to_frag(bf[a][kc], stage[(a * KC + kc) * 32 + src], t4);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(32 * WX * WI, MINB)
sptc_stream(const real* __restrict__ in, real* __restrict__ out, const uint4* __restrict__ avals,
            const unsigned* __restrict__ ameta, int nx, int ni, int ns, long long pitch_i, long long pitch_s,
            int Gx, int Gi, int Gs, int slices_per_block, int align)
{
#ifdef K_ALIGN
    // Compiled for the alignment of the fields it runs on (the host compiles another variant for a field that
    // differs): with a runtime flag the streaming loop kept both paths, the other predicated off -- Nsight's SASS of
    // Box-2D1R x7 FP16 issued the 8 scalar loads of the unaligned path, their packing and addresses every slice.
    const bool vec_loads = K_ALIGN & 1, vec_stores = (K_ALIGN >> 1) & 1;
    (void)align;
#else
    const bool vec_loads = align & 1, vec_stores = (align >> 1) & 1;
#endif
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t4 = lane & 3;
    const int X0 = (blockIdx.x * WX + warp % WX) * TILE_X * (X_LINES ? IR : 1);
    const int I = (blockIdx.y * WI + warp / WX) * (X_LINES ? 1 : IR);  // first inner output row (0 in 1D/2D)
    const int S0 = blockIdx.z * slices_per_block;
    const int S1 = min(S0 + slices_per_block, ns);
#if A_SHARED || BSTAGES
    extern __shared__ __align__(16) unsigned char smem_raw[];
#endif
#if A_SHARED
    // Every warp of the block reads the same fragments: one copy of the non-empty lines per block, before
    // any warp leaves.  Values first (16 bytes per lane), then metadata (4 bytes per lane).
    uint4* ash = reinterpret_cast<uint4*>(smem_raw);
    unsigned* msh = reinterpret_cast<unsigned*>(ash + A_SLOTS * KA * 32);
    for (int i = threadIdx.x; i < NLINES * KA * 32; i += blockDim.x) {
        const int li = i / (KA * 32);
        if (line_on(li)) {
            const int at = line_slot(li) * KA * 32 + i % (KA * 32);
            ash[at] = avals[i];
            msh[at] = ameta[i];
        }
    }
    __syncthreads();
#endif
    if (I >= ni || X0 >= nx || S0 >= ns) return;  // no block-level barriers below

    // Weight fragments: 4 registers of compressed values and 1 of metadata per line and A fragment.
#if A_IN_REGS
    unsigned av[NLINES][KA][4], am[NLINES][KA];
#pragma unroll
    for (int li = 0; li < NLINES; ++li)
#pragma unroll
        for (int ka = 0; ka < KA; ++ka) {
            if (LINE_ON(li / NI, li % NI)) {
                const uint4 w = __ldg(avals + (li * KA + ka) * 32 + lane);
                av[li][ka][0] = w.x; av[li][ka][1] = w.y; av[li][ka][2] = w.z; av[li][ka][3] = w.w;
                am[li][ka] = __ldg(ameta + (li * KA + ka) * 32 + lane);
            }
        }
#define AFRAG(li_, kc_, a_, m_) { _Pragma("unroll") for (int q_ = 0; q_ < 4; ++q_) a_[q_] = av[li_][kc_][q_]; \
        m_ = am[li_][kc_]; }
#elif A_SHARED
#define AFRAG(li_, kc_, a_, m_) { const int at_ = (line_slot(li_) * KA + (kc_)) * 32 + lane;                \
        lds_frag(ash + at_, msh + at_, a_, m_); }
#else
    // Weight fragments read from L1 at every use.  The lane's base pointers are re-derived in every
    // iteration from an opaque zero, so the compiler can neither hoist these loop-invariant loads
    // into registers (what K_AREGS = 1 does on purpose) nor keep one address register per line.
#define AFRAG(li_, kc_, a_, m_) { const uint4 w_ = __ldg(abase + ((li_) * KA + (kc_)) * 32);             \
        a_[0] = w_.x; a_[1] = w_.y; a_[2] = w_.z; a_[3] = w_.w; m_ = __ldg(mbase + ((li_) * KA + (kc_)) * 32); }
#endif

    // pend[h][m]: pending output slice m of inner row I + h.
    acc_t pend[IR][NPEND > 0 ? NPEND : 1][ACC_N];
#pragma unroll
    for (int h = 0; h < IR; ++h)
#pragma unroll
        for (int m = 0; m < (NPEND > 0 ? NPEND : 1); ++m)
#pragma unroll
            for (int e = 0; e < ACC_N; ++e) pend[h][m][e] = 0;  // +0 in FP32, or two FP16 +0

    // Window origin of this lane's segment g in inner row I; input rows past ``last`` (relative to I) are
    // outside the field's ghost rows (only with IR = 2 and an odd inner extent).
    const real* base = in + (long long)(Gi + I) * pitch_i + Gx + X0 + L * g - R;
#if X_LINES
    // The warp's lines are x tiles TILE_X apart: the step between them, and the last one that starts in the grid.
    const long long step_i = TILE_X;
    const int last = (nx - 1 - X0) / TILE_X;
#else
    const long long step_i = pitch_i;
    const int last = ni - 1 + RI - I;
#endif

    // Apply every kernel line (p, a) of stream offset p to the B fragments of this slice: input row a + h
    // for inner output row I + h, one fragment load for the IR MMAs (and at R = L / 2 each half of the line).
// With K_ACC2 the odd MMAs of the chain go into accb_ (the caller adds it to acc_); without, accb_ is not touched.
#define CHAIN(p_, acc_, accb_)                                                                 \
    {                                                                                          \
        _Pragma("unroll") for (int a_ = 0; a_ < NI; ++a_) {                                    \
            if (LINE_ON(p_, a_)) {                                                             \
                _Pragma("unroll") for (int kc_ = 0; kc_ < KC; ++kc_) {                         \
                    _Pragma("unroll") for (int hv_ = 0; hv_ < HALVES; ++hv_) {                 \
                        unsigned af_[4], mf_;                                                  \
                        AFRAG((p_) * NI + a_, hv_ * KC + kc_, af_, mf_);                       \
                        const bool second_ = K_ACC2 && (((a_ * KC + kc_) * HALVES + hv_) & 1); \
                        _Pragma("unroll") for (int h_ = 0; h_ < IR; ++h_) {                    \
                            if (second_) mma_sp(accb_[h_], af_, bf[a_ + h_][kc_], mf_, accb_[h_]); \
                            else mma_sp(acc_[h_], af_, bf[a_ + h_][kc_], mf_, acc_[h_]);       \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

    unsigned bf[NROWS_IN][KC][4];
    uint4 cur[NROWS_IN][KC];
#if L2PF > 0
    // The warp's windows cover input columns x0 - R ... x0 - R + TILE_X + (2 NB - 1) L - 1 of each row.
    const real* strip = in + (long long)(Gi + I) * pitch_i + Gx + X0 - R;
#if L2_PREFETCH_ONE_THREAD
#define L2_ROWS(j_)                                                                            \
    {                                                                                          \
        if (lane < NROWS_IN)                                                                   \
            l2_prefetch_run(strip + (long long)(Gs + (j_)) * pitch_s + (long long)min(lane - RI, last) * step_i, \
                            TILE_X + (2 * NB - 1) * L, lane);                                 \
    }
#else
#define L2_ROWS(j_)                                                                            \
    {                                                                                          \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
            l2_prefetch_run(strip + (long long)(Gs + (j_)) * pitch_s + (long long)min(a_ - RI, last) * step_i, \
                            TILE_X + (2 * NB - 1) * L, lane);                                 \
    }
#endif
    for (int p = 0; p < L2PF; ++p)
        if (S0 - RS + p < S1 + RS) L2_ROWS(S0 - RS + p);
#endif
#if BSTAGES
    // This warp's stages follow the weight fragments (A_SLOTS lines of 20 bytes per lane: a multiple of 16).
    uint4* stages = reinterpret_cast<uint4*>(smem_raw + (A_SHARED ? A_SLOTS * KA * 32 * 20 : 0))
                    + warp * (BSTAGES * STAGE_VECS);
#pragma unroll
    for (int p = 0; p < BSTAGES - 1; ++p) {
        if (S0 - RS + p < S1 + RS)
            stage_b(stages + p * STAGE_VECS, base + (long long)(Gs + S0 - RS + p) * pitch_s, step_i, t4, g, lane,
                    vec_loads, last);
        commit_copies();  // one group per slice, empty past the end, so that the count of groups in flight holds
    }
    int now = 0, fill = BSTAGES - 1;  // the stage of this slice, and the one slice j + BSTAGES - 1 goes into
#endif
#if PF > 0
    uint4 rn[PF][NROWS_IN][KC];  // the next PF slices, raw, in flight while this one is multiplied
#pragma unroll
    for (int p = 0; p < PF; ++p)
        if (S0 - RS + p < S1 + RS)
            fetch_b(rn[p], base + (long long)(Gs + S0 - RS + p) * pitch_s, step_i, t4, g, vec_loads, last);
#endif
    // K_UNROLL slices per trip (default 1).
    TCA_UNROLL(K_UNROLL)
    for (int j = S0 - RS; j < S1 + RS; ++j) {
#if L2PF > 0
        if (j + L2PF < S1 + RS) L2_ROWS(j + L2PF);
#endif
#if BSTAGES
        __syncwarp();  // every lane has read the stage refilled now (it held slice j - 1)
        if (j + BSTAGES - 1 < S1 + RS)
            stage_b(stages + fill * STAGE_VECS, base + (long long)(Gs + j + BSTAGES - 1) * pitch_s, step_i, t4, g,
                    lane, vec_loads, last);
        commit_copies();
        wait_copies<BSTAGES - 1>();  // slice j's group has landed; the later ones may still be in flight
        __syncwarp();  // and so have the other lanes' copies of it
        read_b(bf, stages + now * STAGE_VECS, t4, g, lane, vec_loads);
        now = now + 1 == BSTAGES ? 0 : now + 1;
        fill = fill + 1 == BSTAGES ? 0 : fill + 1;
#elif PF > 0
#pragma unroll
        for (int a = 0; a < NROWS_IN; ++a)
#pragma unroll
            for (int kc = 0; kc < KC; ++kc) {
                cur[a][kc] = rn[0][a][kc];
#pragma unroll
                for (int p = 0; p + 1 < PF; ++p) rn[p][a][kc] = rn[p + 1][a][kc];
            }
        if (j + PF < S1 + RS)
            fetch_b(rn[PF - 1], base + (long long)(Gs + j + PF) * pitch_s, step_i, t4, g, vec_loads, last);
        form_b(bf, cur, t4, g, vec_loads);
#else
        fetch_b(cur, base + (long long)(Gs + j) * pitch_s, step_i, t4, g, vec_loads, last);
        form_b(bf, cur, t4, g, vec_loads);
#endif
#if !A_IN_REGS && !A_SHARED
        const int z_ = opaque_zero();
        const uint4* abase = avals + lane + z_;
        const unsigned* mbase = ameta + lane + z_;
#endif
        acc_t done[IR][ACC_N];
#pragma unroll
        for (int h = 0; h < IR; ++h)
#pragma unroll
            for (int e = 0; e < ACC_N; ++e) done[h][e] = NPEND > 0 ? pend[h][0][e] : (acc_t)0;
#if K_ACC2
        float done2[IR][4];
#pragma unroll
        for (int h = 0; h < IR; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) done2[h][e] = 0.f;
        CHAIN(NS - 1, done, done2);
#pragma unroll
        for (int h = 0; h < IR; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) done[h][e] += done2[h][e];
#else
        CHAIN(NS - 1, done, done);
#endif
#pragma unroll
        for (int m = 1; m < NPEND; ++m) {
            acc_t acc[IR][ACC_N];
#pragma unroll
            for (int h = 0; h < IR; ++h)
#pragma unroll
                for (int e = 0; e < ACC_N; ++e) acc[h][e] = pend[h][m][e];
            CHAIN(NS - 1 - m, acc, acc);
#pragma unroll
            for (int h = 0; h < IR; ++h)
#pragma unroll
                for (int e = 0; e < ACC_N; ++e) pend[h][m - 1][e] = acc[h][e];
        }
        if (NPEND > 0) {
            acc_t acc[IR][ACC_N];
#pragma unroll
            for (int h = 0; h < IR; ++h)
#pragma unroll
                for (int e = 0; e < ACC_N; ++e) acc[h][e] = 0;
            CHAIN(0, acc, acc);
#pragma unroll
            for (int h = 0; h < IR; ++h)
#pragma unroll
                for (int e = 0; e < ACC_N; ++e) pend[h][NPEND > 0 ? NPEND - 1 : 0][e] = acc[h][e];
        }
        const int y = j - RS;
        if (y >= S0 && y < S1) {
#pragma unroll
            for (int hr = 0; hr < IR; ++hr) {
#if X_LINES
                const int Xh = X0 + hr * TILE_X;  // line hr: the x tile TILE_X * hr further on
                if (Xh >= nx) break;
                real* dst = out + (long long)(Gs + y) * pitch_s + (long long)(Gi + I) * pitch_i + Gx + Xh;
#else
                const int Xh = X0;
                if (I + hr >= ni) break;
                real* dst = out + (long long)(Gs + y) * pitch_s + (long long)(Gi + I + hr) * pitch_i + Gx + X0;
#endif
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // accumulators h (row g) and h + 2 (row g + 8) of segment 2t + h: outputs 2g, 2g + 1
                    const int x = L * (2 * t4 + h) + 2 * g;
#if PREC == 0
                    const float lo = done[hr][h], hi = done[hr][h + 2];
                    if (vec_stores && Xh + x + 1 < nx) {
                        *reinterpret_cast<float2*>(dst + x) = make_float2(lo, hi);
                    } else {
                        if (Xh + x < nx) dst[x] = lo;
                        if (Xh + x + 1 < nx) dst[x + 1] = hi;
                    }
#else
#if K_ACC16
                    // FP16 accumulators, rounded already: half h of word 0 (row g) and of word 1 (row g + 8)
                    const unsigned word = h ? (done[hr][0] >> 16) | (done[hr][1] & 0xFFFF0000u)
                                            : (done[hr][0] & 0xFFFFu) | (done[hr][1] << 16);
#else
                    const unsigned word = pack2(done[hr][h], done[hr][h + 2]);
#endif
                    if (vec_stores && Xh + x + 1 < nx) {
                        *reinterpret_cast<unsigned*>(dst + x) = word;
                    } else {
                        if (Xh + x < nx) dst[x] = (real)(word & 0xFFFFu);
                        if (Xh + x + 1 < nx) dst[x + 1] = (real)(word >> 16);
                    }
#endif
                }
            }
        }
    }
#if BSTAGES
    wait_copies<0>();  // only the empty groups past the end are left
#endif
}
