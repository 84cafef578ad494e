"""Recorded measurements for the pictures: read a run, keep the GPU's rows, judge each cell's winner.

Why: a map or a roofline shows what the model predicts; a user who has run
``tcadvisor validate`` (or recorded a corpus) wants to see, on the same picture,
where the measured fastest unit is the predicted one and where it is not.  This
module does the reading and the judging (no Plotly); :mod:`.measured_marks`
draws what it decides.

Two recorded forms are read, each within the bounded readers of
:mod:`tcadvisor.files`:

* ``results.json`` of ``tcadvisor validate``, loaded and checked field by field
  exactly as ``validate --report-from`` does (:func:`~tcadvisor.validate.records.load_results`);
  it carries Nsight Compute's intensity and bottleneck where the run was profiled;
* ``corpus.csv`` of ``benchmarks/record_corpus.py`` or ``calibrate --fit`` (throughput only).

A cell of a map (a stencil, dtype and depth on one GPU) may hold several runs of
a unit (two suites, or several grids): the units are compared on the grid most
of them were measured on, each at the median of its runs there.
"""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, UNITS

#: Two units tie when their measured throughputs differ by at most this fraction, unless the file
#: says otherwise (a results.json records its own ``band``; validate's default is this one).
DEFAULT_BAND = 0.1
#: The columns a corpus CSV must have (the rest are optional).
CORPUS_COLUMNS = ("gpu", "stencil", "unit", "dtype", "fuse", "gstencils", "status")
#: Rows a corpus CSV may hold (a recorded corpus has about a thousand; the size cap alone would let through
#: a million short rows, seconds and hundreds of MB of records for nothing a picture can show).
MAX_CORPUS_ROWS = 100_000
FORMS = "a results.json written by 'tcadvisor validate' or a corpus.csv (benchmarks/record_corpus.py, calibrate --fit)"


@dataclass(frozen=True)
class Run:
    """One recorded run, reduced to what a picture compares."""

    device: str
    stencil: str
    dtype: str  # canonical: double, float, half, bfloat16
    fuse: int
    unit: str
    status: str  # ok, or why there is no throughput (failed, skipped, error, refused)
    reason: str = ""
    gstencils: float | None = None
    grid: str = ""
    impl: str = ""  # the implementation profile that ran (tcadvisor-cc, ...)
    offsets: tuple | None = None  # a custom stencil's offsets (corpus rows give them)
    meas_intensity: float | None = None  # Nsight Compute's C/M, where profiled
    meas_bound: str | None = None  # validate's measured bottleneck

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.gstencils is not None


@dataclass
class Measured:
    """A recorded run as read: where from, which GPU(s), its tie band, its runs."""

    path: Path
    form: str  # "results" (validate) or "corpus"
    devices: tuple[str, ...]
    date: str = ""
    band: float = DEFAULT_BAND
    runs: list[Run] = field(default_factory=list)

    def label(self, device: str | None = None) -> str:
        """'results.json (NVIDIA H100 80GB HBM3, 2026-11-23)': what a picture names as its source."""
        what = ", ".join(x for x in (device or " / ".join(self.devices), self.date) if x)
        return f"{self.path.name} ({what})" if what else self.path.name


# --------------------------------------------------------------------------- reading


def load_measured(path) -> Measured:
    """``path`` as :class:`Measured`: a validate ``results.json`` or a corpus CSV; one-line errors otherwise."""
    if not isinstance(path, (str, Path)):
        raise TcAdvisorError(f"measured results {path!r}: expected the path of {FORMS}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _from_results(path)
    if suffix == ".csv":
        return _from_corpus(path)
    raise TcAdvisorError(f"--measured {str(path)!r}: expected {FORMS} (a .json or .csv file)")


def _dtype(value, where: str) -> str:
    from ..dtypes import parse_dtype

    try:
        return parse_dtype(str(value))
    except TcAdvisorError:
        raise TcAdvisorError(f"{where}: dtype {str(value)[:40]!r} is not one tcadvisor computes in; expected "
                             "double, float, half or bfloat16") from None


def _from_results(path: Path) -> Measured:
    from ..validate.records import load_results

    res = load_results(path)  # bounded, schema and every field's type checked as --report-from does
    runs = []
    for i, m in enumerate(res.measurements):
        where = f"results file {str(path)!r}: measurements[{i}]"
        if m.unit not in UNITS:
            raise TcAdvisorError(f"{where}.unit: expected one of {', '.join(UNITS)}, got {m.unit[:40]!r}")
        if m.fuse < 1:
            raise TcAdvisorError(f"{where}.fuse: expected a fusion depth of at least 1, got {m.fuse}")
        ok = m.status == "ok"
        if ok and not (m.gstencils is not None and math.isfinite(m.gstencils) and m.gstencils > 0):
            raise TcAdvisorError(f"{where}.gstencils: a run with status ok needs a positive throughput, "
                                 f"got {m.gstencils!r}")
        intensity = m.meas_intensity if m.meas_intensity is not None and m.meas_intensity > 0 else None
        runs.append(Run(device=res.device or m.device, stencil=m.stencil, dtype=_dtype(m.dtype, f"{where}.dtype"),
                        fuse=m.fuse, unit=m.unit, status="ok" if ok else (m.status or "not run"),
                        reason=m.reason, gstencils=m.gstencils if ok else None, grid=m.grid, impl=m.impl,
                        meas_intensity=intensity, meas_bound=m.meas_bound))
    devices = tuple(dict.fromkeys([res.device] if res.device else [r.device for r in runs if r.device]))
    if not devices:
        raise TcAdvisorError(f"results file {str(path)!r} names no GPU (field 'device'); expected the GPU the "
                             "runs were recorded on")
    return Measured(path, "results", devices, res.date, float(res.band), runs)


def _from_corpus(path: Path) -> Measured:
    from ..files import MAX_RESULTS_BYTES, read_text

    text = read_text(path, "corpus file", MAX_RESULTS_BYTES)
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    lacking = [c for c in CORPUS_COLUMNS if c not in header]
    if lacking:
        hint = ("; it is validate's results.csv: give the results.json beside it" if "device" in header
                and "suite" in header else "")
        raise TcAdvisorError(f"corpus file {str(path)!r} has no column {', '.join(lacking)}; expected {FORMS}{hint}")
    runs, dates = [], set()
    try:
        for row in reader:
            if len(runs) == MAX_CORPUS_ROWS:
                raise TcAdvisorError(f"corpus file {str(path)!r} holds more than {MAX_CORPUS_ROWS:,} runs; expected "
                                     f"a recorded corpus (about a thousand)")
            runs.append(_corpus_run(path, reader.line_num, row))
            dates.add((row.get("date") or "").strip())
    except csv.Error as exc:
        raise TcAdvisorError(f"corpus file {str(path)!r}: line {reader.line_num}: not CSV ({exc})") from None
    devices = tuple(dict.fromkeys(r.device for r in runs if r.device))
    if not devices:
        raise TcAdvisorError(f"corpus file {str(path)!r} holds no run with its GPU named (column 'gpu'); "
                             f"expected {FORMS}")
    if len(devices) == 1:  # runs that failed or were refused carry no device: the file's one
        runs = [r if r.device else replace(r, device=devices[0]) for r in runs]
    dates = sorted(dates - {""})
    return Measured(path, "corpus", devices, " to ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "",
                    DEFAULT_BAND, runs)


def _corpus_run(path: Path, line: int, row: dict) -> Run:
    def bad(column: str, expected: str):
        shown = repr(row.get(column))
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return TcAdvisorError(f"corpus file {str(path)!r}: line {line}, column '{column}': expected {expected}, "
                              f"got {shown}")

    if None in row:  # more fields than the header
        raise TcAdvisorError(f"corpus file {str(path)!r}: line {line} has more fields than the header")
    unit = row.get("unit") or ""
    if unit not in UNITS:
        raise bad("unit", "one of " + ", ".join(UNITS))
    try:
        fuse = int(row.get("fuse") or "")
    except ValueError:
        raise bad("fuse", "a fusion depth (an integer of at least 1)") from None
    if fuse < 1:
        raise bad("fuse", "a fusion depth (an integer of at least 1)")
    status = (row.get("status") or "").strip()
    gst = None
    if status == "ok":
        try:
            gst = float(row.get("gstencils") or "")
        except ValueError:
            raise bad("gstencils", "a positive number of GStencils/s for a run with status ok") from None
        if not (math.isfinite(gst) and gst > 0):
            raise bad("gstencils", "a positive number of GStencils/s for a run with status ok")
    offsets = None
    if row.get("offsets"):
        try:
            offsets = tuple(sorted(tuple(int(v) for v in o) for o in json.loads(row["offsets"])))
        except (ValueError, TypeError):
            raise bad("offsets", "a JSON list of integer offsets") from None
    stencil = (row.get("stencil") or "").strip()
    if not stencil:
        raise bad("stencil", "a stencil name")
    return Run(device=(row.get("gpu") or "").strip(), stencil=stencil,
               dtype=_dtype(row.get("dtype"), f"corpus file {str(path)!r}: line {line}"), fuse=fuse, unit=unit,
               status=status or "not run", reason=row.get("reason") or "", gstencils=gst,
               grid=row.get("grid") or "", impl=row.get("impl") or "", offsets=offsets)


# --------------------------------------------------------------------------- which GPU


def _norm(text: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def device_matches(spec, device: str) -> bool:
    """Whether runs recorded on ``device`` (the driver's name) belong to ``spec``: the spec the catalogue
    picks for that device name (longest ``device_names`` match), or a calibrated spec named after the
    device ('NVIDIA H100 80GB HBM3 (calibrated ...)').  Not the spec a run's predictions used: ``validate
    --gpu a100`` on an H100 predicts for an A100 but measures the H100.
    """
    from ..hardware import spec_for_device_name

    if _norm(spec.name.split(" (")[0]) == _norm(device):
        return True
    if not spec.device_names:
        return False
    try:
        picked = spec_for_device_name(device)
    except TcAdvisorError:
        picked = None
    return picked is not None and picked.name == spec.name


def _suggest(device: str) -> str:
    from ..hardware import spec_for_device_name

    try:
        spec = spec_for_device_name(device)
    except TcAdvisorError:
        spec = None
    return f" (--gpu {spec.short})" if spec is not None else ""


def runs_for_gpus(measured: Measured, gpus) -> dict[int, tuple[str, list[Run]]]:
    """For each of ``gpus`` (by position) that the file was recorded on: (device, its runs).

    A file recorded on none of them is refused in one line naming its GPU and the pictures'.
    """
    out = {}
    for i, spec in enumerate(gpus):
        for device in measured.devices:
            if device_matches(spec, device):
                out[i] = (device, [r for r in measured.runs if r.device == device])
                break
    if not out:
        recorded = " and ".join(f"{d}{_suggest(d)}" for d in measured.devices)
        drawn = ", ".join(s.name for s in gpus)
        raise TcAdvisorError(f"--measured {str(measured.path)!r} was recorded on {recorded}, not on {drawn}; "
                             "expected results of the GPU drawn (--gpu names it)")
    return out


def stencil_matches(run: Run, stencil) -> bool:
    """A run of ``stencil``: the same name, or (a custom corpus stencil) the same offsets."""
    if run.stencil == stencil.name:
        return True
    return run.offsets is not None and stencil.shape not in ("box", "star") and \
        run.offsets == tuple(sorted(tuple(o) for o in stencil.offsets))


# --------------------------------------------------------------------------- one cell


@dataclass(frozen=True)
class UnitResult:
    """A unit's measurement in one cell: the median of its runs on the cell's grid, or why there is none."""

    unit: str
    gstencils: float | None = None
    runs: int = 0
    intensity: float | None = None
    bound: str | None = None
    grid: str = ""
    impl: str = ""
    why: str = ""  # why not measured here: "skipped: ...", "failed: ...", "measured on another grid (...)"


def cell_results(runs: list[Run]) -> dict[str, UnitResult]:
    """The runs of one stencil, dtype and depth on one GPU, as one :class:`UnitResult` per unit recorded.

    Units are compared on one grid: the one most units ran on (then the one with most runs).
    """
    ok = [r for r in runs if r.ok]
    by_grid: dict[str, list[Run]] = {}
    for r in ok:
        by_grid.setdefault(r.grid, []).append(r)
    grid = max(by_grid, key=lambda g: (len({r.unit for r in by_grid[g]}), len(by_grid[g])), default="")
    out: dict[str, UnitResult] = {}
    for unit in UNITS:
        mine = [r for r in by_grid.get(grid, []) if r.unit == unit]
        if mine:
            intensities = [r.meas_intensity for r in mine if r.meas_intensity is not None]
            bounds = [r.meas_bound for r in mine if r.meas_bound]
            out[unit] = UnitResult(unit, statistics.median(r.gstencils for r in mine), len(mine),
                                   statistics.median(intensities) if intensities else None,
                                   max(set(bounds), key=bounds.count) if bounds else None, grid,
                                   "/".join(dict.fromkeys(r.impl for r in mine if r.impl)))
            continue
        elsewhere = sorted({r.grid for r in ok if r.unit == unit})
        failed = [r for r in runs if r.unit == unit and not r.ok]
        if elsewhere:
            out[unit] = UnitResult(unit, why=f"measured on another grid ({', '.join(elsewhere)})")
        elif failed:
            r = failed[0]
            reason = " ".join(r.reason.split())
            out[unit] = UnitResult(unit, why=r.status + (f": {reason[:70]}{'…' if len(reason) > 70 else ''}"
                                                         if reason else ""))
    return out


@dataclass(frozen=True)
class Verdict:
    """The measured winner of a cell against the predicted one.

    ``state``: ``agree`` (the measured fastest is the predicted unit), ``mismatch`` (another unit is
    faster by more than the tie band), ``tie`` (another unit is faster, within the band), ``unknown``
    (the predicted unit was not measured), or ``''`` (nothing measured).
    """

    predicted: str | None
    measured: str | None
    state: str
    ahead: float | None  # how far the measured winner is ahead of the predicted (or, agreeing, the runner-up)
    missing: tuple[str, ...]  # units the model expects here that have no measurement
    text: str


def _label(unit: str | None) -> str:
    return UNIT_LABELS.get(unit, str(unit)) if unit else "–"


def pct(x: float) -> str:
    """'12 %' (or '4.5 %' below 10 %): a throughput margin as the pictures print it."""
    return f"{100 * x:.0f} %" if abs(x) >= 0.1 else f"{100 * x:.1f} %"


def verdict(predicted: str | None, expected, results: dict[str, UnitResult], band: float = DEFAULT_BAND,
            tied=()) -> Verdict:
    """Judge one cell: ``predicted`` the model's fastest unit, ``expected`` the units the model says run there,
    ``tied`` those it puts within its tie tolerance of ``predicted`` (it picked the simplest of them: a
    measured winner among them is still a mismatch of the advice, and the text says the model tied them)."""
    measured = {u: r for u, r in results.items() if r.gstencils is not None}
    missing = tuple(u for u in UNITS if u in set(expected) and u not in measured)
    notes = [f"{_label(u)}" + (f" ({results[u].why})" if u in results and results[u].why else "") for u in missing]
    tail = ("; not measured: " + ", ".join(notes)) if notes else ""
    if not measured:
        return Verdict(predicted, None, "", None, missing, ("nothing measured" + tail) if results else "")
    order = sorted(measured, key=lambda u: (-measured[u].gstencils, UNITS.index(u)))
    best = order[0]
    top = measured[best].gstencils
    if predicted is None:
        return Verdict(None, best, "", None, missing, f"measured {_label(best)} fastest" + tail)
    if predicted not in measured:
        return Verdict(predicted, best, "unknown", None, missing,
                       f"predicted {_label(predicted)}, measured {_label(best)} fastest of those measured" + tail)
    if best == predicted:
        if len(order) == 1:
            return Verdict(predicted, best, "agree", None, missing,
                           f"predicted {_label(predicted)}, measured {_label(best)} (the only unit measured)" + tail)
        ahead = top / measured[order[1]].gstencils - 1
        return Verdict(predicted, best, "agree", ahead, missing,
                       f"predicted {_label(predicted)}, measured {_label(best)} (ahead of {_label(order[1])} by "
                       f"{pct(ahead)})" + tail)
    ahead = top / measured[predicted].gstencils - 1
    state = "tie" if ahead <= band else "mismatch"
    within = f", within the ±{pct(band)} tie band" if state == "tie" else ""
    within += "; the model ties the two" if best in set(tied) else ""
    return Verdict(predicted, best, state, ahead, missing,
                   f"predicted {_label(predicted)}, measured {_label(best)} (ahead by {pct(ahead)}{within})" + tail)
