// CUDA cores, temporal fusion in 1D: T time steps per sweep on a tile held in registers.
//
// Why not the 1D/2D streaming kernel (cuda_cores_2d.cu with a y-radius of 0): it streams down rows, and a 1D
// field has one, so every block ran the T-step pipeline start-up for a single row (at T = 8 it executed 9 FMAs
// per useful one) and the intermediate steps went through shared memory and a barrier per row.  Here each block
// owns a tile of TILE = NT*V consecutive points, halo included, each thread V adjacent points in registers.  A
// step needs only the R points either side of a thread's V: every thread publishes its R leftmost and R
// rightmost values in shared memory, one barrier, reads its neighbours' and updates its V points.  The valid
// part of the tile shrinks by R per side per step (the outputs are TXO = TILE - 2*R*T - (VEC - 1) points, rounded
// down to whole 16-byte vectors), so the redundant work is about 2RT/TILE: 3 % at R*T = 32 with 2048-point tiles.
//
// Global loads and stores are 16-byte vectors; the tile of block k starts at the whole vector at or before domain
// point k*TXO - R*T (the VEC - 1 points of room in TXO absorb the offset, so any ghost width works).  With K_STAGE
// the tile passes through shared memory so that the global accesses are coalesced.  Points a thread holds past
// the tile's valid part are computed all the same and never stored.
//
// FP16 and BF16 (K_PAIR, kernels/cc_values.cuh): every word holds the same point of tiles 2k and 2k + 1 (the
// block's "lanes"), one packed FMA per tap; a vector is then 4 words, 4 points of each tile, moved to and from
// global memory as two 8-byte vectors of 16-bit values, one per tile.
//
// Compile-time parameters (-D, prefixed K_): K_REAL (double|float) or K_PAIR (1: FP16, 2: BF16), K_R (radius), K_T (steps), K_V (points per
// thread, a multiple of the vector width), K_NT (threads per block), K_TXO (outputs per tile), K_TAPS (optional:
// bit b set where the weight at offset b - R exists; default every offset), K_STAGE (optional, 0 or 1).  Weights live in __constant__ memory.

#include "cc_values.cuh"
#define R K_R
#define T K_T
#define V K_V
#define NT K_NT
#define TXO K_TXO
#define KW (2 * R + 1)
#define HALO (R * T)
#define TILE (NT * V)
#define VEC ((int)(16 / sizeof(real)))  // elements per 16-byte vector

static_assert(R <= V, "a thread's neighbours must hold the R points either side of its V");
static_assert(V % VEC == 0 && TXO % VEC == 0, "V and TXO must be whole 16-byte vectors");
static_assert(TXO > 0 && TXO + 2 * HALO + VEC - 1 <= TILE,
              "the tile's outputs, its halo and the room to align its start do not fit its NT*V points");

#ifdef K_TAPS
#define TAPS ((unsigned long long)(K_TAPS))
#else
#define TAPS (~0ull)
#endif

extern "C" __constant__ real c_w[KW];  // with K_PAIR, each weight in both halves

__device__ __forceinline__ constexpr bool tap(int b) { return (TAPS >> b) & 1ull; }

// 16-byte vector load and store of VEC adjacent elements.
__device__ __forceinline__ void load_vec(real* dst, const real* src) {
#if K_PAIR
    const uint4 q = *reinterpret_cast<const uint4*>(src);  // words: bits, not values
    dst[0] = q.x; dst[1] = q.y; dst[2] = q.z; dst[3] = q.w;
    return;
#endif
    if (sizeof(real) == 8) {
        const double2 q = *reinterpret_cast<const double2*>(src);
        dst[0] = q.x; dst[VEC > 1 ? 1 : 0] = q.y;
    } else {
        const float4 q = *reinterpret_cast<const float4*>(src);
        dst[0] = q.x; dst[1 % VEC] = q.y; dst[2 % VEC] = q.z; dst[3 % VEC] = q.w;
    }
}
__device__ __forceinline__ void store_vec(real* dst, const real* src) {
#if K_PAIR
    *reinterpret_cast<uint4*>(dst) = make_uint4(src[0], src[1], src[2], src[3]);
    return;
#endif
    if (sizeof(real) == 8) {
        *reinterpret_cast<double2*>(dst) = make_double2(src[0], src[VEC > 1 ? 1 : 0]);
    } else {
        *reinterpret_cast<float4*>(dst) = make_float4(src[0], src[1 % VEC], src[2 % VEC], src[3 % VEC]);
    }
}

#if K_PAIR
// The low (high) 16-bit halves of a and b as one word, a's in the low half: one byte permute (PRMT), where the
// masks and shifts they replace compiled to two instructions per word (nvcc 13.0 for sm_90).
__device__ __forceinline__ unsigned low_halves(unsigned a, unsigned b) { return __byte_perm(a, b, 0x5410); }
__device__ __forceinline__ unsigned high_halves(unsigned a, unsigned b) { return __byte_perm(a, b, 0x7632); }
#endif

// A vector of both lanes from global memory: VEC points of the tile at src (lane 0) and of the tile `stride`
// points further (lane 1, zeros where `second` is false).  Without pairs, load_vec.
__device__ __forceinline__ void load_gvec(real* dst, const elem* src, long long stride, bool second) {
#if K_PAIR
    const uint2 a = *reinterpret_cast<const uint2*>(src);
    const uint2 b = second ? *reinterpret_cast<const uint2*>(src + stride) : make_uint2(0u, 0u);
    dst[0] = low_halves(a.x, b.x);
    dst[1] = high_halves(a.x, b.x);
    dst[2] = low_halves(a.y, b.y);
    dst[3] = high_halves(a.y, b.y);
#else
    load_vec(dst, src);
#endif
}
// One vector store to global memory, as one instruction.  Written as a vector type's assignment, the stores of the
// tile's outputs reached the PTX as VEC scalar stores each (nvcc 13.0: st.global.f32 four times where st.global.v4.f32
// was meant, in FP64 and for the pairs' lane 1 too), four times the store instructions and L1 wavefronts.
__device__ __forceinline__ void st_global_v2(unsigned* dst, unsigned a, unsigned b) {
#if defined(TCADVISOR_HOST_EMU)
    dst[0] = a; dst[1] = b;
#else
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(dst), "r"(a), "r"(b) : "memory");
#endif
}
__device__ __forceinline__ void st_global_vec(real* dst, const real* src) {
#if defined(TCADVISOR_HOST_EMU) || K_PAIR
    store_vec(dst, src);
#else
    if (sizeof(real) == 8)
        asm volatile("st.global.v2.f64 [%0], {%1, %2};" :: "l"(dst), "d"((double)src[0]), "d"((double)src[VEC > 1 ? 1 : 0])
                     : "memory");
    else
        asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "f"((float)src[0]), "f"((float)src[1 % VEC]),
                     "f"((float)src[2 % VEC]), "f"((float)src[3 % VEC]) : "memory");
#endif
}
// The vector `src` of both lanes to global memory: lane 0 at dst, lane 1 (if `second`) `stride` points further.
__device__ __forceinline__ void store_gvec(elem* dst, long long stride, const real* src, bool second) {
#if K_PAIR
    st_global_v2(reinterpret_cast<unsigned*>(dst), low_halves(src[0], src[1]), low_halves(src[2], src[3]));
    if (second)
        st_global_v2(reinterpret_cast<unsigned*>(dst + stride), high_halves(src[0], src[1]), high_halves(src[2], src[3]));
#else
    st_global_vec(dst, src);
#endif
}

#ifndef K_STAGE
#define K_STAGE 0
#endif
#define NCHUNK (V / VEC)     // 16-byte vectors per thread
#define SLOT (V + VEC)       // a thread's row in the staging buffer, padded by one vector against bank conflicts
// Where vector c = tid + m*NT of the tile lies in the staging buffer: thread c / NCHUNK's row, its (c % NCHUNK)-th
// vector.  With NT a multiple of NCHUNK that is thread tid's offset plus m*(NT/NCHUNK) rows, a constant per m,
// which spares each tile a signed division and remainder per vector (nvcc kept them: about 60 instructions).
__device__ __forceinline__ int stage_at(int tid, int m) {
    if (NT % NCHUNK == 0) return (tid / NCHUNK) * SLOT + (tid % NCHUNK) * VEC + m * (NT / NCHUNK) * SLOT;
    return ((tid + m * NT) / NCHUNK) * SLOT + ((tid + m * NT) % NCHUNK) * VEC;
}

__device__ __forceinline__ void store_vec_shared(real* dst, const real* src) { store_vec(dst, src); }

// A vector of the tile that straddles the edge of its outputs or the domain's end: element by element, each lane
// where its point is an output inside the domain.  Only the few vectors at a tile's output edges and the domain's end
// take it, and it is kept apart from the whole vectors' path: inlined with its conditions in tile points, which are
// the same for every tile of a block, nvcc computed all of them at the kernel's start and kept them in registers
// (about 200 instructions per tile at V = 32, a block computing one tile; nvcc 13.0 for sm_90).  FP32 and FP64 call
// it out of line.  The FP16/BF16 pairs inline it with its conditions in domain points (q0: the domain point of lane
// 0's first output, which moves with the tile), since for them the call's convention cost registers (Box-1D3R FP16 x2
// 58 -> 72, one resident block fewer).  Measured both ways (validation/results/h200-2026-12-01/cc1d-codegen2):
// inlined, FP32/FP64 ran 0.91-1.05x the call, the pairs 0.98-1.13x.
struct vec_of { real v[VEC]; };
#if K_PAIR
__device__ __forceinline__ void store_straddling(elem* dst, long long stride, const vec_of& y, long long q0, long long p,
                                                 int W, bool second)
{
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        const bool mine = p + e >= q0 && p + e < q0 + TXO;
        store_lanes(dst + e, stride, y.v[e], mine && p + e < W, second && mine && p + TXO + e < W);
    }
}
#define STORE_STRADDLING(dst, y) store_straddling(dst, TXO, y, (long long)k * LANES * TXO, p, W, second)
#else
__device__ __noinline__ void store_straddling(elem* dst, long long stride, vec_of y, int c, int lo, long long p, int W,
                                              bool second)
{
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
        const bool mine = c + e >= lo && c + e < lo + TXO;
        store_lanes(dst + e, stride, y.v[e], mine && p + e < W, second && mine && p + TXO + e < W);
    }
}
#define STORE_STRADDLING(dst, y) store_straddling(dst, TXO, y, c, lo, p, W, second)
#endif

extern "C" __global__ void __launch_bounds__(NT)
cc_tile1d(const elem* __restrict__ in, elem* __restrict__ out, int W, int Gx, int tiles)
{
    // edge[parity][side][k][thread]: side 0 holds a thread's R leftmost values, side 1 its R rightmost.
    __shared__ real edge[2][2][R][NT];
#if K_STAGE
    // K_STAGE = 1: the tile goes through shared memory on its way in and out, so that the global loads and stores
    // are coalesced (lane i of a warp moves vector i of a run of 32) instead of each lane moving its own V points
    // (32 vectors V*sizeof(real) bytes apart per instruction).
    __align__(16) __shared__ real stage[NT * SLOT];
#endif
    const int tid = threadIdx.x;
    // Block iteration k computes tiles LANES*k .. LANES*k + LANES - 1 (one per lane).
    for (int k = blockIdx.x; k * LANES < tiles; k += gridDim.x) {
        const bool second = LANES > 1 && k * LANES + 1 < tiles;  // lane 1's tile exists
        // Padded column of the tile's point 0: the whole vector at or before domain point k*TXO - HALO, so that
        // every vector access is aligned whatever the ghost width Gx (a field shared with a deeper sweep has
        // wider ghosts); the tile's outputs start OFF points later (TXO leaves VEC - 1 points of room for it).
        const int off = (Gx - HALO) % VEC;
        const int lo = HALO + off;  // tile point of domain point k*TXO
        const long long base = (long long)(Gx - HALO - off) + (long long)k * LANES * TXO;  // lane 1: + TXO
        real x[V];
#if K_STAGE
#pragma unroll
        for (int m = 0; m < NCHUNK; ++m) {  // vector c of the tile belongs to thread c / NCHUNK
            const int c = tid + m * NT;
            real q[VEC];
            load_gvec(q, in + base + (long long)c * VEC, TXO, second);
            store_vec_shared(&stage[stage_at(tid, m)], q);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < V; j += VEC) load_vec(&x[j], &stage[tid * SLOT + j]);
#else
#pragma unroll
        for (int j = 0; j < V; j += VEC) load_gvec(&x[j], in + base + tid * V + j, TXO, second);
#endif

#pragma unroll
        for (int s = 0; s < T; ++s) {
            const int par = s & 1;
#pragma unroll
            for (int m = 0; m < R; ++m) {
                edge[par][0][m][tid] = x[m];
                edge[par][1][m][tid] = x[V - R + m];
            }
            __syncthreads();
            real win[V + 2 * R];  // the left neighbour's R, this thread's V, the right neighbour's R
#pragma unroll
            for (int m = 0; m < R; ++m) {
                win[m] = tid > 0 ? edge[par][1][m][tid - 1] : real(0);
                win[R + V + m] = tid < NT - 1 ? edge[par][0][m][tid + 1] : real(0);
            }
#pragma unroll
            for (int j = 0; j < V; ++j) win[R + j] = x[j];
#pragma unroll
            for (int j = 0; j < V; ++j) {
                real acc = real(0);
#pragma unroll
                for (int b = 0; b < KW; ++b)
                    if (tap(b)) acc = madd(c_w[b], win[j + b], acc);
                x[j] = acc;
            }
            // The next step writes the other parity's edges: no second barrier is needed before this
            // step's reads are done, since a thread reaches the next write of this parity only after
            // the next step's barrier, which every thread passes after finishing these reads.
        }
        // Outputs: tile points lo .. lo + TXO - 1 that lie in the domain; whole vectors where they can be, single
        // points at the ends (lo need not be a whole number of vectors, nor W).
#if K_STAGE
        // (every thread read the staging buffer before the steps' barriers: it can be overwritten)
#pragma unroll
        for (int j = 0; j < V; j += VEC) store_vec_shared(&stage[tid * SLOT + j], &x[j]);
        __syncthreads();
#pragma unroll
        for (int m = 0; m < NCHUNK; ++m) {
            const int cv = tid + m * NT;
            vec_of y;
            load_vec(y.v, &stage[stage_at(tid, m)]);
            const int c = cv * VEC;
            const long long p = (long long)k * LANES * TXO + c - lo;  // domain point of lane 0's first element
            if (c >= lo && c + VEC <= lo + TXO && p + (LANES - 1) * TXO + VEC <= W)
                store_gvec(out + base + c, TXO, y.v, second);
            else if (c + VEC > lo && c < lo + TXO && p < W)
                STORE_STRADDLING(out + base + c, y);
        }
#else
#pragma unroll
        for (int j = 0; j < V; j += VEC) {
            const int c = tid * V + j;  // tile point of the vector's first element
            const long long p = (long long)k * LANES * TXO + c - lo;  // lane 0's domain point
            if (c >= lo && c + VEC <= lo + TXO && p + (LANES - 1) * TXO + VEC <= W) {
                store_gvec(out + base + c, TXO, &x[j], second);
            } else if (c + VEC > lo && c < lo + TXO && p < W) {
                vec_of y;
#pragma unroll
                for (int e = 0; e < VEC; ++e) y.v[e] = x[j + e];
                STORE_STRADDLING(out + base + c, y);
            }
        }
#endif
        __syncthreads();  // the next tile's first step rewrites parity 0's edges
    }
}
