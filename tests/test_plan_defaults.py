"""The measured kernel defaults (kernels/defaults.yaml) give the plans they gave as constants of plans.py.

``tests/data/plans-golden.json`` holds, for every corpus stencil x bundled kernel x precision x depth 1-16
(x every MMA instruction the dense profile lists for the precision; 1D CUDA cores also with
``layout="stream"``), the default plan's defines, shared memory, block, tiles, registers and options, or the
planner's refusal.  It was written by ``python tests/test_plan_defaults.py --write`` at commit 6d451f6, before
the measured defaults moved out of ``tcadvisor/gpu/plans.py``; a plan that differs from it by one define is a
kernel that runs differently, which a data move must not make.  Regenerate it only for a change meant to change
the plans (and then refit: ``python benchmarks/fit_refined.py``).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data", "plans-golden.json")
MAX_FUSE = 16


def _plan_record(plan) -> dict:
    return {"defines": ";".join(f"{k}={v}" for k, v in plan.defines), "smem": plan.smem, "block": list(plan.block),
            "threads": plan.threads, "tile": plan.tile, "outputs": plan.outputs, "halo": plan.halo,
            "fill": plan.fill, "live_words": plan.live_words, "mma": str(plan.mma) if plan.mma else None,
            "mma_per_slice": plan.mma_per_slice,
            "options": {k: (v if isinstance(v, (bool, int, float, str)) or v is None else str(v))
                        for k, v in sorted(plan.options.items())}}


def current_plans() -> dict[str, dict]:
    """Configuration key -> the default plan's record (or ``{"error": ...}``), for every configuration above."""
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.gpu import plans, registry
    from tcadvisor.gpu.tensor_cores import SHAPES
    from tcadvisor.impls import find_impl
    from tcadvisor.mma import MmaShape
    from tcadvisor.validate.corpus import PROFILES, corpus_stencils

    out: dict[str, dict] = {}
    for st in corpus_stencils():
        for unit, name in PROFILES.items():
            prof = find_impl(name)
            for dtype in prof.precisions:
                precision = registry.precision(prof, dtype)
                if prof.kernel == "cuda_cores":
                    variants = [("", {})] + ([("stream", {"layout": "stream"})] if st.dims == 1 else [])
                    build = lambda t, kw: plans.plan_cuda_cores(st, t, precision, **kw)  # noqa: E731
                elif prof.kernel == "tensor_cores":
                    variants = [(str(s), {"shape": MmaShape.parse(str(s))}) for s in prof.mma.get(precision, ())
                                if str(s) in SHAPES[precision]]
                    build = lambda t, kw: plans.plan_tensor_cores(st, t, precision, kw["shape"])  # noqa: E731
                else:
                    variants = [("", {})]
                    build = lambda t, kw: plans.plan_sparse_tensor_cores(st, t, precision)  # noqa: E731
                for label, kw in variants:
                    for t in range(1, MAX_FUSE + 1):
                        key = "|".join(filter(None, (st.name, prof.kernel, precision, label, f"t{t}")))
                        if key in out:
                            continue
                        try:
                            out[key] = _plan_record(build(t, kw))
                        except TcAdvisorError as exc:
                            out[key] = {"error": str(exc)}
    return out


def test_the_default_plans_are_the_golden_ones():
    with open(GOLDEN) as f:
        golden = json.load(f)["plans"]
    now = current_plans()
    assert sorted(now) == sorted(golden)
    differ = [k for k in golden if json.loads(json.dumps(now[k])) != golden[k]]
    assert not differ, (len(differ), differ[:5], [(golden[k], now[k]) for k in differ[:2]])


# --------------------------------------------------------------------------- kernels/defaults.yaml


def test_every_measured_default_names_a_results_folder_of_the_repository():
    from tcadvisor.data import data_dir
    from tcadvisor.gpu import defaults

    # the repository's own kernels/ (an installed wheel's data has no recorded runs: CI installs non-editable)
    assert defaults.checkout_root(defaults.Path(ROOT) / "kernels") == defaults.Path(ROOT).resolve()
    assert data_dir("kernels").name == "kernels"
    measured = defaults.load(defaults.Path(ROOT) / "kernels" / "defaults.yaml", root=defaults.Path(ROOT).resolve())
    assert set(measured.sources) == set(defaults.ENTRIES)
    for entry, folders in measured.sources.items():
        assert folders and all(os.path.isdir(os.path.join(ROOT, f)) for f in folders), (entry, folders)


def _copy(tmp_path, edit):
    from tcadvisor.data import data_dir

    text = (data_dir("kernels") / "defaults.yaml").read_text()
    path = tmp_path / "defaults.yaml"
    path.write_text(edit(text))
    return path


def test_a_source_that_is_not_a_folder_of_the_checkout_is_refused_there_only(tmp_path):
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.gpu import defaults

    path = _copy(tmp_path, lambda t: t.replace("h100-sxm-2026-11-24/sptc-l2", "h100-sxm-2026-11-24/sptc-l3"))
    with pytest.raises(TcAdvisorError, match=r"sparse_tensor_cores_l2_prefetch\.source names "
                                             r"validation/results/h100-sxm-2026-11-24/sptc-l3, which is not a folder"):
        defaults.load(path, defaults.Path(ROOT))
    assert defaults.load(path).sptc_l2 == defaults.measured().sptc_l2  # a wheel has no results to check against
    outside = _copy(tmp_path, lambda t: t.replace("source: validation/results/h100-sxm-2026-11-24/sptc-l2",
                                                  "source: ../elsewhere"))
    with pytest.raises(TcAdvisorError, match="a results folder under validation/results/"):
        defaults.load(outside)


@pytest.mark.parametrize("old, new, message", [
    ("5: {mma: m16n8k4, weights_shared: true, prefetch: 1}", "5: {mma: m16n8k4, weights_shared: 1, prefetch: 1}",
     r"tensor_cores\.value\.2\.fp64\.5\.weights_shared is 1; expected true or false"),
    ("1: {mma: m16n8k4, x_tiles: 4}", "1: {mma: m16x8, x_tiles: 4}", "expected an MMA instruction"),
    ("1: {mma: m16n8k4, x_tiles: 4}", "1: {mma: m16n8k4, x_tiles: 4, stages: 2}", "key 'stages'"),
    ("      1: [2, 130, 24, 2, 2]", "      1: [2, 130, 24, 2]", "expected \\[v, cols, rows"),
    ("  value: {fp64: 7, fp32: 8}", "  value: {fp64: 7, fp16: 8}", "one_row_from.value key 'fp16'"),
    ("tile1d_staged:\n  source: validation/results/h100-sxm-2026-11-26/cc1d-stage\n  value: true\n", "",
     "no tile1d_staged"),
    ("    dense: {fp64: 7, tf32: 16, fp16: 1}", "    dense: {fp64: 7, tf32: 16, fp16: 0}",
     r"tensor_cores_1d_rows\.value\.dense\.fp16 is 0"),
    ("    sparse: {fp16: 1, tf32: 8}", "    sparse: {fp16: 1, tf32: 8}\n    cuda: {fp16: 1}", "tensor_cores_1d_rows.value key 'cuda'"),
    ("    fp16: {1: {x_tiles: 4}, 5:", "    fp16: {2: {x_tiles: 4}, 5:",
     r"tensor_cores_1d_x_tiles\.value\.fp16 is .*; expected entries from fused radius 1 on"),
    ("    tf32: {1: {x_tiles: 4}, 16:", "    tf32: {1: {x_tiles: 4, warps: 8}, 16:", "tensor_cores_1d_x_tiles.value.tf32.1 key 'warps'"),
    ("  value: {fp64: [7, 4], fp32: [11, 4]}", "  value: {fp64: [7, 9], fp32: [11, 4]}",
     r"rows_ahead_2d_r1\.value\.fp64 iterations is 9"),
    ("  value: {fp64: [7, 4], fp32: [11, 4]}", "  value: {fp64: 7, fp32: [11, 4]}",
     r"rows_ahead_2d_r1\.value\.fp64 is 7; expected \[from depth, iterations"),
    ("  value: {fp64: [7, 4], fp32: [11, 4]}", "  value: {fp64: [7, 4], fp16: [11, 4]}",
     "rows_ahead_2d_r1.value key 'fp16'"),
    ("3: {stages: 2, warps: 4}, 4: 0}", "3: {stages: 2}, 4: 0}",
     r"tensor_cores_stages\.value\.3\.tf32\.3 is .*; expected a stage count, or \{stages: 2-8, warps: 1-32\}"),
    ("3: {stages: 2, warps: 4}, 4: 0}", "3: {stages: 2, warps: 64}, 4: 0}",
     r"tensor_cores_stages\.value\.3\.tf32\.3\.warps is 64; expected a whole number from 1 to 32"),
    ("3: {stages: 2, warps: 4}, 4: 0}", "3: {stages: 1, warps: 4}, 4: 0}",
     r"tensor_cores_stages\.value\.3\.tf32\.3\.stages is 1; expected 0 \(no stages\) or 2-8"),
    ("3: {stages: 2, warps: 4}, 4: 0}", "3: {stages: 2, warps: 4, ahead: 1}, 4: 0}",
     "tensor_cores_stages.value.3.tf32.3 key 'ahead'"),
    ("      2: {points: 19, tile: [2, 68, 36, 2, 2]}", "      2: {points: 19, tile: [2, 68, 36, 2]}",
     r"cc3d_radius1_few_points\.value\.fp64\.2 is .*; expected \{points: at most, tile: \[v, cols"),
    ("      2: {points: 19, tile: [2, 68, 36, 2, 2]}", "      2: {points: 28, tile: [2, 68, 36, 2, 2]}",
     r"cc3d_radius1_few_points\.value\.fp64\.2\.points is 28; expected a whole number from 1 to 27"),
    ("      2: {points: 19, tile: [2, 68, 36, 2, 2]}", "      2: {tile: [2, 68, 36, 2, 2]}",
     r"cc3d_radius1_few_points\.value\.fp64\.2 is .*; expected \{points: at most"),
    ("      2: {points: 19, tile: [2, 68, 36, 2, 2]}", "      2: {points: 19, tile: [2, 68, 36, 2, 2], vld: true}",
     "cc3d_radius1_few_points.value.fp64.2 key 'vld'"),
])
def test_a_malformed_default_is_one_line_naming_the_entry(tmp_path, old, new, message):
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.gpu import defaults

    path = _copy(tmp_path, lambda t: t.replace(old, new, 1) if old in t else pytest.fail(old))
    with pytest.raises(TcAdvisorError, match=message) as err:
        defaults.load(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_the_old_names_of_the_tables_still_answer():
    from tcadvisor.gpu import plans

    assert plans.TC_DEFAULTS[2, "fp64", 4] == ("m16n8k16", {"l2_prefetch": 3})
    assert plans.CC3D_DEFAULTS["fp32", 4] == (2, 64, 48, 4, 1) and plans.ASYNC_FROM_FP64_R1 == 4
    assert plans.DIRECT_STORE_DEPTHS["fp64", "box", 2] == (4, 8) and plans.TILE1D_V == {"fp64": 8, "fp32": 16}
    with pytest.raises(AttributeError):
        plans.NO_SUCH_TABLE


# --------------------------------------------------------------------------- corpora re-stamped by their launches

CORPUS = os.path.join(ROOT, "validation", "results", "h200-2026-11-27", "corpus")  # recorded with today's sources
#: Recorded with the CUDA sources before the 2D rows in flight (2026-11-28), stamped by the preprocessed check.
CORPUS_BEFORE = os.path.join(ROOT, "validation", "results", "h100-sxm-2026-11-27", "corpus")


def _fit_refined():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fit_refined", os.path.join(ROOT, "benchmarks", "fit_refined.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy_corpus(tmp_path, source, planner_changed=False):
    import shutil

    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("corpus.json", "corpus.csv"):
        shutil.copy(os.path.join(source, name), folder / name)
    head = json.loads((folder / "corpus.json").read_text())
    head["kernel_fingerprint"] = "0123456789abcdef"  # recorded for other kernels (or for these, before a move)
    for key in ("kernel_fingerprint_recorded", "kernel_fingerprint_note", "superseded_runs"):  # as recorded
        head.pop(key, None)
    if planner_changed:  # as if the planner had changed since the recording (its part is not compared)
        head["source_sha256"]["tcadvisor/gpu/plans.py"] = "0" * 64
    (folder / "corpus.json").write_text(json.dumps(head))
    return folder


@pytest.mark.parametrize("folder", [CORPUS, CORPUS_BEFORE], ids=["H200", "H100"])
def test_the_corpora_are_todays_design(folder):
    """Each corpus holds exactly the configurations its design (spec, size, seed in corpus.json) draws from what the
    bundled kernels run today.  The design samples depths along every runnable curve, so a default that makes a
    kernel refuse (or newly run) a depth moves the draw of every curve after it: the corpus must be recorded again
    (a pairs rule of 2026-11-28 refused FP16 at radius 3 from t = 11 and moved 121 of the H200's configurations)."""
    from tcadvisor.hardware import find_spec
    from tcadvisor.validate.corpus import design

    head = json.loads(open(os.path.join(folder, "corpus.json")).read())
    drawn = design(find_spec(head["spec"]), head["design"]["n"], head["design"]["seed"])
    want = {(c.stencil, c.unit, c.dtype, str(c.fuse), "x".join(map(str, c.grid))) for c in drawn}
    with open(os.path.join(folder, "corpus.csv"), newline="") as f:
        got = {(r["stencil"], r["unit"], r["dtype"], r["fuse"], r["grid"]) for r in csv.DictReader(f)}
    assert len(got) == 1064 and got == want, (sorted(want - got)[:5], sorted(got - want)[:5])


@pytest.fixture
def corpus_copy(tmp_path):
    return _copy_corpus(tmp_path, CORPUS, planner_changed=True)


def test_recorded_launches_are_todays_plans():
    from tcadvisor.validate.corpus import launches_changed, load_corpus

    for folder in (CORPUS, CORPUS_BEFORE):  # the H100's superseded runs are read as not run
        rows = load_corpus(folder)[1]
        assert rows and launches_changed(rows) == []


def test_a_corpus_is_restamped_when_its_cuda_sources_and_launches_are_todays(corpus_copy):
    from tcadvisor.fingerprint import kernel_fingerprint

    said = _fit_refined().stamp_corpus(corpus_copy)
    head = json.loads((corpus_copy / "corpus.json").read_text())
    assert "the launches check" in said, said
    assert head["kernel_fingerprint"] == kernel_fingerprint()
    assert head["kernel_fingerprint_recorded"] == "0123456789abcdef"
    assert "launches check" in head["kernel_fingerprint_note"] and "1064 recorded runs" in head["kernel_fingerprint_note"]
    assert "superseded_runs" not in head


def test_a_corpus_of_other_launches_or_other_cuda_is_not_restamped(corpus_copy):
    fit = _fit_refined()
    csv_path = corpus_copy / "corpus.csv"
    text = csv_path.read_text()
    assert "weights in L1, prefetch 1" in text
    csv_path.write_text(text.replace("weights in L1, prefetch 1", "weights in L1, prefetch 0", 1))
    said = fit.stamp_corpus(corpus_copy)
    assert "not stamped" in said and "recorded launches are not today's default plans" in said, said
    head = json.loads((corpus_copy / "corpus.json").read_text())
    head["source_sha256"]["kernels/tensor_cores.cu"] = "0" * 64
    (corpus_copy / "corpus.json").write_text(json.dumps(head))
    said = fit.stamp_corpus(corpus_copy)
    assert "not stamped, CUDA sources changed since it was recorded (kernels/tensor_cores.cu as recorded" in said, said
    assert json.loads((corpus_copy / "corpus.json").read_text())["kernel_fingerprint"] == "0123456789abcdef"


@pytest.mark.skipif(not os.path.isdir(os.path.join(ROOT, ".git")) or shutil.which("cpp") is None,
                    reason="the preprocessed check reads the recorded sources from git and needs cpp")
def test_a_corpus_of_older_cuda_sources_is_stamped_where_its_launches_preprocess_the_same(tmp_path):
    """The H100 corpus, recorded before kernels/cuda_cores_2d.cu took K_PF, before the 1D tile's stores were
    rewritten (2026-12-01) and before the dense kernel staged its 1D strips, then its 2D/3D slices, then 3D TF32 at
    r·t = 3 in blocks of 4 warps (2026-12-02):
    stamped by the preprocessed check, its runs whose default launch changed (the deep radius-1 2D CUDA-core ones, 4
    iterations ahead now; the staged dense ones) or whose launch compiles to other tokens today (every 1D tile) superseded and read as not
    run, the others as recorded (the Tensor Core kernels' other launches preprocess to the tokens they ran); a
    second stamp from the same recording finds the same."""
    from tcadvisor.fingerprint import kernel_fingerprint
    from tcadvisor.validate.corpus import load_corpus

    folder = _copy_corpus(tmp_path, CORPUS_BEFORE)
    said = _fit_refined().stamp_corpus(folder)
    assert "the preprocessed check" in said, said
    head = json.loads((folder / "corpus.json").read_text())
    assert head["kernel_fingerprint"] == kernel_fingerprint()
    assert ("kernels/cuda_cores_1d.cu, kernels/cuda_cores_2d.cu, kernels/sparse_tensor_cores.cu, "
            "kernels/tensor_cores.cu changed; 84 of the 502 recorded launches" in head["kernel_fingerprint_note"])
    superseded = head["superseded_runs"]
    # Superseded: the runs whose launch today's H200 corpus (same design, recorded with today's defaults) describes
    # otherwise -- the deep radius-1 FP32/FP64 runs (4 iterations ahead since 2026-11-28), the FP16/BF16 2D runs
    # that copy their rows since, and the 19 runs of 2026-12-01's defaults (1D tiles of half the threads at depth, 16
    # of them FP32/FP64, 3 FP16/BF16; 2D rows ahead at radius 2-3).  Read from the two GPUs' own descriptions, not from
    # the planner.
    def launches(folder_):
        with open(os.path.join(folder_, "corpus.csv"), newline="") as f:
            return {f"{r['stencil']} {r['unit']} {r['dtype']} t={r['fuse']} {r['grid']}": r["kernel"].split(", halo")[0]
                    for r in csv.DictReader(f)}
    # ... and every 1D tile run: kernels/cuda_cores_1d.cu compiles to other code since (all 86 of them).
    before, today = launches(CORPUS_BEFORE), launches(CORPUS)
    assert before.keys() == today.keys()
    tiles = {k for k in before if before[k].startswith("1D tiles")}
    assert len(tiles) == 86
    assert set(superseded) == {k for k in before if before[k] != today[k]} | tiles
    # FP32/FP64: the 7 + 16 of before, the 42 1D tile runs, 10 of which were among those, the 22 FP64/TF32 runs of
    # the dense kernel in 1D whose strips are staged in shared memory since session 50 (37 with FP16/BF16), the
    # 30 FP64/TF32 runs of it in 2D and 3D whose slices are staged since session 51 (99 with FP16/BF16), and the 5
    # TF32 runs at r·t = 3 in 3D staged in blocks of 4 warps since session 52 (its FP16/BF16 runs at r·t = 2, in
    # blocks of 4 warps since, were among the 99), and the 9 FP32/FP64 radius-1 3D CUDA-core runs of Star-3D1R and
    # diagonal-3d at t = 2-4 that take cc3d_radius1_few_points since session 54 (20 with FP16/BF16)
    assert sum(" float " in k or " double " in k for k in superseded) == 7 + 16 + 42 - 10 + 22 + 30 + 5 + 9
    assert sum(" tensor_core " in k for k in superseded) == 37 + 99 + 5
    rows = load_corpus(folder)[1]
    assert sorted(r["status"] for r in rows).count("superseded") == len(superseded)
    assert all(r["status"] == "ok" for r in rows if r["status"] != "superseded")
    head["kernel_fingerprint"] = "0123456789abcdef"
    (folder / "corpus.json").write_text(json.dumps(head))
    assert "the preprocessed check" in _fit_refined().stamp_corpus(folder)
    assert json.loads((folder / "corpus.json").read_text())["superseded_runs"] == superseded


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_plan_defaults.py --write  (rewrites tests/data/plans-golden.json)")
    sys.path.insert(0, ROOT)
    records = current_plans()
    note = ("the default plan of every corpus stencil x kernel x precision x depth 1-16 (x MMA instruction; 1D CUDA "
            "cores also layout='stream'), or the planner's refusal; written by python tests/test_plan_defaults.py "
            "--write (see its docstring for when)")
    with open(GOLDEN, "w") as f:  # one configuration a line, so that a diff names the plans that moved
        f.write('{"note": %s,\n"plans": {\n' % json.dumps(note))
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(records[k], sort_keys=True, separators=(',', ':'))}"
                           for k in sorted(records)))
        f.write("\n}}\n")
    print(f"{len(records)} configurations -> {GOLDEN}")


def test_1d_dense_x_tiles_hold_from_their_listed_fused_radius_up_to_the_next():
    """``tensor_cores_1d_x_tiles``: FP16/BF16 four x tiles from r·t = 1, with 2 slices into L2 from 5 to 40, the rules
    from 41; TF32 four tiles, with the L2 prefetch from 16 to the kernel's 64; FP64 and every 2D or 3D plan keep
    their own."""
    from tcadvisor.gpu import plans
    from tcadvisor.mma import MmaShape
    from tcadvisor.stencil import Stencil

    def knobs(st, t, p, shape):
        o = plans.plan_tensor_cores(st, t, p, MmaShape.parse(shape)).options
        return o["ir"], o["l2_prefetch"]

    box1 = Stencil.box(1, 1)
    for p in ("fp16", "bf16"):
        assert [knobs(box1, t, p, "m16n8k16") for t in (1, 4, 5, 40, 41, 64)] == [(4, 0), (4, 0), (4, 2), (4, 2),
                                                                                  (1, 0), (1, 0)]
    assert knobs(Stencil.box(1, 3), 2, "fp16", "m16n8k16") == (4, 2)  # r·t = 6
    assert [knobs(box1, t, "tf32", "m16n8k8") for t in (1, 15, 16, 40)] == [(4, 0), (4, 0), (4, 2), (4, 2)]
    assert [knobs(box1, t, "fp64", "m16n8k8") for t in (1, 16)] == [(1, 0), (1, 0)]
    # 2D: its own entry's x tiles, its L2 prefetch dropped beside the stages of tensor_cores_stages
    assert knobs(Stencil.box(2, 1), 3, "fp16", "m16n8k16") == (2, 0)
    assert knobs(Stencil.box(3, 1), 1, "fp16", "m16n8k16") == (4, 0)  # 3D: four inner rows, not x tiles
    assert plans.tc_1d_x_tiles("fp64", 8) == {}


def test_1d_lines_run_as_rows_from_the_measured_fused_radius():
    """``tensor_cores_1d_rows``: dense FP16/BF16 and sparse FP16/BF16 at every r·t, dense FP64 from r·t = 7 and TF32
    from 16, sparse TF32 never; 2D never, whatever the table says (it has a streamed axis of its own)."""
    from tcadvisor.gpu import plans
    from tcadvisor.mma import MmaShape
    from tcadvisor.stencil import Stencil

    def dense(st, t, p):
        return plans.plan_tensor_cores(st, t, p, MmaShape.parse("m16n8k16" if p in ("fp16", "bf16") else "m16n8k8"))

    box1, box2 = Stencil.box(1, 1), Stencil.box(1, 2)
    assert [dense(box1, t, "fp64").row_width for t in (6, 7)] == [0, 512]
    # TF32 and 16-bit: a row is the block's four warps' four x tiles each (tensor_cores_1d_x_tiles)
    assert [dense(box2, t, "tf32").row_width for t in (7, 8)] == [0, 4 * 512]  # r·t = 14, 16
    assert dense(box1, 1, "fp16").row_width == dense(box1, 1, "bf16").row_width == 4 * 512
    assert [plans.plan_sparse_tensor_cores(box1, 1, p).row_width for p in ("tf32", "fp16", "bf16")] == [0, 512, 512]
    assert dense(Stencil.box(2, 1), 1, "fp16").row_width == 0
    assert plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 1, "fp16").row_width == 0

