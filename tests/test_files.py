"""The bounded reader (tcadvisor.files) and every reader routed through it: special files, sizes,
encodings, YAML alias bombs and deep nesting, suites, results files, Unicode aliases, the locale."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcadvisor import files
from tcadvisor.errors import TcAdvisorError

ROOT = Path(__file__).resolve().parent.parent
BOMB = "\n".join([
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    *(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")),
]) + "\n"
SMALL = {"cases": [{"stencil": "Box-2D1R", "fuse": 1}]}


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text
    return text


def refuses(fn, *args, match: str = "", seconds: float = 10.0) -> str:
    t0 = time.monotonic()
    with pytest.raises(TcAdvisorError) as err:
        fn(*args)
    assert time.monotonic() - t0 < seconds
    text = one_line(err.value)
    assert match in text, text
    return text


# --------------------------------------------------------------------------- special files


def _watchdog(seconds: float = 10.0):
    """Fail loudly (instead of hanging the run) if a read blocks."""
    done = threading.Event()

    def bark():
        if not done.wait(seconds):  # pragma: no cover - only on a hang
            os._exit(99)
    threading.Thread(target=bark, daemon=True).start()
    return done


@pytest.mark.parametrize("reader", [files.read_text, files.load_yaml, files.load_json, files.load_npy])
def test_fifo_is_refused_without_opening_it(tmp_path, reader):
    fifo = tmp_path / "x.yaml"
    os.mkfifo(fifo)
    done = _watchdog()
    refuses(reader, fifo, match="is a FIFO")
    done.set()


@pytest.mark.parametrize("reader", [files.read_text, files.load_yaml, files.load_json])
def test_dev_zero_symlink_is_a_device(tmp_path, reader):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    link = tmp_path / "z.yaml"
    link.symlink_to("/dev/zero")
    refuses(reader, link, match="is a device")


def test_directory_named_like_a_file(tmp_path):
    (tmp_path / "x.yaml").mkdir()
    refuses(files.load_yaml, tmp_path / "x.yaml", match="is a directory")
    refuses(files.read_text, tmp_path / "missing.yaml", match="does not exist")


def test_size_is_read_not_trusted(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (files.MAX_BYTES + 1))
    refuses(files.load_json, big, match="too large")
    ok = tmp_path / "ok.json"
    ok.write_bytes(b" " * (files.MAX_BYTES - 10) + b"[1]")
    assert files.load_json(ok) == [1]


def test_utf8_always_bom_allowed(tmp_path):
    f = tmp_path / "a.yaml"
    f.write_bytes("\ufeffname: α\n".encode())
    assert files.load_yaml(f) == {"name": "α"}
    f.write_bytes(b"name: \xe9\n")
    refuses(files.load_yaml, f, match="not UTF-8 text (byte 0xe9 at offset 6)")


# --------------------------------------------------------------------------- YAML and JSON budgets


def test_billion_laughs_is_refused_quickly():
    assert len(BOMB.encode()) < 500
    text = refuses(files.parse_yaml, BOMB, match="aliases expand to more than", seconds=2)
    assert "100000 nodes" in text


@pytest.mark.parametrize("text", ["&a [*a]", "&a {x: *a}", "&a [1, [2, *a]]"])
def test_recursive_alias_is_refused(text):
    refuses(files.parse_yaml, text, match="refers to a node that contains it")


@pytest.mark.parametrize("text", [
    "[" * 5000 + "]" * 5000,
    "{a: " * 5000 + "1" + "}" * 5000,
    "".join(" " * i + "- \n" for i in range(5000)),
])
def test_deep_yaml_is_refused_without_recursion_error(text):
    refuses(files.parse_yaml, text, match="nested more than 64 levels deep")


def test_suite_fifo_is_named(tmp_path):
    from tcadvisor.validate.suites import load_suite

    os.mkfifo(tmp_path / "s.yaml")
    done = _watchdog()
    refuses(load_suite, str(tmp_path / "s.yaml"), match="is a FIFO")
    done.set()


def test_depth_budget_is_exact():
    assert files.parse_yaml("[" * 64 + "]" * 64) is not None
    refuses(files.parse_yaml, "[" * 65 + "]" * 65, match="nested more than 64 levels")


@pytest.mark.parametrize("depth", [65, 5000, 200_000])
def test_deep_json_is_refused(depth):
    refuses(files.parse_json, "[" * depth + "]" * depth, match="nested more than 64 levels")


def test_json_depth_skips_strings():
    assert files.json_depth('{"a": "[[[[{{{\\"[[["}') == 1
    assert files.parse_json('{"a": ["[[[[", {"b": 1}]}') == {"a": ["[[[[", {"b": 1}]}


def test_a_few_aliases_are_fine():
    assert files.parse_yaml("d: &d {x: 1}\na: *d\nb: *d\n") == {"d": {"x": 1}, "a": {"x": 1}, "b": {"x": 1}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_structures_round_trip(value):
    text = json.dumps(value)
    assert files.parse_json(text) == value
    dumped = yaml.safe_dump(value, allow_unicode=True)
    assert files.parse_yaml(dumped) == yaml.safe_load(dumped)  # what PyYAML's safe loader reads, within budgets


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_answers_or_refuses_in_one_line(text):
    for parse in (files.parse_yaml, files.parse_json):
        try:
            parse(text)
        except TcAdvisorError as exc:
            one_line(exc)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.integers(2, 12))
def test_alias_ladders_answer_by_their_expanded_size(width, levels):
    lines = ["l0: &l0 [x]"] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    sizes = [2]
    for _ in range(1, levels):
        sizes.append(1 + width * sizes[-1])
    expanded = sum(sizes)  # nodes of every value once its aliases are expanded
    t0 = time.monotonic()
    try:
        files.parse_yaml("\n".join(lines))
        assert expanded < 2 * files.MAX_ALIAS_NODES
    except TcAdvisorError as exc:
        assert "aliases expand" in one_line(exc) and expanded > files.MAX_ALIAS_NODES
    assert time.monotonic() - t0 < 10


# --------------------------------------------------------------------------- readers routed through it


def test_hwspec_path_with_one_directory_a_thousand_times(tmp_path, monkeypatch):
    from tcadvisor import hardware

    (tmp_path / "x.yaml").mkdir()  # a directory named like a spec: skipped with a warning, once
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", os.pathsep.join([str(tmp_path)] * 1000))
    dirs, _ = hardware._spec_dirs()
    assert len(dirs) == 2
    assert "h100" in " ".join(hardware.catalog())


def test_spec_file_fifo_and_bomb(tmp_path):
    from tcadvisor.hardware import find_spec

    os.mkfifo(tmp_path / "f.yaml")
    done = _watchdog()
    refuses(find_spec, str(tmp_path / "f.yaml"), match="is a FIFO")
    done.set()
    (tmp_path / "b.yaml").write_text(BOMB)
    refuses(find_spec, str(tmp_path / "b.yaml"), match="aliases expand")


def test_stencil_files(tmp_path):
    from tcadvisor.stencil import parse_stencil

    (tmp_path / "s.json").write_text("[" * 100 + "]" * 100)
    refuses(parse_stencil, str(tmp_path / "s.json"), match="nested more than 64")
    (tmp_path / "s.yaml").write_text(BOMB)
    refuses(parse_stencil, str(tmp_path / "s.yaml"), match="aliases expand")
    (tmp_path / "secret.txt").write_text("hunter2 the password\n")
    text = refuses(parse_stencil, str(tmp_path / "secret.txt"), match="line 1: not a list of integers")
    assert "hunter2" not in text


def test_weights_npy_without_pickle(tmp_path):
    import numpy as np

    from tcadvisor.gpu.commands import load_weights
    from tcadvisor.stencil import Stencil

    np.save(tmp_path / "w.npy", np.array([object()], dtype=object), allow_pickle=True)
    refuses(load_weights, str(tmp_path / "w.npy"), Stencil.box(1, 1), match="weights file")
    np.save(tmp_path / "ok.npy", np.ones(3))
    assert load_weights(str(tmp_path / "ok.npy"), Stencil.box(1, 1)).shape == (3,)
    (tmp_path / "w.txt").write_text("1 2 3\n")
    assert list(load_weights(str(tmp_path / "w.txt"), Stencil.box(1, 1))) == [1, 2, 3]


# --------------------------------------------------------------------------- suites


def test_huge_suite_is_refused_by_the_run_limit_quickly(tmp_path):
    from tcadvisor.validate.suites import load_suite

    path = tmp_path / "huge.yaml"
    path.write_text("name: huge\ncases:\n" + "  - {stencil: Box-2D1R, fuse: 1}\n" * 150_000)
    refuses(load_suite, str(path), match="at most 2000", seconds=5)


@pytest.mark.parametrize("field", ["description", "cases", "defaults"])
def test_suite_alias_bomb_in_any_field(tmp_path, field):
    from tcadvisor.validate.suites import load_suite

    raw = "name: s\n" + BOMB.replace("\n", "\n  ").replace("a: &a", "  a: &a", 1)
    doc = {"description": f"description: {{{', '.join(BOMB.strip().splitlines())}}}\ncases: [{{stencil: Box-2D1R, fuse: 1}}]\n",
           "cases": f"cases:\n  - {{stencil: Box-2D1R, fuse: 1, note: {{{', '.join(BOMB.strip().splitlines())}}}}}\n",
           "defaults": f"defaults: {{grid: {{{', '.join(BOMB.strip().splitlines())}}}}}\ncases: [{{stencil: Box-2D1R, fuse: 1}}]\n"}
    del raw
    path = tmp_path / "bomb.yaml"
    path.write_text("name: s\n" + doc[field])
    refuses(load_suite, str(path), match="aliases expand", seconds=5)


def test_suite_alias_bomb_with_list_cli(run_cli, tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: s\ndescription: {" + ", ".join(BOMB.strip().splitlines()) + "}\n"
                    "cases: [{stencil: Box-2D1R, fuse: 1}]\n")
    proc = run_cli("validate", "--suite", str(path), "--list")
    assert proc.returncode == 2 and "aliases expand" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_suite_paths_resolve_against_the_suite(tmp_path, monkeypatch):
    from tcadvisor.validate.suites import load_suite

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.txt").write_text("0 0\n1 0\n-1 0\n0 1\n0 -1\n")
    suite = tmp_path / "sub" / "s.yaml"
    suite.write_text("name: s\ncases:\n  - {stencil: mine.txt, fuse: 1, units: [cuda_core]}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = load_suite(str(suite))
    assert len(loaded.cases[0].stencil.offsets) == 5
    assert Path(loaded.configs()[0].stencil_text) == (tmp_path / "sub" / "mine.txt").resolve()


def test_suite_never_quotes_a_file_it_points_to(tmp_path):
    from tcadvisor.validate.suites import load_suite

    secret = tmp_path / "secret"
    secret.write_text("root TOPSECRET 0 0\n")
    suite = tmp_path / "s.yaml"
    suite.write_text(f"name: s\ncases:\n  - {{stencil: {secret}, fuse: 1}}\n")
    text = refuses(load_suite, str(suite), match="not a list of integers")
    assert "TOPSECRET" not in text


# --------------------------------------------------------------------------- validate --report-from


def _results(tmp_path) -> Path:
    from _validate_data import recorded_results
    from tcadvisor.validate.report import write_results

    write_results(recorded_results(), tmp_path / "a")
    return tmp_path / "a" / "results.json"


def _broken(path: Path, edit) -> Path:
    raw = json.loads(path.read_text())
    edit(raw)
    out = path.parent.parent / "broken.json"
    out.write_text(json.dumps(raw))
    return out


BROKEN = [
    (lambda r: r["measurements"][0].__setitem__("gstencils", "fast"), "measurements[0].gstencils"),
    (lambda r: r["measurements"][0].__setitem__("fuse", True), "measurements[0].fuse"),
    (lambda r: r["measurements"][0].__setitem__("seconds_all", "x"), "measurements[0].seconds_all"),
    (lambda r: r.__setitem__("measurements", {"a": 1}), "'measurements'"),
    (lambda r: r["measurements"].__setitem__(0, 5), "measurements[0]"),
    (lambda r: r.__setitem__("spec", []), "'spec'"),
    (lambda r: r["spec"].__setitem__("bandwidth_gbs", "x"), "spec.bandwidth_gbs"),
    (lambda r: r["spec"].__setitem__("peak_tflops", {"tensor_core": 5}), "spec.peak_tflops"),
    (lambda r: r.__setitem__("summary", 3), "'summary'"),
    (lambda r: r["summary"].__setitem__("throughput", "x"), "summary.throughput"),
    (lambda r: r["summary"].__setitem__("throughput", {"n": "many"}), "summary.throughput.n"),
    (lambda r: r.__setitem__("band", 5), "'band'"),
    (lambda r: r.__setitem__("band", "0.1"), "'band'"),
    (lambda r: r.__setitem__("suites", "paper"), "'suites'"),
    (lambda r: r.__setitem__("profile", {"problems": "x"}), "profile.problems"),
    (lambda r: r["comparisons"][0].__setitem__("agree", "yes") if r["comparisons"] else
     r.__setitem__("comparisons", [{"agree": "yes"}]), "comparisons[0].agree"),
]


@pytest.mark.parametrize("edit, field", BROKEN)
def test_malformed_results_name_the_field(run_cli, tmp_path, edit, field):
    bad = _broken(_results(tmp_path), edit)
    out = tmp_path / "out"
    proc = run_cli("validate", "--report-from", str(bad), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert field in proc.stderr, proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, needle", [
    (("--tie-band", "5"), "--tie-band 5"),
    (("--tie-band", "nan"), "--tie-band nan"),
    (("--gpu", "no-such-gpu"), "unknown GPU 'no-such-gpu'"),
    (("--gpu", "h100"), "--gpu applies when running"),
    (("--list",), "--list applies when running"),
])
def test_report_from_never_ignores_options(run_cli, tmp_path, args, needle):
    path = _results(tmp_path)
    proc = run_cli("validate", "--report-from", str(path), "-o", str(tmp_path / "out"), *args)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_report_from_applies_a_tie_band(tmp_path, capsys):
    from argparse import Namespace

    from tcadvisor.validate.records import load_results
    from tcadvisor.validate.report import report_from

    path = _results(tmp_path)
    args = Namespace(report_from=str(path), output=str(tmp_path / "out"), suite=[], tie_band=0.3, gpu=None,
                     list=False, profile=False, ncu=None, time_limit=None)
    assert report_from(args) == 0
    again = load_results(tmp_path / "out" / "results.json")
    assert again.band == 0.3 and all(c.band == 0.3 for c in again.comparisons)


def test_results_file_hostile(tmp_path):
    from tcadvisor.validate.records import load_results

    os.mkfifo(tmp_path / "r.json")
    done = _watchdog()
    refuses(load_results, tmp_path / "r.json", match="is a FIFO")
    done.set()
    (tmp_path / "d.json").write_text('{"schema": 1, "x": ' + "[" * 10000 + "]" * 10000 + "}")
    refuses(load_results, tmp_path / "d.json", match="nested more than")


# --------------------------------------------------------------------------- small items


def _spec_with_aliases(aliases: str) -> str:
    text = (ROOT / "hwspecs" / "v100-sxm2.yaml").read_text(encoding="utf-8")
    return text.replace("aliases: [v100, v100-sxm2, v100-sxm2-32gb]", f"aliases: {aliases}")


def test_unicode_aliases(tmp_path, monkeypatch):
    from tcadvisor import hardware

    (tmp_path / "v100-sxm2.yaml").write_text(_spec_with_aliases("[\"ｖ１００ｘ\", \"Ѵ100\", \"ѵ100q\"]"),
                                            encoding="utf-8")
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    assert hardware.find_spec("v100x").key == "v100-sxm2"  # full width is its ASCII form
    assert hardware.find_spec("ｖ１００ｘ").key == "v100-sxm2"
    with pytest.raises(TcAdvisorError) as err:
        hardware.find_spec("ѵ100")  # a lookalike alias can never match: never suggested back
    text = one_line(err.value)
    assert "Ѵ100" not in text and "ѵ100q" not in text


def test_schema1_shape_listed_three_times(tmp_path):
    from tcadvisor.hardware import load_spec_file

    text = (ROOT / "hwspecs" / "v100-sxm2.yaml").read_text(encoding="utf-8")
    assert "fp16: [m8n8k4]" in text
    path = tmp_path / "v.yaml"
    path.write_text(text.replace("fp16: [m8n8k4]", "fp16: [m8n8k4, m8n8k4, m8n8k4]"), encoding="utf-8")
    refuses(load_spec_file, path, match="mma_shapes.tensor_core.fp16': m8n8k4 is listed twice")


# --------------------------------------------------------------------------- the locale


@pytest.mark.parametrize("env", [
    {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"},
    {"PYTHONIOENCODING": "ascii"},
    {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii", "PYTHONCOERCECLOCALE": "0"},
])
def test_cli_under_an_ascii_locale(tmp_path, env):
    spec = tmp_path / "mine.yaml"
    spec.write_text((ROOT / "hwspecs" / "v100-sxm2.yaml").read_text(encoding="utf-8")
                    .replace("name:", "notes: \"α β — ×\"\nname:", 1), encoding="utf-8")
    stencil = tmp_path / "s.yaml"
    stencil.write_text("name: \"στένσιλ\"\noffsets: [[0, 0], [1, 0], [-1, 0]]\n", encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIOENCODING", "PYTHONUTF8"))}
    full.pop("TCADVISOR_HWSPEC_PATH", None)
    full.update(env)
    for args in (["advise", "Box-2D1R", "--gpu", "h100"], ["advise", str(stencil), "--gpu", str(spec)],
                 ["explain", "Box-2D1R", "--gpu", "h100"], ["advise", "Box-2D1R", "--gpu", "nosuch-γ"]):
        proc = subprocess.run([sys.executable, "-m", "tcadvisor", *args], capture_output=True, env=full,
                              timeout=120)
        assert b"Traceback" not in proc.stderr, proc.stderr.decode("utf-8", "replace")
        assert proc.returncode in (0, 2), proc.stderr.decode("utf-8", "replace")
        if args[-1].startswith("nosuch"):
            assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
        else:
            assert proc.returncode == 0 and proc.stdout


# --------------------------------------------------------------------------- counting cases, memory


case_values = st.one_of(st.text(max_size=5), st.integers(), st.lists(st.integers(), max_size=3),
                        st.dictionaries(st.sampled_from(["stencil", "fuse", "cases"]), st.integers(), max_size=3))


@settings(max_examples=150, deadline=None)
@given(st.lists(case_values, max_size=30), st.dictionaries(st.sampled_from(["name", "defaults", "x"]),
                                                           case_values, max_size=3),
       st.booleans(), st.booleans())
def test_count_cases_agrees_with_the_parse(cases, others, flow, cases_first):
    from tcadvisor.validate.suites import count_cases

    doc = {"cases": cases, **others} if cases_first else {**others, "cases": cases}
    text = yaml.safe_dump(doc, default_flow_style=flow)
    assert count_cases(text, 10_000) == len(cases)
    assert count_cases(text, 3) == min(len(cases), 3)


HOSTILE = {
    "bomb.yaml": BOMB,
    "deep.json": "[" * 200_000 + "]" * 200_000,
    "deep.yaml": "[" * 5000 + "]" * 5000,
    "huge.yaml": "name: huge\ncases:\n" + "  - {stencil: Box-2D1R, fuse: 1}\n" * 150_000,
}


@pytest.mark.parametrize("args", [
    ("advise", "Box-2D1R", "--gpu", "{d}/bomb.yaml"),
    ("advise", "{d}/deep.json"),
    ("advise", "Box-2D1R", "--gpu", "{d}/deep.yaml"),
    ("validate", "--suite", "{d}/huge.yaml", "--list"),
    ("validate", "--report-from", "{d}/deep.json"),
    ("advise", "Box-2D1R", "--gpu", "{d}/fifo.yaml"),
])
def test_hostile_files_in_10_s_and_1_5_gb(tmp_path, args):
    resource = pytest.importorskip("resource")
    for name, text in HOSTILE.items():
        (tmp_path / name).write_text(text)
    os.mkfifo(tmp_path / "fifo.yaml")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))  # 1.5 GiB of address space

    env = {k: v for k, v in os.environ.items() if k != "TCADVISOR_HWSPEC_PATH"}
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tcadvisor", *(a.format(d=tmp_path) for a in args)],
                          capture_output=True, text=True, env=env, timeout=30, preexec_fn=limit)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_lookalike_alias_of_a_broken_spec_claims_nothing(tmp_path, monkeypatch):
    from tcadvisor import hardware

    (tmp_path / "broken.yaml").write_text('name: Broken\naliases: ["Ѵ100", "okname"]\nbandwidth: x\n',
                                          encoding="utf-8")
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    refuses(hardware.find_spec, "100", match="unknown GPU '100'")
    refuses(hardware.find_spec, "okname", match="broken.yaml")  # its typable alias still names it
