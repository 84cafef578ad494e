"""A short, stable fingerprint of the bundled kernels: what runs on the GPU and how it is launched.

The refined model's constants (``models/fitted/refined-terms.yaml``) and the
corpus they are fitted on (``validation/results/*/corpus.json``) describe the
bundled kernels *as they were when measured*.  When a kernel's CUDA code, its
launch plan or its measured defaults change, the fitted constants describe
other kernels, and nothing else would say so.  Each of them records
:func:`kernel_fingerprint` when it is written, and :func:`check_fitted` compares
the recorded value with today's kernels and names the files that changed.

**What is covered, and why.**  The files that decide which code the GPU runs,
with which launch shape and on which operands — so that a change to any of them
can change the measured throughput:

* every CUDA source the package compiles, ``kernels/*.cu`` and ``kernels/*.cuh``
  (the three stencil kernels, the header they inline, the ghost-layer refresh
  that runs inside every timed interval, the hold kernel launched before it, and
  ``calibrate.cu``, whose microbenchmarks measure the ceilings the fitted terms
  are relative to), ``kernels/compiled-resources.csv``, the compiler's register
  reports from which the 3D CUDA-core planner picks tiles that do not spill, and
  ``kernels/defaults.yaml``, the kernels' measured defaults (the Tensor Core
  kernels' memory knobs, the 3D radius-1 tiles, the 2D direct stores and kept
  columns, ...), which the planner launches where no knob is given;
* ``tcadvisor/gpu/plans.py``: every launch shape (threads, tiles, what lives in
  registers or shared memory, the streamed-axis split), and
  ``tcadvisor/gpu/defaults.py``, which reads the measured defaults;
* the kernel modules that compile and launch a plan:
  ``tcadvisor/gpu/cuda_cores.py``, ``tensor_cores.py`` (the default MMA
  instruction, the fragment upload, the field pitch and the vector-load
  alignment flags), ``sparse_tensor_cores.py`` (the same for ``mma.sp``) and
  ``backend.py`` (compiler options, header inlining, the shared-memory opt-in,
  the resident blocks the launch split is sized for);
* the code that builds the operands the kernels multiply and the order their
  loads feed the instructions: ``tcadvisor/gpu/sparse_operands.py``,
  ``layouts.py``, ``dense16.py`` and the two constructions they use,
  ``tcadvisor/transforms/rowband.py`` and ``spider.py``;
* ``tcadvisor/gpu/fields.py``: the padded field layout (ghost widths, row
  pitch) every kernel reads and the ghost refresh launched in the timed loop;
* the bundled implementation profiles, ``models/*.yaml`` with a ``kernel:``
  key, as far as they decide what runs: their ``kernel``, ``unit``,
  ``precisions`` (which precision a dtype runs in) and ``mma`` (the shapes the
  dense kernel chooses among, in order); their descriptions, α notes and
  stencil lists do not count.

Not covered: the runner, the timing and the checks (how a run is measured and
judged, not what runs), ``kernels/calibrate_wgmma.cu`` (:data:`NOT_COVERED`), the refined model itself, and generic helpers these
modules call (``tcadvisor/transforms/base.py``, the stencil and reference code).

**Scheme (version 1).**  Each covered file is read as UTF-8, its line endings
normalised to ``\\n``, trailing whitespace stripped, and blank lines and lines
holding only a comment dropped (``#`` in Python, ``//`` in CUDA), so that
re-wording a comment does not ask for a refit while any change of code,
docstrings or data does; of a profile, the text is the JSON (sorted keys) of
the four fields above.  A file's hash is the SHA-256 of that text.  The
fingerprint is the first 16 hex digits of the SHA-256 of
``"tcadvisor kernel fingerprint v1\\n"`` followed by one line
``"<path>\\0<file hash>\\n"`` per file in path order.  Paths are logical, not
where the files happen to lie: ``kernels/<name>`` and ``models/<name>`` (found by
:func:`tcadvisor.data.data_dir`, beside the package in a checkout, in
``tcadvisor/_data/`` in a wheel) and ``tcadvisor/<module path>``, so a checkout,
an editable install and an installed wheel give the same fingerprint.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Mapping

from .data import data_dir
from .errors import TcAdvisorError

SCHEME = "tcadvisor kernel fingerprint v1"
#: Hex digits kept of the combined hash (64 bits: collisions are not a concern for a handful of versions).
LENGTH = 16
#: The package modules covered, relative to the package (see the module docstring for why each).
MODULES = (
    "gpu/plans.py", "gpu/defaults.py", "gpu/backend.py", "gpu/fields.py", "gpu/cuda_cores.py", "gpu/tensor_cores.py",
    "gpu/sparse_tensor_cores.py", "gpu/sparse_operands.py", "gpu/layouts.py", "gpu/dense16.py",
    "transforms/rowband.py", "transforms/spider.py",
)
#: CUDA sources in kernels/ (what the package compiles: the backend inlines local headers), and what the planner
#: reads there: the compiler's reports (kernels/compiled-resources.csv: which tiles it launches) and the measured
#: defaults (kernels/defaults.yaml).
KERNEL_SUFFIXES = (".cu", ".cuh", ".csv", ".yaml")
#: Files of kernels/ that no stencil kernel compiles and no fitted term is relative to: the wgmma microbenchmark
#: (kernels/calibrate_wgmma.cu) measures a yardstick the spec keeps apart from the executed instructions' rates
#: (``warpgroup_mma``), which the refined model never reads.
NOT_COVERED = ("calibrate_wgmma.cu",)
#: The command that refits the refined model's constants (and records the fingerprint it was fitted for).
REFIT_COMMAND = "python benchmarks/fit_refined.py"
#: A covered file is source code of a few tens of kilobytes; anything far larger is not one.
MAX_FILE_BYTES = 1 << 20
#: At most this many files are fingerprinted (a kernels/ directory with more is damaged).
MAX_FILES = 256
_COMMENT = {".py": "#", ".yaml": "#", ".yml": "#", ".cu": "//", ".cuh": "//", ".csv": "#"}
_KERNEL_PROFILE = re.compile(r"^kernel:[ \t]*\S", re.MULTILINE)
#: The fields of a bundled profile that decide what its kernel runs.
PROFILE_FIELDS = ("kernel", "unit", "precisions", "mma")


def _roots() -> dict[str, Path]:
    """Where the logical prefixes lie in this installation (tests point them at copies)."""
    return {"tcadvisor": Path(__file__).resolve().parent, "kernels": data_dir("kernels"),
            "models": data_dir("models")}


def _read(path: Path, logical: str) -> str:
    """The text of one covered file, read with a size bound; one-line errors naming the file."""
    from .files import read_bytes

    try:
        data = read_bytes(path, logical, MAX_FILE_BYTES)
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"{exc}; cannot fingerprint the kernels") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TcAdvisorError(f"{logical} ({path}) is not UTF-8 text (offset {exc.start}); "
                             "cannot fingerprint the kernels") from None


def normalise(text: str, suffix: str) -> str:
    """The text a file's hash is taken of: LF line endings, no trailing blanks, no blank or comment-only lines."""
    marker = _COMMENT.get(suffix)
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = line.rstrip()
        stripped = line.lstrip()
        if not stripped or (marker and stripped.startswith(marker)):
            continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def covered_files() -> dict[str, Path]:
    """Logical path -> file, for every file the fingerprint covers (sorted by logical path)."""
    roots = _roots()
    found: dict[str, Path] = {}
    for path in sorted(roots["kernels"].iterdir()):
        if path.suffix in KERNEL_SUFFIXES and path.is_file() and path.name not in NOT_COVERED:
            found[f"kernels/{path.name}"] = path
    for path in sorted(roots["models"].glob("*.yaml")):
        if path.is_file() and _KERNEL_PROFILE.search(normalise(_read(path, f"models/{path.name}"), ".yaml")):
            found[f"models/{path.name}"] = path
    for module in MODULES:
        found[f"tcadvisor/{module}"] = roots["tcadvisor"] / module
    if len(found) > MAX_FILES:
        raise TcAdvisorError(f"{len(found)} files to fingerprint in {roots['kernels']} and {roots['models']}; "
                             f"expected at most {MAX_FILES}: the installation is damaged")
    return dict(sorted(found.items()))


def profile_text(text: str, logical: str) -> str:
    """What of a bundled profile is hashed: :data:`PROFILE_FIELDS` as JSON with sorted keys."""
    from .files import parse_yaml

    try:
        raw = parse_yaml(text, logical, "implementation profile")
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"{exc}; cannot fingerprint the kernels") from None
    if not isinstance(raw, dict):
        raise TcAdvisorError(f"{logical} is not a YAML mapping; cannot fingerprint the kernels")
    return json.dumps({k: raw.get(k) for k in PROFILE_FIELDS}, sort_keys=True, default=str) + "\n"


def file_hash(path: Path, logical: str) -> str:
    """SHA-256 (hex) of one file's normalised text (of a profile, of the fields that decide what runs)."""
    suffix = Path(logical).suffix
    text = normalise(_read(path, logical), suffix)
    if logical.startswith("models/"):
        text = profile_text(text, logical)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint_parts() -> dict[str, str]:
    """Logical path -> SHA-256 of each covered file: record it beside the fingerprint to name what changed.

    A covered module that is missing is an error (the list in :data:`MODULES` is then stale).
    """
    parts = {}
    for logical, path in covered_files().items():
        if not path.is_file():
            raise TcAdvisorError(f"{logical} is missing from this installation ({path}); "
                                 "cannot fingerprint the kernels")
        parts[logical] = file_hash(path, logical)
    return parts


def combine(parts: Mapping[str, str]) -> str:
    """The fingerprint of a set of file hashes (the scheme of the module docstring)."""
    text = SCHEME + "\n" + "".join(f"{p}\0{h}\n" for p, h in sorted(parts.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:LENGTH]


def kernel_fingerprint() -> str:
    """16 hex digits identifying the bundled kernels' sources, launch plans, operands and measured defaults."""
    return combine(fingerprint_parts())


def changed_files(recorded_parts: Mapping[str, str], parts: Mapping[str, str] | None = None) -> list[str]:
    """Files whose hash differs from ``recorded_parts``, and files added or removed since (marked so)."""
    parts = fingerprint_parts() if parts is None else parts
    out = [p for p in sorted(set(parts) & set(recorded_parts)) if parts[p] != recorded_parts[p]]
    out += [f"{p} (new)" for p in sorted(set(parts) - set(recorded_parts))]
    out += [f"{p} (removed)" for p in sorted(set(recorded_parts) - set(parts))]
    return out


def check_fitted(recorded: str | None, what: str, recorded_parts: Mapping[str, str] | None = None,
                 refit: str = REFIT_COMMAND) -> str | None:
    """None when ``recorded`` is today's :func:`kernel_fingerprint`; else one line saying what to do.

    ``what`` is the subject and verb of the sentence, e.g. ``"the refined model's constants were
    fitted"``.  ``recorded_parts`` (the :func:`fingerprint_parts` recorded beside the fingerprint, if
    any) lets the line name the files that changed; without them it says the files cannot be named.
    """
    parts = fingerprint_parts()
    current = combine(parts)
    if recorded == current:
        return None
    if recorded is None or (isinstance(recorded, str) and not recorded.strip()):
        return (f"{what} for kernels of no recorded fingerprint (no kernel_fingerprint); these kernels are "
                f"{current}; refit with {refit}")
    if not isinstance(recorded, str) or not re.fullmatch(r"[0-9a-f]{%d}" % LENGTH, recorded):
        return (f"{what} for kernels {recorded!r}, which is not a fingerprint ({LENGTH} lower-case hex digits); "
                f"these kernels are {current}; refit with {refit}")
    if recorded_parts:
        changed = changed_files(recorded_parts, parts)
        which = (f"changed: {', '.join(changed)}" if changed
                 else "the recorded file hashes match these files: the recorded fingerprint is not theirs")
    else:
        which = "changed files unknown: no kernel_fingerprint_parts recorded"
    return f"{what} for kernels {recorded}, these kernels are {current} ({which}); refit with {refit}"
