"""The command line reads stencils from .npy weight arrays (and C files): the same answer as the offsets file of
the same stencil, the dtype defaulted from the file and said, the reading echoed by --json, refusals in one line."""
import json

import numpy as np
import pytest

from tcadvisor.cli import main

LAP = np.array([[0.0, 1.0, 0.0], [2.0, -6.0, 3.0], [0.0, 0.5, 0.0]])
LAP_OFFSETS = "-1 0 : 1\n0 -1 : 2\n0 0 : -6\n0 1 : 3\n1 0 : 0.5\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    np.save(tmp_path / "a" / "lap.npy", LAP.astype(np.float32))
    (tmp_path / "c").mkdir()
    np.save(tmp_path / "c" / "lap.npy", LAP)
    (tmp_path / "b" / "lap.txt").write_text(LAP_OFFSETS)
    return tmp_path


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def answer(capsys, *args):
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    return json.loads(out)


def without_source(data, path):
    """The answer without what names the file: the command, the echo of the source and its notes."""
    kept = {k: v for k, v in data.items() if k not in ("source", "command", "notes")}
    return json.loads(json.dumps(kept).replace(str(path), "STENCIL"))


def test_advise_npy_answers_as_the_offsets_file(files, capsys):
    npy = answer(capsys, "advise", files / "a" / "lap.npy", "--gpu", "a100", "--json")
    txt = answer(capsys, "advise", files / "b" / "lap.txt", "--gpu", "a100", "--dtype", "float", "--json")
    assert npy["dtype"] == "float" and npy["stencil"] == txt["stencil"] == "lap"
    assert without_source(npy, files / "a" / "lap.npy") == without_source(txt, files / "b" / "lap.txt")
    assert npy["notes"] == ["4 zero entries of the array are not read (dropped from the stencil)"] + txt["notes"]
    assert "lap.npy --dtype float --gpu a100" in npy["command"]  # a repeated command keeps the dtype the file gave
    assert npy["source"] == {
        "read_from": f"{files / 'a' / 'lap.npy'} (NumPy float32 array 3x3, centre at its middle)",
        "dtype": "float", "dtype_used": True,
        "offsets": [[-1, 0], [0, -1], [0, 0], [0, 1], [1, 0]], "weights": [1.0, 2.0, -6.0, 3.0, 0.5],
        "notes": ["4 zero entries of the array are not read (dropped from the stencil)"]}
    both = [answer(capsys, "advise", f, "--gpu", "h100", "--fuse", "3", "--dtype", "double", "--json")
            for f in (files / "c" / "lap.npy", files / "b" / "lap.txt")]
    assert both[0]["source"]["dtype_used"] is False
    assert without_source(both[0], files / "c" / "lap.npy") == without_source(both[1], files / "b" / "lap.txt")


def test_the_text_answer_says_where_the_stencil_and_its_dtype_came_from(files, capsys):
    path = files / "a" / "lap.npy"
    code, out, err = cli(capsys, "advise", path, "--gpu", "a100", "--fuse", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == f"Stencil read from {path} (NumPy float32 array 3x3, centre at its middle)."
    assert lines[2].startswith(f"Assumed: dtype float, from {path} (--dtype to change);")
    assert "Note: 4 zero entries of the array are not read (dropped from the stencil)." in lines
    code, out, _ = cli(capsys, "advise", path, "--gpu", "a100", "--fuse", "2", "--dtype", "half")
    assert ", half, on " in out.splitlines()[0] and "dtype half, from" not in out
    code, out, _ = cli(capsys, "explain", path, "--gpu", "a100")
    assert code == 0 and f"dtype float, from {path} (--dtype to change)." in out.splitlines()


def test_origin_and_flip_options(files, capsys):
    np.save(files / "even.npy", np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    code, out, err = cli(capsys, "advise", files / "even.npy")
    assert code == 2 and out == "" and err.count("\n") == 1 and "even extent 2 along axis 0" in err
    data = answer(capsys, "advise", files / "even.npy", "--origin=-1,0", "--gpu", "a100", "--json")
    assert data["source"]["offsets"] == [[0, -1], [0, 0], [0, 1], [1, -1], [1, 0], [1, 1]]
    flipped = answer(capsys, "advise", files / "even.npy", "--origin=-1,0", "--flip", "--gpu", "a100", "--json")
    assert flipped["source"]["offsets"] == [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 0], [0, 1]]
    assert flipped["source"]["weights"] == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    assert "--origin=-1,0 --flip" in flipped["command"]


@pytest.mark.parametrize("args,match", [
    (["advise", "Box-2D1R", "--origin", "1"], r"origin= \(--origin\) does not apply to the stencil 'Box-2D1R'"),
    (["advise", "{a}/lap.npy", "--field", "u"], r"field= \(--field\) does not apply to a \.npy file"),
    (["advise", "{a}/lap.npy", "--set", "dt"], "--set 'dt' is not NAME=VALUE"),
    (["advise", "{a}/lap.npy", "--set", "dt=1", "--set", "dt=2"], "--set dt is given twice"),
    (["advise", "{a}/lap.npy", "--origin", "x"], "--origin 'x' is not a list of integers"),
    (["advise", "{a}/obj.npy"], "Object arrays cannot be loaded when allow_pickle=False"),
    (["advise", "{a}/int.npy"], "element type int64 \\(integer\\)"),
    (["advise", "{a}/missing.npy"], "does not exist"),
    (["explain", "{a}/step.py"], "Python file, which tcadvisor never imports"),
    (["alpha", "{a}/obj.npy"], "Object arrays"),
    (["roofline", "{a}/int.npy"], "integer"),
    (["alpha", "--table", "--origin", "0"], "got --origin"),
])
def test_bad_input_is_one_line_and_exit_2(files, capsys, args, match):
    import re

    a = files / "a"
    np.save(a / "obj.npy", np.array([1.0, None], dtype=object), allow_pickle=True)
    np.save(a / "int.npy", np.ones((3, 3), dtype=np.int64))
    (a / "step.py").write_text(f"open({str(files / 'imported')!r}, 'w').write('x')\n")
    code, out, err = cli(capsys, *[x.format(a=a) for x in args])
    assert code == 2 and out == "" and err.count("\n") == 1 and re.search(match, err), err
    assert not (files / "imported").exists()


def test_alpha_and_validate_suites_read_npy(files, capsys):
    code, out, _ = cli(capsys, "alpha", files / "a" / "lap.npy", "--impl", "ConvStencil")
    assert code == 0 and out.startswith("ConvStencil on lap:")
    from tcadvisor.validate.suites import load_suite

    suite = files / "c" / "suite.yaml"
    suite.write_text("name: mine\ncases:\n  - {stencil: lap.npy, fuse: 1}\n")
    case, = load_suite(str(suite)).cases
    assert case.stencil.name == "lap" and case.stencil.weights == (1.0, 2.0, -6.0, 3.0, 0.5)


def test_c_file_on_the_command_line(tmp_path, capsys):
    pytest.importorskip("tcadvisor.sources.cloop")
    path = tmp_path / "kernel.c"
    path.write_text("void step(int n, float u[n][n], float v[n][n], float c) {\n"
                    "  for (int i = 1; i < n - 1; i++)\n    for (int j = 1; j < n - 1; j++)\n"
                    "      v[i][j] = u[i][j] + c * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1] - 4 * u[i][j]);\n}\n")
    data = answer(capsys, "advise", path, "--set", "c=0.1", "--gpu", "a100", "--json")
    assert data["dtype"] == "float" and data["source"]["dtype_used"] is True
    assert sorted(map(tuple, data["source"]["offsets"])) == [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)]
    code, out, err = cli(capsys, "advise", path, "--origin", "0")
    assert code == 2 and out == "" and "does not apply to a C file" in err


def test_a_npy_header_declaring_more_than_the_file_holds_is_refused_before_allocating(tmp_path, capsys):
    """A 100-byte .npy may declare a 10^12-element array: refused from its header, not a MemoryError."""
    path = tmp_path / "liar.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
        f.write(b"\0" * 64)
    code, out, err = cli(capsys, "advise", path)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "header declares shape (1000000, 1000000), 8000000000000 bytes, but the file holds 64" in err
    path.write_bytes(b"not numpy")
    code, out, err = cli(capsys, "explain", path)
    assert code == 2 and out == "" and "does not begin with NumPy's magic string" in err and "pickled" not in err


def test_validate_suites_take_the_dtype_of_a_npy_or_c_stencil_and_name_a_missing_file(files, capsys):
    pytest.importorskip("pycparser")
    from tcadvisor.validate.suites import load_suite

    suite = files / "a" / "suite.yaml"
    (files / "a" / "k.c").write_text("float u[64], v[64];\nfor (int i = 1; i < 63; i++) v[i] = u[i-1] + u[i+1];\n")
    suite.write_text("name: mine\ncases:\n  - {stencil: lap.npy, fuse: 1}\n  - {stencil: k.c, fuse: 2}\n"
                     "  - {stencil: lap.npy, fuse: 1, dtype: half}\n")
    first, second, third = load_suite(str(suite)).cases
    assert (first.dtype, second.dtype, third.dtype) == ("float", "float", "half")  # lap.npy is float32
    assert first.id == "lap-float-t1" and second.stencil.offsets == ((-1,), (1,))
    (files / "a" / "defaults.yaml").write_text("name: d\ndefaults: {dtype: double}\ncases:\n"
                                              "  - {stencil: lap.npy, fuse: 1}\n")
    assert load_suite(str(files / "a" / "defaults.yaml")).cases[0].dtype == "double"  # the suite's default wins
    (files / "a" / "bad.yaml").write_text("name: bad\ncases:\n  - {stencil: missing.npy, fuse: 1}\n")
    code, out, err = cli(capsys, "validate", "--suite", files / "a" / "bad.yaml", "--list")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"weights file '{files / 'a' / 'missing.npy'}' does not exist" in err  # found beside the suite
