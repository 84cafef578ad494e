"""Writing figures and map data: offline HTML, PNG/SVG where an exporter exists, CSV.

Why HTML first: it needs nothing but the browser a user already has, works
offline (Plotly's JavaScript comes with the page, never from a CDN), and keeps
hover text, which is where the map explains each cell.  Static images need an
exporter that a plain ``pip install`` does not bring: Plotly's kaleido (which
drives a Chrome), or — for PNG — a headless Chromium, which is what CI installs
anyway.  When neither is there the user gets one line saying what to install,
not a traceback.

Two rules hold for every file written here:

* **Never half-written.**  A file is written to a temporary file in its own
  directory and renamed over the target only once complete and flushed
  (:func:`atomic_write`), so a full disk, a crash or Ctrl-C leaves the previous
  file intact and no temporary file behind; the error is one line naming the
  file and the operating system's reason.
* **Missing directories are created, and said.**  A missing parent directory of
  an output file is created, with one line on stderr naming what was created
  (a typo in a path then shows at once instead of going unnoticed).

One HTML file (``map -o x.html``, ``roofline -o``, :func:`write_figure`) embeds
Plotly's JavaScript, so it can be mailed on its own.  A directory of pages
(``tcadvisor figures``) shares one copy of it, written next to the pages
(:func:`write_html` with ``shared_js=True``): the pages stay offline and the
directory is about 5 MB per page lighter.
"""
from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
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
#: Bytes handed to the operating system per write call (a full disk fails part-way, as it would for real).
CHUNK = 1 << 20
#: The one low-level write; tests replace it to simulate a full disk part-way through a file.
_write_chunk = os.write


def note(message: str) -> None:
    """One informational line on stderr (what was created), in the CLI's voice."""
    print(f"tcadvisor: {message}", file=sys.stderr)


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


# --------------------------------------------------------------------------- directories and atomic writes


def ensure_directory(directory: str | os.PathLike) -> list[Path]:
    """Create ``directory`` and its missing parents; say on stderr which were created; return them.

    An existing file in the way, or a directory that cannot be created, is a
    one-line :class:`~tcadvisor.errors.TcAdvisorError`.
    """
    directory = Path(directory)
    missing = []
    probe = directory
    while not probe.exists():
        if probe.is_symlink():  # a dangling link: mkdir would fail below with the OS's reason
            break
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise TcAdvisorError(f"cannot write into {str(directory)!r}: {str(probe)!r} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TcAdvisorError(f"cannot create the directory {str(directory)!r}: {exc.strerror or exc}") from None
    created = list(reversed(missing))
    if created:
        names = ", ".join(str(p) for p in created)
        note(f"created the director{'ies' if len(created) > 1 else 'y'} {names} (did not exist)")
    return created


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and not probe.is_symlink() and probe.parent != probe:
        probe = probe.parent
    return probe


def _probe_directory(directory: Path, what: str) -> None:
    """A one-line error unless a file can be created in ``directory`` (tried: permissions, a read-only
    file system or a full inode table show here, not after the work)."""
    if not directory.is_dir():
        raise TcAdvisorError(f"cannot write {what}: {str(directory)!r} is not a directory")
    try:
        fd, tmp = _temporary(directory / "write-probe")
    except OSError as exc:
        raise TcAdvisorError(f"cannot write {what}: the directory {str(directory)!r} is not writable "
                             f"({exc.strerror or exc})") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def check_writable_directory(directory: str | os.PathLike, what: str | None = None) -> None:
    """Check, before any work, that ``directory`` can hold new files: it is a directory (or does not exist
    yet and can be created under its nearest existing ancestor, which is then probed; nothing is created)."""
    directory = Path(directory)
    what = what or f"into {str(directory)!r}"
    nearest = _nearest_existing(directory)
    if nearest.exists() and not nearest.is_dir():
        raise TcAdvisorError(f"cannot write {what}: {str(nearest)!r} is a file, not a directory")
    if not nearest.exists():  # a dangling link
        raise TcAdvisorError(f"cannot write {what}: {str(nearest)!r} is a broken link")
    _probe_directory(nearest, what)


def check_output_files(outputs, figure_options=()) -> None:
    """Check every output of one command before its work: ``outputs`` is ``[(option, path), ...]``.

    Each path must name a file that can be written (not a directory; its directory writable or creatable),
    the options in ``figure_options`` a format :func:`output_format` knows and, for PNG and SVG, an exporter
    present here; and no two options may name the same file.  Nothing is created.
    """
    seen: dict[str, str] = {}
    for option, path in outputs:
        if path is None:
            continue
        path = Path(path)
        if option in figure_options:
            fmt = output_format(path)
            check_exporter(fmt, path)
        key = os.path.normcase(os.path.realpath(path))
        if key in seen:
            raise TcAdvisorError(f"{seen[key]} and {option} both name {str(path)!r}; give each output its own file")
        seen[key] = option
        if path.is_dir():
            raise TcAdvisorError(f"{option} {str(path)!r} is a directory; expected a file name")
        if path.exists() and not os.access(path, os.W_OK):
            raise TcAdvisorError(f"{option} {str(path)!r} is not writable")
        check_writable_directory(path.parent, f"{option} {str(path)!r}")


def static_exporter(fmt: str) -> str | None:
    """What would write ``fmt`` (png, svg) here: 'kaleido', a Chromium path, or None (HTML needs nothing)."""
    import importlib.util

    if fmt == "html":
        return "html"
    if importlib.util.find_spec("kaleido") is not None:
        return "kaleido"
    return find_chromium() if fmt == "png" else None


def check_exporter(fmt: str, path: str | os.PathLike | None = None) -> None:
    """A one-line error, before any work, when no exporter for ``fmt`` is installed (see :func:`write_static`)."""
    if static_exporter(fmt) is not None:
        return
    needs = ("kaleido (pip install kaleido) or a Chromium/Chrome on PATH" if fmt == "png"
             else "kaleido (pip install kaleido, which drives a Chrome)")
    name = Path(path).name if path is not None else f"the {fmt.upper()} files"
    html = f"-o {Path(path).with_suffix('.html').name}" if path is not None else "--format html"
    raise TcAdvisorError(f"cannot write {name}: no static image exporter for {fmt.upper()} here; it needs {needs}. "
                         f"HTML needs nothing: use {html} (its camera button saves a PNG)")


def _temporary(path: Path) -> tuple[int, Path]:
    """A new, exclusively created file next to ``path`` (same file system, so the rename is atomic)."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 less the umask: the file ends up with the permissions a plain open() would give it.
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {path.name}")


def atomic_write(path: str | os.PathLike, data: bytes | str) -> Path:
    """Replace ``path`` with ``data`` in one step: the previous file stays intact until the new one is complete.

    The bytes go to a temporary file in ``path``'s directory, are flushed to
    disk (``fsync``: a full disk can fail only there), and the file is renamed
    over ``path`` (``os.replace``, atomic on POSIX and Windows).  On any failure
    — ``ENOSPC``, ``EACCES``, Ctrl-C — the temporary file is removed and the
    previous file is left as it was; an ``OSError`` becomes one line naming
    the file and the reason.  Missing parent directories are created
    (:func:`ensure_directory`).  An existing file keeps its permission bits.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    ensure_directory(path.parent)
    existed = path.exists()
    tmp = None
    try:
        fd, tmp = _temporary(path)
        try:
            view = memoryview(payload)
            while view:
                done = _write_chunk(fd, view[:CHUNK])
                view = view[done:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if existed:
            try:
                os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
            except OSError:
                pass  # keeping the old mode is a courtesy, not a reason to fail
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        kept = "the previous file is unchanged" if existed and path.is_file() else "nothing was written"
        raise TcAdvisorError(f"cannot write {str(path)!r}: {exc.strerror or exc} ({kept})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


# --------------------------------------------------------------------------- HTML


def plotly_js_name() -> str:
    """File name of the shared Plotly bundle, versioned so pages always load the JavaScript they were written for."""
    from plotly.offline import get_plotlyjs_version

    return f"plotly-{get_plotlyjs_version()}.min.js"


def plotly_js_current(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` already holds this Plotly's bundle under :func:`plotly_js_name`, byte for byte."""
    from plotly.offline import get_plotlyjs

    path = Path(directory) / plotly_js_name()
    code = get_plotlyjs().encode("utf-8")
    try:
        return path.is_file() and path.stat().st_size == len(code) and path.read_bytes() == code
    except OSError:
        return False  # unreadable: rewriting it reports a real problem in one line


def write_plotly_js(directory: str | os.PathLike) -> Path:
    """Plotly's JavaScript bundle in ``directory`` (written atomically, only where missing or different)."""
    from plotly.offline import get_plotlyjs

    path = Path(directory) / plotly_js_name()
    if plotly_js_current(directory):
        return path
    return atomic_write(path, get_plotlyjs())


def html_page(fig, shared_js: bool = False) -> str:
    """The full HTML page of ``fig``: Plotly's JavaScript embedded, or loaded from :func:`plotly_js_name` beside it."""
    return fig.to_html(include_plotlyjs=plotly_js_name() if shared_js else True, full_html=True, config=CONFIG)


def write_html(fig, path: str | os.PathLike, shared_js: bool = False) -> Path:
    """An HTML page that opens offline.

    By default self-contained (Plotly's JavaScript embedded, about 4.8 MB: one
    file to mail).  With ``shared_js`` the page loads :func:`plotly_js_name`
    from its own directory, written there once (for directories of pages).
    """
    path = Path(path)
    page = html_page(fig, shared_js=shared_js)
    if shared_js:
        ensure_directory(path.parent)
        write_plotly_js(path.parent)
    return atomic_write(path, page)


# --------------------------------------------------------------------------- PNG and SVG


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


def chromium_screenshot(fig, path: Path, chromium: str, timeout: float = 90) -> Path:
    """PNG of ``fig`` as headless Chromium renders its HTML page, at the figure's own size (written atomically)."""
    path = Path(path)
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
        return atomic_write(path, shot.read_bytes())


def write_static(fig, path: str | os.PathLike, fmt: str) -> Path:
    """PNG or SVG through kaleido; PNG also through a headless Chromium; else a one-line error."""
    path = Path(path)
    image = _kaleido_image(fig, fmt)
    if image is not None:
        return atomic_write(path, image)
    chromium = find_chromium() if fmt == "png" else None
    if chromium is not None:
        return chromium_screenshot(fig, path, chromium)
    needs = ("kaleido (pip install kaleido) or a Chromium/Chrome on PATH" if fmt == "png"
             else "kaleido (pip install kaleido, which drives a Chrome)")
    raise TcAdvisorError(
        f"cannot write {path.name}: no static image exporter for {fmt.upper()} here; it needs {needs}. "
        f"HTML needs nothing: use -o {path.with_suffix('.html').name} (its camera button saves a PNG)"
    )


# --------------------------------------------------------------------------- any figure, CSV


def write_figure(fig, path: str | os.PathLike, shared_js: bool = False) -> Path:
    """Write ``fig`` in the format ``path``'s suffix names (.html, .png, .svg), atomically.

    HTML is self-contained unless ``shared_js`` (see :func:`write_html`).
    """
    fmt = output_format(path)
    if not (hasattr(fig, "to_html") and hasattr(fig, "layout")):
        raise TcAdvisorError(f"write_figure writes a Plotly figure (from map_figure, roofline_figure, ...), "
                             f"not {type(fig).__name__}")
    return write_html(fig, path, shared_js=shared_js) if fmt == "html" else write_static(fig, path, fmt)


def write_csv(data, path: str | os.PathLike) -> Path:
    """A map's DataFrame as CSV (one row per GPU, radius, depth and unit), written atomically."""
    if not hasattr(data, "to_csv"):
        raise TcAdvisorError(f"write_csv writes a DataFrame (from map_data), not {type(data).__name__}")
    return atomic_write(path, data.to_csv(index=False))
