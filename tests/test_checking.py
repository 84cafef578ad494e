"""The correctness checks on NumPy arrays: long runs of emulated kernels pass, wrong kernels fail.

"Kernel outputs" here come from :func:`tcadvisor.gpu.checking.emulate_sweep`,
which computes a sweep with a kernel's numerics (operand rounding, the uploaded
weights, FP32 or FP64 accumulation, rounding to the storage type) as described
by the real kernel classes (constructed without a GPU).
"""
import numpy as np
import pytest

from tcadvisor.gpu import registry
from tcadvisor.gpu.checking import (CheckResult, Stage, SweepCheck, SweepModel, compare_end_to_end, emulate_sweep,
                                    end_to_end_bound, gamma, perturb_largest_weight, sweep_interval)
from tcadvisor.gpu.numerics import (UNIT_ROUNDOFF, bf16_bits_to_float, from_storage, round_storage, round_tf32,
                                    to_bf16_bits, to_storage)
from tcadvisor.gpu.runner import DATA_RANGE, default_weights
from tcadvisor.reference import apply_steps
from tcadvisor.stencil import Stencil

DTYPE = {"fp64": "double", "fp32": "float", "tf32": "float", "fp16": "half", "bf16": "bfloat16"}
UNIT = {"fp32": "cuda_core"}


def _kernel(unit, stencil, fuse, precision, weights):
    prof = registry.bundled_profile(unit)
    return registry.kernel_class(prof.kernel)(stencil, fuse, DTYPE[precision], precision, weights)


def _data(shape, dtype, seed=0):
    x = np.random.default_rng(seed).uniform(*DATA_RANGE, shape)
    return from_storage(to_storage(x, dtype), dtype)


def _run(model, x, sweeps, check_model=None, tamper=None):
    """Sweep an emulated kernel ``sweeps`` times, checking every sweep against ``check_model``."""
    chk = SweepCheck()
    for _ in range(sweeps):
        out = emulate_sweep(model, x)
        if tamper is not None:
            out = tamper(out)
        chk.add(out, sweep_interval(check_model or model, x))
        x = out
    return chk, x


# --------------------------------------------------------------------------- numerics


def test_roundings():
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-12, -1.00048828125, 3.14159])
    assert np.array_equal(round_tf32(np.float32(1 + 2**-11)).astype(np.float64), np.float64(1 + 2**-10))  # ties away
    assert np.array_equal(bf16_bits_to_float(to_bf16_bits(np.float32(1 + 2**-8))), np.float32(1.0))  # ties to even
    assert np.array_equal(bf16_bits_to_float(to_bf16_bits(np.float32(1 + 3 * 2**-8))), np.float32(1 + 2**-6))
    for dtype in ("double", "float", "half", "bfloat16"):
        assert np.array_equal(from_storage(to_storage(x, dtype), dtype), round_storage(x, dtype))
    assert gamma(10, 2**-24) == pytest.approx(10 * 2**-24)
    assert gamma(2**24, 2**-24) == np.inf


# --------------------------------------------------------------------------- correct kernels pass at any length

LONG = [
    # the cases: a correct TF32 kernel failed the old sqrt(sweeps) tolerance here
    ("tensor_core", Stencil.box(2, 1), 3, "tf32", 1000),
    ("tensor_core", Stencil.box(2, 1), 4, "tf32", 750),  # 3000 steps
    ("sparse_tensor_core", Stencil.box(2, 1), 3, "fp16", 1000),
    ("sparse_tensor_core", Stencil.box(2, 3), 1, "bf16", 300),
    ("tensor_core", Stencil.box(2, 1), 2, "fp16", 300),
    ("sparse_tensor_core", Stencil.star(2, 1), 2, "tf32", 300),
    ("tensor_core", Stencil.box(2, 1), 3, "fp64", 200),
    ("cuda_core", Stencil.box(2, 1), 3, "fp32", 200),
    ("cuda_core", Stencil.star(2, 2), 2, "fp64", 100),
]


@pytest.mark.parametrize("unit, stencil, fuse, precision, sweeps", LONG,
                         ids=[f"{c[0]}-{c[1].name}-t{c[2]}-{c[3]}-{c[4]}" for c in LONG])
def test_correct_kernel_passes_at_any_length(fake_gpu, unit, stencil, fuse, precision, sweeps):
    w = default_weights(stencil, 1)
    kern = _kernel(unit, stencil, fuse, precision, w)
    model = kern.numerics()
    x0 = _data((13, 21), DTYPE[precision])
    chk, out = _run(model, x0, sweeps)
    assert chk.passed, (chk.violations, chk.worst)
    result = CheckResult(sweep=chk)
    ref = apply_steps(x0, w, fuse * sweeps)
    compare_end_to_end(result, out, ref, end_to_end_bound([model] * sweeps, float(np.abs(x0).max()), w,
                                                          fuse * sweeps))
    assert result.passed and result.max_abs_error <= result.bound
    # convex weights and data in [1, 2]: nothing left [1, 2] beyond the rounding of the weights' sum
    assert 0.9 < out.min() and out.max() < 2.1


def test_end_to_end_bound_is_the_closed_form():
    w = np.full(3, 1 / 3)
    st = Stage(weights=w, exact=w, operand=None, u_acc=2**-24, terms=3)
    (g, ell), = SweepModel((st,)).local_error()
    assert g == pytest.approx(1.0)
    assert end_to_end_bound([SweepModel((st,))] * 50, 2.0, w, 0) == pytest.approx(((g + ell) ** 50 - g**50) * 2.0)


# --------------------------------------------------------------------------- wrong kernels fail

CONTROLS = [("cuda_core", "fp64"), ("cuda_core", "fp32"), ("tensor_core", "fp64"), ("tensor_core", "tf32"),
            ("tensor_core", "fp16"), ("tensor_core", "bf16"), ("sparse_tensor_core", "tf32"),
            ("sparse_tensor_core", "fp16"), ("sparse_tensor_core", "bf16")]


@pytest.mark.parametrize("unit, precision", CONTROLS)
@pytest.mark.parametrize("fuse", [1, 3])
def test_perturbed_weight_fails(fake_gpu, unit, precision, fuse):
    st = Stencil.box(2, 1)
    w = default_weights(st, 2)
    right = _kernel(unit, st, fuse, precision, w).numerics()
    wrong = _kernel(unit, st, fuse, precision, perturb_largest_weight(w, precision)).numerics()
    x0 = _data((24, 40), DTYPE[precision], seed=3)
    chk, _ = _run(wrong, x0, 3, check_model=right)
    assert chk.violations > 0


@pytest.mark.parametrize("unit, precision", CONTROLS)
def test_output_shifted_by_one_column_fails(fake_gpu, unit, precision):
    st = Stencil.box(2, 1)
    model = _kernel(unit, st, 2, precision, default_weights(st, 2)).numerics()
    chk, _ = _run(model, _data((12, 30), DTYPE[precision]), 1, tamper=lambda out: np.roll(out, 1, axis=-1))
    assert chk.violations > 0.5 * 12 * 30


def test_unwritten_points_fail():
    w = np.full(3, 1 / 3)
    model = SweepModel((Stage(weights=w, exact=w, operand=None, u_acc=2**-53, terms=3),))
    x = _data((50,), "double")
    out = emulate_sweep(model, x)
    out[7] = np.nan
    chk = SweepCheck()
    chk.add(out, sweep_interval(model, x))
    assert chk.violations == 1 and chk.worst == np.inf


def test_interval_is_tight_for_fp64():
    """The FP64 interval is a few ulps wide: 1e-9 would be a billion times outside it."""
    st = Stencil.box(2, 1)
    w = default_weights(st, 0)
    model = SweepModel((Stage(weights=w, exact=w, operand=None, u_acc=2**-52, terms=10),))
    x = _data((10, 10), "double")
    iv = sweep_interval(model, x)
    assert float(np.max(iv.hi - iv.lo)) < 1e-13


def test_fp16_interval_is_at_most_one_rounding_wide():
    st = Stencil.box(2, 1)
    w = default_weights(st, 0)
    wr = w.astype(np.float16).astype(np.float64)
    model = SweepModel((Stage(weights=wr, exact=w, operand=None, u_acc=2**-23, terms=10, output="half"),))
    x = _data((20, 20), "half")
    iv = sweep_interval(model, x)
    ulp = 2.0**-10 * 2  # values in [1, 2]: spacing 2^-10; an interval spans at most two neighbours
    assert float(np.max(iv.hi - iv.lo)) <= ulp
    assert np.mean(iv.hi == iv.lo) > 0.9  # most points have exactly one admissible value


def test_unit_roundoffs():
    assert UNIT_ROUNDOFF["fp16"] == UNIT_ROUNDOFF["tf32"] == 2.0**-11 and UNIT_ROUNDOFF["bf16"] == 2.0**-8
