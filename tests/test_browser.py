"""The generated HTML as a person sees it: opened in a real headless Chromium, with the network blocked.

Each page must load without any JavaScript error (uncaught exceptions, rejected
promises, console errors), must have drawn its plot (Plotly's SVG elements and,
for maps, the heatmap images exist), and a screenshot must not be blank.  Two
negative controls prove that the checks catch a broken and an empty page.

Needs Debian's ``chromium`` and ``chromium-driver`` and selenium (the ``test``
extra).  Locally the tests skip without them; under CI (``CI=true``, which
``.ci/run`` sets after installing both) they fail instead, so CI cannot pass
without running them.
"""
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
CHROMEDRIVER = shutil.which("chromedriver")
NETWORK_FREE = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--disable-quic", "--disable-extensions", "--disable-default-apps"]
# Collect errors from before the page's own scripts run.
ERROR_HOOK = """
window.__errors = [];
window.addEventListener('error', e => window.__errors.push('error: ' + (e.message || e.type)));
window.addEventListener('unhandledrejection', e => window.__errors.push('unhandled rejection: ' + String(e.reason)));
"""


def _unavailable(why: str):
    if IN_CI:
        pytest.fail(f"browser test cannot run in CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        _unavailable("needs chromium and chromedriver (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("needs selenium (pip install '.[test]')")
    profile = tempfile.mkdtemp(prefix="tcadvisor-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--window-size=1600,1800", f"--user-data-dir={profile}", *NETWORK_FREE]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": ERROR_HOOK})
        driver.execute_cdp_cmd("Network.enable", {})  # offline: anything fetched from the web fails the page
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*", "wss://*"]})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, path: Path, expect_plot: bool = True, timeout: float = 30) -> dict:
    """Load ``path``; return its JS errors, SEVERE console lines, SVG and heatmap counts and screenshot stats."""
    from PIL import Image
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier pages left
    driver.get(path.resolve().as_uri())
    if expect_plot:
        try:
            WebDriverWait(driver, timeout).until(lambda d: d.execute_script(
                "const g = document.querySelector('.js-plotly-plot');"
                "return !!(g && g._fullLayout && document.querySelectorAll('svg.main-svg').length);"))
        except Exception:  # noqa: BLE001 - report what the page did instead of a bare timeout
            pass
    errors = driver.execute_script("return window.__errors || []")
    severe = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    counts = driver.execute_script(
        "return {svg: document.querySelectorAll('svg.main-svg').length,"
        " heatmaps: document.querySelectorAll('g.hm image').length,"
        " lines: document.querySelectorAll('g.scatterlayer path.js-line').length,"
        " text: document.body ? document.body.innerText : ''}")
    pixels = np.asarray(Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB"), dtype=float)
    box = driver.execute_script(
        "const g = document.querySelector('.js-plotly-plot'); if (!g) return null;"
        "const r = g.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom];")
    if box:  # judge the plot's own area, not the empty window around it
        left, top, right, bottom = (max(0, int(v)) for v in box)
        pixels = pixels[top:bottom, left:right]
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return {
        "errors": list(errors) + severe,
        "svg": counts["svg"], "heatmaps": counts["heatmaps"], "lines": counts["lines"], "text": counts["text"],
        "std": float(pixels.std()),
        "inked": float((pixels.min(axis=-1) < 200).mean()),  # share of pixels that are not white-ish
        "green": float(((g > r + 40) & (g > b + 20)).mean()),
        "pink": float(((r > g + 40) & (b > g + 20)).mean()),
    }


def assert_rendered(page: dict, heatmaps: int = 0) -> None:
    assert page["errors"] == [], page["errors"]
    assert page["svg"] >= 1, "no Plotly SVG was drawn"
    assert page["heatmaps"] >= heatmaps
    assert page["std"] > 10 and page["inked"] > 0.01, f"the screenshot is (nearly) blank: {page}"


def tcadvisor(*args, cwd):
    r = subprocess.run([sys.executable, "-m", "tcadvisor", *args], capture_output=True, text=True, timeout=300,
                       cwd=cwd, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    tcadvisor("map", "--gpu", "h100", "--dtype", "float", "--shape", "box", "--dims", "2", "-o", "box2d-h100.html",
              cwd=out)
    tcadvisor("map", "--gpu", "a100,h100,h200,b200", "--dtype", "float", "-o", "four.html", cwd=out)
    tcadvisor("map", "--gpu", "a100", "--dtype", "double", "--shape", "star", "--dims", "3", "-o", "double.html",
              cwd=out)
    tcadvisor("roofline", "Box-2D1R", "--fuse", "7", "--dtype", "float", "--gpu", "a100", "-o", "roofline.html",
              cwd=out)
    tcadvisor("map", "--gpu", "h100", "--dtype", "double", "--measured", str(MEASURED), "-o", "measured.html", cwd=out)
    tcadvisor("roofline", "Box-2D1R", "--fuse", "7", "--dtype", "float", "--gpu", "h100", "--model", "refined",
              "--measured", str(MEASURED), "-o", "roofline-measured.html", cwd=out)
    tcadvisor("figures", "-o", "figures", cwd=out)
    tcadvisor("figures", "--only", "fig07-roofline", "--self-contained", "-o", "single", cwd=out)
    (out / "minimal.yaml").write_text(MINIMAL_SPEC)
    tcadvisor("figures", "--gpu", "minimal.yaml", "-o", "minimal", cwd=out)
    return out


#: A committed run of 'tcadvisor validate' on an H100 (Box-2D1R in double at t = 1-16, among others).
MEASURED = Path(__file__).resolve().parents[1] / "validation/results/h100-sxm-2026-11-23/results.json"

#: A valid spec without TF32 or Sparse Tensor Cores: Figs. 13 and 14 cannot be drawn for it.
MINIMAL_SPEC = """\
name: Minimal FP64 GPU
sources: {me: my own measurements}
bandwidth: {value: 1935, unit: GB/s, source: me}
peak:
  cuda_core: {fp64: {value: 9.7, source: me}, fp32: {value: 19.5, source: me}}
  tensor_core: {fp64: {value: 19.5, source: me}}
"""


def test_sweet_spot_map_renders(browser, pages):
    page = open_page(browser, pages / "box2d-h100.html")
    assert_rendered(page, heatmaps=3)
    assert page["green"] > 0.005 and page["pink"] > 0.005  # both sides of the diverging scale are drawn
    assert "fusion depth t" in page["text"] or page["svg"]  # axis titles are SVG text, not innerText


def hover_text(driver, axis: str, x: float, y: float) -> str:
    """Move the mouse over data point (x, y) of subplot ``axis`` ('' for the first) and return the hover label."""
    import time

    point = driver.execute_script(
        "const gd = document.querySelector('.js-plotly-plot'), L = gd._fullLayout;"
        "const xa = L['xaxis' + arguments[0]], ya = L['yaxis' + arguments[0]], r = gd.getBoundingClientRect();"
        "return [r.left + xa._offset + xa.l2p(arguments[1]), r.top + ya._offset + ya.l2p(arguments[2])];",
        axis, x, y)
    driver.execute_script("Plotly.Fx.unhover(document.querySelector('.js-plotly-plot'));")  # no stale label
    for _ in range(20):
        if not driver.execute_script("return document.querySelector('g.hovertext') !== null"):
            break
        time.sleep(0.1)
    driver.execute_script(
        "const el = document.elementFromPoint(arguments[0], arguments[1]);"
        "el.dispatchEvent(new MouseEvent('mousemove', {clientX: arguments[0], clientY: arguments[1], bubbles: true}));",
        *point)
    for _ in range(50):
        text = driver.execute_script("const h = document.querySelector('g.hovertext'); return h && h.textContent;")
        if text:
            return text
        time.sleep(0.1)
    return ""


def test_map_hover_tells_the_advisors_numbers(browser, pages):
    """Hovering a cell shows α, β, I, bound and GStencils/s, equal to what advise() says for that stencil."""
    from tcadvisor.advisor import advise
    from tcadvisor.hardware import find_spec
    from tcadvisor.stencil import Stencil

    open_page(browser, pages / "box2d-h100.html")
    # cells the bundled kernels run (r·t within the dense kernel's 8 and the sparse kernel's 7)
    for axis, unit, radius, fuse in (("", 1, 2, 3), ("2", 2, 1, 7)):
        text = hover_text(browser, axis, fuse - 1, radius - 1)
        o = advise(Stencil.box(2, radius), "float", find_spec("h100"), fuse=fuse).options[unit]
        assert o.available and "the unit's bound" not in text
        assert f"Box-2D{radius}R, t = {fuse}" in text
        assert f"R = {o.speedup:.3g}×" in text and f"scenario {o.scenario}" in text
        assert f"α = {float(o.alpha):.4g}" in text and f"β = {float(o.beta):.4g}" in text
        assert f"I_TC = {o.intensity:.4g} FLOP/byte ({o.bound}-bound)" in text
        assert f"GStencils/s: {o.gstencils:.4g} here" in text
        source = {"given by --alpha": "user"}.get(o.alpha_source, o.alpha_source.split(" (")[0])
        assert f"α = {float(o.alpha):.4g} ({source})" in text and "instruction: " in text
    # a cell no bundled kernel runs (Box-2D4R fused x3 on dense Tensor Cores: r·t = 12 > 8) shows the unit's
    # bound and says why
    text = hover_text(browser, "", 3 - 1, 4 - 1)
    assert not advise(Stencil.box(2, 4), "float", find_spec("h100"), fuse=3).options[1].available
    assert "the unit's bound" in text and "too large for the Tensor Core kernel" in text


def test_four_gpu_map_renders(browser, pages):
    page = open_page(browser, pages / "four.html")
    assert_rendered(page, heatmaps=12)


def test_unavailable_panel_is_shown(browser, pages):
    page = open_page(browser, pages / "double.html")
    assert_rendered(page, heatmaps=2)
    text = browser.execute_script(
        "return Array.from(document.querySelectorAll('g.annotation-text-g')).map(e => e.textContent).join(' ')")
    assert "not available on this GPU/precision" in text


def test_measured_map_renders_and_its_hover_names_the_measured_winner(browser, pages):
    """The fastest-unit panel of a map drawn with --measured: hovering a measured cell shows the unit the
    run measured fastest, read here from the results file itself."""
    import json
    import statistics

    from tcadvisor.hardware import UNIT_LABELS

    page = open_page(browser, pages / "measured.html")
    assert_rendered(page, heatmaps=2)
    markers = browser.execute_script("return document.querySelectorAll('g.scatterlayer path.point').length")
    assert markers >= 16  # a square in every measured cell of Box-2D1R (t = 1-16)
    runs = [m for m in json.loads(MEASURED.read_text())["measurements"]
            if m["status"] == "ok" and m["stencil"] == "Box-2D1R" and m["dtype"] == "double"]
    for fuse in (1, 5, 12):
        units = {}
        for m in runs:
            if m["fuse"] == fuse:
                units.setdefault(m["unit"], []).append(m["gstencils"])
        fastest = max(units, key=lambda u: statistics.median(units[u]))
        text = hover_text(browser, "3", fuse - 1, 0)  # the fastest-unit panel, radius 1
        assert f"Box-2D1R, t = {fuse}" in text, text
        assert f"measured {UNIT_LABELS[fastest]}" in text, text
    text = hover_text(browser, "3", 4, 6)  # Box-2D7R at t = 5: not in the file, no measured line
    assert "Box-2D7R, t = 5" in text and "measured" not in text, text


def test_measured_roofline_renders(browser, pages):
    page = open_page(browser, pages / "roofline-measured.html")
    assert_rendered(page)
    names = browser.execute_script("return Array.from(document.querySelectorAll('.legendtext'))"
                                   ".map(e => e.textContent)")
    assert {"measured: CUDA cores, t = 7", "measured: Tensor Cores, t = 7"} <= set(names), names


def test_roofline_renders(browser, pages):
    page = open_page(browser, pages / "roofline.html")
    assert_rendered(page)
    assert page["lines"] >= 4  # memory roof and the three units' roofs


def test_every_paper_figure_renders(browser, pages):
    from tcadvisor.plots.paper_figures import FIGURES

    for name in FIGURES:
        page = open_page(browser, pages / "figures" / f"{name}.html")
        assert_rendered(page)
    index = open_page(browser, pages / "figures" / "index.html", expect_plot=False)
    assert index["errors"] == []
    links = browser.execute_script("return Array.from(document.links).map(a => a.getAttribute('href'))")
    assert sorted(links) == sorted(f"{n}.html" for n in FIGURES)


def test_figure_pages_share_one_local_copy_of_plotly(browser, pages, tmp_path):
    """The pages load Plotly from the file beside them: offline, and without it the check fails (control)."""
    from tcadvisor.plots.output import plotly_js_name

    js = plotly_js_name()
    open_page(browser, pages / "figures" / "fig07-roofline.html")
    assert browser.execute_script(
        "return Array.from(document.scripts).filter(s => s.src).map(s => s.getAttribute('src'))") == [js]
    alone = tmp_path / "fig07-roofline.html"  # the page without the script beside it cannot draw
    alone.write_bytes((pages / "figures" / "fig07-roofline.html").read_bytes())
    page = open_page(browser, alone, timeout=5)
    assert page["svg"] == 0 and page["errors"]
    single = pages / "single"  # --self-contained: the page alone is enough
    assert sorted(p.name for p in single.iterdir()) == ["fig07-roofline.html", "index.html"]
    moved = tmp_path / "moved.html"
    moved.write_bytes((single / "fig07-roofline.html").read_bytes())
    assert_rendered(open_page(browser, moved))


def test_minimal_spec_figures_render_and_the_index_says_what_was_skipped(browser, pages):
    from tcadvisor.plots.paper_figures import FIGURES

    skipped = ["fig13-sparse-ceiling", "fig14-sparse-sweet-spot"]
    drawn = [n for n in FIGURES if n not in skipped]
    for name in drawn:
        assert_rendered(open_page(browser, pages / "minimal" / f"{name}.html"))
    index = open_page(browser, pages / "minimal" / "index.html", expect_plot=False)
    assert index["errors"] == []
    links = browser.execute_script("return Array.from(document.links).map(a => a.getAttribute('href'))")
    assert links == [f"{n}.html" for n in drawn]
    listed = browser.execute_script("return document.getElementById('skipped').innerText")
    for name in skipped:
        assert name in listed and "Sparse Tensor Cores for float" in listed


def test_checks_catch_a_broken_page(browser, tmp_path):
    """Negative control: a page whose script throws, and one that needs the network, are caught."""
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    page = open_page(browser, broken, expect_plot=False)
    assert any("undefinedFunction" in e for e in page["errors"])
    cdn = tmp_path / "cdn.html"
    cdn.write_text('<html><body><script src="https://cdn.plot.ly/plotly-2.35.2.min.js"></script>'
                   "<script>Plotly.newPlot(document.body, [{y: [1, 2]}]);</script></body></html>")
    page = open_page(browser, cdn, expect_plot=False)
    assert page["errors"] and page["svg"] == 0


def test_checks_catch_a_blank_page(browser, tmp_path):
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    page = open_page(browser, blank, expect_plot=False)
    assert page["errors"] == []
    with pytest.raises(AssertionError):
        assert_rendered(page)


def test_png_export_through_headless_chromium(tmp_path):
    """Without kaleido, ``-o map.png`` screenshots the page with Chromium; the PNG shows the map."""
    if CHROMIUM is None:
        _unavailable("needs chromium")
    from PIL import Image

    from tcadvisor.plots import maps, output
    from tcadvisor.hardware import find_spec

    fig = maps.map_figure(maps.map_data("box", 2, "float", [find_spec("h100")], radii=range(1, 5), fuses=range(1, 7)))
    path = tmp_path / "map.png"
    output.chromium_screenshot(fig, path, CHROMIUM)
    img = np.asarray(Image.open(path).convert("RGB"), dtype=float)
    assert img.shape[1] == fig.layout.width and img.shape[0] == fig.layout.height
    assert img.std() > 20 and ((img[..., 1] > img[..., 0] + 40)).mean() > 0.001
