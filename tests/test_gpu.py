"""The bundled kernels on a real GPU (marker ``gpu``; skipped cleanly without CuPy and a device).

Every case draws fresh random weights and input, poisons each sweep's output
with NaN, and compares against the naive float64 reference on the GPU with
per-precision tolerances (FP64 1e-12, FP32 1e-5, TF32 1e-3 relative, times
√sweeps).  Grids are odd and not multiples of any tile.
"""
import math

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import Stencil

pytestmark = pytest.mark.gpu


def _cases():
    cases = []
    grids = {1: "1001", 2: "37x131", 3: "7x9x70"}
    # CUDA cores: 1D and 2D, radius 1..4, depths up to 8, box and star, both dtypes
    for dims in (1, 2):
        for shape in (("box",) if dims == 1 else ("box", "star")):
            for r in (1, 2, 3, 4):
                for t in ((1, 2, 3, 4, 8) if r <= 2 else (1, 2, 8)):
                    for dtype in ("double", "float"):
                        cases.append(("cuda_core", shape, dims, r, t, dtype, grids[dims], None))
    for shape in ("box", "star"):
        for r, ts in ((1, (1, 2, 3, 4)), (2, (1, 2))):
            for t in ts:
                for dtype in ("double", "float"):
                    cases.append(("cuda_core", shape, 3, r, t, dtype, grids[3], None))
    # 3D tiles that need fewer columns per thread and wider blocks (halo r·t up to 10)
    for r, t, dtype in ((1, 5, "double"), (2, 5, "double"), (3, 3, "float"), (4, 2, "double"), (2, 7, "float")):
        cases.append(("cuda_core", "box", 3, r, t, dtype, "11x13x150", None))
    # Tensor Cores: every implemented MMA shape, 1D/2D/3D, fused radius up to 8
    tc_shapes = {"double": ("m16n8k8", "m16n8k4", "m16n8k16", "m8n8k4"), "float": ("m16n8k8", "m16n8k4")}
    for dtype, shapes in tc_shapes.items():
        for mma in shapes:
            for dims, shape, r, t in ((1, "box", 1, 3), (1, "box", 4, 2), (2, "box", 1, 1), (2, "box", 1, 3),
                                      (2, "star", 1, 2), (2, "box", 2, 2), (2, "star", 4, 2), (2, "box", 1, 8),
                                      (3, "box", 1, 1), (3, "star", 1, 2), (3, "box", 1, 2)):
                cases.append(("tensor_core", shape, dims, r, t, dtype, grids[dims], mma))
    return cases


CASES = _cases()


def _id(case):
    unit, shape, dims, r, t, dtype, grid, mma = case
    return f"{unit}-{shape}{dims}d-r{r}-t{t}-{dtype}-{grid}" + (f"-{mma}" if mma else "")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_kernel_matches_float64_reference(case):
    from tcadvisor.gpu.runner import run

    unit, shape, dims, r, t, dtype, grid, mma = case
    stencil = getattr(Stencil, shape)(dims, r)
    seed = abs(hash(case)) % 2**31
    res = run(stencil, dtype, unit, fuse=t, grid=grid, steps=2 * t + 1, seed=seed, mma=mma, gpu="h100")
    assert res.unwritten == 0
    assert math.isfinite(res.max_rel_error)
    assert res.max_rel_error <= res.tolerance, (res.max_rel_error, res.tolerance)
    assert res.passed


@pytest.mark.parametrize("grid", ["1x1", "1x2", "2x1", "3x5", "1x1000", "1000x1"])
@pytest.mark.parametrize("unit", ["cuda_core", "tensor_core"])
def test_smallest_grids(unit, grid):
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), "double", unit, fuse=3, grid=grid, steps=4, seed=3)
    assert res.passed, (res.max_rel_error, res.unwritten)


@pytest.mark.parametrize("grid, message", [("0x10", "at least 1"), ("10", "2D"), ("10x10x10", "2D"),
                                           ("ax3", "NxM"), ("70000x70000", r"2\^31")])
def test_grids_it_cannot_take(grid, message):
    from tcadvisor.gpu.runner import run

    with pytest.raises(TcAdvisorError, match=message):
        run(Stencil.box(2, 1), "double", "cuda_core", fuse=1, grid=grid)


def test_configurations_it_cannot_take():
    from tcadvisor.gpu.runner import run

    with pytest.raises(TcAdvisorError, match="shared memory|halo"):
        run(Stencil.box(3, 1), "double", "cuda_core", fuse=8, grid="16x16x16")
    with pytest.raises(TcAdvisorError, match="too large for the Tensor Core kernel"):
        run(Stencil.box(2, 3), "double", "tensor_core", fuse=3, grid="64x64")
    with pytest.raises(TcAdvisorError, match="MMA shape"):
        run(Stencil.box(2, 1), "float", "tensor_core", fuse=1, grid="64x64", mma="m8n8k4")


def test_kernel_alpha_is_the_models_alpha():
    """The α the advisor reports for tcadvisor-tc is counted from the operands the kernel uploads."""
    from tcadvisor.advisor import AlphaChoice, advise
    from tcadvisor.gpu.runner import default_weights
    from tcadvisor.gpu.tensor_cores import TensorCoreKernel
    from tcadvisor.hardware import find_spec
    from tcadvisor.impls import find_impl

    for dims, t in ((2, 3), (3, 1), (1, 4)):
        st = Stencil.box(dims, 1)
        kern = TensorCoreKernel(st, t, "double", default_weights(st, 0))
        adv = advise(st, "double", find_spec("h100"), fuse=t, impls={"tensor_core": find_impl("tcadvisor-tc")},
                     alpha=AlphaChoice.parse("constructed"))
        tc = next(o for o in adv.options if o.unit == "tensor_core")
        assert tc.alpha == kern.alpha
        assert str(tc.mma_shape) == str(kern.shape)


def test_output_array_and_measurements():
    from tcadvisor.gpu.runner import run

    res = run(Stencil.box(2, 1), "double", "cuda_core", fuse=2, grid="64x96", steps=4)
    out = res.output.get()
    assert out.shape == (64, 96) and np.all(np.isfinite(out))
    assert res.gstencils > 0 and res.bound_gstencils > 0 and 0 < res.fraction_of_bound
    assert res.executed_tflops >= res.useful_tflops * 0.999
