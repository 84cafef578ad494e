"""Robustness III (items 3-6): the Python API checks its arguments before any allocation proportional to
them and refuses with the CLI's one-line TcAdvisorError; outputs are checked before the work and no
temporary file survives a failure or SIGTERM; weights at the limits of floating point; ``alpha``'s
instruction shapes and ``--table`` bounds.

Every example answers or refuses within seconds (the property tests time each call).
"""
import errno
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcadvisor
from tcadvisor.cli import main
from tcadvisor.errors import TcAdvisorError

ROOT = Path(__file__).resolve().parents[1]
FAST = 10.0  # seconds an answer or refusal may take (the brief's bound; the calls here take milliseconds)
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def refuses(call, *needles):
    """``call()`` raises TcAdvisorError, fast, in one line containing every needle."""
    start = time.monotonic()
    with pytest.raises(TcAdvisorError) as info:
        call()
    assert time.monotonic() - start < FAST
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    return message


# --------------------------------------------------------------------------- sizes without materialising


@pytest.mark.parametrize("fn", ["sweep", "map_data"])
@pytest.mark.parametrize("radii, needle", [
    (range(1, 10 ** 9), "radius 999999999 is out of range"),
    (range(1, 10 ** 18, 7), "out of range"),
    (itertools.count(1), "unbounded"),
    (iter(lambda: 1, None), "unbounded"),  # an endless iterator of valid values
    ([1] * 10 ** 6, "too many"),
    (range(5, 1), "names no values"),
    ([], "names no values"),
    ("1-1000000000", "too long"),
])
def test_radii_sizes_are_checked_before_allocation(fn, radii, needle):
    from tcadvisor.plots.maps import map_data

    func = tcadvisor.sweep if fn == "sweep" else map_data
    refuses(lambda: func("box", 2, "double", "a100", radii=radii, fuses=[1]), needle)


@pytest.mark.parametrize("fuses", [itertools.count(1), range(1, 10 ** 12), [1] * 10 ** 6, "1-99999999"])
def test_depths_sizes_are_checked_before_allocation(fuses):
    refuses(lambda: tcadvisor.sweep("box", 2, "double", "a100", radii=[1], fuses=fuses))


@pytest.mark.parametrize("radii", [3, "1-2", "1,2", range(1, 3), [2, 1, 2], np.array([1, 2]), (r for r in (1, 2))])
def test_sweep_takes_what_map_data_takes(radii):
    from tcadvisor.plots.maps import map_data

    df = tcadvisor.sweep("box", 2, "double", "a100", radii=radii, fuses="1-2")
    md = map_data("box", 2, "double", "a100", radii=radii if not hasattr(radii, "__next__") else [1, 2],
                  fuses="1-2")
    assert sorted(set(df["radius"])) == sorted(set(md["radius"]))
    assert set(df["fuse"]) == {1, 2}


def test_strings_are_never_out_of_range():
    msg = refuses(lambda: tcadvisor.sweep("box", 2, "double", "a100", radii=["1"], fuses=[1]), "not an integer")
    assert "out of range" not in msg
    msg = refuses(lambda: tcadvisor.advise("Box-2D1R", fuse="2"), "not an integer")
    assert "out of range" not in msg
    # a string range is read as the CLI reads --radii
    assert set(tcadvisor.sweep("box", 2, "double", "a100", radii="1", fuses=[1])["radius"]) == {1}


# --------------------------------------------------------------------------- wrong types


def test_wrong_types_refused_in_one_line():
    from tcadvisor.transforms import alpha_for

    refuses(lambda: tcadvisor.advice_dict(None), "neither an Advice nor a stencil")
    refuses(lambda: tcadvisor.format_advice(42), "neither an Advice nor a stencil")
    refuses(lambda: tcadvisor.explain(3.5), "neither an Advice nor a stencil")
    refuses(lambda: tcadvisor.Stencil.from_offsets(None), "not a list")
    refuses(lambda: tcadvisor.Stencil.from_offsets(5), "not a list")
    refuses(lambda: tcadvisor.Stencil.from_offsets(itertools.repeat((0, 1))), "unbounded")
    refuses(lambda: tcadvisor.Stencil.from_offsets([itertools.count()]), "more than 3 components")
    refuses(lambda: tcadvisor.parse_stencil(None), "not a name")
    refuses(lambda: tcadvisor.parse_dtype(["double"]), "not a name")
    refuses(lambda: tcadvisor.find_spec(["a100"]), "not a name")
    refuses(lambda: tcadvisor.advise("Box-2D1R", model=["base"]), "--model")
    refuses(lambda: alpha_for("spider", "Box-2D1R", 1, "m16n8k32", "fp16", L=[16]), "not an integer")
    refuses(lambda: alpha_for("spider", "Box-2D1R", 1, "m16n8k32", "fp16", bogus=1), "no option 'bogus'")
    refuses(lambda: alpha_for("spider", "Box-2D1R", 1, "m16n8k32", ["fp16"]), "precision")
    refuses(lambda: alpha_for(None, "Box-2D1R", 1, "m16n8k32", "fp16"), "not a name")
    refuses(lambda: alpha_for("spider", None, 1, "m16n8k32", "fp16"), "neither a Stencil nor a stencil name")


def test_names_are_accepted_where_siblings_accept_them():
    from tcadvisor.transforms import alpha_for

    adv = tcadvisor.advise("Box-2D1R", "double", "a100")
    assert tcadvisor.explain("Box-2D1R").splitlines()[0]
    assert tcadvisor.advice_dict("Box-2D1R")["stencil"] == tcadvisor.advice_dict(adv)["stencil"]
    named = alpha_for("spider", "Box-2D1R", 1, "m16n8k32", "fp16")
    assert named.alpha == alpha_for("spider", tcadvisor.parse_stencil("Box-2D1R"), 1, "m16n8k32", "fp16").alpha


WRONG = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True), st.binary(max_size=8), st.text(max_size=12),
    st.lists(st.integers(), max_size=4), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.integers(min_value=-10 ** 30, max_value=10 ** 30), st.just(object()), st.just(itertools.count()),
    st.just(range(-5, 10 ** 15)), st.just(float("inf")),
)


def _quick(call):
    """Return normally or raise TcAdvisorError, within the bound; anything else fails the property."""
    start = time.monotonic()
    try:
        call()
    except TcAdvisorError as exc:
        assert "\n" not in str(exc)
    assert time.monotonic() - start < FAST


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WRONG, st.sampled_from(["shape", "dims", "dtype", "gpu", "radii", "fuses", "impls", "alpha", "model"]))
def test_sweep_any_wrong_argument_is_a_tcadvisor_error(value, which):
    kwargs = dict(shape="box", dims=2, dtype="double", gpu="a100", radii=[1], fuses=[1])
    kwargs[which] = value
    _quick(lambda: tcadvisor.sweep(**kwargs))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WRONG, st.sampled_from(["stencil", "dtype", "gpu", "fuse", "impls", "alpha_choice", "max_fuse", "model",
                               "grid", "steps"]))
def test_advise_any_wrong_argument_is_a_tcadvisor_error(value, which):
    kwargs = dict(stencil="Box-2D1R", dtype="double", gpu="a100", fuse=1)
    kwargs[which] = value
    _quick(lambda: tcadvisor.advise(**kwargs))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WRONG)
def test_other_public_functions_refuse_wrong_types(value):
    from tcadvisor.transforms import alpha_for

    for call in (lambda: tcadvisor.advice_dict(value), lambda: tcadvisor.format_advice(value),
                 lambda: tcadvisor.Stencil.from_offsets(value), lambda: tcadvisor.parse_stencil(value),
                 lambda: tcadvisor.parse_dtype(value), lambda: tcadvisor.find_spec(value),
                 lambda: tcadvisor.find_impl(value), lambda: alpha_for("convstencil", value, 1, "m8n8k4", "fp64"),
                 lambda: alpha_for("convstencil", "Box-2D1R", value, "m8n8k4", "fp64"),
                 lambda: tcadvisor.Stencil.from_offsets([(0, 0), (1, 0)], weights=[1.0, value])):
        _quick(call)


# --------------------------------------------------------------------------- weights at the limits


NINE = [(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)]


@pytest.mark.parametrize("scale", [1.0, 5e307, 1e-200, 1e-300, 1e-320])
@pytest.mark.parametrize("mixed", [False, True])
def test_lorastencil_does_not_depend_on_the_weights_scale(scale, mixed):
    from tcadvisor.transforms import alpha_for

    base = np.random.default_rng(1).uniform(0.5, 2.0, 9) * (np.array([1, -1] * 4 + [1]) if mixed else 1)
    ref = [alpha_for("lorastencil", tcadvisor.Stencil.from_offsets(NINE, weights=list(base)), t, "m8n8k4", "fp64")
           for t in (1, 2, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning (overflow, underflow, invalid)
        stencil = tcadvisor.Stencil.from_offsets(NINE, weights=list(base * scale))
        got = [alpha_for("lorastencil", stencil, t, "m8n8k4", "fp64") for t in (1, 2, 3)]
        adv = tcadvisor.advise(stencil, "double", "a100", impls=["LoRAStencil"], fuse=2, model="base")
    assert [g.alpha for g in got] == [r.alpha for r in ref]
    tc = next(o for o in adv.options if o.unit == "tensor_core")
    assert tc.available, tc.reason


def test_huge_integer_weight_is_one_line():
    refuses(lambda: tcadvisor.Stencil.from_offsets([(0,), (1,)], weights=[10 ** 400, 1]), "401 digits")


def test_run_weights_checked_on_the_cpu(tmp_path, monkeypatch, capsys):
    from tcadvisor.gpu import backend

    def no_gpu(*a, **k):
        raise AssertionError("the GPU was reached before the weights were checked")

    monkeypatch.setattr(backend, "cupy", no_gpu)
    cases = {"empty.txt": ("", [], "is empty"),
             "blank.txt": ("\n\n  \n", [], "is empty"),
             "huge.txt": ("1e308 1e308 1e308\n", ["--fuse", "2"], "overflows double"),
             "half.txt": ("300 300 300\n", ["--dtype", "half", "--fuse", "2"], "overflows half"),
             "tiny.txt": ("1e-200 1e-200 1e-200\n", ["--fuse", "2"], "vanish in double"),
             "huge1.txt": ("1e39 1 1\n", ["--dtype", "float"], "overflows float")}
    for name, (text, extra, needle) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert main(["run", "Heat-1D", "--weights", str(path), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], (name, err)


# --------------------------------------------------------------------------- alpha


@pytest.mark.parametrize("argv, needle", [
    (["alpha", "Box-2D1R", "--mma", "m16n8k3"], "accepted: m8n8k4"),
    (["alpha", "Box-2D1R", "--impl", "SPIDER", "--mma", "m16n8k1"], "mma.sp"),
    (["alpha", "Box-2D1R", "--impl", "SparStencil", "--dtype", "half", "--mma", "m8n8k4"], "m16n8k32"),
    (["alpha", "--table", "Box-2D1R"], "--table takes no stencil"),
    (["alpha", "--table", "--impl", "SPIDER"], "--impl"),
    (["alpha", "--table", "--dtype", "half"], "--dtype"),
    (["alpha", "--table", "--fuse", "1-1024"], "at most 128"),
    (["alpha", "--table", "--fuse", "1-100000000000"], "at most 128"),
])
def test_alpha_refusals(argv, needle, capsys):
    start = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - start < FAST
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_alpha_accepts_real_instructions(capsys):
    assert main(["alpha", "Box-2D1R", "--impl", "SPIDER", "--mma", "m16n8k16"]) == 0
    assert "m16n8k16" in capsys.readouterr().out
    assert main(["alpha", "Box-2D1R", "--mma", "m8n8k4"]) == 0  # dense FP64: the sparse rows say why not
    assert "no construction (--mma m8n8k4 is not a mma.sp" in capsys.readouterr().out


# --------------------------------------------------------------------------- outputs


def test_map_outputs_checked_before_the_work(tmp_path, monkeypatch, capsys):
    from tcadvisor.plots import maps

    def no_work(*a, **k):
        raise AssertionError("the map was computed before its outputs were checked")

    monkeypatch.setattr(maps, "map_data", no_work)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    for argv, needle in [(["-o", "m.html", "--csv", "m.html"], "both name"),
                         (["-o", "m.html", "--csv", "./m.html"], "both name"),
                         (["-o", "m.html", "--csv", "afile/x.csv"], "is a file, not a directory"),
                         (["-o", "afile/m.html"], "is a file, not a directory"),
                         (["-o", str(tmp_path)], "cannot tell the format"),
                         (["-o", "m.html", "--csv", str(tmp_path)], "is a directory")]:
        assert main(["map", "--gpu", "a100", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], (argv, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_static_formats_need_an_exporter_before_anything_is_written(tmp_path, monkeypatch, capsys):
    from tcadvisor.plots import output

    monkeypatch.setattr(output, "static_exporter", lambda fmt: "html" if fmt == "html" else None)
    out = tmp_path / "figs"
    assert main(["figures", "--format", "html,png", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no static image exporter for PNG" in err[0]
    assert not out.exists()
    assert main(["map", "--gpu", "a100", "-o", str(tmp_path / "m.svg")]) == 2
    assert "SVG" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_validate_output_checked_before_the_first_run(tmp_path, monkeypatch, capsys):
    from tcadvisor.gpu import backend

    def no_gpu(*a, **k):
        raise AssertionError("a GPU run was attempted before -o was checked")

    monkeypatch.setattr(backend, "cupy", no_gpu)
    (tmp_path / "afile").write_text("x")
    assert main(["validate", "--suite", "quick", "-o", str(tmp_path / "afile" / "results")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "-o" in err[0] and "is a file" in err[0]


def test_records_write_atomic_leaves_no_temporary_file_on_a_full_disk(tmp_path, monkeypatch):
    from tcadvisor.validate.records import write_atomic

    target = tmp_path / "results.json"
    target.write_text("old")

    def full(fd):
        raise ENOSPC

    monkeypatch.setattr(os, "fsync", full)
    refuses(lambda: write_atomic(target, "new" * 1000), "No space left")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_records_write_atomic_cleans_up_on_any_exception(tmp_path, monkeypatch):
    from tcadvisor.validate.records import write_atomic

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "r.csv", "a,b\n")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- SIGTERM


SLOW_WRITE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from tcadvisor.plots import output
    flag = Path(sys.argv[1])
    real = os.write
    def slow(fd, data):
        flag.write_text("writing")
        time.sleep(0.05)
        return real(fd, data[:4096])
    output._write_chunk = slow
    from tcadvisor.cli import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.mark.parametrize("argv", [
    ["map", "--gpu", "a100", "--radii", "1-2", "--fuse", "1-2", "-o", "{dir}/m.html"],
    ["figures", "--only", "fig7", "-o", "{dir}/figs"],
])
def test_sigterm_during_a_write_exits_143_with_no_temporary_file(tmp_path, argv):
    pytest.importorskip("plotly")
    from tcadvisor.plots.paper_figures import FIGURES

    if argv[0] == "figures" and "fig7" not in FIGURES:
        argv = [a if a != "fig7" else next(iter(FIGURES)) for a in argv]
    work = tmp_path / "out"
    work.mkdir()
    flag = tmp_path / "flag"
    args = [a.format(dir=work) for a in argv]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITE, str(flag), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert flag.exists(), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    lines = [line for line in err.splitlines() if "created the director" not in line]
    assert len(lines) == 1 and "SIGTERM" in lines[0], err
    assert not [p for p in work.rglob("*") if p.name.endswith(".tmp")]


def test_write_figures_api_checks_formats_and_exporters_first(tmp_path, monkeypatch):
    from tcadvisor.plots import output, paper_figures

    monkeypatch.setattr(output, "static_exporter", lambda fmt: "html" if fmt == "html" else None)
    out = tmp_path / "figs"
    refuses(lambda: paper_figures.write_figures(out, "a100", formats=("html", "svg")), "SVG")
    refuses(lambda: paper_figures.write_figures(out, "a100", formats=itertools.count()), "expected some of")
    refuses(lambda: paper_figures.write_figures(out, "a100", formats=[["html"]]), "expected some of")
    assert not out.exists()


def test_alpha_choice_of_a_wrong_type_is_one_short_line():
    msg = refuses(lambda: tcadvisor.advise("Box-2D1R", alpha_choice=list(range(10 ** 5))), "not understood")
    assert len(msg) < 300
