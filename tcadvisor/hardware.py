"""Hardware descriptions: the catalogue of GPU specs and how ``--gpu`` picks one.

One YAML file per GPU: the bundled ones in ``hwspecs/``, the user's own (for
example calibrations of their GPU) in the directories named by
``TCADVISOR_HWSPEC_PATH``.  The data model is in :mod:`tcadvisor.hardware_spec`,
the file format (``docs/hwspec-format.md``) in :mod:`tcadvisor.hardware_schema`.

Rules of the catalogue, so that one bad file never breaks every command:

* A file that fails to load is skipped with a one-line warning on stderr; it is
  an error only when its GPU is asked for (by key, name or alias, or when it is
  the spec of the detected GPU).
* The key of a spec is its file stem (``.yaml`` or ``.yml``).  A user file with
  the key of a bundled spec overrides it, and a later directory overrides an
  earlier one; each override is said once in a note.
* The default GPU (used when no GPU is detected) is the key of the one bundled
  file marked ``default: true``: the paper's A100 80GB PCIe.  ``default:`` in a
  user file is ignored with a note; a user file overriding that key is used as
  the default, like everywhere else that key is asked for.
* Warnings and notes are said once per process.

Outside the catalogue, ``tcadvisor calibrate`` keeps the user's calibrations in a per-user
cache (:func:`calibrated_specs_dir`); without ``--gpu``, the newest calibration of the GPU that
``nvidia-smi`` reports is used before any other spec, because it was measured on that very GPU
(:func:`resolve_gpu`).
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .data import data_dir
from .errors import TcAdvisorError
from .hardware_schema import load_spec_file, parse_spec, read_yaml  # noqa: F401 - public API
from .hardware_spec import MMA_UNITS, PRECISIONS, UNIT_LABELS, UNITS, GpuSpec, Rate  # noqa: F401 - public API

#: Environment variable naming extra directories of spec files (``os.pathsep``-separated).
EXTRA_SPECS_ENV = "TCADVISOR_HWSPEC_PATH"
SPEC_SUFFIXES = (".yaml", ".yml")
#: Environment variable naming tcadvisor's per-user cache directory (default: $XDG_CACHE_HOME/tcadvisor,
#: else ~/.cache/tcadvisor); ``tcadvisor calibrate`` keeps its spec files in its ``specs/``.
CACHE_ENV = "TCADVISOR_CACHE_DIR"
#: At most this many calibrated specs are read from the cache (the most recently written ones).
MAX_CACHED_SPECS = 64


@dataclass(frozen=True)
class BrokenSpec:
    """A spec file that failed to load: skipped, an error only when asked for."""

    key: str
    path: Path
    problem: str  # the one-line error
    names: tuple[str, ...] = ()  # key, name and aliases as far as they could be read
    device_names: tuple[str, ...] = ()


@dataclass
class Catalogue:
    specs: dict[str, GpuSpec] = field(default_factory=dict)  # by key, after overrides
    broken: dict[str, BrokenSpec] = field(default_factory=dict)  # by key; takes the key from a spec it shadows
    rank: dict[str, int] = field(default_factory=dict)  # key -> index of its directory (0 = bundled)
    names: dict[str, str] = field(default_factory=dict)  # normalised name or alias -> key
    notes: list[tuple[str, str]] = field(default_factory=list)  # (identifier, message), said once
    default_key: str = ""


_SAID: set[str] = set()


def _say(notes: list[tuple[str, str]]) -> None:
    for ident, message in notes:
        if ident not in _SAID:
            _SAID.add(ident)
            print(f"tcadvisor: {message}", file=sys.stderr)


def _norm(text: str) -> str:
    """The form names are matched in: compatibility-normalised (full-width ``Ｈ１００`` is ``h100``), lower
    case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKC", str(text)).lower())


def _reachable(name: str) -> bool:
    """Whether typing ``name`` selects it: not when its matched form is empty, or when it holds letters or
    digits outside ASCII (a Cyrillic ``Н100`` would match as ``100``: it is neither indexed nor suggested)."""
    text = unicodedata.normalize("NFKC", str(name)).lower()
    return bool(_norm(text)) and not any(ch.isalnum() and not ch.isascii() for ch in text)


def _spec_dirs() -> tuple[tuple[Path, ...], list[tuple[str, str]]]:
    dirs, notes = [data_dir("hwspecs")], []
    for extra in os.environ.get(EXTRA_SPECS_ENV, "").split(os.pathsep):
        if not extra:
            continue
        if Path(extra).is_dir():
            dirs.append(Path(extra))
        else:
            what = "a file" if Path(extra).exists() else "missing"
            notes.append((f"dir:{extra}", f"warning: {EXTRA_SPECS_ENV} names {extra!r}, which is {what}, "
                                          "not a directory of spec files; ignored"))
    from .files import unique_dirs

    return tuple(unique_dirs(dirs)), notes  # a directory named twice (or 1000 times) is read once


def _lenient_names(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Name, aliases and device names of a broken file, where they can still be read."""
    try:
        raw = read_yaml(path)
    except TcAdvisorError:
        return (), ()
    if not isinstance(raw, dict):
        return (), ()

    def strings(value):
        return tuple(s for s in (value if isinstance(value, list) else [value]) if isinstance(s, str) and s.strip())
    return strings(raw.get("name")) + strings(raw.get("aliases")), strings(raw.get("device_names"))


def _files(directory: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for path in sorted(p for s in SPEC_SUFFIXES for p in directory.glob("*" + s)):
        found.setdefault(path.stem, []).append(path)
    return found


def _load_one(directory: Path, key: str, paths: list[Path]) -> tuple[Path, GpuSpec | None, str]:
    """The file of ``key`` in ``directory``, its spec (or ``None``) and the problem if it failed."""
    if len(paths) > 1:
        return paths[0], None, (f"GPU spec {key!r}: two files in {directory} "
                                f"({', '.join(p.name for p in paths)}); keep one")
    try:
        return paths[0], load_spec_file(paths[0]), ""
    except TcAdvisorError as exc:
        return paths[0], None, str(exc)


def _add(cat: Catalogue, rank: int, key: str, path: Path, spec: GpuSpec | None, problem: str) -> None:
    """Put one file in the catalogue: it replaces an earlier file of its key, loaded or not."""
    previous = cat.specs.pop(key, None) or cat.broken.pop(key, None)
    overrides = ""
    if previous is not None:
        what = "the bundled GPU spec" if cat.rank[key] == 0 else "the GPU spec"
        overrides = f"{what} {key!r} ({previous.path})"
    cat.rank[key] = rank
    if spec is None:
        names, device_names = _lenient_names(path)
        if isinstance(previous, GpuSpec):  # asking for the shadowed GPU asks for this file
            names += (previous.name, *previous.aliases)
            device_names += previous.device_names
        cat.broken[key] = BrokenSpec(key, path, problem, (key, *names), device_names)
        shadows = f"; it overrides {overrides}" if overrides else ""
        cat.notes.append((f"broken:{path}", f"warning: {problem}; skipping it (an error only if this GPU "
                                            f"is asked for{shadows})"))
        return
    if overrides:
        cat.notes.append((f"override:{path}", f"note: {path} overrides {overrides}"))
    if rank == 0 and spec.default:
        if cat.default_key:
            raise RuntimeError(f"bundled specs {cat.default_key} and {key} are both marked default")
        cat.default_key = key
    elif spec.default and key != cat.default_key:
        cat.notes.append((f"default:{path}", f"note: {path}: 'default: true' is read only from bundled "
                                             "specs and is ignored here (choose a GPU with --gpu)"))
    cat.specs[key] = spec


def _index_names(cat: Catalogue) -> None:
    """Names and aliases: a later directory's claim wins, with a note (keys are matched before names)."""
    for key in sorted(cat.specs, key=lambda k: cat.rank[k]):
        spec = cat.specs[key]
        for name in (spec.name, *spec.aliases):
            if not _reachable(name) and name != spec.name:
                continue
            n, other = _norm(name), cat.names.get(_norm(name))
            if other and other != key:
                cat.notes.append((f"alias:{n}:{key}", f"note: {name!r} names both {other} and {key}; it now "
                                                      f"selects {key} ({spec.path}); --gpu {other} selects the other"))
            cat.names[n] = key
    # A broken file claims only the names no loaded spec claims (those of a spec it shadows included).
    for key in sorted(cat.broken, key=lambda k: cat.rank[k]):
        for name in cat.broken[key].names:
            if name == key or _reachable(name):  # a lookalike alias of a broken file claims nothing either
                cat.names.setdefault(_norm(name), key)
    cat.names.pop("", None)


@lru_cache(maxsize=None)
def _load(dirs: tuple[Path, ...]) -> Catalogue:
    """The catalogue of ``dirs`` (the bundled directory first); cached per list of directories."""
    cat = Catalogue()
    for rank, directory in enumerate(dirs):
        for key, paths in sorted(_files(directory).items()):
            _add(cat, rank, key, *_load_one(directory, key, paths))
    if not cat.default_key:
        raise RuntimeError("no bundled GPU spec is marked default: the installation is damaged")
    # the default is a key: its spec (bundled or the user's override) is the one marked default
    cat.specs = {k: dataclasses.replace(s, default=(k == cat.default_key)) for k, s in cat.specs.items()}
    _index_names(cat)
    return cat


def _catalogue() -> Catalogue:
    dirs, notes = _spec_dirs()
    _say(notes)
    return _load(dirs)


def catalog() -> dict[str, GpuSpec]:
    """All GPU specs that loaded, by key (bundled ones overridden by the user's); says skipped files once."""
    cat = _catalogue()
    _say(cat.notes)
    return dict(cat.specs)


def bundled_spec(key: str) -> GpuSpec:
    """A bundled spec by key, whatever the user's spec directories hold (the paper's A100 for the paper)."""
    for suffix in SPEC_SUFFIXES:
        path = data_dir("hwspecs") / f"{key}{suffix}"
        if path.is_file():
            return load_spec_file(path)
    raise TcAdvisorError(f"no bundled GPU spec {key!r}")


def _get(cat: Catalogue, key: str) -> GpuSpec:
    """The spec of ``key``; a broken file's own error (and no warning about it) if it failed to load."""
    broken = cat.broken.get(key)
    if broken is not None:
        _SAID.add(f"broken:{broken.path}")
        _say(cat.notes)
        raise TcAdvisorError(broken.problem)
    _say(cat.notes)
    return cat.specs[key]


def default_spec() -> GpuSpec:
    """The GPU used when none is detected: the paper's A100 80GB PCIe (or the user's file of that key)."""
    cat = _catalogue()
    return _get(cat, cat.default_key)


def _looks_like_path(query: str) -> bool:
    return query.lower().endswith(SPEC_SUFFIXES) or any(sep and sep in query for sep in (os.sep, os.altsep))


def find_spec(query: str) -> GpuSpec:
    """Resolve ``--gpu``: a file path, a spec key, an alias or the GPU's full name."""
    if not isinstance(query, (str, os.PathLike)):
        raise TcAdvisorError(f"GPU {query!r} is not a name; expected a name such as 'h100' or the path of a YAML "
                             "spec (see 'tcadvisor gpus')")
    query = os.fspath(query).strip()
    if _looks_like_path(query):
        return load_spec_file(query)
    cat = _catalogue()
    wanted = _norm(query)
    keys = {_norm(k): k for k in (*cat.specs, *cat.broken)}
    key = keys.get(wanted) or cat.names.get(wanted)
    if key is not None and wanted:
        return _get(cat, key)
    if query and Path(query).exists():  # a file or directory in the working directory, named without a suffix
        return load_spec_file(query)
    _say(cat.notes)
    typable = {k: [a for a in s.aliases if _reachable(a)] for k, s in cat.specs.items()}
    known = sorted({typable[k][0] if typable[k] else k for k in cat.specs})
    every = [n for k in cat.specs for n in (k, *typable[k])]
    close = difflib.get_close_matches(query.lower(), every, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise TcAdvisorError(
        f"unknown GPU {query!r}{hint}; expected a path to a YAML spec or one of: {', '.join(known)}"
        " (see 'tcadvisor gpus')"
    )


def as_spec(gpu: GpuSpec | str | os.PathLike) -> GpuSpec:
    """What the Python API accepts for a GPU: a :class:`GpuSpec`, a key, alias or name, or a spec file."""
    if isinstance(gpu, GpuSpec):
        return gpu
    if isinstance(gpu, (str, os.PathLike)):
        return find_spec(os.fspath(gpu))
    raise TcAdvisorError(f"GPU {gpu!r:.60} is neither a GPU spec nor a GPU name; expected a GpuSpec, a name such as "
                         "'h100' or the path of a YAML spec (see 'tcadvisor gpus')")


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
    """The spec whose ``device_names`` occur in the driver's name for the GPU.

    The longest match wins ("H100 PCIe" over "H100"); on a tie the user's file
    wins over a bundled one.  If the match is a file that failed to load, that
    file's error is raised: this GPU is the one asked for.
    """
    cat = _catalogue()
    device_n = _norm(device)
    best: tuple[int, int, str] | None = None
    for key in (*cat.specs, *cat.broken):
        entry = cat.specs.get(key) or cat.broken[key]
        hits = [len(_norm(n)) for n in entry.device_names if _norm(n) and _norm(n) in device_n]
        if hits and (best is None or (max(hits), cat.rank[key]) > best[:2]):
            best = (max(hits), cat.rank[key], key)
    if best is None:
        _say(cat.notes)
        return None
    return _get(cat, best[2])


# --------------------------------------------------------------------------- the user's calibrated specs


def cache_dir() -> Path | None:
    """tcadvisor's per-user cache: ``$TCADVISOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/tcadvisor`` (an absolute
    path, as the XDG base directory specification requires), else ``~/.cache/tcadvisor``; None when there
    is no home directory to put it in."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "tcadvisor"
    try:
        return Path.home() / ".cache" / "tcadvisor"
    except (RuntimeError, KeyError):  # no HOME and no password entry
        return None


def calibrated_specs_dir() -> Path | None:
    """Where ``tcadvisor calibrate`` writes a spec when no ``-o`` is given (see :func:`cache_dir`)."""
    root = cache_dir()
    return None if root is None else root / "specs"


def calibrated_spec_path(device: str, date: str) -> Path:
    """The cache file of a calibration of ``device`` on ``date``: one per GPU model and day (a second
    calibration on the same day replaces the first).  A one-line error when there is no cache directory."""
    directory = calibrated_specs_dir()
    if directory is None:
        raise TcAdvisorError(f"no cache directory for the calibrated spec (no home directory); set {CACHE_ENV} "
                             "or pass -o FILE")
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-") or "gpu"
    return directory / f"{slug}-{date}.yaml"


@dataclass(frozen=True)
class CalibratedSpec:
    """A calibrated spec of the user's cache that names a device."""

    spec: GpuSpec
    path: Path
    date: str  # the calibration date (YYYY-MM-DD), or the file's date where the spec does not say it
    dated_by: str  # "calibration" or "file"


_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def _calibration_date(spec: GpuSpec, path: Path, mtime: float) -> tuple[str, str]:
    """When it was calibrated: the date 'tcadvisor calibrate' writes into the name ("(calibrated DATE)") or
    the measured source, else the file's modification date (said so)."""
    for text in (spec.name, spec.bandwidth.source):
        m = _DATE.search(text)
        if m:
            return m.group(1), "calibration"
    import datetime

    return datetime.date.fromtimestamp(mtime).isoformat(), "file"


def _cached_files(directory: Path) -> list[tuple[float, Path]]:
    """(mtime, path) of the cache's spec files, newest first, at most :data:`MAX_CACHED_SPECS`."""
    found = []
    for suffix in SPEC_SUFFIXES:
        for path in directory.glob("*" + suffix):
            try:
                if path.is_file():
                    found.append((path.stat().st_mtime, path))
            except OSError:
                continue
    found.sort(key=lambda item: (-item[0], str(item[1])))
    if len(found) > MAX_CACHED_SPECS:
        _say([(f"cache-many:{directory}", f"note: {len(found)} spec files in {directory}; only the "
                                          f"{MAX_CACHED_SPECS} most recently written are read")])
    return found[:MAX_CACHED_SPECS]


def calibrated_spec_for_device(device: str) -> CalibratedSpec | None:
    """The user's newest calibrated spec of ``device`` (the driver's name), from the cache, or None.

    A file matches when one of its ``device_names`` occurs in the driver's name (as in the catalogue);
    the newest calibration wins, then the most recently written file.  Every file is read with the
    catalogue's bounds (:func:`tcadvisor.hardware_schema.read_yaml`); a file that fails to load is
    skipped with a one-line warning, and a file that names no device with a note (it is never picked).
    """
    directory = calibrated_specs_dir()
    if directory is None or not directory.is_dir():
        return None
    device_n = _norm(device)
    found: list[tuple[tuple[str, float], CalibratedSpec]] = []
    for mtime, path in _cached_files(directory):
        try:
            spec = load_spec_file(path)
        except TcAdvisorError as exc:
            _say([(f"cache-broken:{path}", f"warning: skipping {exc} (a calibrated spec in your cache; "
                                           "calibrate again or delete the file)")])
            continue
        names = [_norm(n) for n in spec.device_names if _norm(n)]
        if not names:
            _say([(f"cache-nameless:{path}", f"note: {path} names no GPU (device_names is empty), so it is never "
                                             f"picked for the detected GPU; choose it with --gpu {path}")])
            continue
        if any(n in device_n for n in names):
            date, how = _calibration_date(spec, path, mtime)
            found.append(((date, mtime), CalibratedSpec(spec, path, date, how)))
    if not found:
        return None
    return max(found, key=lambda item: item[0])[1]


@dataclass(frozen=True)
class ResolvedGpu:
    spec: GpuSpec
    note: str | None = None  # said on stderr when the choice was not explicit


def _described(spec: GpuSpec) -> str:
    return spec.name if spec.bundled else f"{spec.name} ({spec.path})"


def resolve_gpu(query: str | None) -> ResolvedGpu:
    """``--gpu`` if given; else the user's newest calibration of the detected GPU (:func:`calibrated_spec_for_device`,
    measured on this very GPU model, so it wins over every datasheet); else the detected GPU's spec; else the
    embedded default."""
    if query:
        return ResolvedGpu(find_spec(query))
    device = detect_local_gpu_name()
    if device is None:
        spec = default_spec()
        return ResolvedGpu(spec, f"no GPU detected; using the embedded default spec {_described(spec)} "
                                 "(--gpu to choose)")
    cached = calibrated_spec_for_device(device)
    if cached is not None:
        when = f"calibrated {cached.date}" if cached.dated_by == "calibration" else f"file dated {cached.date}"
        return ResolvedGpu(cached.spec, f"using your calibrated spec {cached.path} for {device} ({when})")
    spec = spec_for_device_name(device)
    if spec is None:
        fallback = default_spec()
        return ResolvedGpu(
            fallback,
            f"detected GPU {device!r} has no spec; using {_described(fallback)} "
            "(pass --gpu NAME or a YAML file of your own)",
        )
    return ResolvedGpu(spec, f"using the spec of the detected GPU {device!r}: {_described(spec)}")
