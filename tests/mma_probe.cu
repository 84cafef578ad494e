// One warp-level MMA with fragments given per lane, for the GPU tests of the operand layouts
// (tcadvisor/gpu/layouts.py).  K_PREC: 0 sparse TF32 m16n8k16, 1 sparse FP16 m16n8k32,
// 2 sparse BF16 m16n8k32, 3 dense FP16 m16n8k16, 4 dense BF16 m16n8k16.  K_ORDERED selects
// mma.sp::ordered_metadata.  a: 4 words per lane; b: 4 (sparse) or 2 (dense) words; meta: 1 word.

#if K_ORDERED
#define MMA_SP "mma.sp::ordered_metadata.sync.aligned."
#else
#define MMA_SP "mma.sp.sync.aligned."
#endif

extern "C" __global__ void probe(const unsigned* a, const unsigned* b, const unsigned* meta, float* d)
{
    const int lane = threadIdx.x;
    unsigned ar[4], br[4];
    for (int i = 0; i < 4; ++i) { ar[i] = a[lane * 4 + i]; br[i] = b[lane * 4 + i]; }
    const unsigned e = meta[lane];
    float c[4] = {0.f, 0.f, 0.f, 0.f}, r[4];
#if K_PREC == 0
    asm volatile(MMA_SP "m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, %16, 0x0;"
        : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3])
        : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]), "r"(br[2]), "r"(br[3]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "r"(e));
#elif K_PREC == 1 || K_PREC == 2
    asm volatile(MMA_SP "m16n8k32.row.col.f32." PTYPE "." PTYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, 0x0;"
        : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3])
        : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]), "r"(br[2]), "r"(br[3]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "r"(e));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTYPE "." PTYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};"
        : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3])
        : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    (void)e;
#endif
    for (int i = 0; i < 4; ++i) d[lane * 4 + i] = r[i];
}
