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


# --------------------------------------------------------------------------- what runs when the advice's cannot


def _measure(outcomes):
    """A stand-in for the GPU: ``outcomes[(unit, fuse)]`` is (status, GStencils/s), else ok at 100."""
    calls = []

    def measure(role, opt, grid):
        status, gst = outcomes.get((opt.unit, opt.fuse), ("ok", 100.0))
        calls.append((role, opt.unit, opt.fuse))
        return Measurement(unit=opt.unit, fuse=opt.fuse, status=status, gstencils=gst if status == "ok" else None,
                           reason="" if status == "ok" else "refused by the device", pred_gstencils=None,
                           impl="tcadvisor", device="test GPU", grid="512x512x512", repeats=5,
                           correct=True if status == "ok" else None)
    return measure, calls


def _base_star3d():
    """The paper's model recommends EBISU at t = 12, which needs 306 KiB of shared memory in the bundled kernel."""
    adv = advise("Star-3D1R", "float", H100, model="base")
    assert adv.verdict.unit == "cuda_core" and adv.verdict.fuse == 12
    return adv


def test_a_configuration_the_kernel_cannot_run_is_replaced_by_the_nearest_that_runs():
    from tcadvisor.validate.advise_run import picks, run_advice

    adv = _base_star3d()
    rec = picks(adv)[0]
    # t = 12 spills in every tile (kernels/compiled-resources.csv); t = 8 to 11 run (8 and 9 in tiles under 227 KiB)
    assert rec.asked is adv.verdict and rec.tries[0][0].fuse == 11
    assert "spill" in rec.tries[0][1] and "the deepest depth below it that runs" in rec.tries[0][1]
    measure, calls = _measure({("cuda_core", 11): ("ok", 400.0)})
    runs = run_advice(adv, measure=measure)
    assert [(r.role, r.option.fuse, r.substituted) for r in runs][0] == ("recommended", 11, True)
    assert runs[0].option is adv.by_depth["cuda_core"][11]  # predicted at the depth that ran
    text = format_runs(runs)
    assert "recommended: t = 12 cannot run" in text and "ran t = 11" in text
    assert "CUDA cores (t = 11, run for the advice's t = 12)" in text
    assert "the configuration run for the recommendation wins (400 vs 100 GStencils/s" in text


def test_closing_sentence_when_both_ran():
    from tcadvisor.validate.advise_run import run_advice

    adv = advise("Box-3D1R", "double", H100, fuse=3)
    measure, calls = _measure({})
    runs = run_advice(adv, measure=measure)
    assert len(runs) == 2 and all(r.measurement.ok and not r.substituted for r in runs)
    assert verdict_line(runs).startswith("Measured: CUDA cores (t = 3) against Tensor Cores (t = 3): "
                                         "the recommendation ties (100 vs 100")


def test_closing_sentence_when_one_ran_and_a_refusal_tries_the_next_depth():
    from tcadvisor.validate.advise_run import run_advice

    adv = _base_star3d()
    alt = adv.runner_up(list(adv.best.values()), adv.verdict)
    refuse_alt = {(alt.unit, t): ("skipped", None) for t in range(1, 17)}
    refuse_alt[("cuda_core", 11)] = ("skipped", None)  # the device refuses t = 11 too: t = 10 is tried
    measure, calls = _measure(refuse_alt)
    runs = run_advice(adv, measure=measure)
    assert [c[2] for c in calls if c[0] == "recommended"][:2] == [11, 10]
    assert runs[0].measurement.ok and runs[0].option.fuse == 10 and not runs[1].measurement.ok
    line = verdict_line(runs)
    assert line.startswith("Only the recommended configuration, CUDA cores (t = 10, run for the advice's t = 12), "
                           "ran (alternative: skipped (refused by the device))")
    assert line.endswith("so the advice's ranking is not tested.")


def test_closing_sentence_when_none_ran():
    from tcadvisor.validate.advise_run import run_advice

    adv = advise("Box-2D1R", "float", H100, fuse=3)
    measure, _ = _measure({(u, 3): ("skipped", None) for u in ("cuda_core", "tensor_core", "sparse_tensor_core")}
                          | {(u, t): ("skipped", None) for u in ("cuda_core", "tensor_core", "sparse_tensor_core")
                             for t in range(1, 17)})
    runs = run_advice(adv, measure=measure)
    line = verdict_line(runs)
    assert line.startswith("Nothing ran here (recommended: skipped") and line.endswith("so the advice is not tested.")
    assert "Only" not in format_runs(runs) and "Measured" not in format_runs(runs)
