"""The validation commands as a user types them, on a machine without a GPU."""
import json

import pytest

from _validate_data import recorded_results
from tcadvisor.validate.report import write_results


@pytest.mark.parametrize("args", [
    ("calibrate",),
    ("calibrate", "--quick", "-o", "x.yaml"),
    ("validate", "--suite", "quick"),
    ("validate", "--suite", "paper", "--profile"),
    ("advise", "Box-3D1R", "--fuse", "3", "--run"),
    ("advise", "Box-2D1R", "--run", "--json"),
])
def test_without_a_gpu_one_line_and_exit_2(run_cli, args):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "CuPy" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("args, needle", [
    (("validate",), "needs --suite"),
    (("validate", "--suite", "nosuch"), "unknown suite 'nosuch'"),
    (("validate", "--suite", "quick", "--tie-band", "1.5"), "--tie-band 1.5"),
    (("validate", "--suite", "quick", "--ncu", "/x/ncu"), "add --profile"),
    (("validate", "--suite", "quick", "--suite", "quick", "--list"), "twice"),
    (("calibrate", "--repeats", "0"), "--repeats 0"),
])
def test_bad_arguments(run_cli, args, needle):
    proc = run_cli(*args)
    assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_bad_suite_file_names_file_case_and_field(run_cli, tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("cases:\n  - {id: deep, stencil: Box-2D1R, fuse: 0}\n")
    proc = run_cli("validate", "--suite", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"tcadvisor: error: suite {bad}: case 1 (deep): field 'fuse': expected an integer "
                                   "from 1 to 1024, got 0")


def test_list_needs_no_gpu(run_cli):
    proc = run_cli("validate", "--suite", "paper", "--suite", "quick", "--list")
    assert proc.returncode == 0, proc.stderr
    assert "paper (" in proc.stdout and "quick (" in proc.stdout
    assert "case5: Box-3D1R double t=3 tensor_core grid auto  [Table 3 case 5" in proc.stdout


def test_report_from_recorded_results(run_cli, tmp_path):
    write_results(recorded_results(), tmp_path / "a")
    proc = run_cli("validate", "--report-from", str(tmp_path / "a" / "results.json"), "-o", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "b" / "results.json").read_text()) == json.loads(
        (tmp_path / "a" / "results.json").read_text())
    assert (tmp_path / "b" / "report.html").stat().st_size > 1_000_000
