"""The bundled kernels without a GPU: registry, operands, lane-by-lane emulations, compilation with nvcc.

The emulations gather fragments with the kernels' own index formulas and
multiply the operands the kernels upload (decoded as the PTX ISA says the
hardware reads them), so a wrong permutation, packing or metadata bit shows up
here as a wrong stencil.
"""
import itertools
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import dense16, layouts, registry, sparse_operands
from tcadvisor.gpu.sparse_tensor_cores import SparseTensorCoreKernel
from tcadvisor.impls import catalog
from tcadvisor.mma import MmaShape
from tcadvisor.reference import apply_periodic, fused_weights, random_weights
from tcadvisor.stencil import Stencil
from tcadvisor.transforms import spider

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG_SEED = 11


# --------------------------------------------------------------------------- registry


def test_every_bundled_profile_names_a_kernel_of_its_unit():
    bundled = [p for p in catalog().values() if p.kernel]
    assert sorted(p.unit for p in bundled) == sorted(["cuda_core", "tensor_core", "sparse_tensor_core"])
    for prof in bundled:
        cls = registry.kernel_class(prof.kernel)
        assert cls.name == prof.kernel and cls.unit == prof.unit
        for dtype in prof.precisions:
            assert registry.precision(prof, dtype) in cls.precisions


@pytest.mark.parametrize("unit, dtype, precision", [
    ("cuda_core", "double", "fp64"), ("cuda_core", "float", "fp32"), ("tensor_core", "float", "tf32"),
    ("tensor_core", "half", "fp16"), ("tensor_core", "bfloat16", "bf16"), ("sparse_tensor_core", "float", "tf32"),
    ("sparse_tensor_core", "half", "fp16"), ("sparse_tensor_core", "bfloat16", "bf16")])
def test_precision_comes_from_the_profile(unit, dtype, precision):
    assert registry.precision(registry.bundled_profile(unit), dtype) == precision


@pytest.mark.parametrize("unit, impl, message", [
    ("gpu_core", None, "the bundled kernels run on cuda_core, tensor_core, sparse_tensor_core"),
    (None, "SPIDER", "SPIDER has no bundled kernel"),
    ("cuda_core", "tcadvisor-sptc", "runs on sparse_tensor_core, not on --unit cuda_core")])
def test_resolve_errors(unit, impl, message):
    with pytest.raises(TcAdvisorError, match=message):
        registry.resolve(unit, impl)


def test_resolve_defaults_and_names():
    assert registry.resolve().name == "tcadvisor-cc"
    assert registry.resolve(impl="tcadvisor-sptc").unit == "sparse_tensor_core"
    assert registry.names() == ["cuda_cores", "sparse_tensor_cores", "tensor_cores"]
    with pytest.raises(TcAdvisorError, match="has no double variant"):
        registry.precision(registry.bundled_profile("sparse_tensor_core"), "double")


@pytest.mark.parametrize("unit, stencil, fuse, dtype, precision, message", [
    ("sparse_tensor_core", Stencil.box(2, 1), 9, "half", "fp16", r"r·t ≤ 8"),
    ("sparse_tensor_core", Stencil.box(2, 1), 1, "float", "fp16", "not float"),
    ("tensor_core", Stencil.box(2, 3), 3, "double", "fp64", "too large"),
    ("tensor_core", Stencil.box(2, 1), 1, "double", "fp32", "runs FP64, TF32, FP16, BF16, not FP32"),
    ("cuda_core", Stencil.from_offsets([(0, 0), (1, 1)]), 1, "float", "fp64", "stores FP64 fields, not float"),
    ("sparse_tensor_core", Stencil.box(3, 1), 6, "half", "fp16", r"169 kernel lines; .* holds 128 \(3D: r·t ≤ 5\)"),
    ("tensor_core", Stencil.box(3, 2), 3, "double", "fp64", r"169 kernel rows; .* holds 128 \(3D: r·t ≤ 5\)"),
    ("tensor_core", Stencil.star(3, 3), 2, "half", "fp16", "169 kernel rows"),
])
def test_unsupported_needs_no_gpu(unit, stencil, fuse, dtype, precision, message):
    cls = registry.kernel_class(registry.bundled_profile(unit).kernel)
    assert __import__("re").search(message, cls.unsupported(stencil, fuse, dtype, precision))


@pytest.mark.parametrize("unit, dtype, precision", [
    ("tensor_core", "double", "fp64"), ("tensor_core", "float", "tf32"), ("tensor_core", "half", "fp16"),
    ("tensor_core", "bfloat16", "bf16"), ("sparse_tensor_core", "float", "tf32"),
    ("sparse_tensor_core", "half", "fp16"), ("sparse_tensor_core", "bfloat16", "bf16")])
def test_matrix_unit_kernels_run_3d_up_to_fused_radius_5(unit, dtype, precision):
    """The 128-bit row masks: 3D r·t = 4 (81 rows) and 5 (121) run, 6 (169) is refused in one line."""
    cls = registry.kernel_class(registry.bundled_profile(unit).kernel)
    for st, t in ((Stencil.star(3, 4), 1), (Stencil.box(3, 4), 1), (Stencil.box(3, 1), 4), (Stencil.star(3, 1), 5),
                  (Stencil.box(3, 1), 5)):
        assert cls.unsupported(st, t, dtype, precision, {"cc": (9, 0)}) is None, (st.name, t)
    why = cls.unsupported(Stencil.box(3, 1), 6, dtype, precision, {"cc": (9, 0)})
    assert why.count("\n") == 0 and "mask holds 128 (3D: r·t ≤ 5)" in why


def test_the_cuda_core_kernel_runs_any_offsets():
    """Custom stencils (any offsets within the radius) run on CUDA cores: their taps are compiled in."""
    cls = registry.kernel_class(registry.bundled_profile("cuda_core").kernel)
    for offsets in ([(0, 0), (1, 1)], [(0,), (-2,)], [(0, 0, 0), (-1, 0, 0), (0, 0, -2)]):
        assert cls.unsupported(Stencil.from_offsets(offsets), 3, "double", "fp64") is None


def test_sparse_kernel_refuses_old_gpus():
    old = {"cc": (7, 5)}
    assert "8.0" in SparseTensorCoreKernel.unsupported(Stencil.box(2, 1), 1, "half", "fp16", old)
    assert SparseTensorCoreKernel.unsupported(Stencil.box(2, 1), 7, "half", "fp16", {"cc": (8, 0)}) is None


# --------------------------------------------------------------------------- sparse operands


@pytest.mark.parametrize("precision", ["fp16", "bf16", "tf32"])
@pytest.mark.parametrize("R", [1, 9, 25, 64])
def test_load_order_keeps_every_group_within_swapped_pairs(precision, R):
    """Each sparsity group of the instruction holds only whole pairs {e, e+L+1} / {e+1, e+L} of one block of 2L
    window columns (1D beyond r·t = 8: every block)."""
    L = sparse_operands.L
    pair = {}
    for b0 in range(0, 2 * L * sparse_operands.blocks(R), 2 * L):
        for e in range(b0, b0 + L, 2):
            pair[e], pair[e + L + 1] = e + L + 1, e
            pair[e + 1], pair[e + L] = e + L, e + 1
    omega = sparse_operands.window_columns(precision, R)
    k, width, _ = layouts.SPARSE[precision]
    for row in omega:
        for grp in row.reshape(-1, width):
            assert all(pair[c] in grp for c in grp)


@pytest.mark.parametrize("precision", ["fp16", "bf16", "tf32"])
@pytest.mark.parametrize("R", list(range(0, 10)) + [16, 24, 25, 40, 64])
def test_every_line_compresses_and_metadata_decodes(precision, R):
    """From R = 8 a line is two matrices (even and odd taps): A fragment ka = half · kc + chunk; beyond R = 8 (1D)
    the chunks of every block of 32 window columns (16 + 2R in whole blocks)."""
    rng = np.random.default_rng(R)
    line = rng.uniform(0.5, 1.5, 2 * R + 1)
    ops = sparse_operands.pack(line, precision, [()])
    assert ops.halves == (2 if R >= 8 else 1) and ops.ka == ops.halves * ops.kc
    assert ops.kc == -(-(16 + 2 * R) // 32) * (2 if precision == "tf32" else 1)
    allowed = {0b0100, 0b1110} if precision == "tf32" else {0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110}
    total = 0
    for ka in range(ops.ka):
        half, kc = divmod(ka, ops.kc)
        for lane in range(32):
            if lane % 4 < 2:  # the thread pair the sparsity selector 0 names
                word = int(ops.meta[0, ka, lane])
                assert {(word >> (4 * i)) & 0xF for i in range(8)} <= allowed
        decoded = layouts.decode_sparse_a(precision, ops.values[0, ka], ops.meta[0, ka])
        assert np.array_equal(decoded, sparse_operands.instruction_matrix(ops.construction, half, precision, kc))
        total += np.count_nonzero(decoded)
    assert total == 16 * (2 * R + 1)  # every weight of every output row, once


def test_the_1d_limit_is_64_and_2d_stays_at_8():
    assert [sparse_operands.fused_radius_limit(d) for d in (1, 2, 3)] == [64, 8, 8]
    assert SparseTensorCoreKernel.unsupported(Stencil.box(1, 1), 64, "half", "fp16") is None
    assert "at most 64 in 1D" in SparseTensorCoreKernel.unsupported(Stencil.box(1, 1), 65, "half", "fp16")
    assert "r·t ≤ 8 in 2D" in SparseTensorCoreKernel.unsupported(Stencil.box(2, 1), 9, "half", "fp16")


CASES = [(Stencil.box(2, 1), 3, (5, 140)), (Stencil.star(2, 2), 2, (4, 37)), (Stencil.box(1, 3), 2, (300,)),
         (Stencil.box(3, 1), 1, (3, 4, 20)), (Stencil.box(2, 1), 7, (3, 19)), (Stencil.star(3, 1), 2, (2, 5, 9)),
         (Stencil.box(2, 1), 8, (3, 19)), (Stencil.box(1, 2), 4, (300,)), (Stencil.box(1, 2), 8, (300,)),
         (Stencil.from_offsets([(-3,), (0,), (2,)]), 9, (400,))]


@pytest.mark.parametrize("precision", ["fp16", "tf32"])
@pytest.mark.parametrize("stencil, fuse, shape", CASES, ids=[f"{c[0].name}-t{c[1]}" for c in CASES])
def test_sparse_emulation_reproduces_the_stencil(precision, stencil, fuse, shape):
    rng = np.random.default_rng(RNG_SEED)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    x = rng.uniform(-1, 1, shape)
    got = sparse_operands.emulate(x, w, precision)
    np.testing.assert_allclose(got, apply_periodic(x, w), rtol=0, atol=1e-13)


def test_sparse_emulation_catches_a_wrong_load_order(monkeypatch):
    """The emulation is sensitive to the load order: operands packed for the right order, B gathered
    with two elements exchanged (what a wrong address in the kernel would do) gives a wrong stencil."""
    st = Stencil.box(2, 1)
    rng = np.random.default_rng(3)
    w = fused_weights(random_weights(st.mask(), rng), 2)
    x = rng.uniform(-1, 1, (4, 40))
    real_load, real_pack = sparse_operands.lane_load, sparse_operands.pack

    def wrong(precision, t, kc):
        start, order = real_load(precision, t, kc)
        return start, (order[1], order[0]) + tuple(order[2:])

    def pack_right(*args):
        with monkeypatch.context() as m:
            m.setattr(sparse_operands, "lane_load", real_load)
            return real_pack(*args)

    monkeypatch.setattr(sparse_operands, "pack", pack_right)
    monkeypatch.setattr(sparse_operands, "lane_load", wrong)
    for precision in ("fp16", "tf32"):
        assert np.abs(sparse_operands.emulate(x, w, precision) - apply_periodic(x, w)).max() > 1e-3


@pytest.mark.parametrize("precision", ["fp16", "bf16", "tf32"])
def test_sparse_kernel_alpha_is_the_models_alpha(fake_gpu, precision):
    from tcadvisor.advisor import advise
    from tcadvisor.gpu.runner import default_weights
    from tcadvisor.hardware import find_spec

    dtype = {"fp16": "half", "bf16": "bfloat16", "tf32": "float"}[precision]
    prof = registry.bundled_profile("sparse_tensor_core")
    for st, t in ((Stencil.box(2, 1), 3), (Stencil.star(2, 1), 2), (Stencil.box(3, 1), 1), (Stencil.box(1, 2), 3)):
        kern = SparseTensorCoreKernel(st, t, dtype, precision, default_weights(st, 0))
        adv = advise(st, dtype, find_spec("h100"), fuse=t, impls={"sparse_tensor_core": prof})
        opt = next(o for o in adv.options if o.unit == "sparse_tensor_core")
        assert opt.alpha_source == "constructed"
        assert opt.alpha == kern.alpha and str(opt.mma_shape) == str(kern.mma)
        n = 2 * st.radius * t + 1
        if st.shape == "box":
            assert kern.alpha == Fraction(n, 32)
        # executed FLOPs: every mma.sp of every line, 2·16·8·32 (dense-equivalent) per line and slice
        grid = (1,) * (3 - st.dims) + (16,) * (st.dims - 1) + (256,)
        executed = kern.executed_flops(grid)
        assert executed >= 2 * np.prod(grid) * np.count_nonzero(kern.fused) / float(kern.alpha) * 0.999


def test_sparse_numerics_use_the_uploaded_weights(fake_gpu):
    from tcadvisor.gpu.sparse_tensor_cores import value_words

    st = Stencil.box(2, 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    for precision, dtype in (("fp16", "half"), ("bf16", "bfloat16"), ("tf32", "float")):
        kern = SparseTensorCoreKernel(st, 2, dtype, precision, w)
        (stage,) = kern.numerics().stages
        uploaded = set(np.unique(value_words(kern.ops.values, precision)).tolist())
        # every rounded weight is in the uploaded words (as the low half for 16-bit pairs)
        for v in stage.weights[stage.weights != 0]:
            if precision == "tf32":
                word = int(np.float32(v).view(np.uint32))
                assert word in uploaded
            else:
                assert any((u & 0xFFFF) == int(_bits16(v, precision)) or (u >> 16) == int(_bits16(v, precision))
                           for u in uploaded)


def _bits16(v, precision):
    from tcadvisor.gpu.numerics import to_bf16_bits

    return np.float16(v).view(np.uint16) if precision == "fp16" else to_bf16_bits(np.array([v]))[0]


# --------------------------------------------------------------------------- dense 16-bit


@pytest.mark.parametrize("stencil, fuse, shape", CASES, ids=[f"{c[0].name}-t{c[1]}" for c in CASES])
def test_dense16_emulation_reproduces_the_stencil(stencil, fuse, shape):
    rng = np.random.default_rng(RNG_SEED)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    x = rng.uniform(-1, 1, shape)
    np.testing.assert_allclose(dense16.emulate(x, w), apply_periodic(x, w), rtol=0, atol=1e-13)


def test_dense16_strip_order_is_a_permutation_giving_adjacent_columns():
    assert sorted(layouts.dense16_strip(k) for k in range(16)) == list(range(16))
    for lane in range(4):
        cols = sorted(layouts.dense16_strip(layouts.dense16_a(lane, e)[1]) for e in (0, 1, 4, 5))
        assert cols == list(range(4 * lane, 4 * lane + 4))


def test_dense_half_kernel_alpha_and_shape(fake_gpu):
    from tcadvisor.gpu.tensor_cores import TensorCoreKernel

    st = Stencil.box(2, 1)
    kern = TensorCoreKernel(st, 3, "half", "fp16", random_weights(st.mask(), np.random.default_rng(0)))
    assert str(kern.mma) == "m16n8k16" and kern.alpha == Fraction(7, 16)
    files = dict(fake_gpu)
    assert dict(files["tensor_cores.cu"])["K_HALF"] == 1


def test_dense_fp64_tf32_defines_unchanged(fake_gpu):
    """The FP64/TF32 configurations are compiled without K_HALF, i.e. exactly as before the 16-bit paths."""
    from tcadvisor.gpu.tensor_cores import TensorCoreKernel

    st = Stencil.box(2, 1)
    w = random_weights(st.mask(), np.random.default_rng(0))
    TensorCoreKernel(st, 3, "double", "fp64", w)
    TensorCoreKernel(st, 2, "float", "tf32", w)
    for name, defines in fake_gpu:
        assert "K_HALF" not in dict(defines)


@pytest.mark.parametrize("stencil, fuse, dtype, options", [
    (Stencil.box(2, 1), 3, "double", {}), (Stencil.box(2, 1), 6, "double", {}), (Stencil.star(2, 1), 4, "float", {}),
    (Stencil.box(3, 1), 2, "double", {}), (Stencil.box(3, 1), 3, "float", {}), (Stencil.box(2, 1), 1, "half", {}),
    (Stencil.box(2, 1), 3, "double", {"prefetch": 2, "warps": 8, "min_blocks": 2}),
    (Stencil.box(3, 1), 2, "half", {"bregs": False, "prefetch": 0}), (Stencil.box(1, 3), 2, "bfloat16", {})])
def test_tensor_core_description_reads_back_to_its_plan(fake_gpu, stencil, fuse, dtype, options):
    """Recorded runs keep only the kernel's line about itself; plans.recorded_tensor_core_plan must recover the
    configuration (shape, warps, weights in registers, L1 or shared memory, both prefetches, register cap),
    which differs from today's default once the defaults move."""
    from tcadvisor.gpu import plans
    from tcadvisor.gpu.runner import default_weights, make_kernel

    kern = make_kernel(stencil, registry.bundled_profile("tensor_core"), fuse, dtype, default_weights(stencil, 0),
                       options=options)
    back = plans.recorded_tensor_core_plan(stencil, fuse, kern.precision, kern.describe(), rowmask=kern.rowmask)
    assert back == kern.plan, kern.describe()


@pytest.mark.parametrize("stencil, fuse, dtype, options", [
    (Stencil.box(2, 1), 3, "float", {}), (Stencil.box(2, 1), 3, "half", {}), (Stencil.box(2, 1), 5, "bfloat16", {}),
    (Stencil.star(3, 1), 2, "half", {}), (Stencil.box(2, 1), 2, "float", {"prefetch": 0, "aregs": False}),
    (Stencil.box(2, 1), 3, "half", {"l2_prefetch": 2, "unroll": 2}),
    (Stencil.box(3, 1), 1, "float", {"stages": 5, "prefetch": 0, "inner_rows": 2, "l2_prefetch": 1})])
def test_sparse_description_reads_back_to_its_plan(fake_gpu, stencil, fuse, dtype, options):
    """As for the dense kernel: the line a sparse run recorded gives back its plan (L2 prefetch included)."""
    from tcadvisor.gpu import plans
    from tcadvisor.gpu.runner import default_weights, make_kernel

    kern = make_kernel(stencil, registry.bundled_profile("sparse_tensor_core"), fuse, dtype,
                       default_weights(stencil, 0), options=options)
    back = plans.recorded_sparse_tensor_core_plan(stencil, fuse, kern.precision, kern.describe(),
                                                  linemask=kern.linemask)
    assert back == kern.plan, kern.describe()


def test_sparse_l2_prefetch_defaults_follow_the_measured_table(fake_gpu):
    from tcadvisor.gpu.plans import SPTC_L2_DEFAULTS
    from tcadvisor.gpu.runner import default_weights, make_kernel

    prof, st = registry.bundled_profile("sparse_tensor_core"), Stencil.box(2, 1)
    # Whole measured configurations (sparse_tensor_cores of kernels/defaults.yaml), scanned with and without the L2
    # prefetch: TF32 R = 3 (since the stages scan: two x tiles, 3 stages, the L2 table's 4 slices), FP16 R = 3 and
    # 7 and BF16 R = 5 (FP16's entry), whose best named no L2 prefetch (and four or two x tiles per warp, 4 or 3
    # stages at R = 5 and 7).
    for t, dtype, expected, tiles, stages in ((3, "float", SPTC_L2_DEFAULTS[2, "tf32", 3], 2, 3), (3, "half", 0, 4, 0),
                                              (5, "bfloat16", 0, 4, 4), (7, "half", 0, 2, 3)):
        kern = make_kernel(st, prof, t, dtype, default_weights(st, 0))
        assert kern.l2_prefetch == expected and (f"L2 prefetch {expected} slices ahead" in kern.describe()) == (
            expected > 0)
        assert kern.inner_rows == tiles and (f"{tiles} tiles along x per warp" in kern.describe()) == (tiles > 1)
        assert kern.stages == stages and (f"{stages} stages in shared memory" in kern.describe()) == (stages > 0)
        assert kern.prefetch == (0 if stages else 1)
    assert make_kernel(st, prof, 3, "float", default_weights(st, 0), options={"prefetch": 2}).l2_prefetch == 0


def test_tensor_core_defaults_follow_the_measured_table(fake_gpu):
    """No knob: the TC_DEFAULTS entry for (dims, precision, fused radius) where the default MMA shape is the one
    it was measured with; a knob given: the plain kernel otherwise."""
    from tcadvisor.gpu.runner import default_weights, make_kernel

    prof = registry.bundled_profile("tensor_core")
    st2, st3 = Stencil.box(2, 1), Stencil.box(3, 1)
    x3 = make_kernel(st2, prof, 3, "double", default_weights(st2, 0))
    assert (x3.l2_prefetch, x3.weights_shared, x3.bregs) == (2, False, True)
    assert "L2 prefetch 2 slices ahead" in x3.describe()
    deep = make_kernel(st2, prof, 6, "double", default_weights(st2, 0))
    assert (deep.weights_shared, deep.prefetch, deep.smem) == (True, 1, deep.plan.smem) and deep.smem > 0
    assert "weights in shared memory" in deep.describe()
    tf32 = make_kernel(st3, prof, 2, "float", default_weights(st3, 0))  # 2 inner rows, shared weights, no prefetch
    assert (tf32.weights_shared, tf32.bregs, tf32.l2_prefetch, tf32.prefetch, tf32.lines) == (True, False, 0, 0, 2)
    assert "2 inner rows per warp" in tf32.describe()
    half = make_kernel(st2, prof, 5, "half", default_weights(st2, 0))  # 4 x tiles of 128 columns per warp
    assert (half.lines, half.tile_x, half.weights_shared) == (4, 512, True)
    assert "4 tiles along x per warp" in half.describe()
    knob = make_kernel(st2, prof, 3, "double", default_weights(st2, 0), options={"warps": 4})
    assert (knob.l2_prefetch, knob.weights_shared) == (0, False)
    other = make_kernel(st2, prof, 3, "double", default_weights(st2, 0), mma=MmaShape.parse("m16n8k8"))  # not measured
    assert other.l2_prefetch == 2  # the rule: 2D, R >= 3, weights in registers


# --------------------------------------------------------------------------- compilation

CONFIGS = [
    # (unit, stencil, fuse, dtype)
    ("sparse_tensor_core", Stencil.box(2, 1), 3, "half"), ("sparse_tensor_core", Stencil.box(2, 3), 1, "float"),
    ("sparse_tensor_core", Stencil.box(2, 1), 7, "bfloat16"), ("sparse_tensor_core", Stencil.star(2, 1), 2, "float"),
    ("sparse_tensor_core", Stencil.box(1, 3), 2, "half"), ("sparse_tensor_core", Stencil.box(3, 1), 1, "half"),
    ("sparse_tensor_core", Stencil.box(3, 1), 2, "float"), ("sparse_tensor_core", Stencil.box(2, 2), 3, "half"),
    ("tensor_core", Stencil.box(2, 1), 3, "half"), ("tensor_core", Stencil.box(2, 1), 1, "bfloat16"),
    ("tensor_core", Stencil.box(3, 1), 1, "half"), ("tensor_core", Stencil.box(1, 4), 2, "bfloat16"),
    ("tensor_core", Stencil.box(2, 1), 3, "double"), ("tensor_core", Stencil.box(2, 1), 3, "float"),
    # 3D beyond 64 kernel rows: the row masks' second word (K_ROWMASK_HI, K_LINEMASK_HI)
    ("tensor_core", Stencil.star(3, 4), 1, "double"), ("tensor_core", Stencil.box(3, 1), 4, "half"),
    ("tensor_core", Stencil.box(3, 1), 5, "float"), ("sparse_tensor_core", Stencil.star(3, 4), 1, "float"),
    ("sparse_tensor_core", Stencil.box(3, 1), 4, "bfloat16"),
    ("cuda_core", Stencil.box(2, 1), 3, "float"),
    # custom stencils: their taps (K_TAPS) are one identifier, which nvcc does not split at commas
    ("cuda_core", Stencil.from_offsets([(0, 0), (0, -1), (0, -2), (-1, 0), (-2, 0)]), 3, "double"),
    ("cuda_core", Stencil.from_offsets([(d, d, d) for d in (-1, 0, 1)]), 2, "float"),
]
#: Non-default knobs compile too (the GPU tests run them).
KNOBS = [("sparse_tensor_core", Stencil.box(2, 1), 3, "half", {"prefetch": 0}),
         ("sparse_tensor_core", Stencil.box(2, 1), 3, "float", {"prefetch": 2}),
         ("sparse_tensor_core", Stencil.box(3, 1), 1, "bfloat16", {"aregs": False}),
         ("sparse_tensor_core", Stencil.box(2, 1), 3, "half", {"warps": 8, "min_blocks": 2}),
         ("tensor_core", Stencil.box(2, 1), 3, "bfloat16", {"prefetch": 0, "bregs": False}),
         ("tensor_core", Stencil.box(2, 1), 3, "float", {"l2_prefetch": 4}),
         ("sparse_tensor_core", Stencil.box(2, 1), 3, "half", {"l2_prefetch": 2}),
         ("sparse_tensor_core", Stencil.box(3, 1), 1, "float", {"l2_prefetch": 2}),
         ("tensor_core", Stencil.box(3, 1), 2, "half", {"l2_prefetch": 2, "weights_shared": True}),
         ("tensor_core", Stencil.box(3, 1), 2, "double", {"weights_shared": True, "prefetch": 0}),
         ("cuda_core", Stencil.box(3, 1), 3, "double", {"trap": True, "prefetch": 2, "rows": 24})]


def _nvcc(job):
    arch, filename, defines = job
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nvcc", f"-arch={arch}", "-cubin", "-std=c++17", "-o", os.path.join(tmp, "k.cubin")]
        cmd += [f"-D{k}={v}" for k, v in defines]
        cmd.append(os.path.join(ROOT, "kernels", filename))
        return job, subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_every_new_configuration_compiles_for_sm90_and_sm80(fake_gpu):
    from tcadvisor.gpu.runner import default_weights, make_kernel

    for unit, st, t, dtype, *options in CONFIGS + KNOBS:
        make_kernel(st, registry.bundled_profile(unit), t, dtype, default_weights(st, 0), options=(options or [{}])[0])
    jobs = [(arch, f, d) for (f, d) in dict.fromkeys(fake_gpu) for arch in ("sm_90", "sm_80")
            if not (arch == "sm_80" and dict(d).get("K_DOUBLE") == 1 and dict(d).get("K_MMA_M") == 16)]
    with ThreadPoolExecutor(2) as pool:
        for (arch, f, d), proc in pool.map(_nvcc, jobs):
            assert proc.returncode == 0, f"{f} {arch} {d}:\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("R", [0, 8, 9, 24, 25, 64])
def test_lane_loads_cover_each_window_once(R):
    """Every column of the window (one block of 32 up to r·t = 8, 16 + 2R in whole blocks beyond) loaded once."""
    blocks = {0: 1, 8: 1, 9: 2, 24: 2, 25: 3, 64: 5}[R]
    assert sparse_operands.blocks(R) == blocks
    for precision in ("fp16", "tf32"):
        cols = []
        for kc, t in itertools.product(range(sparse_operands.chunks(precision, R)), range(4)):
            start, order = sparse_operands.lane_load(precision, t, kc)
            cols += [start + o for o in order]
        assert sorted(cols) == list(range(2 * sparse_operands.L * blocks))
        # every 16-byte vector starts on a multiple of its length
        for kc, t in itertools.product(range(sparse_operands.chunks(precision, R)), range(4)):
            start, order = sparse_operands.lane_load(precision, t, kc)
            assert start % len(order) == 0


def test_spider_construction_is_the_advisors():
    """The kernel builds its operands with spider.construct, the advisor's construction (one source)."""
    w = fused_weights(random_weights(Stencil.box(2, 1).mask(), np.random.default_rng(1)), 3)
    con = sparse_operands.construct(w, "fp16")
    ref = spider.construct(w, sparse_operands.SHAPES["fp16"], keep=2, group=4)
    assert con.alpha == ref.alpha and all(np.array_equal(a, b) for a, b in zip(con.operands, ref.operands))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_kernel_sources_inline_their_local_headers():
    """NVRTC compiles one string: the backend inlines kernels/l2_prefetch.cuh where a kernel includes it, so the
    compiled source (and CuPy's cache key, the text) carries the header's code."""
    from tcadvisor.gpu.backend import _source

    header = open(os.path.join(ROOT, "kernels", "l2_prefetch.cuh")).read()
    for name in ("tensor_cores.cu", "sparse_tensor_cores.cu"):
        raw = open(os.path.join(ROOT, "kernels", name)).read()
        assert '#include "l2_prefetch.cuh"' in raw
        text = _source(name)
        assert '#include "l2_prefetch.cuh"' not in text and header in text
    values = open(os.path.join(ROOT, "kernels", "cc_values.cuh")).read()
    for name in ("cuda_cores_1d.cu", "cuda_cores_2d.cu", "cuda_cores_3d.cu"):  # kernels/cc_values.cuh
        text = _source(name)
        assert '#include "cc_values.cuh"' not in text and values in text
    assert _source("hold.cu") == open(os.path.join(ROOT, "kernels", "hold.cu")).read()  # nothing to inline


def test_hold_kernel_compiles():
    """kernels/hold.cu, launched before every timed interval (tcadvisor.gpu.timing)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["nvcc", "-arch=sm_80", "-cubin", "-o", os.path.join(tmp, "h.cubin"),
                               os.path.join(ROOT, "kernels", "hold.cu")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
