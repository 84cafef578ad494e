"""α by construction, and NumPy emulations of the Tensor Core dataflow against a direct stencil."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from tcadvisor.mma import MmaShape
from tcadvisor.reference import apply_periodic, apply_steps, fused_weights, random_weights
from tcadvisor.stencil import Stencil
from tcadvisor.transforms import convstencil, rowband, spider

M8N8K4 = MmaShape.parse("m8n8k4")


def naive_stencil(x, w):
    """Independent reference: loop over every output point (2D periodic)."""
    R = (w.shape[0] - 1) // 2
    out = np.zeros_like(x)
    H, W = x.shape
    for i, j in itertools.product(range(H), range(W)):
        out[i, j] = sum(w[a, b] * x[(i + a - R) % H, (j + b - R) % W]
                        for a in range(w.shape[0]) for b in range(w.shape[1]))
    return out


def test_reference_against_naive_loops():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 5))
    x = rng.standard_normal((9, 11))
    assert np.allclose(apply_periodic(x, w), naive_stencil(x, w), rtol=0, atol=1e-12)


def test_fused_weights_are_t_steps():
    rng = np.random.default_rng(1)
    for st in (Stencil.box(2, 1), Stencil.star(2, 2), Stencil.box(1, 3), Stencil.star(3, 1)):
        w = random_weights(st.mask(), rng)
        x = rng.standard_normal([12] * st.dims if st.dims < 3 else [9, 9, 9])
        for t in (2, 3):
            wf = fused_weights(w, t)
            assert np.array_equal(wf != 0, st.fused_mask(t))
            assert np.allclose(apply_periodic(x, wf), apply_steps(x, w, t), atol=1e-12)


# ----------------------------------------------------------------------------- ConvStencil

def test_convstencil_paper_alpha_values():
    # docs/model.md, "α by construction": box n_k = 7 on m8n8k4 -> 392/832 against padded operands
    con = convstencil.construct(Stencil.box(2, 1).fused_mask(3).astype(float), M8N8K4)
    assert con.alpha == Fraction(392, 832)
    assert con.details["K_pad"] == 52 and con.details["N_pad"] == 8
    # same for Box-2D3R at t = 1 (same fused kernel)
    assert convstencil.construct(Stencil.box(2, 3).mask().astype(float), M8N8K4).alpha == Fraction(392, 832)


@pytest.mark.parametrize("stencil", [Stencil.box(2, 1), Stencil.box(2, 2), Stencil.star(2, 1), Stencil.star(2, 3),
                                     Stencil.from_offsets([(0, 0), (1, 2), (-2, 0)])])
@pytest.mark.parametrize("fuse", [1, 2, 3])
def test_convstencil_logical_alpha(stencil, fuse):
    """Unpadded: each weight appears n_k+1 times in two n_k²×(n_k+1) matrices -> α = P / (2 n_k²)."""
    mask = stencil.fused_mask(fuse)
    wa, wb = convstencil.weight_matrices(mask.astype(float))
    n = mask.shape[0]
    assert (np.count_nonzero(wa) + np.count_nonzero(wb)) == mask.sum() * (n + 1)
    assert Fraction(np.count_nonzero(wa) + np.count_nonzero(wb), wa.size + wb.size) == Fraction(int(mask.sum()), 2 * n * n)


@pytest.mark.parametrize("k", [4, 8, 16])
def test_convstencil_padded_alpha_formula(k):
    shape = MmaShape(8, 8, k)
    for n in (3, 5, 7, 9, 11):
        mask = np.ones((n, n))
        con = convstencil.construct(mask, shape)
        k_pad = k * -(-n * n // k)
        n_pad = 8 * -(-(n + 1) // 8)
        assert con.alpha == Fraction(n * n * (n + 1), 2 * k_pad * n_pad)


CASES = [
    (Stencil.box(2, 1), 1, "m8n8k4"), (Stencil.box(2, 1), 3, "m8n8k4"), (Stencil.star(2, 1), 2, "m16n8k8"),
    (Stencil.star(2, 2), 1, "m16n8k16"), (Stencil.box(1, 2), 2, "m8n8k4"), (Stencil.box(3, 1), 1, "m16n8k8"),
    (Stencil.star(3, 1), 2, "m8n8k4"), (Stencil.from_offsets([(0, 0), (0, 1), (1, -1), (-1, 0)]), 2, "m8n8k4"),
]


@pytest.mark.parametrize("stencil, fuse, shape", CASES)
def test_convstencil_emulation_reproduces_stencil(stencil, fuse, shape):
    rng = np.random.default_rng(hash((stencil.name, fuse)) % 2**32)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    n = w.shape[0]
    size = {1: [(n + 1) * 3], 2: [7, (n + 1) * 2], 3: [5, 6, (n + 1) * 2]}[stencil.dims]
    x = rng.standard_normal(size)
    got = convstencil.emulate(x, w, MmaShape.parse(shape))
    ref = apply_periodic(x, w)
    assert np.max(np.abs(got - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


def test_convstencil_emulation_detects_wrong_operands():
    """A guard that the emulation really uses the operands: corrupt one weight, the result changes."""
    rng = np.random.default_rng(5)
    w = random_weights(Stencil.box(2, 1).mask(), rng)
    con = convstencil.construct(w, M8N8K4)
    con.operands[0][0, 0] += 1.0
    x = rng.standard_normal((5, 8))
    got = convstencil.emulate_2d(np.pad(x, 1, mode="wrap"), con)
    assert not np.allclose(got, apply_periodic(x, w))


# ----------------------------------------------------------------------------- SPIDER

@pytest.mark.parametrize("R", range(1, 8))
def test_spider_alpha_L16(R):
    con = spider.construct(np.ones(2 * R + 1), MmaShape(16, 8, 16))
    assert con.details["L"] == 16 and con.details["K_pad"] == 32
    assert con.alpha == Fraction(2 * R + 1, 32)


def test_spider_paper_alpha_box_2d1r_t7():
    con = spider.construct(Stencil.box(2, 1).fused_mask(7).astype(float), MmaShape(16, 8, 16))
    assert con.alpha == Fraction(15, 32)


@pytest.mark.parametrize("R", range(1, 12))
def test_spider_idealised_L(R):
    con = spider.construct(np.ones(2 * R + 1), MmaShape(16, 8, 4), L=2 * R + 2)
    assert con.alpha == Fraction(2 * R + 1, 4 * R + 4)


@pytest.mark.parametrize("R, L", [(R, L) for R in range(1, 16) for L in range(2 * R + 2, 2 * R + 20, 2)])
def test_strided_swap_always_gives_2_4_and_1_2(R, L):
    k_pad = 2 * L + (-2 * L) % 4
    mat = spider.banded(np.ones(2 * R + 1), L, k_pad)
    assert not spider.check_structure(mat != 0, 2, 4) or R == 0  # clustered: not 2:4 before the swap
    swapped = mat[:, spider.swap_permutation(L, k_pad)]
    assert spider.check_structure(swapped != 0, 2, 4)
    assert spider.check_structure(swapped != 0, 1, 2)
    assert np.count_nonzero(swapped) == np.count_nonzero(mat)


def test_swap_needs_room():
    with pytest.raises(ValueError, match="L ≥ 2R\\+2"):
        spider.construct(np.ones(15), MmaShape(16, 8, 16), L=14)


def test_compression_round_trip_and_metadata_order():
    rng = np.random.default_rng(3)
    con = spider.construct(rng.uniform(1, 2, 9), MmaShape(16, 8, 32))
    mat = con.operands[0]
    values, meta = spider.compress(mat, 2, 4)
    assert values.shape == (16, mat.shape[1] // 2)
    assert np.array_equal(spider.decompress(values, meta, 2, 4), mat)
    pairs = meta.reshape(16, -1, 2)
    assert np.all(pairs[..., 0] < pairs[..., 1])  # two distinct, increasing positions per group


SPIDER_CASES = [
    (Stencil.box(2, 1), 1, "m16n8k16", (2, 4)), (Stencil.box(2, 1), 7, "m16n8k32", (2, 4)),
    (Stencil.star(2, 2), 2, "m16n8k16", (1, 2)), (Stencil.box(1, 3), 1, "m16n8k8", (1, 2)),
    (Stencil.star(3, 1), 1, "m16n8k16", (2, 4)), (Stencil.box(2, 2), 4, "m16n8k16", (2, 4)),
]


@pytest.mark.parametrize("stencil, fuse, shape, pattern", SPIDER_CASES)
def test_spider_emulation_reproduces_stencil(stencil, fuse, shape, pattern):
    rng = np.random.default_rng(hash((stencil.name, fuse, shape)) % 2**32)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    mma = MmaShape.parse(shape)
    L = spider.default_L((w.shape[0] - 1) // 2, mma)
    size = {1: [2 * L], 2: [8, 2 * L], 3: [4, 4, L]}[stencil.dims]
    x = rng.standard_normal(size)
    got = spider.emulate(x, w, mma, *pattern)
    ref = apply_periodic(x, w)
    assert np.max(np.abs(got - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("module", [convstencil, spider, rowband])
@pytest.mark.parametrize("stencil", [Stencil.box(1, 2), Stencil.box(2, 1), Stencil.star(2, 2), Stencil.box(3, 1),
                                     Stencil.star(3, 1), Stencil.from_offsets([(0, 0), (2, 1), (-1, 0)])])
@pytest.mark.parametrize("fuse", [1, 2, 4])
@pytest.mark.parametrize("shape", ["m8n8k4", "m16n8k16"])
def test_count_equals_construction(module, stencil, fuse, shape):
    mask = stencil.fused_mask(fuse)
    mma = MmaShape.parse(shape)
    if module is rowband and mma.n != 8:
        pytest.skip("the row-band kernel needs n = 8")
    con = module.construct(mask.astype(float), mma)
    assert module.count(mask, mma) == (con.useful_macs, con.executed_macs)


# ----------------------------------------------------------------------------- row band (bundled kernel)

@pytest.mark.parametrize("shape, n, expected", [("m16n8k8", 7, Fraction(7, 16)), ("m8n8k4", 7, Fraction(7, 16)),
                                                ("m16n8k4", 3, Fraction(3, 12)), ("m16n8k8", 3, Fraction(3, 16)),
                                                ("m16n8k16", 9, Fraction(9, 16)), ("m16n8k8", 11, Fraction(11, 24))])
def test_rowband_alpha_of_a_box_row(shape, n, expected):
    """Each output column applies the n weights of a row: n useful of K_pad = pad(n + 7) per row."""
    con = rowband.construct(np.ones((n, n)), MmaShape.parse(shape))
    assert con.alpha == expected
    assert len(con.operands) == n


@pytest.mark.parametrize("R", range(1, 16, 2))
@pytest.mark.parametrize("k", [4, 8, 16])
def test_rowband_lead_column_costs_nothing(R, k):
    """For odd R the strip starts one column early (alignment); K_pad, hence α, is unchanged."""
    n = 2 * R + 1
    con = rowband.construct(np.ones((n, n)), MmaShape(16, 8, k))
    assert con.details["lead"] == 1
    assert con.details["K_pad"] == -(-(n + 7) // k) * k


def test_rowband_band_structure():
    row = np.arange(1.0, 6.0)
    mat = rowband.band(row, 16)
    for c in range(8):
        assert np.array_equal(mat[c:c + 5, c], row) and np.count_nonzero(mat[:, c]) == 5


def test_fragment_layout_covers_each_element_once():
    for shape in ("m16n8k4", "m16n8k8", "m16n8k16", "m8n8k4"):
        mma = MmaShape.parse(shape)
        a = {rowband.a_pos(mma, lane, i) for lane in range(32) for i in range(rowband.a_count(mma))}
        b = {rowband.b_pos(mma, lane, j) for lane in range(32) for j in range(rowband.b_count(mma))}
        c = {rowband.c_pos(mma, lane, i) for lane in range(32) for i in range(rowband.c_count(mma))}
        assert a == {(m, k) for m in range(mma.m) for k in range(mma.k)}
        assert b == {(k, n) for k in range(mma.k) for n in range(8)}
        assert c == {(m, n) for m in range(mma.m) for n in range(8)}


@pytest.mark.parametrize("shape", ["m16n8k4", "m16n8k8", "m16n8k16", "m8n8k4"])
def test_strip_offsets_are_a_permutation_with_contiguous_lanes(shape):
    mma = MmaShape.parse(shape)
    offs = [rowband.strip_offset(mma, k) for k in range(mma.k)]
    assert sorted(offs) == list(range(mma.k))
    for lane in range(32):  # each lane's k values of one group row sit in adjacent strip columns
        ks = sorted({rowband.a_pos(mma, lane, i)[1] for i in range(rowband.a_count(mma))})
        cols = sorted(rowband.strip_offset(mma, k) for k in ks)
        assert cols == list(range(cols[0], cols[0] + len(cols)))


def test_fragments_hold_the_constructed_operands():
    rng = np.random.default_rng(11)
    w = random_weights(Stencil.box(2, 1).fused_mask(2), rng)
    mma = MmaShape.parse("m16n8k8")
    con = rowband.construct(w, mma)
    frag = rowband.fragments(con, [(a,) for a in range(5)])
    for r_, mat in enumerate(con.operands):
        rebuilt = np.zeros_like(mat)
        for c, lane, j in itertools.product(range(con.details["chunks"]), range(32), range(2)):
            k, col = rowband.b_pos(mma, lane, j)
            rebuilt[c * 8 + rowband.strip_offset(mma, k), col] = frag[r_, c, lane, j]
        assert np.array_equal(rebuilt, mat)


ROWBAND_CASES = [
    (Stencil.box(2, 1), 1, "m16n8k8", (5, 130), True), (Stencil.box(2, 1), 3, "m16n8k8", (9, 70), True),
    (Stencil.box(2, 1), 3, "m8n8k4", (6, 70), True), (Stencil.star(2, 2), 1, "m16n8k4", (6, 40), True),
    (Stencil.box(1, 2), 2, "m16n8k16", (150,), True), (Stencil.star(3, 1), 1, "m16n8k8", (4, 5, 20), True),
    (Stencil.box(3, 1), 1, "m8n8k4", (3, 4, 9), True), (Stencil.box(2, 2), 2, "m16n8k8", (7, 33), True),
    (Stencil.box(2, 1), 3, "m16n8k8", (5, 61), False), (Stencil.star(3, 1), 2, "m16n8k4", (3, 6, 19), False),
]


@pytest.mark.parametrize("stencil, fuse, shape, size, permuted", ROWBAND_CASES)
def test_rowband_kernel_emulation_reproduces_stencil(stencil, fuse, shape, size, permuted):
    """Lane-by-lane, MMA-by-MMA emulation of kernels/tensor_cores.cu on the uploaded fragments."""
    rng = np.random.default_rng(abs(hash((stencil.name, fuse, shape))) % 2**32)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    x = rng.standard_normal(size)
    got = rowband.emulate(x, w, MmaShape.parse(shape), permuted)
    ref = apply_periodic(x, w)
    assert np.max(np.abs(got - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


# ----------------------------------------------------------------------------- CUDA-core pipeline

from tcadvisor.transforms import streaming  # noqa: E402

STREAM_CASES = [
    (Stencil.box(2, 1), 3, (13, 40), 32, 5, 1), (Stencil.star(2, 2), 2, (9, 37), 32, 4, 2),
    (Stencil.box(1, 2), 4, (50,), 32, 1, 1), (Stencil.box(2, 1), 1, (1, 1), 16, 3, 2),
    (Stencil.box(2, 2), 3, (7, 11), 40, 7, 3), (Stencil.star(2, 1), 5, (6, 19), 24, 2, 2),
    (Stencil.box(2, 1), 4, (17, 30), 32, 9, 4),
]


@pytest.mark.parametrize("stencil, fuse, size, cols, rows, per_iter", STREAM_CASES)
def test_cuda_core_pipeline_emulation(stencil, fuse, size, cols, rows, per_iter):
    """The kernel's row skew, shared-memory parity, halo and pending sums give exactly t steps."""
    rng = np.random.default_rng(abs(hash((stencil.name, fuse, size))) % 2**32)
    w = random_weights(stencil.mask(), rng)
    x = rng.standard_normal(size)
    got = streaming.emulate(x, w, fuse, cols=cols, rows_per_block=rows, star=stencil.shape == "star",
                            rows_per_iter=per_iter)
    assert not np.any(np.isnan(got))
    assert np.max(np.abs(got - apply_steps(x, w, fuse))) <= 1e-12


def test_gpu_kernel_builds_operands_with_the_models_construction():
    """tensor_cores.py uploads rowband.construct's matrices; the profile names the same construction."""
    import importlib.util

    from tcadvisor.impls import find_impl

    assert find_impl("tcadvisor-tc").alpha.construction == "rowband"
    spec = importlib.util.find_spec("tcadvisor.gpu.tensor_cores")
    source = open(spec.origin).read()
    assert "rowband.construct(" in source and "rowband.fragments(" in source
