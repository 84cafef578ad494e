"""Output that is never half-written: atomic replacement, missing directories, partial figure sets, shared JS.

A full disk is simulated by replacing the one low-level write of
:mod:`tcadvisor.plots.output` (or ``fsync``, where a delayed-allocation file
system reports it) with one that fails part-way with ``ENOSPC``; the previous
file must then be byte-for-byte intact and no temporary file may remain.
"""
import errno
import os
import re
import stat
from pathlib import Path

import pytest

pytest.importorskip("plotly")

from plotly.offline import get_plotlyjs  # noqa: E402

from tcadvisor.cli import main  # noqa: E402
from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.hardware import parse_spec  # noqa: E402
from tcadvisor.plots import output, paper_figures  # noqa: E402

SMALL_MAP = ["map", "--gpu", "a100", "--dtype", "float", "--radii", "1-2", "--fuse", "1-3"]
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_disk_after(monkeypatch, chunks_ok: int) -> list:
    """Let ``chunks_ok`` writes through, then fail every further one with ENOSPC; returns the call log."""
    calls = []
    real = os.write

    def write(fd, data):
        calls.append(len(data))
        if len(calls) > chunks_ok:
            raise ENOSPC
        return real(fd, data)

    monkeypatch.setattr(output, "_write_chunk", write)
    return calls


def snapshot(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# --------------------------------------------------------------------------- atomic replacement


def test_full_disk_midway_keeps_the_previous_map(monkeypatch, capsys, tmp_path):
    out = tmp_path / "map.html"
    assert main([*SMALL_MAP, "-o", str(out)]) == 0
    before = snapshot(tmp_path)
    capsys.readouterr()
    calls = full_disk_after(monkeypatch, chunks_ok=2)
    assert main([*SMALL_MAP, "--dtype", "double", "-o", str(out)]) == 2
    assert len(calls) == 3  # two chunks (2 MiB) went to disk before the disk filled up
    line = one_error_line(capsys)
    assert str(out) in line and "No space left on device" in line and "previous file is unchanged" in line
    assert snapshot(tmp_path) == before  # the old page byte for byte, and no temporary file


def test_full_disk_reported_by_fsync_keeps_the_previous_csv(monkeypatch, capsys, tmp_path):
    html, csv = tmp_path / "m.html", tmp_path / "m.csv"
    assert main([*SMALL_MAP, "-o", str(html), "--csv", str(csv)]) == 0
    old_csv = csv.read_bytes()
    capsys.readouterr()
    real_fsync = os.fsync

    def fsync(fd):  # a file system with delayed allocation fails at flush time, after every write succeeded
        if os.fstat(fd).st_size < 1_000_000:  # the CSV, not the 4.8 MB page
            raise ENOSPC
        return real_fsync(fd)

    monkeypatch.setattr(output.os, "fsync", fsync)
    assert main([*SMALL_MAP, "--dtype", "double", "-o", str(html), "--csv", str(csv)]) == 2
    line = one_error_line(capsys)
    assert str(csv) in line and "No space left on device" in line
    assert csv.read_bytes() == old_csv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv", "m.html"]
    assert "double" in html.read_text(encoding="utf-8")  # the page before it was written in full


def test_a_new_file_on_a_full_disk_leaves_nothing(monkeypatch, capsys, tmp_path):
    full_disk_after(monkeypatch, chunks_ok=1)
    assert main([*SMALL_MAP, "-o", str(tmp_path / "new.html")]) == 2
    assert "nothing was written" in one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_writing_removes_the_temporary_file(monkeypatch, tmp_path):
    target = tmp_path / "data.csv"
    target.write_text("old\n")

    def interrupted(fd, data):
        os.write(fd, data[:10])
        raise KeyboardInterrupt

    monkeypatch.setattr(output, "_write_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.atomic_write(target, "new contents\n" * 10)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["data.csv"]


def test_permissions_follow_umask_for_new_files_and_are_kept_for_replaced_ones(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = output.atomic_write(tmp_path / "fresh.csv", "a\n")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # not mkstemp's 0600
        private = tmp_path / "private.csv"
        private.write_text("x\n")
        private.chmod(0o600)
        output.atomic_write(private, "y\n")
        assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == "y\n"
    finally:
        os.umask(old)


def test_a_directory_in_the_way_is_one_line(capsys, tmp_path):
    (tmp_path / "taken.html").mkdir()
    assert main([*SMALL_MAP, "-o", str(tmp_path / "taken.html")]) == 2
    line = one_error_line(capsys)
    assert "taken.html" in line and "directory" in line.lower()
    assert [p.name for p in tmp_path.iterdir()] == ["taken.html"] and not any((tmp_path / "taken.html").iterdir())


# --------------------------------------------------------------------------- missing parent directories


def test_missing_parent_directories_are_created_and_named(capsys, tmp_path):
    out = tmp_path / "a" / "b" / "map.html"
    assert main([*SMALL_MAP, "-o", str(out), "--csv", str(tmp_path / "a" / "c" / "map.csv")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tcadvisor: created the directories {tmp_path / 'a'}, {tmp_path / 'a' / 'b'} (did not exist)",
                   f"tcadvisor: created the directory {tmp_path / 'a' / 'c'} (did not exist)"]
    assert out.is_file() and (tmp_path / "a" / "c" / "map.csv").is_file()
    assert main([*SMALL_MAP, "-o", str(out)]) == 0  # nothing to create the second time: nothing said
    assert capsys.readouterr().err == ""


def test_a_file_where_a_directory_is_needed_is_one_line(capsys, tmp_path):
    (tmp_path / "plain").write_text("not a directory")
    assert main([*SMALL_MAP, "-o", str(tmp_path / "plain" / "map.html")]) == 2
    assert "is a file, not a directory" in one_error_line(capsys)
    assert main(["figures", "--only", "fig10-intensity-vs-depth", "-o", str(tmp_path / "plain")]) == 2
    assert "is a file, not a directory" in one_error_line(capsys)
    assert (tmp_path / "plain").read_text() == "not a directory"


def test_help_documents_the_output_rules(capsys):
    for command, needles in (("map", ["self-contained", "atomically", "created"]),
                             ("figures", ["Exit status", "--self-contained", "plotly-<version>.min.js", "created"])):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for needle in needles:
            assert needle in text, (command, needle)


# --------------------------------------------------------------------------- figures: partial sets


MINIMAL_YAML = """\
name: Minimal FP64 GPU
sources: {me: my own measurements}
bandwidth: {value: 1935, unit: GB/s, source: me}
peak:
  cuda_core:
    fp64: {value: 9.7, source: me}
    fp32: {value: 19.5, source: me}
  tensor_core:
    fp64: {value: 19.5, source: me}
"""
NEEDS_SPARSE = ["fig13-sparse-ceiling", "fig14-sparse-sweet-spot"]


def test_minimal_spec_writes_every_figure_it_can_and_says_why_not_the_others(capsys, tmp_path):
    spec = tmp_path / "minimal.yaml"
    spec.write_text(MINIMAL_YAML)
    out = tmp_path / "figs"
    assert main(["figures", "--gpu", str(spec), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[0] == f"tcadvisor: created the directory {out} (did not exist)"
    skipped = err[1:]
    assert [line.split(":")[1].split()[-1] for line in skipped] == NEEDS_SPARSE  # one line each
    assert all("Sparse Tensor Cores for float" in line for line in skipped)
    drawn = [n for n in paper_figures.FIGURES if n not in NEEDS_SPARSE]
    js = output.plotly_js_name()
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}.html" for n in drawn] + ["index.html", js])
    for name in drawn:
        page = (out / f"{name}.html").read_text(encoding="utf-8")
        assert "Plotly.newPlot" in page and f'src="{js}"' in page
    index = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]+)"', index)
    assert links == [f"{n}.html" for n in drawn]  # the index links what exists, nothing else
    skipped_html = index.split("id='skipped'>", 1)[1]
    for name in NEEDS_SPARSE:
        assert f"({name}): Minimal FP64 GPU has no" in skipped_html
    assert sum(line.startswith("wrote ") for line in captured.out.splitlines()) == len(drawn) + 2  # + JS, index


def spec_with(rates: dict) -> object:
    """A valid spec with only ``rates`` ({unit: {precision: TFLOP/s}})."""
    peak = {u: {p: {"value": v, "source": "me"} for p, v in ps.items()} for u, ps in rates.items()}
    raw = {"name": "Test GPU", "sources": {"me": "test"}, "peak": peak,
           "bandwidth": {"value": 1935, "unit": "GB/s", "source": "me"}}
    return parse_spec(raw, Path("test.yaml"))


SPECS = {
    "fp64 only": {"cuda_core": {"fp64": 9.7}, "tensor_core": {"fp64": 19.5}},
    "CUDA cores only": {"cuda_core": {"fp64": 9.7, "fp32": 19.5}},
    "fp32 only, no sparse": {"cuda_core": {"fp32": 19.5}, "tensor_core": {"tf32": 156}},
    "sparse without dense": {"cuda_core": {"fp32": 19.5}, "sparse_tensor_core": {"tf32": 312}},
    "tensor fp32 without CUDA-core fp32": {"cuda_core": {"fp64": 9.7}, "tensor_core": {"tf32": 156},
                                           "sparse_tensor_core": {"tf32": 312}},
    "half only": {"cuda_core": {"fp16": 78}, "tensor_core": {"fp16": 312}, "sparse_tensor_core": {"fp16": 624}},
}


@pytest.mark.parametrize("case", SPECS)
def test_every_figure_builds_or_says_why_for_partial_specs(case):
    gpu = spec_with(SPECS[case])
    built = 0
    for name, entry in paper_figures.FIGURES.items():
        try:
            fig = entry.build(gpu)
        except TcAdvisorError as exc:  # the only acceptable failure: one line saying what is missing
            assert "\n" not in str(exc) and gpu.name in str(exc), (name, exc)
            continue
        assert fig.data, (case, name)
        built += 1
    expected = {"half only": 0, "CUDA cores only": 3}.get(case)  # Figs. 7, 10, Table 3 need only CUDA cores
    if expected is not None:
        assert built == expected, case


def test_no_drawable_figure_is_one_line_and_writes_nothing(capsys, tmp_path):
    spec = tmp_path / "half.yaml"
    spec.write_text(MINIMAL_YAML.replace("fp64", "fp16").replace("    fp32: {value: 19.5, source: me}\n", ""))
    assert main(["figures", "--gpu", str(spec), "-o", str(tmp_path / "figs")]) == 2
    line = one_error_line(capsys)
    assert "no figure could be drawn" in line and "nothing was written" in line and "fig07-roofline" in line
    assert not (tmp_path / "figs").exists()


def test_a_bug_in_one_figure_costs_only_that_figure(monkeypatch, capsys, tmp_path):
    broken = paper_figures.FIGURES["fig09-scenario-regions"]

    def bug(gpu):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setitem(paper_figures.FIGURES, "fig09-scenario-regions",
                        paper_figures.PaperFigure(broken.title, broken.caption, bug))
    out = tmp_path / "figs"
    with pytest.raises(ZeroDivisionError):  # a bug keeps its traceback (exit status 1) ...
        main(["figures", "--only", "fig07-roofline,fig09-scenario-regions,fig10-intensity-vs-depth", "-o", str(out)])
    assert "fig09-scenario-regions failed with an internal error" in capsys.readouterr().err
    assert {"fig07-roofline.html", "fig10-intensity-vs-depth.html", "index.html"} <= {p.name for p in out.iterdir()}
    index = (out / "index.html").read_text(encoding="utf-8")  # ... after the others and the index are written
    assert "simulated bug" in index and 'href="fig09' not in index


def test_full_disk_during_figures_keeps_every_previous_page(monkeypatch, capsys, tmp_path):
    out = tmp_path / "figs"
    only = "fig07-roofline,fig10-intensity-vs-depth,table3-criteria"
    assert main(["figures", "--only", only, "-o", str(out)]) == 0
    before = snapshot(out)
    capsys.readouterr()
    full_disk_after(monkeypatch, chunks_ok=0)
    assert main(["figures", "--only", only, "--gpu", "h100", "-o", str(out)]) == 2
    line = one_error_line(capsys)
    assert "No space left on device" in line and "previous file is unchanged" in line
    assert snapshot(out) == before


# --------------------------------------------------------------------------- figures: one copy of Plotly's JS


def test_plotly_js_is_written_once_per_directory(capsys, tmp_path):
    shared, single = tmp_path / "shared", tmp_path / "single"
    only = "fig07-roofline,fig08-scenarios,fig10-intensity-vs-depth"
    assert main(["figures", "--only", only, "-o", str(shared)]) == 0
    assert main(["figures", "--only", only, "-o", str(single), "--self-contained"]) == 0
    js = output.plotly_js_name()
    assert (shared / js).read_text(encoding="utf-8") == get_plotlyjs()
    assert not (single / js).exists()
    scripts = set()
    for page in shared.glob("fig*.html"):
        text = page.read_text(encoding="utf-8")
        scripts.update(re.findall(r'<script[^>]*src="([^"]+)"', text))
        assert get_plotlyjs()[:2000] not in text  # the bundle is not embedded
    assert scripts == {js}  # one relative script, no CDN
    for page in single.glob("fig*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.findall(r'<script[^>]*src=', text) and get_plotlyjs()[:2000] in text
    size = {d: sum(p.stat().st_size for p in d.iterdir()) for d in (shared, single)}
    js_size = (shared / js).stat().st_size
    assert size[single] - size[shared] > 2 * js_size - 100_000  # three copies became one
    capsys.readouterr()
    assert main(["figures", "--only", "fig07-roofline", "-o", str(shared)]) == 0
    assert js not in capsys.readouterr().out  # an up-to-date copy is left alone, and not claimed as written
    (shared / js).write_text("stale")
    assert main(["figures", "--only", "fig07-roofline", "-o", str(shared)]) == 0
    assert js in capsys.readouterr().out and (shared / js).read_text(encoding="utf-8") == get_plotlyjs()


def test_single_html_outputs_stay_self_contained(tmp_path):
    for args in ([*SMALL_MAP, "-o", str(tmp_path / "m.html")],
                 ["roofline", "Box-2D1R", "--gpu", "a100", "-o", str(tmp_path / "r.html")]):
        assert main(args) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.html", "r.html"]
    for page in tmp_path.iterdir():
        text = page.read_text(encoding="utf-8")
        assert not re.findall(r"<script[^>]*src=", text) and get_plotlyjs()[:2000] in text
