"""Counting without masks: closed forms equal the constructions, and every query stays within its bounds."""
import itertools
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcadvisor import minkowski
from tcadvisor.errors import TcAdvisorError, WorkBudgetExceeded
from tcadvisor.mma import MmaShape
from tcadvisor.stencil import Stencil, load_stencil_file
from tcadvisor.transforms import (PAPER_SETTING, alpha_for, construct, count_support, least_padding_shape, module,
                                  names)
from tcadvisor.transforms.sparstencil import SEARCH_2D, exact_pairs, crushed
from tcadvisor.transforms.support import (MaskSupport, StarSupport, fused_support, generic_weights,
                                          star_points)

SETTINGS = {"convstencil": [("fp64", "m8n8k4"), ("tf32", "m16n8k8")],
            "spider": [("fp16", "m16n8k32"), ("tf32", "m16n8k16")],
            "rowband": [("fp64", "m16n8k8"), ("fp64", "m8n8k4")],
            "tcstencil": [("fp16", "m16n8k16")],
            "lorastencil": [("fp64", "m8n8k4"), ("tf32", "m16n8k8")],
            "sparstencil": [("fp16", "m16n8k32"), ("tf32", "m16n8k16"), ("fp64", "m8n8k4")]}
CASES = [(name, prec, shape) for name, sets in SETTINGS.items() for prec, shape in sets]


def constructed(name, mask, shape, precision):
    """The count taken from the materialised operands (generic symmetric weights where values matter)."""
    w = generic_weights(mask) if name == "lorastencil" else mask.astype(float)
    return construct(name, w, shape, precision)


def same_counts(a, b):
    return a.useful == b.useful and a.executed == b.executed


# ----------------------------------------------------------------------------- supports

@pytest.mark.parametrize("dims, r, t", [(d, r, t) for d in (2, 3) for r in (1, 2, 3) for t in (0, 1, 2, 3)])
def test_star_support_descriptors_match_the_mask(dims, r, t):
    sup = StarSupport(dims, r, t)
    mask = sup.mask()
    ms = MaskSupport(mask)
    assert sup.P == int(mask.sum()) == star_points(dims, r, t)
    assert sup.n_lines() == ms.n_lines() and sup.n_planes() == ms.n_planes()
    lines = mask.reshape(-1, mask.shape[-1]).sum(axis=1)
    assert sup.line_lengths() == {n: int(np.count_nonzero(lines == n)) for n in set(lines.tolist()) if n}
    if dims == 3:
        got = sorted((m, p.P) for m, p in sup.planes() for _ in range(1))
        want = {}
        for p in range(mask.shape[0]):
            want[int(mask[p].sum())] = want.get(int(mask[p].sum()), 0) + 1
        assert sorted((n, c) for c, n in got) == sorted(want.items())


def test_fused_star_closed_form_equals_the_stencils_k_t():
    for dims, r, t in itertools.product((2, 3), (1, 2, 5, 64), (1, 2, 7, 1024)):
        assert StarSupport(dims, r, t).P == Stencil.star(dims, r).fused_points(t)


# ----------------------------------------------------------------------------- fast counts = constructions

@pytest.mark.parametrize("name, precision, shape", CASES)
@pytest.mark.parametrize("kind, dims, r, t", [(k, d, r, t) for k in ("box", "star") for d in (1, 2, 3)
                                              for r, t in ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1))])
def test_closed_forms_equal_the_constructed_operands(name, precision, shape, kind, dims, r, t):
    stencil = getattr(Stencil, kind)(dims, r)
    side = 2 * r * t + 1
    if dims not in module(name).DIMS or (name == "tcstencil" and 2 * r * t >= 16) or side ** dims > 400:
        pytest.skip("no construction or too large to build here")
    fast = alpha_for(name, stencil, t, shape, precision)
    mask = stencil.fused_mask(t)
    assert same_counts(fast, count_support(name, MaskSupport(mask), shape, precision))
    assert same_counts(fast, constructed(name, mask, shape, precision))


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CASES), kind=st.sampled_from(["box", "star"]), dims=st.integers(1, 3),
       r=st.integers(1, 4), t=st.integers(1, 4))
def test_property_fast_counts_equal_mask_counts(case, kind, dims, r, t):
    """Any box or star, any depth small enough to materialise: the descriptor's count is the mask's count."""
    name, precision, shape = case
    if dims not in module(name).DIMS or (name == "tcstencil" and 2 * r * t >= 16):
        return
    side = 2 * r * t + 1
    if side ** dims > (900 if name == "sparstencil" else 30_000):
        return
    stencil = getattr(Stencil, kind)(dims, r)
    fast = alpha_for(name, stencil, t, shape, precision)
    assert same_counts(fast, count_support(name, MaskSupport(stencil.fused_mask(t)), shape, precision))


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["box", "star"]), r=st.integers(1, 3), t=st.integers(1, 3),
       layout=st.sampled_from(SEARCH_2D[:60]))
def test_property_box_and_star_columns_pair_up_perfectly(kind, r, t, layout):
    """The closed form assumes the non-central columns of a box/star A′ have a perfect matching: check it exactly."""
    mask = getattr(Stencil, kind)(2, r).fused_mask(t)
    if mask.shape[0] > 13:
        return
    a = crushed(mask, *layout)
    nnz = a.sum(axis=0)
    other = int(np.count_nonzero((nnz > 0) & (nnz < a.shape[0])))
    _, _, nu0 = exact_pairs(a)
    assert nu0 == other // 2


def test_sparstencil_best_layout_is_the_best_of_the_search_space():
    st_ = Stencil.star(2, 1)
    best = alpha_for("sparstencil", st_, 2, "m16n8k32", "fp16")
    for r1, r2 in SEARCH_2D[::7]:
        assert alpha_for("sparstencil", st_, 2, "m16n8k32", "fp16", r1=r1, r2=r2).alpha <= best.alpha
    assert "r1*r2 <= 64" in best.details["search"]


def test_custom_counts_come_from_the_exact_minkowski_mask():
    custom = Stencil.from_offsets([(0, 0), (1, 2), (-2, 0), (0, -1), (1, 1)])
    for name, (precision, shape) in PAPER_SETTING.items():
        for t in (1, 2, 3):
            if name == "tcstencil" and 2 * custom.radius * t >= 16:
                continue
            fast = alpha_for(name, custom, t, shape, precision)
            assert same_counts(fast, constructed(name, custom.fused_mask(t), shape, precision))


def test_least_padding_shape_agrees_for_stencils_masks_and_supports():
    shapes = [MmaShape.parse(s) for s in ("m16n8k16", "m16n8k8", "m16n8k4", "m8n8k4")]
    for st_, t in ((Stencil.box(2, 1), 1), (Stencil.box(2, 1), 3), (Stencil.star(3, 1), 2)):
        a = least_padding_shape("rowband", st_, shapes, fuse=t)
        assert a == least_padding_shape("rowband", st_.fused_mask(t), shapes)
        assert a == least_padding_shape("rowband", fused_support(st_, t), shapes)
    assert least_padding_shape("rowband", Stencil.box(2, 1), shapes, fuse=1) == MmaShape.parse("m16n8k4")


# ----------------------------------------------------------------------------- bounded work

def test_box_3d8r_at_depth_1024_is_counted_quickly():
    stencil = Stencil.box(3, 8)
    for name in names():
        precision, shape = PAPER_SETTING[name]
        start = time.perf_counter()
        try:
            alpha_for(name, stencil, 1024, shape, precision)
        except TcAdvisorError as exc:
            assert name == "tcstencil" and "cannot hold" in str(exc)
        assert time.perf_counter() - start < 2.0
    assert stencil.fused_points(1024) == (2 * 8 * 1024 + 1) ** 3
    with pytest.raises(WorkBudgetExceeded, match="deepest depth within budget"):
        stencil.fused_mask(1024)


MAP_SCRIPT = r"""
import itertools, json, resource, sys, time
from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import Stencil
from tcadvisor.transforms import PAPER_SETTING, alpha_for, names
worst, start, n = 0.0, time.perf_counter(), 0
for shape, name in itertools.product(("box", "star"), names()):
    precision, mma = PAPER_SETTING[name]
    for r, t in itertools.product(range(1, 65), range(1, 65)):
        s = time.perf_counter()
        try:
            alpha_for(name, getattr(Stencil, shape)(3, r), t, mma, precision)
            n += 1
        except TcAdvisorError:
            pass
        worst = max(worst, time.perf_counter() - s)
print(json.dumps({"worst": worst, "total": time.perf_counter() - start, "counted": n,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def test_large_map_of_alphas_stays_within_bounds():
    """dims 3 × radii 1..64 × fuse 1..64 × box/star × every transformation, in a process limited to 1 GB."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    out = subprocess.run([sys.executable, "-c", limit + MAP_SCRIPT], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert res["counted"] > 40_000
    assert res["worst"] < 2.0 and res["total"] < 120 and res["rss_mb"] < 1024


def test_custom_stencil_too_deep_is_refused_quickly_and_says_how_deep_it_can_go():
    rng = np.random.default_rng(4)
    custom = Stencil.from_offsets([(0, 0)] + [tuple(int(v) for v in rng.integers(-2, 3, 2)) for _ in range(9)])
    start = time.perf_counter()
    with pytest.raises(WorkBudgetExceeded) as err:
        custom.fused_points(1024)
    assert time.perf_counter() - start < 0.5
    msg = str(err.value)
    assert custom.name in msg and "1024" in msg and "cell updates" in msg and "\n" not in msg
    deepest = err.value.deepest
    assert 1 < deepest < 1024 and f"t = {deepest}" in msg
    assert minkowski.work(np.array(custom.offsets), deepest) <= minkowski.WORK_BUDGET
    for name in names():
        precision, shape = PAPER_SETTING[name]
        with pytest.raises(WorkBudgetExceeded, match="deepest depth within budget"):
            alpha_for(name, custom, 1024, shape, precision)


def test_transformation_budgets_name_the_stencil_and_the_deepest_depth():
    custom = Stencil.from_offsets([(0, 0), (1, 0), (0, 2), (-2, -1)])
    with pytest.raises(WorkBudgetExceeded) as err:
        alpha_for("sparstencil", custom, 40, "m16n8k32", "fp16")
    msg = str(err.value)
    assert custom.name in msg and "fused x40" in msg and f"t = {err.value.deepest}" in msg
    alpha_for("sparstencil", custom, err.value.deepest, "m16n8k32", "fp16")  # the depth it names works


def test_growing_masks_are_not_all_kept():
    custom = Stencil.from_offsets([(0, 0), (1, 0), (0, 1), (-1, -1)])
    for t in range(1, 30):
        custom.fused_points(t)
    assert len(minkowski._grown) <= minkowski._KEEP
    assert sum(m.size for _, m in minkowski._grown.values()) <= minkowski.MAX_CELLS


# ----------------------------------------------------------------------------- weights

def test_weights_are_kept_hashable_and_zeros_drop_out():
    s = Stencil.from_offsets([(0, 0), (1, 0), (-1, 0), (0, 1)], weights=[1.0, 0.5, 0.5, 0.0])
    assert s.K == 3 and (0, 1) not in s.offsets and s.weights == (0.5, 1.0, 0.5)  # sorted offsets
    assert hash(s) == hash(Stencil.from_offsets([(1, 0), (0, 0), (-1, 0)], weights=[0.5, 1.0, 0.5]))
    box = Stencil.from_offsets(list(itertools.product((-1, 0, 1), repeat=2)), weights=[1.0] * 9)
    assert box.shape == "box" and box.weights == (1.0,) * 9 and box != Stencil.box(2, 1)
    for bad, problem in (([1.0, 2.0], "one weight per offset"), ([0, 0, 0, 0], "every weight"),
                         ([1, float("nan"), 1, 1], "finite"), ([1, "a", 1, 1], "finite")):
        with pytest.raises(TcAdvisorError, match=problem):
            Stencil.from_offsets([(0, 0), (1, 0), (-1, 0), (0, 1)], weights=bad)
    with pytest.raises(TcAdvisorError, match="listed twice"):
        Stencil.from_offsets([(0, 0), (1, 0), (1, 0)], weights=[1, 2, 3])


def test_stencil_files_with_weights(tmp_path):
    y = tmp_path / "lap.yaml"
    y.write_text("points:\n  - {offset: [0, 0], weight: -4}\n  - {offset: [1, 0], weight: 1}\n"
                 "  - {offset: [-1, 0], weight: 1}\n  - {offset: [0, 1], weight: 1}\n  - {offset: [0, -1], weight: 1}\n")
    lap = load_stencil_file(y)
    assert lap.shape == "star" and sorted(lap.weights) == [-4, 1, 1, 1, 1]
    j = tmp_path / "w.json"
    j.write_text(json.dumps({"offsets": [[0], [1], [-1]], "weights": [0.5, 0.25, 0.25]}))
    assert load_stencil_file(j).weights == (0.25, 0.5, 0.25)
    t = tmp_path / "w.txt"
    t.write_text("0 0 : 2\n1 0 : -1  # east\n-1 0 : -1\n")
    assert load_stencil_file(t).weights == (-1.0, 2.0, -1.0)
    t.write_text("0 0 : 2\n1 0\n")
    with pytest.raises(TcAdvisorError, match="every line or on none"):
        load_stencil_file(t)
    y.write_text("points: [{offset: [0, 0], weight: 1}, {offset: [1, 0]}]\n")
    with pytest.raises(TcAdvisorError, match="for every point or for none"):
        load_stencil_file(y)


def test_lorastencil_rank_depends_on_the_weights():
    """A separable box has rank 1: one U·X·V chain instead of R; generic weights give R."""
    sep = np.outer([1.0, 2.0, 1.0], [1.0, 2.0, 1.0])
    offsets = list(itertools.product((-1, 0, 1), repeat=2))
    s = Stencil.from_offsets(offsets, weights=[sep[a + 1, b + 1] for a, b in offsets])
    assert alpha_for("lorastencil", s, 3, "m8n8k4", "fp64").details["terms"] == 1
    assert alpha_for("lorastencil", Stencil.box(2, 1), 3, "m8n8k4", "fp64").details["terms"] == 3
    # other transformations see only the support: same α with or without weights
    for name in ("convstencil", "spider", "sparstencil"):
        precision, shape = PAPER_SETTING[name]
        assert alpha_for(name, s, 3, shape, precision).alpha == alpha_for(name, Stencil.box(2, 1), 3, shape,
                                                                          precision).alpha


def test_cancelling_weights_drop_out_of_the_fused_support():
    """[1, 0, -1] (a central difference) fused twice is [1, 0, -2, 0, 1]: the zeros are not computed."""
    s = Stencil.from_offsets([(-1,), (1,)], weights=[1.0, -1.0])
    sup = fused_support(s, 2)
    assert sup.P == 3 and s.fused_points(2) == 3  # β still uses the Minkowski sum of the support
    assert alpha_for("convstencil", s, 2, "m8n8k4", "fp64").useful == 3
    with_gap = Stencil.from_offsets([(-1, 0), (0, 0), (1, 0)], weights=[1.0, -2.0, 1.0])
    assert fused_support(with_gap, 2).P == 5
    # binomial weights span 1 .. C(80, 40) ≈ 1e23: no tiny entry is mistaken for a cancellation
    binomial = Stencil.from_offsets([(-1,), (0,), (1,)], weights=[1.0, 2.0, 1.0])
    assert fused_support(binomial, 40).P == 81
    mixed = Stencil.from_offsets([(-1,), (0,), (1,)], weights=[1.0, -2.0, 1.0])
    assert fused_support(mixed, 40).P == 81


def test_low_rank_weights_can_need_fewer_macs_than_points():
    """LoRAStencil on a separable kernel: one U·X·V chain computes 49 points with 48 MACs, α > 1 (not clamped)."""
    offsets = list(itertools.product((-1, 0, 1), repeat=2))
    sep = np.outer([1.0, 2.0, 1.0], [1.0, 2.0, 1.0])
    s = Stencil.from_offsets(offsets, weights=[sep[a + 1, b + 1] for a, b in offsets])
    a = alpha_for("lorastencil", s, 3, "m8n8k4", "fp64")
    assert (a.useful, a.executed) == (49, 48) and a.alpha > 1


# ----------------------------------------------------------------------------- the alpha command

def test_alpha_command_text_json_and_errors(run_cli, tmp_path):
    r = run_cli("alpha", "Box-2D49P", "--impl", "LoRAStencil")
    assert r.returncode == 0, r.stderr
    assert "α = 49/144" in r.stdout and "144 executed" in r.stdout and "U (8 x 16)" in r.stdout
    r = run_cli("alpha", "Box-2D1R", "--fuse", "3", "--impl", "ConvStencil", "--json")
    d = json.loads(r.stdout)
    assert d["alpha"] == "49/104" and d["details"]["K_pad"] == 52 and d["paper_alpha"] == "1/2"
    r = run_cli("alpha", "Box-2D3R", "--impl", "tcstencil")
    assert "286.72" in r.stdout
    for args, problem in ((["Box-2D1R", "--fuse", "8", "--impl", "TCStencil"], "cannot hold fused radius 8"),
                          (["Box-1D1R", "--impl", "LoRAStencil"], "1D"), ([], "needs a stencil"),
                          (["Box-2D1R", "--impl", "EBISU"], "CUDA cores"), (["Box-2D1R", "--mma", "m8n8"], "MMA"),
                          (["Box-2D1R", "--fuse", "1-3"], "not an integer")):
        r = run_cli("alpha", *args)
        assert r.returncode == 2 and problem in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)


def test_alpha_table(run_cli):
    r = run_cli("alpha", "--table", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    got = {(x["stencil"], x["fuse"], x["transform"]): x for x in rows}
    assert got[("Box-2D49P", 1, "lorastencil")]["alpha"] == "49/144"
    assert got[("Box-2D9P", 3, "convstencil")]["alpha"] == "49/104"
    assert "error" in got[("Heat-1D", 1, "lorastencil")]
    assert {x["fuse"] for x in rows} == {1, 2, 3, 4} and len({x["stencil"] for x in rows}) == 9
    r = run_cli("alpha", "--table")
    assert r.returncode == 0 and "Box-3D27P" in r.stdout and "SparStencil" in r.stdout


@pytest.mark.parametrize("signs", ["one sign", "mixed signs"])
def test_fused_weights_budget_names_a_depth_that_is_within_it(signs):
    """The deepest depth named is computed as the refusal counts the work: mixed signs convolve the magnitudes too
    (twice the work), so the Star-3D4R of 8th-order weights reaches t = 14, not the t = 17 of one sign."""
    from tcadvisor.transforms.support import fused_weight_array

    offsets = Stencil.star(3, 4).offsets
    weights = [(-2.0 if not any(o) else 0.5) if signs == "mixed signs" else 1.0 for o in offsets]
    stencil = Stencil.from_offsets(offsets, name="star4", weights=weights)
    with pytest.raises(WorkBudgetExceeded) as err:
        fused_weight_array(stencil, 30)
    deepest = err.value.deepest
    assert f"t = {deepest}" in str(err.value) and deepest < 30
    fused_weight_array(stencil, deepest)  # the depth it names is within the budget
    with pytest.raises(WorkBudgetExceeded):
        fused_weight_array(stencil, deepest + 1)
