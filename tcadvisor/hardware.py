"""Hardware descriptions: one YAML file per GPU in ``hwspecs/``.

In the manner of kerncraft's machine files, a GPU is data, not code: memory
bandwidth, peak FLOP/s per execution unit and precision, the MMA shapes its
Tensor Cores execute, and a source for every number.  A unit or precision the
GPU does not have is simply absent (no GPU has sparse FP64), which the advisor
reports as "not available" rather than as an error.

Numbers in the files are in GB/s (or TB/s) and TFLOP/s; :class:`GpuSpec` holds
them in bytes/s and FLOP/s.
"""
from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

from .data import data_dir
from .errors import TcAdvisorError
from .mma import MmaShape

#: Execution units, in the order the advisor reports them.
UNITS = ("cuda_core", "tensor_core", "sparse_tensor_core")
UNIT_LABELS = {
    "cuda_core": "CUDA cores",
    "tensor_core": "Tensor Cores",
    "sparse_tensor_core": "Sparse Tensor Cores",
}
#: Precisions a spec may give rates for.
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16")
_BANDWIDTH_UNITS = {"GB/s": 1e9, "TB/s": 1e12}
TFLOPS = 1e12

#: Environment variable naming extra directories of spec files (``os.pathsep``-separated).
EXTRA_SPECS_ENV = "TCADVISOR_HWSPEC_PATH"


@dataclass(frozen=True)
class Rate:
    """One number from a spec file, in SI units, with where it came from."""

    value: float
    source: str


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    vendor: str
    path: Path
    bandwidth: Rate  # bytes/s
    peaks: Mapping[str, Mapping[str, Rate]]  # unit -> precision -> FLOP/s
    mma_shapes: Mapping[str, Mapping[str, tuple[MmaShape, ...]]] = field(default_factory=dict)
    architecture: str = ""
    aliases: tuple[str, ...] = ()
    device_names: tuple[str, ...] = ()
    default: bool = False

    def peak(self, unit: str, precision: str) -> float | None:
        """Peak FLOP/s of ``unit`` at ``precision``, or ``None`` where the GPU has none."""
        rate = self.peaks.get(unit, {}).get(precision)
        return None if rate is None else rate.value

    def has(self, unit: str, precision: str) -> bool:
        return self.peak(unit, precision) is not None

    def ridge(self, unit: str, precision: str) -> float | None:
        """Ridge point P/B in FLOP/byte."""
        peak = self.peak(unit, precision)
        return None if peak is None else peak / self.bandwidth.value

    def shapes(self, unit: str, precision: str) -> tuple[MmaShape, ...]:
        return self.mma_shapes.get(unit, {}).get(precision, ())

    @property
    def short(self) -> str:
        """The name used in tables: the first alias, else the file stem."""
        return self.aliases[0] if self.aliases else self.key


# --------------------------------------------------------------------------- parsing


def _fail(path: Path, where: str, problem: str) -> TcAdvisorError:
    return TcAdvisorError(f"GPU spec {path}: field '{where}': {problem}")


def _number(path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(path, where, f"expected a positive number, got {value!r}")
    if not value > 0 or value != value or value == float("inf"):
        raise _fail(path, where, f"expected a positive finite number, got {value!r}")
    return float(value)


def _source(path: Path, where: str, entry: Mapping, sources: Mapping[str, str]) -> str:
    src = entry.get("source")
    if not isinstance(src, str) or not src.strip():
        raise _fail(path, where + ".source", "every number needs a source (a key of 'sources' or a citation)")
    return sources.get(src, src)


def _rate(path: Path, where: str, entry: Any, sources: Mapping[str, str], scale: float) -> Rate:
    if not isinstance(entry, Mapping):
        raise _fail(path, where, f"expected a mapping with 'value' and 'source', got {entry!r}")
    if "value" not in entry:
        raise _fail(path, where + ".value", "missing")
    value = _number(path, where + ".value", entry["value"])
    return Rate(value * scale, _source(path, where, entry, sources))


def parse_spec(raw: Any, path: Path) -> GpuSpec:
    """Validate the content of one spec file and build a :class:`GpuSpec`."""
    if not isinstance(raw, Mapping):
        raise TcAdvisorError(f"GPU spec {path}: expected a YAML mapping at the top level")
    for required in ("name", "bandwidth", "peak"):
        if required not in raw:
            raise _fail(path, required, "missing (a spec needs name, bandwidth and peak)")
    name = raw["name"]
    if not isinstance(name, str) or not name.strip():
        raise _fail(path, "name", f"expected a non-empty string, got {name!r}")
    sources = raw.get("sources") or {}
    if not isinstance(sources, Mapping) or not all(isinstance(v, str) for v in sources.values()):
        raise _fail(path, "sources", "expected a mapping of key to citation text")

    bw = raw["bandwidth"]
    unit = bw.get("unit", "GB/s") if isinstance(bw, Mapping) else None
    if unit not in _BANDWIDTH_UNITS:
        raise _fail(path, "bandwidth.unit", f"expected one of {', '.join(_BANDWIDTH_UNITS)}, got {unit!r}")
    bandwidth = _rate(path, "bandwidth", bw, sources, _BANDWIDTH_UNITS[unit])

    peak_raw = raw["peak"]
    if not isinstance(peak_raw, Mapping) or not peak_raw:
        raise _fail(path, "peak", "expected a mapping of unit -> precision -> {value, source}")
    peaks: dict[str, dict[str, Rate]] = {}
    for unit_name, per_precision in peak_raw.items():
        if unit_name not in UNITS:
            raise _fail(path, f"peak.{unit_name}", f"unknown unit; expected one of {', '.join(UNITS)}")
        if not isinstance(per_precision, Mapping):
            raise _fail(path, f"peak.{unit_name}", "expected a mapping of precision -> {value, source}")
        peaks[unit_name] = {}
        for precision, entry in per_precision.items():
            if precision not in PRECISIONS:
                raise _fail(
                    path, f"peak.{unit_name}.{precision}",
                    f"unknown precision; expected one of {', '.join(PRECISIONS)}",
                )
            peaks[unit_name][precision] = _rate(path, f"peak.{unit_name}.{precision}", entry, sources, TFLOPS)
    if "cuda_core" not in peaks or not peaks["cuda_core"]:
        raise _fail(path, "peak.cuda_core", "missing: every GPU needs CUDA-core (vector) rates")

    shapes: dict[str, dict[str, tuple[MmaShape, ...]]] = {}
    shapes_raw = raw.get("mma_shapes") or {}
    if not isinstance(shapes_raw, Mapping):
        raise _fail(path, "mma_shapes", "expected a mapping of unit -> precision -> [shapes]")
    if shapes_raw and not any(k == "source" for k in shapes_raw):
        raise _fail(path, "mma_shapes.source", "MMA shapes need a source too")
    for unit_name, per_precision in shapes_raw.items():
        if unit_name == "source":
            continue
        if unit_name not in ("tensor_core", "sparse_tensor_core"):
            raise _fail(path, f"mma_shapes.{unit_name}", "expected tensor_core or sparse_tensor_core")
        shapes[unit_name] = {}
        for precision, listed in (per_precision or {}).items():
            where = f"mma_shapes.{unit_name}.{precision}"
            if precision not in PRECISIONS:
                raise _fail(path, where, f"unknown precision; expected one of {', '.join(PRECISIONS)}")
            if precision not in peaks.get(unit_name, {}):
                raise _fail(path, where, f"shapes given for a precision with no rate under peak.{unit_name}")
            if not isinstance(listed, list) or not listed:
                raise _fail(path, where, "expected a non-empty list such as [m16n8k8]")
            try:
                shapes[unit_name][precision] = tuple(MmaShape.parse(s) for s in listed)
            except TcAdvisorError as exc:
                raise _fail(path, where, str(exc)) from None

    aliases = raw.get("aliases") or []
    device_names = raw.get("device_names") or []
    for where, seq in (("aliases", aliases), ("device_names", device_names)):
        if not isinstance(seq, list) or not all(isinstance(s, str) and s for s in seq):
            raise _fail(path, where, "expected a list of non-empty strings")
    return GpuSpec(
        key=path.stem,
        name=name.strip(),
        vendor=str(raw.get("vendor", "")),
        architecture=str(raw.get("architecture", "")),
        path=path,
        bandwidth=bandwidth,
        peaks=peaks,
        mma_shapes=shapes,
        aliases=tuple(a.lower() for a in aliases),
        device_names=tuple(device_names),
        default=bool(raw.get("default", False)),
    )


def load_spec_file(path: str | os.PathLike) -> GpuSpec:
    """Load and validate one spec file; errors name the file and the field."""
    path = Path(path)
    if not path.is_file():
        raise TcAdvisorError(f"GPU spec file {str(path)!r} does not exist")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise TcAdvisorError(f"GPU spec {path}: not valid YAML{where}: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TcAdvisorError(f"GPU spec {path}: cannot be read ({exc})") from None
    return parse_spec(raw, path)


# --------------------------------------------------------------------------- catalogue


def _spec_dirs() -> list[Path]:
    dirs = [data_dir("hwspecs")]
    for extra in os.environ.get(EXTRA_SPECS_ENV, "").split(os.pathsep):
        if extra and Path(extra).is_dir():
            dirs.append(Path(extra))
    return dirs


@lru_cache(maxsize=None)
def _catalog(dirs: tuple[Path, ...]) -> dict[str, GpuSpec]:
    specs: dict[str, GpuSpec] = {}
    for directory in dirs:
        for path in sorted(directory.glob("*.yaml")):
            spec = load_spec_file(path)
            specs[spec.key] = spec  # later directories (user calibrations) override
    return specs


def catalog() -> dict[str, GpuSpec]:
    """All known GPU specs by key (bundled ones plus :data:`EXTRA_SPECS_ENV` dirs)."""
    return _catalog(tuple(_spec_dirs()))


def default_spec() -> GpuSpec:
    specs = [s for s in catalog().values() if s.default]
    if len(specs) != 1:
        raise RuntimeError(f"exactly one bundled spec must be marked default, found {len(specs)}")
    return specs[0]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def find_spec(query: str) -> GpuSpec:
    """Resolve ``--gpu``: a file path, a spec key, an alias or the GPU's full name."""
    query = str(query).strip()
    if query.endswith((".yaml", ".yml")) or os.sep in query:
        return load_spec_file(query)
    specs = catalog()
    wanted = _norm(query)
    for spec in specs.values():
        names = (spec.key, spec.name, *spec.aliases)
        if any(_norm(n) == wanted for n in names):
            return spec
    known = sorted({a for s in specs.values() for a in (s.aliases[:1] or (s.key,))})
    every = [n for s in specs.values() for n in (s.key, *s.aliases)]
    close = difflib.get_close_matches(query.lower(), every, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise TcAdvisorError(
        f"unknown GPU {query!r}{hint}; expected a path to a YAML spec or one of: {', '.join(known)}"
        " (see 'tcadvisor gpus')"
    )


def detect_local_gpu_name() -> str | None:
    """Name of the first NVIDIA GPU according to ``nvidia-smi``, without importing CuPy."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[0] if lines else None


def spec_for_device_name(device: str) -> GpuSpec | None:
    """The spec whose ``device_names`` occur in the driver's name for the GPU."""
    hits = [
        spec for spec in catalog().values()
        if any(_norm(n) in _norm(device) for n in spec.device_names)
    ]
    # The longest match wins ("H100 PCIe" over "H100").
    hits.sort(key=lambda s: -max(len(_norm(n)) for n in s.device_names if _norm(n) in _norm(device)))
    return hits[0] if hits else None


@dataclass(frozen=True)
class ResolvedGpu:
    spec: GpuSpec
    note: str | None = None  # said on stderr when the choice was not explicit


def resolve_gpu(query: str | None) -> ResolvedGpu:
    """``--gpu`` if given; else the detected GPU's spec; else the embedded default."""
    if query:
        return ResolvedGpu(find_spec(query))
    device = detect_local_gpu_name()
    if device is None:
        spec = default_spec()
        return ResolvedGpu(spec, f"no GPU detected; using the embedded default spec {spec.name} (--gpu to choose)")
    spec = spec_for_device_name(device)
    if spec is None:
        fallback = default_spec()
        return ResolvedGpu(
            fallback,
            f"detected GPU {device!r} has no bundled spec; using {fallback.name} "
            "(pass --gpu NAME or a YAML file of your own)",
        )
    return ResolvedGpu(spec, f"using the spec of the detected GPU {device!r}: {spec.name}")
