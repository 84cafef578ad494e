"""The advisor on the cases the paper spells out (its Tables 2-4), plus its search and error behaviour."""
import math
from fractions import Fraction

import pytest

from tcadvisor.advisor import AlphaChoice, advise
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import find_spec
from pathlib import Path

from tcadvisor.advisor import TIE_TOLERANCE
from tcadvisor.impls import find_impl, parse_profile
from tcadvisor.report import advice_dict, format_advice
from tcadvisor.stencil import Stencil, parse_stencil

A100 = find_spec("a100")


def by_unit(adv):
    return {o.unit: o for o in adv.options}


def test_box3d1r_fused3_double_spec_example():
    """Table 3 case 5 of the paper (docs/model.md, eq. 19): scenario 4, β = 4.23 > 1.005, Tensor Cores lose, R ≈ 0.24."""
    adv = advise(parse_stencil("Box-3D1R"), "double", A100, fuse=3, alpha="paper")
    o = by_unit(adv)
    tc = o["tensor_core"]
    assert tc.alpha_source == "paper"
    assert tc.scenario == 4
    assert tc.beta == Fraction(343, 81)
    assert math.isclose(tc.values["beta_threshold"], 0.5 * 19.5 / 9.7)
    assert math.isclose(tc.speedup, 0.5 * 19.5 / (343 / 81 * 9.7))
    assert round(tc.speedup, 2) == 0.24
    assert "4.23 > α·P_tc/P_cc = 1.005" in tc.decision and "lose" in tc.decision
    assert not o["sparse_tensor_core"].available
    assert "double" in o["sparse_tensor_core"].reason
    assert adv.at_fuse.unit == "cuda_core"
    # CUDA cores reach their compute ceiling at t = 2 (27·2/8 ≥ 9.7/1.935), so that is the best depth
    assert adv.verdict.unit == "cuda_core" and adv.verdict.fuse == 2


def test_intensities_and_throughputs_from_first_principles():
    adv = advise(parse_stencil("Box-2D1R"), "double", A100, fuse=3, alpha="paper")
    o = by_unit(adv)
    cc, tc = o["cuda_core"], o["tensor_core"]
    assert cc.flops_per_point == 2 * 9 * 3 and cc.bytes_per_point == 16
    assert cc.intensity == 27 / 8 and cc.bound == "memory"
    assert math.isclose(cc.gstencils, 1935e9 * 27 / 8 / 18 / 1e9)
    assert math.isclose(tc.flops_per_point, 2 * 49 / 0.5) and tc.bound == "compute"
    assert math.isclose(tc.gstencils, 0.5 / (49 / 27) * 19.5e12 / 18 / 1e9)
    assert tc.scenario == 2 and tc.speedup <= 1


def test_float_uses_tf32_and_sparse_wins_case3():
    adv = advise(parse_stencil("Box-2D1R"), "float", A100, fuse=7, alpha="paper")
    o = by_unit(adv)
    assert o["tensor_core"].precision == "tf32" and o["sparse_tensor_core"].precision == "tf32"
    sp = o["sparse_tensor_core"]
    assert sp.scenario == 3 and sp.bound == "memory" and math.isclose(sp.intensity, 120.0)
    assert math.isclose(sp.speedup, 1935e9 * 15.75 / 19.5e12)
    assert adv.at_fuse.unit == "sparse_tensor_core"


def test_best_depth_search_matches_brute_force():
    st = parse_stencil("Star-2D1R")
    adv = advise(st, "float", A100, max_fuse=12)
    for unit, best in adv.best.items():
        single = [by_unit(advise(st, "float", A100, fuse=t, max_fuse=1 if t == 1 else t))[unit] for t in range(1, 13)]
        top = max(s.gstencils for s in single)
        # the shallowest depth within the tie tolerance of the best throughput
        assert best.fuse == min(s.fuse for s in single if s.gstencils >= top * (1 - TIE_TOLERANCE))
        assert best.gstencils >= top * (1 - TIE_TOLERANCE)


def test_constructed_alpha_changes_with_depth():
    st = parse_stencil("Box-2D1R")
    adv3 = advise(st, "double", A100, fuse=3, alpha=AlphaChoice.parse("constructed"), model="base")
    tc = by_unit(adv3)["tensor_core"]
    assert tc.alpha == Fraction(392, 832) and tc.alpha_source == "constructed" and str(tc.mma_shape) == "m8n8k4"
    adv7 = advise(st, "float", A100, fuse=7, alpha=AlphaChoice.parse("constructed"), model="base")
    assert by_unit(adv7)["sparse_tensor_core"].alpha == Fraction(15, 32)


def test_alpha_override():
    adv = advise(parse_stencil("Box-2D1R"), "double", A100, fuse=3, alpha=AlphaChoice.parse("0.42"))
    tc = by_unit(adv)["tensor_core"]
    assert tc.alpha == Fraction(42, 100) and tc.alpha_source == "user"


@pytest.mark.parametrize("text", ["0", "-0.5", "1.01", "abc", "nan", "1/0", "1e-400", "1e-300", "1e-7", "inf", "True"])
def test_bad_alpha(text):
    with pytest.raises(TcAdvisorError):
        AlphaChoice.parse(text)


def _paper_only_profile():
    raw = {"name": "PaperOnly", "unit": "tensor_core", "fusion": "kernel", "precisions": {"double": ["fp64"]},
           "mma": {"fp64": "m8n8k4"}, "alpha": {"paper": "1/3"}, "reference": "a test profile"}
    return parse_profile(raw, Path("paper-only.yaml"))


def test_construction_missing_is_a_clean_error():
    with pytest.raises(TcAdvisorError, match="PaperOnly has no α construction"):
        advise(parse_stencil("Box-2D3R"), "double", A100, fuse=1, impls={"tensor_core": _paper_only_profile()},
               alpha=AlphaChoice.parse("constructed"))


def test_published_constant_only_where_no_construction_and_said_so():
    adv = advise(parse_stencil("Box-2D3R"), "double", A100, fuse=1, impls={"tensor_core": _paper_only_profile()})
    tc = by_unit(adv)["tensor_core"]
    assert tc.alpha == Fraction(1, 3) and tc.alpha_source == "paper"
    assert "no construction" in tc.alpha_note
    assert advice_dict(adv)["options"][1]["alpha_source"] == "paper"
    assert "(p)" in format_advice(adv)


def test_lorastencil_constructed_alpha_is_the_papers_count():
    adv = advise(parse_stencil("Box-2D3R"), "double", A100, fuse=1, impls={"tensor_core": find_impl("LoRAStencil")},
                 alpha=AlphaChoice.parse("constructed"))
    assert by_unit(adv)["tensor_core"].alpha == Fraction(49, 144)


def test_impl_limits_shown_as_unavailable():
    st = Stencil.from_offsets([(0, 0), (1, 0), (0, 1)])  # asymmetric, not a box
    adv = advise(st, "double", A100, fuse=2, impls={"tensor_core": find_impl("LoRAStencil")})
    tc = by_unit(adv)["tensor_core"]
    assert not tc.available and "symmetric" in tc.reason
    adv = advise(parse_stencil("Box-1D1R"), "double", A100, fuse=1, impls={"tensor_core": find_impl("TCStencil")})
    assert "2D" in by_unit(adv)["tensor_core"].reason


def test_gpu_without_tensor_fp64():
    adv = advise(parse_stencil("Box-2D1R"), "double", find_spec("rtx4090"), fuse=3)
    tc = by_unit(adv)["tensor_core"]
    assert not tc.available and "FP64" in tc.reason
    assert adv.verdict.unit == "cuda_core"


def test_json_contract():
    d = advice_dict(advise(parse_stencil("Box-3D1R"), "double", A100, fuse=3))
    for key in ("stencil", "fuse", "dtype", "gpu", "options", "verdict"):
        assert key in d
    assert d["stencil"] == "Box-3D1R" and d["fuse"] == 3 and d["dtype"] == "double"
    units = [o["unit"] for o in d["options"]]
    assert units == ["cuda_core", "tensor_core", "sparse_tensor_core"]
    for o in d["options"]:
        assert isinstance(o["available"], bool)
        if o["available"]:
            for key in ("impl", "precision", "alpha", "beta", "flops_per_point", "bytes_per_point", "intensity",
                        "ridge", "bound", "gstencils", "speedup"):
                assert key in o, key
            assert o["bound"] in ("memory", "compute")
            if o["unit"] != "cuda_core":
                assert o["scenario"] in (1, 2, 3, 4)
    assert d["verdict"]["unit"] in units and isinstance(d["verdict"]["fuse"], int)


def test_text_report_mentions_everything():
    text = format_advice(advise(parse_stencil("Box-3D1R"), "double", A100, fuse=3, alpha="paper"))
    for needle in ("CUDA cores", "Tensor Cores", "Sparse Tensor Cores", "not available", "scenario", "Verdict",
                   "1.005", "4.235"):
        assert needle in text
