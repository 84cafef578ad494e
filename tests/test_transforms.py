"""α by construction: the papers' own figures, and NumPy emulations of every transformation's Tensor Core dataflow."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.mma import MmaShape
from tcadvisor.reference import apply_periodic, apply_steps, fused_weights, random_weights
from tcadvisor.stencil import Stencil
from tcadvisor.transforms import alpha_for, construct, emulate, module, names
from tcadvisor.transforms import convstencil, lorastencil, rowband, sparstencil, spider, tcstencil
from tcadvisor.transforms.matching import max_matching, two_level_matching
from tcadvisor.transforms.support import generic_weights

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


# ----------------------------------------------------------------------------- the papers' figures

def test_convstencil_paper_values():
    """Box n_k = 7 on m8n8k4: logical 1/2 (the do-we-need paper's constant), 392/832 against padded operands."""
    for st, t in ((Stencil.box(2, 1), 3), (Stencil.box(2, 3), 1)):
        a = alpha_for("convstencil", st, t, M8N8K4, "fp64")
        assert a.alpha == Fraction(392, 832)
        assert a.details["alpha_logical"] == Fraction(1, 2)
        assert (a.details["K_pad"], a.details["N_pad"]) == (52, 8)


@pytest.mark.parametrize("k", [4, 8, 16])
def test_convstencil_padded_alpha_formula(k):
    shape = MmaShape(8, 8, k)
    for n in (3, 5, 7, 9, 11):
        con = convstencil.construct(np.ones((n, n)), shape)
        k_pad = k * -(-n * n // k)
        n_pad = 8 * -(-(n + 1) // 8)
        assert con.alpha == Fraction(n * n * (n + 1), 2 * k_pad * n_pad)


def test_convstencil_every_weight_appears_n_plus_1_times():
    for st, t in ((Stencil.star(2, 3), 1), (Stencil.star(2, 1), 3), (Stencil.from_offsets([(0, 0), (1, 2)]), 2)):
        mask = st.fused_mask(t)
        wa, wb = convstencil.weight_matrices(mask.astype(float))
        assert np.count_nonzero(wa) + np.count_nonzero(wb) == mask.sum() * (mask.shape[0] + 1)


@pytest.mark.parametrize("R", range(1, 8))
def test_spider_alpha_L16(R):
    con = spider.construct(np.ones(2 * R + 1), MmaShape(16, 8, 16))
    assert con.details["L"] == 16 and con.details["K_pad"] == 32
    assert con.alpha == Fraction(2 * R + 1, 32)


@pytest.mark.parametrize("precision, shape", [("fp16", "m16n8k16"), ("fp16", "m16n8k32"), ("tf32", "m16n8k16")])
def test_spider_paper_alpha_box_2d1r_t7(precision, shape):
    """The do-we-need paper's 15/32 at R = 7 (Box-2D1R fused 7 times)."""
    assert alpha_for("spider", Stencil.box(2, 1), 7, shape, precision).alpha == Fraction(15, 32)


@pytest.mark.parametrize("R", range(1, 12))
def test_spider_idealised_L(R):
    con = spider.construct(np.ones(2 * R + 1), MmaShape(16, 8, 4), L=2 * R + 2)
    assert con.alpha == Fraction(2 * R + 1, 4 * R + 4)


@pytest.mark.parametrize("R, L", [(R, L) for R in range(1, 16) for L in range(2 * R + 2, 2 * R + 20, 2)])
def test_strided_swap_always_gives_2_4_and_1_2(R, L):
    k_pad = 2 * L + (-2 * L) % 4
    mat = spider.banded(np.ones(2 * R + 1), L, k_pad)
    assert not spider.check_structure(mat != 0, 2, 4)  # clustered: not 2:4 before the swap
    swapped = mat[:, spider.swap_permutation(L, k_pad)]
    assert spider.check_structure(swapped != 0, 2, 4)
    assert spider.check_structure(swapped != 0, 1, 2)
    assert np.count_nonzero(swapped) == np.count_nonzero(mat)


def test_spider_keeps_the_kernel_upload_interface():
    """The GPU kernel uploads .operands (swapped L x K_pad line matrices) and reads these details."""
    con = spider.construct(Stencil.box(2, 1).fused_mask(2).astype(float), MmaShape(16, 8, 16), L=None, keep=1, group=2)
    assert {"R", "L", "K_pad", "lines", "permutation", "sparsity"} <= set(con.details)
    assert con.details["sparsity"] == "1:2" and len(con.operands) == len(con.details["lines"]) == 5
    assert all(op.shape == (con.details["L"], con.details["K_pad"]) for op in con.operands)
    assert con.alpha == Fraction(25, 5 * 32)


def test_swap_needs_an_even_L():
    with pytest.raises(ValueError, match="even L"):
        spider.construct(np.ones(15), MmaShape(16, 8, 16), L=15)


@pytest.mark.parametrize("R, L", [(7, 12), (9, 16), (16, 16), (24, 16), (25, 16), (64, 16), (13, 4)])
def test_below_L_2R_the_window_is_whole_blocks_and_each_line_its_halves(R, L):
    """L < 2R (the bundled kernel's L = 16 in 1D beyond r·t = 8): the window of L + 2R columns padded to whole
    blocks of 2L, the swap within each block, two matrices per line, each 1:2, summing to the swapped band."""
    w = np.random.default_rng(R).uniform(1, 2, 2 * R + 1)
    con = spider.construct(w, MmaShape(16, 8, 8), L=L, keep=1, group=2)
    blocks = -(-(L + 2 * R) // (2 * L))
    k_pad, src = con.details["K_pad"], con.details["permutation"]
    assert k_pad == 2 * L * blocks and con.details["halves"] == 2
    even, odd = con.operands
    assert np.array_equal(even + odd, spider.banded(w, L, k_pad)[:, src])
    assert all(spider.check_structure(m != 0, 1, 2) for m in con.operands)
    assert sorted(src) == list(range(k_pad))
    assert con.alpha == Fraction(2 * R + 1, 2 * k_pad)


@pytest.mark.parametrize("R", range(1, 17))
def test_at_L_2R_each_line_is_its_even_and_odd_taps(R):
    """No room for the swap (L = 2R): two matrices per line, each 1:2 (so 2:4) after it, summing to the swapped
    line; α = (2R+1)/(4L), at L = 16 and R = 8 the 17/64 that L = 32 gives."""
    w = np.random.default_rng(R).uniform(1, 2, 2 * R + 1)
    con = spider.construct(w, MmaShape(16, 8, 8), L=2 * R, keep=1, group=2)
    k_pad, src = con.details["K_pad"], con.details["permutation"]
    assert con.details["halves"] == 2 and con.details["lines"] == [(), ()]
    even, odd = con.operands
    assert np.array_equal(even + odd, spider.banded(w, 2 * R, k_pad)[:, src])
    assert np.count_nonzero(even) == 2 * R * (R + 1) and np.count_nonzero(odd) == 2 * R * R
    assert all(spider.check_structure(m != 0, 1, 2) for m in con.operands)
    assert not spider.check_structure((even + odd) != 0, 2, 4)  # the whole band would not do
    assert con.alpha == Fraction(2 * R + 1, 2 * k_pad)
    if R == 8:
        assert con.alpha == Fraction(17, 64) == spider.construct(w, MmaShape(16, 8, 32)).alpha


def test_compression_round_trip_and_metadata_order():
    rng = np.random.default_rng(3)
    con = spider.construct(rng.uniform(1, 2, 9), MmaShape(16, 8, 32))
    mat = con.operands[0]
    values, meta = spider.compress(mat, 2, 4)
    assert values.shape == (16, mat.shape[1] // 2)
    assert np.array_equal(spider.decompress(values, meta, 2, 4), mat)
    pairs = meta.reshape(16, -1, 2)
    assert np.all(pairs[..., 0] < pairs[..., 1])


def test_tcstencil_286_72_macs_per_point():
    """SPIDER's Table 1: TCStencil executes 286.72 MACs per point for Box-2D3R at L = 16."""
    a = alpha_for("tcstencil", Stencil.box(2, 3), 1, "m16n8k16", "fp16")
    assert a.executed == Fraction(28672, 100) and a.alpha == Fraction(49 * 100, 28672)
    assert a.details["tile_outputs"] == 100 and a.details["gemms_per_tile"] == 7
    con = tcstencil.construct(np.ones((7, 7)), MmaShape.parse("m16n8k16"))
    assert con.executed == Fraction(28672, 100) and all(op.shape == (16, 16) for op in con.operands)
    assert all(np.count_nonzero(op) == 7 * 10 for op in con.operands)  # the row replicated L - 2R = 10 times


def test_lorastencil_box_2d49p_144_macs_per_point():
    """LoRAStencil §III: 3 rank-1 terms x 12 DMMAs per 8x8 tile = 144 MACs per point, α = 49/144."""
    for st, t in ((Stencil.box(2, 3), 1), (Stencil.box(2, 1), 3)):
        a = alpha_for("lorastencil", st, t, M8N8K4, "fp64")
        assert a.executed == 144 and a.alpha == Fraction(49, 144)
        assert (a.details["tile"], a.details["mma_per_term"], a.details["terms"]) == (8, 12, 3)


@pytest.mark.parametrize("h", [1, 2, 3, 4])
def test_lorastencil_tile_is_8_for_small_radii(h):
    m, mma = lorastencil.best_tile(h, M8N8K4)
    assert m == 8 and mma == lorastencil.mma_per_term(8, h, M8N8K4)
    assert lorastencil.mma_per_term(8, 3, M8N8K4) == 8 + 4  # U·X then T·V, as the paper counts them


def test_pyramidal_peeling_of_a_radially_symmetric_kernel():
    """h+1 terms of sides n, n-2, ..., 1; the last is the free centre; the terms sum to W."""
    for R in (1, 2, 3, 5):
        w = generic_weights(np.ones((2 * R + 1,) * 2, bool))
        terms, method = lorastencil.decompose(w)
        assert method == "pyramidal" and len(terms) == R + 1
        assert [free for *_, free in terms] == [False] * R + [True]
        for i, (u, v, _) in enumerate(terms):
            assert np.count_nonzero(u) <= 2 * (R - i) + 1 and np.count_nonzero(v) <= 2 * (R - i) + 1
        assert np.allclose(sum(np.outer(u, v) for u, v, _ in terms), w, atol=1e-12)


def test_peeling_fails_for_stars_and_asymmetric_weights_and_svd_takes_over():
    star = generic_weights(Stencil.star(2, 2).mask())
    terms, method = lorastencil.decompose(star)
    assert method == "svd" and len(terms) == 2  # a generic symmetric cross has rank 2
    rng = np.random.default_rng(2)
    w = rng.uniform(1, 2, (5, 5))
    terms, method = lorastencil.decompose(w)
    assert method == "svd" and len(terms) == 5
    assert np.allclose(sum(np.outer(u, v) for u, v, _ in terms), w, atol=1e-12)


@pytest.mark.parametrize("r, t", [(1, 1), (1, 2), (1, 4), (2, 1), (2, 3), (3, 2)])
def test_generic_symmetric_rank_of_fused_stars_and_boxes(r, t):
    """The closed forms LoRAStencil counts with: rank r(t−1)+2 for a fused star, R+1 for a box."""
    def rank(w):
        s = np.linalg.svd(w, compute_uv=False)
        return int(np.count_nonzero(s > 1e-10 * s[0]))
    assert rank(generic_weights(Stencil.star(2, r).fused_mask(t))) == r * (t - 1) + 2
    assert rank(generic_weights(Stencil.box(2, r).fused_mask(t))) == r * t + 1


def test_sparstencil_box_2d49p():
    """Box-2D49P, (r1, r2) = (2, 8): k' = 8 x 14 = 112, no zero column: 49/112 (TF32, K = 112 = 7 x 16)."""
    a = alpha_for("sparstencil", Stencil.box(2, 3), 1, "m16n8k16", "tf32", r1=2, r2=8)
    assert (a.details["k_before"], a.details["p"], a.details["M_pad"]) == (112, 0, 16)
    assert a.details["alpha_before_conversion"] == a.details["alpha_after_conversion"] == Fraction(49, 112)
    assert a.alpha == Fraction(49, 112)
    assert alpha_for("sparstencil", Stencil.box(2, 3), 1, "m16n8k32", "fp16", r1=2, r2=8).alpha == Fraction(49, 128)


def test_sparstencil_pairs_are_1_2_and_the_exact_matching_beats_the_two_level_algorithm_where_it_overpads():
    con = sparstencil.construct(np.ones((3, 3)), MmaShape.parse("m16n8k16"), "tf32", r1=2, r2=5)
    plane = con.details["planes"][0]
    assert plane["p_two_level"] == 2 and plane["p_exact"] == 0 and con.details["p"] == 0
    assert sparstencil.check_structure(con.operands[0] != 0, 1, 2)
    a = sparstencil.crushed(np.ones((3, 3)), 2, 5)
    pairs, p = two_level_matching(3 + 5 - 1, 3 + 2 - 1, 3, 3)
    assert p == 2 and sparstencil.conflict_free(a, pairs)


def test_two_level_closed_form_matches_the_algorithm():
    for ky, kx, r1, r2 in itertools.product((1, 3, 5, 7), (3, 5, 7), range(1, 10), range(1, 10)):
        if ky == 1 and r2 > 1:
            continue
        pairs, p = two_level_matching(ky + r2 - 1, kx + r1 - 1, ky, kx)
        assert p == sparstencil.two_level_zeros(ky, kx, r1, r2)
        assert sparstencil.conflict_free(sparstencil.crushed(np.ones((ky, kx)), r1, r2), pairs)


def test_blossom_matching_is_maximum():
    """Edmonds' algorithm against brute force on random small graphs (odd cycles included)."""
    rng = np.random.default_rng(7)

    def brute(n, edges):
        best = 0
        for k in range(len(edges), 0, -1):
            for sub in itertools.combinations(edges, k):
                if len({v for e in sub for v in e}) == 2 * k:
                    return k
        return best

    for _ in range(150):
        n = int(rng.integers(1, 9))
        edges = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.4]
        adj = [[] for _ in range(n)]
        for a, b in edges:
            adj[a].append(b)
            adj[b].append(a)
        mate = max_matching(adj)
        assert all(mate[v] == -1 or (mate[mate[v]] == v and mate[v] in adj[v]) for v in range(n))
        assert sum(1 for v in range(n) if mate[v] > v) == brute(n, edges)


# ----------------------------------------------------------------------------- emulations

SETTINGS = [("convstencil", "fp64", "m8n8k4"), ("convstencil", "tf32", "m16n8k8"),
            ("spider", "fp16", "m16n8k32"), ("spider", "tf32", "m16n8k16"),
            ("rowband", "fp64", "m16n8k8"), ("rowband", "fp64", "m8n8k4"),
            ("tcstencil", "fp16", "m16n8k16"), ("lorastencil", "fp64", "m8n8k4"), ("lorastencil", "tf32", "m16n8k8"),
            ("sparstencil", "fp16", "m16n8k32"), ("sparstencil", "tf32", "m16n8k16"), ("sparstencil", "fp64", "m8n8k4")]
STENCILS = [(Stencil.box(1, 2), 2), (Stencil.box(2, 1), 2), (Stencil.star(2, 2), 1), (Stencil.star(2, 1), 3),
            (Stencil.box(3, 1), 1), (Stencil.star(3, 1), 2),
            (Stencil.from_offsets([(0, 0), (1, 2), (-2, 0), (0, -1)]), 2)]
SIZES = {1: (37,), 2: (11, 13), 3: (5, 6, 7)}


@pytest.mark.parametrize("name, precision, shape", SETTINGS)
@pytest.mark.parametrize("stencil, fuse", STENCILS)
def test_emulation_reproduces_the_stencil(name, precision, shape, stencil, fuse):
    """The constructed operands, multiplied MMA by MMA (sparse ones from values + metadata), give the stencil."""
    if stencil.dims not in module(name).DIMS:
        pytest.skip(f"{name} has no {stencil.dims}D form")
    rng = np.random.default_rng(abs(hash((name, stencil.name, fuse, shape))) % 2**32)
    w = fused_weights(random_weights(stencil.mask(), rng), fuse)
    x = rng.standard_normal(SIZES[stencil.dims])
    got = emulate(name, x, w, shape, precision)
    ref = apply_periodic(x, w)
    assert np.max(np.abs(got - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("stencil, fuse", [(Stencil.box(2, 2), 1), (Stencil.box(2, 1), 3), (Stencil.star(3, 1), 1),
                                           (Stencil.box(3, 1), 2)])
def test_lorastencil_emulation_on_symmetric_weights_uses_the_peeling(stencil, fuse):
    rng = np.random.default_rng(5)
    w = generic_weights(stencil.fused_mask(fuse))
    con = lorastencil.construct(w, M8N8K4)
    assert "pyramidal" in con.details["decomposition"] and con.details["free_terms"]
    x = rng.standard_normal(SIZES[stencil.dims])
    assert np.max(np.abs(emulate("lorastencil", x, w, M8N8K4) - apply_periodic(x, w))) <= 1e-11


def test_emulation_detects_wrong_operands():
    """A guard that the emulation really uses the operands: corrupt one weight, the result changes."""
    rng = np.random.default_rng(5)
    w = random_weights(Stencil.box(2, 1).mask(), rng)
    con = convstencil.construct(w, M8N8K4)
    con.operands[0][0, 0] += 1.0
    x = np.pad(rng.standard_normal((5, 8)), 1, mode="wrap")
    got = convstencil.emulate_plane(x, con.operands[0], con.operands[1], M8N8K4, 3, 3, 5, 2)
    assert not np.allclose(got, apply_periodic(x[1:-1, 1:-1], w))


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


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("name", ["convstencil", "spider", "rowband", "tcstencil", "lorastencil", "sparstencil"])
@pytest.mark.parametrize("weights, problem", [(np.zeros((3, 3)), "empty"), (np.ones((4, 4)), "odd side"),
                                              (np.ones((3, 5)), "cube"), (np.ones((3,) * 4), "1D, 2D or 3D")])
def test_bad_kernels_are_one_line_errors(name, weights, problem):
    with pytest.raises(TcAdvisorError, match=problem) as err:
        construct(name, weights, "m16n8k16", "fp16")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("call, problem", [
    (lambda: alpha_for("tcstencil", Stencil.box(2, 1), 8, "m16n8k16", "fp16"), "cannot hold fused radius 8"),
    (lambda: alpha_for("lorastencil", Stencil.box(1, 1), 1, "m8n8k4", "fp64"), "no construction for 1D"),
    (lambda: alpha_for("tcstencil", Stencil.box(1, 1), 1, "m16n8k16", "fp16"), "no construction for 1D"),
    (lambda: alpha_for("spider", Stencil.box(2, 1), 1, "m16n8k16", "fp64"), "no FP64 mma.sp"),
    (lambda: alpha_for("rowband", Stencil.box(2, 1), 1, "m16n16k16", "fp64"), "n = 8"),
    (lambda: alpha_for("warpstencil", Stencil.box(2, 1), 1, "m8n8k4", "fp64"), "unknown transformation"),
    (lambda: alpha_for("convstencil", Stencil.box(2, 1), 1, "m8n8k4", "fp8"), "precision 'fp8'"),
    (lambda: alpha_for("convstencil", Stencil.box(2, 1), 1, "8x8x4", "fp64"), "MMA shape"),
    (lambda: alpha_for("sparstencil", Stencil.box(1, 1), 1, "m16n8k16", "tf32", r1=2, r2=2), "r2 = 1 in 1D"),
])
def test_impossible_constructions_are_one_line_errors(call, problem):
    with pytest.raises(TcAdvisorError, match=problem) as err:
        call()
    assert "\n" not in str(err.value)


def test_every_transformation_is_registered_with_its_dimensions():
    assert names() == ["convstencil", "lorastencil", "rowband", "sparstencil", "spider", "tcstencil"]
