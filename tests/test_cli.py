"""The command line as a user runs it: fresh processes, exit codes, one-line errors."""
import json

import pytest


def test_advise_table(run_cli):
    r = run_cli("advise", "Box-3D1R", "--fuse", "3", "--dtype", "double", "--alpha", "paper")
    assert r.returncode == 0, r.stderr
    assert "Verdict" in r.stdout and "scenario 4" in r.stdout and "1.005" in r.stdout
    assert "embedded default" in r.stderr  # no GPU here: the choice of spec is said, not silent


def test_advise_json(run_cli):
    r = run_cli("advise", "Box-3D1R", "--fuse", "3", "--dtype", "double", "--json", "--alpha", "paper")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["gpu"] == "NVIDIA A100 80GB PCIe"
    tc = next(o for o in d["options"] if o["unit"] == "tensor_core")
    assert tc["scenario"] == 4 and round(tc["speedup"], 2) == 0.24
    assert d["verdict"]["unit"] == "cuda_core"


def test_explain_text_and_latex(run_cli):
    r = run_cli("explain", "Box-3D1R", "--fuse", "3", "--gpu", "a100", "--alpha", "paper")
    assert r.returncode == 0, r.stderr
    assert "I_TC" in r.stdout and "85.75" in r.stdout and "(eq. 19)" in r.stdout
    r = run_cli("explain", "Box-3D1R", "--fuse", "3", "--gpu", "a100", "--latex")
    assert r.returncode == 0 and r"\frac" in r.stdout


@pytest.mark.parametrize("cmd", [["gpus"], ["impls"], ["reproduce-paper"], ["gpus", "--json"], ["impls", "--json"],
                                 ["reproduce-paper", "--json"]])
def test_listing_commands(run_cli, cmd):
    r = run_cli(*cmd)
    assert r.returncode == 0, r.stderr
    if "--json" in cmd:
        json.loads(r.stdout)


def test_reproduce_paper_output(run_cli):
    r = run_cli("reproduce-paper")
    assert "1795.21" in r.stdout and "21.58" in r.stdout and "56.25" in r.stdout


BAD = [
    (["advise", "Box-4D1R"], "dimensionality"),
    (["advise", "Blob-2D1R"], "unknown stencil"),
    (["advise", "Box-2D0R"], "radius"),
    (["advise", "Box-2D1R", "--fuse", "0"], "fusion depth"),
    (["advise", "Box-2D1R", "--fuse", "5000"], "fusion depth"),
    (["advise", "Box-2D1R", "--fuse", "three"], "--fuse"),
    (["advise", "Box-2D1R", "--gpu", "h1000"], "unknown GPU"),
    (["advise", "Box-2D1R", "--gpu", "missing.yaml"], "does not exist"),
    (["advise", "Box-2D1R", "--alpha", "1.5"], "outside (0, 1]"),
    (["advise", "Box-2D1R", "--alpha", "lots"], "--alpha"),
    (["advise", "Box-2D1R", "--dtype", "quad"], "unknown dtype"),
    (["advise", "Box-2D1R", "--impl", "FooStencil"], "unknown implementation"),
    (["advise", "Box-2D1R", "--impl", "EBISU", "--impl", "DRStencil"], "already chosen"),
    (["advise"], "stencil"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize("args, needle", BAD)
def test_bad_input_one_line_exit_2(run_cli, args, needle):
    r = run_cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert r.stdout == ""


def test_malformed_spec_file(run_cli, tmp_path):
    f = tmp_path / "gpu.yaml"
    f.write_text("name: X\nbandwidth: {value: 100, source: me}\npeak:\n  cuda_core:\n    fp64: {value: 0, source: me}\n")
    r = run_cli("advise", "Box-2D1R", "--gpu", str(f))
    assert r.returncode == 2 and "peak.cuda_core.fp64.value" in r.stderr and "Traceback" not in r.stderr


def test_sparse_fp64_is_unavailable_not_an_error(run_cli):
    r = run_cli("advise", "Box-2D1R", "--fuse", "2", "--dtype", "double", "--gpu", "h100", "--json")
    assert r.returncode == 0
    sp = next(o for o in json.loads(r.stdout)["options"] if o["unit"] == "sparse_tensor_core")
    assert sp["available"] is False and sp["reason"]


def test_custom_stencil_file(run_cli, tmp_path):
    f = tmp_path / "upwind.txt"
    f.write_text("0 0\n-1 0\n0 -1\n-1 -1\n")
    r = run_cli("advise", str(f), "--fuse", "4", "--dtype", "float", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["points"] == 4 and d["fused_points"] == 25


def test_run_without_a_gpu_is_a_clean_error(run_cli):
    """On a machine without CuPy or a GPU, 'run' says what is missing in one line (exit 2)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    r = run_cli("run", "Box-2D1R", "--fuse", "3", "--unit", "tensor_core", "--grid", "64x64")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "CuPy" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_missing_dependency_is_one_line(monkeypatch, capsys):
    """A command that imports a required package the Python lacks (plotly for a map; a GPU machine's Python may not
    have it) says which and how to install it, in one line with exit status 2, not a traceback; a missing module of
    tcadvisor itself is a bug and is raised whole.  (The import is simulated: making plotly unimportable for real
    would mean importing tcadvisor's plotting modules again, which leaves other tests patching stale modules.)"""
    from tcadvisor import cli

    def missing(name):
        def command(args):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return command

    monkeypatch.setitem(cli.COMMANDS, "gpus", missing("plotly.graph_objects"))
    assert cli.main(["gpus"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "tcadvisor: error: this command needs the Python package 'plotly', which is not installed here "
        "(pip install plotly)"], err
    monkeypatch.setitem(cli.COMMANDS, "gpus", missing("yaml"))
    assert cli.main(["gpus"]) == 2 and "'pyyaml'" in capsys.readouterr().err
    monkeypatch.setitem(cli.COMMANDS, "gpus", missing("tcadvisor.nosuch"))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["gpus"])
