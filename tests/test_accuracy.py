"""The expected relative error of a precision over a run: the kernels' own rounding bound, on the CPU.

The bound must hold for what the kernels really compute (the host emulation of the CUDA-core kernels'
source, the NumPy emulation of the Tensor Core kernels' rounding, and the errors recorded on the H100)
and must not be so loose that it says nothing (within 100x of the emulated error for 16-bit and TF32).
"""
import csv
import re
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcadvisor import accuracy
from tcadvisor.accuracy import expected_error_note, expected_relative_error
from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import registry
from tcadvisor.gpu.checking import emulate_sweep
from tcadvisor.gpu.numerics import STORAGE, round_storage
from tcadvisor.reference import apply_steps, random_weights
from tcadvisor.stencil import Stencil, parse_stencil
from test_cuda_cores_host import host_kernels, run_sweep  # noqa: F401 - the host emulation's fixture

ROOT = Path(__file__).resolve().parent.parent
KERNELS_CSV = ROOT / "validation" / "results" / "h100-sxm-2026-11-24" / "kernels-6" / "kernels.csv"


def _cls(unit):
    return registry.kernel_class(registry.bundled_profile(unit).kernel)


# --------------------------------------------------------------------------- the model is the kernels'


@pytest.mark.parametrize("unit, stencil, fuse, dtype, options", [
    ("cuda_core", Stencil.box(2, 1), 3, "double", {}), ("cuda_core", Stencil.star(3, 1), 2, "float", {}),
    ("tensor_core", Stencil.box(2, 1), 3, "double", {}), ("tensor_core", Stencil.box(2, 1), 5, "half", {}),
    ("tensor_core", Stencil.star(2, 2), 2, "float", {}), ("tensor_core", Stencil.box(3, 1), 1, "bfloat16", {}),
    ("tensor_core", Stencil.box(1, 3), 2, "double", {}),
    ("sparse_tensor_core", Stencil.box(2, 1), 3, "half", {}), ("sparse_tensor_core", Stencil.star(2, 1), 4, "float", {}),
    ("sparse_tensor_core", Stencil.box(3, 1), 1, "bfloat16", {})])
def test_sweep_model_is_what_the_built_kernel_checks_against(fake_gpu, unit, stencil, fuse, dtype, options):
    """Each kernel class's CPU-only sweep_model gives exactly the numerics() of the kernel it would build."""
    from tcadvisor.gpu.runner import default_weights, make_kernel

    w = default_weights(stencil, 0)
    kern = make_kernel(stencil, registry.bundled_profile(unit), fuse, dtype, w, options=options)
    got = type(kern).sweep_model(stencil, fuse, dtype, kern.precision, w, kern.mma)
    want = kern.numerics()
    assert len(got.stages) == len(want.stages) == (fuse if unit == "cuda_core" else 1)
    for a, b in zip(got.stages, want.stages):
        assert np.array_equal(a.weights, b.weights) and np.array_equal(a.exact, b.exact)
        assert (a.operand, a.u_acc, a.terms, a.output) == (b.operand, b.u_acc, b.terms, b.output)


def test_the_scenario_weights_are_the_default_runs():
    from tcadvisor.gpu.runner import default_weights

    for st in (Stencil.box(2, 1), Stencil.star(3, 2)):
        w = random_weights(st.mask(), np.random.default_rng(accuracy.DEFAULT_SEED))
        assert np.array_equal(w, default_weights(st, 0))


def test_needs_neither_cupy_nor_a_compiler():
    code = ("import sys; sys.modules['cupy'] = None\n"
            "from tcadvisor.accuracy import expected_relative_error as e\n"
            "print(e('Box-2D1R', 'sparse_tensor_core', 'half', 'fp16', 3, 30), "
            "e('Box-3D1R', 'tensor_core', 'double', 'fp64', 2, 10), e('Star-2D2R', 'cuda_core', 'float', 'fp32', 4, 8))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PATH="/nonexistent"))
    assert out.returncode == 0, out.stderr
    assert all(0 < float(v) < 1 for v in out.stdout.split())


# --------------------------------------------------------------------------- it holds, and it is not vacuous


def _emulate(stencil, unit, dtype, precision, fuse, steps, shape, mma=None):
    """Relative error of the NumPy emulation of the kernel's rounding (operands, FP32 accumulation term by
    term, storage) after ``steps`` steps from the scenario's data."""
    from tcadvisor.gpu.tensor_cores import SHAPES

    w = random_weights(stencil.mask(), np.random.default_rng(0))
    x0 = round_storage(np.random.default_rng(5).uniform(1.0, 2.0, shape), dtype)
    cls = _cls(unit)
    mma = mma or (SHAPES[precision][0] if unit == "tensor_core" else None)
    x = x0
    for _ in range(steps // fuse):
        x = emulate_sweep(cls.sweep_model(stencil, fuse, dtype, precision, w, mma), x)
    ref = apply_steps(x0, w, steps)
    return float(np.abs(x - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("name, unit, dtype, precision, fuse, steps", [
    ("Box-2D1R", "tensor_core", "half", "fp16", 1, 100), ("Box-2D1R", "tensor_core", "half", "fp16", 3, 99),
    ("Box-2D1R", "sparse_tensor_core", "half", "fp16", 3, 99), ("Box-2D1R", "tensor_core", "bfloat16", "bf16", 3, 99),
    ("Box-2D1R", "tensor_core", "float", "tf32", 3, 99), ("Star-2D1R", "sparse_tensor_core", "float", "tf32", 2, 100),
    ("Box-2D2R", "sparse_tensor_core", "bfloat16", "bf16", 2, 40), ("Box-3D1R", "tensor_core", "half", "fp16", 2, 10),
    ("Box-1D2R", "tensor_core", "half", "fp16", 3, 30)])
def test_bound_holds_for_the_emulated_rounding_and_is_within_100x(name, unit, dtype, precision, fuse, steps):
    st = parse_stencil(name)
    shape = {1: (500,), 2: (64, 64), 3: (12, 12, 24)}[st.dims]
    err = _emulate(st, unit, dtype, precision, fuse, steps, shape)
    bound = expected_relative_error(st, unit, dtype, precision, fuse, steps)
    assert 0 < err <= bound < 100 * err, (err, bound)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the CUDA-core kernels for the host")
@pytest.mark.parametrize("stencil, fuse, dtype, sweeps, shape3", [
    (Stencil.box(2, 1), 3, "float", 4, (1, 23, 300)), (Stencil.star(2, 1), 1, "float", 6, (1, 23, 300)),
    (Stencil.box(2, 1), 2, "double", 3, (1, 23, 300)), (Stencil.box(3, 1), 2, "float", 2, (11, 29, 70)),
    (Stencil.box(1, 2), 4, "float", 3, (1, 1, 700))], ids=lambda v: v.name if isinstance(v, Stencil) else str(v))
def test_bound_holds_for_the_cuda_core_kernels_run_on_the_host(host_kernels, stencil, fuse, dtype, sweeps, shape3):
    """kernels/cuda_cores_*.cu compiled for the host (tests/_host_cuda.py), run sweep after sweep."""
    precision = {"double": "fp64", "float": "fp32"}[dtype]
    w = random_weights(stencil.mask(), np.random.default_rng(0))
    kernel = host_kernels(stencil, fuse, dtype, precision, w)
    x0 = np.random.default_rng(2).uniform(1.0, 2.0, size=shape3).astype(STORAGE[dtype])
    x = x0
    for _ in range(sweeps):
        x = run_sweep(kernel, x)
    grid = shape3[3 - stencil.dims:]
    ref = apply_steps(x0.reshape(grid).astype(np.float64), w, fuse * sweeps)
    err = float(np.abs(x.reshape(grid).astype(np.float64) - ref).max() / np.abs(ref).max())
    bound = expected_relative_error(stencil, "cuda_core", dtype, precision, fuse, fuse * sweeps)
    assert err <= bound, (err, bound)
    if precision == "fp32":  # FMA chains round far less than their worst case, but not 1000x less
        assert bound < 1000 * err, (err, bound)


def _recorded_rows():
    with KERNELS_CSV.open() as fh:
        return [r for r in csv.DictReader(fh) if r["impl"].startswith("tcadvisor-")]


def test_bound_holds_for_every_error_recorded_on_the_h100():
    """kernels-6 checked every bundled configuration with 2 sweeps (2t steps, seed 1) on a small grid before
    timing it (benchmarks/gpu_session_kernels.py); its ``steps`` column is the timed run's, 4 sweeps."""
    rows = _recorded_rows()
    assert len(rows) == 270
    ratios: dict[str, list[float]] = {}
    for r in rows:
        fuse = int(r["fuse"])
        assert int(r["steps"]) == 4 * fuse and r["correct"] == "True"
        mma = r["mma"] if r["unit"] == "tensor_core" else None
        bound = expected_relative_error(r["stencil"], r["unit"], r["dtype"], r["precision"], fuse, 2 * fuse,
                                        mma=mma, seed=1)
        measured = float(r["max_rel_error"])
        assert measured <= bound, (r["stencil"], r["unit"], r["precision"], fuse, measured, bound)
        if measured > 0:
            ratios.setdefault(r["precision"], []).append(bound / measured)
    median = {p: statistics.median(v) for p, v in ratios.items()}
    # how tight (median bound / measured): 16-bit about 4x, TF32 about 8x, FP32 about 80x, FP64 about 100x
    assert median["fp16"] < 10 and median["bf16"] < 10 and median["tf32"] < 20, median
    assert median["fp32"] < 300 and median["fp64"] < 1000, median


# --------------------------------------------------------------------------- shape of the bound


@pytest.mark.parametrize("name, unit, dtype, precision, fuse", [
    ("Box-2D1R", "tensor_core", "half", "fp16", 3), ("Star-2D1R", "sparse_tensor_core", "float", "tf32", 3),
    ("Box-2D1R", "cuda_core", "float", "fp32", 2), ("Box-3D1R", "tensor_core", "double", "fp64", 1)])
def test_bound_grows_with_the_steps(name, unit, dtype, precision, fuse):
    """Monotone in the number of full sweeps.  In between, a last, shallower sweep rounds its own (fused)
    weights, so s steps may bound higher than the next multiple of the depth; with t = 1 it is monotone."""
    sweeps = [expected_relative_error(name, unit, dtype, precision, fuse, fuse * k) for k in range(1, 41)]
    assert all(a < b for a, b in zip(sweeps, sweeps[1:]))
    every = [expected_relative_error(name, unit, dtype, precision, 1, s) for s in range(1, 41)]
    assert all(a < b for a, b in zip(every, every[1:]))
    assert sweeps[-1] == pytest.approx(40 * sweeps[0], rel=0.1)  # about linear while far below 1


def test_precisions_order_as_their_roundoff():
    st = "Box-2D1R"
    fp64 = expected_relative_error(st, "tensor_core", "double", "fp64", 3, 30)
    fp32 = expected_relative_error(st, "cuda_core", "float", "fp32", 3, 30)
    tf32 = expected_relative_error(st, "tensor_core", "float", "tf32", 3, 30)
    fp16 = expected_relative_error(st, "tensor_core", "half", "fp16", 3, 30)
    bf16 = expected_relative_error(st, "tensor_core", "bfloat16", "bf16", 3, 30)
    assert fp64 < 1e-12 < fp32 < 1e-4 < tf32 < bf16 and fp16 < bf16 and fp16 > 1e-3


def test_dense_bound_covers_every_instruction_when_none_is_named():
    from tcadvisor.gpu.tensor_cores import SHAPES

    each = [expected_relative_error("Box-2D1R", "tensor_core", "double", "fp64", 3, 30, mma=s) for s in SHAPES["fp64"]]
    assert expected_relative_error("Box-2D1R", "tensor_core", "double", "fp64", 3, 30) == max(each)
    assert len(set(each)) > 1  # the instruction's k pads the chain differently


def test_note():
    assert expected_error_note("Box-2D1R", "tensor_core", "half", "fp16", 3, 99) == \
        f"FP16: at most {expected_relative_error('Box-2D1R', 'tensor_core', 'half', 'fp16', 3, 99):.1e} " \
        "relative error after 99 steps"
    assert expected_error_note("Box-2D1R", "cuda_core", "double", "fp64", 1, 1).endswith("after 1 step")
    assert expected_error_note("Box-2D1R", "tensor_core", "half", "fp16", 1, 5000) == \
        "FP16: no error bound after 5000 steps (the rounding bound exceeds 100 %)"


@pytest.mark.parametrize("args, message", [
    (("Box-2D1R", "cuda_core", "float", "tf32", 1, 10), "no rounding bound: the cuda core kernel (cuda_cores) runs FP64, FP32, FP16, BF16, not TF32"),
    (("Box-2D1R", "tensor_core", "double", "tf32", 1, 10), "runs TF32 on float fields, not double"),
    (("Box-2D1R", "sparse_tensor_core", "half", "fp16", 9, 10), "r·t ≤ 8"),
    (("Box-2D1R", "tensor_core", "half", "fp8", 1, 10), "precision 'fp8': expected one of fp64, fp32, tf32, fp16, bf16"),
    (("Box-2D1R", "gpu_core", "half", "fp16", 1, 10), "the bundled kernels run on cuda_core"),
    (("Box-2D1R", "tensor_core", "half", "fp16", 1, 0), "steps 0 is out of range; expected an integer from 1 to 1000000"),
    (("Box-2D1R", "tensor_core", "half", "fp16", 1, 10**7), "steps 10000000 is out of range"),
    (("Box-2D1R", "tensor_core", "half", "fp16", 0, 10), "fusion depth 0 is out of range"),
    (("Box-9D1R", "tensor_core", "half", "fp16", 1, 10), "dimensionality 9 is not supported"),
    (("Box-2D1R", "tensor_core", "quad", "fp16", 1, 10), "unknown dtype 'quad'"),
])
def test_bad_arguments_are_one_line_errors(args, message):
    with pytest.raises(TcAdvisorError) as exc:
        expected_relative_error(*args)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_bad_instruction_is_refused():
    with pytest.raises(TcAdvisorError, match="MMA shape m16n8k32 is not implemented for fp64"):
        expected_relative_error("Box-2D1R", "tensor_core", "double", "fp64", 1, 10, mma="m16n8k32")
    with pytest.raises(TcAdvisorError, match="not implemented for sparse FP16"):
        expected_relative_error("Box-2D1R", "sparse_tensor_core", "half", "fp16", 1, 10, mma="m16n8k16")


def test_a_recommendation_with_a_far_larger_error_bound_says_so():
    """CUDA cores in FP16 round every multiply-add to 16 bits, the Tensor Core kernels accumulate in FP32: when the
    faster unit carries ten times the error bound or more, the accuracy line says so and why; when the recommended
    unit has the smaller bound, nothing is added."""
    from tcadvisor.advisor import advise
    from tcadvisor.hardware import find_spec
    from tcadvisor.report import accuracy_line, expected_error

    h100 = find_spec("h100")
    # A stencil the model gives to CUDA cores in FP16 (Box-2D1R went to Sparse Tensor Cores with the kernels of
    # 2026-11-27, and Box-1D1R to dense Tensor Cores with their alignment build, which the corpus also measures
    # faster there: validation/results/h100-sxm-2026-11-27/corpus/).
    adv = advise("Star-2D2R", "half", h100)
    assert adv.verdict.unit == "cuda_core" and adv.verdict.precision == "fp16"
    line = accuracy_line(adv)
    m = re.search(r"The recommended CUDA cores \(t = (\d+)\) have (\d+)x the error bound of (Sparse Tensor Cores|"
                  r"Tensor Cores) \(t = (\d+)\) \(CUDA cores round every FP16 multiply-add; \3 accumulate in FP32\)",
                  line)
    assert m and int(m.group(1)) == adv.verdict.fuse
    other = next(o for o in adv.options if o.label == m.group(3))
    assert int(m.group(2)) == round(expected_error(adv, adv.verdict)[0] / expected_error(adv, other)[0])
    quiet = advise("Star-2D3R", "float", h100, fuse=2)
    assert quiet.at_fuse.unit == "cuda_core" and "The recommended" not in accuracy_line(quiet)
