"""Run one bundled-kernel configuration for a few sweeps, for Nsight Compute to profile.

    ncu --clock-control none -k regex:cc_stream2d --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats python benchmarks/profile_kernel.py cuda_core Box-2D1R 6 double [GRID ['{"knob": value}']]

With PROFILE_SOURCE=COMMIT in the environment the kernels are compiled from build/kernels-at/COMMIT/ (see
tune_gpu_kernels.kernel_source).
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.gpu.runner import default_grid, run  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402

if os.environ.get("PROFILE_SOURCE"):  # the kernel files of another commit, as the scans' ``source`` takes them
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tune_gpu_kernels import kernel_source  # noqa: E402

    kernel_source(os.environ["PROFILE_SOURCE"])

unit, name, fuse, dtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
stencil = parse_stencil(name)
grid = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else default_grid(stencil)  # 1D, 2D or 3D alike
options = json.loads(sys.argv[6]) if len(sys.argv) > 6 else None  # kernel knobs, e.g. '{"trap": true}'
res = run(stencil, dtype, unit, fuse=fuse, grid=grid, steps=3 * fuse, check=False, repeats=1,
          kernel_options=options)
print(f"{res.gstencils:.1f} GStencils/s | {res.kernel}")
