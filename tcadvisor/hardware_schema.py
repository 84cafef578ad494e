"""Reading and validating one GPU spec file (schema 1 and schema 2).

The format is described field by field in ``docs/hwspec-format.md``.  Every
problem is a :class:`~tcadvisor.errors.TcAdvisorError` of one line that names
the file, the field and what would be accepted, because a spec file is the
user's input as much as a command-line option is.

Schema 1 (no ``schema:`` key) gives one rate per unit and precision and lists
MMA shapes in a separate ``mma_shapes`` section.  Schema 2 (``schema: 2``) may
give a rate per instruction shape under ``peak.<unit>.<precision>.instructions``;
the shapes listed there are the shapes the GPU executes, so ``mma_shapes`` is
refused in schema 2 (one list of shapes, not two that can disagree).
"""
from __future__ import annotations

import math
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Mapping

import yaml

from .errors import TcAdvisorError
from .hardware_spec import MMA_UNITS, PRECISIONS, TFLOPS, UNITS, GpuSpec, Multiprocessors, Rate, RefinedConstants
from .mma import MmaShape

SCHEMAS = (1, 2)
BANDWIDTH_UNITS = {"GB/s": 1e9, "TB/s": 1e12}
#: A spec file is a few kilobytes; anything far larger is not one (and is not read into memory).
MAX_FILE_BYTES = 1 << 20
_TOP_LEVEL_2 = ("schema", "name", "vendor", "architecture", "aliases", "device_names", "default",
                "notes", "sources", "bandwidth", "peak", "multiprocessors", "compute_capability",
                "refined_constants", "warpgroup_mma")
#: Keys of the optional ``multiprocessors`` section: integer counts, sizes in KiB, the clock in GHz.
_SM_COUNTS = ("count", "registers", "max_warps", "max_blocks")
_SM_KIB = ("shared_memory_kib", "shared_memory_per_block_kib", "shared_memory_reserved_kib")
_SM_KEYS = ("count", "clock_ghz") + _SM_KIB + ("registers", "max_warps", "max_blocks", "source")
_EXAMPLE_BANDWIDTH = "{value: 3350, unit: GB/s, source: datasheet}"


def _fail(path: Path, where: str, problem: str) -> TcAdvisorError:
    return TcAdvisorError(f"GPU spec {path}: field '{where}': {problem}")


def _as_yaml_number(text: str, value: float) -> str:
    """``text`` rewritten so that YAML 1.1 (PyYAML) reads it as the number ``value``.

    YAML 1.1 reads ``1e300`` and ``1.0e300`` as text: a float with an exponent
    needs a decimal point in the mantissa and a sign in the exponent (``1.0e+300``).
    """
    mantissa, _, exponent = text.strip().lower().replace("_", "").partition("e")
    if exponent:
        mantissa = mantissa if "." in mantissa else mantissa + ".0"
        exponent = exponent if exponent[:1] in "+-" else "+" + exponent
        candidate = f"{mantissa}e{exponent}"
        if yaml.safe_load(candidate) == value:
            return candidate
    return yaml.safe_dump(value).splitlines()[0]


def _number(path: Path, where: str, value: Any) -> float:
    """A positive finite number; each kind of wrong value gets its own message."""
    if value is None:
        raise _fail(path, where, "missing a number")
    if isinstance(value, bool):
        raise _fail(path, where, f"expected a positive number, got the boolean {str(value).lower()}")
    if isinstance(value, str):
        try:
            parsed = float(value.replace("_", ""))
        except ValueError:
            raise _fail(path, where, f"expected a positive number, got the text {value!r}") from None
        if not (math.isfinite(parsed) and parsed > 0):
            raise _fail(path, where, f"expected a positive number, got the text {value!r}")
        if "e" in value.lower():
            raise _fail(path, where, f"expected a positive number, got the text {value!r}: YAML 1.1 reads an "
                                     "exponent as text unless the number has a decimal point and the exponent a "
                                     f"sign; write {_as_yaml_number(value, parsed)}")
        raise _fail(path, where, f"expected a positive number, got the text {value!r}: write the number "
                                 "without quotes")
    if not isinstance(value, (int, float)):
        raise _fail(path, where, f"expected a positive number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise _fail(path, where, f"the number {str(value)[:20]}... is too large for a float") from None
    if math.isnan(number):
        raise _fail(path, where, "expected a positive finite number, got .nan (not a number)")
    if math.isinf(number):
        raise _fail(path, where, f"expected a positive finite number, got {'-' if number < 0 else ''}.inf")
    if number == 0:
        raise _fail(path, where, "expected a positive number, got 0 (leave out a unit or precision the GPU lacks)")
    if number < 0:
        raise _fail(path, where, f"expected a positive number, got {value}")
    return number


def _text(path: Path, where: str, value: Any, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, where, f"expected a non-empty string, got {value!r}")
    return value.strip()


def _source(path: Path, where: str, entry: Mapping, sources: Mapping[str, str]) -> str:
    src = entry.get("source")
    if not isinstance(src, str) or not src.strip():
        raise _fail(path, where + ".source", "every number needs a source (a key of 'sources' or a citation)")
    return sources.get(src.strip(), src.strip())


def _check_keys(path: Path, where: str, entry: Mapping, allowed: tuple[str, ...]) -> None:
    unknown = [str(k) for k in entry if k not in allowed]
    if unknown:
        raise _fail(path, f"{where}.{unknown[0]}", f"unknown key; expected {', '.join(allowed)}")


def _scaled(path: Path, where: str, value: float, scale: float) -> float:
    """``value * scale`` rounded once (33.2 TFLOP/s is 33.2e12, not 33200000000000.004)."""
    scaled = float(Decimal(repr(value)) * Decimal(repr(scale)))
    if not math.isfinite(scaled):
        raise _fail(path, where, f"{value} is too large (beyond the range of a float in SI units)")
    return scaled


def _rate(path: Path, where: str, entry: Any, sources: Mapping[str, str], scale: float) -> Rate:
    if not isinstance(entry, Mapping):
        raise _fail(path, where, f"expected a mapping with 'value' and 'source', got {entry!r}")
    if "value" not in entry:
        raise _fail(path, where + ".value", "missing")
    value = _number(path, where + ".value", entry["value"])
    return Rate(_scaled(path, where + ".value", value, scale), _source(path, where, entry, sources))


def _schema(path: Path, raw: Mapping) -> int:
    schema = raw.get("schema", 1)
    if isinstance(schema, bool) or schema not in SCHEMAS:
        raise _fail(path, "schema", f"unknown schema {schema!r}; this tcadvisor reads schema "
                                    f"{' and '.join(map(str, SCHEMAS))} (see docs/hwspec-format.md)")
    return int(schema)


def _sources(path: Path, raw: Mapping) -> dict[str, str]:
    sources = raw.get("sources") or {}
    if not isinstance(sources, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in sources.items()):
        raise _fail(path, "sources", "expected a mapping of key to citation text")
    return {k: v.strip() for k, v in sources.items()}


def _bandwidth(path: Path, raw: Any, sources: Mapping[str, str], schema: int) -> Rate:
    if not isinstance(raw, Mapping):
        raise _fail(path, "bandwidth", f"bandwidth must be a mapping with value and unit, e.g. "
                                       f"{_EXAMPLE_BANDWIDTH}; got {raw!r}")
    if schema >= 2:
        _check_keys(path, "bandwidth", raw, ("value", "unit", "source"))
        if "unit" not in raw:
            raise _fail(path, "bandwidth.unit", f"missing; expected one of {', '.join(BANDWIDTH_UNITS)}")
    unit = raw.get("unit", "GB/s")  # schema 1 files without a unit have always meant GB/s
    if unit not in BANDWIDTH_UNITS:
        raise _fail(path, "bandwidth.unit", f"expected one of {', '.join(BANDWIDTH_UNITS)}, got {unit!r}")
    return _rate(path, "bandwidth", raw, sources, BANDWIDTH_UNITS[unit])


def _shape(path: Path, where: str, text: Any) -> MmaShape:
    """A shape key (``m16n8k8``), or the one-line error naming where it is."""
    try:
        return MmaShape.parse(str(text))
    except TcAdvisorError as exc:
        raise _fail(path, where, str(exc)) from None


def _mma_precision(path: Path, where: str, unit: str, precision: str, peaks: Mapping[str, Mapping[str, Rate]],
                   what: str) -> None:
    """A precision listed under an MMA unit outside ``peak``: known, and given a rate under ``peak.<unit>``."""
    if precision not in PRECISIONS:
        raise _fail(path, where, f"unknown precision; expected one of {', '.join(PRECISIONS)}")
    if precision not in peaks.get(unit, {}):
        raise _fail(path, where, f"{what} for a precision with no rate under peak.{unit}")


def _instructions(path: Path, where: str, unit: str, raw: Any, headline_value: float,
                  sources: Mapping[str, str]):
    """The shapes listed under one precision, the rates that are the shapes' own, and listing sources."""
    if unit not in MMA_UNITS:
        raise _fail(path, where, f"instructions are listed only under {' and '.join(MMA_UNITS)}")
    if not isinstance(raw, Mapping) or not raw:
        raise _fail(path, where, "expected a mapping of MMA shape to {value, source}, "
                                 "or to {} for a shape without a rate of its own")
    shapes: list[MmaShape] = []
    own: dict[MmaShape, Rate] = {}
    cited: dict[MmaShape, str] = {}
    for text, entry in raw.items():
        here = f"{where}.{text}"
        shape = _shape(path, here, text)
        if shape in shapes:
            raise _fail(path, here, f"{shape} is listed twice")
        shapes.append(shape)
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            raise _fail(path, here, f"expected {{value, source}} or {{}}, got {entry!r}")
        _check_keys(path, here, entry, ("value", "source"))
        if "value" not in entry:
            if "source" in entry:  # where the shape itself is documented
                src = _text(path, here + ".source", entry["source"])
                cited[shape] = sources.get(src, src)
            continue
        value = _number(path, here + ".value", entry["value"])
        if value > headline_value:
            raise _fail(path, here + ".value", f"{value} exceeds the precision's value {headline_value}, "
                                               "which is the rate of its fastest instruction")
        own[shape] = Rate(_scaled(path, here + ".value", value, TFLOPS), _source(path, here, entry, sources))
    return tuple(shapes), own, cited


def _warpgroup_mma(path: Path, raw: Any, sources: Mapping[str, str], peaks: Mapping[str, Mapping[str, Rate]]):
    """The optional ``warpgroup_mma`` section: unit -> precision -> shape -> {value, source}.

    Rates of Hopper's warpgroup instruction (``wgmma``, M = 64), which ``tcadvisor calibrate``
    measures beside the warp-level ``mma``.  Kept apart from ``peak``: no bundled kernel issues
    it, so it is a yardstick (what the instruction delivers at a kernel's tile), never the rate of
    an executed instruction, and the precision's headline rate stays that of ``mma``.
    """
    where = "warpgroup_mma"
    if not isinstance(raw, Mapping) or not raw:
        raise _fail(path, where, "expected a mapping of unit -> precision -> shape -> {value, source}")
    out: dict[str, dict[str, dict[MmaShape, Rate]]] = {}
    for unit, per_precision in raw.items():
        here = f"{where}.{unit}"
        if unit not in MMA_UNITS:
            raise _fail(path, here, f"expected {' or '.join(MMA_UNITS)}")
        if not isinstance(per_precision, Mapping) or not per_precision:
            raise _fail(path, here, "expected a mapping of precision -> shape -> {value, source}")
        for precision, per_shape in per_precision.items():
            there = f"{here}.{precision}"
            _mma_precision(path, there, unit, precision, peaks, "a warpgroup rate")
            if not isinstance(per_shape, Mapping) or not per_shape:
                raise _fail(path, there, "expected a mapping of shape (m64nNkK) -> {value, source}")
            for text, entry in per_shape.items():
                at = f"{there}.{text}"
                shape = _shape(path, at, text)
                if shape.m != 64:
                    raise _fail(path, at, "a warpgroup instruction has M = 64 (m64nNkK)")
                if not isinstance(entry, Mapping) or "value" not in entry:
                    raise _fail(path, at, f"expected {{value, source}}, got {entry!r}")
                _check_keys(path, at, entry, ("value", "source"))
                value = _number(path, at + ".value", entry["value"])
                out.setdefault(unit, {}).setdefault(precision, {})[shape] = Rate(
                    _scaled(path, at + ".value", value, TFLOPS), _source(path, at, entry, sources))
    return out


def _peaks(path: Path, raw: Any, sources: Mapping[str, str], schema: int):
    if not isinstance(raw, Mapping) or not raw:
        raise _fail(path, "peak", "expected a mapping of unit -> precision -> {value, source}")
    peaks: dict[str, dict[str, Rate]] = {}
    shapes: dict[str, dict[str, tuple[MmaShape, ...]]] = {}
    own: dict[str, dict[str, dict[MmaShape, Rate]]] = {}
    cited: dict[str, dict[str, dict[MmaShape, str]]] = {}
    for unit, per_precision in raw.items():
        if unit not in UNITS:
            raise _fail(path, f"peak.{unit}", f"unknown unit; expected one of {', '.join(UNITS)}")
        if not isinstance(per_precision, Mapping):
            raise _fail(path, f"peak.{unit}", "expected a mapping of precision -> {value, source}")
        peaks[unit] = {}
        for precision, entry in per_precision.items():
            where = f"peak.{unit}.{precision}"
            if precision not in PRECISIONS:
                raise _fail(path, where, f"unknown precision; expected one of {', '.join(PRECISIONS)}")
            rate = _rate(path, where, entry, sources, TFLOPS)
            peaks[unit][precision] = rate
            if "instructions" in entry and schema < 2:
                raise _fail(path, where + ".instructions", "per-instruction rates need 'schema: 2' at the top "
                                                           "of the file (see docs/hwspec-format.md)")
            if schema >= 2:
                _check_keys(path, where, entry, ("value", "source", "instructions"))
                if "instructions" in entry:
                    listed, rates, listing = _instructions(path, where + ".instructions", unit,
                                                           entry["instructions"], float(entry["value"]), sources)
                    shapes.setdefault(unit, {})[precision] = listed
                    if rates:
                        own.setdefault(unit, {})[precision] = rates
                    if listing:
                        cited.setdefault(unit, {})[precision] = listing
    if not peaks.get("cuda_core"):
        raise _fail(path, "peak.cuda_core", "missing: every GPU needs CUDA-core (vector) rates")
    return peaks, shapes, own, cited


def _mma_shapes_v1(path: Path, raw: Any, peaks: Mapping[str, Mapping[str, Rate]]):
    """Schema 1's separate ``mma_shapes`` section (one source for all of it)."""
    shapes: dict[str, dict[str, tuple[MmaShape, ...]]] = {}
    raw = raw or {}
    if not isinstance(raw, Mapping):
        raise _fail(path, "mma_shapes", "expected a mapping of unit -> precision -> [shapes]")
    if raw and "source" not in raw:
        raise _fail(path, "mma_shapes.source", "MMA shapes need a source too")
    for unit, per_precision in raw.items():
        if unit == "source":
            continue
        if unit not in MMA_UNITS:
            raise _fail(path, f"mma_shapes.{unit}", f"expected {' or '.join(MMA_UNITS)}")
        if not isinstance(per_precision, Mapping):
            raise _fail(path, f"mma_shapes.{unit}", "expected a mapping of precision -> [shapes]")
        shapes[unit] = {}
        for precision, listed in per_precision.items():
            where = f"mma_shapes.{unit}.{precision}"
            _mma_precision(path, where, unit, precision, peaks, "shapes given")
            if not isinstance(listed, list) or not listed:
                raise _fail(path, where, "expected a non-empty list such as [m16n8k8]")
            try:
                parsed = tuple(MmaShape.parse(s) for s in listed)
            except TcAdvisorError as exc:
                raise _fail(path, where, str(exc)) from None
            twice = next((sh for i, sh in enumerate(parsed) if sh in parsed[:i]), None)
            if twice is not None:
                raise _fail(path, where, f"{twice} is listed twice; list each shape once")
            shapes[unit][precision] = parsed
    return shapes


def _multiprocessors(path: Path, raw: Any, sources: Mapping[str, str]) -> Multiprocessors:
    """The optional ``multiprocessors`` section: every key is required once the section is there."""
    where = "multiprocessors"
    if not isinstance(raw, Mapping):
        raise _fail(path, where, f"expected a mapping with {', '.join(_SM_KEYS)}, got {raw!r}")
    _check_keys(path, where, raw, _SM_KEYS)
    missing = [k for k in _SM_KEYS if k not in raw]
    if missing:
        raise _fail(path, f"{where}.{missing[0]}", "missing (the section needs all of " + ", ".join(_SM_KEYS) + ")")
    counts = {}
    for key in _SM_COUNTS:
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _fail(path, f"{where}.{key}", f"expected a positive integer, got {value!r}")
        counts[key] = value
    kib = {}
    for key in _SM_KIB:
        value = raw[key]
        if key == "shared_memory_reserved_kib" and value == 0 and not isinstance(value, bool):
            kib[key] = 0.0
        else:
            kib[key] = _number(path, f"{where}.{key}", value)
    if kib["shared_memory_per_block_kib"] > kib["shared_memory_kib"]:
        raise _fail(path, f"{where}.shared_memory_per_block_kib", f"{raw['shared_memory_per_block_kib']} exceeds "
                                                                  f"shared_memory_kib {raw['shared_memory_kib']}")
    clock = _number(path, f"{where}.clock_ghz", raw["clock_ghz"])
    return Multiprocessors(count=counts["count"], clock=_scaled(path, f"{where}.clock_ghz", clock, 1e9),
                           shared_memory=int(kib["shared_memory_kib"] * 1024),
                           shared_memory_per_block=int(kib["shared_memory_per_block_kib"] * 1024),
                           shared_memory_reserved=int(kib["shared_memory_reserved_kib"] * 1024),
                           registers=counts["registers"], max_warps=counts["max_warps"],
                           max_blocks=counts["max_blocks"], source=_source(path, where, raw, sources))


def _compute_capability(path: Path, raw: Any, sources: Mapping[str, str]) -> tuple[tuple[int, int], str]:
    """The optional ``compute_capability`` field, ``{value: "9.0", source: ...}``: (major, minor) and its source.

    Read so that the advisor can tell, from the spec alone, whether a bundled kernel's
    instructions exist on the GPU; ``value`` is the string major.minor.  A YAML number is refused:
    ``8.10`` would be read as 8.1, a different GPU.
    """
    where = "compute_capability"
    example = '{value: "9.0", source: <a key of sources or a citation>}'
    if not isinstance(raw, Mapping):
        raise _fail(path, where, f"expected a mapping such as {example}, got {raw!r}")
    _check_keys(path, where, raw, ("value", "source"))
    value = raw.get("value")
    if not isinstance(value, str):
        raise _fail(path, f"{where}.value", f"expected a quoted major.minor such as \"8.0\" (a YAML number loses "
                                            f"digits: 8.10 is 8.1), got {value!r}")
    parts = value.strip().split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) < 1:
        raise _fail(path, f"{where}.value", f"expected major.minor such as \"8.0\" or \"9.0\", got {value!r}")
    return (int(parts[0]), int(parts[1])), _source(path, where, raw, sources)


#: Keys of the optional ``refined_constants`` section (``tcadvisor calibrate --fit``); the first five are required.
_RC_KEYS = ("constants", "kernel_fingerprint", "runs", "fitted", "in_sample_median_error", "corpus", "source")


def _non_negative(path: Path, where: str, value: Any) -> float:
    """A finite number >= 0 (a fitted constant may be 0: one the fit pins there)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        quoted = " (write the number without quotes)" if isinstance(value, str) else ""
        raise _fail(path, where, f"expected a number >= 0, got {value!r}{quoted}")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise _fail(path, where, f"expected a finite number >= 0, got {value!r}")
    return number


def _refined_constants(path: Path, raw: Any, has_sms: bool) -> RefinedConstants:
    """The optional ``refined_constants`` section: the refined model's constants fitted on this GPU.

    Checked as strictly as the ceilings, because a wrong constant changes every refined answer
    silently; which kernels they were fitted for (``kernel_fingerprint``) is only checked for form
    here: whether they are today's kernels is the refined model's question
    (:func:`tcadvisor.refinement.constants`), which then falls back to the bundled constants.
    """
    import datetime

    from .fingerprint import LENGTH
    from .model import FITTED

    where = "refined_constants"
    names = [s.name for s in FITTED]
    if not isinstance(raw, Mapping):
        raise _fail(path, where, f"expected a mapping with {', '.join(_RC_KEYS[:5])} "
                                 f"(written by 'tcadvisor calibrate --fit'), got {raw!r:.60}")
    _check_keys(path, where, raw, _RC_KEYS)
    missing = [k for k in _RC_KEYS[:5] if k not in raw]
    if missing:
        raise _fail(path, f"{where}.{missing[0]}", "missing (the section needs " + ", ".join(_RC_KEYS[:5]) + ")")
    if not has_sms:
        raise _fail(path, where, "the refined model needs the multiprocessors section these constants were "
                                 "fitted with; add it or remove refined_constants")
    values = raw["constants"]
    if not isinstance(values, Mapping):
        raise _fail(path, f"{where}.constants", f"expected a mapping of {', '.join(names)} to numbers, got "
                                                f"{values!r:.60}")
    _check_keys(path, f"{where}.constants", values, tuple(names))
    absent = [n for n in names if n not in values]
    if absent:
        raise _fail(path, f"{where}.constants.{absent[0]}", "missing (every constant of the refined model: "
                                                             + ", ".join(names) + ")")
    numbers = {n: _non_negative(path, f"{where}.constants.{n}", values[n]) for n in names}
    if numbers["eta_B0"] == 0:
        raise _fail(path, f"{where}.constants.eta_B0", "expected a positive fraction of the bandwidth, got 0")
    fp = raw["kernel_fingerprint"]
    if not isinstance(fp, str) or len(fp) != LENGTH or any(c not in "0123456789abcdef" for c in fp):
        raise _fail(path, f"{where}.kernel_fingerprint", f"expected {LENGTH} lower-case hex digits "
                                                         f"(tcadvisor.fingerprint.kernel_fingerprint), got {fp!r:.40}")
    runs = raw["runs"]
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise _fail(path, f"{where}.runs", f"expected a positive integer (runs the fit used), got {runs!r:.40}")
    fitted = raw["fitted"]
    if isinstance(fitted, datetime.datetime) or not isinstance(fitted, (str, datetime.date)):
        raise _fail(path, f"{where}.fitted", f"expected a date YYYY-MM-DD, got {fitted!r:.40}")
    if isinstance(fitted, str):
        try:
            fitted = datetime.date.fromisoformat(fitted.strip())
        except ValueError:
            raise _fail(path, f"{where}.fitted", f"expected a date YYYY-MM-DD, got {raw['fitted']!r:.40}") from None
    error = _non_negative(path, f"{where}.in_sample_median_error", raw["in_sample_median_error"])
    corpus = _text(path, f"{where}.corpus", raw.get("corpus"), required=False)
    source = _text(path, f"{where}.source", raw.get("source"), required=False)
    return RefinedConstants(values=numbers, kernel_fingerprint=fp, runs=runs, fitted=fitted.isoformat(),
                            in_sample_median_error=error, corpus=corpus, source=source)


def parse_spec(raw: Any, path: Path) -> GpuSpec:
    """Validate the content of one spec file and build a :class:`GpuSpec`."""
    if not isinstance(raw, Mapping):
        empty = " (the file is empty)" if raw is None else ""
        raise TcAdvisorError(f"GPU spec {path}: expected a YAML mapping at the top level{empty}")
    schema = _schema(path, raw)
    if schema >= 2:
        if "mma_shapes" in raw:
            raise _fail(path, "mma_shapes", "schema 2 lists MMA shapes under peak.<unit>.<precision>.instructions "
                                            "(a shape without a rate of its own as 'm16n8k4: {}'); remove mma_shapes")
        _check_keys(path, "(top level)", raw, _TOP_LEVEL_2)
    for required in ("name", "bandwidth", "peak"):
        if required not in raw:
            raise _fail(path, required, "missing (a spec needs name, bandwidth and peak)")
    name = _text(path, "name", raw["name"])
    sources = _sources(path, raw)
    bandwidth = _bandwidth(path, raw["bandwidth"], sources, schema)
    peaks, shapes, own, cited = _peaks(path, raw["peak"], sources, schema)
    if schema == 1:
        shapes = _mma_shapes_v1(path, raw.get("mma_shapes"), peaks)
        listing = sources.get(str(raw["mma_shapes"]["source"]), str(raw["mma_shapes"]["source"])) if shapes else ""
        cited = {u: {p: {s: listing for s in listed} for p, listed in per.items()} for u, per in shapes.items()}

    aliases = raw.get("aliases") or []
    device_names = raw.get("device_names") or []
    for where, seq in (("aliases", aliases), ("device_names", device_names)):
        if not isinstance(seq, list) or not all(isinstance(s, str) and s.strip() for s in seq):
            raise _fail(path, where, "expected a list of non-empty strings (quote numbers: [\"4090\"])")
    default = raw.get("default", False)
    if not isinstance(default, bool):
        raise _fail(path, "default", f"expected true or false, got {default!r}")
    if "notes" in raw:
        _text(path, "notes", raw["notes"])
    sms = _multiprocessors(path, raw["multiprocessors"], sources) if raw.get("multiprocessors") is not None else None
    cc, cc_source = (_compute_capability(path, raw["compute_capability"], sources)
                     if raw.get("compute_capability") is not None else (None, ""))
    refined = (_refined_constants(path, raw["refined_constants"], sms is not None)
               if "refined_constants" in raw else None)
    warpgroup = _warpgroup_mma(path, raw["warpgroup_mma"], sources, peaks) if "warpgroup_mma" in raw else {}
    return GpuSpec(
        key=path.stem,
        name=name,
        vendor=_text(path, "vendor", raw.get("vendor"), required=False),
        architecture=_text(path, "architecture", raw.get("architecture"), required=False),
        path=path,
        bandwidth=bandwidth,
        peaks=peaks,
        mma_shapes=shapes,
        instruction_rates=own,
        shape_sources=cited,
        aliases=tuple(a.strip().lower() for a in aliases),
        device_names=tuple(d.strip() for d in device_names),
        default=default,
        schema=schema,
        multiprocessors=sms,
        compute_capability=cc,
        compute_capability_source=cc_source,
        refined_constants=refined,
        warpgroup_rates=warpgroup,
    )


def read_yaml(path: str | os.PathLike) -> Any:
    """The parsed content of a spec file; every way of failing is one line naming the file
    (read with the bounds of :mod:`tcadvisor.files`: regular files only, at most :data:`MAX_FILE_BYTES`,
    UTF-8, YAML within a nesting and an alias budget)."""
    from .files import load_yaml

    return load_yaml(path, "GPU spec", MAX_FILE_BYTES)


def load_spec_file(path: str | os.PathLike) -> GpuSpec:
    """Load and validate one spec file; errors name the file and the field."""
    return parse_spec(read_yaml(path), Path(path))
