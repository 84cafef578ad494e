"""The bundled kernels' fingerprint: what it covers, that it is stable, and that the fitted constants match it.

The first tests work on a copy of the covered files (``fingerprint._roots`` pointed at it), never on the
real ones.  ``test_fitted_constants_match_kernels`` and ``test_corpus_files_match_the_fitted_constants`` check
the repository's own records: they fail, with the command to run, whenever the kernels changed after the
refined model's constants were fitted.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcadvisor import fingerprint
from tcadvisor.data import data_dir

from tcadvisor.errors import TcAdvisorError

ROOT = Path(__file__).resolve().parent.parent
FITTED = "models/fitted/refined-terms.yaml"
#: corpus.json files are a few megabytes; a far larger one is not a corpus header.
MAX_CORPUS_BYTES = 64 << 20


@pytest.fixture
def real_fp():
    """The fingerprint of the files as they are (before ``copy`` points the module elsewhere)."""
    return fingerprint.kernel_fingerprint()


@pytest.fixture
def copy(tmp_path, monkeypatch, real_fp):
    """A copy of every covered file (and of the models/ files it does not cover), fingerprinted instead."""
    roots = fingerprint._roots()
    pkg, kernels, models = tmp_path / "tcadvisor", tmp_path / "kernels", tmp_path / "models"
    shutil.copytree(roots["kernels"], kernels)
    shutil.copytree(roots["models"], models)
    for module in fingerprint.MODULES:
        (pkg / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(roots["tcadvisor"] / module, pkg / module)
    monkeypatch.setattr(fingerprint, "_roots", lambda: {"tcadvisor": pkg, "kernels": kernels, "models": models})
    return tmp_path


def _changed(logical: str, text: str) -> str:
    """``text`` with a change of what runs: a line of code, or (a profile) one more instruction shape."""
    if logical.startswith("models/"):
        return text + "\nmma: {fp64: [m8n8k4]}\n" if "\nmma:" not in text else text.replace("\nmma:", "\nmma:\n  fp8: [m16n8k32]", 1)
    return text + {".py": "_FINGERPRINT_TEST = 1\n", ".cu": "#define FINGERPRINT_TEST 1\n",
                   ".cuh": "#define FINGERPRINT_TEST 1\n", ".csv": "cuda_cores_3d.cu,K_T=99,1,0\n",
                   ".yaml": "fingerprint_test: {source: validation/results, value: 1}\n"}[Path(logical).suffix]


def test_covers_the_kernels_their_plans_operands_and_profiles():
    files = fingerprint.covered_files()
    for name in ("cuda_cores_1d.cu", "cuda_cores_2d.cu", "cuda_cores_3d.cu", "tensor_cores.cu",
                 "sparse_tensor_cores.cu", "l2_prefetch.cuh", "fields.cu", "hold.cu", "calibrate.cu",
                 "compiled-resources.csv", "defaults.yaml"):
        assert f"kernels/{name}" in files
    # every CUDA source the package compiles is covered, and the compiler reports the planner reads
    compiled = {p.name for p in data_dir("kernels").iterdir() if p.suffix in (".cu", ".cuh", ".csv", ".yaml")}
    assert {p.split("/", 1)[1] for p in files if p.startswith("kernels/")} == compiled - set(fingerprint.NOT_COVERED)
    # ... but the wgmma benchmark, which only calibration compiles: no module that builds or launches a stencil
    # kernel names it, and no fitted term reads the spec section it fills
    for name in fingerprint.NOT_COVERED:
        assert name in compiled
        users = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tcadvisor").rglob("*.py") if name in p.read_text()}
        assert "tcadvisor/validate/calibrate.py" in users
        assert all(u.startswith("tcadvisor/validate/") or u == "tcadvisor/fingerprint.py" for u in users), users
    for logical in files:
        if logical.startswith("tcadvisor/"):
            assert "warpgroup_rates" not in files[logical].read_text(), logical
    assert "warpgroup_rates" not in (ROOT / "tcadvisor" / "refinement.py").read_text()
    assert {"models/tcadvisor-cc.yaml", "models/tcadvisor-tc.yaml", "models/tcadvisor-sptc.yaml"} <= set(files)
    assert "models/spider.yaml" not in files  # a profile without a kernel decides nothing that runs
    assert {"tcadvisor/gpu/plans.py", "tcadvisor/gpu/defaults.py"} <= set(files)
    assert "tcadvisor/gpu/runner.py" not in files
    for module in fingerprint.MODULES:  # the list is not stale
        assert files[f"tcadvisor/{module}"].is_file()


def test_fingerprint_is_short_and_stable():
    fp = fingerprint.kernel_fingerprint()
    assert len(fp) == fingerprint.LENGTH and int(fp, 16) >= 0 and fp == fingerprint.kernel_fingerprint()
    assert fingerprint.combine(fingerprint.fingerprint_parts()) == fp


def test_the_copy_has_the_same_fingerprint(real_fp, copy):
    assert fingerprint.covered_files()["kernels/tensor_cores.cu"].is_relative_to(copy)
    assert fingerprint.kernel_fingerprint() == real_fp


def test_a_code_change_in_any_covered_file_changes_it_and_is_named(copy):
    before = fingerprint.fingerprint_parts()
    fp = fingerprint.combine(before)
    for logical, path in fingerprint.covered_files().items():
        original = path.read_bytes()
        path.write_text(_changed(logical, original.decode()))
        try:
            assert fingerprint.kernel_fingerprint() != fp, logical
            assert fingerprint.changed_files(before) == [logical]
            message = fingerprint.check_fitted(fp, "the refined model's constants were fitted", before)
            assert f"(changed: {logical})" in message and "refit with python benchmarks/fit_refined.py" in message
        finally:
            path.write_bytes(original)
    assert fingerprint.kernel_fingerprint() == fp


def test_a_one_character_change_of_a_measured_default_changes_it(copy):
    fp = fingerprint.kernel_fingerprint()
    measured = copy / "kernels" / "defaults.yaml"
    text = measured.read_text()
    assert text.count("4: {mma: m16n8k16, l2_prefetch: 3}") == 1
    measured.write_text(text.replace("4: {mma: m16n8k16, l2_prefetch: 3}", "4: {mma: m16n8k16, l2_prefetch: 4}"))
    assert fingerprint.kernel_fingerprint() != fp
    measured.write_text("# a comment on the provenance\n" + text)  # a comment is not a default
    assert fingerprint.kernel_fingerprint() == fp


def test_line_endings_comments_and_trailing_blanks_do_not_change_it(copy):
    fp = fingerprint.kernel_fingerprint()
    files = fingerprint.covered_files()
    for path in files.values():
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    assert fingerprint.kernel_fingerprint() == fp
    for path in files.values():
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\r"))
    assert fingerprint.kernel_fingerprint() == fp
    cu, py, prof = (files["kernels/tensor_cores.cu"], files["tcadvisor/gpu/plans.py"],
                    files["models/tcadvisor-tc.yaml"])
    cu.write_text("// a re-worded comment\n" + cu.read_text() + "\n   \n")
    py.write_text(py.read_text().replace("\r", "\n") + "\n    # a new comment line   \n")
    prof.write_text("# a comment\n" + prof.read_text())
    assert fingerprint.kernel_fingerprint() == fp
    # a preprocessor line in CUDA is code, not a comment
    cu.write_text("#define K_FINGERPRINT 1\n" + cu.read_text())
    assert fingerprint.kernel_fingerprint() != fp


def test_new_and_removed_kernel_sources_and_uncovered_files(copy):
    before = fingerprint.fingerprint_parts()
    fp = fingerprint.combine(before)
    (copy / "kernels" / "notes.txt").write_text("not compiled\n")
    tc = copy / "models" / "tcadvisor-tc.yaml"  # what does not decide what runs: the description, the stencils
    tc.write_text(tc.read_text().replace("summary: >", "summary: >\n  Re-worded.").replace("tiling:", "dims: [2]\ntiling:"))
    (copy / "models" / "spider.yaml").write_text((copy / "models" / "spider.yaml").read_text() + "x: 1\n")
    assert fingerprint.kernel_fingerprint() == fp
    (copy / "kernels" / "extra.cu").write_text("__global__ void k() {}\n")
    assert fingerprint.changed_files(before) == ["kernels/extra.cu (new)"]
    (copy / "kernels" / "extra.cu").unlink()
    (copy / "kernels" / "hold.cu").unlink()
    assert fingerprint.changed_files(before) == ["kernels/hold.cu (removed)"]
    assert fingerprint.kernel_fingerprint() != fp


def test_missing_module_and_oversized_file_are_one_line_errors(copy):
    plans = copy / "tcadvisor" / "gpu" / "plans.py"
    plans.write_bytes(b"x = 1\n" * (fingerprint.MAX_FILE_BYTES // 6 + 1))
    with pytest.raises(TcAdvisorError, match=r"tcadvisor/gpu/plans.py .* too large") as exc:
        fingerprint.kernel_fingerprint()
    assert "\n" not in str(exc.value)
    plans.unlink()
    with pytest.raises(TcAdvisorError, match="tcadvisor/gpu/plans.py is missing"):
        fingerprint.kernel_fingerprint()


def test_check_fitted_messages():
    fp = fingerprint.kernel_fingerprint()
    what = "the refined model's constants were fitted"
    assert fingerprint.check_fitted(fp, what) is None
    assert fingerprint.check_fitted(fp, what, fingerprint.fingerprint_parts()) is None
    old = "0" * 16 if fp != "0" * 16 else "1" * 16
    parts = dict(fingerprint.fingerprint_parts(), **{"kernels/tensor_cores.cu": "0" * 64})
    line = fingerprint.check_fitted(old, what, parts)
    assert line == (f"{what} for kernels {old}, these kernels are {fp} (changed: kernels/tensor_cores.cu); "
                    "refit with python benchmarks/fit_refined.py")
    assert "changed files unknown" in fingerprint.check_fitted(old, what)
    assert "no recorded fingerprint" in fingerprint.check_fitted(None, what)
    assert "not a fingerprint" in fingerprint.check_fitted("v1", what, refit="make fit")
    assert fingerprint.check_fitted(old, what, refit="make fit").endswith("refit with make fit")


def test_a_wheel_layout_gives_the_same_fingerprint(tmp_path):
    """As the wheel ships it (pyproject.toml: kernels/ and models/ in tcadvisor/_data/), in a fresh process."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "tcadvisor", site / "tcadvisor", ignore=shutil.ignore_patterns("__pycache__", "_data"))
    for name in ("kernels", "models", "hwspecs"):
        shutil.copytree(ROOT / name, site / "tcadvisor" / "_data" / name)
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", "import tcadvisor.fingerprint as f, tcadvisor.data as d; "
                          "print(f.__file__); print(d.data_dir('kernels')); print(f.kernel_fingerprint())"],
                         capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    module, kernels, fp = out.stdout.split()
    assert module.startswith(str(site)) and kernels == str(site / "tcadvisor" / "_data" / "kernels")
    assert fp == fingerprint.kernel_fingerprint()


# --------------------------------------------------------------------------- the repository's own records


def _fitted() -> dict:
    path = data_dir("models") / "fitted" / "refined-terms.yaml"
    assert path.stat().st_size < 1 << 20, f"{FITTED} is too large to be the fitted constants"
    raw = yaml.safe_load(path.read_text())
    assert isinstance(raw, dict), f"{FITTED} is not a YAML mapping"
    return raw


def test_fitted_constants_match_kernels():
    """The refined model's constants were fitted on today's kernels (benchmarks/fit_refined.py records the
    fingerprint as the top-level ``kernel_fingerprint``, and ideally ``kernel_fingerprint_parts``)."""
    raw = _fitted()
    message = fingerprint.check_fitted(raw.get("kernel_fingerprint"),
                                       f"the refined model's constants ({FITTED}) were fitted",
                                       raw.get("kernel_fingerprint_parts"))
    assert message is None, message


def _since_sources(sources) -> str:
    """What the raw-file hashes an older corpus header kept (``source_sha256``) say about today's covered files."""
    if not isinstance(sources, dict):
        return ""
    import hashlib

    changed, unrecorded = [], []
    for logical, path in fingerprint.covered_files().items():
        if logical not in sources:
            unrecorded.append(logical)
        elif hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest() != sources[logical]:
            changed.append(logical)
    return (f"; by its source_sha256, changed since: {', '.join(changed) or 'none'}"
            + (f"; not recorded there: {', '.join(unrecorded)}" if unrecorded else ""))


def _corpus_files() -> list[Path]:
    """Every recorded corpus header: validation/results/<gpu-date>/corpus.json or one folder deeper
    (results/h100-sxm-2026-11-25/corpus-a/corpus.json)."""
    results = data_dir("validation") / "results"
    return sorted({*results.glob("*/corpus.json"), *results.glob("*/*/corpus.json")})


def _trained_on() -> set[Path]:
    """The corpus headers the fitted constants name in ``trained_on`` ("<folder> (N runs)")."""
    names = _fitted().get("trained_on") or {}
    return {ROOT / str(v).split(" (")[0] / "corpus.json" for v in names.values()}


@pytest.mark.parametrize("corpus", _corpus_files() or [None],
                         ids=lambda p: str(p.relative_to(data_dir("validation") / "results").parent)
                         if p is not None else "no-corpus-recorded")
def test_corpus_files_match_the_fitted_constants(corpus):
    """Every recorded corpus carries the fingerprint of the kernels it timed; the corpora the constants were fitted
    on (``trained_on``) carry the one the constants were fitted for (a corpus of other kernels is not what the fit
    describes).  Older corpora are the record of older kernels: they keep their own fingerprint."""
    if corpus is None:  # nothing recorded yet: nothing can disagree
        assert _corpus_files() == []
        return
    assert corpus.stat().st_size < MAX_CORPUS_BYTES, f"{corpus} is too large to be a corpus header"
    header = json.loads(corpus.read_text())
    rel = corpus.relative_to(data_dir("validation").parent)
    recorded = header.get("kernel_fingerprint") if isinstance(header, dict) else None
    assert recorded, (f"{rel} records no kernel_fingerprint; record it again with python benchmarks/record_corpus.py "
                      "(which stores tcadvisor.fingerprint.kernel_fingerprint())"
                      + _since_sources(header.get("source_sha256") if isinstance(header, dict) else None))
    if corpus.resolve() not in {p.resolve() for p in _trained_on()}:
        return
    fitted = _fitted().get("kernel_fingerprint")
    assert recorded == fitted, (f"{rel} timed kernels {recorded}, the refined model's constants were fitted for "
                                f"kernels {fitted}; refit with python benchmarks/fit_refined.py on the corpus of "
                                "today's kernels")


def test_the_fit_names_corpora_that_exist():
    """``trained_on`` names recorded corpora (else the check above would pass by naming none)."""
    trained = _trained_on()
    assert trained and all(p.is_file() for p in trained), sorted(map(str, trained))
