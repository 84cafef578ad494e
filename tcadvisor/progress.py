"""Progress on stderr for the commands that work for seconds to minutes (``map``, ``figures``, ``calibrate --fit``).

A command silent for a minute looks hung.  So a long command says on stderr what it is doing:
its phase, item i of n and the time elapsed, one status line redrawn in place (a carriage
return), at most a few times a second so that drawing never costs more than the work, and a
final line saying what was done in how long.

Only a person watching sees it: nothing is printed when stderr is not a terminal (a pipe, a
log file, a test), with ``--json`` (a program reads the output) or with ``--quiet``, so
scripted output is exactly what it was.  stdout is never touched.

``calibrate --fit`` prints one permanent line per configuration (each runs for seconds) through
its ``progress`` callback; it takes the same decision, :func:`wanted`, and the same clock format.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable, TextIO

#: Least time between two redraws of the status line (at most 5 updates a second).
INTERVAL = 0.2


def clock(seconds: float) -> str:
    """Elapsed time as ``m:ss`` (``calibrate --fit``'s lines use it too)."""
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def took(seconds: float) -> str:
    """A duration for the final line: ``4.2 s`` under a minute, else ``m:ss``."""
    return f"{seconds:.1f} s" if seconds < 60 else clock(seconds)


def wanted(stream: TextIO | None = None, *, json: bool = False, quiet: bool = False) -> bool:
    """Whether to show progress on ``stream`` (default stderr): a terminal, and neither --json nor --quiet."""
    if json or quiet:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


class Progress:
    """One status line on ``stream``: ``label phase [i/n, m:ss] what``, then ``label: summary in 4.2 s``.

    Use it as a context manager around the work: on the way out it prints the final line
    (:meth:`done`, if the status was ever shown) or, after an exception, clears the status line so
    that the error message starts on a clean line.  While it is active and ``stream`` is
    ``sys.stderr``, any other text written to stderr (a note, a warning) first clears the status
    line, so the two never run together on one line.
    """

    def __init__(self, label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
                 interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(self.stream) if enabled is None else bool(enabled)
        self.interval, self._clock = interval, clock
        self.start = clock()
        self._last: float | None = None  # when the status line was last drawn
        self._shown = 0  # length of the status line now on the terminal (0: none)
        self.drawn = False  # whether anything was ever shown (then done() says how it ended)
        self._guarded = None

    # ------------------------------------------------------------------ the status line

    def update(self, i: int, n: int, what: str = "", phase: str = "") -> None:
        """Item ``i`` of ``n`` (1-based) is under way; drawn unless the last draw was under ``interval`` ago."""
        if not self.enabled:
            return
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            return
        head = f"{self.label} {phase}".rstrip()
        self._draw(f"{head} [{i}/{n}, {clock(now - self.start)}] {what}".rstrip(), now)

    def phase(self, text: str) -> None:
        """A new phase with no count (``compile``, ``timing``): drawn at once."""
        now = self._clock()
        if self.enabled:
            self._draw(f"{self.label} {text} [{clock(now - self.start)}]", now)

    def done(self, summary: str) -> None:
        """The final line, ``label: summary in 4.2 s``, in place of the status line (only if one was shown)."""
        if self.enabled and self.drawn:
            self._write(f"{self.label}: {summary} in {took(self._clock() - self.start)}", end="\n")
        self.enabled = False

    def clear(self) -> None:
        """Remove the status line (the cursor back at the start of an empty line)."""
        if self._shown:
            self._raw("\r" + " " * self._shown + "\r")
            self._shown = 0

    # ------------------------------------------------------------------ drawing

    def _width(self) -> int:
        """Columns the status line may take: a longer one wraps, and a carriage return then redraws one row only."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return max(20, columns - 1) if columns > 0 else 119  # a pty nobody sized says 0

    def _draw(self, text: str, now: float) -> None:
        self._write(text[:self._width()], end="")
        self._last, self.drawn = now, True

    def _write(self, text: str, end: str) -> None:
        pad = " " * max(0, self._shown - len(text))
        self._raw("\r" + text + pad + end)
        self._shown = 0 if end else len(text)

    def _raw(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal gone away: the work goes on, silently
            self.enabled = False

    # ------------------------------------------------------------------ context manager

    def __enter__(self) -> "Progress":
        if self.enabled and self.stream is sys.stderr:
            self._guarded = sys.stderr
            sys.stderr = _Guard(self, sys.stderr)
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if self._guarded is not None:
            sys.stderr, self._guarded = self._guarded, None
        if self.enabled:  # an exception, or no done(): leave a clean line for what comes next
            self.clear()
            self.enabled = False


class _Guard:
    """sys.stderr while a :class:`Progress` is active: other text clears the status line first."""

    def __init__(self, progress: Progress, stream: TextIO):
        self._progress, self._stream = progress, stream

    def write(self, text: str) -> int:
        if text:
            self._progress.clear()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
