// Periodic ghost layers and the float64 reference stencil.
//
// A field is stored padded: (nz + 2Gz) x (ny + 2Gy) x pitch elements, the
// interior at [Gz, Gz+nz) x [Gy, Gy+ny) x [Gx, Gx+nx).  Before every sweep the
// ghost cells are refreshed from the periodic interior, so a sweep of t fused
// steps sees exactly what t steps on the periodic domain see.
//
// Compiled with -DK_REAL=double or -DK_REAL=float.

typedef K_REAL real;

__device__ __forceinline__ int wrap(int v, int g, int n) {
    int r = (v - g) % n;
    return g + (r < 0 ? r + n : r);
}

// Copy the periodic image into the ghost cells of one box region [z0,z1) x [y0,y1) x [x0,x1)
// (padded coordinates).  The launcher covers the ghost shell with a few such regions.
extern "C" __global__ void ghost_fill(real* f, int nz, int ny, int nx, int Gz, int Gy, int Gx,
                                      long long sz, long long sy,
                                      int z0, int z1, int y0, int y1, int x0, int x1)
{
    const long long ex = x1 - x0, ey = y1 - y0, ez = z1 - z0;
    const long long total = ex * ey * ez;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int x = x0 + (int)(idx % ex);
        const long long rest = idx / ex;
        const int y = y0 + (int)(rest % ey);
        const int z = z0 + (int)(rest / ey);
        const int sx = wrap(x, Gx, nx), sy_ = wrap(y, Gy, ny), sz_ = wrap(z, Gz, nz);
        f[z * sz + y * sy + x] = f[sz_ * sz + sy_ * sy + sx];
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
