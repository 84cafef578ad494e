"""One source of truth for what the bundled kernels run: the advisor's availability is the kernels' acceptance.

For many stencils (box and star of 1-3 dimensions and radius 1-4; custom point sets: asymmetric upwind,
with holes, diagonal-only), every dtype and every depth 1..16, the advisor's default answer (the bundled
kernels) must call a unit available at a depth exactly where the unit's kernel accepts the configuration:
its class's own refusal (``unsupported``, with the GPU's compute capability), then its launch plan's on the
GPU (``refinement.cannot_run``).  Where it accepts, the kernel's host-side set-up must also work: the plan
builds, and the Tensor Core kernels' operands (the banded rows, the 2:4 lines) are constructed, as the
kernels' constructors build them before any GPU is touched.
"""
from __future__ import annotations

import numpy as np
import pytest

from tcadvisor.advisor import advise
from tcadvisor.dtypes import BYTES
from tcadvisor.gpu import plans, registry
from tcadvisor.hardware import UNITS, find_spec
from tcadvisor.impls import find_impl, parse_profile
from tcadvisor.errors import TcAdvisorError
from tcadvisor.refinement import Context, cannot_run
from tcadvisor.reference import fused_weights
from tcadvisor.stencil import Stencil
from tcadvisor.support import gpu_refusal, kernel_precision

DEPTHS = range(1, 17)


def _custom() -> list[Stencil]:
    ring = [(a, b) for a in range(-2, 3) for b in range(-2, 3) if max(abs(a), abs(b)) != 1]  # a hole around 0
    return [
        Stencil.from_offsets([(0, 0), (-1, 0), (0, -1), (-1, -1)], name="Upwind-2D"),  # asymmetric
        Stencil.from_offsets([(0,), (-1,), (-2,)], name="Upwind-1D"),
        Stencil.from_offsets([(0, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, -1)], name="Upwind-3D"),
        Stencil.from_offsets(ring, name="Ring-2D"),  # with holes
        Stencil.from_offsets([(0, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)], name="Diagonal-2D"),  # diagonal only
        Stencil.from_offsets([(d, d, d) for d in (-1, 0, 1)], name="Diagonal-3D"),
        Stencil.from_offsets([(0, 0), (3, 0), (0, -2)], name="Sparse-2D3R"),  # holes, asymmetric, radius 3
    ]


STENCILS = ([Stencil.box(d, r) for d in (1, 2, 3) for r in (1, 2, 3, 4)]
            + [Stencil.star(d, r) for d in (2, 3) for r in (1, 2, 3, 4)] + _custom())


def kernel_accepts(unit: str, stencil: Stencil, dtype: str, t: int, gpu) -> bool:
    """What the kernel itself says, asked directly: its class, then its plan on ``gpu``."""
    profile = registry.bundled_profile(unit)
    cls = registry.kernel_class(profile.kernel)
    precisions = [p for p in profile.precisions.get(dtype, ()) if cls.field_dtypes().get(p) == dtype]
    if not precisions or not gpu.has(unit, precisions[0]):
        return False
    precision = precisions[0]
    if cls.unsupported(stencil, t, dtype, precision, {"cc": gpu.compute_capability}):
        return False
    mma = next((s for s in profile.mma.get(precision, ()) if s in gpu.shapes(unit, precision)), None)
    ctx = Context(profile, profile.tiling, unit, stencil, t, dtype, precision, mma, gpu)
    return cannot_run(ctx, t) is None


def host_setup(unit: str, stencil: Stencil, dtype: str, t: int, gpu, mma) -> None:
    """The steps of the kernel's constructor that need no GPU: the plan and the uploaded operands."""
    profile = registry.bundled_profile(unit)
    precision = registry.precision(profile, dtype)
    fused = fused_weights(np.asarray(stencil.mask(), dtype=float), t)
    if unit == "cuda_core":
        plans.plan_cuda_cores(stencil, t, precision)
    elif unit == "tensor_core":
        from tcadvisor.transforms import rowband

        construction = rowband.construct(fused, mma, precision == "fp64" or precision in ("fp16", "bf16"))
        plan = plans.plan_tensor_cores(stencil, t, precision, mma)
        assert plan.options["kch"] == construction.details["chunks"]
    else:
        from tcadvisor.gpu.sparse_operands import line_order, pack

        pack(fused, precision, line_order(stencil.dims, stencil.radius * t)[0])
        plans.plan_sparse_tensor_cores(stencil, t, precision)


@pytest.mark.parametrize("gpu_key", ["h100", "a100"])
@pytest.mark.parametrize("dtype", list(BYTES))
def test_advisor_availability_is_the_kernels_acceptance(gpu_key, dtype):
    gpu = find_spec(gpu_key)
    checked = accepted = 0
    for stencil in STENCILS:
        adv = advise(stencil, dtype, gpu, max_fuse=16)
        assert adv.model == "refined" and not adv.fallback
        for unit in UNITS:
            for t in DEPTHS:
                opt = adv.by_depth[unit][t]
                accepts = kernel_accepts(unit, stencil, dtype, t, gpu)
                assert opt.available == accepts, (unit, stencil.name, dtype, t, opt.reason)
                if accepts:
                    assert opt.impl is registry.bundled_profile(unit) and opt.model == "refined"
                    if stencil.dims < 3 or t <= 2:  # 3D operands of deep depths are slow to build; same code
                        host_setup(unit, stencil, dtype, t, gpu, opt.mma_shape)
                    accepted += 1
                elif opt.reason and "cannot run t =" in opt.reason:
                    assert opt.kernel_refused and t in adv.unit_skipped[unit]
                checked += 1
    assert checked == len(STENCILS) * len(UNITS) * len(DEPTHS) and accepted > 0


def test_the_upwind_stencil_runs_on_the_dense_tensor_core_and_the_cuda_core_kernels():
    """The issue's example: tcadvisor-tc used to claim 'box, star stencils only' for a stencil it runs.  The
    CUDA-core kernel used to refuse it ('runs box and star stencils'); it now compiles the stencil's taps in, and
    the refined model predicts it with K = 4 and the radius r = 1."""
    upwind = Stencil.from_offsets([(0, 0), (-1, 0), (0, -1), (-1, -1)])
    adv = advise(upwind, "float", find_spec("h100"), fuse=4)
    tc = next(o for o in adv.options if o.unit == "tensor_core")
    assert tc.available and tc.impl.name == "tcadvisor-tc"
    cc = next(o for o in adv.options if o.unit == "cuda_core")
    assert cc.available and cc.impl.name == "tcadvisor-cc" and cc.model == "refined" and cc.reason is None
    assert cc.gstencils > 0


def test_profile_precisions_are_the_kernels():
    """Every dtype a bundled profile maps is a field type its kernel computes in that precision, and back."""
    for unit in UNITS:
        profile = registry.bundled_profile(unit)
        fields = registry.kernel_class(profile.kernel).field_dtypes()
        assert {d for d in profile.precisions} == set(fields.values()), unit
        for dtype in BYTES:
            precision, why = kernel_precision(profile, dtype)
            assert (precision is not None) == (dtype in fields.values()) and (why is None) == (precision is not None)


def test_a_bundled_profile_may_not_list_its_own_shapes():
    raw = {"name": "mine", "unit": "tensor_core", "fusion": "kernel", "kernel": "tensor_cores",
           "precisions": {"double": ["fp64"]}, "alpha": {"construction": "rowband"}, "reference": "x",
           "shapes": ["box", "star"]}
    from pathlib import Path

    with pytest.raises(TcAdvisorError, match="from its kernel class"):
        parse_profile(raw, Path("mine.yaml"))
    assert find_impl("tcadvisor-tc").unsupported(Stencil.from_offsets([(0, 0), (1, 0)])) is None


@pytest.mark.parametrize("gpu_key, unit, needle", [
    ("mi300x", "cuda_core", "AMD GPU"),
    ("b200", "tensor_core", "no multiprocessors section"),
    ("v100", "tensor_core", "executes none of tcadvisor-tc's FP16 instructions"),
])
def test_a_gpu_that_cannot_run_a_kernel_is_named(gpu_key, unit, needle):
    gpu = find_spec(gpu_key)
    profile = registry.bundled_profile(unit)
    precision, _ = kernel_precision(profile, "half" if unit == "tensor_core" else "double")
    assert needle in gpu_refusal(profile, gpu, precision)


def test_compute_capability_refusals_come_from_the_kernels():
    """FP64 DMMA and mma.sp need 8.0: on a 7.0 device the kernels refuse, and the advisor reads the same."""
    tc, sp = registry.kernel_class("tensor_cores"), registry.kernel_class("sparse_tensor_cores")
    box = Stencil.box(2, 1)
    assert "8.0" in tc.unsupported(box, 1, "double", "fp64", {"cc": (7, 0)})
    assert tc.unsupported(box, 1, "double", "fp64", {"cc": (8, 0)}) is None
    assert "mma.sp" in sp.unsupported(box, 1, "half", "fp16", {"cc": (7, 5)})
    cc = registry.kernel_class("cuda_cores")
    async_depth = plans.ASYNC_FROM_FP64_R1
    assert "cp.async" in cc.unsupported(box, async_depth, "double", "fp64", {"cc": (7, 0)})
    assert cc.unsupported(box, async_depth - 1, "double", "fp64", {"cc": (7, 0)}) is None
