"""Property tests (hypothesis): the parser never crashes, and the model's invariants hold."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcadvisor import model
from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import Stencil, parse_stencil

names = st.builds(
    lambda shape, d, n, kind, sep, upper: (
        f"{shape}{sep}{d}D{n}{kind}".upper() if upper else f"{shape}{sep}{d}D{n}{kind}"
    ),
    st.sampled_from(["Box", "Star", "box", "star"]),
    st.integers(1, 3),
    st.integers(1, 12),
    st.sampled_from(["R", "r"]),
    st.sampled_from(["-", "", "_"]),
    st.booleans(),
)


@given(names)
def test_valid_names_round_trip(name):
    s = parse_stencil(name)
    again = parse_stencil(s.name)
    assert again.offsets == s.offsets
    assert s.K == len(s.offsets)


@given(st.text(max_size=30))
@settings(max_examples=300)
def test_parser_only_raises_user_errors(text):
    try:
        parse_stencil(text)
    except TcAdvisorError as exc:
        assert "\n" not in str(exc)


@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=1, max_size=12), st.integers(1, 4))
def test_custom_fusion_monotone(points, fuse):
    if all(p == (0, 0) for p in points):
        return
    s = Stencil.from_offsets(points)
    # K_t grows with t and never exceeds the count of all sums (|S|^t), nor the fused bounding box.
    assert s.fused_points(fuse) >= (s.fused_points(fuse - 1) if fuse > 1 else s.K)
    assert s.fused_points(fuse) <= min(s.K ** fuse, (2 * s.radius * fuse + 1) ** 2)


positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
configs = st.fixed_dictionaries({
    "K": st.integers(1, 500).map(float),
    "t": st.integers(1, 16).map(float),
    "beta": st.floats(1.0, 50.0),
    "alpha": st.floats(0.01, 1.0),
    "S": st.sampled_from([2.0, 4.0, 8.0]),
    "B": st.floats(1e11, 1e13),
    "P_cc": st.floats(1e12, 1e14),
    "P_tc": st.floats(1e12, 5e15),
})


@given(configs)
@settings(max_examples=400)
def test_scenario_formula_equals_general_speedup(c):
    out = model.evaluate(**c)
    scen = int(out["scenario"])
    # The scenario's own closed form (eqs. 14, 15, 17, 18) must equal eq. 13, P_TC / P_CC.
    assert math.isclose(float(out["R"]), float(out["R_ratio"]), rel_tol=1e-9)
    # ... and the conditions must be the ones the paper states, read off the intensities.
    mem_cc = out["I_cc"] < out["rho_cc"]
    mem_tc = out["I_tc"] < out["rho_tc"]
    assert scen == {(True, True): 1, (True, False): 2, (False, True): 3, (False, False): 4}[(bool(mem_cc), bool(mem_tc))]
    if scen == 1:
        assert float(out["R"]) == 1.0  # exactly, not approximately
    if scen == 2:
        assert float(out["R"]) <= 1 + 1e-12
    if scen == 3:
        assert float(out["R"]) >= 1 - 1e-12


@given(configs)
@settings(max_examples=400)
def test_useful_throughput_below_both_ceilings(c):
    out = model.evaluate(**c)
    p_tc = float(out["P_tc"])
    assert p_tc <= c["P_tc"] * (1 + 1e-12)
    assert p_tc <= c["B"] * float(out["I_tc"]) * (1 + 1e-12)
    assert p_tc <= c["alpha"] / c["beta"] * c["P_tc"] * (1 + 1e-12)
    assert float(out["P_cc"]) <= min(c["P_cc"], c["B"] * float(out["I_cc"])) * (1 + 1e-12)


@given(configs, st.sampled_from(["cc", "tc"]))
@settings(max_examples=200)
def test_speedup_continuous_across_ridges(c, which):
    """Put one unit exactly on its ridge (via B) and step ±ε: R changes by O(ε), no jump."""
    c = dict(c)
    if which == "cc":
        c["B"] = c["P_cc"] / (c["K"] * c["t"] / c["S"])
    else:
        c["B"] = c["P_tc"] * c["alpha"] * c["S"] / (c["K"] * c["t"] * c["beta"])
    eps = 1e-9
    lo = model.evaluate(**{**c, "B": c["B"] * (1 - eps)})
    hi = model.evaluate(**{**c, "B": c["B"] * (1 + eps)})
    r_lo, r_hi = float(lo["R"]), float(hi["R"])
    assert abs(r_hi - r_lo) <= 4 * eps * max(abs(r_lo), 1)


def test_vectorised_million_configurations():
    rng = np.random.default_rng(0)
    n = 10**6
    out = model.evaluate(K=rng.integers(1, 500, n).astype(float), t=rng.integers(1, 17, n).astype(float),
                         beta=rng.uniform(1, 20, n), alpha=rng.uniform(0.05, 1, n), S=8.0, B=2e12, P_cc=1e13,
                         P_tc=2e13)
    assert out["R"].shape == (n,)
    assert set(np.unique(out["scenario"])) <= {1.0, 2.0, 3.0, 4.0}
    assert np.all(np.isfinite(out["R"]))
