// CUDA cores, temporal fusion: T time steps per sweep, 1D and 2D, box, star and any other tap set.
//
// Each block owns a strip of COLS = NT*V columns (outputs plus a halo of RX*T on
// each side) and streams down the rows of its y-range, NR rows per iteration.
// The intermediate time steps never leave the chip: step s keeps the NR rows it
// produced last in shared memory (double-buffered), and every thread keeps, per
// step, the 2*RY partial sums of the rows its kernel rows still have to reach
// ("pending" rows).  One __syncthreads per iteration; all T steps advance in the
// same iteration, each on the rows its predecessor produced one iteration
// earlier, while the next NR input rows are already in flight.  The last step's
// rows go through shared memory too, so that the next iteration writes them to
// global memory coalesced (thread tid stores columns tid, tid + NT, ...).
//
// K_ASYNC = 1 copies the next iteration's input rows global -> shared with
// cp.async, issued at the top of the iteration and waited for before its
// barrier.  The register path (K_ASYNC = 0) loads them into registers there
// too, but the compiler may sink those loads towards their store at the end of
// the iteration (it does under register pressure: nvcc 13 for sm_90 places them
// after most of the T steps), which leaves their latency exposed; a copy into
// shared memory needs no registers and cannot be sunk.
//
// With K_PAIR (FP16/BF16, which needs K_VEC2 here) the copies cannot pack the two strips of a word: they land each
// lane's input row as it lies in global memory, side by side in the buffer, and step 1 packs its window as it reads
// it (pair_window).  The other steps' rows stay packed.
//
// K_PF = P in 2..8 (with K_ASYNC only) keeps the input rows of P iterations in flight instead of one: the copies of
// iteration i + P are issued at the top of iteration i into a ring of P + 1 input buffers, and the bottom of the
// iteration waits only for those of iteration i + 1 (cp.async.wait_group P - 1).  Why: at deep fusion a block
// holds few warps (registers) and an iteration computes for less time than a DRAM round trip, so the one row
// group ahead arrives late and every resident block waits at the barrier; P groups give each copy P iterations.
//
// K_DIRECT = 1 stores the last step's rows to global memory straight from
// registers, in the iteration that computes them: a thread's V columns are
// adjacent and the threads of a warp consecutive, so the stores are coalesced
// without the detour through shared memory (one store and one load of shared
// memory per output saved, and the slot T of shared memory with them).
//
// K_KEEP = 1 keeps each step's own V outputs of the last iteration in registers:
// the next step reads them from there and only its 2*RX halo columns from shared
// memory (RX + V + RX loads become 2*RX).  Steps are then run from T down to 1
// within an iteration -- they are independent there, each reading what its
// predecessor produced one iteration earlier -- so that step s still reads the
// registers of step s - 1 before step s - 1 overwrites them.  Costs (T-1)*NR*V
// registers; saves shared-memory wavefronts and load instructions.
//
// FP16 and BF16 (K_PAIR, kernels/cc_values.cuh): a block computes strips 2b and 2b + 1 at once, each word the
// same point of both (lane 0, lane 1), one packed FMA per tap; everything else is the FP32 kernel's.
//
// Compile-time parameters (-D, prefixed K_ so they cannot collide with any header):
// K_REAL (double|float) or K_PAIR (1: FP16, 2: BF16), K_RX, K_RY (0 for 1D), K_T, K_STAR, K_V (columns per
// thread), K_NT (threads per block), K_NR (rows per iteration), K_ASYNC, K_PF (optional, default 1), K_DIRECT,
// K_KEEP (optional, default 0), K_TAPS (optional: the taps of a stencil that is
// neither box nor star, a bitmask per row of the KH x KW box; see tap()).  Weights
// live in __constant__ memory, on the KH x KW box whatever the taps, so every FMA
// takes its weight straight from the constant bank.
// Shared rows are stored "by residue": element L sits at (L % V)*SUBLEN + L / V,
// which makes both the thread-contiguous reads and the coalesced writes
// bank-conflict free.

#include "cc_values.cuh"
#define RX K_RX
#define RY K_RY
#define T K_T
#define STAR K_STAR
#define V K_V
#define NT K_NT
#define NR K_NR
#ifndef K_ASYNC
#define K_ASYNC 0
#endif
#ifndef K_DIRECT
#define K_DIRECT 0
#endif
#ifndef K_KEEP
#define K_KEEP 0
#endif
#ifndef K_PF
#define K_PF 1
#endif
#if K_PF < 1 || K_PF > 8 || (K_PF > 1 && !K_ASYNC)
#error "K_PF: 1 to 8 iterations of input rows in flight, more than one only with K_ASYNC"
#endif
#define NB0 (K_PF + 1)  // input buffers (slot 0): a ring, one per iteration in flight and the one being read
#if K_PF > 1
#define SMEM_WORDS ((NB0 + (NSLOT - 1) * 2) * NR * ROWBUF)
#define IN_NOW (i % NB0)  // the input buffer of iteration i
#else
#define SMEM_WORDS NSLOT * 2 * NR * ROWBUF
#define IN_NOW (i & 1)
#endif
#define NKEEP (K_KEEP && T > 1 ? T - 1 : 1)  // steps whose outputs a later step reads from registers
#define NSLOT (T + 1 - K_DIRECT)  // buffered steps in shared memory (slot T: finished rows, unless K_DIRECT)

#define KW (2 * RX + 1)
#define KH (2 * RY + 1)
#define HALO (RX * T)
#define COLS (NT * V)
#define TXO (COLS - 2 * HALO - 2 * K_VEC2)  // K_VEC2: two columns of room to start the strip at an even column
#define NV (V + 2 * RX)
#define NPEND (2 * RY)
#define BANKMOD ((int)(128 / sizeof(real)))  // elements per 128-byte shared-memory wavefront
#define SUB_BASE ((COLS + 2 * RX + V - 1) / V)
#define SUB_OFF ((BANKMOD / V) % BANKMOD)
#define SUBLEN (SUB_BASE + ((SUB_OFF - SUB_BASE % BANKMOD) % BANKMOD + BANKMOD) % BANKMOD)
#define ROWBUF (V * SUBLEN)

#if TXO <= 0
#error "the strip is narrower than its halo: use more threads or a larger V"
#endif
#if K_PAIR && K_ASYNC
#if !K_VEC2
#error "K_ASYNC with K_PAIR copies two columns of each lane per 4-byte copy: it needs K_VEC2"
#endif
// The input rows of K_PAIR with K_ASYNC are planar (see pair_window): lane 0's values at halves [PADH, PADH + COLS)
// of a row's buffer, lane 1's from half ROWBUF on, zero around them.  PADH, the even number of zero halves before
// strip column 0, is RX rounded up, so that every 4-byte copy lands aligned; a window then starts on an odd half
// where RX is odd and is read as one word more.
#define PADH (RX + (RX & 1))
static_assert(COLS + 2 * RX + 2 * (RX & 1) <= ROWBUF, "K_ASYNC with K_PAIR: the planar input row does not fit");
#endif

extern "C" __constant__ real c_w[KH * KW];
// Read by the host to size the dynamic shared memory exactly as the kernel lays it out.
extern "C" __constant__ int k_rowbuf = ROWBUF;

#ifdef K_TAPS
// Any other stencil: K_TAPS is one identifier holding, per kernel row a, '_' and the row's bitmask of columns b in
// hex (TAPHEX digits, most significant first): Upwind-2D with r = 2 is _04_04_07_00_00.  An identifier, so that
// no compiler driver splits or re-quotes it (nvcc splits -D values at commas); read as a constexpr string, so the
// unrolled loops drop the absent taps at compile time.
#define TAPHEX ((KW + 3) / 4)
#define TAPS_STR_(x) #x
#define TAPS_STR(x) TAPS_STR_(x)
static_assert(sizeof(TAPS_STR(K_TAPS)) == KH * (TAPHEX + 1) + 1, "K_TAPS: one '_' and TAPHEX hex digits per kernel row");
__device__ __forceinline__ constexpr int hex_digit(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }
__device__ __forceinline__ constexpr bool tap(int a, int b) {
    constexpr char taps[] = TAPS_STR(K_TAPS);
    return (hex_digit(taps[a * (TAPHEX + 1) + TAPHEX - b / 4]) >> (b % 4)) & 1;
}
#else
__device__ __forceinline__ constexpr bool tap(int a, int b) { return STAR ? (a == RY || b == RX) : true; }
#endif
__device__ __forceinline__ int sidx(int L) { return (L % V) * SUBLEN + L / V; }

// One element global -> shared without registers (cp.async; `ok` false zero-fills), and the wait for all of a
// thread's copies.  The host emulation of the tests (tests/host_cuda/emu.h) defers each copy to the wait.
__device__ __forceinline__ void copy_async(real* dst, const real* src, bool ok) {
#if defined(__CUDA_ARCH__)
    unsigned s;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"((int)sizeof(real)),
                 "r"(ok ? (int)sizeof(real) : 0)
                 : "memory");
#elif defined(TCADVISOR_HOST_EMU)
    emu::cp_async(dst, src, sizeof(real), ok ? sizeof(real) : 0);
#endif
}
__device__ __forceinline__ void copy_async_wait() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#elif defined(TCADVISOR_HOST_EMU)
    emu::cp_async_wait_all();
#endif
}
#if K_PF > 1
// The copies issued since the last commit form one group; the wait lets the N most recent groups stay in flight.
// (Compiled only with K_PF > 1: with one iteration ahead the kernel is token for token the kernel of before, so
// that the runs recorded with it stay records of today's code; benchmarks/fit_refined.py checks that.)
__device__ __forceinline__ void copy_async_commit() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#elif defined(TCADVISOR_HOST_EMU)
    emu::cp_async_commit();
#endif
}
template <int N>
__device__ __forceinline__ void copy_async_wait_group() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#elif defined(TCADVISOR_HOST_EMU)
    emu::cp_async_wait_group(N);
#endif
}
#endif

#if K_PAIR && K_ASYNC
// The window of NV words a thread reads at step 1, from a planar input row (`row`: ROWBUF words, lane 0's halves
// first, lane 1's from word ROWBUF / 2): word j packs strip column L0 - RX + j of both lanes, as the packed rows of
// the other steps hold it.  Why planar: cp.async copies bytes as they lie in global memory, and the two lanes of a
// word come from two strips TXO columns apart; so the copies land each lane's row as it is, and the packing (one
// byte permute per value) happens here, once per input row, where a register path packs at its load.
__device__ __forceinline__ void pair_window(real (&vals)[NV], const real* row, int L0) {
    const int h = L0 - RX + PADH;  // first half of the window in each lane's row (odd where RX is odd)
    const real* lo = row + (h >> 1);
    const real* hi = row + ROWBUF / 2 + (h >> 1);
    real a[NV / 2 + (RX & 1)], b[NV / 2 + (RX & 1)];
#pragma unroll
    for (int k = 0; k < NV / 2 + (RX & 1); ++k) {
        a[k] = lo[k];
        b[k] = hi[k];
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const int p = (RX & 1) + j;  // half of the window's value j, counted from word (h >> 1)
        vals[j] = (p & 1) ? (a[p >> 1] >> 16) | (b[p >> 1] & 0xFFFF0000u) : (a[p >> 1] & 0xFFFFu) | (b[p >> 1] << 16);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(NT)
cc_stream2d(const elem* __restrict__ in, elem* __restrict__ out,
            int W, int H, long long pitch, int Gx, int Gy, int rows_per_block)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);  // [NSLOT][2][NR][ROWBUF]; slot T holds finished rows
    // (with K_PF > 1 slot 0 is a ring of NB0 buffers: [NB0][NR][ROWBUF], then [NSLOT - 1][2][NR][ROWBUF])
    const int tid = threadIdx.x;
    const int X0 = blockIdx.x * LANES * TXO;  // lane 0's strip; lane 1's starts TXO columns further
    const bool second = LANES > 1 && X0 + TXO < W;  // lane 1's strip exists
    const int Y0 = blockIdx.y * rows_per_block;
    const int Y1 = min(Y0 + rows_per_block, H);
    const int rows_padded = H + 2 * Gy;
    // K_VEC2: the strip starts OFF columns early so that its first padded column is even (4-byte aligned pairs of
    // 16-bit values); its outputs are strip columns [HALO + OFF, HALO + OFF + TXO).  Without K_VEC2, OFF = 0.
    const int OFF = K_VEC2 ? ((Gx - HALO) & 1) : 0;
    const long long colbase = (long long)Gx + X0 - HALO - OFF;  // padded column of strip column 0

    for (int k = tid; k < SMEM_WORDS; k += NT) smem[k] = real(0);

    real pend[T][NPEND > 0 ? NPEND : 1][V];
#pragma unroll
    for (int s = 0; s < T; ++s)
#pragma unroll
        for (int m = 0; m < (NPEND > 0 ? NPEND : 1); ++m)
#pragma unroll
            for (int v = 0; v < V; ++v) pend[s][m][v] = real(0);

#if K_KEEP
    real keep[NKEEP][NR][V];  // keep[s - 1]: this thread's outputs of step s, last iteration
#pragma unroll
    for (int s = 0; s < NKEEP; ++s)
#pragma unroll
        for (int rr = 0; rr < NR; ++rr)
#pragma unroll
            for (int v = 0; v < V; ++v) keep[s][rr][v] = real(0);  // as the zeroed shared rows
#endif

    real ld[NR][V];
#if K_VEC2
    // Coalesced load of NR input rows from row q: thread tid takes strip columns 2j and 2j + 1, j = tid + m*NT,
    // one 32-bit access per lane (ld[rr][k] holds strip column COLV(k)).
#define COLV(k) (2 * (tid + ((k) >> 1) * NT) + ((k) & 1))
#define LOAD_ROWS(q)                                                                 \
    {                                                                                \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int prow_ = Gy + (q) + rr;                                         \
            const bool ok_ = prow_ >= 0 && prow_ < rows_padded;                      \
            const elem* src_ = in + (long long)prow_ * pitch + colbase;              \
            _Pragma("unroll") for (int m = 0; m < V / 2; ++m) {                      \
                if (ok_) load_lanes2(ld[rr][2 * m], ld[rr][2 * m + 1], src_ + 2 * (tid + m * NT), TXO, second); \
                else ld[rr][2 * m] = ld[rr][2 * m + 1] = real(0);                    \
            }                                                                        \
        }                                                                            \
    }
#else
    // Coalesced load of NR input rows from row q: thread tid takes strip columns tid + k*NT.
#define COLV(k) (tid + (k) * NT)
#define LOAD_ROWS(q)                                                                 \
    {                                                                                \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int prow_ = Gy + (q) + rr;                                         \
            const bool ok_ = prow_ >= 0 && prow_ < rows_padded;                      \
            const elem* src_ = in + (long long)prow_ * pitch + colbase;              \
            _Pragma("unroll") for (int k = 0; k < V; ++k)                            \
                ld[rr][k] = ok_ ? load_lanes(src_ + tid + k * NT, TXO, second) : real(0); \
        }                                                                            \
    }
#endif
#define STORE_ROWS(buf)                                                              \
    {                                                                                \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr)                            \
        _Pragma("unroll") for (int k = 0; k < V; ++k) (buf)[rr * ROWBUF + sidx(COLV(k) + RX)] = ld[rr][k]; \
    }
#if K_PAIR
    // The same rows copied straight into shared memory (K_ASYNC), planar (pair_window): thread tid copies strip
    // columns 2j and 2j + 1 of each lane (j = tid + m*NT) as one 4-byte copy; rows outside the field and a lane 1
    // past the grid are zero-filled.
#define COPY_ROWS(q, buf)                                                            \
    {                                                                                \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int prow_ = Gy + (q) + rr;                                         \
            const bool ok_ = prow_ >= 0 && prow_ < rows_padded;                      \
            const elem* src_ = in + (long long)(ok_ ? prow_ : 0) * pitch + colbase;  \
            _Pragma("unroll") for (int m = 0; m < V / 2; ++m) {                      \
                const int j_ = tid + m * NT;                                         \
                copy_async(&(buf)[rr * ROWBUF + PADH / 2 + j_], reinterpret_cast<const real*>(src_ + 2 * j_), ok_); \
                copy_async(&(buf)[rr * ROWBUF + ROWBUF / 2 + PADH / 2 + j_],         \
                           reinterpret_cast<const real*>(src_ + TXO + 2 * j_), ok_ && second); \
            }                                                                        \
        }                                                                            \
    }
#else
    // The same rows copied straight into shared memory (K_ASYNC); rows outside the field are zero-filled.
#define COPY_ROWS(q, buf)                                                            \
    {                                                                                \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int prow_ = Gy + (q) + rr;                                         \
            const bool ok_ = prow_ >= 0 && prow_ < rows_padded;                      \
            const elem* src_ = in + (long long)(ok_ ? prow_ : 0) * pitch + colbase;  \
            _Pragma("unroll") for (int k = 0; k < V; ++k)                            \
                copy_async(&(buf)[rr * ROWBUF + sidx(tid + k * NT + RX)], src_ + tid + k * NT, ok_); \
        }                                                                            \
    }
#endif
#if K_PF > 1
// Slot 0 (input rows) is a ring of NB0 buffers, taken as iteration % NB0; the other slots are double-buffered.
#define BUF(s_, par_) (smem + ((s_) == 0 ? (par_) : NB0 + ((s_) - 1) * 2 + (par_)) * NR * ROWBUF)
#else
#define BUF(s_, par_) (smem + (((s_) * 2 + (par_)) * NR) * ROWBUF)
#endif
    // Coalesced store of the rows finished in iteration it_ (they sit in slot T, parity it_ & 1).
#if K_VEC2
    // Two adjacent columns per access and lane where both are outputs of both lanes' strips, else one by one.
#define STORE_OUT(it_)                                                               \
    {                                                                                \
        const real* fin_ = BUF(T, (it_) & 1);                                        \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int q_ = Y0 + ((it_) - T + 1) * NR - 2 * RY * T + rr;              \
            if (q_ >= Y0 && q_ < Y1) {                                               \
                elem* dst_ = out + (long long)(Gy + q_) * pitch + colbase;           \
                _Pragma("unroll") for (int m = 0; m < V / 2; ++m) {                  \
                    const int c_ = 2 * (tid + m * NT);                               \
                    const real v0_ = fin_[rr * ROWBUF + sidx(c_ + RX)];              \
                    const real v1_ = fin_[rr * ROWBUF + sidx(c_ + 1 + RX)];          \
                    const int x_ = X0 - HALO - OFF + c_;  /* lane 0's domain column */ \
                    if (c_ >= HALO + OFF && c_ + 1 < HALO + OFF + TXO && x_ + 1 < W && (!second || x_ + TXO + 1 < W)) { \
                        store_lanes2(dst_ + c_, TXO, v0_, v1_, second);              \
                    } else {                                                         \
                        _Pragma("unroll") for (int e = 0; e < 2; ++e) {              \
                            const bool in_ = c_ + e >= HALO + OFF && c_ + e < HALO + OFF + TXO; \
                            store_lanes(dst_ + c_ + e, TXO, e ? v1_ : v0_, in_ && x_ + e < W, \
                                        second && in_ && x_ + TXO + e < W);          \
                        }                                                            \
                    }                                                                \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }
#else
#define STORE_OUT(it_)                                                               \
    {                                                                                \
        const real* fin_ = BUF(T, (it_) & 1);                                        \
        _Pragma("unroll") for (int rr = 0; rr < NR; ++rr) {                          \
            const int q_ = Y0 + ((it_) - T + 1) * NR - 2 * RY * T + rr;              \
            if (q_ >= Y0 && q_ < Y1) {                                               \
                elem* dst_ = out + (long long)(Gy + q_) * pitch + colbase;           \
                _Pragma("unroll") for (int k = 0; k < V; ++k) {                      \
                    const int c_ = tid + k * NT;                                     \
                    const bool in_ = c_ >= HALO + OFF && c_ < HALO + OFF + TXO;      \
                    if (in_ && X0 - HALO - OFF + c_ < W)                             \
                        store_lanes(dst_ + c_, TXO, fin_[rr * ROWBUF + sidx(c_ + RX)], true, \
                                    second && X0 + TXO - HALO - OFF + c_ < W);       \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }
#endif

    __syncthreads();
#if K_PAIR && K_ASYNC
    COPY_ROWS(Y0 - RY * T, BUF(0, 0));  // the input buffers are planar: even the first rows are copied
#if K_PF > 1
    copy_async_commit();
#endif
#else
    LOAD_ROWS(Y0 - RY * T);
    STORE_ROWS(BUF(0, 0));
#endif
#if K_ASYNC && K_PF > 1
#pragma unroll
    for (int j = 1; j < K_PF; ++j) {  // the rows of iterations 1 .. K_PF - 1, in flight as the loop starts
        COPY_ROWS(Y0 - RY * T + j * NR, BUF(0, j));
        copy_async_commit();
    }
#endif
#if K_PAIR && K_ASYNC && K_PF > 1
    copy_async_wait_group<K_PF - 1>();  // the first rows have landed; the next K_PF - 1 iterations' may still fly
#elif K_PAIR && K_ASYNC
    copy_async_wait();
#endif
    __syncthreads();

    // First output row of iteration i: Y0 + (i - T + 1)*NR - 2*RY*T (see the header).
    const int n_iter = (Y1 - Y0 + 2 * RY * T + NR - 1) / NR + T - 1;
    for (int i = 0; i < n_iter; ++i) {
#if K_ASYNC && K_PF > 1
        // the rows of iteration i + K_PF, into the buffer iteration i - 1 read (read by nobody in this iteration)
        COPY_ROWS(Y0 - RY * T + (i + K_PF) * NR, BUF(0, (i + K_PF) % NB0));
        copy_async_commit();
#elif K_ASYNC
        COPY_ROWS(Y0 - RY * T + (i + 1) * NR, BUF(0, (i + 1) & 1));  // read by nobody in this iteration
#else
        LOAD_ROWS(Y0 - RY * T + (i + 1) * NR);  // the next iteration's input rows, in flight meanwhile
#endif
#if K_KEEP
#pragma unroll
        for (int s = T; s >= 1; --s) {  // from T down to 1 (see the header)
#else
#pragma unroll
        for (int s = 1; s <= T; ++s) {
#endif
            const real* src = BUF(s - 1, (s == 1) ? IN_NOW : ((i - 1) & 1));
#pragma unroll
            for (int rr = 0; rr < NR; ++rr) {
#if K_PAIR && K_ASYNC
                real vals[NV];
                if (s == 1) {
                    pair_window(vals, src + rr * ROWBUF, tid * V);  // the planar input rows
                } else {
#pragma unroll
                    for (int j = 0; j < NV; ++j) {
#if K_KEEP
                        if (j >= RX && j < RX + V) {  // own columns: step s - 1's outputs, kept
                            vals[j] = keep[s > 1 ? s - 2 : 0][rr][j - RX];
                            continue;
                        }
#endif
                        vals[j] = src[rr * ROWBUF + sidx(tid * V + j)];
                    }
                }
#else
                real vals[NV];
#pragma unroll
                for (int j = 0; j < NV; ++j) {
#if K_KEEP
                    if (s > 1 && j >= RX && j < RX + V) {  // own columns: step s - 1's outputs, kept
                        vals[j] = keep[s > 1 ? s - 2 : 0][rr][j - RX];
                        continue;
                    }
#endif
                    vals[j] = src[rr * ROWBUF + sidx(tid * V + j)];
                }
#endif
                real res[V];
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    // kernel row a = 2RY completes the oldest pending row
                    real acc = NPEND > 0 ? pend[s - 1][0][v] : real(0);
#pragma unroll
                    for (int b = 0; b < KW; ++b)
                        if (tap(2 * RY, b)) acc = madd(c_w[(2 * RY) * KW + b], vals[v + b], acc);
                    res[v] = acc;
#pragma unroll
                    for (int m = 1; m < NPEND; ++m) {
                        real p = pend[s - 1][m][v];
#pragma unroll
                        for (int b = 0; b < KW; ++b)
                            if (tap(2 * RY - m, b)) p = madd(c_w[(2 * RY - m) * KW + b], vals[v + b], p);
                        pend[s - 1][m - 1][v] = p;
                    }
                    if (NPEND > 0) {
                        real p = real(0);
#pragma unroll
                        for (int b = 0; b < KW; ++b)
                            if (tap(0, b)) p = madd(c_w[b], vals[v + b], p);
                        pend[s - 1][NPEND > 0 ? NPEND - 1 : 0][v] = p;
                    }
                }
#if K_KEEP
                if (s < T) {
#pragma unroll
                    for (int v = 0; v < V; ++v) keep[s - 1][rr][v] = res[v];
                }
#endif
                if (K_DIRECT && s == T) {  // output row q of this iteration, straight to global memory
                    const int q = Y0 + (i - T + 1) * NR - 2 * RY * T + rr;
                    if (q >= Y0 && q < Y1) {
                        elem* out_ = out + (long long)(Gy + q) * pitch + colbase;
#pragma unroll
                        for (int v = 0; v < V; ++v) {
                            const int c = tid * V + v;
                            if (c >= HALO + OFF && c < HALO + OFF + TXO && X0 - HALO - OFF + c < W)
                                store_lanes(out_ + c, TXO, res[v], true, second && X0 + TXO - HALO - OFF + c < W);
                        }
                    }
                } else {
                    real* dst = BUF(s, i & 1) + rr * ROWBUF;  // slot T: finished rows, stored next iteration
#pragma unroll
                    for (int v = 0; v < V; ++v) dst[sidx(tid * V + v + RX)] = res[v];
                }
            }
        }
        if (!K_DIRECT && i > 0) STORE_OUT(i - 1);
#if K_ASYNC && K_PF > 1
        copy_async_wait_group<K_PF - 1>();  // iteration i + 1's rows have landed; later ones may still fly
#elif K_ASYNC
        copy_async_wait();
#else
        STORE_ROWS(BUF(0, (i + 1) & 1));
#endif
        __syncthreads();
    }
#if K_ASYNC && K_PF > 1
    copy_async_wait();  // no copy may still land in shared memory once the block has ended
#endif
    if (!K_DIRECT) STORE_OUT(n_iter - 1);
}
