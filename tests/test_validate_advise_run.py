"""``advise --run`` without a GPU: what it runs, and how measured and predicted are printed."""
import pytest

from tcadvisor.advisor import advise
from tcadvisor.hardware import find_spec
from tcadvisor.stencil import parse_stencil
from tcadvisor.validate.advise_run import AdviceRun, choices, format_runs, runs_json, verdict_line
from tcadvisor.validate.records import Measurement

H100 = find_spec("h100")


def test_choices_are_the_recommendation_and_the_best_other_unit():
    adv = advise(parse_stencil("Box-2D1R"), "float", H100)
    picked = choices(adv)
    assert [r for r, _ in picked] == ["recommended", "alternative"]
    rec, alt = picked[0][1], picked[1][1]
    assert rec is adv.verdict and alt.unit != rec.unit
    others = [o for o in adv.best.values() if o.available and o.unit != rec.unit]
    assert alt.gstencils == max(o.gstencils for o in others)


def test_with_a_depth_both_run_at_that_depth():
    adv = advise(parse_stencil("Box-3D1R"), "double", H100, fuse=3)
    (_, rec), (_, alt) = choices(adv)
    assert rec is adv.at_fuse and rec.fuse == alt.fuse == 3 and {rec.unit, alt.unit} == {"cuda_core", "tensor_core"}


def run(role, opt, gst, status="ok", reason=""):
    m = Measurement(unit=opt.unit, fuse=opt.fuse, status=status, reason=reason, gstencils=gst, pred_gstencils=200.0,
                    impl="tcadvisor-cc" if opt.unit == "cuda_core" else "tcadvisor-tc", device="NVIDIA H100 80GB HBM3",
                    grid="512x512x512", repeats=5, correct=True if status == "ok" else None)
    return AdviceRun(role, opt, m)


def test_measured_against_predicted_output():
    adv = advise(parse_stencil("Box-3D1R"), "double", H100, fuse=3)
    (_, rec), (_, alt) = choices(adv)
    text = format_runs([run("recommended", rec, 150.0), run("alternative", alt, 100.0)])
    assert "Run on NVIDIA H100 80GB HBM3 with the bundled kernels (grid 512x512x512, median of 5" in text
    assert "150" in text and "(75%)" in text and rec.impl.name in text
    assert "the recommendation wins (150 vs 100 GStencils/s" in text
    assert ("as the advice predicts" in text) == (rec.gstencils / alt.gstencils > 1.1)
    tie = verdict_line([run("recommended", rec, 104.0), run("alternative", alt, 100.0)])
    assert "the recommendation ties" in tie
    skipped = format_runs([run("recommended", rec, None, "skipped", "fused radius 3 too large"),
                           run("alternative", alt, 100.0)])
    assert "skipped: fused radius 3 too large" in skipped and "not tested" in skipped
    js = runs_json([run("recommended", rec, 150.0)])
    assert js[0]["role"] == "recommended" and js[0]["gstencils"] == 150.0
    assert js[0]["advice_gstencils"] == pytest.approx(rec.gstencils)
