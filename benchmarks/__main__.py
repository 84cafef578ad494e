"""One entry point for the benchmark, fitting and device-session scripts of benchmarks/.

    python -m benchmarks                     # every script with the first line of its docstring, by group
    python -m benchmarks NAME [ARGS ...]     # run benchmarks/NAME.py (or NAME.sh) with ARGS
    python -m benchmarks NAME --help         # that script's own help

Why: the scripts grew one GPU session at a time (25 of them); a reader should find the one that
records the corpus, refits the model or times the kernels without opening each.  Each script stays a
plain script (the device sessions run them by path, and results folders name them); this module only
lists and dispatches.  Shared helpers live where the scripts already import them from:
``benchmarks.gpu_session_kernels`` (copy bandwidth, ceilings), ``benchmarks.record_corpus``
(precompile, source hashes), ``tcadvisor.validate.corpus`` (recording and checking one configuration).
"""
from __future__ import annotations

import ast
import os
import runpy
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Groups in the listing, by name prefix or name (the first match wins); the rest are "analysis".
GROUPS = (
    ("model fit and corpus", ("fit_refined", "record_corpus", "rerecord_corpus", "check_calibrate_fit",
                              "experiment_slice_term", "refined_on_kernels")),
    ("device sessions (GPU)", ("gpu_session_", "spider_side_by_side")),
    ("kernel tuning and resources", ("tune_gpu_kernels", "plan_cc3d", "ptxas_resources", "kernel_resources",
                                     "profile_kernel", "kernel_function")),
    ("speed of the tool", ("bench_",)),
)


def scripts() -> dict[str, Path]:
    """Script name (file stem) -> path, for every runnable .py and .sh here (this module excluded)."""
    out = {}
    for path in sorted(HERE.iterdir()):
        if path.suffix in (".py", ".sh") and not path.name.startswith("_") and path.is_file():
            out.setdefault(path.stem, path)
    return out


def summary(path: Path) -> str:
    """The first line of a script's docstring (Python) or of its leading comment (shell)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        doc = ast.get_docstring(ast.parse(text)) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""
    for i, line in enumerate(text.splitlines()):
        if i == 0 and line.startswith("#!"):
            continue
        if line.startswith("# ") and line[2:].strip():
            return line[2:].strip()
    return ""


def group_of(name: str) -> str:
    for label, keys in GROUPS:
        if any(name == k or (k.endswith("_") and name.startswith(k)) for k in keys):
            return label
    return "analysis"


def listing() -> str:
    found = scripts()
    lines = [f"python -m benchmarks NAME [ARGS ...]  ({len(found)} scripts; NAME --help for each one's options)"]
    for label in [g for g, _ in GROUPS] + ["analysis"]:
        names = [n for n in found if group_of(n) == label]
        if names:
            lines += ["", f"{label}:"] + [f"  {n:<26} {summary(found[n])}" for n in names]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(listing())
        return 0
    name, rest = argv[0], argv[1:]
    found = scripts()
    if name not in found:
        print(f"benchmarks: no script {name!r}; expected one of {', '.join(found)}", file=sys.stderr)
        return 2
    path = found[name]
    if path.suffix == ".sh":
        return subprocess.call(["bash", str(path), *rest])
    root = str(HERE.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    sys.argv = [str(path), *rest]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
