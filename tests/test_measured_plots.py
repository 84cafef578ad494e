"""``map --measured`` and ``roofline --measured``: recorded runs drawn on the prediction.

Expectations are written by hand (a small results file whose measured values are
set relative to what :func:`tcadvisor.advisor.advise` predicts, so each cell's
outcome is known before the figure is drawn) or read straight from the committed
files with ``json``/``csv`` (never through the module under test).  Figures are
inspected as Plotly JSON, not as pixels.
"""
import csv
import json
import statistics
from pathlib import Path

import pytest

from tcadvisor.advisor import best_index, advise
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import UNIT_LABELS, UNITS, find_spec
from tcadvisor.stencil import Stencil

go = pytest.importorskip("plotly.graph_objects")

from tcadvisor.plots import maps, measured, roofline  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS_H100 = ROOT / "validation/results/h100-sxm-2026-11-23/results.json"
CORPUS_H200 = ROOT / "validation/results/h200-2026-11-27/corpus/corpus.csv"
H100 = find_spec("h100")
DEVICE = "NVIDIA H100 80GB HBM3"
GRID = "10240x10240"


def predicted(radius: int, fuse: int, dtype: str = "float") -> tuple[str, list[str]]:
    """The advisor's fastest unit at one cell (its own tie rule) and the units it can run there."""
    opts = [o for o in advise(Stencil.box(2, radius), dtype, H100, fuse=fuse).options if o.available]
    i = best_index([o.gstencils for o in opts], [o.fuse for o in opts], [o.unit for o in opts])
    return opts[i].unit, [o.unit for o in opts]


def run(stencil, fuse, unit, gstencils=None, status="ok", reason="", grid=GRID, dtype="float"):
    return {"suite": "hand", "case": f"{stencil}-t{fuse}", "stencil": stencil, "dims": 2, "dtype": dtype,
            "fuse": fuse, "unit": unit, "impl": {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc",
                                                 "sparse_tensor_core": "tcadvisor-sptc"}[unit],
            "status": status, "reason": reason, "gstencils": gstencils, "grid": grid, "device": DEVICE}


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    """A results file of Box-2D r = 1-2, t = 1-3 in float on the H100, each cell's outcome chosen by hand.

    P is the predicted fastest unit of a cell, O another unit the model runs there, T the third.
    """
    cells = {}
    rows = []
    for r in (1, 2):
        for t in (1, 2, 3):
            p, runnable = predicted(r, t)
            assert len(runnable) == 3, runnable  # float: every unit runs these cells
            o, third = [u for u in runnable if u != p]
            cells[(r, t)] = (p, o, third)
    name = {1: "Box-2D1R", 2: "Box-2D2R"}
    # (1, 1): P ahead of the rest by 20 %; a run of O on another grid, much faster, is not compared
    p, o, x = cells[(1, 1)]
    rows += [run(name[1], 1, p, 120.0), run(name[1], 1, o, 100.0), run(name[1], 1, x, 50.0),
             run(name[1], 1, o, 999.0, grid="4096x4096")]
    # (1, 2): O ahead of P by 30 %, the median of two runs (125 and 135)
    p, o, x = cells[(1, 2)]
    rows += [run(name[1], 2, p, 100.0), run(name[1], 2, o, 125.0), run(name[1], 2, o, 135.0),
             run(name[1], 2, x, 50.0)]
    # (1, 3): O ahead by 5 %: within the file's ±10 % tie band
    p, o, x = cells[(1, 3)]
    rows += [run(name[1], 3, p, 100.0), run(name[1], 3, o, 105.0), run(name[1], 3, x, 50.0)]
    # (2, 1): only O measured: P not measured
    p, o, x = cells[(2, 1)]
    rows += [run(name[2], 1, o, 80.0)]
    # (2, 2): P and O measured, the third skipped with a reason
    p, o, x = cells[(2, 2)]
    rows += [run(name[2], 2, p, 90.0), run(name[2], 2, o, 60.0),
             run(name[2], 2, x, status="skipped", reason="the kernel refused it")]
    # (2, 3): nothing; another stencil and another dtype at the same depth are not this map's
    rows += [run("Star-2D2R", 3, "cuda_core", 500.0), run(name[2], 3, "cuda_core", 500.0, dtype="double")]
    raw = {"schema": 1, "tool": "hand-written", "date": "2026-11-30", "device": DEVICE, "band": 0.1,
           "spec": {"name": "NVIDIA H100 SXM5 80GB"}, "suites": ["hand"], "measurements": rows}
    path = tmp_path_factory.mktemp("hand") / "results.json"
    path.write_text(json.dumps(raw))
    return path, cells


def cell(data, r, t):
    rows = data[(data["radius"] == r) & (data["fuse"] == t)]
    return rows.iloc[0], {u: rows[rows["unit"] == u].iloc[0] for u in rows["unit"]}


def label(unit):
    return UNIT_LABELS[unit]


# --------------------------------------------------------------------------- the judging, by hand


def test_verdict_rules_written_by_hand():
    from tcadvisor.plots.measured import UnitResult, verdict

    def res(**g):
        return {u: UnitResult(u, v, 1) for u, v in g.items()}

    v = verdict("tensor_core", UNITS, res(cuda_core=100.0, tensor_core=130.0, sparse_tensor_core=90.0))
    assert (v.state, v.measured, v.missing) == ("agree", "tensor_core", ())
    assert v.text == "predicted Tensor Cores, measured Tensor Cores (ahead of CUDA cores by 30 %)"
    v = verdict("tensor_core", UNITS, res(cuda_core=150.0, tensor_core=100.0, sparse_tensor_core=90.0))
    assert (v.state, v.measured) == ("mismatch", "cuda_core")
    assert v.text == "predicted Tensor Cores, measured CUDA cores (ahead by 50 %)"
    v = verdict("tensor_core", UNITS, res(cuda_core=104.0, tensor_core=100.0, sparse_tensor_core=90.0))
    assert v.state == "tie" and "ahead by 4.0 %, within the ±10 % tie band" in v.text
    assert verdict("tensor_core", UNITS, res(cuda_core=104.0, tensor_core=100.0), band=0.02).state == "mismatch"
    v = verdict("tensor_core", ["cuda_core", "tensor_core"], res(cuda_core=104.0))
    assert (v.state, v.measured, v.missing) == ("unknown", "cuda_core", ("tensor_core",))
    assert v.text.endswith("; not measured: Tensor Cores")
    # a skipped unit the model runs is missing and says why; one the model cannot run here is not missing
    skipped = {"cuda_core": UnitResult("cuda_core", 10.0, 1), "tensor_core": UnitResult("tensor_core", why="skipped")}
    v = verdict("cuda_core", ["cuda_core", "tensor_core"], skipped)
    assert v.missing == ("tensor_core",) and v.text.endswith("not measured: Tensor Cores (skipped)")
    v = verdict("cuda_core", ["cuda_core"], skipped)
    assert v.missing == () and v.text == "predicted CUDA cores, measured CUDA cores (the only unit measured)"
    assert verdict("cuda_core", ["cuda_core"], {}).state == ""


def test_units_are_compared_on_the_grid_most_of_them_ran_on():
    from tcadvisor.plots.measured import Run, cell_results

    def r(unit, g, grid):
        return Run("gpu", "Box-2D1R", "float", 1, unit, "ok", gstencils=g, grid=grid)

    got = cell_results([r("cuda_core", 10.0, "a"), r("tensor_core", 20.0, "a"), r("tensor_core", 40.0, "a"),
                        r("cuda_core", 99.0, "b"), r("sparse_tensor_core", 5.0, "b")])
    assert got["cuda_core"].gstencils == 10.0 and got["tensor_core"].gstencils == 30.0  # the median of 20, 40
    assert got["sparse_tensor_core"].gstencils is None and "another grid (b)" in got["sparse_tensor_core"].why


# --------------------------------------------------------------------------- the map, hand-written file


@pytest.fixture(scope="module")
def hand_map(hand):
    path, cells = hand
    data = maps.map_data("box", 2, "float", [H100], radii="1-2", fuses="1-3", measured=path)
    return data, maps.map_figure(data), cells


def traces(fig, prefix):
    return [t for t in fig.data if (t.name or "").startswith(prefix)]


def points_of(fig, prefix):
    """(x, y) of every marker of the traces named ``prefix`` (rounded to the cell they mark)."""
    return {(round(x), round(y)) for t in traces(fig, prefix) for x, y in zip(t.x, t.y) if x is not None}


def test_hand_map_columns(hand_map):
    data, _, cells = hand_map
    p, o, x = cells[(1, 1)]
    first, units = cell(data, 1, 1)
    assert (first["measured_winner"], first["measured_check"], first["measured_missing"]) == (p, "agree", "")
    assert units[o]["measured_gstencils"] == 100.0  # the run on the other grid is not compared
    assert first["measured_text"].startswith(f"predicted {label(p)}, measured {label(p)} (ahead of {label(o)} by 20 %)")
    p, o, x = cells[(1, 2)]
    first, units = cell(data, 1, 2)
    assert (first["measured_winner"], first["measured_check"]) == (o, "mismatch")
    assert units[o]["measured_gstencils"] == 130.0 and units[o]["measured_runs"] == 2
    assert f"predicted {label(p)}, measured {label(o)} (ahead by 30 %" in first["measured_text"]
    p, o, x = cells[(1, 3)]
    first, _ = cell(data, 1, 3)
    assert (first["measured_winner"], first["measured_check"]) == (o, "tie")
    assert "ahead by 5.0 %, within the ±10 % tie band" in first["measured_text"]
    p, o, x = cells[(2, 1)]
    first, _ = cell(data, 2, 1)
    assert (first["measured_winner"], first["measured_check"]) == (o, "unknown")
    assert set(first["measured_missing"].split(",")) == {p, x}
    assert f"not measured: " in first["measured_text"] and label(p) in first["measured_text"].split("not measured")[1]
    p, o, x = cells[(2, 2)]
    first, units = cell(data, 2, 2)
    assert (first["measured_winner"], first["measured_check"], first["measured_missing"]) == (p, "agree", x)
    assert f"not measured: {label(x)} (skipped: the kernel refused it)" in first["measured_text"]
    first, units = cell(data, 2, 3)
    assert first["measured_winner"] == "" and all(u["measured_runs"] == 0 for u in units.values())


def test_hand_map_marks(hand_map):
    _, fig, cells = hand_map
    # x: depth index (t - 1), y: radius index (r - 1), both on the fastest-unit panel
    for (r, t), (p, o, _) in cells.items():
        want = {(1, 1): p, (1, 2): o, (1, 3): o, (2, 1): o, (2, 2): p}.get((r, t))
        found = [u for u in UNITS if (t - 1, r - 1) in points_of(fig, f"measured fastest: {label(u)}")]
        assert found == ([want] if want else []), (r, t)
    assert points_of(fig, "measured ≠ predicted, within") == {(2, 0)}
    rings = [t for t in traces(fig, "measured ≠ predicted") if "within" not in t.name]
    assert {(round(x), round(y)) for t in rings for x, y in zip(t.x, t.y)} == {(1, 0)}
    assert all(t.xaxis == "x3" for t in traces(fig, "measured"))  # the fastest-unit panel
    # hollow squares where a unit the model runs was not measured
    symbols = {}
    for t in traces(fig, "measured fastest: "):
        symbols.update({(round(x), round(y)): s for x, y, s in zip(t.x, t.y, t.marker.symbol)})
    assert symbols == {(0, 0): "square", (1, 0): "square", (2, 0): "square", (0, 1): "square-open",
                       (1, 1): "square-open"}
    ring = next(t for t in rings)
    assert f"predicted {label(cells[(1, 2)][0])}, measured {label(cells[(1, 2)][1])} (ahead by 30 %" in \
        ring.customdata[0]


def test_hand_map_hover_and_unmeasured_cells_unchanged(hand, hand_map):
    data, fig, cells = hand_map
    plain = maps.map_figure(maps.map_data("box", 2, "float", [H100], radii="1-2", fuses="1-3"))
    win = next(t for t in fig.data if t.name == f"fastest unit, {H100.name}")
    before = next(t for t in plain.data if t.name == f"fastest unit, {H100.name}")
    custom, old = list(map(list, win.customdata)), list(map(list, before.customdata))
    for i in range(2):
        for j in range(3):
            assert list(custom[i][j][:8]) == list(old[i][j][:8])  # the model's hover as it was
    assert custom[1][2][8] == ""  # (r, t) = (2, 3): nothing measured, no line added
    p, o, _ = cells[(1, 2)]
    assert f"predicted {label(p)}, measured {label(o)} (ahead by 30 %" in custom[0][1][8]
    # the speedup panels: the measured R where both units were measured
    tc = next(t for t in fig.data if t.name == f"{label('tensor_core')}, {H100.name}")
    _, units = cell(data, 1, 1)
    r = units["tensor_core"]["measured_gstencils"] / units["cuda_core"]["measured_gstencils"]
    assert f"measured</b>: R = {r:.3g}×" in tc.customdata[0][0][17]
    plain_tc = next(t for t in plain.data if t.name == tc.name)
    assert list(map(list, plain_tc.z)) == list(map(list, tc.z))


def test_tie_band_comes_from_the_file(hand, tmp_path):
    path, cells = hand
    raw = json.loads(path.read_text())
    raw["band"] = 0.02
    narrow = tmp_path / "results.json"
    narrow.write_text(json.dumps(raw))
    data = maps.map_data("box", 2, "float", [H100], radii="1-2", fuses="1-3", measured=narrow)
    assert cell(data, 1, 3)[0]["measured_check"] == "mismatch"


# --------------------------------------------------------------------------- the committed runs, through the CLI


def figure_json(html_path: Path) -> dict:
    """The figure a written HTML page draws: the data and layout passed to Plotly.newPlot."""
    text = html_path.read_text(encoding="utf-8")
    start = text.index("Plotly.newPlot(")
    rest = text[text.index(",", start) + 1:]
    dec = json.JSONDecoder()
    data, end = dec.raw_decode(rest.lstrip())
    rest = rest.lstrip()[end:].lstrip().lstrip(",")
    layout, _ = dec.raw_decode(rest.lstrip())
    return {"data": data, "layout": layout}


def recorded_cells(path: Path, stencil_prefix: str, dtype: str) -> dict:
    """(stencil, t) → {unit: median GStencils/s} of the ok runs in a committed results.json (one grid each)."""
    raw = json.loads(path.read_text())
    runs = {}
    for m in raw["measurements"]:
        if m["status"] == "ok" and m["stencil"].startswith(stencil_prefix) and m["dtype"] == dtype:
            runs.setdefault((m["stencil"], m["fuse"]), {}).setdefault(m["unit"], []).append(m)
    out = {}
    for key, units in runs.items():
        assert len({m["grid"] for ms in units.values() for m in ms}) == 1
        out[key] = {u: statistics.median(m["gstencils"] for m in ms) for u, ms in units.items()}
    return out


def test_cli_map_measured_from_a_committed_run(run_cli, tmp_path):
    html = tmp_path / "map.html"
    r = run_cli("map", "--gpu", "h100", "--dtype", "double", "--measured", str(RESULTS_H100), "-o", str(html))
    assert r.returncode == 0, r.stderr
    fig = figure_json(html)
    expected = recorded_cells(RESULTS_H100, "Box-2D", "double")
    assert len(expected) >= 16
    drawn = {}
    for t in fig["data"]:
        name = t.get("name") or ""
        if name.startswith("measured fastest: "):
            unit = next(u for u in UNITS if name == f"measured fastest: {label(u)}")
            drawn.update({(round(y) + 1, round(x) + 1): unit for x, y in zip(t["x"], t["y"])})
    want = {}
    for (stencil, fuse), units in expected.items():
        radius = int(stencil[len("Box-2D"):-1])
        want[(radius, fuse)] = max(units, key=units.get)
    assert drawn == want
    notes = " ".join(a.get("text", "") for a in fig["layout"]["annotations"])
    assert f"<b>Measured</b>, results.json ({DEVICE}, 2026-11-23): {len(want)} cells" in notes


def test_cli_map_measured_from_a_committed_corpus_marks_mismatches(run_cli, tmp_path):
    """In FP16 and FP32: every measured cell is marked, and a cell is ringed exactly where the measured winner beat
    the predicted one by more than 10 %.  Some cell must be ringed in one of them, so that the rings are exercised
    (in FP32 there are; FP16 has none since the CUDA-core bandwidth counts a warp's own work, 2026-12-01)."""
    ringed = {}
    for dtype in ("half", "float"):
        html, table = tmp_path / f"map-{dtype}.html", tmp_path / f"map-{dtype}.csv"
        r = run_cli("map", "--gpu", "h200", "--dtype", dtype, "--measured", str(CORPUS_H200), "-o", str(html),
                    "--csv", str(table))
        assert r.returncode == 0, r.stderr
        with CORPUS_H200.open(newline="") as f:
            # every measured cell, on the default grid or only on another one (the corpus's "grid" stratum: the map
            # compares the units of a cell on the grid most of them ran on, measured/plots.py)
            rows = [row for row in csv.DictReader(f) if row["dtype"] == dtype and row["stencil"].startswith("Box-2D")
                    and row["status"] == "ok"]
        measured_cells = {(int(row["stencil"][6:-1]), int(row["fuse"])) for row in rows}
        data = list(csv.DictReader(table.open(newline="")))
        marked = {(int(d["radius"]), int(d["fuse"])) for d in data if d["measured_winner"]}
        assert marked == measured_cells
        fig = figure_json(html)
        rings = {(round(y) + 1, round(x) + 1) for t in fig["data"] if t.get("name") == "measured ≠ predicted"
                 for x, y in zip(t["x"], t["y"])}
        for d in data:  # every cell ringed is one where the measured winner was beaten by more than 10 %
            key = (int(d["radius"]), int(d["fuse"]))
            if d["unit"] != "cuda_core" or not d["measured_winner"]:
                continue
            cellrows = {x["unit"]: x for x in data if (int(x["radius"]), int(x["fuse"])) == key}
            pred = next(u for u, x in cellrows.items() if x["winner"] == "True")
            best = max((u for u in cellrows if cellrows[u]["measured_gstencils"]),
                       key=lambda u: float(cellrows[u]["measured_gstencils"]))
            beyond = (pred in cellrows and cellrows[pred]["measured_gstencils"] and
                      float(cellrows[best]["measured_gstencils"]) > 1.1 * float(cellrows[pred]["measured_gstencils"]))
            assert (key in rings) == bool(beyond), (dtype, key)
        ringed[dtype] = rings
    assert any(ringed.values()), ringed  # the rings are drawn somewhere


def test_cli_roofline_measured_points(run_cli, tmp_path):
    html = tmp_path / "roofline.html"
    r = run_cli("roofline", "Box-2D1R", "--fuse", "7", "--dtype", "float", "--gpu", "h100", "--model", "refined",
                "--measured", str(RESULTS_H100), "-o", str(html))
    assert r.returncode == 0, r.stderr
    fig = figure_json(html)
    raw = json.loads(RESULTS_H100.read_text())
    ok = [m for m in raw["measurements"] if m["status"] == "ok" and m["stencil"] == "Box-2D1R"
          and m["dtype"] == "float" and m["fuse"] == 7]
    advice = advise(Stencil.box(2, 1), "float", H100, fuse=7, model="refined")
    gst = {}
    for o in advice.options:
        ms = [m for m in ok if m["unit"] == o.unit]
        trace = next(t for t in fig["data"] if t.get("name") == f"measured: {o.label}, t = 7")
        x = statistics.median(m["meas_intensity"] for m in ms)
        g = gst[o.unit] = statistics.median(m["gstencils"] for m in ms)
        assert trace["x"][0] == pytest.approx(x) and trace["marker"]["symbol"] == "diamond"
        assert trace["y"][0] == pytest.approx(o.attainable_flops / 1e12 * g / o.gstencils)
    opts = [o for o in advice.options if o.available]
    i = best_index([o.gstencils for o in opts], [o.fuse for o in opts], [o.unit for o in opts])
    best = max(gst, key=gst.get)
    ring = [t for t in fig["data"] if t.get("name") == "measured ≠ predicted"]
    if best != opts[i].unit and gst[best] > 1.1 * gst[opts[i].unit]:
        assert len(ring) == 1 and f"measured {label(best)} (ahead by" in ring[0]["hovertemplate"]
    else:
        assert ring == []
    notes = " ".join(a.get("text", "") for a in fig["layout"]["annotations"])
    assert f"<b>Measured</b>, results.json ({DEVICE}, 2026-11-23)" in notes


def test_roofline_from_a_corpus_places_points_at_the_models_intensity():
    fig = roofline.roofline_of("Box-2D1R", "half", "h200", fuse=2, measured=CORPUS_H200)
    with CORPUS_H200.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["stencil"] == "Box-2D1R" and r["dtype"] == "half"
                and r["fuse"] == "2" and r["status"] == "ok" and r["stratum"] == "curve"]
    assert rows
    advice = advise(Stencil.box(2, 1), "half", find_spec("h200"), fuse=2, model="base")
    for row in rows:
        o = next(o for o in advice.options if o.unit == row["unit"])
        trace = next(t for t in fig.data if t.name == f"measured: {o.label}, t = 2 (at the model's I)")
        assert trace.x[0] == pytest.approx(o.intensity) and trace.marker.symbol == "x"
        assert trace.y[0] == pytest.approx(o.attainable_flops / 1e12 * float(row["gstencils"]) / o.gstencils)


def test_a_map_of_several_gpus_draws_the_file_on_its_gpu_only(run_cli, tmp_path):
    html = tmp_path / "two.html"
    r = run_cli("map", "--gpu", "a100,h100", "--dtype", "double", "--radii", "1-2", "--measured", str(RESULTS_H100),
                "-o", str(html))
    assert r.returncode == 0, r.stderr
    assert f"runs of {DEVICE} drawn on the {H100.name} row only" in r.stderr
    fig = figure_json(html)
    axes = {t.get("xaxis") for t in fig["data"] if (t.get("name") or "").startswith("measured fastest: ")}
    assert axes == {"x6"}  # the H100's fastest-unit panel (second row, third column)


def test_a_calibrated_spec_of_the_device_matches_its_run():
    data = maps.map_data("box", 2, "double", ["h100-calibrated"], radii="1", fuses="1-3", measured=RESULTS_H100)
    assert (data["measured_winner"] != "").any()


# --------------------------------------------------------------------------- refusals


def one_line_error(run_cli, *args):
    r = run_cli(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_refuses_a_run_of_another_gpu(run_cli, tmp_path):
    line = one_line_error(run_cli, "map", "--gpu", "h200", "--measured", str(RESULTS_H100), "-o",
                          str(tmp_path / "m.html"))
    assert f"recorded on {DEVICE} (--gpu h100), not on NVIDIA H200" in line
    line = one_line_error(run_cli, "roofline", "Box-2D1R", "--gpu", "a100", "--measured", str(CORPUS_H200), "-o",
                          str(tmp_path / "r.html"))
    assert "recorded on NVIDIA H200 (--gpu h200), not on NVIDIA A100" in line
    assert not (tmp_path / "m.html").exists() and not (tmp_path / "r.html").exists()


def _broken(tmp_path, edit) -> Path:
    raw = json.loads(RESULTS_H100.read_text())
    edit(raw)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r["measurements"][0].__setitem__("gstencils", "fast"), "measurements[0].gstencils"),
    (lambda r: r["measurements"][0].__setitem__("fuse", True), "measurements[0].fuse"),
    (lambda r: r.__setitem__("band", 5), "'band'"),
    (lambda r: r.__setitem__("schema", 7), "not a tcadvisor validation result"),
    (lambda r: r["measurements"][0].__setitem__("unit", "fpga"), "measurements[0].unit"),
    (lambda r: r["measurements"][0].__setitem__("gstencils", None), "needs a positive throughput"),
    (lambda r: r["measurements"][0].__setitem__("dtype", "int8"), "dtype 'int8'"),
])
def test_refuses_a_malformed_results_file(run_cli, tmp_path, edit, needle):
    bad = _broken(tmp_path, edit)
    for args in (("map", "--gpu", "h100"), ("roofline", "Box-2D1R", "--gpu", "h100")):
        line = one_line_error(run_cli, *args, "--measured", str(bad), "-o", str(tmp_path / "x.html"))
        assert needle in line


CORPUS_HEAD = "gpu,date,stencil,unit,dtype,fuse,grid,gstencils,status\n"


@pytest.mark.parametrize("name, content, needle", [
    ("missing.json", None, "does not exist"),
    ("bad.json", "{not json", "not valid JSON"),
    ("latin1.csv", b"gpu,stencil\n\xe9\n", "not UTF-8"),
    ("notes.txt", "hello", "a .json or .csv file"),
    ("cols.csv", "gpu,stencil\nH100,Box-2D1R\n", "has no column unit, dtype, fuse, gstencils, status"),
    ("fuse.csv", CORPUS_HEAD + "NVIDIA H100 80GB HBM3,x,Box-2D1R,cuda_core,float,two,1x1,5,ok\n",
     "line 2, column 'fuse'"),
    ("gst.csv", CORPUS_HEAD + "NVIDIA H100 80GB HBM3,x,Box-2D1R,cuda_core,float,2,1x1,-5,ok\n",
     "line 2, column 'gstencils'"),
    ("unit.csv", CORPUS_HEAD + "NVIDIA H100 80GB HBM3,x,Box-2D1R,cpu,float,2,1x1,5,ok\n", "column 'unit'"),
    ("results.csv", "suite,case,stencil,device,unit\n", "give the results.json beside it"),
])
def test_refuses_an_unreadable_file(run_cli, tmp_path, name, content, needle):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    line = one_line_error(run_cli, "map", "--gpu", "h100", "--measured", str(path), "-o", str(tmp_path / "m.html"))
    assert needle in line


def test_refuses_a_directory_and_a_fifo(run_cli, tmp_path):
    import os

    (tmp_path / "dir.json").mkdir()
    assert "is a directory" in one_line_error(run_cli, "map", "--gpu", "h100", "--measured",
                                              str(tmp_path / "dir.json"))
    os.mkfifo(tmp_path / "pipe.csv")
    assert "FIFO" in one_line_error(run_cli, "map", "--gpu", "h100", "--measured", str(tmp_path / "pipe.csv"))


def test_hostile_files_are_refused_quickly(run_cli, tmp_path):
    """A JSON nested 200,000 deep, a CSV of a million short rows, a field longer than CSV allows: one line each,
    within seconds (the bounded readers of tcadvisor.files, a row cap, the csv module's field limit)."""
    import time

    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    row = "NVIDIA H100 80GB HBM3,x,Box-2D1R,cuda_core,float,2,1x1,5,ok\n"
    (tmp_path / "many.csv").write_text(CORPUS_HEAD + row * 1_000_000)
    (tmp_path / "wide.csv").write_text(CORPUS_HEAD + "NVIDIA H100 80GB HBM3,x," + "B" * 200_000 + ",cuda_core\n")
    for name, needle in (("deep.json", "nested"), ("many.csv", "more than 100,000 runs"), ("wide.csv", "not CSV")):
        t0 = time.monotonic()
        assert needle in one_line_error(run_cli, "map", "--gpu", "h100", "--measured", str(tmp_path / name))
        assert time.monotonic() - t0 < 10


def test_refuses_a_file_that_measured_nothing_drawn(run_cli, tmp_path):
    line = one_line_error(run_cli, "map", "--gpu", "h100", "--dtype", "float", "--shape", "star",
                          "--measured", str(RESULTS_H100), "-o", str(tmp_path / "m.html"))
    assert "no run measured a cell of this map (Star-2D1R to Star-2D8R in float" in line
    line = one_line_error(run_cli, "roofline", "Box-2D1R", "--fuse", "2", "--dtype", "bfloat16", "--gpu", "h100",
                          "--measured", str(RESULTS_H100), "-o", str(tmp_path / "r.html"))
    assert "no run of Box-2D1R in bfloat16" in line and "it measured t = 7: pass --fuse T with one of them" in line


def test_the_spec_a_run_predicted_with_is_not_the_gpu_it_measured(hand, tmp_path):
    """validate --gpu a100 on an H100 records the A100's predictions beside the H100's measurements."""
    raw = json.loads(hand[0].read_text())
    raw["spec"] = {"name": find_spec("a100").name}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(TcAdvisorError, match=f"recorded on {DEVICE} \\(--gpu h100\\), not on NVIDIA A100"):
        maps.map_data("box", 2, "float", ["a100"], radii="1", fuses="1", measured=path)


def test_the_api_refuses_as_the_cli_does(hand):
    with pytest.raises(TcAdvisorError, match="not on NVIDIA A100"):
        maps.map_data("box", 2, "float", ["a100"], radii="1", fuses="1", measured=hand[0])
    with pytest.raises(TcAdvisorError, match="expected the path of"):
        measured.load_measured(42)
