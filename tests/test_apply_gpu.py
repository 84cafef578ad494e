"""tcadvisor.apply on a real GPU (marker ``gpu``; skipped cleanly without CuPy and a device).

CuPy arrays in, CuPy arrays out, at the advisor's configuration (no unit, no depth given) and at every unit
explicitly, periodic and fixed-value boundaries, every run checked (check=True) and compared with
``scipy.ndimage.correlate`` in float64, one step at a time.  Grids are odd and not multiples of any tile.
"""
import numpy as np
import pytest
from scipy import ndimage

import tcadvisor
from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu.runner import sweep_plan

pytestmark = pytest.mark.gpu

BOUNDARIES = ["periodic", ("constant", 0.0), ("constant", 1.5)]
GRIDS = {1: (20011,), 2: (301, 389), 3: (37, 41, 70)}


def reference(u, w, steps, boundary):
    x = np.asarray(u, dtype=np.float64)
    for _ in range(steps):
        x = (ndimage.correlate(x, w, mode="wrap") if boundary == "periodic"
             else ndimage.correlate(x, w, mode="constant", cval=boundary[1]))
    return x


def weights(dims, seed=0):
    """A star of radius 1 with positive weights summing to 1 (a diffusion step)."""
    rng = np.random.default_rng(seed)
    w = np.zeros((3,) * dims)
    for axis in range(dims):
        for side in (0, 2):
            idx = [1] * dims
            idx[axis] = side
            w[tuple(idx)] = rng.uniform(0.5, 1.5)
    w[(1,) * dims] = 2.0
    return w / w.sum()


def _close(res, u, w, steps, boundary):
    ref = reference(u, w, steps, boundary)
    out = res.output.get() if hasattr(res.output, "get") else res.output
    err = np.max(np.abs(out - ref)) / np.max(np.abs(ref))
    assert res.check.passed and err <= res.check.tolerance, (err, res.check.tolerance)
    return err


@pytest.mark.parametrize("boundary", BOUNDARIES, ids=str)
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16], ids=["float64", "float32", "float16"])
def test_the_advised_configuration_on_cupy_arrays(dims, dtype, boundary):
    import cupy as cp

    w = weights(dims)
    host = np.random.default_rng(1).uniform(1, 2, GRIDS[dims]).astype(dtype)
    u = cp.asarray(host)
    steps = 13
    res = tcadvisor.apply(u, w, steps, boundary=boundary, check=True)
    assert isinstance(res.output, cp.ndarray) and res.output.dtype == u.dtype and res.output.shape == u.shape
    assert res.chosen.startswith("the advisor's verdict for ") and res.advice is not None
    verdict = res.advice.verdict
    assert (res.unit, res.fuse) == (verdict.unit, verdict.fuse) or any("unfused" in n for n in res.notes)
    assert cp.array_equal(u, cp.asarray(host))  # the input is left as it was
    _close(res, host.astype(np.float64), w, steps, boundary)


@pytest.mark.parametrize("boundary", BOUNDARIES[1:], ids=str)
@pytest.mark.parametrize("unit, dtype, fuse", [
    ("cuda_core", np.float64, 4), ("cuda_core", np.float32, 3), ("tensor_core", np.float64, 3),
    ("tensor_core", np.float32, 4), ("tensor_core", np.float16, 2), ("sparse_tensor_core", np.float32, 3),
    ("sparse_tensor_core", np.float16, 5)], ids=str)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_fixed_values_on_every_unit(dims, unit, dtype, fuse, boundary):
    """The band recomputation with each kernel's own rounding (CUDA cores: t stages; Tensor Cores: one stage of
    the fused weights), a remainder sweep included (13 steps)."""
    import cupy as cp

    if dims == 3 and unit != "cuda_core":
        fuse = min(fuse, 3)  # 3D: the matrix kernels bound r·t by their row masks; 3 runs on both
    w = weights(dims, 2)
    host = np.random.default_rng(3).uniform(1, 2, GRIDS[dims]).astype(dtype)
    res = tcadvisor.apply(cp.asarray(host), w, 13, unit=unit, fuse=fuse, boundary=boundary, check=True)
    assert res.unit == unit and res.fuse == fuse and res.sweeps == sweep_plan(13, fuse)
    _close(res, host.astype(np.float64), w, 13, boundary)


def test_numpy_in_numpy_out():
    w = weights(2)
    u = np.random.default_rng(4).uniform(1, 2, (257, 300))
    res = tcadvisor.apply(u, w, 9, boundary=("constant", 0.0), check=True)
    assert type(res.output) is np.ndarray and res.output.dtype == np.float64
    _close(res, u, w, 9, ("constant", 0.0))


def test_without_the_band_fix_the_check_fails(monkeypatch):
    """Negative control on the GPU: fused sweeps with the ghosts held at c but the band left as the kernel wrote it."""
    import cupy as cp

    from tcadvisor.gpu import applying

    monkeypatch.setattr(applying, "redo_band", lambda *args: None)
    w = weights(2)
    u = cp.asarray(np.random.default_rng(5).uniform(1, 2, (301, 389)))
    for unit in ("cuda_core", "tensor_core"):
        with pytest.raises(TcAdvisorError, match="^check failed"):
            tcadvisor.apply(u, w, 8, unit=unit, fuse=4, boundary=("constant", 0.0), check=True)
