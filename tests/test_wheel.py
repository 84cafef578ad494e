"""The wheel: small, holding every data file the package reads, no recorded run, and working on its own.

pyproject.toml force-includes the data directories into ``tcadvisor/_data/`` but only the ones read
at run time (GPU specs, implementation profiles and the refined model's fitted constants, the CUDA
sources, the validation suites); the ~17 MB of recorded runs under ``validation/results/`` stay in the
repository and the sdist.  These tests build the wheel (hatchling, without build isolation, so
offline and in a few seconds), read its file list, then run ``tcadvisor`` from the unpacked wheel with
the working directory outside the repository, so that nothing can be found beside the checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The unpacked wheel must stay below this (it was 18.7 MB with the recorded runs, 1.4 MB without).
MAX_UNPACKED_BYTES = 5 << 20
DATA = "tcadvisor/_data/"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        import hatchling  # noqa: F401 - the build backend, in the test extra
    except ImportError:
        pytest.fail("hatchling is not installed: pip install '.[test]' (the test extra lists it)")
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (found,) = out.glob("tcadvisor-*.whl")
    return found


@pytest.fixture(scope="module")
def names(wheel) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(where)
    return where


def _expected_data() -> set[str]:
    """The data files the package reads, as the repository holds them today (a new spec or suite is covered)."""
    want = set()
    for directory, patterns in (("hwspecs", ("*.yaml",)), ("models", ("*.yaml", "fitted/*.yaml")),
                                ("kernels", ("*.cu", "*.cuh", "*.csv", "*.yaml")), ("validation/suites", ("*.yaml",))):
        for pattern in patterns:
            want |= {DATA + p.relative_to(ROOT).as_posix() for p in (ROOT / directory).glob(pattern)}
    return want


def test_wheel_is_small(wheel):
    with zipfile.ZipFile(wheel) as z:
        total = sum(info.file_size for info in z.infolist())
    assert total < MAX_UNPACKED_BYTES, f"the unpacked wheel is {total / 1e6:.1f} MB"


def test_wheel_holds_what_the_package_reads(names):
    want = _expected_data()
    # the fitted constants and the suites are what a careless include would lose first
    assert DATA + "models/fitted/refined-terms.yaml" in want
    assert {DATA + f"validation/suites/{s}.yaml" for s in ("quick", "paper")} <= want
    missing = sorted(want - set(names))
    assert not missing, f"the wheel lacks {missing}"
    assert "tcadvisor/cli.py" in names and "tcadvisor/validate/profile_driver.py" in names


def test_wheel_holds_no_recorded_run(names):
    validation = [n for n in names if n.startswith(DATA + "validation/")]
    assert validation, "no suites in the wheel"
    stray = [n for n in validation if not n.startswith(DATA + "validation/suites/")]
    assert not stray, f"recorded runs in the wheel: {stray[:5]} ({len(stray)} files)"


def _run_unpacked(unpacked: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``python ARGS`` importing tcadvisor from the unpacked wheel only, in an empty directory outside the repo."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCADVISOR_") and k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(unpacked), TCADVISOR_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="200")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_advise_from_the_unpacked_wheel(unpacked, tmp_path):
    proc = _run_unpacked(unpacked, tmp_path, "-c",
                         "import sys, tcadvisor, tcadvisor.data as d; from tcadvisor.cli import main; "
                         "print(tcadvisor.__file__); print(d.data_dir('models')); "
                         "sys.exit(main(['advise', 'Box-2D1R', '--gpu', 'h100']))")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(str(unpacked)), lines[0]  # not the checkout's package
    assert lines[1] == str(unpacked / "tcadvisor" / "_data" / "models")
    assert "Verdict:" in proc.stdout
    # the refined model's constants and held-out intervals come from models/fitted/refined-terms.yaml
    assert "bundled constants fitted on H100 and H200" in proc.stdout
    assert "held-out measurements" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_suites_and_kernels_from_the_unpacked_wheel(unpacked, tmp_path):
    proc = _run_unpacked(unpacked, tmp_path, "-m", "tcadvisor", "validate", "--list", "--suite", "quick")
    assert proc.returncode == 0, proc.stderr
    assert str(unpacked / "tcadvisor" / "_data" / "validation" / "suites" / "quick.yaml") in proc.stdout
    # the kernel fingerprint hashes kernels/, the kernel profiles and the GPU modules: the wheel's is the checkout's
    proc = _run_unpacked(unpacked, tmp_path, "-c",
                         "from tcadvisor.fingerprint import kernel_fingerprint; print(kernel_fingerprint())")
    assert proc.returncode == 0, proc.stderr
    from tcadvisor.fingerprint import kernel_fingerprint

    assert proc.stdout.strip() == kernel_fingerprint()
    # the planner reads the measured defaults from the wheel's kernels/defaults.yaml, whose sources (recorded runs)
    # the wheel does not ship: they are checked in a checkout only
    proc = _run_unpacked(unpacked, tmp_path, "-c",
                         "from tcadvisor.gpu import defaults, plans; from tcadvisor.data import data_dir; "
                         "print(defaults.checkout_root(data_dir('kernels'))); print(plans.TC_DEFAULTS[2, 'fp64', 2])")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["None", "('m16n8k4', {'l2_prefetch': 2})"], proc.stdout


def test_the_summary_tool_says_the_wheel_has_no_results(unpacked, tmp_path):
    proc = _run_unpacked(unpacked, tmp_path, "-m", "tcadvisor.validate.summary")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not the wheel" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_the_sdist_keeps_the_recorded_runs(tmp_path):
    """The recorded runs left out of the wheel are in the sdist (tests/test_refined.py reads them from there)."""
    import tarfile

    proc = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (sdist,) = tmp_path.glob("tcadvisor-*.tar.gz")
    with tarfile.open(sdist) as tar:
        inside = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    recorded = {p.relative_to(ROOT).as_posix() for p in (ROOT / "validation" / "results").glob("*/results.json")}
    assert recorded and recorded <= inside
    assert "validation/results/refined-fit-2026-11-25/crossval.json" in inside
