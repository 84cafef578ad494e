"""Registers and local memory (spills) of every compiled corpus kernel, from the compiler's own report.

    python benchmarks/kernel_resources.py --gpu-spec h100-calibrated --out FILE.csv [--dims 3]

For each configuration of the corpus design (tcadvisor.validate.corpus.enumerate_space), the kernel is
compiled as ``tcadvisor run`` compiles it and CuPy's function attributes are read: registers per
thread, local memory per thread (bytes spilled or kept in local arrays), static shared memory.  A kernel
with local memory reads and writes it through L1/L2 for every access, which the refined model does not
count: this table says where that happens.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import corpus  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--gpu-spec", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--dims", type=int, nargs="*", default=[1, 2, 3])
args = ap.parse_args()
spec = resolve_gpu(args.gpu_spec).spec
rows = []
for confs in corpus.enumerate_space(spec).values():
    for c in confs:
        if c.stencil_obj().dims not in args.dims:
            continue
        k = corpus.make_kernels(c)
        a = k.kernel.attributes
        rows.append({"stencil": c.stencil, "unit": c.unit, "dtype": c.dtype, "fuse": c.fuse,
                     "registers": a["num_regs"], "local_bytes": a["local_size_bytes"],
                     "static_shared": a["shared_size_bytes"], "kernel": k.describe()})
with open(args.out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
spill = [r for r in rows if r["local_bytes"]]
print(f"{len(rows)} kernels, {len(spill)} with local memory")
for r in spill:
    print(f"  {r['stencil']:12} {r['unit']:18} {r['dtype']:8} t={r['fuse']:2} regs {r['registers']:3} local {r['local_bytes']} B")
