"""Calibration and validation on a real GPU (skipped without one): ``pytest -m gpu tests/test_validate_gpu.py``."""
import math

import pytest
import yaml

from tcadvisor.hardware import parse_spec, spec_for_device_name

pytestmark = pytest.mark.gpu


def test_quick_calibration_gives_a_spec_within_the_datasheet(tmp_path):
    from tcadvisor.validate.calibrate import Settings, build_spec, calibrate, spec_text

    cal = calibrate(Settings.make(quick=True))
    spec = parse_spec(yaml.safe_load(spec_text(cal)), tmp_path / "calibrated.yaml")
    raw = build_spec(cal)
    for unit, per in raw["peak"].items():
        for precision, entry in per.items():
            assert math.isfinite(entry["value"]) and entry["value"] > 0
            if "instructions" in entry:
                assert entry["value"] == max(i["value"] for i in entry["instructions"].values())
    sheet = spec_for_device_name(cal.device)
    if sheet is not None:  # a measured ceiling above the datasheet would mean miscounted bytes or FLOPs
        assert spec.bandwidth.value <= 1.05 * sheet.bandwidth.value
        for unit, per in spec.peaks.items():
            for precision, rate in per.items():
                if sheet.has(unit, precision):
                    assert rate.value <= 1.05 * sheet.peak(unit, precision), (unit, precision)
    if tuple(cal.cc) == (9, 0):  # Hopper: wgmma at the stencil kernels' N = 8, below the datasheet too
        assert cal.wgmma, cal.notes
        for unit, per in spec.warpgroup_rates.items():
            for precision, shapes in per.items():
                for shape, rate in shapes.items():
                    assert shape.m == 64 and shape.n == 8 and math.isfinite(rate.value) and rate.value > 0
                    if sheet is not None and sheet.has(unit, precision):
                        assert rate.value <= 1.05 * sheet.peak(unit, precision), (unit, precision)


def test_quick_suite_runs_correctly(tmp_path):
    from tcadvisor.validate.report import write_results
    from tcadvisor.validate.runner import run_suites
    from tcadvisor.validate.suites import load_suite

    res = run_suites([load_suite("quick")])
    assert res.summary["runs"] >= 4
    bad = [(m.label, m.status, m.reason) for m in res.measurements if m.status in ("failed", "error")]
    assert not bad, bad
    for m in res.measurements:
        if m.ok:
            assert m.correct and m.gstencils > 0 and m.pred_gstencils > 0 and len(m.seconds_all) in (0, 5)
    write_results(res, tmp_path)
    from tcadvisor.validate.report import plotly_available

    page = (tmp_path / "report.html").read_text()
    if plotly_available():
        assert len(page) > 1_000_000  # plotly.js embedded with the figures
    else:  # the GPU machine's Python may lack plotly: the tables, the files and the line saying why (2026-12-01)
        assert "plotly is not installed here" in page and "Table 3" in page
        assert (tmp_path / "results.json").stat().st_size > 0
