// Microbenchmarks behind `tcadvisor calibrate`: the ceilings the model uses, measured.
//
// One source, specialised per benchmark with -D constants (tcadvisor/validate/calibrate.py
// compiles one module per instruction and times it with CUDA events):
//
//   cal_copy   16-byte loads and stores, grid-stride: DRAM copy bandwidth (bytes read + written).
//   cal_fma    CAL_FMA = 1 FP64 DFMA, 2 FP32 FFMA, 3 FP16 HFMA2, 4 BF16 HFMA2 (packed pairs):
//              CAL_CHAINS independent accumulators per thread, so the FMA pipe never waits on
//              the latency of one chain.
//   cal_mma    CAL_MMA = one warp-level mma.sync / mma.sp instruction (table below): CAL_CHAINS
//              independent accumulator fragments per warp, the A and B fragments read once.
//              CAL_ORDERED = 1 issues mma.sp::ordered_metadata (sm_90+), 0 the plain mma.sp.
//
// Operands come from the arguments (never compile-time constants), every accumulator is
// summed and stored at the end, so nothing can be folded or removed; the result of the sum
// is meaningless.  The sparse metadata 0x44444444 selects positions {0, 1} of every group
// of four (2:4) or of every pair (TF32 1:2), a valid and ordered choice for every shape.
//
// CAL_MMA:  1 f64 m8n8k4    2 f64 m16n8k4   3 f64 m16n8k8   4 f64 m16n8k16
//           5 tf32 m16n8k4  6 tf32 m16n8k8  7 f16 m16n8k8   8 f16 m16n8k16
//           9 bf16 m16n8k8 10 bf16 m16n8k16
//          11 sparse f16 m16n8k16  12 sparse f16 m16n8k32  13 sparse bf16 m16n8k16
//          14 sparse bf16 m16n8k32 15 sparse tf32 m16n8k8  16 sparse tf32 m16n8k16
// (FP16 and BF16 accumulate in FP32; FP64 m16n8k* need sm_90.)

#ifndef CAL_CHAINS
#define CAL_CHAINS 4
#endif
#ifndef CAL_UNROLL
#define CAL_UNROLL 8
#endif
#ifndef CAL_ORDERED
#define CAL_ORDERED 0
#endif

// --------------------------------------------------------------------------- copy

extern "C" __global__ void cal_copy(const double2* __restrict__ src, double2* __restrict__ dst, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        dst[i] = src[i];
    }
}

// --------------------------------------------------------------------------- CUDA-core FMA

#ifdef CAL_FMA
#if CAL_FMA == 1
typedef double fma_t;
__device__ __forceinline__ void fma_step(fma_t& x, fma_t a, fma_t b) {
    asm("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a), "d"(b));
}
__device__ __forceinline__ double fma_value(fma_t x) { return x; }
#elif CAL_FMA == 2
typedef float fma_t;
__device__ __forceinline__ void fma_step(fma_t& x, fma_t a, fma_t b) {
    asm("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
}
__device__ __forceinline__ double fma_value(fma_t x) { return x; }
#elif CAL_FMA == 3 || CAL_FMA == 4
typedef unsigned fma_t;  // two packed 16-bit values
__device__ __forceinline__ void fma_step(fma_t& x, fma_t a, fma_t b) {
#if CAL_FMA == 3
    asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
#else
    asm("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
#endif
}
__device__ __forceinline__ double fma_value(fma_t x) { return (double)(x & 0xffffu); }
#endif

// a, b: the multiplier and addend of every chain; iters: loop trips (a multiple of CAL_UNROLL).
extern "C" __global__ void cal_fma(fma_t a, fma_t b, int iters, double* __restrict__ out) {
    fma_t x[CAL_CHAINS];
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c) x[c] = b;
    for (int i = 0; i < iters; i += CAL_UNROLL) {
#pragma unroll
        for (int u = 0; u < CAL_UNROLL; ++u)
#pragma unroll
            for (int c = 0; c < CAL_CHAINS; ++c) fma_step(x[c], a, b);
    }
    double s = 0.0;
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c) s += fma_value(x[c]);
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif  // CAL_FMA

// --------------------------------------------------------------------------- MMA

#ifdef CAL_MMA
#if CAL_MMA <= 4
typedef double in_t;   // FP64 fragments
typedef double acc_t;
#define ACC_C "+d"
#define IN_C "d"
#else
typedef unsigned in_t; // 32-bit registers holding tf32 or packed f16/bf16
typedef float acc_t;
#define ACC_C "+f"
#define IN_C "r"
#endif

#if CAL_ORDERED
#define SP "mma.sp::ordered_metadata"
#else
#define SP "mma.sp"
#endif

// Register counts per lane: A, B, C/D.
#if CAL_MMA == 1
#define NA 1
#define NB 1
#define NC 2
#elif CAL_MMA == 2 || CAL_MMA == 5 || CAL_MMA == 7 || CAL_MMA == 9
#define NA 2
#define NB 1
#define NC 4
#elif CAL_MMA == 3 || CAL_MMA == 6 || CAL_MMA == 8 || CAL_MMA == 10
#define NA 4
#define NB 2
#define NC 4
#elif CAL_MMA == 4
#define NA 8
#define NB 4
#define NC 4
#elif CAL_MMA == 11 || CAL_MMA == 13 || CAL_MMA == 15
#define NA 2
#define NB 2
#define NC 4
#elif CAL_MMA == 12 || CAL_MMA == 14 || CAL_MMA == 16
#define NA 4
#define NB 4
#define NC 4
#else
#error "unknown CAL_MMA"
#endif

#define D4 "{%0,%1,%2,%3}"

__device__ __forceinline__ void mma_step(acc_t (&d)[NC], const in_t (&a)[NA], const in_t (&b)[NB], unsigned e) {
#if CAL_MMA == 1
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
        : ACC_C(d[0]), ACC_C(d[1]) : IN_C(a[0]), IN_C(b[0]));
#elif CAL_MMA == 2
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 " D4 ", {%4,%5}, {%6}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3]) : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]));
#elif CAL_MMA == 3
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 " D4 ", {%4,%5,%6,%7}, {%8,%9}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]));
#elif CAL_MMA == 4
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 " D4 ", {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(a[4]), IN_C(a[5]), IN_C(a[6]), IN_C(a[7]),
          IN_C(b[0]), IN_C(b[1]), IN_C(b[2]), IN_C(b[3]));
#elif CAL_MMA == 5
    asm("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 " D4 ", {%4,%5}, {%6}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3]) : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]));
#elif CAL_MMA == 6
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]));
#elif CAL_MMA == 7
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 " D4 ", {%4,%5}, {%6}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3]) : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]));
#elif CAL_MMA == 8
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]));
#elif CAL_MMA == 9
    asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 " D4 ", {%4,%5}, {%6}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3]) : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]));
#elif CAL_MMA == 10
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9}, " D4 ";"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]));
#elif CAL_MMA == 11
    asm(SP ".sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " D4 ", {%4,%5}, {%6,%7}, " D4 ", %8, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]), IN_C(b[1]), "r"(e));
#elif CAL_MMA == 12
    asm(SP ".sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9,%10,%11}, " D4
        ", %12, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]), IN_C(b[2]), IN_C(b[3]), "r"(e));
#elif CAL_MMA == 13
    asm(SP ".sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 " D4 ", {%4,%5}, {%6,%7}, " D4 ", %8, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]), IN_C(b[1]), "r"(e));
#elif CAL_MMA == 14
    asm(SP ".sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9,%10,%11}, " D4
        ", %12, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]), IN_C(b[2]), IN_C(b[3]), "r"(e));
#elif CAL_MMA == 15
    asm(SP ".sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 " D4 ", {%4,%5}, {%6,%7}, " D4 ", %8, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(b[0]), IN_C(b[1]), "r"(e));
#elif CAL_MMA == 16
    asm(SP ".sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 " D4 ", {%4,%5,%6,%7}, {%8,%9,%10,%11}, " D4
        ", %12, 0x0;"
        : ACC_C(d[0]), ACC_C(d[1]), ACC_C(d[2]), ACC_C(d[3])
        : IN_C(a[0]), IN_C(a[1]), IN_C(a[2]), IN_C(a[3]), IN_C(b[0]), IN_C(b[1]), IN_C(b[2]), IN_C(b[3]), "r"(e));
#endif
}

// seed: NA + NB values every lane reads (FP64 benchmarks read doubles, the others 32-bit words);
// e: sparse metadata; iters: loop trips (a multiple of CAL_UNROLL).
extern "C" __global__ void cal_mma(const in_t* __restrict__ seed, unsigned e, int iters, double* __restrict__ out) {
    in_t a[NA], b[NB];
#pragma unroll
    for (int i = 0; i < NA; ++i) a[i] = seed[i];
#pragma unroll
    for (int i = 0; i < NB; ++i) b[i] = seed[NA + i];
    acc_t acc[CAL_CHAINS][NC];
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c)
#pragma unroll
        for (int i = 0; i < NC; ++i) acc[c][i] = (acc_t)0;
    for (int it = 0; it < iters; it += CAL_UNROLL) {
#pragma unroll
        for (int u = 0; u < CAL_UNROLL; ++u)
#pragma unroll
            for (int c = 0; c < CAL_CHAINS; ++c) mma_step(acc[c], a, b, e);
    }
    double s = 0.0;
#pragma unroll
    for (int c = 0; c < CAL_CHAINS; ++c)
#pragma unroll
        for (int i = 0; i < NC; ++i) s += (double)acc[c][i];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif  // CAL_MMA
