"""What a validation run records: one :class:`Measurement` per run, one :class:`Comparison` per pair
of units at the same stencil, dtype and depth, and :class:`Results` holding both.

Records are flat (every field a number, a string, a boolean or ``None``) so that one row of the
CSV is one record and the JSON round-trips exactly; the report and the summary of docs/results.md are
built from these files alone, never from a live GPU.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = 1


@dataclass
class Measurement:
    # what ran
    suite: str = ""
    case: str = ""
    stencil: str = ""
    dims: int = 0
    points_per_stencil: int = 0  # K
    dtype: str = ""
    fuse: int = 1
    unit: str = ""
    impl: str = ""  # implementation profile (tcadvisor-cc, ...)
    kernel_name: str = ""  # bundled-kernel registry name
    cuda_function: str = ""
    precision: str = ""
    mma: str | None = None
    alpha: float | None = None
    alpha_exact: str | None = None  # "7/16"
    beta: float | None = None
    grid: str = ""
    points: int = 0
    steps: int = 0
    sweeps: int = 0
    repeats: int = 0
    device: str = ""
    spec: str = ""  # the GPU spec the predictions use
    paper: str = ""
    kernel: str = ""  # the kernel's one-line description
    status: str = ""  # ok | failed (wrong output) | skipped | error
    reason: str = ""
    note: str = ""
    # correctness
    checked: bool | None = None
    correct: bool | None = None
    max_rel_error: float | None = None
    tolerance: float | None = None
    # timing (CUDA events, median of repeats of the timed sweeps)
    seconds: float | None = None
    seconds_all: list[float] = field(default_factory=list)
    gstencils: float | None = None
    useful_tflops: float | None = None
    executed_tflops: float | None = None
    executed_flops_per_point: float | None = None  # counted on the host, per output point and sweep
    # the model's prediction for this configuration on the spec
    pred_flops_per_point: float | None = None  # C
    pred_bytes_per_point: float | None = None  # M
    pred_intensity: float | None = None  # I
    pred_ridge: float | None = None
    pred_bound: str | None = None
    pred_gstencils: float | None = None
    pred_executed_tflops: float | None = None
    pred_peak_tflops: float | None = None
    pred_bandwidth_gbs: float | None = None
    pred_scenario: int | None = None
    # Nsight Compute, one launch (one sweep)
    profiled: bool = False
    profile_note: str = ""
    ncu_kernel: str = ""
    ncu_id: int | None = None
    ncu_dram_read_bytes: float | None = None
    ncu_dram_write_bytes: float | None = None
    ncu_tensor_inst: float | None = None
    ncu_tensor_ops: float | None = None  # the profiler's own tensor FLOP count, where it has one
    ncu_cc_flops: float | None = None  # CUDA-core FLOPs of the kernel's precision family
    ncu_duration_s: float | None = None
    # measured per output point and sweep, and relative errors (measured / predicted - 1)
    meas_flops_per_point: float | None = None
    meas_bytes_per_point: float | None = None
    meas_intensity: float | None = None
    err_flops: float | None = None
    err_bytes: float | None = None
    err_intensity: float | None = None
    err_gstencils: float | None = None
    # the bottleneck: fraction of each roof reached, and the closer roof
    util_bandwidth: float | None = None
    util_compute: float | None = None
    meas_bound: str | None = None
    meas_bound_basis: str = ""  # "ncu" (measured traffic and work) or "model traffic"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def label(self) -> str:
        return f"{self.stencil} {self.dtype} t={self.fuse} {self.unit}"


@dataclass
class Comparison:
    """Unit ``b`` against unit ``a`` at the same stencil, dtype and depth: ratio = b / a."""

    suite: str = ""
    case: str = ""
    stencil: str = ""
    dtype: str = ""
    fuse: int = 1
    unit_a: str = ""
    unit_b: str = ""
    pred_ratio: float | None = None
    meas_ratio: float | None = None
    pred_outcome: str | None = None  # wins | loses | ties (b against a)
    meas_outcome: str | None = None
    agree: bool | None = None
    band: float = 0.1


@dataclass
class Results:
    schema: int = SCHEMA
    tool: str = ""
    date: str = ""
    device: str = ""
    spec: dict = field(default_factory=dict)  # name, path, bandwidth and peaks used for the predictions
    suites: list[str] = field(default_factory=list)
    band: float = 0.1
    profile: dict = field(default_factory=dict)  # ncu version, metrics, problems
    measurements: list[Measurement] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    summary: dict = field(default_factory=dict)


def _clean(value: Any) -> Any:
    """JSON has no NaN: non-finite numbers become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def to_dict(results: Results) -> dict:
    return _clean(dataclasses.asdict(results))


def _build(cls, raw: dict):
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in names})


def from_dict(raw: dict) -> Results:
    res = _build(Results, {k: v for k, v in raw.items() if k not in ("measurements", "comparisons")})
    res.measurements = [_build(Measurement, m) for m in raw.get("measurements", [])]
    res.comparisons = [_build(Comparison, c) for c in raw.get("comparisons", [])]
    return res


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same directory, then rename:
    a reader never sees half a file, and an interrupted run leaves the old one."""
    import os
    import tempfile

    from ..errors import TcAdvisorError

    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # a full disk fails here, before the rename
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # an ordinary file, not mkstemp's private 0600
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise TcAdvisorError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    finally:  # any failure (ENOSPC, Ctrl-C, SIGTERM through the CLI's handler): no temporary file left behind
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


def load_results(path: str | Path) -> Results:
    from ..errors import TcAdvisorError

    from ..files import MAX_RESULTS_BYTES, load_json

    path = Path(path)
    raw = load_json(path, "results file", MAX_RESULTS_BYTES)
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise TcAdvisorError(f"results file {str(path)!r} is not a tcadvisor validation result (schema {SCHEMA})")
    check_results(raw, path)
    return from_dict(raw)


# What each annotation of the records accepts (JSON types; ``bool`` is never a number here).
_NUMBER = "a number"
_ACCEPTS = {
    "str": ((str,), "text"),
    "str | None": ((str, type(None)), "text or null"),
    "int": ((int,), "an integer"),
    "int | None": ((int, type(None)), "an integer or null"),
    "float": ((int, float), _NUMBER),
    "float | None": ((int, float, type(None)), "a number or null"),
    "bool": ((bool,), "true or false"),
    "bool | None": ((bool, type(None)), "true, false or null"),
}


def _fits(value: Any, types: tuple) -> bool:
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _bad(path: Path, where: str, value: Any, expected: str):
    from ..errors import TcAdvisorError

    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return TcAdvisorError(f"results file {str(path)!r}: field '{where}': expected {expected}, got {shown}")


def _check_record(path: Path, where: str, raw: Any, cls) -> None:
    if not isinstance(raw, dict):
        raise _bad(path, where, raw, "a mapping of the record's fields")
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        value, kind = raw[f.name], str(f.type)
        if kind == "list[float]":
            if not isinstance(value, list) or not all(_fits(v, (int, float, type(None))) for v in value):
                raise _bad(path, f"{where}.{f.name}", value, "a list of numbers")
        elif kind in _ACCEPTS:
            types, expected = _ACCEPTS[kind]
            if not _fits(value, types):
                raise _bad(path, f"{where}.{f.name}", value, expected)


def _check_numbers(path: Path, where: str, value: Any, depth: int) -> None:
    """A number or null, or (``depth`` levels down) a mapping of them."""
    if depth and isinstance(value, dict):
        for k, v in value.items():
            _check_numbers(path, f"{where}.{k}", v, depth - 1)
    elif not _fits(value, (int, float, type(None))):
        raise _bad(path, where, value, "a number or null" + (" or a mapping of them" if depth else ""))


def check_results(raw: dict, path: str | Path) -> None:
    """Refuse, in one line naming the field, a results file whose fields have the wrong types (the report
    is built from them; a wrong type would otherwise fail deep inside it, or be written out silently)."""
    path = Path(path)
    for name in ("tool", "date", "device"):
        if name in raw and not isinstance(raw[name], str):
            raise _bad(path, name, raw[name], "text")
    band = raw.get("band", 0.1)
    if not _fits(band, (int, float)) or not 0 <= band < 1:
        raise _bad(path, "band", band, "a fraction in [0, 1) such as 0.1")
    suites = raw.get("suites", [])
    if not isinstance(suites, list) or not all(isinstance(s, str) for s in suites):
        raise _bad(path, "suites", suites, "a list of suite names")
    spec = raw.get("spec", {})
    if not isinstance(spec, dict):
        raise _bad(path, "spec", spec, "a mapping (name, key, path, bandwidth_gbs, peak_tflops)")
    for name in ("name", "key", "path"):
        if name in spec and not isinstance(spec[name], str):
            raise _bad(path, f"spec.{name}", spec[name], "text")
    if "bandwidth_gbs" in spec:
        bw = spec["bandwidth_gbs"]
        if not _fits(bw, (int, float, type(None))) or (bw is not None and not (math.isfinite(bw) and bw >= 0)):
            raise _bad(path, "spec.bandwidth_gbs", bw, "a number of GB/s >= 0")
    peaks = spec.get("peak_tflops", {})
    if not isinstance(peaks, dict) or not all(isinstance(v, dict) for v in peaks.values()):
        raise _bad(path, "spec.peak_tflops", peaks, "a mapping of unit to a mapping of precision to TFLOP/s")
    for unit, per in peaks.items():
        for precision, value in per.items():
            if not _fits(value, (int, float, type(None))) or (value is not None and not math.isfinite(value)):
                raise _bad(path, f"spec.peak_tflops.{unit}.{precision}", value, "a number of TFLOP/s")
    profile = raw.get("profile", {})
    if not isinstance(profile, dict):
        raise _bad(path, "profile", profile, "a mapping (ncu, version, metrics, problems)")
    for name in ("ncu", "version"):
        if name in profile and not isinstance(profile[name], str):
            raise _bad(path, f"profile.{name}", profile[name], "text")
    metrics = profile.get("metrics", {})
    if not isinstance(metrics, dict) or not all(isinstance(v, str) for v in metrics.values()):
        raise _bad(path, "profile.metrics", metrics, "a mapping of names to Nsight Compute metrics")
    problems = profile.get("problems", [])
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise _bad(path, "profile.problems", problems, "a list of text")
    for name, cls in (("measurements", Measurement), ("comparisons", Comparison)):
        records = raw.get(name, [])
        if not isinstance(records, list):
            raise _bad(path, name, records, "a list of records")
        for i, record in enumerate(records):
            _check_record(path, f"{name}[{i}]", record, cls)
    summary = raw.get("summary", {})
    if not isinstance(summary, dict):
        raise _bad(path, "summary", summary, "a mapping of counts and error statistics")
    for key, value in summary.items():
        _check_numbers(path, f"summary.{key}", value, 1)


MEASUREMENT_COLUMNS = [f.name for f in dataclasses.fields(Measurement)]
COMPARISON_COLUMNS = [f.name for f in dataclasses.fields(Comparison)]
