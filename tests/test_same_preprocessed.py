"""The preprocessed check (benchmarks/same_preprocessed.py): a corpus of older CUDA sources is today's kernels only
where every recorded launch preprocesses to the tokens it compiled; and superseded runs read as not run.

The check runs on a scratch git repository holding a copy of kernels/, whose cuda_cores_2d.cu is then changed
in three ways: by an option its recorded launches do not set (the same tokens), by one token of the code every
launch compiles (other tokens), and not at all while a file no launch compiles changes (refused).
"""
import hashlib
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tcadvisor.validate.corpus import load_corpus, run_key

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("cpp") is None or shutil.which("git") is None,
                                reason="the preprocessed check needs cpp and git")


def _module():
    spec = importlib.util.spec_from_file_location("same_preprocessed", ROOT / "benchmarks" / "same_preprocessed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(stencil, unit, dtype, precision, fuse, kernel, mma=""):
    return {"stencil": stencil, "offsets": "", "unit": unit, "dtype": dtype, "precision": precision, "fuse": fuse,
            "grid": "10240x10240", "mma": mma, "status": "ok", "kernel": kernel}


#: Launches as corpus rows describe them: the 2D CUDA-core kernel with and without the copies, a custom tap set,
#: and a Tensor Core launch (whose source does not change here).
ROWS = [_row("Box-2D1R", "cuda_core", "double", "fp64", 3, "128 threads x 2 columns, 2 rows/iteration, halo 3, "
             "34 KiB shared, 56 registers"),
        _row("Star-2D1R", "cuda_core", "double", "fp64", 11, "128 threads x 2 columns, 1 rows/iteration, rows copied "
             "asynchronously, outputs stored from registers, own columns kept in registers, halo 11, 46 KiB shared, "
             "160 registers"),
        _row("Box-2D1R", "cuda_core", "float", "fp32", 2, "256 threads x 2 columns, 2 rows/iteration, halo 2, "
             "25 KiB shared, 48 registers"),
        _row("Box-2D1R", "tensor_core", "double", "fp64", 1, "m16n8k4 FP64, α = 9/32 (0.281), 3 K-chunk(s) x 3 kernel "
             "rows, 4 warps/block, weights in registers, prefetch 1, min 1 blocks/SM", mma="m16n8k4")]


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A git repository whose one commit holds today's kernels/ (the recorded version)."""
    shutil.copytree(ROOT / "kernels", tmp_path / "kernels")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.email=t@t", "-c", "user.name=t", "add", "kernels")
    _git(tmp_path, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "recorded")
    return tmp_path


def _digests(repo):
    return {f"kernels/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in (repo / "kernels").iterdir()}


def _edit_2d_kernel(repo, old, new):
    """Replace the one occurrence of ``old`` in the scratch repository's cuda_cores_2d.cu by ``new``."""
    path = repo / "kernels" / "cuda_cores_2d.cu"
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_an_option_no_recorded_launch_sets_keeps_the_tokens(repo):
    mod = _module()
    recorded = _digests(repo)
    anchor = "extern \"C\" __global__ void __launch_bounds__(NT)"
    _edit_2d_kernel(repo, anchor, "// a new option\n#if K_NEW_OPTION > 1\n__device__ int k_new_option;\n#endif\n" + anchor)
    same, found = mod.check(ROWS, recorded, repo)
    assert same, found
    assert "kernels/cuda_cores_2d.cu changed; the 3 recorded launches" in found


def test_one_token_of_the_code_every_launch_compiles_is_found(repo):
    mod = _module()
    recorded = _digests(repo)
    _edit_2d_kernel(repo, "const int tid = threadIdx.x;", "const int tid = (int)threadIdx.x;")
    same, found = mod.check(ROWS, recorded, repo)
    assert not same and "3 of the 3 recorded launches that compile them preprocess to other tokens" in found, found
    why, recompiled, _ = mod.compare(ROWS, recorded, repo)  # what a stamp supersedes: the three CUDA-core runs
    assert why is None and [r["kernel"] for r in recompiled] == [r["kernel"] for r in ROWS[:3]]


def test_a_changed_file_no_recorded_launch_compiles_is_refused(repo):
    mod = _module()
    recorded = _digests(repo)
    (repo / "kernels" / "fields.cu").write_text((repo / "kernels" / "fields.cu").read_text() + "\n__device__ int x;\n")
    same, found = mod.check(ROWS, recorded, repo)
    assert not same and "compiled by no recorded launch: fields.cu" in found, found


def test_a_recorded_version_git_does_not_hold_is_refused(repo):
    mod = _module()
    recorded = dict(_digests(repo), **{"kernels/cuda_cores_2d.cu": "0" * 64})
    same, found = mod.check(ROWS, recorded, repo)
    assert not same and "as recorded is in none of git's" in found, found


def test_unchanged_sources_need_no_preprocessing(repo):
    same, found = _module().check(ROWS, _digests(repo), repo)
    assert same and found == "no CUDA source changed"


def test_superseded_runs_read_as_not_run(tmp_path):
    """A header's superseded_runs turn those rows (and only those) into status 'superseded' when read; the CSV
    keeps them as recorded."""
    src = ROOT / "validation" / "results" / "h200-2026-11-27" / "corpus"
    shutil.copy(src / "corpus.csv", tmp_path / "corpus.csv")
    head, rows = load_corpus(src)
    ok = [r for r in rows if r["status"] == "ok"]
    chosen = [run_key(r) for r in ok[:3]]
    head["superseded_runs"] = chosen
    (tmp_path / "corpus.json").write_text(json.dumps(head))
    _, again = load_corpus(tmp_path)
    marked = [run_key(r) for r in again if r["status"] == "superseded"]
    assert marked == chosen
    assert sum(r["status"] == "ok" for r in again) == len(ok) - 3
    assert (tmp_path / "corpus.csv").read_text() == (src / "corpus.csv").read_text()
