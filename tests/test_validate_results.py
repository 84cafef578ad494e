"""Comparison, report and README summary on CPU, from measurements recorded on the project's H100
(tests/data/validate/kernels.csv) fed through the same code a GPU run uses."""
import json
import math
import os
import types

import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import parse_stencil
from tcadvisor.validate import compare, runner, summary
from tcadvisor.validate.records import MEASUREMENT_COLUMNS, Measurement, load_results, to_dict
from tcadvisor.validate.report import html_report, write_results
from tcadvisor.validate.suites import Config

from _validate_data import SPEC, recorded, recorded_results, rows, run_result

def test_predictions_reproduce_the_bounds_recorded_with_the_measurements():
    """The model for each run (bundled profile, the kernel's own α) is the bound the benchmark recorded."""
    ms, raw = recorded()
    for m, row in zip(ms, raw):
        assert m.ok and m.correct
        assert m.pred_gstencils == pytest.approx(float(row["bound_gstencils"]), rel=1e-9), m.label
        assert m.pred_bound == row["bound"]
        assert m.err_gstencils == pytest.approx(float(row["fraction_of_bound"]) - 1, rel=1e-9)
        assert m.pred_bytes_per_point == (16 if row["dtype"] == "double" else 8)
        assert m.sweeps == int(row["steps"]) // m.fuse and m.points == math.prod(map(int, row["grid"].split("x")))
        assert m.cuda_function and (m.mma == (row["mma"] or None))


def test_bottleneck_from_utilisation():
    ms, raw = recorded()
    for m, row in zip(ms, raw):
        assert m.meas_bound_basis == "model traffic"
        if row["bound"] == "memory":
            # memory-bound: moving M = 2S bytes per point, the fraction of the bound is the fraction of B
            assert m.util_bandwidth == pytest.approx(float(row["fraction_of_bound"]), rel=1e-9)
        assert m.meas_bound == ("memory" if m.util_bandwidth >= m.util_compute else "compute")
    cc1 = next(m for m in ms if m.unit == "cuda_core" and m.fuse == 1 and m.dtype == "double")
    assert cc1.meas_bound == "memory" and cc1.util_compute < 0.1


def test_outcome_band():
    assert compare.outcome(1.1, 0.1) == "ties" and compare.outcome(1.1001, 0.1) == "wins"
    assert compare.outcome(0.9, 0.1) == "ties" and compare.outcome(0.8999, 0.1) == "loses"
    assert compare.outcome(1.0, 0.0) == "ties" and compare.outcome(None, 0.1) is None
    assert compare.rel_error(8.51, 7.875) == pytest.approx(0.0806, abs=1e-4) and compare.rel_error(1, 0) is None


def test_unit_comparisons_on_the_recorded_runs():
    comps = recorded_results().comparisons
    assert len(comps) == 9 and all((c.unit_a, c.unit_b) == ("cuda_core", "tensor_core") for c in comps)
    by = {(c.stencil, c.dtype, c.fuse): c for c in comps}
    # Box-2D1R double t = 3: both units memory-bound, the model says R = 1; measured 439.8 against 474.2 (-7%)
    c = by[("Box-2D1R", "double", 3)]
    assert c.pred_ratio == pytest.approx(1) and c.meas_ratio == pytest.approx(439.75036637072907 / 474.1674332875746)
    assert (c.pred_outcome, c.meas_outcome, c.agree) == ("ties", "ties", True)
    # Box-3D1R double t = 2: the model has Tensor Cores at 59% of CUDA cores; measured within 7%: disagree
    c = by[("Box-3D1R", "double", 2)]
    assert c.pred_ratio == pytest.approx(221.66666666666666 / 374.5125)
    assert (c.pred_outcome, c.meas_outcome, c.agree) == ("loses", "ties", False)


def test_summary_statistics():
    stats = compare.error_stats([-0.2, 0.1, None, -0.5, float("nan")])
    assert stats == {"n": 3, "median_abs": 0.2, "median": -0.2, "worst": -0.5}
    s = recorded_results().summary
    assert s["runs"] == s["correct"] == 18 and s["skipped"] == s["failed"] == 0
    assert s["outcomes_n"] == 9 and s["outcomes_agree"] == 8
    assert s["throughput"]["n"] == 18 and -0.75 < s["throughput"]["worst"] < -0.6  # Box-3D1R CC at 37% of bound
    assert s["intensity"]["n"] == 0  # not profiled


def test_json_round_trip_and_csv(tmp_path):
    res = recorded_results()
    res.measurements.append(Measurement(suite="recorded", case="x", stencil="Box-2D7R", dtype="float", fuse=1,
                                        unit="sparse_tensor_core", status="skipped", reason="no bundled kernel"))
    paths = write_results(res, tmp_path / "out")
    assert [p.name for p in paths] == ["results.csv", "comparisons.csv", "results.json", "report.html"]
    again = load_results(tmp_path / "out" / "results.json")
    assert to_dict(again) == to_dict(res)
    lines = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert lines[0].split(",") == MEASUREMENT_COLUMNS and len(lines) == 1 + len(res.measurements)
    (tmp_path / "bad.json").write_text(json.dumps({"schema": 99}))
    with pytest.raises(TcAdvisorError, match="not a tcadvisor validation result"):
        load_results(tmp_path / "bad.json")
    with pytest.raises(TcAdvisorError, match="is a file"):
        write_results(res, tmp_path / "out" / "results.csv")


def test_html_report_is_self_contained_and_rebuilds_the_tables():
    res = recorded_results()
    page = html_report(res)
    assert page.count("* plotly.js v") == 1  # Plotly embedded once
    assert "<script src=" not in page  # nothing loaded from elsewhere
    for text in ("Table 2", "Table 3", "Box-3D1R", "loses", "439.8", "561.8", "8 of 9", "NVIDIA H100 80GB HBM3"):
        assert text in page, text
    assert page.count("class='plotly-graph-div'") + page.count('class="plotly-graph-div"') >= 3


def test_report_without_plotly_keeps_the_measurements(tmp_path, monkeypatch):
    """Where plotly cannot be imported (a GPU machine's Python may lack it), the results are written all the same:
    the CSV and JSON files whole, the report's tables without figures and one line saying why and how to draw them
    (a run on the H200 lost its measurements to the import error at the report, 2026-12-01)."""
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "plotly" else real(name, *a))
    monkeypatch.setitem(sys.modules, "plotly", None)  # an import of it fails, as where it is not installed
    res = recorded_results()
    paths = write_results(res, tmp_path / "out")
    assert [p.name for p in paths] == ["results.csv", "comparisons.csv", "results.json", "report.html"]
    assert to_dict(load_results(tmp_path / "out" / "results.json")) == to_dict(res)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "plotly is not installed here" in page and "--report-from results.json" in page
    assert "plotly-graph-div" not in page and "Table 2" in page and "Table 3" in page
    monkeypatch.undo()
    assert "plotly is not installed" not in html_report(res)  # with plotly, the figures and no such line


def test_readme_summary_block(tmp_path):
    from _validate_data import h100_like
    from tcadvisor.validate.calibrate import spec_text

    d = tmp_path / "h100-sxm-2026-11-23"
    write_results(recorded_results(), d)
    (d / "calibrated.yaml").write_text(spec_text(h100_like()))
    block = summary.summary_table([d])
    assert block.startswith(summary.BEGIN) and block.endswith(summary.END)
    assert "| NVIDIA H100 80GB HBM3 | 2026-11-22 | recorded | 18 (18) | 0 | 8 of 9 |" in block
    assert "| DRAM bandwidth, TB/s | 3.021 [3.35] |" in block  # calibrated [datasheet of the H100 SXM spec]
    assert "| Tensor Cores FP64, TFLOP/s | 66.5 [67] |" in block
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{summary.BEGIN}\nold\n{summary.END}\n\nmore\n")
    assert summary.main(["--check", str(readme), str(d)]) == 1
    assert summary.main(["--update", str(readme), str(d)]) == 0
    assert summary.main(["--check", str(readme), str(d)]) == 0
    assert readme.read_text().endswith("\n\nmore\n") and block in readme.read_text()
    with pytest.raises(TcAdvisorError, match="no summary block"):
        summary.update_text("# nothing\n", block)
    assert summary.result_dirs(tmp_path) == [d]


def test_readme_agrees_with_the_committed_results():
    # The checkout's recorded runs, not the installed package's: a wheel (CI's 'pip install .[test]') ships none,
    # and summary.result_dirs() alone then finds nothing and the check was skipped.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = summary.result_dirs(os.path.join(root, "validation", "results"))
    if not dirs:
        pytest.skip("no validation results with a results.json are committed yet")
    # The block lives in docs/results.md (the recorded runs), since README became a user guide.
    page = os.path.join(root, "docs", "results.md")
    with open(page, encoding="utf-8") as f:
        assert summary.extract_block(f.read()) == summary.summary_table(dirs), \
            "docs/results.md's validation summary differs: python -m tcadvisor.validate.summary --update docs/results.md"


def test_run_config_records_refusals_and_crashes(monkeypatch):
    import tcadvisor.gpu.runner as gpu_runner

    st = parse_stencil("Box-2D1R")
    cfg = Config("c", st, "double", 3, "sparse_tensor_core", "1024x1024", 5, 2, 1)

    def refuse(*a, **k):
        raise TcAdvisorError("Sparse Tensor Cores have no FP64")

    monkeypatch.setattr(gpu_runner, "run", refuse)
    m = runner.run_config("s", cfg, SPEC, None, 0)
    assert (m.status, m.reason, m.grid) == ("skipped", "Sparse Tensor Cores have no FP64", "1024x1024")

    def crash(*a, **k):
        raise RuntimeError("compiling kernels/x.cu failed:\nlong log")

    monkeypatch.setattr(gpu_runner, "run", crash)
    m = runner.run_config("s", cfg, SPEC, None, 0)
    assert (m.status, m.reason) == ("error", "RuntimeError: compiling kernels/x.cu failed:")

    seen = {}
    row = rows()[2]  # Box-2D1R double t = 3, CUDA cores

    def old_runner(stencil, dtype="double", unit="cuda_core", fuse=1, grid="1024x1024", steps=None, weights=None,
                   seed=0, check=True, gpu=None, mma=None, repeats=1, kernel_options=None):
        seen.update(dtype=dtype, unit=unit, fuse=fuse, steps=steps, repeats=repeats, check=check)
        res = run_result(row)
        return types.SimpleNamespace(**{k: v for k, v in vars(res).items()
                                        if k not in ("kernel_name", "cuda_function", "mma", "seconds_all", "prediction")})

    monkeypatch.setattr(gpu_runner, "run", old_runner)  # no 'warmup' and none of the interface's new fields
    cfg = Config("c", st, "double", 3, "cuda_core", "10240x10240", 5, 12, 1)
    m = runner.run_config("s", cfg, SPEC, None, 50 * 2**20)
    assert seen == {"dtype": "double", "unit": "cuda_core", "fuse": 3, "steps": 36, "repeats": 5, "check": True}
    assert m.ok and m.cuda_function == "cc_stream2d" and m.pred_gstencils == pytest.approx(561.76875)
    assert m.note == ""  # 1.6 GiB working set: no L2 note
    m = runner.run_config("s", cfg, SPEC, None, 2**40)
    assert "L2" in m.note
