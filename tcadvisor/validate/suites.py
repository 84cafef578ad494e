"""Suite files: which cases ``tcadvisor validate`` runs (format documented in ``docs/validation.md``).

A suite is YAML: a name, optional ``defaults`` for every case, the tie band of the outcome
comparison, and a list of ``cases``.  A case is a stencil, a dtype, one or more fusion depths
and the units to run; each (case, depth, unit) becomes one :class:`Config`.  Whether the bundled
kernel of a unit can run a configuration on this GPU is decided when the suite runs (it depends
on the device); here the file is only checked for what can be checked anywhere, and every
problem is one line naming the file, the case and the field.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..data import data_dir
from ..dtypes import parse_dtype
from ..errors import TcAdvisorError
from ..hardware import UNITS
from ..mma import MmaShape
from ..sources import PATH_SUFFIXES, source_of
from ..stencil import MAX_FUSE, Stencil, parse_stencil

#: Fields a case may have (``defaults`` may hold any but ``id``, ``stencil`` and ``paper``).
CASE_FIELDS = ("id", "stencil", "dtype", "fuse", "units", "grid", "repeats", "sweeps", "seed", "mma", "paper", "note")
TOP_FIELDS = ("name", "description", "defaults", "tie_band", "cases")
DEFAULTS = {"dtype": "double", "units": "all", "grid": "auto", "repeats": 5, "sweeps": 4, "seed": 1}
#: Timing needs a median of at least this many repeats.
MIN_REPEATS = 5
MAX_SWEEPS = 1000
MAX_CONFIGS = 2000
#: A suite file is read up to this size to count its cases (a suite over the run limit is refused by that
#: limit, not by its size); only a suite of at most :data:`tcadvisor.files.MAX_BYTES` is parsed.
MAX_SUITE_SCAN_BYTES = 16 << 20
#: ... and scanned for at most this many parser events (well under a second).
MAX_SCAN_EVENTS = 1_000_000
DEFAULT_TIE_BAND = 0.10
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-|\.\.)\s*(\d+)\s*$")
_GRID = re.compile(r"^\d+(?:[x×]\d+){0,2}$")


@dataclass(frozen=True)
class Config:
    """One run: a case at one fusion depth on one unit."""

    case: str
    stencil: Stencil
    dtype: str
    fuse: int
    unit: str
    grid: str  # "auto" or "NxM..."
    repeats: int
    sweeps: int
    seed: int
    mma: str | None = None
    paper: str = ""
    stencil_text: str = ""  # as written in the suite (what a child process parses again)

    @property
    def key(self) -> tuple:
        """What the outcome comparison groups by: the same stencil, dtype and depth."""
        return (self.case, self.stencil.name, self.dtype, self.fuse)


@dataclass(frozen=True)
class Case:
    id: str
    stencil: Stencil
    dtype: str
    fuses: tuple[int, ...]
    units: tuple[str, ...]
    grid: str
    repeats: int
    sweeps: int
    seed: int
    mma: str | None = None
    paper: str = ""
    note: str = ""
    stencil_text: str = ""


@dataclass(frozen=True)
class Suite:
    name: str
    path: Path
    description: str
    tie_band: float
    cases: tuple[Case, ...] = field(default_factory=tuple)

    def configs(self) -> list[Config]:
        """Every (case, depth, unit), in file order: depths, then units, within a case."""
        out = []
        for c in self.cases:
            for t in c.fuses:
                for unit in c.units:
                    out.append(Config(c.id, c.stencil, c.dtype, t, unit, c.grid, c.repeats, c.sweeps, c.seed,
                                      c.mma if unit != "cuda_core" else None, c.paper,
                                      c.stencil_text or c.stencil.name))
        return out


class _Where:
    """Builds the one-line errors: file, case, field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, problem: str) -> TcAdvisorError:
        return TcAdvisorError(f"suite {self.path}: {where}: {problem}")


def _int(w: _Where, where: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise w.fail(where, f"expected an integer from {lo} to {hi}, got {value!r}")
    return value


def parse_fuses(w: _Where, where: str, value: Any) -> tuple[int, ...]:
    """``3``, ``[1, 2, 4]`` or ``"1-8"`` as sorted unique depths."""
    if isinstance(value, str):
        m = _RANGE.match(value)
        if not m:
            raise w.fail(where, f"expected a depth, a list of depths or a range such as '1-8', got {value!r}")
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo < 1 or hi < lo or hi > MAX_FUSE:
            raise w.fail(where, f"range {value!r} must run upwards within 1..{MAX_FUSE}")
        return tuple(range(lo, hi + 1))
    values = value if isinstance(value, list) else [value]
    if not values:
        raise w.fail(where, "expected at least one fusion depth")
    return tuple(sorted({_int(w, where, v, 1, MAX_FUSE) for v in values}))


def parse_units(w: _Where, where: str, value: Any) -> tuple[str, ...]:
    if value == "all":
        return UNITS
    values = value if isinstance(value, list) else [value]
    if not values or any(v not in UNITS for v in values):
        raise w.fail(where, f"expected 'all' or a list drawn from {', '.join(UNITS)}, got {value!r}")
    return tuple(u for u in UNITS if u in values)


def parse_grid_text(w: _Where, where: str, value: Any, dims: int) -> str:
    text = str(value).strip().lower()
    if text == "auto":
        return text
    if not _GRID.match(text):
        raise w.fail(where, f"expected 'auto' or extents such as 10240x10240, got {value!r}")
    parts = re.split("[x×]", text)
    if len(parts) != dims:
        raise w.fail(where, f"{text} has {len(parts)} extents but the stencil is {dims}D")
    if any(int(p) < 1 for p in parts):
        raise w.fail(where, f"every extent of {text} must be at least 1")
    return "x".join(parts)


def parse_case(w: _Where, index: int, raw: Any, defaults: Mapping) -> Case:
    if not isinstance(raw, Mapping):
        raise w.fail(f"case {index}", f"expected a mapping with at least 'stencil', got {raw!r}")
    label = f"case {index}" + (f" ({raw['id']})" if isinstance(raw.get("id"), str) else "")
    unknown = [k for k in raw if k not in CASE_FIELDS]
    if unknown:
        raise w.fail(f"{label}: field '{unknown[0]}'", f"unknown; expected one of {', '.join(CASE_FIELDS)}")
    merged = {**DEFAULTS, **defaults, **raw}
    if "stencil" not in raw:
        raise w.fail(f"{label}: field 'stencil'", "missing")
    if "fuse" not in merged:
        raise w.fail(f"{label}: field 'fuse'", "missing (a depth, a list or a range such as '1-8')")

    def at(name: str) -> str:
        return f"{label}: field '{name}'"

    stencil_text = _stencil_text(w.path, merged["stencil"])
    try:
        source = source_of(stencil_text)  # a .npy weight array or a C loop nest: read with its dtype
        stencil = source.stencil if source is not None else parse_stencil(stencil_text)
    except TcAdvisorError as exc:
        raise w.fail(at("stencil"), str(exc)) from None
    if "dtype" not in raw and "dtype" not in defaults and source is not None and source.dtype is not None:
        merged["dtype"] = source.dtype  # as advise: the file's element type unless the suite names one
    try:
        dtype = parse_dtype(merged["dtype"])
    except TcAdvisorError as exc:
        raise w.fail(at("dtype"), str(exc)) from None
    fuses = parse_fuses(w, at("fuse"), merged["fuse"])
    units = parse_units(w, at("units"), merged["units"])
    grid = parse_grid_text(w, at("grid"), merged["grid"], stencil.dims)
    repeats = _int(w, at("repeats"), merged["repeats"], MIN_REPEATS, 1000)
    sweeps = _int(w, at("sweeps"), merged["sweeps"], 1, MAX_SWEEPS)
    seed = _int(w, at("seed"), merged["seed"], 0, 2**31 - 1)
    mma = merged.get("mma")
    if mma is not None:
        try:
            mma = str(MmaShape.parse(mma))
        except TcAdvisorError as exc:
            raise w.fail(at("mma"), str(exc)) from None
    case_id = raw.get("id", default_id(stencil, dtype, fuses))
    if not isinstance(case_id, str) or not case_id.strip():
        raise w.fail(at("id"), f"expected a non-empty string, got {case_id!r}")
    for name in ("paper", "note"):
        if name in raw and not isinstance(raw[name], str):
            raise w.fail(at(name), f"expected text, got {raw[name]!r}")
    return Case(case_id.strip(), stencil, dtype, fuses, units, grid, repeats, sweeps, seed, mma,
                raw.get("paper", ""), raw.get("note", ""), stencil_text)


_STENCIL_FILE_SUFFIXES = (".txt", ".yaml", ".yml", ".json", ".stencil") + PATH_SUFFIXES


def _stencil_text(suite_path: Path, value: Any) -> str:
    """A case's stencil: a name as written; a relative file path resolved against the suite file's
    directory (not the working directory), so that a suite runs the same from anywhere."""
    text = str(value).strip()
    if not text or os.path.isabs(os.path.expanduser(text)):
        return text
    candidate = Path(suite_path).parent / text
    if Path(text).suffix.lower() in _STENCIL_FILE_SUFFIXES or os.sep in text or candidate.is_file():
        return str(candidate.resolve()) if candidate.exists() else str(candidate)
    return text


def default_id(stencil: Stencil, dtype: str, fuses: tuple[int, ...]) -> str:
    """``Box-2D1R-double-t3``, ``Box-2D1R-double-t1..10``."""
    depths = "-".join(map(str, fuses)) if len(fuses) < 4 else f"{fuses[0]}..{fuses[-1]}"
    return f"{stencil.name}-{dtype}-t{depths}"


def parse_suite(raw: Any, path: Path) -> Suite:
    w = _Where(path)
    if not isinstance(raw, Mapping):
        raise w.fail("top level", "expected a mapping with 'name' and 'cases'")
    unknown = [k for k in raw if k not in TOP_FIELDS]
    if unknown:
        raise w.fail(f"field '{unknown[0]}'", f"unknown; expected one of {', '.join(TOP_FIELDS)}")
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise w.fail("field 'name'", f"expected a non-empty string, got {name!r}")
    defaults = raw.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise w.fail("field 'defaults'", "expected a mapping of case fields")
    for key in defaults:
        if key not in CASE_FIELDS or key in ("id", "stencil", "paper"):
            raise w.fail(f"defaults: field '{key}'", "not a field every case can share")
    band = raw.get("tie_band", DEFAULT_TIE_BAND)
    if isinstance(band, bool) or not isinstance(band, (int, float)) or not 0 <= band < 1:
        raise w.fail("field 'tie_band'", f"expected a fraction in [0, 1) such as 0.1, got {band!r}")
    cases_raw = raw.get("cases")
    if not isinstance(cases_raw, list) or not cases_raw:
        raise w.fail("field 'cases'", "expected a non-empty list of cases")
    cases = tuple(parse_case(w, i + 1, c, defaults) for i, c in enumerate(cases_raw))
    seen: dict[str, int] = {}
    for i, c in enumerate(cases):
        if c.id in seen:
            raise w.fail(f"case {i + 1} ({c.id}): field 'id'", f"repeats the id of case {seen[c.id] + 1}")
        seen[c.id] = i
    suite = Suite(name.strip(), path, " ".join(str(raw.get("description", "")).split()), float(band), cases)
    n = len(suite.configs())
    if n > MAX_CONFIGS:
        raise w.fail("field 'cases'", f"{n} runs; a suite may hold at most {MAX_CONFIGS}")
    return suite


def suites_dir() -> Path:
    return data_dir("validation") / "suites"


def bundled_suites() -> list[str]:
    return sorted(p.stem for p in suites_dir().glob("*.yaml"))


def load_suite(name_or_path: str | os.PathLike) -> Suite:
    """``--suite``: a bundled suite's name (``paper``) or a YAML file of one's own."""
    text = str(name_or_path)
    if text.endswith((".yaml", ".yml")) or os.sep in text:
        path = Path(text)
        if not path.exists():  # anything else that is not a regular file is named by the reader
            raise TcAdvisorError(f"suite file {text!r} does not exist")
    else:
        path = suites_dir() / f"{text}.yaml"
        if not path.is_file():
            raise TcAdvisorError(f"unknown suite {text!r}; expected a YAML file or one of: "
                                 f"{', '.join(bundled_suites())}")
    from ..files import MAX_BYTES, parse_yaml, read_bytes

    data = read_bytes(path, "suite", MAX_SUITE_SCAN_BYTES)
    text = data.decode("utf-8-sig", errors="replace")
    cases = count_cases(text, MAX_CONFIGS + 1)
    if cases > MAX_CONFIGS:  # every case is at least one run: refused before the cases are parsed
        raise _Where(path).fail("field 'cases'", f"more than {MAX_CONFIGS} cases, so more than {MAX_CONFIGS} "
                                                 f"runs; a suite may hold at most {MAX_CONFIGS}")
    if len(data) > MAX_BYTES:
        raise TcAdvisorError(f"suite {str(path)!r} is larger than {MAX_BYTES >> 20} MiB; expected a suite of at "
                             f"most {MAX_BYTES >> 20} MiB ({MAX_CONFIGS} runs fit in far less)")
    from ..files import decode

    return parse_suite(parse_yaml(decode(data, path, "suite"), path, "suite"), path)


def count_cases(text: str, stop: int) -> int:
    """How many items the top-level ``cases`` list holds (counting stops at ``stop``), read from the parser's
    events: nothing is composed or constructed, so a huge suite costs only the scan up to ``stop`` cases.
    Text that is not such a mapping counts 0 (the full parse then says what is wrong)."""
    stack: list[list] = []  # [is a mapping, next node is a key, is the top-level cases list]
    last_key = None
    count = 0
    from ..files import yaml_events

    try:
        for n, event in enumerate(yaml_events(text)):
            if n > MAX_SCAN_EVENTS:
                return count  # a bounded scan: what it did not reach is refused by the size limit
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                if not stack:
                    return count
                continue
            if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent,
                                      yaml.SequenceStartEvent)):
                continue
            if not stack and not isinstance(event, yaml.MappingStartEvent):
                return 0
            is_key = False
            if stack:
                parent = stack[-1]
                if parent[0]:
                    is_key, parent[1] = parent[1], not parent[1]
                elif parent[2]:
                    count += 1
                    if count >= stop:
                        return count
                if len(stack) == 1 and is_key:
                    last_key = event.value if isinstance(event, yaml.ScalarEvent) else None
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                cases = (len(stack) == 1 and not is_key and last_key == "cases"
                         and isinstance(event, yaml.SequenceStartEvent))
                stack.append([isinstance(event, yaml.MappingStartEvent), True, cases])
    except yaml.YAMLError:
        return 0  # the full parse reports it with its line
    return count
