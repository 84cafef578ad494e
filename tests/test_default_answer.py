"""The default answer is about the kernels that run: the bundled kernels with the refined model, each unit's
bound beside them, the depths they cannot run listed per unit, the interval of each prediction, the grid and
steps assumed; the paper's model with the published implementations stays one flag away (--model base)."""
import json
import math
import re

import pytest

from tcadvisor import refinement
from tcadvisor.advisor import advise
from tcadvisor.cli import main
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import UNIT_LABELS, find_spec
from tcadvisor.gpu import plans
from tcadvisor.refinement import Interval
from tcadvisor.stencil import parse_stencil
from tcadvisor.report import advice_dict, format_advice

H100 = find_spec("h100")
BUNDLED = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc", "sparse_tensor_core": "tcadvisor-sptc"}
PUBLISHED = {"cuda_core": "EBISU", "tensor_core": "ConvStencil", "sparse_tensor_core": "SPIDER"}


def unit(adv, name):
    return next(o for o in adv.options if o.unit == name)


def test_the_default_is_the_bundled_kernels_with_the_refined_model():
    adv = advise("Box-2D1R", "float", H100, fuse=3)
    assert adv.model == "refined" and not adv.fallback
    for o in adv.options:
        assert o.available and o.impl.name == BUNDLED[o.unit] and o.model == "refined" and o.terms
    base = advise("Box-2D1R", "float", H100, fuse=3, model="base")
    assert {o.unit: o.impl.name for o in base.options} == PUBLISHED
    assert all(o.model == "base" and not o.terms for o in base.options)


def test_each_option_keeps_its_bound_the_base_model_at_its_own_alpha_beta_and_peak():
    """Computed here from eq. 8 and eqs. 11-12 with the option's own α, β and instruction peak."""
    adv = advise("Box-2D1R", "double", H100, fuse=3)
    B, K, t, S = 3.35e12, 9, 3, 8
    cc, tc = unit(adv, "cuda_core"), unit(adv, "tensor_core")
    assert math.isclose(cc.bound_gstencils, min(34e12, B * K * t / S) / (2 * K) / 1e9)
    alpha, beta, peak = float(tc.alpha), float(tc.beta), tc.peak
    i_tc = K * t * beta / (alpha * S)
    assert math.isclose(tc.bound_gstencils, alpha / beta * min(peak, B * i_tc) / (2 * K) / 1e9)
    assert tc.gstencils < tc.bound_gstencils and cc.gstencils < cc.bound_gstencils  # a kernel is below its roof
    d = advice_dict(adv)
    assert d["options"][0]["bound_gstencils"] == pytest.approx(cc.bound_gstencils)
    text = format_advice(adv)
    header = next(line for line in text.splitlines() if line.startswith("unit "))
    assert "roofline" in header and "'roofline' is the paper's model at that row's own α, β" in text
    base = advise("Box-2D1R", "double", H100, fuse=3, model="base")
    assert all(o.bound_gstencils == o.gstencils for o in base.options if o.available)
    assert "roofline" not in format_advice(base)  # the base answer is what it always was


def test_star3d1r_float_never_recommends_a_depth_the_kernel_cannot_run():
    """The paper's model puts CUDA cores at t = 12, where every tile of the bundled kernel spills registers (its
    planner refuses such depths: kernels/compiled-resources.csv).  At t = 8 and 9 the first tile that fits the
    registers needs more shared memory than any GPU gives a block (340 KiB): the planner skips it for the next
    candidates, which the compiler reports without spills (64 x 32 and 64 x 24 points, 204 and 175 KiB)."""
    assert advise("Star-3D1R", "float", H100, model="base").verdict.fuse == 12
    adv = advise("Star-3D1R", "float", H100)
    cc = adv.unit_skipped["cuda_core"]
    assert "would spill to local memory" in cc[12]
    assert set(cc) == set(range(12, 17))
    for t, tile in ((8, {"x": 64, "y": 32}), (9, {"x": 64, "y": 24})):
        plan = plans.plan_cuda_cores(parse_stencil("Star-3D1R"), t, "fp32")
        assert plan.tile == tile and plan.smem <= plans.BLOCK_SMEM_LIMIT and adv.by_depth["cuda_core"][t].available
    assert adv.best["cuda_core"].fuse not in cc and adv.verdict.fuse not in adv.unit_skipped[adv.verdict.unit]
    for u, depths in adv.unit_skipped.items():
        for t in depths:
            assert not adv.by_depth[u][t].available and adv.by_depth[u][t].kernel_refused
    text = format_advice(adv)
    assert "Not searched, the bundled kernel cannot run them: CUDA cores t = 12..16" in text
    assert "t = 12..16 (at t = 12: Star-3D1R fused x12: every tile of the 3D CUDA-core kernel" in text
    assert "the depths each bundled kernel runs" in adv.verdict_text
    d = advice_dict(adv)
    assert "spill" in d["skipped_fuse_per_unit"]["cuda_core"]["12"] and d["grid"] == "512x512x512"
    with_fuse = advise("Star-3D1R", "float", H100, fuse=12)
    assert not unit(with_fuse, "cuda_core").available and "spill" in unit(with_fuse, "cuda_core").reason
    assert with_fuse.at_fuse is None and "At t = 12, no unit runs this configuration" in with_fuse.verdict_text


def test_half_runs_on_cuda_cores_with_packed_fmas_and_is_predicted_so():
    """The CUDA-core kernel runs FP16 (two tiles per block, fma.rn.f16x2): the advisor predicts it from its plan at the
    packed rate instead of saying no kernel runs it."""
    adv = advise("Box-2D1R", "half", H100, fuse=4)
    cc = unit(adv, "cuda_core")
    assert cc.available and cc.precision == "fp16" and cc.impl.name == "tcadvisor-cc" and cc.model == "refined"
    fp32 = unit(advise("Box-2D1R", "float", H100, fuse=4), "cuda_core")
    assert cc.gstencils > 1.2 * fp32.gstencils  # half the bytes, twice the FMA rate
    assert not any("--model base" in n and "CUDA cores" in n for n in adv.notes)


@pytest.mark.parametrize("gpu_key, dtype, units, needle", [
    ("mi300x", "double", ("cuda_core", "tensor_core"), "is an AMD GPU and the bundled kernels are CUDA"),
    ("b200", "float", ("cuda_core", "tensor_core", "sparse_tensor_core"), "has no multiprocessors section"),
    ("v100", "half", ("tensor_core",), "executes none of tcadvisor-tc's FP16 instructions"),
])
def test_a_gpu_that_cannot_run_the_kernels_keeps_the_published_implementations(gpu_key, dtype, units, needle):
    gpu = find_spec(gpu_key)
    adv = advise("Box-2D1R", dtype, gpu, fuse=2)
    base = advise("Box-2D1R", dtype, gpu, fuse=2, model="base")
    for u in units:
        o, b = unit(adv, u), unit(base, u)
        assert needle in adv.fallback[u] and o.model == "base" and o.impl is b.impl
        assert o.gstencils == b.gstencils or not (o.available or b.available)
    text = format_advice(adv)
    said = [line for line in text.splitlines() if needle in line]
    assert len(said) == 1 and all(label in said[0] for label in map(UNIT_LABELS.get, units))  # one line says why
    assert advice_dict(adv)["fallback"] == adv.fallback


def test_v100_half_cuda_cores_have_no_rate_in_the_spec_and_tensor_cores_fall_back():
    """The V100 spec gives no FP16 CUDA-core rate, so no row is predicted there (the kernel's fma.rn.f16x2 would
    run from compute capability 5.3); the Tensor Core kernel's mma.sync needs 8.0."""
    adv = advise("Box-2D1R", "half", find_spec("v100"), fuse=2)
    cc = unit(adv, "cuda_core")
    assert not cc.available and "has no FP16 on its cuda cores" in cc.reason
    assert unit(adv, "tensor_core").impl.name == "TCStencil" and adv.verdict.unit == "tensor_core"


def test_alpha_paper_means_the_papers_model_and_says_so():
    adv = advise("Box-3D1R", "double", "a100", fuse=3, alpha="paper")
    assert adv.model == "base" and {o.unit: o.impl.name for o in adv.options}["tensor_core"] == "ConvStencil"
    assert any("--alpha paper" in n and "--model base" in n for n in adv.notes)
    assert "Note: --alpha paper" in format_advice(adv)
    forced = advise("Box-3D1R", "double", "a100", fuse=3, alpha="paper", model="refined")
    assert forced.model == "refined" and not unit(forced, "tensor_core").available  # the kernel has no paper α


def test_refined_scenario_words_follow_r_itself():
    """Under the refined model the paper's 'R ≤ 1 in scenario 2' does not hold; the text follows R.  (Box-3D1R FP32
    x2 was the example until the model's 3D Tensor Core kernels counted only the rows they bring from DRAM as bytes in
    flight, which left them memory-bound there: scenario 1.)"""
    adv = advise("Box-3D1R", "half", H100, fuse=2)
    tc = unit(adv, "tensor_core")
    assert tc.scenario == 2 and tc.speedup > 1
    assert f"R = P_TC/P_CC = {tc.speedup:.3g}: Tensor Cores win" in tc.decision and "≤ 1" not in tc.decision


# --------------------------------------------------------------------------- intervals and close calls


def _intervals(monkeypatch, low, high, level=0.8):
    monkeypatch.setattr(refinement, "prediction_interval",
                        lambda unit, precision: Interval(low, high, level, 40, "test residuals"))


def test_no_interval_recorded_shows_none(monkeypatch):
    monkeypatch.setattr(refinement, "prediction_interval", lambda unit, precision: None)
    adv = advise("Star-3D1R", "float", H100)
    assert all(o.interval is None for o in adv.options)
    assert "–" not in format_advice(adv).split("\n")[4] and "Too close" not in adv.verdict_text
    assert all("interval" not in o for o in advice_dict(adv)["options"])
    assert advice_dict(adv)["verdict"]["too_close"] is False


def test_interval_shown_with_each_refined_prediction(monkeypatch):
    _intervals(monkeypatch, 0.9, 1.1)
    adv = advise("Star-2D3R", "float", H100)
    sp = unit(adv, "sparse_tensor_core")
    assert sp.interval_range() == pytest.approx((0.9 * sp.gstencils, 1.1 * sp.gstencils))
    row = next(line for line in format_advice(adv).splitlines() if line.startswith("Sparse Tensor Cores "))
    shown, low, high = re.search(r"(\d+(?:\.\d+)?) \((\d+)–(\d+)\)", row).groups()
    assert float(shown) == pytest.approx(sp.gstencils, rel=1e-3)  # 4 significant digits, "527.0" kept as printed
    assert float(low) == pytest.approx(0.9 * sp.gstencils, rel=0.01)
    assert float(high) == pytest.approx(1.1 * sp.gstencils, rel=0.01)
    js = next(o for o in advice_dict(adv)["options"] if o["unit"] == "sparse_tensor_core")["interval"]
    assert js["low"] == pytest.approx(0.9 * sp.gstencils) and js["high"] == pytest.approx(1.1 * sp.gstencils)
    assert js["level"] == 0.8
    # with ±10 % the winner and the runner-up are apart (2026-11-27: CUDA cores 745, Tensor Cores 354)
    assert "Too close" not in adv.verdict_text and advice_dict(adv)["verdict"]["too_close"] is False
    base = advise("Star-2D3R", "float", H100, model="base")
    assert all(o.interval is None for o in base.options)  # the base model is a bound, not a prediction


def test_overlapping_intervals_make_the_verdict_too_close_to_call(monkeypatch, capsys):
    _intervals(monkeypatch, 0.6, 1.4)
    rc = main(["advise", "Star-3D1R", "--dtype", "float", "--gpu", "h100"])
    out = capsys.readouterr().out
    assert rc == 0
    verdict = out.split("Verdict: ", 1)[1]
    win = advise("Star-3D1R", "float", H100).verdict  # whichever unit the model names, its call is too close
    assert f"Too close for the model to call: {win.label} (t = {win.fuse}" in verdict
    assert "overlap at the 80% level" in verdict
    assert "'tcadvisor advise Star-3D1R --dtype float --gpu h100 --run' measures both on this GPU" in verdict
    rc = main(["advise", "Star-3D1R", "--dtype", "float", "--gpu", "h100", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"]["too_close"] is True
    assert d["verdict"]["settle"] == "tcadvisor advise Star-3D1R --dtype float --gpu h100 --json --run".replace(
        " --json", "")


def test_intervals_of_one_side_only_do_not_make_a_close_call(monkeypatch):
    monkeypatch.setattr(refinement, "prediction_interval", lambda unit, precision: (
        Interval(0.1, 10, 0.8, 40, "wide") if unit == "sparse_tensor_core" else None))
    adv = advise("Star-3D1R", "float", H100)
    assert unit(adv, "sparse_tensor_core").interval is not None and unit(adv, "cuda_core").interval is None
    assert "Too close" not in adv.verdict_text


# --------------------------------------------------------------------------- grid and steps


def test_grid_reaches_the_refined_terms_and_is_stated():
    big = advise("Box-2D1R", "double", H100, fuse=4)
    small = advise("Box-2D1R", "double", H100, fuse=4, grid="1024x1024")
    assert big.grid == (10240, 10240) and not big.grid_given and small.grid == (1024, 1024) and small.grid_given
    cc_big, cc_small = unit(big, "cuda_core"), unit(small, "cuda_core")
    assert cc_small.term_inputs != cc_big.term_inputs and cc_small.gstencils < cc_big.gstencils  # halos weigh more
    assert cc_small.bound_gstencils == cc_big.bound_gstencils  # the base model has no grid
    assert "Assumed: grid 10240x10240 (the bundled kernels' default" in format_advice(big)
    assert "Assumed: grid 1024x1024;" in format_advice(small)
    assert advice_dict(small)["grid"] == "1024x1024" and advice_dict(big)["grid_default"] is True


def test_steps_plan_sweeps_with_a_remainder_and_bound_the_depth():
    adv = advise("Box-2D1R", "double", H100, steps=10)
    assert adv.searched == list(range(1, 11)) and set(adv.skipped) == set(range(11, 17))
    assert "a run of 10 steps cannot fuse 11" in adv.skipped[11]
    cc4, cc2 = adv.by_depth["cuda_core"][4], adv.by_depth["cuda_core"][2]
    assert cc4.sweeps == (4, 4, 2)
    # 10 steps: two sweeps of 4 and one of 2, each taking t/G(t) per point
    assert cc4.gstencils == pytest.approx(10 / (8 / cc4.steady_gstencils + 2 / cc2.steady_gstencils))
    assert cc4.bound_gstencils == pytest.approx(10 / (8 / cc4.roof + 2 / cc2.roof))
    assert adv.by_depth["cuda_core"][5].sweeps == (5, 5)
    assert adv.by_depth["cuda_core"][5].gstencils == adv.by_depth["cuda_core"][5].steady_gstencils
    assert "10 time steps: sweeps of t steps and a shallower sweep for the remainder" in format_advice(adv)
    assert advice_dict(adv)["steps"] == 10
    with pytest.raises(TcAdvisorError, match="--fuse 12 is deeper than --steps 10"):
        advise("Box-2D1R", "double", H100, fuse=12, steps=10)


@pytest.mark.parametrize("args, needle", [
    (["--grid", "10x"], "grid '10x' is not of the form"),
    (["--grid", "64x64x64"], "has 3 extents but the stencil is 2D"),
    (["--steps", "0"], "--steps 0"),
    (["--steps", "many"], "--steps"),
    (["--fuse", "8", "--steps", "4"], "--fuse 8 is deeper than --steps 4"),
])
def test_bad_grid_or_steps_is_one_line(run_cli, args, needle):
    r = run_cli("advise", "Box-2D1R", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0]


def test_cli_default_answer(run_cli):
    r = run_cli("advise", "Box-2D1R", "--fuse", "4", "--dtype", "half", "--gpu", "h100", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["model"] == "refined" and d["grid"] == "10240x10240" and d["steps"] is None
    cc = d["options"][0]
    assert cc["available"] is True and cc["unit"] == "cuda_core" and cc["precision"] == "fp16"
    assert all(o["impl"] in BUNDLED.values() for o in d["options"])
    assert d["verdict"]["model"] == "refined"


def test_base_recommendations_no_kernel_runs_say_so_next_to_them():
    star = advise("Star-3D1R", "float", H100, model="base")
    assert ("t = 12, 4786 GStencils/s (compute-bound). No bundled kernel runs this here (tcadvisor-cc: Star-3D1R "
            "fused x12: every tile of the 3D CUDA-core kernel needs more registers") in star.verdict_text
    deep = advise("Star-3D1R", "float", H100, fuse=12, model="base")
    first = deep.verdict_text.split(". ", 2)
    assert first[0].startswith("At t = 12, use CUDA cores") and first[1].startswith(
        "No bundled kernel runs this here (tcadvisor-cc: Star-3D1R fused x12")
    runs = advise("Box-3D1R", "double", "a100", fuse=3, model="base")
    assert "No bundled kernel" not in runs.verdict_text  # tcadvisor-cc runs t = 2 and 3 there
    amd = advise("Box-2D1R", "double", "mi300x", fuse=2)
    assert "No bundled kernel" not in amd.verdict_text  # the fallback line says why instead
