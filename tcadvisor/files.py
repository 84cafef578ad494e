"""The one bounded reader for every file tcadvisor reads.

GPU specs, implementation profiles, stencil files, weights, suites and results
files are the user's input as much as a command-line option is, and a path can
name anything: a FIFO (opening it for reading would wait for a writer forever),
a device such as ``/dev/zero`` (endless, yet ``st_size`` says 0), a directory, a
file of gigabytes, text in another encoding, or YAML built to explode
("billion laughs": a few hundred bytes of aliases that expand to 10⁹ nodes).
Every function here answers or refuses within a bounded time and memory:

* only regular files are read; anything else is refused by name *before* it is
  opened for reading (:func:`os.stat`), and the file is opened with
  ``O_NONBLOCK`` and checked again with :func:`os.fstat`, so that a FIFO
  swapped in between can never hang;
* at most ``limit`` bytes are read, with a bounded read (``st_size`` is not
  trusted);
* text is UTF-8 (a BOM is allowed), never the locale's codec;
* YAML is composed with a nesting budget and an alias budget (the nodes that
  aliases add once expanded); JSON with a nesting budget.

Every failure is a :class:`~tcadvisor.errors.TcAdvisorError` of one line that
names the file (with ``what``, e.g. "GPU spec") and what is accepted.
"""
from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import yaml

from .errors import TcAdvisorError

#: Default size cap: every file tcadvisor reads is far smaller (a spec is a few kilobytes).
MAX_BYTES = 1 << 20
#: Results files (``validate --report-from``) hold up to 2,000 runs.
MAX_RESULTS_BYTES = 64 << 20
#: Weights (.npy or text): a kernel of at most a few thousand numbers.
MAX_WEIGHTS_BYTES = 8 << 20
#: Nesting deeper than this is not a tcadvisor file (the deepest they use is about 6).
MAX_DEPTH = 64
#: Aliases may add at most this many nodes once expanded (a billion-laughs file adds 10⁹).
MAX_ALIAS_NODES = 100_000


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _human(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} bytes"


def read_bytes(path: str | os.PathLike, what: str = "file", limit: int = MAX_BYTES) -> bytes:
    """The content of the regular file ``path``: at most ``limit`` bytes, else a one-line error."""
    shown = str(path)
    try:
        st = os.stat(path)  # follows symlinks: a link to /dev/zero is a device
    except FileNotFoundError:
        raise TcAdvisorError(f"{what} {shown!r} does not exist") from None
    except OSError as exc:
        raise TcAdvisorError(f"{what} {shown!r} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise TcAdvisorError(f"{what} {shown!r} is {_kind(st.st_mode)}; expected a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise TcAdvisorError(f"{what} {shown!r} cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the two looks
            raise TcAdvisorError(f"{what} {shown!r} is {_kind(st.st_mode)}; expected a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise TcAdvisorError(f"{what} {shown!r} cannot be read without waiting; expected a regular file") from None
    except OSError as exc:
        raise TcAdvisorError(f"{what} {shown!r} cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise TcAdvisorError(f"{what} {shown!r} is too large: more than {_human(limit)}; expected a {what} "
                             f"of at most {_human(limit)}")
    return b"".join(chunks)


def decode(data: bytes, path: str | os.PathLike, what: str = "file") -> str:
    """``data`` as UTF-8 text (a leading BOM dropped), else a one-line error naming the offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TcAdvisorError(f"{what} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                             f"{exc.start}); save it as UTF-8") from None


def read_text(path: str | os.PathLike, what: str = "file", limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (at most ``limit`` bytes)."""
    return decode(read_bytes(path, what, limit), path, what)


# --------------------------------------------------------------------------------------------- YAML


class _BudgetExceeded(Exception):
    pass


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a nesting budget (checked while composing, before Python's recursion limit
    is near) and an alias budget (checked on the composed graph, before anything is constructed)."""

    def __init__(self, stream, max_depth: int = MAX_DEPTH):
        super().__init__(stream)
        self._depth = 0
        self._max_depth = max_depth

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark
                raise _BudgetExceeded(f"nested more than {self._max_depth} levels deep (line {mark.line + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_nodes(root: yaml.Node, budget: int) -> None:
    """Refuse a graph whose aliases add more than ``budget`` nodes once expanded, or that contains itself."""
    sizes: dict[int, int] = {}
    distinct = 0
    # iterative post-order walk: (node, children visited?)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            if isinstance(node, yaml.SequenceNode):
                children = node.value
            elif isinstance(node, yaml.MappingNode):
                children = [n for pair in node.value for n in pair]
            else:
                children = ()
            total = 1 + sum(sizes[id(c)] for c in children)
            sizes[key] = total
            if total - distinct > budget:
                raise _BudgetExceeded(f"its aliases expand to more than {budget} nodes")
            continue
        if key in sizes:
            continue
        if key in active:
            raise _BudgetExceeded("an alias refers to a node that contains it")
        distinct += 1
        active.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((c, False) for c in reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            stack.extend((c, False) for pair in reversed(node.value) for c in reversed(pair))
    if sizes.get(id(root), 0) - distinct > budget:
        raise _BudgetExceeded(f"its aliases expand to more than {budget} nodes")


#: libyaml's parser and composer where PyYAML has them (ten times faster); the pure-Python ones otherwise.
_FAST = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None


def yaml_events(text: str):
    """The YAML parser's events of ``text`` (libyaml's where available): a scan with nothing composed."""
    return yaml.parse(text, Loader=_FAST or yaml.SafeLoader)


def _check_depth(text: str, max_depth: int) -> bool:
    """Refuse nesting deeper than ``max_depth`` from the parser's events (no recursion, nothing built);
    whether the text holds an alias."""
    depth, aliases = 0, False
    for event in yaml_events(text):
        if isinstance(event, yaml.AliasEvent):
            aliases = True
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > max_depth:
                raise _BudgetExceeded(f"nested more than {max_depth} levels deep (line {event.start_mark.line + 1})")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return aliases


def parse_yaml(text: str, path: str | os.PathLike = "<text>", what: str = "file", *,
               max_depth: int = MAX_DEPTH, max_alias_nodes: int = MAX_ALIAS_NODES) -> Any:
    """``text`` parsed as one YAML document with the safe loader, within the nesting and alias budgets."""
    loader, aliases = None, True
    try:
        if _FAST is not None:
            aliases = _check_depth(text, max_depth)  # libyaml composes recursively in C: bound the depth first
            loader = _FAST(text)
        else:
            loader = _BoundedLoader(text, max_depth)
        node = loader.get_single_node()
        if node is None:
            return None
        if aliases:
            _expanded_nodes(node, max_alias_nodes)
        return loader.construct_document(node)
    except _BudgetExceeded as exc:
        raise TcAdvisorError(f"{what} {path}: refused: {exc}; expected YAML nested at most {max_depth} "
                             f"levels whose aliases add at most {max_alias_nodes} nodes") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or "invalid YAML").split())
        if "nesting depth" in problem:  # libyaml's own limit, met before ours
            raise TcAdvisorError(f"{what} {path}: refused: nested more than {max_depth} levels deep{where}; "
                                 f"expected at most {max_depth}") from None
        raise TcAdvisorError(f"{what} {path}: not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise TcAdvisorError(f"{what} {path}: nested too deeply; expected at most {max_depth} levels") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(path: str | os.PathLike, what: str = "file", limit: int = MAX_BYTES) -> Any:
    """The YAML file ``path``, read and parsed within every bound of this module."""
    return parse_yaml(read_text(path, what, limit), path, what)


# --------------------------------------------------------------------------------------------- JSON

_JSON_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON ``text`` (strings skipped), without recursion."""
    depth = deepest = 0
    for m in _JSON_BRACKETS.finditer(_JSON_STRINGS.sub("", text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
    return deepest


def parse_json(text: str, path: str | os.PathLike = "<text>", what: str = "file", *,
               max_depth: int = MAX_DEPTH) -> Any:
    """``text`` parsed as JSON, refusing nesting deeper than ``max_depth``."""
    if json_depth(text) > max_depth:
        raise TcAdvisorError(f"{what} {path}: refused: nested more than {max_depth} levels deep; "
                             f"expected at most {max_depth}")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise TcAdvisorError(f"{what} {path}: not valid JSON ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise TcAdvisorError(f"{what} {path}: nested too deeply; expected at most {max_depth} levels") from None


def load_json(path: str | os.PathLike, what: str = "file", limit: int = MAX_BYTES) -> Any:
    """The JSON file ``path``, read and parsed within every bound of this module."""
    return parse_json(read_text(path, what, limit), path, what)


# --------------------------------------------------------------------------------------------- NumPy


def load_npy(path: str | os.PathLike, what: str = "file", limit: int = MAX_WEIGHTS_BYTES):
    """A ``.npy`` array, read with the same bounds and ``allow_pickle=False``."""
    import numpy as np

    data = read_bytes(path, what, limit)
    _check_npy_header(data, path, what)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except MemoryError:
        raise TcAdvisorError(f"{what} {str(path)!r} declares an array too large to read") from None
    except (ValueError, OSError, EOFError) as exc:
        raise TcAdvisorError(f"{what} {str(path)!r} is not a NumPy .npy array of numbers "
                             f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None


def _check_npy_header(data: bytes, path, what: str) -> None:
    """Refuse a ``.npy`` whose header declares more data than the file holds, before NumPy allocates it (a
    100-byte file may declare a 10^12-element array)."""
    import numpy as np

    if data.startswith(b"PK\x03\x04"):
        return  # a .npz archive: its reader says so
    if not data.startswith(b"\x93NUMPY"):  # np.load would read it as a pickle and say "contains pickled data"
        raise TcAdvisorError(f"{what} {str(path)!r} is not a NumPy .npy array of numbers (it does not begin with "
                             "NumPy's magic string; save the weights with numpy.save)")
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            return  # a later format version: np.load judges it
        shape, _, dtype = read_header(stream)
    except (ValueError, OSError, EOFError, TypeError, SyntaxError):
        return  # a malformed header: np.load names what is wrong
    cells = 1
    for n in shape:
        cells *= int(n)
    declared = cells * dtype.itemsize
    held = len(data) - stream.tell()
    if declared > held:
        raise TcAdvisorError(f"{what} {str(path)!r} is not a NumPy .npy array of numbers (its header declares shape "
                             f"{tuple(shape)}, {declared} bytes, but the file holds {held})")


# --------------------------------------------------------------------------------------------- listing


def unique_dirs(paths) -> list[Path]:
    """``paths`` with repeats dropped (the same directory however it is spelt), in their first order."""
    seen: set = set()
    out = []
    for p in paths:
        p = Path(p)
        try:
            st = os.stat(p)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


# --------------------------------------------------------------------------------------------- output


def safe_stdio() -> None:
    """Make stdout and stderr replace what their encoding cannot write (``α`` under PYTHONIOENCODING=ascii
    or a C locale) instead of raising UnicodeEncodeError in the middle of an answer."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or ""
        if not encoding or encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig"):
            continue
        try:
            "α–×≤".encode(encoding)
            continue
        except (UnicodeEncodeError, LookupError):
            pass
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot change
                pass
