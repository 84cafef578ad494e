"""Reading a user's iterable without materialising more of it than a limit allows.

The Python API takes lists, ranges, NumPy arrays and iterators alike (radii, depths,
GPUs, implementations, stencil offsets).  Each caller words its own errors; this is
the one place that decides how much is read: a sized collection is judged by its
``len`` before anything is built, anything else is read at most ``limit`` + 1
items, so ``itertools.count()`` is refused at once instead of hanging.
"""
from __future__ import annotations

import itertools
from typing import Any


def take(values: Any, limit: int) -> tuple[list | None, int | None]:
    """``(items, None)`` when ``values`` holds at most ``limit`` items; ``(None, size)`` when it holds more, with
    ``size`` its length where it has one (``limit`` + 1 where ``len`` overflows) and None for an iterator that
    ran past the limit.  TypeError: ``values`` is not iterable."""
    try:
        size = len(values)
    except TypeError:
        size = None
    except (OverflowError, ValueError):
        size = limit + 1
    if size is not None and size > limit:
        return None, size
    items = list(itertools.islice(iter(values), limit + 1))
    if len(items) > limit:
        return None, None
    return items, None


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to one short line, for naming a bad argument in an error."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails is still named by its type
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
