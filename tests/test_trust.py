"""Answers a user can act on: α of the fused stencil by default, a best depth that does not depend on
the question, checked arguments in the CLI and the Python API, one-line failures, valid LaTeX."""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcadvisor
from tcadvisor.advisor import TIE_TOLERANCE, advise
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import find_spec
from tcadvisor.report import advice_dict, format_advice
from tcadvisor.stencil import Stencil, parse_stencil

A100 = find_spec("a100")


def unit(adv, name):
    return next(o for o in adv.options if o.unit == name)


# --------------------------------------------------------------------------- α of the fused stencil


def test_default_alpha_is_constructed_for_the_fused_stencil():
    """The issue's example: SPIDER's 15/32 is (2R+1)/32 at R = 7 only; at R = 3 (Box-3D1R x3) it is 7/32."""
    adv = advise("Box-3D1R", "float", A100, fuse=3, model="base")
    sp = unit(adv, "sparse_tensor_core")
    assert sp.alpha == Fraction(7, 32) and sp.alpha_source == "constructed" and str(sp.mma_shape) == "m16n8k16"
    assert math.isclose(sp.speedup, 0.827, abs_tol=5e-4)
    assert adv.at_fuse.unit == "cuda_core"
    paper = advise("Box-3D1R", "float", A100, fuse=3, alpha="paper")
    assert unit(paper, "sparse_tensor_core").alpha_source == "paper"
    assert math.isclose(unit(paper, "sparse_tensor_core").speedup, 1.77, abs_tol=5e-3)
    assert paper.at_fuse.unit == "sparse_tensor_core"  # the published constant flips the verdict


def test_star2d3r_fused4_float_example():
    constructed = unit(advise("Star-2D3R", "float", A100, fuse=4, model="base"), "sparse_tensor_core")
    published = unit(advise("Star-2D3R", "float", A100, fuse=4, alpha="paper"), "sparse_tensor_core")
    assert round(published.speedup, 2) == 1.29 and round(constructed.speedup, 2) == 0.52


@pytest.mark.parametrize("args", [["Box-2D1R", "--fuse", "3"], ["Star-3D1R", "--dtype", "float"]])
def test_alpha_source_and_instruction_in_json_and_text(run_cli, args):
    r = run_cli("advise", *args, "--json")
    assert r.returncode == 0, r.stderr
    for o in json.loads(r.stdout)["options"]:
        if not o["available"]:
            continue
        assert o["peak"] > 0 and "peak_source" in o
        if o["unit"] == "cuda_core":
            assert o["alpha_source"] is None and o["mma"] is None
        else:
            assert o["alpha_source"] in ("constructed", "paper", "user") and re.fullmatch(r"m\d+n\d+k\d+", o["mma"])
    text = run_cli("advise", *args).stdout
    assert "[constructed]" in text
    explained = run_cli("explain", *args, "--fuse", "2") if "--fuse" not in args else run_cli("explain", *args)
    assert "[constructed]" in explained.stdout and re.search(r"m\d+n\d+k\d+", explained.stdout)


def test_user_alpha_is_marked_user():
    tc = unit(advise("Box-2D1R", "double", A100, fuse=2, alpha="0.3"), "tensor_core")
    assert tc.alpha == Fraction(3, 10) and tc.alpha_source == "user"
    assert "(u)" in format_advice(advise("Box-2D1R", "double", A100, fuse=2, alpha="0.3"))


# --------------------------------------------------------------------------- best depth and wording


@pytest.mark.parametrize("name, dtype", [("Box-3D1R", "double"), ("Box-2D1R", "double"), ("Star-2D2R", "float"),
                                         ("Box-3D2R", "float"), ("Heat-1D", "double")])
def test_best_depth_does_not_depend_on_the_depth_asked(name, dtype):
    free = advise(name, dtype, A100)
    for t in range(1, 17):
        asked = advise(name, dtype, A100, fuse=t)
        for u in free.best:
            a, b = free.best[u], asked.best[u]
            assert a.available == b.available
            if a.available:
                assert (a.fuse, a.gstencils) == (b.fuse, b.gstencils), (u, t)
        assert (asked.verdict.unit, asked.verdict.fuse) == (free.verdict.unit, free.verdict.fuse)


def test_best_depth_is_the_shallowest_within_the_tolerance():
    """Box-2D1R double on the A100: CUDA cores reach their ceiling once K·t/S ≥ P_cc/B, i.e. t ≥ 4.46."""
    adv = advise("Box-2D1R", "double", A100, fuse=16, model="base")
    ridge = 9.7e12 / 1935e9
    expected = math.ceil(ridge * 8 / 9)
    assert adv.best["cuda_core"].fuse == expected == 5
    values = [unit(advise("Box-2D1R", "double", A100, fuse=t, model="base"), "cuda_core").gstencils
              for t in range(1, 17)]
    top = max(values)
    assert min(t for t, v in enumerate(values, 1) if v >= top * (1 - TIE_TOLERANCE)) == expected


def test_fuse_beyond_max_fuse(run_cli):
    r = run_cli("advise", "Box-2D1R", "--fuse", "20", "--max-fuse", "4")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--max-fuse" in r.stderr and not r.stdout
    r = run_cli("advise", "Box-2D1R", "--fuse", "20")
    assert r.returncode == 0
    assert "t = 1..16 and 20" in r.stdout


def test_best_depth_table_compares_with_the_cuda_core_row():
    adv = advise("Box-2D1R", "float", A100)
    text = format_advice(adv)
    assert "x CC row" in text and "speedup" not in text.splitlines()[2]
    cc = adv.options[0]
    for o in adv.options[1:]:
        if o.available:
            assert f"{o.gstencils / cc.gstencils:.3g}"[:4] in text


def test_deciding_inequality_printed_once():
    adv = advise("Box-3D1R", "double", A100, fuse=3, alpha="paper")
    text = format_advice(adv)
    assert text.count("α·P_tc/P_cc =") == 1  # one scenario-4 comparison (sparse is not available in double)
    assert "inequality above" in adv.verdict_text


def test_half_has_a_cuda_core_option_where_the_spec_has_fp16():
    adv = advise("Box-2D1R", "half", A100, fuse=2, model="base")
    cc = unit(adv, "cuda_core")
    assert cc.available and cc.precision == "fp16" and cc.impl.name == "Temporal-blocking"
    assert unit(adv, "sparse_tensor_core").speedup is not None


def test_half_on_v100_runs_tcstencil_and_names_what_is_missing():
    """The V100 has FP16 Tensor Cores (m8n8k4 only) and TCStencil is a half-precision code: it is evaluated on
    the instruction the V100 lists; CUDA cores have no FP16 rate in the spec, which the answer names."""
    v100 = find_spec("v100")
    adv = advise("Box-2D1R", "half", v100, model="base")
    cc, tc = unit(adv, "cuda_core"), unit(adv, "tensor_core")
    assert not cc.available and "EBISU has no half variant" in cc.reason and "no FP16 on its cuda cores" in cc.reason
    assert tc.available and tc.impl.name == "TCStencil" and str(tc.mma_shape) == "m8n8k4"
    assert tc.mma_shape in v100.shapes("tensor_core", "fp16") and tc.alpha_source == "constructed"
    assert adv.verdict.unit == "tensor_core"
    none = advise("Box-2D1R", "bfloat16", v100)
    assert none.verdict is None and "No execution unit" in none.verdict_text and "CUDA cores:" in none.verdict_text


# --------------------------------------------------------------------------- LaTeX

_LATEX_COMMANDS = {"noindent", "begin", "end", "frac", "left", "right", "cdot", "times", "text", "mathrm", "alpha",
                   "beta", "rho", "min", "max", "approx", "geq", "leq", "_", "%", "&", "#", "textbackslash", "$",
                   "sum", "binom", "lceil", "rceil", "infty", "eta", "omega", "lambda", "^"}


def check_latex(doc: str) -> None:
    """Structural validity of a LaTeX fragment: ASCII, balanced braces and environments, known commands,
    no spaces inside a plain subscript (what ``P_{TC raw}`` got wrong)."""
    assert doc.isascii(), [c for c in doc if not c.isascii()][:5]
    depth = 0
    for ch in doc.replace(r"\{", "").replace(r"\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert doc.count(r"\begin{align*}") == doc.count(r"\end{align*}") > 0
    for cmd in re.findall(r"\\([A-Za-z]+|.)", doc):
        assert cmd in _LATEX_COMMANDS or cmd in (" ", ",", ";", "\\"), cmd
    for sub in re.findall(r"_\{([^{}]*)\}", doc):
        assert " " not in sub, sub
    for line in doc.splitlines():
        if "&=" in line or line.startswith(r"\noindent") or not line.strip() or line.startswith(("\\begin", "\\end")):
            continue
        raise AssertionError(f"line outside any structure: {line!r}")


@pytest.mark.parametrize("args", [["Box-3D1R", "--fuse", "3"], ["Star-2D2R", "--fuse", "2", "--dtype", "float"],
                                  ["Box-2D1R", "--fuse", "1", "--dtype", "half", "--gpu", "v100"],
                                  ["Box-2D1R", "--fuse", "3", "--dtype", "float", "--gpu", "h100", "--model", "refined",
                                   "--impl", "tcadvisor-cc", "--impl", "tcadvisor-tc"]])
def test_latex_is_valid(run_cli, args):
    r = run_cli("explain", *args, "--latex")
    assert r.returncode == 0, r.stderr
    check_latex(r.stdout)


def test_latex_checker_rejects_the_old_output():
    with pytest.raises(AssertionError):
        check_latex("\\begin{align*}\nP_{TC raw} &= 1\n\\end{align*}")
    with pytest.raises(AssertionError):
        check_latex("β = 4.2 ≥ 1")


# --------------------------------------------------------------------------- input validation


@pytest.mark.parametrize("args, needle", [
    (["advise", "Box-2D-1R"], "negative radius"),
    (["advise", "Box-2D1R", "--alpha", "1e-400"], "below 1e-6"),
    (["advise", "Box-2D1R", "--alpha", "1e-300", "--json"], "below 1e-6"),
    (["advise", "Box-2D1R", "--alpha", "inf"], "--alpha"),
    (["advise", "Blob-2D1R"], "did you mean Box-2D1R"),
    (["advise", "Blob-3D2R"], "did you mean Box-3D2R"),
])
def test_bad_input_is_one_line(run_cli, args, needle):
    r = run_cli(*args)
    assert r.returncode == 2 and not r.stdout
    assert r.stderr.count("\n") == 1 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("content, suffix", [
    ('{"offsets": [[0, 0], [1, Infinity]]}', ".json"),
    ('{"offsets": [[0, 0], [true, 0]]}', ".json"),
    ('{"offsets": [[0, 0], ["1", 0]]}', ".json"),
    ('{"offsets": [[0, 0], [1.5, 0]]}', ".json"),
    ("offsets: [[0, 0], [.inf, 0]]", ".yaml"),
    ("offsets: [[0, 0], [.nan, 0]]", ".yaml"),
    ("offsets: [[0, 0], [yes, 0]]", ".yaml"),
    ("offsets: [[0, 0], [1, 0, 0]]", ".yaml"),
    ("offsets: [[0, 0], [100000000000000000000000, 0]]", ".yaml"),
    ("0 0\n1 inf\n", ".txt"),
    ("0 0\n1 True\n", ".txt"),
])
def test_bad_offset_files(run_cli, tmp_path, content, suffix):
    f = tmp_path / f"s{suffix}"
    f.write_text(content)
    r = run_cli("advise", str(f), "--fuse", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr


_component = st.one_of(st.integers(-5, 5), st.integers(), st.booleans(), st.floats(allow_nan=True),
                       st.text(max_size=3), st.none())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_component, min_size=0, max_size=4), min_size=0, max_size=6))
def test_offsets_fuzz_gives_a_stencil_or_a_clean_error(offsets):
    try:
        s = Stencil.from_offsets(offsets)
    except TcAdvisorError as exc:
        assert "\n" not in str(exc)
        return
    # accepted: every component was a genuine integer and the result is consistent
    assert all(type(v) is int for off in offsets for v in off)
    assert s.K == len(set(map(tuple, offsets))) and 1 <= s.radius <= 64


# --------------------------------------------------------------------------- Python API


def test_api_accepts_names_and_normalises_aliases():
    by_name = tcadvisor.advise("Box-2D1R", "fp64", "a100", fuse=3)
    by_object = advise(parse_stencil("Box-2D1R"), "double", A100, fuse=3)
    assert advice_dict(by_name) == advice_dict(by_object)
    data = tcadvisor.sweep("box", 2, "fp32", "h100", radii=[1, 2], fuses=[1, 2])
    assert data["gstencils"].notna().all() and set(data["precision"]) == {"fp32", "tf32"}


@pytest.mark.parametrize("call, needle", [
    (lambda: tcadvisor.advise("Box-2D1R", "quad"), "unknown dtype"),
    (lambda: tcadvisor.advise(["Box-2D1R"]), "neither a Stencil"),
    (lambda: tcadvisor.advise("Box-2D1R", "double", 3.5), "is neither a GPU spec"),
    (lambda: tcadvisor.advise("Box-2D1R", alpha=5), "outside (0, 1]"),
    (lambda: tcadvisor.advise("Box-2D1R", fuse=True), "fusion depth"),
    (lambda: tcadvisor.advise("Box-2D1R", impls=["EBISU", "DRStencil"]), "already chosen"),
    (lambda: tcadvisor.advise("Box-2D1R", impls={"tensor_core": "EBISU"}), "runs on cuda_core"),
    (lambda: tcadvisor.sweep("cube", 2, "double", "a100"), "shape"),
    (lambda: tcadvisor.sweep("box", 4, "double", "a100"), "dimensionality"),
])
def test_api_rejects_bad_arguments_with_the_cli_message(call, needle):
    with pytest.raises(TcAdvisorError) as info:
        call()
    assert needle in str(info.value) and "\n" not in str(info.value)


# --------------------------------------------------------------------------- Ctrl-C


def test_keyboard_interrupt_is_one_line_and_130():
    code = ("import sys, tcadvisor.cli as c\n"
            "def boom(args): raise KeyboardInterrupt\n"
            "c.COMMANDS['gpus'] = boom\n"
            "sys.exit(c.main(['gpus']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and r.stderr == "tcadvisor: interrupted\n" and not r.stdout


def test_sigint_during_a_real_query(tmp_path):
    """A real SIGINT to a running map: exit 130, one line, no traceback."""
    cmd = [sys.executable, "-m", "tcadvisor", "map", "--dims", "3", "--radii", "1-64", "--fuse", "1-64",
           "--dtype", "float", "-o", str(tmp_path / "m.html")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "TCADVISOR_HWSPEC_PATH"})
    time.sleep(1.5)
    if proc.poll() is not None:
        pytest.skip("the query finished before the signal could be sent")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    # 130, or death by the same SIGINT after the message (-2 here; a shell reports both as 130): seen once in CI
    # (2026-11-26) with the message printed and no traceback, not reproduced.
    assert proc.returncode in (130, -signal.SIGINT), err
    assert err.strip().splitlines()[-1] == "tcadvisor: interrupted" and "Traceback" not in err


# --------------------------------------------------------------------------- peaks per instruction


def test_option_uses_the_peak_of_the_instruction_it_executes():
    """ConvStencil issues FP64 m8n8k4, which runs at half rate on the H100 (measured 33.2 vs 66.5 TFLOP/s)."""
    h100 = find_spec("h100-measured")
    tc = unit(advise("Box-2D7R", "double", h100, fuse=1, model="base"), "tensor_core")
    assert str(tc.mma_shape) == "m8n8k4" and tc.peak == 33.2e12
    # R = α·P_tc/(β·P_cc) in scenario 4 with the instruction's own rate
    assert tc.scenario == 4 and math.isclose(tc.speedup, float(tc.alpha) * 33.2 / 30.6)
    assert round(tc.speedup, 2) == 0.54
    bundled = unit(advise("Box-2D7R", "double", h100, fuse=1, impls=["tcadvisor-tc"]), "tensor_core")
    assert str(bundled.mma_shape) in ("m16n8k8", "m16n8k16") and bundled.peak == 66.5e12


def test_never_a_shape_the_gpu_does_not_list():
    mi = find_spec("mi250x")
    tc = unit(advise("Box-2D1R", "double", mi, fuse=2), "tensor_core")
    assert tc.mma_shape in mi.shapes("tensor_core", "fp64") and "not listed" in tc.alpha_note
    from pathlib import Path

    from tcadvisor.impls import parse_profile

    paper_only = parse_profile({"name": "PaperOnly", "unit": "tensor_core", "fusion": "kernel",
                                "precisions": {"double": ["fp64"]}, "mma": {"fp64": "m8n8k4"},
                                "alpha": {"paper": "1/2"}, "reference": "test"}, Path("p.yaml"))
    tc = unit(advise("Box-2D1R", "double", mi, fuse=2, impls={"tensor_core": paper_only}), "tensor_core")
    assert not tc.available and "m8n8k4" in tc.reason and "does not list" in tc.reason


def test_json_carries_mma_and_peak(run_cli):
    r = run_cli("advise", "Box-2D7R", "--fuse", "1", "--gpu", "h100-measured", "--json", "--model", "base")
    tc = next(o for o in json.loads(r.stdout)["options"] if o["unit"] == "tensor_core")
    assert tc["mma"] == "m8n8k4" and tc["peak"] == 33.2e12 and "measured" in tc["peak_source"]


def test_a_kernels_own_instruction_is_used_even_where_the_spec_does_not_list_it():
    """The bound of a bundled-kernel run uses the instruction the kernel executed (measured on the H100: the
    dense kernel issued FP64 m16n8k4, which the measured spec does not list; the model had assumed m8n8k4 at
    half rate and its bound came out below the measurement)."""
    from tcadvisor.validate.compare import predict

    spec = find_spec("h100-measured")
    st = parse_stencil("Box-2D3R")
    opt = predict(st, "double", "tensor_core", 2, spec, Fraction(13, 20), mma="m16n8k4")
    assert str(opt.mma_shape) == "m16n8k4" and opt.peak == spec.peak("tensor_core", "fp64")
    assert "no rate for m16n8k4" in opt.peak_note
    listed = predict(st, "double", "tensor_core", 2, spec, Fraction(13, 20), mma="m8n8k4")
    assert listed.peak == 33.2e12 and listed.gstencils < opt.gstencils
