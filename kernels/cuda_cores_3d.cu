// CUDA cores, temporal fusion in 3D: T time steps per sweep, box, star and any other tap set.
//
// Each block owns a tile of the xy-plane, COLS = BX*V columns by ROWS = BY rows
// (outputs plus a halo of R*T on every side), and streams along z.  As in the 2D
// kernel, step s keeps the last plane it produced in shared memory
// (double-buffered) and every thread keeps, per step, the 2R pending partial sums
// of the planes its kernel planes still have to reach.  One __syncthreads per
// input plane.
//
// Three optional refinements (default off: the defaults are chosen by measurement,
// benchmarks/tune_gpu_kernels.py):
//  * K_TRAP = 1: step s computes only the tile rows it must get right,
//    [R*s, ROWS - R*s) (the valid region shrinks by R per step); rows outside it
//    are never read by a valid row of step s + 1.  Whole warps whose rows all lie
//    outside skip the step, cutting the redundant FMAs of the y-halo.
//  * K_PF = P > 1: P input planes in flight per thread (a ring of registers),
//    so more global loads overlap the compute of one plane.  The main loop is
//    unrolled P times so that every ring slot is a compile-time register.
//  * K_W = W > 1: each thread owns W adjacent rows (register blocking along y).
//    A step reads 2R + W rows of V + 2R values from shared memory for W*V
//    outputs instead of 2R + 1 rows for V: fewer shared-memory wavefronts and
//    load instructions per FMA, the limit of the W = 1 kernel.
//  * K_VLD = 1: shared rows laid out in order (element L at L) instead of by residue, so that a thread reads
//    its window of V + 2R values with VW-wide vector loads (8 or 16 bytes; VW the widest that divides V):
//    ceil((V + 2R) / VW) load instructions per row instead of V + 2R.  The FP32 kernel is bound by
//    instruction issue (tests of 2026-11-24: an instruction in 79 % of the cycles, the FMA pipe at 59 %),
//    and stars issue few FMAs per value loaded.  The price: a thread's scalar stores of its V outputs
//    land V words apart (V-way bank conflicts), where the residue layout has none.
//
// FP16 and BF16 (K_PAIR, kernels/cc_values.cuh): a block computes tiles 2b and 2b + 1 along x at once, each word
// the same point of both (lane 0, lane 1), one packed FMA per tap; everything else is the FP32 kernel's.
//
// Compile-time parameters (-D): K_REAL or K_PAIR (1: FP16, 2: BF16), K_R, K_T, K_STAR, K_V (x columns per
// thread), K_BX, K_BY (threads along x and y), K_TRAP, K_PF, K_W, K_VLD (optional,
// default 0, 1, 1 and 0), K_TAPS (optional: the taps of a stencil that is neither
// box nor star, a bitmask per row of the KW^3 box; see tap()).  R is the largest
// |offset| on any axis, so every tap lies in the box and the pending planes, halos
// and trimmed rows hold for any tap set.  Weights in __constant__ memory, indexed [p][a][b].

#include "cc_values.cuh"
#define R K_R
#define T K_T
#define STAR K_STAR
#define V K_V
#define BX K_BX
#define BY K_BY
#ifndef K_TRAP
#define K_TRAP 0
#endif
#ifndef K_PF
#define K_PF 1
#endif
#ifndef K_W
#define K_W 1
#endif
#ifndef K_VLD
#define K_VLD 0
#endif
#define TRAP K_TRAP
#define PF K_PF
#define W K_W

#define KW (2 * R + 1)
#define HALO (R * T)
#define COLS (BX * V)
#define ROWS (BY * W)
#define TXO (COLS - 2 * HALO - 2 * K_VEC2)  // K_VEC2: two columns of room to start the tile at an even column
#define TYO (ROWS - 2 * HALO)
#define NV (V + 2 * R)
#define NPEND (2 * R)
#define NT (BX * BY)
#define BANKMOD ((int)(128 / sizeof(real)))
#define SUB_BASE ((COLS + 2 * R + V - 1) / V)
#define SUB_OFF ((BANKMOD / V) % BANKMOD)
#define SUBLEN (SUB_BASE + ((SUB_OFF - SUB_BASE % BANKMOD) % BANKMOD + BANKMOD) % BANKMOD)
#if K_VLD
// values per vector load: the widest of 4, 2 (at most 16 bytes) dividing V; rows padded to a multiple of it, so
// every window starts aligned and its last vector, which may read past the window, stays inside the row buffer
#define VW ((V % 4 == 0 && 4 * sizeof(real) <= 16) ? 4 : (V % 2 == 0 && 2 * sizeof(real) <= 16) ? 2 : 1)
#define NVEC ((NV + VW - 1) / VW)
#define ROWBUF (((COLS + 2 * R + VW - 1) / VW) * VW)
#else
#define ROWBUF (V * SUBLEN)
#endif
#define PLANEBUF ((ROWS + 2 * R) * ROWBUF)

#if TXO <= 0 || TYO <= 0
#error "the tile is smaller than its halo: use a larger tile"
#endif

extern "C" __constant__ real c_w[KW * KW * KW];
// Read by the host to size the dynamic shared memory exactly as the kernel lays it out.
extern "C" __constant__ int k_planebuf = PLANEBUF;

#ifdef K_TAPS
// Any other stencil: K_TAPS is one identifier holding, per kernel row (p, a) in that order, '_' and the row's
// bitmask of columns b in hex (TAPHEX digits, most significant first), as in kernels/cuda_cores_2d.cu: an
// identifier that no compiler driver splits, read as a constexpr string so the unrolled loops drop absent taps.
#define TAPHEX ((KW + 3) / 4)
#define TAPS_STR_(x) #x
#define TAPS_STR(x) TAPS_STR_(x)
static_assert(sizeof(TAPS_STR(K_TAPS)) == KW * KW * (TAPHEX + 1) + 1,
              "K_TAPS: one '_' and TAPHEX hex digits per kernel row");
__device__ __forceinline__ constexpr int hex_digit(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }
__device__ __forceinline__ constexpr bool tap(int p, int a, int b) {
    constexpr char taps[] = TAPS_STR(K_TAPS);
    return (hex_digit(taps[(p * KW + a) * (TAPHEX + 1) + TAPHEX - b / 4]) >> (b % 4)) & 1;
}
#else
__device__ __forceinline__ constexpr bool tap(int p, int a, int b) {
    return STAR ? ((a == R && b == R) || (p == R && (a == R || b == R))) : true;
}
#endif
#if K_VLD
__device__ __forceinline__ int sidx(int L) { return L; }
template <int N> struct alignas(N * sizeof(real)) real_vec { real x[N]; };
#else
__device__ __forceinline__ int sidx(int L) { return (L % V) * SUBLEN + L / V; }
#endif

extern "C" __global__ void __launch_bounds__(NT)
cc_stream3d(const elem* __restrict__ in, elem* __restrict__ out,
            int nx, int ny, int nz, long long pitch_y, long long pitch_z,
            int Gx, int Gy, int Gz, int planes_per_block)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);  // [T][2][ROWS + 2R][ROWBUF]
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const int ry0 = ty * W;  // first tile row of this thread
    const int X0 = blockIdx.x * LANES * TXO, Y0 = blockIdx.y * TYO;  // lane 1's tile starts TXO columns further
    const bool second = LANES > 1 && X0 + TXO < nx;  // lane 1's tile exists
    const int Z0 = blockIdx.z * planes_per_block;
    const int Z1 = min(Z0 + planes_per_block, nz);
    const int planes_padded = nz + 2 * Gz;
    const int rows_padded = ny + 2 * Gy;
    // K_VEC2: the tile starts OFF columns early so that its first padded column is even (4-byte aligned pairs of
    // 16-bit values); its outputs are tile columns [HALO + OFF, HALO + OFF + TXO).  Without K_VEC2, OFF = 0.
    const int OFF = K_VEC2 ? ((Gx - HALO) & 1) : 0;
    const long long colbase = (long long)Gx + X0 - HALO - OFF;
    const int prow = Gy + Y0 - HALO + ry0;  // padded row of this thread's first tile row
    bool row_ok[W];
#if K_PAIR
    // FP16/BF16 pairs: each row's offset in a plane computed once, so that a plane adds only its offset along z
    // (ROW_SETUP, ROW_OK, ROW_SRC below; the outputs likewise).  Measured beside the per-plane products that the
    // FP32 and FP64 kernels keep (validation/results/h200-2026-11-28/cc3d-parts/, cc3d-pairs/): FP16 1.08-1.35x
    // at Star-3D1R x3-x7 and Box-3D1R x4, FP32 and FP64 0.96-1.02x.  The compiler's schedule of this loop turned
    // on the exact form of these expressions (the same offsets written into one product per row: 0.97-1.01x), so
    // the form measured is the form kept.
    long long row_off[W];  // this thread's rows in a plane (both fields): a plane adds only its offset along z
#pragma unroll
    for (int w = 0; w < W; ++w) {
        row_ok[w] = prow + w >= 0 && prow + w < rows_padded;
        row_off[w] = (long long)(prow + w) * pitch_y + colbase;
    }
// (used only as whole initialisers with an identifier argument, so written without parentheses: the form measured)
#define ROW_SETUP(pz)                                                                                \
    const bool zok_ = pz >= 0 && pz < planes_padded;                                                 \
    const elem* const plane_ = in + (long long)pz * pitch_z;
#define ROW_OK(w, pz) row_ok[w] && zok_
#define ROW_SRC(w, pz) plane_ + row_off[w]
#else
#pragma unroll
    for (int w = 0; w < W; ++w) row_ok[w] = prow + w >= 0 && prow + w < rows_padded;
#define ROW_SETUP(pz)
#define ROW_OK(w, pz) row_ok[w] && pz >= 0 && pz < planes_padded
#define ROW_SRC(w, pz) in + (long long)pz * pitch_z + (long long)(prow + w) * pitch_y + colbase
#endif

    for (int k = tid; k < T * 2 * PLANEBUF; k += NT) smem[k] = real(0);

    real pend[T][NPEND][W][V];
#pragma unroll
    for (int s = 0; s < T; ++s)
#pragma unroll
        for (int m = 0; m < NPEND; ++m)
#pragma unroll
            for (int w = 0; w < W; ++w)
#pragma unroll
                for (int v = 0; v < V; ++v) pend[s][m][w][v] = real(0);

    real ld[PF][W][V];  // ring of input planes in flight: plane j sits in slot j % PF
#if K_VEC2
    // Columns 2j and 2j + 1 (j = tx + m*BX) with one 32-bit access per lane; ld[slot][w][k] holds tile column COLV(k).
#define COLV(k) (2 * (tx + ((k) >> 1) * BX) + ((k) & 1))
#define LOAD_PLANE(q, slot)                                                                          \
    {                                                                                                \
        const int pz_ = Gz + (q);                                                                    \
        ROW_SETUP(pz_)                                                                               \
        _Pragma("unroll") for (int w = 0; w < W; ++w) {                                              \
            const bool ok_ = ROW_OK(w, pz_);                                                         \
            const elem* src_ = ROW_SRC(w, pz_);                                                      \
            _Pragma("unroll") for (int m = 0; m < V / 2; ++m) {                                      \
                if (ok_) load_lanes2(ld[slot][w][2 * m], ld[slot][w][2 * m + 1], src_ + 2 * (tx + m * BX), TXO, second); \
                else ld[slot][w][2 * m] = ld[slot][w][2 * m + 1] = real(0);                          \
            }                                                                                        \
        }                                                                                            \
    }
#else
#define COLV(k) (tx + (k) * BX)
#define LOAD_PLANE(q, slot)                                                                          \
    {                                                                                                \
        const int pz_ = Gz + (q);                                                                    \
        ROW_SETUP(pz_)                                                                               \
        _Pragma("unroll") for (int w = 0; w < W; ++w) {                                              \
            const bool ok_ = ROW_OK(w, pz_);                                                         \
            const elem* src_ = ROW_SRC(w, pz_);                                                      \
            _Pragma("unroll") for (int k = 0; k < V; ++k)                                            \
                ld[slot][w][k] = ok_ ? load_lanes(src_ + tx + k * BX, TXO, second) : real(0);        \
        }                                                                                            \
    }
#endif
#define STORE_PLANE(buf, slot)                                                                       \
    {                                                                                                \
        _Pragma("unroll") for (int w = 0; w < W; ++w)                                                \
        _Pragma("unroll") for (int k = 0; k < V; ++k)                                                \
            (buf)[(ry0 + w + R) * ROWBUF + sidx(COLV(k) + R)] = ld[slot][w][k];                      \
    }

    __syncthreads();
    LOAD_PLANE(Z0 - R * T, 0);
    STORE_PLANE(smem, 0);
#pragma unroll
    for (int j = 1; j < PF; ++j) LOAD_PLANE(Z0 - R * T + j, j);
    __syncthreads();

    const int n_iter = T * (1 + 2 * R) - 1 + (Z1 - Z0);
    for (int i0 = 0; i0 < n_iter; i0 += PF)
#pragma unroll
    for (int u = 0; u < PF; ++u) {
        // i = i0 + u, so i % PF == u: the slots below are compile-time registers.
        const int i = i0 + u;
        if (i >= n_iter) break;
        LOAD_PLANE(Z0 - R * T + i + PF, u);  // plane i + PF replaces plane i, stored one iteration ago
#pragma unroll
        for (int s = 1; s <= T; ++s) {
            // K_TRAP: rows outside [R*s, ROWS - R*s) cannot reach a valid output; a thread all of whose
            // W rows lie outside skips the step.
            if (TRAP && (ry0 + W - 1 < R * s || ry0 >= ROWS - R * s)) continue;
            const int parity = (s == 1) ? (i & 1) : ((i - 1) & 1);
            const real* src = smem + ((s - 1) * 2 + parity) * PLANEBUF;
#if K_VLD
            real vals[KW + W - 1][NVEC * VW];
#pragma unroll
            for (int a = 0; a < KW + W - 1; ++a)
#pragma unroll
                for (int q = 0; q < NVEC; ++q) {
                    const real_vec<VW> got = *reinterpret_cast<const real_vec<VW>*>(
                        src + (ry0 + a) * ROWBUF + tx * V + q * VW);
#pragma unroll
                    for (int e = 0; e < VW; ++e) vals[a][q * VW + e] = got.x[e];
                }
#else
            real vals[KW + W - 1][NV];
#pragma unroll
            for (int a = 0; a < KW + W - 1; ++a)
#pragma unroll
                for (int j = 0; j < NV; ++j) vals[a][j] = src[(ry0 + a) * ROWBUF + sidx(tx * V + j)];
#endif
            real res[W][V];
#pragma unroll
            for (int w = 0; w < W; ++w)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                // kernel plane p contributes to the pending plane it is the last/next for
                real acc = pend[s - 1][0][w][v];
#pragma unroll
                for (int a = 0; a < KW; ++a)
#pragma unroll
                    for (int b = 0; b < KW; ++b)
                        if (tap(2 * R, a, b)) acc = madd(c_w[((2 * R) * KW + a) * KW + b], vals[w + a][v + b], acc);
                res[w][v] = acc;
#pragma unroll
                for (int m = 1; m < NPEND; ++m) {
                    real p = pend[s - 1][m][w][v];
#pragma unroll
                    for (int a = 0; a < KW; ++a)
#pragma unroll
                        for (int b = 0; b < KW; ++b)
                            if (tap(2 * R - m, a, b))
                                p = madd(c_w[((2 * R - m) * KW + a) * KW + b], vals[w + a][v + b], p);
                    pend[s - 1][m - 1][w][v] = p;
                }
                real p = real(0);
#pragma unroll
                for (int a = 0; a < KW; ++a)
#pragma unroll
                    for (int b = 0; b < KW; ++b)
                        if (tap(0, a, b)) p = madd(c_w[a * KW + b], vals[w + a][v + b], p);
                pend[s - 1][NPEND - 1][w][v] = p;
            }
            if (s < T) {
                real* dst = smem + (s * 2 + (i & 1)) * PLANEBUF + (ry0 + R) * ROWBUF;
#pragma unroll
                for (int w = 0; w < W; ++w)
#pragma unroll
                    for (int v = 0; v < V; ++v) dst[w * ROWBUF + sidx(tx * V + v + R)] = res[w][v];
            } else {
                const int q = Z0 + i + 1 - T * (1 + 2 * R);
#if K_PAIR
                elem* const plane = out + (long long)(Gz + q) * pitch_z + tx * V;
#endif
#pragma unroll
                for (int w = 0; w < W; ++w) {
                    const int y = Y0 - HALO + ry0 + w;
                    if (q >= Z0 && q < Z1 && ry0 + w >= HALO && ry0 + w < HALO + TYO && y < ny) {
#if K_PAIR
                        elem* dst = plane + row_off[w];
#else
                        elem* dst = out + (long long)(Gz + q) * pitch_z + (long long)(prow + w) * pitch_y + colbase
                                    + tx * V;
#endif
                        const int x0 = X0 - HALO - OFF + tx * V;
#pragma unroll
                        for (int v = 0; v < V; ++v) {
                            const int c = tx * V + v;
                            if (c >= HALO + OFF && c < HALO + OFF + TXO && x0 + v < nx)
                                store_lanes(dst + v, TXO, res[w][v], true, second && x0 + TXO + v < nx);
                        }
                    }
                }
            }
        }
        STORE_PLANE(smem + ((i + 1) & 1) * PLANEBUF, (u + 1) % PF);
        __syncthreads();
    }
}
