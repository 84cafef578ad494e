// Periodic ghost layers and the float64 reference stencil.
//
// A field is stored padded: (nz + 2Gz) x (ny + 2Gy) x pitch elements, the
// interior at [Gz, Gz+nz) x [Gy, Gy+ny) x [Gx, Gx+nx).  Before every sweep the
// ghost cells are refreshed from the periodic interior (ghost_shell), so a sweep
// of t fused steps sees exactly what t steps on the periodic domain see.
//
// Compiled with -DK_REAL=double or -DK_REAL=float.

typedef K_REAL real;

__device__ __forceinline__ int wrap(int v, int g, int n) {
    int r = (v - g) % n;
    return g + (r < 0 ? r + n : r);
}

// The whole ghost shell in one launch: every ghost cell takes its periodic image in the interior, so the cells
// are independent and their order does not matter.  Blocks [0, row_blocks) copy the ghost rows -- the rows of the
// z ghost planes, then the y ghost rows of the interior planes -- one warp per `row_chunk` cells of a row (1 KiB),
// all nx + 2Gx cells of the row with x wrapped; the other blocks copy the 2Gx x ghosts of each interior row, one thread
// per cell.  Why: the six region launches of before, each cell with 64-bit divisions, took 72-92 us of device time
// on 512^3 fields, 15-20 % of a sweep at t = 1-2 in 16 bits; this kernel 39-64 us
// (validation/results/h100-sxm-2026-11-28/shallow-3d/refresh.csv), most of it the x ghosts' DRAM traffic: a
// 64-byte burst read and written at each end of every row.  One thread per row instead of per cell measured
// 0.46-0.87x (refresh-variant-rowthread.csv).
//
// `vec` (16 / sizeof(real), or 0): the rows are 16-byte aligned, so a row's interior columns, which are its
// source row's same columns, move as 16-byte vectors, and only the ghost columns at its ends one element per
// lane.  Element by element, a multiprocessor's resident warps keep 2-8 bytes per lane in flight and the rows of a
// 512^3 field moved at about a quarter of the copy bandwidth (13-25 us of the refresh, x-images/NOTES.md).
__device__ __forceinline__ int ghost_index(int k, int g, int n) {  // k-th of the 2g ghost positions
    return k < g ? k : n + k;
}

struct alignas(16) vec16 { unsigned w[4]; };

extern "C" __global__ void ghost_shell(real* f, int nz, int ny, int nx, int Gz, int Gy, int Gx,
                                       long long sz, long long sy, int row_chunk, int chunks, long long row_blocks,
                                       long long edge_cells, long long row_units, int vec)
{
    const long long b = blockIdx.x;
    if (b < row_blocks) {
        const int lane = threadIdx.x % 32;
        const long long unit = b * (blockDim.x / 32) + threadIdx.x / 32;
        if (unit >= row_units) return;
        const int Y = ny + 2 * Gy, X = nx + 2 * Gx;
        long long r = unit / chunks;
        const int x0 = (int)(unit - r * chunks) * row_chunk;
        int z, y;
        if (r < 2LL * Gz * Y) {  // a row of a z ghost plane (all Y rows of it)
            z = ghost_index((int)(r / Y), Gz, nz);
            y = (int)(r % Y);
        } else {  // a y ghost row of an interior plane
            r -= 2LL * Gz * Y;
            z = Gz + (int)(r / (2 * Gy));
            y = ghost_index((int)(r % (2 * Gy)), Gy, ny);
        }
        const real* src = f + wrap(z, Gz, nz) * sz + wrap(y, Gy, ny) * sy;
        real* dst = f + z * sz + y * sy;
        const int x1 = min(X, x0 + row_chunk);
        int m0 = x1, m1 = x1;  // [m0, m1): whole vectors of interior columns (none without vec)
        if (vec) {
            m0 = (max(x0, Gx) + vec - 1) / vec * vec;
            m1 = max(m0, min(x1, Gx + nx) / vec * vec);
            for (int v = m0 / vec + lane; v < m1 / vec; v += 32)
                reinterpret_cast<vec16*>(dst)[v] = reinterpret_cast<const vec16*>(src)[v];
        }
        for (int x = x0 + lane; x < min(x1, m0); x += 32) dst[x] = src[wrap(x, Gx, nx)];
        for (int x = max(x0, m1) + lane; x < x1; x += 32) dst[x] = src[wrap(x, Gx, nx)];
    } else {
        const long long i = (b - row_blocks) * blockDim.x + threadIdx.x;
        if (i >= edge_cells) return;
        const long long row = i / (2 * Gx);
        const int x = ghost_index((int)(i - row * 2 * Gx), Gx, nx);
        const int z = Gz + (int)(row / ny), y = Gy + (int)(row % ny);
        real* line = f + z * sz + y * sy;
        line[x] = line[wrap(x, Gx, nx)];
    }
}

// One step of a stencil given as K (offset, weight) pairs on a contiguous periodic
// float64 array: the simplest possible implementation, used as the reference that
// the optimised kernels are checked against on the GPU.
extern "C" __global__ void reference_step(const double* __restrict__ in, double* __restrict__ out,
                                          const int* __restrict__ offs, const double* __restrict__ w, int K,
                                          int nz, int ny, int nx)
{
    const long long total = (long long)nz * ny * nx;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int x = (int)(idx % nx);
        const int y = (int)((idx / nx) % ny);
        const int z = (int)(idx / ((long long)nx * ny));
        double acc = 0.0;
        for (int k = 0; k < K; ++k) {
            int zz = (z + offs[3 * k]) % nz;     if (zz < 0) zz += nz;
            int yy = (y + offs[3 * k + 1]) % ny; if (yy < 0) yy += ny;
            int xx = (x + offs[3 * k + 2]) % nx; if (xx < 0) xx += nx;
            acc += w[k] * in[((long long)zz * ny + yy) * nx + xx];
        }
        out[idx] = acc;
    }
}
