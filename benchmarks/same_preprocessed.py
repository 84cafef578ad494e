"""Whether the runs of a recorded corpus compile, today, to the code they ran: the kernels' preprocessed tokens.

A corpus records which CUDA sources its runs compiled (``source_sha256`` in its corpus.json).  When a source
changed since, the runs may still be today's kernels: a change that adds a compile-time option (``#if K_PF > 1``)
leaves every launch without it the same token stream once the preprocessor has run, and two identical token
streams compile to the same code with any compiler and options.  So, for every recorded run, this rebuilds its
launch from the kernel's own description (the planner's ``recorded_*_plan``), preprocesses the kernel source with
those compile-time constants twice -- as recorded (the file's version in git whose bytes hash to the recorded
digest) and as today -- and compares the tokens.

Used by benchmarks/fit_refined.py (``stamp_corpus``, the "preprocessed" check) when a GPU whose corpus is of
older CUDA sources cannot be lent to record it again.  Needs git and a C preprocessor (``cpp``); no GPU.

    python benchmarks/same_preprocessed.py CORPUS_DIR      (prints what the check finds)
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tcadvisor.gpu.backend import _LOCAL_INCLUDE as LOCAL_INCLUDE  # noqa: E402  (the headers NVRTC gets inlined)
from tcadvisor.validate.corpus import recorded_plan  # noqa: E402

#: How far back git's history of a file is searched for its recorded version.
MAX_REVISIONS = 400
#: Seconds one preprocessor call may take (the kernels preprocess in milliseconds).
CPP_TIMEOUT_S = 30


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw.replace(b"\r\n", b"\n")).hexdigest()


def recorded_text(rel: str, digest: str, root: Path = ROOT) -> str | None:
    """The text of ``rel`` (a path of the repository) in the newest commit whose version hashes to ``digest``
    (the corpus's ``source_sha256``, line endings normalised), or None where none of the last
    :data:`MAX_REVISIONS` commits touching it does."""
    if (root / rel).exists() and _digest((root / rel).read_bytes()) == digest:
        return (root / rel).read_text()
    revs = subprocess.run(["git", "-C", str(root), "log", "--format=%H", "-n", str(MAX_REVISIONS), "--", rel],
                          capture_output=True, text=True, timeout=60, check=False).stdout.split()
    for rev in revs:
        raw = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{rel}"], capture_output=True, timeout=60,
                             check=False).stdout
        if raw and _digest(raw) == digest:
            return raw.decode("utf-8")
    return None


def inline(name: str, texts: dict[str, str]) -> str:
    """``kernels/name`` with its local headers inlined, from ``texts`` (file name -> text)."""
    return LOCAL_INCLUDE.sub(lambda m: inline(m.group(1), texts), texts[name])


def includes(name: str, texts: dict[str, str]) -> set[str]:
    """``name`` and every local header it inlines, recursively."""
    found = {name}
    for m in LOCAL_INCLUDE.finditer(texts[name]):
        found |= includes(m.group(1), texts)
    return found


def preprocessed(text: str, defines) -> str:
    """The device-side token stream of ``text`` with ``-Dkey=value`` for each define: the C preprocessor with the
    macros NVRTC sets for the device pass (``__CUDACC__``, ``__CUDA_ARCH__``), whitespace collapsed."""
    cpp = shutil.which("cpp")
    if cpp is None:
        raise RuntimeError("no C preprocessor (cpp) on PATH: the preprocessed check needs one")
    args = [cpp, "-P", "-x", "c++", "-D__CUDACC__", "-D__CUDA_ARCH__=900"] + [f"-D{k}={v}" for k, v in defines]
    done = subprocess.run(args + ["-"], input=text, capture_output=True, text=True, timeout=CPP_TIMEOUT_S,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"cpp failed on {dict(defines)}: {done.stderr.strip().splitlines()[-1:]}")
    return " ".join(done.stdout.split())


def compare(rows: list[dict], recorded: dict[str, str], root: Path = ROOT) -> tuple[str | None, list[dict], str]:
    """Which runs of ``rows`` (status ok) compile today to other tokens than when recorded.

    ``recorded``: the corpus's ``source_sha256`` (logical path -> digest).  Returns (why it cannot tell, or None;
    the runs whose launch preprocesses to other tokens today; what was compared).  It cannot tell where a changed
    CUDA file's recorded version is not in git, or where a changed CUDA file is one no recorded launch compiles (the
    ghost refresh, the calibration: runs depend on them, the tokens of no launch say how)."""
    kernels = root / "kernels"
    today = {p.name: p.read_text() for p in kernels.iterdir() if p.suffix in (".cu", ".cuh")}
    changed = sorted(rel.split("/", 1)[1] for rel, digest in recorded.items()
                     if rel.startswith("kernels/") and rel.endswith((".cu", ".cuh"))
                     and (not (root / rel).exists() or _digest((root / rel).read_bytes()) != digest))
    if not changed:
        return None, [], "no CUDA source changed"
    then = dict(today)
    for name in changed:
        text = recorded_text(f"kernels/{name}", recorded[f"kernels/{name}"], root)
        if text is None:
            return f"kernels/{name} as recorded is in none of git's last {MAX_REVISIONS} versions of it", [], ""
        then[name] = text
    launches = {}
    for r in rows:
        if r["status"] == "ok":
            plan = recorded_plan(r)
            launches.setdefault((plan.source, tuple(plan.defines)), []).append(r)
    reached = set().union(*(includes(src, today) | includes(src, then) for src, _ in launches))
    unreached = [name for name in changed if name not in reached]
    if unreached:
        return f"changed, and compiled by no recorded launch: {', '.join(unreached)}", [], ""
    differ, compared = [], 0
    for (src, defines), rs in launches.items():
        if not (includes(src, today) | includes(src, then)) & set(changed):
            continue
        compared += 1
        if preprocessed(inline(src, then), defines) != preprocessed(inline(src, today), defines):
            differ.append(rs)
    names = ", ".join(f"kernels/{n}" for n in changed)
    if not differ:
        what = f"{names} changed; the {compared} recorded launches that compile them preprocess to the same tokens as recorded"
    else:
        first = differ[0][0]
        what = (f"{names} changed; {len(differ)} of the {compared} recorded launches that compile them preprocess to "
                f"other tokens today (e.g. {first['stencil']} {first['unit']} {first['precision']} t={first['fuse']}), "
                "the others to the same tokens as recorded")
    return None, [r for rs in differ for r in rs], what


def check(rows: list[dict], recorded: dict[str, str], root: Path = ROOT) -> tuple[bool, str]:
    """Whether every run of ``rows`` (status ok) compiles today to the tokens it compiled when recorded (see
    :func:`compare`): (same, what was found)."""
    why, differ, what = compare(rows, recorded, root)
    return (False, why) if why is not None else (not differ, what)


def main(argv: list[str]) -> int:
    from tcadvisor.validate.corpus import load_corpus

    head, rows = load_corpus(Path(argv[0]))
    same, what = check(rows, head.get("source_sha256", {}))
    print(("same: " if same else "differs: ") + what)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
