"""Progress on stderr (tcadvisor/progress.py): only on a terminal, never with --json or --quiet, throttled,
a final line; and the map command in a real pseudo-terminal against the same command piped."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from tcadvisor.progress import Progress, clock, took, wanted


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_wanted_only_on_a_terminal_and_never_with_json_or_quiet():
    assert wanted(Tty()) is True
    assert wanted(io.StringIO()) is False
    assert wanted(Tty(), json=True) is False
    assert wanted(Tty(), quiet=True) is False
    assert wanted(object()) is False  # no isatty at all
    closed = io.StringIO()
    closed.close()
    assert wanted(closed) is False  # isatty() raises ValueError on a closed stream


def test_clock_formats():
    assert clock(0) == "0:00" and clock(59.9) == "0:59" and clock(61) == "1:01" and clock(3725) == "62:05"
    assert took(4.24) == "4.2 s" and took(75) == "1:15"


def test_nothing_is_printed_when_not_a_terminal():
    out, t = io.StringIO(), Clock()
    p = Progress("map", stream=out, clock=t)
    assert not p.enabled
    with p:
        for i in range(1, 11):
            t.now += 1
            p.update(i, 10, "h100 r=1")
        p.phase("timing")
        p.done("10 configurations")
    assert out.getvalue() == ""


def test_nothing_is_printed_with_json_even_on_a_terminal():
    out = Tty()
    with Progress("map", stream=out, enabled=wanted(out, json=True)) as p:
        p.update(1, 2, "a")
        p.done("2 configurations")
    assert out.getvalue() == ""


def test_status_lines_say_phase_item_and_elapsed_then_a_final_line():
    out, t = Tty(), Clock()
    with Progress("run", stream=out, clock=t) as p:
        t.now += 1
        p.phase("compile")
        t.now += 64
        p.update(3, 100, "sweep", phase="check")
        t.now += 0.5
        p.done("checked")
    status = "run check [3/100, 1:05] sweep"
    final = "run: checked in 1:05"
    assert out.getvalue() == ("\rrun compile [0:01]" + "\r" + status
                              + "\r" + final + " " * (len(status) - len(final)) + "\n")  # covers the longer status


def test_updates_are_throttled_to_a_few_a_second():
    out, t = Tty(), Clock()
    p = Progress("map", stream=out, clock=t)
    for i in range(1, 1001):  # 1000 configurations, one a millisecond
        p.update(i, 1000, f"r={i}")
        t.now += 0.001
    draws = out.getvalue().count("\r")
    assert 4 <= draws <= 6, out.getvalue()  # one second of work: the first draw, then one each 0.2 s
    assert out.getvalue().startswith("\rmap [1/1000, 0:00] r=1")


def test_an_exception_clears_the_status_line_and_prints_no_final_line():
    out, t = Tty(), Clock()
    with pytest.raises(KeyError):
        with Progress("figures", stream=out, clock=t) as p:
            p.update(1, 7, "fig07-roofline")
            raise KeyError("boom")
    line = "\rfigures [1/7, 0:00] fig07-roofline"
    assert out.getvalue() == line + "\r" + " " * (len(line) - 1) + "\r"


def test_done_without_a_status_line_prints_nothing():
    out = Tty()
    with Progress("map", stream=out) as p:
        p.done("0 configurations")
    assert out.getvalue() == ""


def test_other_stderr_text_clears_the_status_line_first(monkeypatch):
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    with Progress("figures", clock=Clock()) as p:
        p.update(1, 7, "fig07-roofline")
        print("tcadvisor: created the directory out", file=sys.stderr)
        assert sys.stderr is not err  # guarded while active
    assert sys.stderr is err
    status = "\rfigures [1/7, 0:00] fig07-roofline"
    assert err.getvalue() == (status + "\r" + " " * (len(status) - 1) + "\r"
                              + "tcadvisor: created the directory out\n")


def test_a_status_line_never_wraps():
    out, t = Tty(), Clock()
    p = Progress("map", stream=out, clock=t)
    p.update(1, 2, "x" * 500)
    assert len(out.getvalue()) <= 120  # no terminal size to ask: 119 columns


def test_a_progress_argument_that_is_not_callable_is_one_line():
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.plots.maps import map_data

    with pytest.raises(TcAdvisorError, match="progress is called with"):
        map_data("box", 2, "double", "h100", radii="1-2", fuses="1-2", progress=3)


def test_map_data_reports_every_gpu_and_radius_in_order():
    from tcadvisor.plots.maps import map_data

    seen = []
    map_data("box", 2, "double", "a100,h100", radii="1-3", fuses="1-2", progress=lambda *a: seen.append(a))
    assert seen == [(1, 6, "a100 r=1"), (2, 6, "a100 r=2"), (3, 6, "a100 r=3"),
                    (4, 6, "h100 r=1"), (5, 6, "h100 r=2"), (6, 6, "h100 r=3")]


# --------------------------------------------------------------------------- the CLI in a pseudo-terminal

MAP = ["map", "--gpu", "a100,h100", "--radii", "1-4", "--fuse", "1-8", "-o", "map.html", "--csv", "map.csv"]


def _map(tmp_path, stderr_tty: bool, *extra: str) -> tuple[int, bytes, str]:
    """``tcadvisor map`` with its stdout piped and its stderr a pseudo-terminal or a pipe, in ``tmp_path``:
    (status, stdout, stderr)."""
    cmd = [sys.executable, "-m", "tcadvisor", *MAP, *extra]
    if not stderr_tty:
        proc = subprocess.run(cmd, capture_output=True, timeout=120, cwd=tmp_path)
        return proc.returncode, proc.stdout, proc.stderr.decode()
    pty = pytest.importorskip("pty")  # POSIX only
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL, cwd=tmp_path)
    os.close(follower)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    return proc.returncode, out, err.decode()


def test_map_shows_progress_on_a_terminal_and_none_when_piped_with_the_same_stdout(tmp_path):
    rc_tty, out_tty, err_tty = _map(tmp_path, True)
    csv_tty = (tmp_path / "map.csv").read_bytes()
    rc_pipe, out_pipe, err_pipe = _map(tmp_path, False)
    assert rc_tty == rc_pipe == 0, err_tty + err_pipe
    assert re.search(r"\rmap \[1/8, 0:\d\d\] a100 r=1", err_tty), err_tty
    assert "map: 8 configurations (2 GPUs × 4 radii × 8 depths) in " in err_tty
    assert err_tty.endswith(" s\r\n")  # the final line ends the status line (the terminal's newline is \r\n)
    assert err_pipe == ""
    assert out_tty == out_pipe and out_pipe.startswith(b"wrote map.html (sweet-spot map, 2 GPUs")
    assert (tmp_path / "map.csv").read_bytes() == csv_tty


def test_map_quiet_shows_nothing_on_a_terminal(tmp_path):
    rc, out, err = _map(tmp_path, True, "--quiet")
    assert rc == 0 and err == "" and out.startswith(b"wrote map.html")


def test_write_figures_reports_each_figure_and_each_file(tmp_path):
    from tcadvisor.plots.paper_figures import write_figures

    seen = []
    write_figures(tmp_path, "a100", names=["fig07-roofline", "fig08-scenarios"], progress=lambda *a: seen.append(a))
    assert seen == [(1, 2, "fig07-roofline"), (1, 2, "fig07-roofline.html"),
                    (2, 2, "fig08-scenarios"), (2, 2, "fig08-scenarios.html")]


def _run_with_fake_runner(monkeypatch, tty: bool, *extra: str):
    """``tcadvisor run`` through the CLI with runner.run replaced by a stand-in that reports the phases a GPU run
    goes through (compile, three checked sweeps, timing) and returns a result the formatter prints."""
    from types import SimpleNamespace

    from tcadvisor import cli
    from tcadvisor.gpu import commands, runner

    seen = {}

    def fake_run(stencil, dtype, unit, progress=None, **kw):
        seen["progress"] = progress
        progress.interval = 0  # every update drawn (throttling is tested above)
        progress.phase("compile")
        for i in range(1, 4):
            progress.update(i, 3, f"sweep of t = {kw['fuse']}", "check")
        progress.phase("timing")
        return SimpleNamespace(steps=9, sweeps=[3, 3, 3], checked=True, passed=True)

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.setattr(commands, "format_result", lambda res: "RESULT")
    monkeypatch.setattr(commands, "result_dict", lambda res: {"steps": res.steps})
    err = Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code = cli.main(["run", "Box-2D1R", "--fuse", "3", "--steps", "9", *extra])
    return code, err.getvalue(), seen


def test_run_says_compile_check_and_timing_on_a_terminal(monkeypatch, capsys):
    code, err, seen = _run_with_fake_runner(monkeypatch, True)
    assert code == 0 and capsys.readouterr().out.strip() == "RESULT"
    assert "\rrun compile [" in err and re.search(r"\rrun check \[3/3, 0:\d\d\] sweep of t = 3", err)
    assert "\rrun timing [" in err and "run: 9 steps in 3 sweeps checked and timed in " in err


@pytest.mark.parametrize("tty, extra", [(False, ()), (True, ("--json",)), (True, ("--quiet",))])
def test_run_is_silent_when_piped_with_json_or_quiet(monkeypatch, capsys, tty, extra):
    code, err, seen = _run_with_fake_runner(monkeypatch, tty, *extra)
    assert code == 0 and err == "" and seen["progress"] is not None and not seen["progress"].drawn
