"""--model refined through the advisor, explain, sweeps and the CLI; the profile's tiling section."""
import json
import math
from pathlib import Path

import pytest

from tcadvisor import refinement
from tcadvisor.advisor import advise
from tcadvisor.errors import TcAdvisorError
from tcadvisor.explanation import explain
from tcadvisor.hardware import find_spec
from tcadvisor.impls import find_impl, load_profile_file
from tcadvisor.model import get_variant
from tcadvisor.report import advice_dict, format_advice
from tcadvisor.sweeps import sweep

H100, A100 = find_spec("h100"), find_spec("a100")
BUNDLED = ["tcadvisor-cc", "tcadvisor-tc"]


def unit(adv, name):
    return next(o for o in adv.options if o.unit == name)


# --------------------------------------------------------------------------- refined = base until derived


@pytest.mark.parametrize("name, dtype, gpu", [("Box-2D1R", "double", H100), ("Box-2D1R", "float", H100),
                                              ("Box-3D1R", "double", H100), ("Star-2D2R", "float", A100),
                                              ("Box-2D3R", "double", A100), ("Star-3D1R", "float", H100)])
def test_refined_gives_the_base_numbers_until_its_terms_are_derived(name, dtype, gpu):
    """Placeholder contract (replace once refinement's hooks derive their terms): same numbers, same verdict."""
    base = advise(name, dtype, gpu, impls=BUNDLED)
    ref = advise(name, dtype, gpu, impls=BUNDLED, model="refined")
    assert ref.model == "refined" and base.model == "base"
    for u in base.best:
        a, b = base.best[u], ref.best[u]
        assert a.available == b.available
        if a.available:
            assert a.fuse == b.fuse and a.bound == b.bound and a.scenario == b.scenario
            assert math.isclose(a.gstencils, b.gstencils, rel_tol=1e-12)
    assert (base.verdict.unit, base.verdict.fuse) == (ref.verdict.unit, ref.verdict.fuse)
    for o in ref.options:
        if o.available and o.impl.name in BUNDLED:
            assert o.model == "refined" and o.terms
            assert all(note == refinement.NOT_DERIVED for note in o.term_notes.values())


def test_refined_falls_back_to_base_without_a_tiling_and_says_so():
    adv = advise("Box-2D1R", "float", H100, model="refined")  # EBISU, ConvStencil, SPIDER declare no tiling
    for o in adv.options:
        if o.available:
            assert o.model == "base" and "declares no tiling" in o.model_note and not o.terms
    text = format_advice(adv)
    line = next(l for l in text.splitlines() if l.startswith("Model refined:"))
    assert "EBISU" in line and "tcadvisor-cc" in line  # what applies, and which implementations would refine
    assert "Model refined" not in format_advice(advise("Box-2D1R", "float", H100))  # base output unchanged


# --------------------------------------------------------------------------- the hooks reach the answer


def test_a_derived_term_changes_the_answer(monkeypatch):
    """The framework is live: a hook's value flows through the model into the options, JSON and explain."""
    monkeypatch.setattr(refinement, "HOOKS", {**refinement.HOOKS,
                                              "halo_redundancy": lambda ctx: refinement.TermValue(2.0, "test")})
    base = advise("Box-2D1R", "double", H100, fuse=16, impls=BUNDLED)
    ref = advise("Box-2D1R", "double", H100, fuse=16, impls=BUNDLED, model="refined")
    cc_base, cc_ref = unit(base, "cuda_core"), unit(ref, "cuda_core")
    assert cc_base.bound == "compute"
    assert math.isclose(cc_ref.gstencils, cc_base.gstencils / 2)
    assert math.isclose(cc_ref.flops_per_point, 2 * cc_base.flops_per_point)
    assert math.isclose(cc_ref.executed_flops, cc_base.executed_flops)
    tc_ref = unit(ref, "tensor_core")  # compared against the refined CUDA cores
    assert math.isclose(tc_ref.speedup, 2 * unit(base, "tensor_core").speedup, rel_tol=1e-9)
    d = advice_dict(ref)
    cc_json = next(o for o in d["options"] if o["unit"] == "cuda_core")
    assert d["model"] == "refined" and cc_json["model"] == "refined"
    assert cc_json["terms"]["h_cc"] == {"value": 2.0, "note": "test"}
    assert "h_cc = 2" in explain(ref)


def test_the_depth_limit_makes_deeper_fusion_unavailable(monkeypatch):
    monkeypatch.setattr(refinement, "HOOKS", {**refinement.HOOKS,
                                              "depth_limit": lambda ctx: refinement.TermValue(4.0, "smem full")})
    adv = advise("Box-2D1R", "float", H100, impls=BUNDLED, model="refined")
    assert adv.best["cuda_core"].fuse <= 4 and adv.best["tensor_core"].fuse <= 4
    deep = unit(advise("Box-2D1R", "float", H100, fuse=6, impls=BUNDLED, model="refined"), "cuda_core")
    assert not deep.available and "smem full" in deep.reason and "t = 6" in deep.reason


# --------------------------------------------------------------------------- explain walks the model's chain


@pytest.mark.parametrize("model", ["base", "refined"])
def test_explain_prints_the_chain_of_the_variant(model):
    adv = advise("Box-3D1R", "double", A100, fuse=3, impls=BUNDLED if model == "refined" else None, model=model)
    text = explain(adv)
    lines = text.splitlines()
    variant = get_variant(model)
    for eq in variant.group("cuda_core") + variant.group("tensor_core") + variant.group("comparison"):
        line = next(l for l in lines if l.strip().startswith(eq.name + " "))
        if eq.number:
            assert f"(eq. {eq.number}" in line
        assert (", refined)" in line or "(refined)" in line) == (model == "refined" and eq.refined)
    scenario = unit(adv, "tensor_core").scenario
    for eq in variant.group(f"scenario {scenario}"):
        assert any(l.strip().startswith(eq.name + " ") for l in lines)
    assert f"Model: {model}" in text and "Symbols:" in text and "sparsity factor" in text
    if model == "refined":
        assert "h_cc = 1" in text and refinement.NOT_DERIVED in text


# --------------------------------------------------------------------------- sweeps, JSON and the CLI


def test_sweep_has_a_model_column():
    data = sweep("box", 2, "float", H100, radii=[1, 2], fuses=[1, 2, 3], impls=BUNDLED, model="refined")
    cc = data[data["unit"] == "cuda_core"]
    assert set(cc["model"]) == {"refined"} and set(data[data["unit"] == "sparse_tensor_core"]["model"]) == {"base"}
    avail = data[data["available"]]
    assert ((avail["intensity"] < avail["ridge"]) == (avail["bound"] == "memory")).all()


def test_cli_model_flag(run_cli):
    r = run_cli("advise", "Box-2D1R", "--fuse", "3", "--model", "refined", "--impl", "tcadvisor-cc", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["model"] == "refined" and {o["model"] for o in d["options"] if o["available"]} == {"refined", "base"}
    r = run_cli("advise", "Box-2D1R", "--model", "exact")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--model" in r.stderr
    r = run_cli("explain", "Box-2D1R", "--fuse", "2", "--model", "refined")
    assert r.returncode == 0 and "Model: refined" in r.stdout


def test_alpha_choice_is_given_once():
    assert advise("Box-2D1R", "double", A100, fuse=3, alpha_choice="paper").options[1].alpha_source == "paper"
    with pytest.raises(TcAdvisorError, match="once"):
        advise("Box-2D1R", "double", A100, alpha="paper", alpha_choice="paper")


# --------------------------------------------------------------------------- the tiling section


def test_bundled_kernels_declare_their_tiling(run_cli):
    assert find_impl("tcadvisor-cc").tiling.launch == "kernel" and find_impl("EBISU").tiling is None
    listed = {p["name"]: p["tiling"] for p in json.loads(run_cli("impls", "--json").stdout)}
    assert listed["tcadvisor-tc"] == {"launch": "kernel"} and listed["ConvStencil"] is None


PROFILE = """name: Mine
unit: cuda_core
fusion: temporal
summary: a user's kernel
precisions: {double: [fp64]}
reference: mine
"""


def test_a_declared_tile_is_parsed(tmp_path: Path):
    f = tmp_path / "mine.yaml"
    f.write_text(PROFILE + "tiling: {tile: {x: 256, y: 16}, stream: z, threads: 256, shared_memory: 49152}\n")
    tiling = load_profile_file(f).tiling
    assert tiling.tile == {"x": 256, "y": 16} and tiling.stream == "z" and tiling.shared_memory == 49152
    assert tiling.registers is None and tiling.launch is None


@pytest.mark.parametrize("section, needle", [
    ("tiling: {tile: {w: 8}}", "tiling.tile.w"),
    ("tiling: {tile: {x: -4}}", "tiling.tile.x"),
    ("tiling: {tile: {x: 64}, stream: x}", "tiling.stream"),
    ("tiling: {threads: 128}", "declare the tile"),
    ("tiling: {launch: planner}", "tiling.launch"),
    ("tiling: {tile: {x: 64}, warps: 4}", "tiling.warps"),
    ("tiling: 64", "'tiling'"),
])
def test_a_bad_tiling_is_a_one_line_error(tmp_path: Path, section, needle):
    f = tmp_path / "mine.yaml"
    f.write_text(PROFILE + section + "\n")
    with pytest.raises(TcAdvisorError) as info:
        load_profile_file(f)
    assert needle in str(info.value) and "\n" not in str(info.value)
