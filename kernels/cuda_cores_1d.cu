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
// Compile-time parameters (-D, prefixed K_): K_REAL (double|float), K_R (radius), K_T (steps), K_V (points per
// thread, a multiple of the vector width), K_NT (threads per block), K_TXO (outputs per tile), K_TAPS (optional:
// bit b set where the weight at offset b - R exists; default every offset), K_STAGE (optional, 0 or 1).  Weights live in __constant__ memory.

typedef K_REAL real;
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

extern "C" __constant__ real c_w[KW];

__device__ __forceinline__ constexpr bool tap(int b) { return (TAPS >> b) & 1ull; }

// 16-byte vector load and store of VEC adjacent elements.
__device__ __forceinline__ void load_vec(real* dst, const real* src) {
    if (sizeof(real) == 8) {
        const double2 q = *reinterpret_cast<const double2*>(src);
        dst[0] = q.x; dst[VEC > 1 ? 1 : 0] = q.y;
    } else {
        const float4 q = *reinterpret_cast<const float4*>(src);
        dst[0] = q.x; dst[1 % VEC] = q.y; dst[2 % VEC] = q.z; dst[3 % VEC] = q.w;
    }
}
__device__ __forceinline__ void store_vec(real* dst, const real* src) {
    if (sizeof(real) == 8) {
        *reinterpret_cast<double2*>(dst) = make_double2(src[0], src[VEC > 1 ? 1 : 0]);
    } else {
        *reinterpret_cast<float4*>(dst) = make_float4(src[0], src[1 % VEC], src[2 % VEC], src[3 % VEC]);
    }
}

#ifndef K_STAGE
#define K_STAGE 0
#endif
#define NCHUNK (V / VEC)     // 16-byte vectors per thread
#define SLOT (V + VEC)       // a thread's row in the staging buffer, padded by one vector against bank conflicts

__device__ __forceinline__ void store_vec_shared(real* dst, const real* src) { store_vec(dst, src); }

extern "C" __global__ void __launch_bounds__(NT)
cc_tile1d(const real* __restrict__ in, real* __restrict__ out, int W, int Gx, int tiles)
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
    for (int k = blockIdx.x; k < tiles; k += gridDim.x) {
        // Padded column of the tile's point 0: the whole vector at or before domain point k*TXO - HALO, so that
        // every vector access is aligned whatever the ghost width Gx (a field shared with a deeper sweep has
        // wider ghosts); the tile's outputs start OFF points later (TXO leaves VEC - 1 points of room for it).
        const int off = (Gx - HALO) % VEC;
        const int lo = HALO + off;  // tile point of domain point k*TXO
        const long long base = (long long)(Gx - HALO - off) + (long long)k * TXO;
        real x[V];
#if K_STAGE
#pragma unroll
        for (int m = 0; m < NCHUNK; ++m) {  // vector c of the tile belongs to thread c / NCHUNK
            const int c = tid + m * NT;
            real q[VEC];
            load_vec(q, in + base + (long long)c * VEC);
            store_vec_shared(&stage[(c / NCHUNK) * SLOT + (c % NCHUNK) * VEC], q);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < V; j += VEC) load_vec(&x[j], &stage[tid * SLOT + j]);
#else
#pragma unroll
        for (int j = 0; j < V; j += VEC) load_vec(&x[j], in + base + tid * V + j);
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
                    if (tap(b)) acc = fma(c_w[b], win[j + b], acc);
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
            real y[VEC];
            load_vec(y, &stage[(cv / NCHUNK) * SLOT + (cv % NCHUNK) * VEC]);
            const int c = cv * VEC;
            const long long p = (long long)k * TXO + c - lo;  // domain point of the vector's first element
            if (c >= lo && c + VEC <= lo + TXO && p + VEC <= W) {
                store_vec(out + base + c, y);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    if (c + e >= lo && c + e < lo + TXO && p + e < W) out[base + c + e] = y[e];
            }
        }
#else
#pragma unroll
        for (int j = 0; j < V; j += VEC) {
            const int c = tid * V + j;  // tile point of the vector's first element
            const long long p = (long long)k * TXO + c - lo;  // its domain point
            if (c >= lo && c + VEC <= lo + TXO && p + VEC <= W) {
                store_vec(out + base + c, &x[j]);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    if (c + e >= lo && c + e < lo + TXO && p + e < W) out[base + c + e] = x[j + e];
            }
        }
#endif
        __syncthreads();  // the next tile's first step rewrites parity 0's edges
    }
}
