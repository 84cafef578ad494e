// The values the CUDA-core kernels compute on: K_REAL (double, float) or, with K_PAIR, two 16-bit values per word.
//
// Why pairs of tiles: the CUDA cores reach their FP16 and BF16 rates only with packed instructions
// (fma.rn.f16x2, fma.rn.bf16x2: two multiply-adds per instruction), and a stencil's taps at odd offsets
// would need a shuffle of halves per tap if the two values of a word were neighbouring points.  Here the
// two halves of a word are the SAME point of two tiles (strips in 2D, tiles of the xy-plane in 3D, 1D
// tiles): lane 0 (the low half) of tile 2k, lane 1 (the high half) of tile 2k + 1, LANE_STRIDE points
// further along x.  Every tap then is one packed FMA on whole words, the kernels' loops, shared-memory
// layouts and barriers stay those of the 32-bit FP32 kernel, and only the global loads and stores
// change: each lane moves its own 16-bit value, packed and unpacked in registers.  A block whose second
// tile lies past the grid computes its lane 1 on zeros and stores nothing from it.
//
// K_PAIR = 1: FP16 fields, FP16 arithmetic (every FMA rounds to FP16, as the CUDA-core FP16 rate
// counts it); K_PAIR = 2: BF16 (fma.rn.bf16x2, compute capability 8.0 and newer).  Without K_PAIR,
// real = elem = K_REAL and madd is fma.  The host emulation of the tests (tests/host_cuda/emu.h) gives
// the packed FMA as two correctly rounded scalar ones.
#pragma once
#ifndef K_PAIR
#define K_PAIR 0
#endif

#if K_PAIR
typedef unsigned real;        // one value of each lane
typedef unsigned short elem;  // what the fields store: the 16-bit pattern of one value
#define LANES 2
__device__ __forceinline__ real madd(real w, real x, real acc) {
#if defined(TCADVISOR_HOST_EMU)
    return emu::fma_16x2(K_PAIR == 1, w, x, acc);
#else
    real d;
#if K_PAIR == 1
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(w), "r"(x), "r"(acc));
#else
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(w), "r"(x), "r"(acc));
#endif
    return d;
#endif
}
__device__ __forceinline__ real pack_lanes(elem lo, elem hi) { return (unsigned)lo | ((unsigned)hi << 16); }
__device__ __forceinline__ elem lane_of(real v, int l) { return (elem)(v >> (16 * l)); }
#else
typedef K_REAL real;
typedef K_REAL elem;
#define LANES 1
__device__ __forceinline__ real madd(real w, real x, real acc) { return fma(w, x, acc); }
#endif

// One value of each lane from global memory: the point at src[0] (lane 0) and, where the second tile exists
// (`second`), the one `stride` points further (lane 1).
__device__ __forceinline__ real load_lanes(const elem* src, long long stride, bool second) {
#if K_PAIR
    return pack_lanes(src[0], second ? src[stride] : (elem)0);
#else
    return src[0];
#endif
}

// K_VEC2 (pairs, an even number of columns per thread): a thread loads and stores two adjacent points of each lane
// with one 32-bit access per lane (two words, one per point) instead of two 16-bit ones: half the registers for
// the same bytes in flight.  The strip or tile then starts at an even padded column (the kernels shift it by
// OFF = 1 where the ghost width makes it odd, and keep two columns of room for that in TXO).
#ifndef K_VEC2
#define K_VEC2 0
#endif
#if K_VEC2 && !K_PAIR
#error "K_VEC2 packs FP16/BF16 pairs (K_PAIR)"
#endif

// Points src[0], src[1] of lane 0 and src[stride], src[stride + 1] of lane 1 (zeros where `second` is false) as
// the words p0 (point 0 of both lanes) and p1 (point 1); src must be 4-byte aligned.
__device__ __forceinline__ void load_lanes2(real& p0, real& p1, const elem* src, long long stride, bool second) {
#if K_PAIR
    const unsigned a = *reinterpret_cast<const unsigned*>(src);
    const unsigned b = second ? *reinterpret_cast<const unsigned*>(src + stride) : 0u;
    p0 = (a & 0xFFFFu) | (b << 16);
    p1 = (a >> 16) | (b & 0xFFFF0000u);
#endif
}
// The words p0, p1 (two adjacent points of both lanes) to dst[0..1] (lane 0) and, if `second`, dst[stride..] (lane 1).
__device__ __forceinline__ void store_lanes2(elem* dst, long long stride, real p0, real p1, bool second) {
#if K_PAIR
    *reinterpret_cast<unsigned*>(dst) = (p0 & 0xFFFFu) | (p1 << 16);
    if (second) *reinterpret_cast<unsigned*>(dst + stride) = (p0 >> 16) | (p1 & 0xFFFF0000u);
#endif
}

// Stores each lane's value of `v` where that lane's point lies in the domain: lane 0 at dst[0] if `ok0`,
// lane 1 at dst[stride] if `ok1` (ignored without pairs).
__device__ __forceinline__ void store_lanes(elem* dst, long long stride, real v, bool ok0, bool ok1) {
#if K_PAIR
    if (ok0) dst[0] = lane_of(v, 0);
    if (ok1) dst[stride] = lane_of(v, 1);
#else
    if (ok0) dst[0] = v;
#endif
}
