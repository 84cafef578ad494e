"""python -m benchmarks: every script of benchmarks/ listed with what it does, dispatched by name, an unknown
name refused in one line."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench(*args):
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_the_listing_names_every_script_with_its_purpose():
    out = _bench().stdout
    names = {p.stem for p in (ROOT / "benchmarks").iterdir()
             if p.suffix in (".py", ".sh") and not p.name.startswith("_")}
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert listed == names and len(names) > 20
    for line in out.splitlines():
        if line.startswith("  "):
            assert len(line.split(None, 1)) == 2, f"no purpose given: {line!r}"
    assert "model fit and corpus:" in out and "  fit_refined " in out and "  record_corpus " in out
    assert "Sourced by the Nsight Compute session scripts" in out  # a shell script's leading comment


def test_a_script_runs_by_name_with_its_arguments():
    r = _bench("import_graph", "--json")
    assert r.returncode == 0, r.stderr
    assert '"circles"' in r.stdout or "circles" in r.stdout


def test_an_unknown_name_is_one_line_and_status_2():
    r = _bench("no_such_script")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "no script 'no_such_script'" in r.stderr
