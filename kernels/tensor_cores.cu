// Dense Tensor Cores, kernel fusion: the t-step fused stencil as banded matrix products.
//
// Transformation (tcadvisor/transforms/rowband.py builds the operands): outputs
// along x are grouped by 8 (the instruction's n); a warp tile holds MMA_M groups
// (128 outputs for m16n8k*, 64 for m8n8k4).  For each kernel row (p, a) the
// weights form a K_pad x 8 band B[k][c] = w[k - c]; the A operand of group q is
// the input strip starting at column 8q - R of that row.  A warp streams along
// the outermost axis (y in 2D, z in 3D; one slice in 1D): each input slice adds
// its kernel rows to the NS-1 pending output slices, which live in accumulator
// fragments and shift by one as the slice is consumed -- the MMA writes the
// shifted accumulator directly, so the shift costs nothing.
//
// Compile-time parameters (-D, prefixed K_): K_DOUBLE (1: FP64 DMMA, 0: float
// data on TF32 or 16-bit data), K_HALF (optional; 1: FP16 fields and operands,
// 2: BF16 fields (bit patterns) and operands, both m16n8k16 with FP32 accumulation,
// "Matrix Fragments for mma.m16n8k16 with floating point type" in the PTX ISA;
// 0 or absent: FP64/TF32 as before), K_MMA_M (16|8), K_MMA_K (4|8|16), K_R (fused radius), K_NS
// (kernel extent along the stream axis: 1 in 1D), K_NI (inner kernel extent: K_NS
// in 3D, else 1), K_KCH (K_pad / MMA_K), K_ROWMASK (bit p*NI+a set when kernel
// row (p, a) is non-empty; rows 0-63), K_ROWMASK_HI (only with more than 64 rows:
// rows 64-127), K_WX, K_WI (warps per block along x and along the inner axis),
// K_PERM (1: a lane's k values come from adjacent strip columns, loaded as vectors
// -- FP64; 0: natural order, single loads -- TF32), K_BREGS (1: weight fragments
// held in registers), K_BSMEM (optional, with K_BREGS 0: weight
// fragments copied into shared memory once per block and read from there before each
// MMA; 1: word by word, 2: as vectors, below), K_PF (slices of A
// fragments loaded ahead: 0 loads each slice when it is needed), K_MINB (blocks
// per SM the register allocation must allow), K_ALIGN (optional: bit 0 vector loads, bit 1 pair stores; absent:
// the kernel argument ``align`` decides at run time), K_L2PF (optional; slices ahead whose
// input rows the warp asks the L2 to fetch from DRAM, 0 or absent: none), K_XT (optional; 1D/2D: adjacent
// tiles of TILE_X columns along x one warp computes, 1, 2 or 4; default 1), K_IR (optional; 3D: adjacent inner
// output rows one warp computes, 1, 2 or 4; default 1), K_STAGES (optional, 2-8; 0 or absent: none, and with it
// K_PF must be 0): each slice's input strips (1D/2D: one, 3D: its NI + IR - 1 rows) copied into one of K_STAGES
// stages of the warp's own in shared memory by cp.async, K_STAGES - 1 slices in flight while one is multiplied, its
// A fragments then read from there.
//
// Why K_STAGES: in 1D at deep fusion a slice's A fragments are the strip read KCH * MMA_K / 8 times over (the band's
// Toeplitz copies), so a slice loaded ahead into registers costs about as many registers as the whole strip's
// bytes times that factor, and the planner loads none ahead beyond A_PREFETCH_LIMIT: Box-1D3R FP16 x16 keeps one
// slice of 464 bytes per warp in flight, 12.7 KiB per SM, and reads DRAM at 42 % of its bandwidth (the refined
// model's eta_B 0.49; validation/results/h200-2026-11-27/own-roofline).  A stage holds the strip once, in shared
// memory, and costs no register while in flight.  In 2D and 3D at shallow fusion the same holds for another reason:
// the slice ahead in registers (K_PF 1) is a second set of A fragments beside the pending accumulators of NS - 1
// slices, and the registers leave 2 blocks of 4 warps per SM, too few bytes in flight for the DRAM (Nsight Compute,
// Box-2D2R FP16 x2: 212 registers, DRAM 51 %, issue 38 %; validation/results/h200-2026-12-01/sptc2d-shallow-ncu).
// Staged, the slices in flight take shared memory instead, and the A fragments one set of registers.
//
// Why K_XT (2 or 4): at deep fusion the weight fragments read from shared memory before each MMA bind the
// kernel (Nsight Compute, Box-2D1R FP16 t = 7: L1 87 %, shared-memory wavefronts 77 %, tensor pipe 43 %;
// validation/results/h100-sxm-2026-11-27/wgmma/ncu).  A warp of XT tiles reads each fragment once for XT MMAs,
// one per tile (the tiles' input strips are disjoint), at the price of XT sets of A fragments and pending
// accumulators.  A tile that starts past the grid computes on the row's padding and stores nothing.
// K_IR is the same in 3D along the inner axis: output rows I .. I + IR - 1 read input rows I - RI ..
// I + IR - 1 + RI, each weight fragment (p, a) multiplies input row a + h for output row I + h.  Where some of
// those rows are past the grid, the input rows past the ghost layer are clamped to the last one (``last``) and
// the results not stored.
//
// Why K_L2PF (kernels/l2_prefetch.cuh): at shallow fusion the kernel is memory-bound, and
// the PF slices of A fragments a warp holds ahead in registers (12 warps per SM at t = 3)
// are too few bytes in flight to cover DRAM latency.
//
// Why K_BSMEM: weight fragments "in L1" are loop-invariant loads, which the compiler
// hoists out of the streaming loop into registers -- with many kernel rows (Box-3D1R
// fused x2: 75 fragments) that fills 255 registers, spills, and leaves 8 warps per SM.
// Read from shared memory through volatile loads, they cannot be hoisted: each is
// read just before its MMA, and the registers go to more resident warps.
// K_BSMEM = 1 copies the fragments as uploaded (lane-major: a lane's NB words adjacent), and reads them one
// word at a time: lanes NB words apart, so every load is an NB-way bank conflict (FP64 m16n8k16: 4 words of
// 8 bytes, 4096 bytes of shared-memory traffic per MMA for 1024 of data; Nsight Compute: L1 99 % busy,
// tensor pipe 40 %, validation/results/h100-sxm-2026-11-26/tc3d-ncu).  K_BSMEM = 2 stores each fragment
// as vectors of 4, 8 or 16 bytes, vector-major (vector v of every lane adjacent), and reads a lane's fragment
// with as few vector loads: conflict-free.

#define IS_DOUBLE K_DOUBLE
#ifndef K_HALF
#define K_HALF 0
#endif
#define HALF K_HALF
#define MMA_M K_MMA_M
#define MMA_K K_MMA_K
#define R K_R
#define NS K_NS
#define NI K_NI
#define KCH K_KCH
#define ROWMASK K_ROWMASK
#define WX K_WX
#define WI K_WI
#define B_IN_REGS K_BREGS
#ifndef K_BSMEM
#define K_BSMEM 0
#endif
#define B_SHARED K_BSMEM
#if B_SHARED && B_IN_REGS
#error "K_BSMEM reads the weight fragments from shared memory; K_BREGS must be 0"
#endif
#define PF K_PF
#define MINB K_MINB
#define PERM K_PERM
#ifndef K_L2PF
#define K_L2PF 0
#endif
#define L2PF K_L2PF
#ifndef K_XT
#define K_XT 1
#endif
#define XT K_XT
#if XT != 1 && XT != 2 && XT != 4
#error "K_XT: a warp computes 1, 2 or 4 tiles along x"
#endif
#if XT > 1 && NI != 1
#error "K_XT: x tiles per warp in 1D and 2D only"
#endif
#ifndef K_IR
#define K_IR 1
#endif
#define IR K_IR
#if IR != 1 && IR != 2 && IR != 4
#error "K_IR: a warp computes 1, 2 or 4 inner rows"
#endif
#if IR > 1 && NI == 1
#error "K_IR: inner rows per warp in 3D only"
#endif
#ifndef K_STAGES
#define K_STAGES 0
#endif
#define STAGES K_STAGES
#if STAGES != 0 && (STAGES < 2 || STAGES > 8)
#error "K_STAGES: 2 to 8 stages of input strips in shared memory"
#endif
#if STAGES && K_PF != 0
#error "K_STAGES stages the slices in flight in shared memory; K_PF (slices ahead in registers) must be 0"
#endif
#define NROWS_IN (NI + IR - 1)  // input rows per slice a warp loads (3D)
#define NLINES (XT * IR)        // output lines per warp: x tiles (1D/2D) or inner rows (3D)

#if IS_DOUBLE
typedef double real;
typedef double areg;
typedef double breg;
typedef double creg;
typedef real wtype;
#elif HALF
typedef unsigned short real;  // FP16 or BF16 bit patterns
typedef unsigned areg;        // two 16-bit values per register
typedef unsigned breg;
typedef float creg;
typedef unsigned wtype;       // weight fragments uploaded as packed pairs
#else
typedef float real;
typedef unsigned areg;
typedef unsigned breg;
typedef float creg;
typedef real wtype;
#endif

#if HALF
#define NA (MMA_M * MMA_K / 64)
#define NB (MMA_K / 8)
#else
#define NA (MMA_M * MMA_K / 32)
#define NB (MMA_K / 4)
#endif
#define NC (MMA_M / 4)
#define TILE_X (MMA_M * 8)
#define RS ((NS - 1) / 2)
#define RI ((NI - 1) / 2)
#define NPEND (NS - 1)
#define NROWS (NS * NI)
#if NROWS > 64
// More than 64 kernel rows (3D at r·t = 4 or 5: 81 or 121): K_ROWMASK holds rows 0-63, K_ROWMASK_HI rows
// 64-127.  Configurations of at most 64 rows pass no K_ROWMASK_HI and take the one-word test below.
#ifndef K_ROWMASK_HI
#error "more than 64 kernel rows: K_ROWMASK_HI must hold rows 64-127"
#endif
#if NROWS > 128
#error "the kernel row mask holds at most 128 rows (3D: r·t <= 5)"
#endif
#define ROW_BIT(i) ((i) < 64 ? ((unsigned long long)(ROWMASK) >> ((i) & 63)) & 1ULL \
                             : ((unsigned long long)(K_ROWMASK_HI) >> (((i) - 64) & 63)) & 1ULL)
#define ROW_ON(p, a) ROW_BIT((p) * NI + (a))
#else
#define ROW_ON(p, a) (((unsigned long long)(ROWMASK) >> ((p) * NI + (a))) & 1ULL)
#endif

// Fragment positions (PTX ISA, matrix fragments of mma.m16n8k* / mma.m8n8k4);
// g = lane / 4, t = lane % 4.  Same formulas as tcadvisor.transforms.rowband.
#if MMA_M == 16
#define A_ROW(g, e) ((g) + 8 * ((e) & 1))
#define A_COL(t, e) ((t) + 4 * ((e) >> 1))
#define C_ROW(g, e) ((g) + 8 * ((e) >> 1))
#else
#define A_ROW(g, e) (g)
#define A_COL(t, e) (t)
#define C_ROW(g, e) (g)
#endif
#define C_COL(t, e) (2 * (t) + ((e) & 1))
// k values held per lane and group row: they map to adjacent strip columns
// (rowband.strip_offset), so each is one vector load.
#define KQ (MMA_M == 16 ? MMA_K / 4 : 1)
// Empty strip columns in front for odd R (rowband.lead_of): the strip then starts on
// an even column when the interior does.
#define LEAD (R % 2)
// Vector loads need the strip origin (interior column -R-LEAD) on an even column,
// vector stores the interior itself; the host checks both (bit 0: loads, bit 1:
// stores of `align`) for the field it passes, whose Gx may serve several kernels.

#if L2PF > 0
#include "l2_prefetch.cuh"
#endif

#if STAGES
#include "cp_async.cuh"
// Columns a slice's fragments read from the strip origin (the warp's XT tiles side by side), their bytes, and the
// bytes of a stage's row: the strip is copied in 16-byte chunks from the 16-byte boundary at or below its origin.
// A stage holds a slice's NROWS_IN rows (3D; one in 1D/2D), STAGE_BYTES apart: every row pitch is a multiple of 16
// bytes (tcadvisor.gpu.tensor_cores.TensorCoreKernel.geometry), so every row of a slice sits as far past its
// stage row's start as the first.
#define STRIP_X (XT * TILE_X - 8 + KCH * MMA_K)
#define STRIP_BYTES (STRIP_X * (int)sizeof(real))
#define STAGE_BYTES ((STRIP_BYTES + 30) / 16 * 16)
// 1D (STAGED_1D) keeps the stage code it was first measured with (session 50), 2D and 3D the leaner code of session
// 51: in 1D, with x tiles, the leaner code raised the registers (Box-1D2R FP16 x16, four x tiles: 92 -> 132, 5 -> 3
// blocks per SM) and ran 0.72-0.96x, where in 2D it gained up to 1.24x (validation/results/h200-2026-12-02/NOTES.md).
#define STAGED_1D (NS == 1 && NI == 1)
#if STAGED_1D
// One slice's strip of origin p into a stage (every lane of the warp calls it): the chunks from p's 16-byte boundary
// to the one holding its last byte, at most 15 bytes past the strip (within the row's padding: the pitch leaves
// Gx + 16 columns past the last strip, tcadvisor.gpu.tensor_cores.TensorCoreKernel.geometry).
__device__ __forceinline__ void stage_strip(unsigned char* stage, const real* p, int lane) {
    const unsigned long long a = reinterpret_cast<unsigned long long>(p);
    const unsigned char* from = reinterpret_cast<const unsigned char*>(a & ~15ULL);
    const int chunks = (int)(((a & 15ULL) + STRIP_BYTES + 15) >> 4);
    for (int c = lane; c < chunks; c += 32) copy16_async(reinterpret_cast<uint4*>(stage + 16 * c), from + 16 * c);
}
// The strip of origin p in its stage: as far past the stage's start as p is past its 16-byte boundary, so that the
// fragment loads are aligned in shared memory exactly where they are in the field.
__device__ __forceinline__ const real* staged_strip(const unsigned char* stage, const real* p) {
    return reinterpret_cast<const real*>(stage + (reinterpret_cast<unsigned long long>(p) & 15ULL));
}
#else
// One strip into a stage row (every lane of the warp calls it): ``chunks`` 16-byte chunks from ``from``, the 16-byte
// boundary at or below the strip's origin, to the one holding its last byte -- at most 15 bytes past the strip
// (within the row's padding: the pitch leaves 16 + R columns past the last strip,
// tcadvisor.gpu.tensor_cores.TensorCoreKernel.geometry).  ``chunks`` is the same for every slice (computed once), and
// the lanes' copies are unrolled over the at most STAGE_BYTES / 16 of them.
#define STAGE_CHUNKS (STAGE_BYTES / 16)
__device__ __forceinline__ void stage_strip(unsigned char* stage, const unsigned char* from, int lane, int chunks) {
#pragma unroll
    for (int i = 0; i < (STAGE_CHUNKS + 31) / 32; ++i) {
        const int c = lane + 32 * i;
        if (c < chunks) copy16_async(reinterpret_cast<uint4*>(stage + 16 * c), from + 16 * c);
    }
}
// The 16-byte boundary at or below p, and p's distance past it: every slice's and row's strip sits as far past its
// boundary as the first (the row and slice pitches are multiples of 16 bytes), so a stage holds its strip that far
// past the stage's start, and the fragment loads are aligned in shared memory exactly where they are in the field.
__device__ __forceinline__ const unsigned char* boundary16(const real* p) {
    return reinterpret_cast<const unsigned char*>(reinterpret_cast<unsigned long long>(p) & ~15ULL);
}
__device__ __forceinline__ int skew16(const real* p) { return (int)(reinterpret_cast<unsigned long long>(p) & 15ULL); }
#endif
// Element offset of row a of a stage, for LOAD_A1_AT's row offset where the slice is in shared memory.
#define STAGE_ROW_OFF(a_) ((a_) * (STAGE_BYTES / (int)sizeof(real)))
// A plain load, for the fragment loads' loader argument (LOAD_A1_AT) where the strip is in shared memory.
template <typename T>
__device__ __forceinline__ T lds_plain(const T* p) { return *p; }
// 16-bit: a lane's 8 bytes (registers h and h + 2 of a fragment) as two 4-byte loads.  An 8-byte load fills an
// aligned register pair, where the MMA wants a0-a3 in four consecutive registers: the static SASS of Box-2D2R FP16 x2
// with 4 x tiles and 4 stages moved 84 registers per slice for 36 MMAs (18 reading the field through L1).  A 4-byte
// load lands in the register the MMA reads; an asm load, so that the compiler does not merge the two again.
#if !STAGED_1D
template <>
__device__ __forceinline__ uint2 lds_plain<uint2>(const uint2* p) {
#if defined(TCADVISOR_HOST_EMU)
    return *p;
#else
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    uint2 w;
    asm("ld.shared.b32 %0, [%1];" : "=r"(w.x) : "r"(a));
    asm("ld.shared.b32 %0, [%1 + 4];" : "=r"(w.y) : "r"(a));
    return w;
#endif
}
#endif
#endif

#if B_SHARED == 2
// A lane's B fragment (NB words) as NV vectors of WVEC bytes.
#define WBYTES (NB * (IS_DOUBLE ? 8 : 4))  // wtype: double, float or a packed pair (preprocessor arithmetic)
#define WVEC (WBYTES % 16 == 0 ? 16 : (WBYTES % 8 == 0 ? 8 : 4))
#define NV (WBYTES / WVEC)
// The fragment of row-chunk rc of this lane: vector v at byte ((rc * NV + v) * 32 + lane) * WVEC.  volatile:
// the loads stay next to their MMA instead of being hoisted into registers.
__device__ __forceinline__ void lds_bfrag(const unsigned char* wsh, int rc, int lane, wtype (&w)[NB]) {
    unsigned u[WBYTES / 4];
#pragma unroll
    for (int v = 0; v < NV; ++v) {
        const unsigned char* p = wsh + ((rc * NV + v) * 32 + lane) * WVEC;
#if defined(TCADVISOR_HOST_EMU)  // the CPU tests (tests/host_cuda/emu.h)
#pragma unroll
        for (int q = 0; q < WVEC / 4; ++q) u[v * (WVEC / 4) + q] = ((volatile const unsigned*)p)[q];
#else
        const unsigned a = (unsigned)__cvta_generic_to_shared(p);
#if WVEC == 16
        asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(u[4 * v]), "=r"(u[4 * v + 1]), "=r"(u[4 * v + 2]), "=r"(u[4 * v + 3]) : "r"(a));
#elif WVEC == 8
        asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(u[2 * v]), "=r"(u[2 * v + 1]) : "r"(a));
#else
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(u[v]) : "r"(a));
#endif
#endif
    }
#pragma unroll
    for (int j = 0; j < NB; ++j) {
#if IS_DOUBLE
        w[j] = __hiloint2double((int)u[2 * j + 1], (int)u[2 * j]);
#elif HALF
        w[j] = u[j];
#else
        w[j] = __uint_as_float(u[j]);
#endif
    }
}
#elif B_SHARED
// One 4- or 8-byte weight word from shared memory.  volatile: the load stays where it is
// written, inside the streaming loop, instead of being hoisted into a register.
__device__ __forceinline__ wtype lds_weight(const wtype* p) {
#if defined(TCADVISOR_HOST_EMU)  // the CPU tests (tests/host_cuda/emu.h)
    return *(volatile const wtype*)p;
#else
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
#if IS_DOUBLE
    double v;
    asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(a));
    return v;
#else
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(a));
#if HALF
    return v;
#else
    return __uint_as_float(v);
#endif
#endif
#endif
}
#endif

#if HALF
// Two FP32 accumulators as one word of 16-bit values, lo at the lower address.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
#if defined(TCADVISOR_HOST_EMU)
    r = emu::cvt_rn_16x2(HALF == 1, lo, hi);
#elif HALF == 1
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}
#endif

__device__ __forceinline__ areg to_a(real v) {
#if IS_DOUBLE || HALF
    return v;
#elif defined(TCADVISOR_HOST_EMU)
    return emu::cvt_rna_tf32(v);
#else
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
#endif
}

__device__ __forceinline__ breg to_b(wtype v) {
#if IS_DOUBLE || HALF
    return v;
#else
    return __float_as_uint(v);  // already rounded to TF32 on the host
#endif
}

__device__ __forceinline__ void mma(creg (&d)[NC], const areg (&a)[NA], const breg (&b)[NB], const creg (&c)[NC]) {
#if defined(TCADVISOR_HOST_EMU)  // the warp's MMA computed on the CPU (tests/host_cuda/emu.h)
    emu::mma_sync<MMA_M, MMA_K, IS_DOUBLE ? 0 : (HALF ? HALF + 1 : 1)>(d, a, b, c);
#elif HALF == 1 && MMA_M == 16 && MMA_K == 16
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#elif HALF == 2 && MMA_M == 16 && MMA_K == 16
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#elif HALF
#error "16-bit operands are implemented for m16n8k16 only"
#elif IS_DOUBLE && MMA_M == 16 && MMA_K == 4
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
#elif IS_DOUBLE && MMA_M == 16 && MMA_K == 8
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]),
          "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
#elif IS_DOUBLE && MMA_M == 16 && MMA_K == 16
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%16,%17,%18,%19};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
#elif IS_DOUBLE && MMA_M == 8 && MMA_K == 4
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=d"(d[0]), "=d"(d[1])
        : "d"(a[0]), "d"(b[0]), "d"(c[0]), "d"(c[1]));
#elif !IS_DOUBLE && MMA_M == 16 && MMA_K == 8
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#elif !IS_DOUBLE && MMA_M == 16 && MMA_K == 4
    asm("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
#error "unsupported (precision, MMA shape) combination"
#endif
}

extern "C" __global__ void __launch_bounds__(32 * WX * WI, MINB)
tc_stream(const real* __restrict__ in, real* __restrict__ out, const wtype* __restrict__ wfrag,
          int nx, int ni, int ns, long long pitch_i, long long pitch_s,
          int Gx, int Gi, int Gs, int slices_per_block, int align)
{
#ifdef K_ALIGN
    // Compiled for the alignment of the fields it runs on (the host compiles another variant for a field that
    // differs): with the run-time flag the streaming loop kept both load paths and issued the unaligned one's
    // instructions predicated off -- SASS of Box-3D1R x2 FP16: 64 16-bit loads beside the 16 vector loads per
    // slice, with their addresses (validation/results/h200-2026-11-27/tc3d-order/).
    const bool vec_loads = K_ALIGN & 1, vec_stores = (K_ALIGN >> 1) & 1;
    (void)align;
#else
    const bool vec_loads = align & 1, vec_stores = (align >> 1) & 1;
#endif
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t4 = lane & 3;
    const int X0 = (blockIdx.x * WX + warp % WX) * TILE_X * XT;  // the first of the warp's XT tiles
    const int I = (blockIdx.y * WI + warp / WX) * IR;  // first inner output row (always 0 in 1D/2D)
    const int S0 = blockIdx.z * slices_per_block;
    const int S1 = min(S0 + slices_per_block, ns);
#if B_SHARED == 2
    // Every warp of the block reads the same fragments: one copy per block, before any warp leaves, each
    // lane's fragment split into vectors stored vector-major.
    extern __shared__ __align__(16) unsigned char smem_raw[];
    for (int i = threadIdx.x; i < NROWS * KCH * 32 * NB; i += blockDim.x) {
        const int rc = i / (32 * NB), ln = (i / NB) % 32, at = (i % NB) * (WBYTES / NB);
        *reinterpret_cast<wtype*>(smem_raw + ((rc * NV + at / WVEC) * 32 + ln) * WVEC + at % WVEC) = wfrag[i];
    }
    __syncthreads();
#elif B_SHARED
    // Every warp of the block reads the same fragments: one copy per block, before any warp leaves.
    extern __shared__ __align__(16) unsigned char smem_raw[];
    wtype* wsh = reinterpret_cast<wtype*>(smem_raw);
    for (int i = threadIdx.x; i < NROWS * KCH * 32 * NB; i += blockDim.x) wsh[i] = wfrag[i];
    __syncthreads();
#endif
#if STAGES && !B_SHARED
    extern __shared__ __align__(16) unsigned char smem_raw[];
#endif
    if (I >= ni || X0 >= nx || S0 >= ns) return;  // no block-level barriers below

#if B_IN_REGS
    breg bf[NROWS][KCH][NB];
#pragma unroll
    for (int r = 0; r < NROWS; ++r)
#pragma unroll
        for (int c = 0; c < KCH; ++c)
#pragma unroll
            for (int j = 0; j < NB; ++j) bf[r][c][j] = to_b(wfrag[((r * KCH + c) * 32 + lane) * NB + j]);
#define BFRAG(r, c, out_) { _Pragma("unroll") for (int j_ = 0; j_ < NB; ++j_) out_[j_] = bf[r][c][j_]; }
#elif B_SHARED == 2
#define BFRAG(r, c, out_) { wtype w_[NB]; lds_bfrag(smem_raw, (r) * KCH + (c), lane, w_);            \
        _Pragma("unroll") for (int j_ = 0; j_ < NB; ++j_) out_[j_] = to_b(w_[j_]); }
#elif B_SHARED
#define BFRAG(r, c, out_) { _Pragma("unroll") for (int j_ = 0; j_ < NB; ++j_) \
        out_[j_] = to_b(lds_weight(wsh + (((r) * KCH + (c)) * 32 + lane) * NB + j_)); }
#else
#define BFRAG(r, c, out_) { _Pragma("unroll") for (int j_ = 0; j_ < NB; ++j_) \
        out_[j_] = to_b(__ldg(wfrag + (((r) * KCH + (c)) * 32 + lane) * NB + j_)); }
#endif

    creg pend[NLINES][NPEND > 0 ? NPEND : 1][NC];
#pragma unroll
    for (int h = 0; h < NLINES; ++h)
#pragma unroll
        for (int m = 0; m < (NPEND > 0 ? NPEND : 1); ++m)
#pragma unroll
            for (int e = 0; e < NC; ++e) pend[h][m][e] = creg(0);

    const real* base = in + (long long)Gi * pitch_i + (long long)I * pitch_i + Gx + X0 - R - LEAD;
    areg af[XT][NROWS_IN][KCH][NA];
    // Input row offsets past the ghost layer (3D, IR > 1, an inner extent not a multiple of IR) are clamped to
    // the last one: those rows feed only outputs past the grid, which are not stored.
    const int last = ni - 1 + RI - I;
    (void)last;
#if IR > 1
#define ROW_OFF(a_) ((long long)min((a_) - RI, last) * pitch_i)
#else
#define ROW_OFF(a_) ((long long)((a_) - RI) * pitch_i)
#endif
#if IS_DOUBLE
    typedef double2 vec2;
#elif !HALF
    typedef float2 vec2;
#endif
    // Lane (g, t4) needs, per chunk c and group row h, the KQ adjacent strip columns
    // 8*(g + 8h) + c*MMA_K + KQ*t4 ...; fragment element e = h + 2v holds column v.
#if HALF
    // 16-bit: the lane's k = 2t, 2t+1, 2t+8, 2t+9 of group row h are strip columns
    // 4t ... 4t+3 (tcadvisor.gpu.layouts.dense16_strip): one 8-byte load gives the
    // registers h (k = 2t, 2t+1) and h + 2 (k = 2t+8, 2t+9).
#define LOAD_A1_AT(from_, dst_, LD_, OFF_)                                                           \
    {                                                                                          \
        const real* row_ = from_;                                                              \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
        _Pragma("unroll") for (int c_ = 0; c_ < KCH; ++c_)                                     \
        _Pragma("unroll") for (int h_ = 0; h_ < 2; ++h_) {                                     \
            const real* p_ = row_ + OFF_(a_) + 8 * (g + 8 * h_) + c_ * MMA_K + 4 * t4;         \
            if (vec_loads) {                                                                   \
                const uint2 w_ = LD_(reinterpret_cast<const uint2*>(p_));                      \
                dst_[a_][c_][h_] = w_.x;                                                       \
                dst_[a_][c_][h_ + 2] = w_.y;                                                   \
            } else {                                                                           \
                dst_[a_][c_][h_] = (unsigned)LD_(p_) | ((unsigned)LD_(p_ + 1) << 16);          \
                dst_[a_][c_][h_ + 2] = (unsigned)LD_(p_ + 2) | ((unsigned)LD_(p_ + 3) << 16);  \
            }                                                                                  \
        }                                                                                      \
    }
#elif PERM
#define LOAD_A1_AT(from_, dst_, LD_, OFF_)                                                           \
    {                                                                                          \
        const real* row_ = from_;                                                              \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
        _Pragma("unroll") for (int c_ = 0; c_ < KCH; ++c_)                                     \
        _Pragma("unroll") for (int h_ = 0; h_ < (MMA_M == 16 ? 2 : 1); ++h_) {                 \
            const real* p_ = row_ + OFF_(a_) + 8 * (g + 8 * h_) + c_ * MMA_K + KQ * t4;        \
            if (KQ == 1 || !vec_loads) {                                                       \
                _Pragma("unroll") for (int v_ = 0; v_ < KQ; ++v_)                              \
                    dst_[a_][c_][h_ + 2 * v_] = to_a(LD_(p_ + v_));                            \
            } else {                                                                           \
                _Pragma("unroll") for (int v_ = 0; v_ < KQ; v_ += 2) {                         \
                    const vec2 w_ = LD_(reinterpret_cast<const vec2*>(p_ + v_));               \
                    dst_[a_][c_][h_ + 2 * v_] = to_a(w_.x);                                    \
                    dst_[a_][c_][h_ + 2 * (v_ + 1)] = to_a(w_.y);                              \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }
#else
    // Natural order: element e of the lane is strip column 8*A_ROW + A_COL; for 4-byte
    // data the 4 lanes of a group read 16 contiguous bytes per instruction.
#define LOAD_A1_AT(from_, dst_, LD_, OFF_)                                                           \
    {                                                                                          \
        const real* row_ = from_;                                                              \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
        _Pragma("unroll") for (int c_ = 0; c_ < KCH; ++c_)                                     \
        _Pragma("unroll") for (int e_ = 0; e_ < NA; ++e_)                                      \
            dst_[a_][c_][e_] = to_a(LD_(row_ + OFF_(a_) + c_ * MMA_K                           \
                                          + 8 * A_ROW(g, e_) + A_COL(t4, e_)));                \
    }
#endif
    // From the field (read-only, through L1) or, with K_STAGES, from the slice's stage in shared memory.
#define LOAD_A1(j_, dst_, xoff_) LOAD_A1_AT(base + (long long)(Gs + (j_)) * pitch_s + (xoff_), dst_, __ldg, ROW_OFF)

    // The A fragments of one input slice for each of the warp's XT tiles, TILE_X columns apart.
#define LOAD_A(j_, dst_)                                                                       \
    {                                                                                          \
        _Pragma("unroll") for (int x_ = 0; x_ < XT; ++x_) LOAD_A1(j_, dst_[x_], x_ * TILE_X);  \
    }

    // Apply every kernel row (p, a) of stream offset p to the fragments of this slice: one weight fragment
    // read for the MMAs of the warp's XT tiles (input row a) or IR inner rows (input row a + h).
#define CHAIN(p_, acc_)                                                                        \
    {                                                                                          \
        _Pragma("unroll") for (int a_ = 0; a_ < NI; ++a_) {                                    \
            if (ROW_ON(p_, a_)) {                                                              \
                _Pragma("unroll") for (int c_ = 0; c_ < KCH; ++c_) {                           \
                    breg b_[NB];                                                               \
                    BFRAG((p_) * NI + a_, c_, b_);                                             \
                    _Pragma("unroll") for (int x_ = 0; x_ < XT; ++x_)                          \
                    _Pragma("unroll") for (int r_ = 0; r_ < IR; ++r_)                          \
                        mma(acc_[x_ * IR + r_], af[x_][a_ + r_][c_], b_, acc_[x_ * IR + r_]);  \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

#if L2PF > 0
    // Columns a warp's fragments read per input row: XT * TILE_X - 8 + K_pad from the strip origin.
#define SPAN (XT * TILE_X - 8 + KCH * MMA_K)
#if L2_PREFETCH_ONE_THREAD
#define L2_ROWS(j_)                                                                            \
    {                                                                                          \
        if (lane < NROWS_IN)                                                                   \
            l2_prefetch_run(base + (long long)(Gs + (j_)) * pitch_s + ROW_OFF(lane), SPAN, lane); \
    }
#else
#define L2_ROWS(j_)                                                                            \
    {                                                                                          \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
            l2_prefetch_run(base + (long long)(Gs + (j_)) * pitch_s + ROW_OFF(a_), SPAN, lane); \
    }
#endif
    for (int p = 0; p < L2PF; ++p)
        if (S0 - RS + p < S1 + RS) L2_ROWS(S0 - RS + p);
#endif
#if STAGES
    // This warp's stages follow the weight fragments (a block's copy of them, a multiple of 16 bytes, where they are
    // in shared memory): one commit group per slice, empty past the end, so that the count in flight holds.  A
    // stage holds the slice's NROWS_IN input rows (their origins as the field loads': ROW_OFF, clamped past the grid).
#if STAGED_1D
    unsigned char* stages = smem_raw + (B_SHARED ? NROWS * KCH * 32 * NB * (int)sizeof(wtype) : 0)
                            + warp * (STAGES * STAGE_BYTES);
#pragma unroll
    for (int p = 0; p < STAGES - 1; ++p) {
        if (S0 + p < S1) stage_strip(stages + p * STAGE_BYTES, base + (long long)(Gs + S0 + p) * pitch_s, lane);
        commit_copies();
    }
#else
    unsigned char* stages = smem_raw + (B_SHARED ? NROWS * KCH * 32 * NB * (int)sizeof(wtype) : 0)
                            + warp * (STAGES * NROWS_IN * STAGE_BYTES);
    // Per slice the copies start at a 16-byte boundary one slice pitch past the last (a pointer advanced, not an
    // address recomputed); the strip's distance past its boundary is the same for every slice and row.
    const long long slice_bytes = pitch_s * (long long)sizeof(real);
    const unsigned char* fill_from = boundary16(base + (long long)(Gs + S0 - RS) * pitch_s);
    const int skew = skew16(base + (long long)(Gs + S0 - RS) * pitch_s);
    const int chunks = (skew + STRIP_BYTES + 15) >> 4;
#define STAGE_SLICE(stage_, from_)                                                             \
    {                                                                                          \
        _Pragma("unroll") for (int a_ = 0; a_ < NROWS_IN; ++a_)                                \
            stage_strip((stage_) + a_ * STAGE_BYTES, (from_) + ROW_OFF(a_) * (long long)sizeof(real), lane, chunks); \
    }
#pragma unroll
    for (int p = 0; p < STAGES - 1; ++p) {
        if (S0 - RS + p < S1 + RS) STAGE_SLICE(stages + p * (NROWS_IN * STAGE_BYTES), fill_from);
        fill_from += slice_bytes;
        commit_copies();
    }
#endif
    int now = 0, fill = STAGES - 1;  // the stage of this slice, and the one slice j + STAGES - 1 goes into
#endif
#if PF > 0
    areg an[PF][XT][NROWS_IN][KCH][NA];  // the next PF slices, in flight while this one is multiplied
#pragma unroll
    for (int p = 0; p < PF; ++p)
        if (S0 - RS + p < S1 + RS) LOAD_A(S0 - RS + p, an[p]);
#endif
    for (int j = S0 - RS; j < S1 + RS; ++j) {
#if L2PF > 0
        if (j + L2PF < S1 + RS) L2_ROWS(j + L2PF);
#endif
#if PF > 0
#pragma unroll
        for (int h = 0; h < XT; ++h)
#pragma unroll
            for (int a = 0; a < NROWS_IN; ++a)
#pragma unroll
                for (int c = 0; c < KCH; ++c)
#pragma unroll
                    for (int e = 0; e < NA; ++e) {
                        af[h][a][c][e] = an[0][h][a][c][e];
#pragma unroll
                        for (int p = 0; p + 1 < PF; ++p) an[p][h][a][c][e] = an[p + 1][h][a][c][e];
                    }
        if (j + PF < S1 + RS) LOAD_A(j + PF, an[PF - 1]);
#elif STAGES
        __syncwarp();  // every lane has read the stage refilled now (it held slice j - 1)
#if STAGED_1D
        if (j + STAGES - 1 < S1) stage_strip(stages + fill * STAGE_BYTES, base + (long long)(Gs + j + STAGES - 1) * pitch_s,
                                             lane);
        commit_copies();
        wait_copies<STAGES - 1>();  // slice j's group has landed; the later ones may still be in flight
        __syncwarp();               // and so have the other lanes' copies of it
        {
            const real* strip = staged_strip(stages + now * STAGE_BYTES, base + (long long)(Gs + j) * pitch_s);
#pragma unroll
            for (int x_ = 0; x_ < XT; ++x_) LOAD_A1_AT(strip + x_ * TILE_X, af[x_], lds_plain, ROW_OFF);
        }
#else
        if (j + STAGES - 1 < S1 + RS) STAGE_SLICE(stages + fill * (NROWS_IN * STAGE_BYTES), fill_from);
        fill_from += slice_bytes;
        commit_copies();
        wait_copies<STAGES - 1>();  // slice j's group has landed; the later ones may still be in flight
        __syncwarp();               // and so have the other lanes' copies of it
        {
            const real* strip = reinterpret_cast<const real*>(stages + now * (NROWS_IN * STAGE_BYTES) + skew);
#pragma unroll
            for (int x_ = 0; x_ < XT; ++x_) LOAD_A1_AT(strip + x_ * TILE_X, af[x_], lds_plain, STAGE_ROW_OFF);
        }
#endif
        now = now + 1 == STAGES ? 0 : now + 1;
        fill = fill + 1 == STAGES ? 0 : fill + 1;
#else
        LOAD_A(j, af);
#endif
        creg done[NLINES][NC];
#pragma unroll
        for (int h = 0; h < NLINES; ++h)
#pragma unroll
            for (int e = 0; e < NC; ++e) done[h][e] = NPEND > 0 ? pend[h][0][e] : creg(0);
        CHAIN(NS - 1, done);
#pragma unroll
        for (int m = 1; m < NPEND; ++m) {
            creg acc[NLINES][NC];
#pragma unroll
            for (int h = 0; h < NLINES; ++h)
#pragma unroll
                for (int e = 0; e < NC; ++e) acc[h][e] = pend[h][m][e];
            CHAIN(NS - 1 - m, acc);
#pragma unroll
            for (int h = 0; h < NLINES; ++h)
#pragma unroll
                for (int e = 0; e < NC; ++e) pend[h][m - 1][e] = acc[h][e];
        }
        if (NPEND > 0) {
            creg acc[NLINES][NC];
#pragma unroll
            for (int h = 0; h < NLINES; ++h)
#pragma unroll
                for (int e = 0; e < NC; ++e) acc[h][e] = creg(0);
            CHAIN(0, acc);
#pragma unroll
            for (int h = 0; h < NLINES; ++h)
#pragma unroll
                for (int e = 0; e < NC; ++e) pend[h][NPEND > 0 ? NPEND - 1 : 0][e] = acc[h][e];
        }
        const int y = j - RS;
        if (y >= S0 && y < S1) {
#pragma unroll
            for (int hr = 0; hr < NLINES; ++hr) {
                const int Xh = X0 + (hr / IR) * TILE_X;  // x tile hr / IR: TILE_X * (hr / IR) further on
                const int Ih = I + hr % IR;              // inner row hr % IR
                if (Xh >= nx || Ih >= ni) break;
                real* dst = out + (long long)(Gs + y) * pitch_s + (long long)(Gi + Ih) * pitch_i + Gx + Xh;
#pragma unroll
                for (int e = 0; e < NC; e += 2) {
                    const int x = 8 * C_ROW(g, e) + C_COL(t4, e);
#if HALF
                    const unsigned word = pack2(done[hr][e], done[hr][e + 1]);
                    if (vec_stores && Xh + x + 1 < nx) {
                        *reinterpret_cast<unsigned*>(dst + x) = word;
                    } else {
                        if (Xh + x < nx) dst[x] = (real)(word & 0xFFFFu);
                        if (Xh + x + 1 < nx) dst[x + 1] = (real)(word >> 16);
                    }
#else
                    if (vec_stores && Xh + x + 1 < nx) {
#if IS_DOUBLE
                        *reinterpret_cast<double2*>(dst + x) = make_double2(done[hr][e], done[hr][e + 1]);
#else
                        *reinterpret_cast<float2*>(dst + x) = make_float2(done[hr][e], done[hr][e + 1]);
#endif
                    } else {
                        if (Xh + x < nx) dst[x] = done[hr][e];
                        if (Xh + x + 1 < nx) dst[x + 1] = done[hr][e + 1];
                    }
#endif
                }
            }
        }
    }
}
