"""Figures checked against the model: the numbers inside a map, a roofline and the paper's figures.

Expected values come from :func:`tcadvisor.advisor.advise` (the advisor a user
asks one configuration at a time) or from the paper's printed tables, never
from the figure code under test.
"""
import math
import re
import subprocess
import sys
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from tcadvisor import paper
from tcadvisor.advisor import TIE_TOLERANCE, AlphaChoice, advise
from tcadvisor.cli import main
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import UNITS, find_spec
from tcadvisor.impls import find_impl
from tcadvisor.stencil import Stencil, parse_stencil

go = pytest.importorskip("plotly.graph_objects")

from tcadvisor.plots import maps, output, paper_figures, roofline  # noqa: E402

A100, H100 = find_spec("a100"), find_spec("h100")
LABEL = {"tensor_core": "Tensor Cores", "sparse_tensor_core": "Sparse Tensor Cores"}


@pytest.fixture(scope="module")
def h100_float():
    data = maps.map_data("box", 2, "float", [H100], model="base")
    return data, maps.map_figure(data)


def heatmap(fig, unit, gpu):
    name = f"{LABEL[unit]}, {gpu.name}" if unit in LABEL else f"fastest unit, {gpu.name}"
    found = [t for t in fig.data if isinstance(t, go.Heatmap) and t.name == name]
    assert len(found) == 1, name
    return found[0]


def opt(adv, unit):
    return next(o for o in adv.options if o.unit == unit)


# --------------------------------------------------------------------------- maps


@pytest.mark.parametrize("unit", ["tensor_core", "sparse_tensor_core"])
@pytest.mark.parametrize("radius,fuse", [(1, 1), (1, 11), (2, 4), (3, 9), (7, 1), (8, 16)])
def test_map_cell_is_the_advisors_speedup(h100_float, unit, radius, fuse):
    _, fig = h100_float
    trace = heatmap(fig, unit, H100)
    z = np.asarray(trace.z, dtype=float)[radius - 1, fuse - 1]
    o = opt(advise(Stencil.box(2, radius), "float", H100, fuse=fuse, model="base"), unit)
    assert math.isclose(2.0 ** z, o.speedup, rel_tol=1e-12)
    assert trace.text[radius - 1][fuse - 1] == str(o.scenario)  # the scenario label of the cell
    custom = trace.customdata[radius - 1][fuse - 1]
    assert custom[0] == f"Box-2D{radius}R" and int(custom[1]) == fuse
    assert math.isclose(float(custom[5]), float(o.alpha), rel_tol=1e-3)  # hover: α, β, I, bound, GStencils/s
    assert math.isclose(float(custom[6]), float(o.beta), rel_tol=1e-3)
    assert math.isclose(float(custom[7]), o.intensity, rel_tol=1e-3)
    assert custom[8] == o.bound
    assert math.isclose(float(custom[11]), o.gstencils, rel_tol=1e-3)


def test_map_fastest_unit_and_best_depth_agree_with_advise(h100_float):
    data, fig = h100_float
    for radius in range(1, 9):
        adv = advise(Stencil.box(2, radius), "float", H100, max_fuse=16, model="base")
        best = data[(data["radius"] == radius) & data["best"]]
        assert len(best) == 1
        assert (best["unit"].iloc[0], best["fuse"].iloc[0]) == (adv.verdict.unit, adv.verdict.fuse)
        row = list(heatmap(fig, "winner", H100).text[radius - 1])
        assert row.count("★") == 1 and row.index("★") == adv.verdict.fuse - 1
    trace = heatmap(fig, "winner", H100)
    for radius, fuse in [(1, 3), (1, 12), (3, 2), (6, 1), (8, 12)]:
        at = advise(Stencil.box(2, radius), "float", H100, fuse=fuse, model="base").at_fuse
        assert UNITS[int(trace.z[radius - 1][fuse - 1])] == at.unit


def boundary_edges(cells):
    """Edges of unit squares that belong to exactly one cell of ``cells`` (cell (i, j) centred on (j, i))."""
    count = Counter()
    for i, j in cells:
        for edge in (((j - .5, i - .5), (j + .5, i - .5)), ((j - .5, i + .5), (j + .5, i + .5)),
                     ((j - .5, i - .5), (j - .5, i + .5)), ((j + .5, i - .5), (j + .5, i + .5))):
            count[frozenset(edge)] += 1
    return {e for e, n in count.items() if n == 1}


def test_sweet_spot_outline_encloses_exactly_the_cells_with_R_above_1(h100_float):
    data, fig = h100_float
    lines = [t for t in fig.data if isinstance(t, go.Scatter) and t.legendgroup == "sweet" and t.x]
    assert len(lines) == 2  # one outline per Tensor Core panel
    for trace, unit in zip(lines, ("tensor_core", "sparse_tensor_core")):
        rows = data[(data["unit"] == unit) & (data["speedup"] > 1 + TIE_TOLERANCE)]
        assert len(rows) > 0
        expected = boundary_edges({(r - 1, t - 1) for r, t in zip(rows["radius"], rows["fuse"])})
        drawn = set()
        xs, ys = list(trace.x), list(trace.y)
        for k in range(0, len(xs), 3):
            assert xs[k + 2] is None
            drawn.add(frozenset(((xs[k], ys[k]), (xs[k + 1], ys[k + 1]))))
        assert drawn == expected


def test_several_gpus_share_one_colour_scale_centred_on_1():
    gpus = [find_spec(g) for g in ("a100", "h100", "h200", "b200")]
    data = maps.map_data("box", 2, "float", gpus, radii=range(1, 5), fuses=range(1, 9), model="base")
    fig = maps.map_figure(data)
    speed = [t for t in fig.data if isinstance(t, go.Heatmap) and t.coloraxis == "coloraxis"]
    assert len(speed) == 2 * len(gpus)  # every speedup panel of every GPU on the one colour axis
    assert all(t.zmin is None and t.zmax is None for t in speed)
    ca = fig.layout.coloraxis
    assert ca.cmin == -ca.cmax and ca.cmid == 0
    top = max(abs(np.log2(v)) for v in data["speedup"].dropna())
    assert ca.cmax >= min(top, 4.0)  # covers every GPU's values (up to the 16× clip)
    ticks = dict(zip(ca.colorbar.tickvals, ca.colorbar.ticktext))
    assert ticks[0] == "1×" and ticks[1] == "2×" and ticks[-1] == "0.5×"
    # the same configuration on two GPUs: each cell is that GPU's advise(, model="base") answer
    for gpu in gpus:
        z = heatmap(fig, "sparse_tensor_core", gpu).z[1][6]  # r = 2, t = 7
        R = opt(advise(Stencil.box(2, 2), "float", gpu, fuse=7, model="base"), "sparse_tensor_core").speedup
        assert math.isclose(2.0 ** z, R, rel_tol=1e-12)
    assert len({a.text for a in fig.layout.annotations if a.textangle == -90}) == len(gpus)  # a label per row


def test_unavailable_unit_is_a_panel_note_not_an_error():
    data = maps.map_data("box", 3, "double", [A100], radii=[1, 2], fuses=[1, 2, 3], model="base")
    fig = maps.map_figure(data)
    sparse = heatmap(fig, "sparse_tensor_core", A100)
    assert np.isnan(np.asarray(sparse.z, dtype=float)).all()
    notes = [a.text for a in fig.layout.annotations if "not available on this GPU/precision" in a.text]
    assert len(notes) == 1 and "double" in notes[0]
    dense = heatmap(fig, "tensor_core", A100)
    assert np.isfinite(np.asarray(dense.z, dtype=float)).all()


def test_no_cuda_core_baseline_is_a_panel_note():
    """half on the V100: its spec gives no FP16 CUDA-core rate, so there is no speedup to colour; the panels say why
    (the H200's spec, which this test used until 2026-11-26, now gives its SM's FP16 rate)."""
    V100 = find_spec("v100")
    data = maps.map_data("box", 2, "half", [V100], radii=[1, 2], fuses=[1, 2], model="base")
    fig = maps.map_figure(data)
    notes = [a.text for a in fig.layout.annotations if "not available on this GPU/precision" in a.text]
    assert any("No speedup: CUDA cores not available" in n for n in notes)
    assert np.isnan(np.asarray(heatmap(fig, "sparse_tensor_core", V100).z, dtype=float)).all()
    winners = np.asarray(heatmap(fig, "winner", V100).z, dtype=float)
    # no CUDA-core option: every cell goes to a Tensor Core unit, the one advise picks at that depth
    for i, r in enumerate([1, 2]):
        for j, t in enumerate([1, 2]):
            adv = advise(Stencil.box(2, r), "half", V100, fuse=t, model="base")
            assert winners[i, j] == UNITS.index(adv.at_fuse.unit) != UNITS.index("cuda_core")


def test_map_honours_impl_alpha_and_ranges():
    data = maps.map_data("star", 2, "double", [A100], radii=[1, 3], fuses=[2, 5, 6],
                         alpha=AlphaChoice.parse("0.25"), model="base")
    assert sorted(data["radius"].unique()) == [1, 3] and sorted(data["fuse"].unique()) == [2, 5, 6]
    tc = data[(data["unit"] == "tensor_core")]
    assert (tc["alpha"] == 0.25).all()
    adv = advise(Stencil.star(2, 3), "double", A100, fuse=5, alpha=AlphaChoice.parse("0.25"), model="base")
    row = tc[(tc["radius"] == 3) & (tc["fuse"] == 5)].iloc[0]
    assert math.isclose(row["speedup"], opt(adv, "tensor_core").speedup, rel_tol=1e-12)
    fig = maps.map_figure(data)
    assert list(fig.layout.xaxis.ticktext) == ["2", "5", "6"] and list(fig.layout.yaxis.ticktext) == ["1", "3"]


def test_axis_titles_carry_units(h100_float):
    _, fig = h100_float
    assert fig.layout.xaxis.title.text.startswith("fusion depth t")
    assert fig.layout.yaxis.title.text == "radius r"


# --------------------------------------------------------------------------- roofline


def trace_named(fig, prefix):
    found = [t for t in fig.data if t.name and t.name.startswith(prefix)]
    assert found, prefix
    return found


def test_roofline_points_roofs_and_ridges_are_the_models():
    adv = advise(parse_stencil("Box-2D1R"), "float", A100, fuse=7, model="base")
    fig = roofline.roofline_figure(adv)
    for o in adv.options:
        pts = [t for t in fig.data if t.name == f"{o.label}, {o.impl.name}, t = 7" and t.mode.startswith("markers")]
        assert math.isclose(pts[0].x[0], o.intensity) and math.isclose(pts[0].y[0], o.attainable_flops / 1e12)
        roof_trace = trace_named(fig, f"{o.label} {o.precision.upper()}:")[0]
        on_roof = np.exp(np.interp(np.log(o.intensity), np.log(roof_trace.x), np.log(roof_trace.y)))
        executed = o.executed_flops / 1e12
        assert math.isclose(on_roof, executed, rel_tol=1e-3)  # the executed point sits on its unit's roof
        if o.is_tensor:
            hollow = [t for t in fig.data if t.name == f"{o.label}, {o.impl.name}, t = 7: executed"][0]
            assert math.isclose(hollow.y[0], executed)
            assert math.isclose(pts[0].y[0] / hollow.y[0], float(o.alpha / o.beta))  # useful = α/β × executed
    ridges = sorted(t.x[0] for t in fig.data if t.name and t.name.startswith("ridge point"))
    assert ridges == pytest.approx(sorted([A100.ridge("cuda_core", "fp32"), A100.ridge("tensor_core", "tf32"),
                                           A100.ridge("sparse_tensor_core", "tf32")]))
    notes = " ".join(a.text for a in fig.layout.annotations)
    assert "scenario 4" in notes and "scenario 3" in notes  # dense TC: scenario 4 win; sparse: scenario 3
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "arithmetic intensity I [FLOP/byte]"
    assert fig.layout.yaxis.title.text == "attainable [TFLOP/s]"


def test_roofline_double_says_sparse_is_not_available():
    adv = advise(parse_stencil("Box-3D1R"), "double", A100, fuse=3, alpha="paper", model="base")
    fig = roofline.roofline_figure(adv)
    notes = " ".join(a.text for a in fig.layout.annotations)
    assert "Sparse Tensor Cores</b>: not available" in notes and "1.005" in notes


# --------------------------------------------------------------------------- the paper's figures


def test_fig10_intensities_are_eq8_and_match_table2():
    fig = paper_figures.fig10_intensity(A100)
    for trace in fig.data:
        if not isinstance(trace, go.Scatter) or not trace.name or trace.xaxis not in ("x", "x2"):
            continue
        dtype = "double" if trace.xaxis == "x" else "float"
        for t, i in zip(trace.x, trace.y):
            cc = advise(parse_stencil(trace.name), dtype, A100, fuse=int(t), model="base").options[0]
            assert math.isclose(i, cc.intensity)
    # the paper's printed EBISU intensities (Table 2) are on the curves
    box = {(t.name, t.xaxis): dict(zip(t.x, t.y)) for t in fig.data if t.name}
    assert paper.matches(box[("Box-2D1R", "x")][3], "3.38")
    assert paper.matches(box[("Box-2D1R", "x2")][7], "15.75")


def test_fig8_each_panel_shows_its_scenario():
    fig = paper_figures.fig8_scenarios(A100)
    titles = [a.text for a in fig.layout.annotations if a.text.startswith("(")]
    assert len(titles) == 4
    for k, text in enumerate(titles, start=1):
        m = re.search(r"scenario (\d).*<br>(\S+), t = (\d+), (\w+)", text)
        assert int(m.group(1)) == k
        tc = advise(parse_stencil(m.group(2)), m.group(4), A100, fuse=int(m.group(3)), alpha="paper", model="base").options[1]
        assert tc.scenario == k
        if k == 4:
            assert tc.speedup > 1


def test_scenario_plane_places_table3_cases_in_the_printed_scenario():
    """The plane of Figs. 9/14, evaluated at the intensities the paper prints for Table 3."""
    for case, name, fuse, dtype, cc, tc, scenario in paper.TABLE3:
        adv = paper_figures.table3_advice(A100)[case - 1][2]
        unit = "sparse_tensor_core" if tc[0] == "SPIDER" else "tensor_core"
        o = opt(adv, unit)
        plane = paper_figures._plane(A100, adv.options[0].peak, o.peak, np.array([adv.options[0].intensity]),
                                     np.array([o.intensity]))
        assert int(plane["scenario"][0, 0]) == scenario
        assert math.isclose(plane["R"][0, 0], o.speedup, rel_tol=1e-12)


def test_fig9_regions_are_coloured_by_scenario():
    fig = paper_figures.fig9_plane(A100)
    regions = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(regions) == 2  # double, float
    hm = regions[0]  # double: case 1 (scenario 2) and case 5 (scenario 4, Tensor Cores lose)
    x, y, z = np.asarray(hm.x), np.asarray(hm.y), np.asarray(hm.z, dtype=float)

    def code_at(i_cc, i_tc):
        return z[np.searchsorted(y, i_tc) - 1, np.searchsorted(x, i_cc) - 1]

    assert code_at(3.375, 12.25) == 1       # scenario 2 (codes: scenario - 1; 3 = 4 win; 4 = 4 lose)
    assert code_at(10.125, 85.75) == 4      # scenario 4, β above the threshold
    assert code_at(1.0, 2.0) == 0           # scenario 1
    assert np.isnan(code_at(10.0, 5.0))     # I_TC < I_CC cannot happen


def test_table3_figure_cases_match_the_paper():
    cases = paper_figures.table3_advice(A100)
    for (case, dtype, adv, cc_unit, tc_unit, _, _, scenario), row in zip(cases, paper.TABLE3):
        tc = opt(adv, tc_unit)
        assert tc.scenario == scenario == row[6]
        assert paper.matches(tc.intensity, row[5][1])
        assert tc.bound == row[5][3] and opt(adv, cc_unit).bound == row[4][3]
    fig = paper_figures.table3_roofline(A100)
    labels = [t.text[0] for t in fig.data if t.mode == "text"]
    assert sorted(labels) == sorted(paper_figures.CIRCLED[:6] * 2)


def test_fig13_sparse_raises_the_ceiling_as_in_table4():
    fig = paper_figures.fig13_sparse_ceiling(A100)
    sub = fig.layout.title.text
    assert "dense TF32 compute-bound" in sub and "sparse memory-bound" in sub  # Table 4: ridge 81 vs 161


def test_fig14_sparse_region_contains_the_dense_one():
    fig = paper_figures.fig14_sparse_plane(A100)
    z = np.asarray(fig.data[0].z, dtype=float)
    codes = set(np.unique(z[~np.isnan(z)]).astype(int))
    assert {2, 3} <= codes and 4 not in codes  # sparse gains cells; dense never wins where sparse loses


def test_every_paper_figure_builds_on_other_gpus():
    for key in ("h100", "v100", "mi300x"):
        gpu = find_spec(key)
        for name, entry in paper_figures.FIGURES.items():
            try:
                fig = entry.build(gpu)
            except Exception as exc:  # only a clean "this GPU cannot show it" is acceptable
                from tcadvisor.errors import TcAdvisorError

                assert isinstance(exc, TcAdvisorError), (key, name, exc)
                continue
            assert fig.data, (key, name)


# --------------------------------------------------------------------------- output and CLI


def test_cli_map_writes_offline_html_and_csv(run_cli, tmp_path):
    html, csv = tmp_path / "box2d-h100.html", tmp_path / "box2d.csv"
    r = run_cli("map", "--gpu", "h100", "--dtype", "float", "--shape", "box", "--dims", "2", "-o", str(html),
                "--csv", str(csv), "--model", "base")
    assert r.returncode == 0, r.stderr
    text = html.read_text(encoding="utf-8")
    assert "Plotly.newPlot" in text and len(text) > 3_000_000  # plotly.js embedded
    assert not re.search(r"<script[^>]+src=[\"']https?:", text)  # nothing fetched from a CDN
    data = pd.read_csv(csv)
    assert len(data) == 8 * 16 * 3
    cell = data[(data["radius"] == 4) & (data["fuse"] == 3) & (data["unit"] == "tensor_core")].iloc[0]
    o = opt(advise(Stencil.box(2, 4), "float", H100, fuse=3, model="base"), "tensor_core")
    assert math.isclose(cell["speedup"], o.speedup, rel_tol=1e-9) and cell["scenario"] == o.scenario


def test_cli_roofline_and_figures(run_cli, tmp_path):
    r = run_cli("roofline", "Box-2D1R", "--fuse", "7", "--dtype", "float", "--gpu", "a100",
                "-o", str(tmp_path / "roofline.html"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "roofline.html").stat().st_size > 3_000_000
    r = run_cli("figures", "-o", str(tmp_path / "figs"))
    assert r.returncode == 0, r.stderr
    written = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert written == sorted([f"{n}.html" for n in paper_figures.FIGURES] + ["index.html", output.plotly_js_name()])
    index = (tmp_path / "figs" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{n}.html"' in index for n in paper_figures.FIGURES)


BAD = [
    (["map", "--gpu", "a100,h1000"], "unknown GPU 'h1000'"),
    (["map", "--gpu", ","], "names no GPU"),
    (["map", "--radii", "8-1"], "runs backwards"),
    (["map", "--radii", "0-3"], "radius"),
    (["map", "--fuse", "a-b"], "--fuse"),
    (["map", "--fuse", "0"], "fusion depth"),
    (["map", "--dtype", "quad"], "unknown dtype"),
    (["map", "--alpha", "2"], "outside (0, 1]"),
    (["map", "--impl", "Foo"], "unknown implementation"),
    (["map", "-o", "map.pdf"], "cannot tell the format"),
    (["roofline", "Blob-2D1R"], "unknown stencil"),
    (["roofline", "Box-2D1R", "-o", "r.jpeg"], "cannot tell the format"),
    (["roofline", "Box-2D1R", "--dtype", "bfloat16", "--gpu", "v100"], "no roofline to draw"),
    (["figures", "--format", "gif"], "--format"),
    (["figures", "--only", "fig99"], "unknown figure"),
    (["figures", "--gpu", "nope"], "unknown GPU"),
]


@pytest.mark.parametrize("args,needle", BAD)
def test_cli_errors_are_one_line(run_cli, tmp_path, args, needle):
    r = run_cli(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_static_export_without_exporter_says_what_to_install(monkeypatch, capsys, tmp_path, suffix):
    monkeypatch.setattr(output, "_kaleido_image", lambda fig, fmt: None)
    monkeypatch.setattr(output, "find_chromium", lambda: None)
    rc = main(["map", "--gpu", "a100", "--radii", "1-2", "--fuse", "1-2", "-o", str(tmp_path / f"m.{suffix}")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "kaleido" in err[0] and "m.html" in err[0]
    assert not (tmp_path / f"m.{suffix}").exists()


def test_advise_does_not_import_plotting():
    code = ("import sys, contextlib, io\nfrom tcadvisor.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['advise', 'Box-2D1R', '--gpu', 'a100'])\n"
            "print(sorted(m for m in ('plotly', 'pandas', 'tcadvisor.plots.maps') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_range_parsing():
    from tcadvisor.plots.commands import parse_int_list

    assert parse_int_list("1-4", "--radii", int) == [1, 2, 3, 4]
    assert parse_int_list("1..3,8", "--radii", int) == [1, 2, 3, 8]
    assert parse_int_list(" 5 ", "--radii", int) == [5]
    assert parse_int_list("4,2,2", "--radii", int) == [2, 4]


def test_alpha_fraction_in_map_hover_matches_spider():
    """With the paper's α, SPIDER's Box-2D1R at t = 7 (the paper's configuration) has α = 15/32."""
    data = maps.map_data("box", 2, "float", [A100], radii=[1], fuses=[7], alpha="paper")
    sp = data[data["unit"] == "sparse_tensor_core"].iloc[0]
    assert Fraction(sp["alpha"]).limit_denominator(64) == Fraction(15, 32)
    assert sp["alpha_source"] == "paper"


# --------------------------------------------------------------------------- the Python API's arguments

COLUMNS = ["gpu", "radius", "fuse", "unit", "available", "alpha", "speedup", "gstencils", "winner", "best"]


@pytest.mark.parametrize("shape,dims,dtype,gpus", [
    ("box", 2, "fp32", [H100]),                # the alias that gave an all-NaN map
    ("Box", "2", "float32", "h100"),           # names where objects are expected
    ("box", 2, "single", ["H100"]),
    ("box", 2, "f32", H100),                   # one spec, not a list
])
def test_map_data_normalises_aliases_and_accepts_names(shape, dims, dtype, gpus):
    ref = maps.map_data("box", 2, "float", [H100], radii=[1, 2], fuses=[1, 2, 3])
    data = maps.map_data(shape, dims, dtype, gpus, radii="1-2", fuses=range(1, 4))
    assert set(data["dtype"]) == {"float"}
    assert np.isfinite(data[data["unit"] != "cuda_core"]["speedup"].astype(float)).all()
    pd.testing.assert_frame_equal(data[COLUMNS], ref[COLUMNS])


def test_map_data_reads_gpu_lists_like_the_cli():
    both = maps.map_data("star", 2, "fp64", "a100,h100", radii=1, fuses=[2])
    listed = maps.map_data("star", 2, "double", ["a100", find_spec("h100")], radii=[1], fuses=2)
    pd.testing.assert_frame_equal(both[COLUMNS], listed[COLUMNS])
    assert list(both["gpu_order"].unique()) == [0, 1] and list(both["gpu"].unique()) == [A100.short, H100.short]


def cli_error(capsys, args) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    return err[0].removeprefix("tcadvisor: error: ")


@pytest.mark.parametrize("kwargs,cli", [
    (dict(dtype="quad"), ["--dtype", "quad"]),
    (dict(gpus="h1000"), ["--gpu", "h1000"]),
    (dict(gpus=["a100", "h1000"]), ["--gpu", "a100,h1000"]),
    (dict(radii=0), ["--radii", "0"]),
    (dict(radii=[1, 65]), ["--radii", "1,65"]),
    (dict(fuses=0), ["--fuse", "0"]),
    (dict(fuses=[2, 2000]), ["--fuse", "2,2000"]),
    (dict(alpha="2"), ["--alpha", "2"]),
    (dict(alpha=1.5), ["--alpha", "1.5"]),
    (dict(alpha="often"), ["--alpha", "often"]),
    (dict(impls=["Foo"]), ["--impl", "Foo"]),
    (dict(impls=["SPIDER", "SPIDER"]), ["--impl", "SPIDER", "--impl", "SPIDER"]),
])
def test_map_data_refuses_what_the_cli_refuses_with_the_same_line(capsys, kwargs, cli):
    args = dict(shape="box", dims=2, dtype="float", gpus=[A100], radii=[1], fuses=[1])
    args.update(kwargs)
    with pytest.raises(TcAdvisorError) as info:
        maps.map_data(**args)
    assert str(info.value) == cli_error(capsys, ["map", "--gpu", "a100", "--radii", "1", "--fuse", "1", *cli])


@pytest.mark.parametrize("kwargs,needle", [
    (dict(shape="hex"), "shape 'hex' is not supported"),
    (dict(shape=3), "shape 3 is not supported"),
    (dict(dims=4), "dimensionality 4"),
    (dict(dims=True), "dimensionality True"),
    (dict(dims=None), "dimensionality None"),
    (dict(gpus=5), "GPU 5 is neither a GPU spec nor a GPU name"),
    (dict(gpus=[]), "no GPU given"),
    (dict(gpus=","), "names no GPU"),
    (dict(gpus=[A100, 3.5]), "GPU 3.5 is neither"),
    (dict(radii=[]), "radii names no values"),
    (dict(radii=2.5), "not understood"),
    (dict(radii=[True]), "radius True"),
    (dict(radii="8-1"), "runs backwards"),
    (dict(fuses="a-b"), "fusion depths 'a-b' is not understood"),
    (dict(fuses=[1.5]), "fusion depth 1.5"),
    (dict(alpha=True), "--alpha True"),
    (dict(alpha=0), "outside (0, 1]"),
    (dict(impls=5), "implementation 5 is neither a profile nor a name"),
    (dict(impls={"tensor_core": "SPIDER"}), "SPIDER runs on sparse_tensor_core, not on tensor_core"),
    (dict(impls={"gpu": "EBISU"}), "unit 'gpu' is not an execution unit"),
])
def test_map_data_bad_arguments_are_one_line_errors(kwargs, needle):
    args = dict(shape="box", dims=2, dtype="float", gpus=[A100], radii=[1], fuses=[1])
    args.update(kwargs)
    with pytest.raises(TcAdvisorError) as info:  # never an AttributeError or TypeError from inside pandas
        maps.map_data(**args)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_figure_functions_refuse_what_they_cannot_draw():
    for call, needle in ((lambda: maps.map_figure("box"), "not str"),
                         (lambda: maps.map_figure(pd.DataFrame()), "not an empty DataFrame"),
                         (lambda: maps.map_figure(pd.DataFrame({"radius": [1]})), "without gpu_order"),
                         (lambda: roofline.roofline_figure("Box-2D1R"), "roofline_of(stencil, dtype, gpu)"),
                         (lambda: roofline.roofline_of(5), "stencil 5 is neither a Stencil nor a stencil name"),
                         (lambda: roofline.roofline_of("Box-2D1R", "quad"), "unknown dtype 'quad'"),
                         (lambda: roofline.roofline_of("Box-2D1R", gpu=7), "is neither a GPU spec"),
                         (lambda: roofline.roofline_of("Box-2D1R", fuse=0), "fusion depth 0"),
                         (lambda: paper_figures.fig10_intensity("nope"), "unknown GPU 'nope'"),
                         (lambda: paper_figures.all_figures(3), "GPU 3 is neither"),
                         (lambda: paper_figures.write_figures("/tmp", A100, names=["fig99"]), "unknown figure"),
                         (lambda: output.write_figure("map", "/tmp/x.html"), "not str"),
                         (lambda: output.write_csv([1, 2], "/tmp/x.csv"), "not list")):
        with pytest.raises(TcAdvisorError) as info:
            call()
        assert needle in str(info.value) and "\n" not in str(info.value), (needle, str(info.value))


def points(fig):
    return [(t.name, tuple(t.x), tuple(t.y)) for t in fig.data if t.name and t.mode and "markers" in t.mode]


def test_roofline_of_names_is_the_roofline_of_the_advice():
    ref = roofline.roofline_figure(advise(parse_stencil("Box-2D1R"), "float", A100, fuse=7, model="base"))
    by_name = roofline.roofline_of("Box-2D1R", "fp32", "a100", fuse=7)
    assert points(by_name) == points(ref) and len(points(ref)) >= 5
    custom = roofline.roofline_of(Stencil.box(2, 1), "float", A100, fuse="7", impls=["TCStencil"], alpha="1/4")
    adv = advise(Stencil.box(2, 1), "float", A100, fuse=7, alpha=AlphaChoice.parse("0.25"),
                 impls={"tensor_core": find_impl("TCStencil")}, model="base")
    assert points(custom) == points(roofline.roofline_figure(adv))


def test_paper_figures_accept_gpu_names(tmp_path):
    by_name, by_spec = paper_figures.fig10_intensity("a100"), paper_figures.fig10_intensity(A100)
    assert [tuple(t.y) for t in by_name.data] == [tuple(t.y) for t in by_spec.data]
    result = paper_figures.write_figures(tmp_path / "f", "h100", names=["fig07-roofline"], formats=["html"])
    assert [p.name for p, _ in result.written] == [output.plotly_js_name(), "fig07-roofline.html", "index.html"]
    assert result.skipped == [] and result.failed == []


# --------------------------------------------------------------------------- α's source and the MMA instruction


def with_instruction_columns(real_sweep):
    """``sweep`` checked to give the ``mma`` and ``peak`` columns (each equal to the row's :func:`advise` option)."""

    def sweep(shape, dims, dtype, gpu, radii, fuses, impls=None, alpha_choice=None, model="base", progress=None):
        df = real_sweep(shape, dims, dtype, gpu, radii=radii, fuses=fuses, impls=impls, alpha_choice=alpha_choice,
                        model=model, progress=progress)
        assert "mma" in df.columns and "peak" in df.columns
        for _, row in df.head(6).iterrows():
            adv = advise(getattr(Stencil, shape)(dims, int(row["radius"])), dtype, gpu, fuse=int(row["fuse"]),
                         impls=impls, alpha_choice=alpha_choice, model="base")
            o = opt(adv, row["unit"])
            expected = str(o.mma_shape) if o.available and o.mma_shape else None
            assert (row["mma"] if isinstance(row["mma"], str) else None) == expected
        return df

    return sweep


def without_instruction_columns(real_sweep):
    def sweep(*args, **kwargs):
        return real_sweep(*args, **kwargs).drop(columns=["mma", "peak"], errors="ignore")

    return sweep


def panel_title(fig, unit):
    return next(a.text for a in fig.layout.annotations if a.text.startswith(f"<b>{LABEL[unit]}</b>"))


@pytest.mark.parametrize("alpha,source", [("paper", "paper"), ("constructed", "constructed"), ("0.25", "user")])
def test_map_hover_and_csv_show_alpha_source_and_instruction(monkeypatch, tmp_path, alpha, source):
    monkeypatch.setattr(maps, "sweep", with_instruction_columns(maps.sweep))
    data = maps.map_data("box", 2, "float", [A100], radii=[1, 2], fuses=[1, 7], alpha=alpha, model="base")
    fig = maps.map_figure(data)
    for unit in ("tensor_core", "sparse_tensor_core"):
        o = opt(advise(Stencil.box(2, 2), "float", A100, fuse=7, alpha=AlphaChoice.parse(alpha), model="base"), unit)
        custom = heatmap(fig, unit, A100).customdata[1][1]  # r = 2, t = 7
        assert custom[14] == source
        assert custom[15] == f"{o.mma_shape}, {o.peak / 1e12:.4g} TFLOP/s"
        assert str(o.mma_shape) in panel_title(fig, unit) and f"α: {source}" in panel_title(fig, unit)
    cc = data[data["unit"] == "cuda_core"]
    assert cc["mma"].isna().all()
    csv = pd.read_csv(output.write_csv(data, tmp_path / "m.csv"))
    row = csv[(csv["radius"] == 2) & (csv["fuse"] == 7) & (csv["unit"] == "sparse_tensor_core")].iloc[0]
    o = opt(advise(Stencil.box(2, 2), "float", A100, fuse=7, alpha=AlphaChoice.parse(alpha), model="base"), "sparse_tensor_core")
    assert row["mma"] == str(o.mma_shape) and math.isclose(row["peak"], o.peak)
    assert math.isclose(row["alpha"], float(o.alpha)) and row["alpha_source"] == o.alpha_source


def test_map_without_instruction_columns_still_shows_alpha_source(monkeypatch):
    monkeypatch.setattr(maps, "sweep", without_instruction_columns(maps.sweep))
    data = maps.map_data("box", 2, "float", [A100], radii=[1], fuses=[7], alpha="constructed")
    assert "mma" not in data.columns
    fig = maps.map_figure(data)
    custom = heatmap(fig, "sparse_tensor_core", A100).customdata[0][0]
    assert custom[14] == "constructed" and custom[15] == "–"
    assert "α: constructed" in panel_title(fig, "sparse_tensor_core")


@pytest.mark.parametrize("alpha,source", [("paper", "paper"), ("constructed", "constructed"), ("0.25", "user")])
def test_roofline_points_show_alpha_source_and_instruction(alpha, source):
    adv = advise(parse_stencil("Box-2D1R"), "float", A100, fuse=7, alpha=AlphaChoice.parse(alpha), model="base")
    fig = roofline.roofline_figure(adv)
    for o in adv.options:
        point = next(t for t in fig.data if t.name == f"{o.label}, {o.impl.name}, t = 7")
        if o.is_tensor:
            assert str(o.mma_shape) in point.text[0] and f"({source})" in point.text[0]
            assert f"instruction {o.mma_shape}: peak {o.peak / 1e12:.4g} TFLOP/s" in point.hovertemplate
            assert f"({source}), β =" in point.hovertemplate
        else:
            assert "α = 1, β = 1" in point.hovertemplate and "instruction" not in point.hovertemplate
        roof_trace = trace_named(fig, f"{o.label} {o.precision.upper()}:")[0]
        assert (f"({o.mma_shape})" in roof_trace.name) == o.is_tensor


def test_roofline_draws_the_instructions_own_peak():
    """ConvStencil issues FP64 m8n8k4, which the H100 spec rates at half the FP64 Tensor Core peak:
    its roof and ridge are drawn at that instruction's rate, not the precision's."""
    adv = advise(parse_stencil("Box-2D7R"), "double", H100, fuse=1, model="base")
    tc = opt(adv, "tensor_core")
    assert str(tc.mma_shape) == "m8n8k4" and tc.peak == H100.instruction_peak("tensor_core", "fp64", "m8n8k4").value
    fig = roofline.roofline_figure(adv)
    roof_trace = trace_named(fig, "Tensor Cores FP64:")[0]
    assert roof_trace.name.endswith(f"{tc.peak / 1e12:.4g} TFLOP/s (m8n8k4)")
    ridge = next(t for t in fig.data if t.name == "ridge point of Tensor Cores FP64")
    assert math.isclose(ridge.x[0], tc.peak / H100.bandwidth.value, rel_tol=1e-12)
    assert math.isclose(ridge.x[0], H100.ridge("tensor_core", "fp64") / 2, rel_tol=1e-2)



# --------------------------------------------------------------------------- the default map: the kernels that run


@pytest.fixture(scope="module")
def h100_float_kernels():
    data = maps.map_data("box", 2, "float", [H100], radii=range(1, 5))
    return data, maps.map_figure(data)


def test_default_map_cells_are_the_default_advice(h100_float_kernels):
    """A cell a bundled kernel runs is advise's refined option there; one it cannot run shows the unit's bound,
    marked '(n)', and is never the fastest nor the best."""
    data, fig = h100_float_kernels
    for radius in range(1, 5):
        adv = advise(Stencil.box(2, radius), "float", H100, max_fuse=16)
        best = data[(data["radius"] == radius) & data["best"]]
        assert (best["unit"].iloc[0], best["fuse"].iloc[0]) == (adv.verdict.unit, adv.verdict.fuse)
        for unit in ("tensor_core", "sparse_tensor_core"):
            trace = heatmap(fig, unit, H100)
            for fuse in range(1, 17):
                o = adv.by_depth[unit][fuse]
                row = data[(data["radius"] == radius) & (data["fuse"] == fuse) & (data["unit"] == unit)].iloc[0]
                label = trace.text[radius - 1][fuse - 1]
                if o.available:
                    assert not row["bound_only"] and math.isclose(row["gstencils"], o.gstencils, rel_tol=1e-12)
                    assert row["model"] == "refined" and "(" not in label
                else:  # advise: the kernel cannot run it; the map: the unit's bound, marked
                    assert o.kernel_refused and row["bound_only"] and row["model"] == "base"
                    assert math.isclose(row["gstencils"], row["bound_gstencils"], rel_tol=1e-12)
                    assert label.startswith("(") and not row["winner"] and not row["best"]
                    assert "the unit's bound" in trace.customdata[radius - 1][fuse - 1][16]
    assert "(n): no bundled kernel runs the cell" in fig.layout.title.text


def test_map_model_base_is_the_old_map():
    base = maps.map_data("box", 2, "float", [H100], radii=[1], fuses=[1, 9], model="base")
    assert set(base["impl"]) == {"EBISU", "ConvStencil", "SPIDER"} and not base["bound_only"].any()
    assert "(n)" not in maps.map_figure(base).layout.title.text
