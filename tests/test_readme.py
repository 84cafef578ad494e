"""README.md is a user guide whose figures cannot drift: each is checked here against the committed file it
names (or against the code, for the example answer), its links resolve, and its two quick-start commands are
the ones CI runs.  The pages README sends readers to (docs/kernels.md, docs/results.md, docs/usage.md) get
the same link and path checks.

When a check fails after a refit, a new corpus or a change to the answer's wording, regenerate the figure
from the file the message names; do not edit the test.
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, ROOT / "docs" / "kernels.md", ROOT / "docs" / "results.md", ROOT / "docs" / "usage.md"]
INSTALL_AND_ADVISE = ("python3 -m venv .venv && . .venv/bin/activate && pip install . && "
                      "tcadvisor advise Box-3D1R --fuse 3 --dtype double")
INSTALL_AND_TEST = "python3 -m venv .venv && . .venv/bin/activate && pip install '.[test]' && pytest"
UNITS = ("cuda_core", "tensor_core", "sparse_tensor_core")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _strip_code(text: str) -> str:
    """The text outside fenced code blocks (links inside code are not links)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    h = re.sub(r"[`*_]", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", _strip_code(_text(path)), flags=re.M)}


def _table(text: str, after: str) -> list[list[str]]:
    """The rows (cells stripped, header and rule left out) of the first table after the text ``after``."""
    start = text.index(after)
    lines = text[start:].splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _paragraph_before(text: str, marker: str) -> str:
    """The paragraph that ends right before the first line starting with ``marker``."""
    end = text.index(marker)
    start = text.rfind("\n\n", 0, end - 2)
    return text[start:end]


# ---------------------------------------------------------------------------------------------- links, paths


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = _strip_code(_text(page))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links, f"{page.name} has no links?"
    bad = []
    for link in links:
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            bad.append(f"{link}: {path} does not exist")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            bad.append(f"{link}: no heading with anchor #{anchor} in {path.name}")
    assert not bad, f"{page.name}: " + "; ".join(bad)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_repository_paths_exist(page):
    """Every `path` in backticks that starts at a top-level folder of the repository exists (a figure's results
    file, a kernel, a script): a figure keeps the file it came from."""
    tops = ("validation/", "kernels/", "benchmarks/", "tcadvisor/", "hwspecs/", "docs/", "tests/", "notebooks/",
            "models/")
    missing = []
    for token in re.findall(r"`([^`\s]+)`", _text(page)):
        if not token.startswith(tops) or any(c in token for c in "*<>{}$"):
            continue
        if not (ROOT / token.rstrip(",.;:")).exists():
            missing.append(token)
    assert not missing, f"{page.name} names files that do not exist: {missing}"


def test_quick_start_commands_are_the_ones_ci_runs():
    text = _text(README)
    assert f"```\n{INSTALL_AND_ADVISE}\n```" in text
    assert f"```\n{INSTALL_AND_TEST}\n```" in text
    ci = _text(ROOT / ".ci" / "run").splitlines()
    k = next(i for i, line in enumerate(ci) if "README's test command, verbatim" in line)
    assert ci[k + 1].strip() == INSTALL_AND_TEST, ".ci/run no longer runs README's test command verbatim"


def test_readme_stays_a_guide():
    size = len(README.read_bytes())
    assert size < 20_000, f"README.md is {size} bytes: move reference material to docs/ (usage.md, kernels.md, results.md)"


# ---------------------------------------------------------------------------------------------- the example answer


def _example() -> tuple[str, list[str]]:
    text = _text(README)
    m = re.search(r"^```\n\$ (tcadvisor advise [^\n]+)\n(.*?)^```", text, flags=re.S | re.M)
    assert m, "README's example answer (a code block starting with '$ tcadvisor advise') is missing"
    return m.group(1), m.group(2).splitlines()


def _advise(command: str, *extra: str) -> str:
    args = command.split()[1:]
    proc = subprocess.run([sys.executable, "-m", "tcadvisor", *args, *extra], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_example_answer_is_what_advise_prints_now():
    """Every line README shows is the current output, in order; the lines left out at '[...]' are as many as the
    text before the block says."""
    command, shown = _example()
    out = _advise(command).splitlines()
    fresh = "\n".join(out)
    pos, gaps, elided = 0, 0, False
    for line in shown:
        if line == "[...]":
            elided = True
            continue
        try:
            k = out.index(line, pos)
        except ValueError:
            pytest.fail(f"README's example line is not in today's output of {command!r}:\n{line}\n\n"
                        f"regenerate the example from:\n{fresh}")
        assert k == pos or elided, f"README's example leaves out lines before {line!r} without a '[...]'"
        gaps, pos, elided = gaps + k - pos, k + 1, False
    assert pos == len(out), "README's example stops before the end of the answer"
    said = re.search(r"(\d+) lines of notes .*? are left out at the two `\[\.\.\.\]`", _text(README), flags=re.S)
    assert said and int(said.group(1)) == gaps, f"{gaps} lines are left out of the example"
    assert shown.count("[...]") == 2


def test_example_measurements_are_the_recorded_ones():
    """The prose under the example: the predicted depths, each measured on the H100 where the prose says (inside
    its interval, or so many per cent below or above it), and the best measured depth of CUDA cores, all from the
    benchmark run it names."""
    command, _ = _example()
    advice = json.loads(_advise(command, "--json"))
    text = _text(README)
    para = text[text.index("The answer is about the three bundled kernels"):]
    para = para[:para.index("\n\n")]
    path = re.search(r"`(validation/results/[^`]+kernels\.csv)`", para).group(1)
    with open(ROOT / path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["impl"].startswith("tcadvisor-")]
    stencil, dtype = advice["stencil"], advice["dtype"]
    measured = {(r["unit"], int(r["fuse"])): float(r["gstencils"]) for r in rows
                if r["stencil"] == stencil and r["dtype"] == dtype}
    names = {"CUDA cores": "cuda_core", "Tensor Cores": "tensor_core", "Sparse Tensor Cores": "sparse_tensor_core"}
    quoted = re.findall(r"(\d+) \((CUDA cores|Tensor Cores|Sparse Tensor\s+Cores), t = (\d+)\)", para)
    assert len(quoted) == 3, para
    options = {o["unit"]: o for o in advice["options"]}
    for value, label, t in quoted:
        unit, t = names[re.sub(r"\s+", " ", label)], int(t)
        o = options[unit]
        assert o["fuse"] == t, f"README says {label} are predicted best at t = {t}; advise says t = {o['fuse']}"
        got = measured[(unit, t)]
        assert int(value) == round(got), f"{label} t = {t}: README {value}, {path} {got:.1f}"
        low, high = o["interval"]["low"], o["interval"]["high"]
        flat = re.sub(r"\s+", " ", para)
        name = re.sub(r"\s+", " ", label)
        if got < low:
            said = f"{name} {100 * (1 - got / low):.0f} % below its interval's {low:.0f}"
            assert said in flat, f"{label}: {got:.1f} is below {low:.1f}; README should say {said!r}"
        elif got > high:
            said = f"{name} {100 * (got / high - 1):.0f} % above its interval's {high:.0f}"
            assert said in flat, f"{label}: {got:.1f} is above {high:.1f}; README should say {said!r}"
        else:
            assert re.search(rf"{name}( and [A-Za-z ]+?)? inside (its|their) interval", flat) or \
                re.search(rf"[A-Za-z ]+ and {name} inside their intervals", flat), f"{label}: README should say inside"
    best_t, best = max(((t, g) for (u, t), g in measured.items() if u == "cuda_core"), key=lambda x: x[1])
    m = re.search(r"CUDA cores measured best at t = (\d+) \((\d+)\)", para)
    assert m and (int(m.group(1)), int(m.group(2))) == (best_t, round(best))
    assert advice["verdict"]["too_close"] and "too close" in para


# ---------------------------------------------------------------------------------------------- the model's figures


def _pct1(x: float) -> str:
    return f"{100 * x:.1f} %"


def _pct0(x: float) -> str:
    return f"{100 * x:.0f} %"


def _frac(pair) -> str:
    a, b = pair
    return f"{a}/{b} ({100 * a / b:.0f} %)"


def test_leave_one_shape_out_table_is_crossval_json():
    text = _text(README)
    intro = _paragraph_before(text, "| held out |")
    path = re.search(r"`(validation/results/[^`]+/crossval\.json)`", intro).group(1)
    cv = json.loads((ROOT / path).read_text())
    keys = {"by shape": "leave_one_shape_out", "fitted on the H200": "leave_one_gpu_out",
            "fitted on the H100": "leave_one_gpu_out"}
    rows = _table(text, "| held out |")
    assert len(rows) == 4
    for row in rows:
        gpu, _, how = row[0].partition(", ")
        rep = cv[gpu][keys[how]]
        a = rep["all"]
        want = [row[0], _pct1(a["median"]), _pct1(a["p90"]), _pct0(a["worst"]), _pct0(a["within_15"]),
                _frac(rep["winners"]), _frac(rep["best_depth"])]
        assert row == want, f"README's row differs from {path}: {row} != {want}"
    # The corpora the figures are of.
    runs = {g: cv[g]["leave_one_shape_out"]["all"]["runs"] for g in ("H100", "H200")}
    flat = re.sub(r"\s+", " ", intro)
    for g, n in runs.items():
        m = re.search(rf"(\d+) on the {g}\b", flat)
        assert m and int(m.group(1)) == n, (g, n)
    m = re.search(r"\((\d+) shapes in 1D", flat)
    assert m and all(cv[g]["shapes"] == int(m.group(1)) for g in runs)


def test_model_sentences_are_crossval_json():
    text = re.sub(r"\s+", " ", _text(README))
    path = re.search(r"`(validation/results/[^`]+/crossval\.json)`", text).group(1)
    cv = json.loads((ROOT / path).read_text())
    wrong = {g: cv[g]["leave_one_shape_out"]["winners"][1] - cv[g]["leave_one_shape_out"]["winners"][0]
             for g in ("H100", "H200")}
    unflagged = sum(cv[g]["verdicts_with_intervals"]["confidently_wrong"] for g in ("H100", "H200"))
    for g in ("H100", "H200"):
        v = cv[g]["verdicts_with_intervals"]
        assert v["flagged"] + v["confidently_wrong"] == wrong[g]
    m = re.search(r"wrong \((\d+) on the H100, (\d+) on the H200\) (?:all but (\d+) say|every one says)", text)
    assert m and (int(m[1]), int(m[2]), int(m[3] or 0)) == (wrong["H100"], wrong["H200"], unflagged)
    worst = cv["H100"]["leave_one_shape_out"]["all"]["worst_run"]
    m = re.search(r"predicted (\d+), measured (\d+)", worst)
    assert f"predicted {m.group(1)}, measured {m.group(2)} GStencils/s" in text
    fp64 = [cv[g]["leave_one_shape_out"]["by_unit"]["tensor_core/fp64"]["median"] for g in ("H100", "H200")]
    lo, hi = f"{100 * min(fp64):.0f}", f"{100 * max(fp64):.0f}"
    assert f"FP64 on dense Tensor Cores (median {lo if lo == hi else f'{lo}–{hi}'} %)" in text


# ---------------------------------------------------------------------------------------------- the kernels' table


def _best(rows, stencil, dtype, unit):
    mine = [r for r in rows if r["stencil"] == stencil and r["dtype"] == dtype and r["unit"] == unit
            and r["impl"].startswith("tcadvisor-")]
    assert all(r.get("correct", "True") == "True" for r in mine)
    return max(mine, key=lambda r: float(r["gstencils"])) if mine else None


def _library(rows, stencil, dtype, impl):
    mine = [float(r["gstencils"]) for r in rows if r["stencil"] == stencil and r["dtype"] == dtype
            and r["impl"] == impl]
    return f"{max(mine):.0f}" if mine else "–"


def test_kernels_table_is_the_recorded_runs():
    """Each cell is the best measured depth of the file the paragraph names: the corpus for 1D, the full depth
    scans (with the libraries) for 2D and 3D."""
    text = _text(README)
    intro = _paragraph_before(text, "| stencil | dtype | CUDA cores |")
    files = re.findall(r"`(validation/results/[^`]+\.csv)`", intro)
    corpus = next(f for f in files if f.endswith("corpus/corpus.csv"))
    scans = next(f for f in files if f.endswith("kernels.csv"))
    assert intro.index("1D:") < intro.index(corpus) < intro.index("2D and 3D:") < intro.index(scans)
    tables = {}
    for f in (corpus, scans):
        with open(ROOT / f, newline="") as fh:
            tables[f] = list(csv.DictReader(fh))
    rows = _table(text, "| stencil | dtype | CUDA cores |")
    assert len(rows) >= 6
    for stencil, dtype, *cells, libs in rows:
        source = corpus if "-1D" in stencil else scans
        recorded = tables[source]
        for unit, cell in zip(UNITS, cells):
            best = _best(recorded, stencil, dtype, unit)
            if cell == "–":
                assert best is None, f"{stencil} {dtype} {unit}: README '–', {source} has runs"
                continue
            m = re.fullmatch(r"(\d+)(?: (TF32|FP16|BF16|FP64|FP32))? \(t = (\d+)\)", cell)
            assert m, cell
            want = f"{float(best['gstencils']):.0f}"
            label = best["precision"].upper() if unit != "cuda_core" and dtype == "float" else None
            got = (m.group(1), m.group(2), int(m.group(3)))
            assert got == (want, label, int(best["fuse"])), \
                f"{stencil} {dtype} {unit}: README {cell!r}, {source}: {want} at t = {best['fuse']}"
        want_libs = "–" if source == corpus else \
            f"{_library(recorded, stencil, dtype, 'cupy.correlate')} / {_library(recorded, stencil, dtype, 'torch.conv (cuDNN)')}"
        assert libs == want_libs or (libs == "–" and want_libs == "– / –"), f"{stencil} {dtype}: {libs} != {want_libs}"
