"""Writing figures and map data: self-contained HTML, PNG/SVG where an exporter exists, CSV.

Why HTML first: it needs nothing but the browser a user already has, works
offline (Plotly's JavaScript is embedded, no CDN), and keeps hover text, which
is where the map explains each cell.  Static images need an exporter that a
plain ``pip install`` does not bring: Plotly's kaleido (which drives a Chrome),
or — for PNG — a headless Chromium, which is what CI installs anyway.  When
neither is there the user gets one line saying what to install, not a
traceback.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import TcAdvisorError

FORMATS = ("html", "png", "svg")
#: Plotly's in-page options: no logo, and the camera button saves a PNG at twice the size.
CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
#: Names under which a Chromium or Chrome may be installed.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Flags for a headless Chromium that touches nothing outside its own temporary profile.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-first-run", "--disable-quic", "--disable-extensions", "--mute-audio")


def output_format(path: str | os.PathLike) -> str:
    """The format named by ``path``'s suffix, or a one-line error listing the accepted ones."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "htm":
        suffix = "html"
    if suffix not in FORMATS:
        raise TcAdvisorError(
            f"cannot tell the format of {str(path)!r}; end the file name in {', '.join('.' + f for f in FORMATS)}"
        )
    return suffix


def _prepare(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TcAdvisorError(f"cannot create the directory {str(path.parent)!r}: {exc.strerror or exc}") from None


def write_html(fig, path: str | os.PathLike) -> Path:
    """A self-contained HTML page (Plotly's JavaScript embedded: opens offline)."""
    path = Path(path)
    _prepare(path)
    try:
        fig.write_html(path, include_plotlyjs=True, full_html=True, config=CONFIG)
    except OSError as exc:
        raise TcAdvisorError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    return path


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable, or ``None``."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _kaleido_image(fig, fmt: str) -> bytes | None:
    """The image from Plotly's kaleido, or ``None`` where kaleido is missing or cannot start its browser."""
    import importlib.util

    if importlib.util.find_spec("kaleido") is None:
        return None
    try:
        return fig.to_image(format=fmt)
    except Exception:  # noqa: BLE001 - kaleido fails in many ways without a browser; fall back, then say so
        return None


def chromium_screenshot(fig, path: Path, chromium: str, timeout: float = 90) -> None:
    """PNG of ``fig`` as headless Chromium renders its HTML page, at the figure's own size."""
    width = int(fig.layout.width or 1000)
    height = int(fig.layout.height or 600)
    with tempfile.TemporaryDirectory(prefix="tcadvisor-png-") as tmp:
        page = Path(tmp) / "figure.html"
        html = fig.to_html(include_plotlyjs=True, full_html=True,
                           config={"staticPlot": True, "displayModeBar": False})
        page.write_text(html.replace("<body>", '<body style="margin:0">', 1), encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={Path(tmp) / 'profile'}",
               f"--window-size={width},{height}", "--virtual-time-budget=10000",
               f"--screenshot={shot}", page.as_uri()]
        try:
            subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TcAdvisorError(f"headless Chromium ({chromium}) could not render {path.name}: {exc}") from None
        if not shot.is_file() or shot.stat().st_size == 0:
            raise TcAdvisorError(f"headless Chromium ({chromium}) wrote no screenshot for {path.name}; "
                                 "write HTML instead (-o NAME.html)")
        shutil.copyfile(shot, path)


def write_static(fig, path: str | os.PathLike, fmt: str) -> Path:
    """PNG or SVG through kaleido; PNG also through a headless Chromium; else a one-line error."""
    path = Path(path)
    _prepare(path)
    image = _kaleido_image(fig, fmt)
    if image is not None:
        path.write_bytes(image)
        return path
    chromium = find_chromium() if fmt == "png" else None
    if chromium is not None:
        chromium_screenshot(fig, path, chromium)
        return path
    needs = ("kaleido (pip install kaleido) or a Chromium/Chrome on PATH" if fmt == "png"
             else "kaleido (pip install kaleido, which drives a Chrome)")
    raise TcAdvisorError(
        f"cannot write {path.name}: no static image exporter for {fmt.upper()} here; it needs {needs}. "
        f"HTML needs nothing: use -o {path.with_suffix('.html').name} (its camera button saves a PNG)"
    )


def write_figure(fig, path: str | os.PathLike) -> Path:
    """Write ``fig`` in the format ``path``'s suffix names (.html, .png, .svg)."""
    fmt = output_format(path)
    return write_html(fig, path) if fmt == "html" else write_static(fig, path, fmt)


def write_csv(data, path: str | os.PathLike) -> Path:
    """A map's DataFrame as CSV (one row per GPU, radius, depth and unit)."""
    path = Path(path)
    _prepare(path)
    try:
        data.to_csv(path, index=False)
    except OSError as exc:
        raise TcAdvisorError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    return path
