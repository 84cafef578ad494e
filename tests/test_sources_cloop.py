"""tcadvisor.sources.cloop: a stencil read from a C (or CUDA) loop nest, never compiled or run; the offsets and
weights below are written by hand from the loops; every refusal is one line naming the line and the construct."""
import json
import re
import time

import pytest

from tcadvisor.cli import main
from tcadvisor.errors import TcAdvisorError
from tcadvisor.sources import stencil_from
from tcadvisor.sources.cloop import MAX_C_BYTES, MAX_DEFINE_DEPTH, from_c_file, from_c_text
from tcadvisor.stencil import parse_stencil

JACOBI = """#define N 1000
double a[N][N], b[N][N]; double c0, c1;
for (int j = 1; j < N-1; ++j) for (int i = 1; i < N-1; ++i)
    b[j][i] = c0*a[j][i] + c1*(a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]);
"""


def weights(src) -> dict:
    return dict(zip(src.stencil.offsets, src.stencil.weights))


def refused(match: str, text: str, filename: str = "kernel.c", **kw) -> str:
    with pytest.raises(TcAdvisorError) as info:
        from_c_text(text, filename=filename, **kw)
    message = str(info.value)
    assert "\n" not in message and re.search(match, message), message
    return message


# --------------------------------------------------------------------------- what is read

def test_kerncraft_jacobi_with_values():
    src = from_c_text(JACOBI, filename="kernel.c", values={"c0": 0.5, "c1": 0.125})
    assert weights(src) == {(0, 0): 0.5, (0, -1): 0.125, (0, 1): 0.125, (-1, 0): 0.125, (1, 0): 0.125}
    assert src.dtype == "double" and src.stencil.name == "kernel" and src.stencil.shape == "star"
    assert src.read_from == "kernel.c line 4 (the update of b from a, double)"
    assert src.notes == ()


def test_kerncraft_jacobi_without_values_is_generic_and_says_so():
    src = from_c_text(JACOBI, filename="kernel.c")
    assert src.stencil.weights is None
    assert set(src.stencil.offsets) == {(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0)}
    assert len(src.notes) == 1 and "c0, c1 left symbolic" in src.notes[0] and "generic non-zero" in src.notes[0]
    partial = from_c_text(JACOBI, filename="kernel.c", values={"c0": 0.5})
    assert partial.stencil.weights is None and "c1 left symbolic" in partial.notes[0]


def _star_3d4r() -> str:
    lines = ["#define R 4", "#define W0 (-7.0)"]
    lines += [f"#define W{m} {m}.0/16" for m in range(1, 5)]
    lines += ["void star(int n, double a[n][n][n], double b[n][n][n]) {",
              "  for (int k = R; k < n - R; k++)", "    for (int j = R; j < n - R; j++)",
              "      for (int i = R; i < n - R; i++)", "        b[k][j][i] = W0 * a[k][j][i]"]
    for m in range(1, 5):
        lines.append(f"          + W{m} * (a[k][j][i-{m}] + a[k][j][i+{m}] + a[k][j-{m}][i] + a[k][j+{m}][i]"
                     f" + a[k-{m}][j][i] + a[k+{m}][j][i])")
    lines[-1] += ";"
    return "\n".join(lines + ["}"]) + "\n"


def test_3d_radius_4_star_with_defined_coefficients():
    src = from_c_text(_star_3d4r(), filename="star.c")
    named = parse_stencil("Star-3D4R")
    assert src.stencil.shape == "star" and src.stencil.radius == 4 and src.stencil.K == 25
    assert tuple(src.stencil.offsets) == tuple(named.offsets)
    w = weights(src)
    assert w[(0, 0, 0)] == -7.0
    for m, expected in ((1, 0.0625), (2, 0.125), (3, 0.1875), (4, 0.25)):
        for off in ((0, 0, m), (0, 0, -m), (0, m, 0), (0, -m, 0), (m, 0, 0), (-m, 0, 0)):
            assert w[off] == expected, off
    assert src.dtype == "double"


def test_asymmetric_upwind_in_subscript_order():
    # u_new = u - cx (u - u[x-1]) - cy (u - u[y-1]); the array is u[y][x]
    text = ("void upwind(int ny, int nx, float u[ny][nx], float v[ny][nx]) {\n"
            "  const float cx = 0.25f, cy = 0.5f;\n"
            "  for (int y = 1; y < ny; y++)\n    for (int x = 1; x < nx; x++)\n"
            "      v[y][x] = u[y][x] - cx * (u[y][x] - u[y][x-1]) - cy * (u[y][x] - u[y-1][x]);\n}\n")
    src = from_c_text(text, filename="upwind.c")
    assert weights(src) == {(0, 0): 0.25, (0, -1): 0.25, (-1, 0): 0.5}
    assert src.dtype == "float" and not src.stencil.is_symmetric


def test_1d_sums_repeated_reads_and_keeps_c_integer_division():
    text = ("void f(int n, double *restrict in, double *restrict out) {\n"
            "  for (int i = 2; i < n - 2; i++)\n"
            "    out[i] = (in[i-2] + in[i+2]) / 12 + in[i] + in[i] * 0.5 - 4.0/3 * in[i+1] + 1/2 * in[i-1];\n}\n")
    src = from_c_text(text, filename="d.c")
    assert weights(src) == pytest.approx({(-2,): 1 / 12, (2,): 1 / 12, (0,): 1.5, (1,): -4 / 3})
    assert any("integer division" in n and "(= 0)" in n for n in src.notes)  # 1/2 is 0 in C: in[i-1] drops out


def test_loop_order_and_transposed_subscripts_follow_the_array():
    text = "for (int i = 1; i < n; i++) for (int j = 1; j < n; j++) b[i][j] = 2*a[i][j+1] + 3*a[i-1][j];"
    src = from_c_text(text)
    assert weights(src) == {(0, 1): 2.0, (-1, 0): 3.0}
    assert src.dtype is None and any("does not declare a" in n for n in src.notes)
    assert src.stencil.name.startswith("Custom")  # a text has no file to be named after


def test_cuda_kernel_with_thread_index_and_guard():
    text = ("#include <cuda_fp16.h>\n"
            "// a three-point smoother\n"
            "__global__ void __launch_bounds__(256) smooth(const __half *__restrict__ a, __half *__restrict__ b,"
            " int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i >= 1 && i < n - 1)\n"
            "    b[i] = 0.25f * a[i-1] + 0.5f * a[i] + 0.125f * a[i+1];\n}\n")
    src = from_c_text(text, filename="smooth.cu")
    assert weights(src) == {(-1,): 0.25, (0,): 0.5, (1,): 0.125}
    assert src.dtype == "half" and src.read_from == "smooth.cu line 6 (the update of b from a, half)"
    assert any("guarded by the if on line 5" in n for n in src.notes)


def test_cuda_grid_stride_loop_and_bfloat16():
    text = ("__global__ void k(const __nv_bfloat16 *__restrict a, __nv_bfloat16 *b, int n) {\n"
            "  for (int i = blockIdx.x * blockDim.x + threadIdx.x + 1; i < n - 1; i += blockDim.x * gridDim.x)\n"
            "    b[i] = a[i+1] - a[i-1];\n}\n")
    src = from_c_text(text, filename="k.cu")
    assert weights(src) == {(1,): 1.0, (-1,): -1.0} and src.dtype == "bfloat16"


@pytest.mark.parametrize("z_index", ["blockIdx.z * blockDim.z + threadIdx.z", "threadIdx.z + blockIdx.z * blockDim.z"])
def test_cuda_const_thread_indices_in_3d(z_index):
    """``const int i = ...threadIdx...``: a thread index, not a const coefficient whose initialiser is read."""
    text = ("#define N 64\n"
            "__global__ void lap(const double (*__restrict__ a)[N][N], double (*__restrict__ b)[N][N]) {\n"
            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  const int j = blockIdx.y * blockDim.y + threadIdx.y;\n"
            f"  const int k = {z_index};\n"
            "  if (i > 0 && i < N-1 && j > 0 && j < N-1 && k > 0 && k < N-1)\n"
            "    b[k][j][i] = a[k][j][i-1] + a[k][j][i+1] + a[k-1][j][i] + 2*a[k+1][j][i] + a[k][j-1][i]"
            " + a[k][j+1][i] - 6.0*a[k][j][i];\n}\n")
    src = from_c_text(text, filename="lap.cu")
    assert weights(src) == {(0, 0, -1): 1.0, (0, 0, 1): 1.0, (-1, 0, 0): 1.0, (1, 0, 0): 2.0, (0, -1, 0): 1.0,
                            (0, 1, 0): 1.0, (0, 0, 0): -6.0}
    assert src.dtype == "double" and src.read_from == "lap.cu line 7 (the update of b from a, double)"
    refused(r"line 7: the loop variable k is used as a value", text.replace("- 6.0*a[k][j][i]", "- k*a[k][j][i]"),
            filename="lap.cu")


def test_a_temporary_in_the_body_is_named_as_a_second_statement():
    refused(r"line 3: the innermost loop body holds 2 statements \(line 3: double t = a\[i - 1\] \+ a\[i \+ 1\], "
            r"line 3: b\[i\] = 0\.5 \* t\)",
            LOOP.replace("BODY", "{ double t = a[i-1] + a[i+1]; b[i] = 0.5 * t; }"))


def test_a_refusal_after_integer_division_says_it_truncated():
    refused(r"a stencil must reach at least one neighbour .*\(note: 1 / 2 on line 3 is C's integer division \(= 0\)",
            LOOP.replace("BODY", "b[i] = (1/2) * (a[i-1] + a[i+1]) + a[i];"))
    refused(r"every coefficient of the reads of a cancels to zero.*integer division \(= 0\)",
            LOOP.replace("BODY", "b[i] = (1/3) * (a[i-1] + a[i+1]);"))


@pytest.mark.parametrize("decl,dtype", [("double", "double"), ("float", "float"), ("half", "half"),
                                        ("__half", "half"), ("__nv_bfloat16", "bfloat16"), ("real", "float")])
def test_dtype_from_the_declaration(decl, dtype):
    text = (f"typedef float real;\n{decl} a[64], b[64];\n"
            "for (int i = 1; i < 63; i++) b[i] = a[i-1] + a[i+1];\n")
    assert from_c_text(text, filename="t.c").dtype == dtype


def test_defines_comments_and_conditionals_are_followed():
    text = ("/* a comment with b[i] = a[i*i]; */\n"
            "#define HALF 0.5 // the weight\n"
            "#define W HALF\n"
            "#ifdef NOT_DEFINED\n"
            "for (int i = 0; i < n; i++) c[i] = a[i*i];\n"
            "#else\n"
            "#pragma omp parallel for\n"
            "for (int i = 1; i < n; i++)\n"
            "    b[i] = W * a[i-1] \\\n"
            "         + W * a[i+1];\n"
            "#endif\n")
    assert weights(from_c_text(text)) == {(-1,): 0.5, (1,): 0.5}


def test_field_names_the_source_array():
    two_nests = ("double a[9], b[9];\nfor (int t = 0; t < 10; t++) {\n"
                 "  for (int i = 1; i < 8; i++) b[i] = 0.5 * (a[i-1] + a[i+1]);\n"
                 "  for (int i = 1; i < 8; i++) a[i] = b[i];\n}\n")
    refused(r"kernel\.c: 2 loop-nest updates: line 3 \(b from a\); line 4 \(a from b\); field= \(--field\)",
            two_nests)
    src = from_c_text(two_nests, filename="kernel.c", field="a")
    assert weights(src) == {(-1,): 0.5, (1,): 0.5} and src.read_from == "kernel.c line 3 (the update of b from a, double)"
    refused(r"line 4: the update of a from b: a stencil must reach at least one neighbour", two_nests, field="b")
    refused(r"field 'c' is not read by any loop-nest update; the updates read a, b", two_nests, field="c")
    forced = "for (int i = 1; i < n; i++) u[i] = 0.5*(v[i-1] + v[i+1]) + 0.25*f[i+1];"
    refused(r"line 1: the update of u reads several arrays \(f, v\); field= \(--field\)", forced)
    src = from_c_text(forced, field="v")
    assert weights(src) == {(-1,): 0.5, (1,): 0.5}
    assert any("read of f" in n and "not part of the stencil" in n for n in src.notes)
    refused(r"field 'u' names the array written here; field= \(--field\) names the source array", forced,
            field="u")


def test_values_for_a_name_the_update_does_not_use_are_refused():
    refused(r"values gives dt = 0.1, but the update does not use it; .*symbolic coefficients are c0, c1",
            JACOBI, values={"dt": 0.1})
    refused(r"values gives N = 5, but kernel\.c #defines it on line 1", JACOBI, values={"N": 5})
    refused(r"values gives c0 = 'x'; expected a finite number", JACOBI, values={"c0": "x"})


# --------------------------------------------------------------------------- what is refused

LOOP = "double a[64], b[64];\nfor (int i = 1; i < 63; i++)\n  { BODY }\n"


@pytest.mark.parametrize("body,match", [
    ("b[i] = a[i] * a[i+1];", r"line 3: the product 'a\[i\] \* a\[i \+ 1\]' multiplies two reads"),
    ("b[i] = 1.0 / a[i+1];", r"line 3: the division '1\.0 / a\[i \+ 1\]' divides by a read"),
    ("b[i] = sqrt(a[i]);", r"line 3: the call 'sqrt\(a\[i\]\)' takes a read of an array"),
    ("b[i] = a[i*i];", r"line 3: the index i \* i of a\[i \* i\] is not affine"),
    ("b[i] = a[ix[i]];", r"line 3: the index ix\[i\] of a\[ix\[i\]\] reads an array"),
    ("b[i] = a[2*i];", r"line 3: the index 2 \* i of a\[2 \* i\] has stride 2"),
    ("b[i] = a[i-1] + a[i+1]; b[i] = 0.5 * b[i];", r"line 3: the innermost loop body holds 2 statements"),
    ("b[i] = a[i-1] + c[i+1];", r"line 3: the update of b reads several arrays \(a, c\)"),
    ("a[i] = a[i-1] + a[i+1];", r"line 3: the update of a reads a itself \(a\[i - 1\]\): an in-place update"),
    ("b[i] += a[i-1] + a[i+1];", r"line 3: the compound assignment 'b\[i\] \+= a\[i - 1\] \+ a\[i \+ 1\]' \(\+=\)"),
    ("b[i] = i * a[i-1];", r"line 3: the loop variable i is used as a value"),
    ("b[i] = a[i] > 0 ? a[i] : 0;", r"line 3: a conditional \(\?:\)"),
    ("b[i] = 0;", r"line 3: the loop's update 'b\[i\] = 0' reads no array"),
    ("x = a[i];", r"line 2: the loop's body assigns no array element"),
])
def test_refusals_in_the_loop_body(body, match):
    refused(match, LOOP.replace("BODY", body))


def test_refusals_of_indices_and_loops():
    refused(r"kernel\.c line 2: the loop variable i runs with step 2 \(i \+= 2\); tcadvisor reads unit-stride loops",
            "double a[64], b[64];\nfor (int i = 1; i < 63; i += 2)\n  b[i] = a[i-1] + a[i+1];\n")
    refused(r"line 2: a\[i\]\[j\] indexes axis 0 with i, but b is written with j along that axis \(a transposed read\)",
            "for (int j = 0; j < n; j++) for (int i = 0; i < n; i++)\n b[j][i] = a[i][j];")
    refused(r"line 1: the index i \+ j of a\[i \+ j\]\[i\] mixes axes \(i, j\)",
            "for (int j = 0; j < n; j++) for (int i = 0; i < n; i++) b[j][i] = a[i+j][i];")
    refused(r"line 1: the index \(j \* n\) \+ i of b\[\(j \* n\) \+ i\] has stride n along j; .*flattened",
            "for (int j = 0; j < n; j++) for (int i = 0; i < n; i++) b[j*n + i] = a[j*n + i + 1];")
    refused(r"line 1: a\[0\]\[i\] reads a fixed index along axis 0",
            "for (int j = 0; j < n; j++) for (int i = 0; i < n; i++) b[j][i] = a[0][i];")


def test_refusals_of_the_file():
    refused(r"^kernel\.c: no loop found; expected a for loop nest", "double x = 1.0;\nint main(void) { return 0; }")
    refused(r"^kernel\.c line 3: the function-like macro IDX\(\.\.\.\) \(#define on line 1\) is used",
            "#define IDX(i) ((i) + 1)\ndouble a[9], b[9];\nfor (int i = 0; i < 8; i++) b[i] = a[IDX(i)];")
    refused(r"^kernel\.c line 2: the file's loop does not parse as C",
            "double a[9], b[9];\nfor (int i = 0; i < 8; i++) b[i] = a[i] +;\n")
    refused(r"^k\.cpp line 1: the C\+\+/CUDA file's loop does not parse as C .*other C\+\+ is not read",
            "template <typename T> void f(T *a, T *b) { for (int i = 1; i < 8; i++) b[i] = a[i-1]; }",
            filename="k.cpp")
    refused(r"line 2: a is declared int \(integer\); expected a floating-point element type",
            "\nint a[9]; double b[9];\nfor (int i = 1; i < 8; i++) b[i] = a[i-1];")
    refused(r"line 1: '#if N > 2' is not read", "#if N > 2\n#endif\n")
    refused(r"line 41: #define A expands through more than 32 levels",
            "\n".join(f"#define M{k} M{k + 1}" for k in range(40)).replace("M0", "A", 1) + "\ndouble x = A;\n")
    laughs = "\n".join(f"#define L{k} " + " ".join([f"L{k + 1}"] * 10) for k in range(8)) + "\n#define L8 1\n"
    refused(r"the #define expansions grow past 4 MiB", laughs + "double x = L0;\n")
    refused(r"brackets nest more than 64 deep", "double x = " + "(" * 100 + "1" + ")" * 100 + ";")
    assert MAX_DEFINE_DEPTH == 32


SMALL_LOOP = "double a[100], b[100];\nfor (int i = 1; i < 99; i++) b[i] = EXPR;"


@pytest.mark.parametrize("what,code,match", [
    ("a 60,000-term update", SMALL_LOOP.replace("EXPR", " + ".join(["a[i-1]"] * 60_000)), "more than 100000 tokens"),
    ("a #define used 40,000 times", "#define X (1.0/3.0*2.0/7.0*5.0)\n" + SMALL_LOOP.replace(
        "EXPR", "+".join(["X*a[i]"] * 40_000)), "more than 100000 tokens after #define expansion"),
    ("20,000 functions", "\n".join(f"void f{k}(void) {{ int x = {k}; }}" for k in range(20_000))
     + "\n" + SMALL_LOOP.replace("EXPR", "a[i-1]"), "more than 100000 tokens"),
    ("a doubling #define chain", "\n".join(f"#define D{k} (D{k + 1} * D{k + 1})" for k in range(16))
     + "\n#define D16 1.0000001\n" + SMALL_LOOP.replace("EXPR", "D0*a[i-1] + a[i+1]"), "grow past 4 MiB"),
    ("a literal of a billion digits' exponent", SMALL_LOOP.replace("EXPR", "1e999999999*a[i-1] + a[i+1]"),
     "1e999999999"),
    ("pow of a huge result", SMALL_LOOP.replace("EXPR", "pow(2, 100000000000)*a[i-1] + a[i+1]"),
     r"the call 'pow\(2, 100000000000\)' is not a finite number"),
    ("nested exp", SMALL_LOOP.replace("EXPR", "exp(exp(exp(100)))*a[i-1] + a[i+1]"), "is not a finite number"),
    ("1e300 multiplied by itself", SMALL_LOOP.replace("EXPR", "*".join(["1e300"] * 3000) + "*a[i-1] + a[i+1]"),
     "overflows a double"),
])
def test_expensive_files_are_refused_quickly(what, code, match):
    """What would take the parser minutes, or build a number of a billion digits, is refused in seconds."""
    start = time.monotonic()
    refused(match, code)
    assert time.monotonic() - start < 5.0, what


def test_coefficients_at_the_edges_of_double_are_read():
    src = from_c_text(SMALL_LOOP.replace("EXPR", "1e-999999999*a[i-1] + pow(2.0, 0.5)*a[i+1] + 1e300*1e-300*a[i]"),
                      filename="k.c")
    assert weights(src) == {(1,): pytest.approx(2 ** 0.5, rel=1e-15), (0,): pytest.approx(1.0, rel=1e-15)}


def test_files_are_bounded_and_never_run(tmp_path):
    path = tmp_path / "big.c"
    path.write_text("//" + "x" * MAX_C_BYTES + "\n")
    with pytest.raises(TcAdvisorError, match="too large"):
        from_c_file(path)
    marker = tmp_path / "ran"
    path = tmp_path / "kernel.c"
    path.write_text(f'#include "{marker}"\n#pragma once\nint main(void) {{ system("touch {marker}"); '
                    "double a[9], b[9]; for (int i = 1; i < 8; i++) b[i] = 0.5*a[i-1] + 0.5*a[i+1]; }\n")
    src = stencil_from(path, name="mine")
    assert weights(src) == {(-1,): 0.5, (1,): 0.5} and src.stencil.name == "mine" and not marker.exists()
    assert from_c_file(path).stencil.name == "kernel"


# --------------------------------------------------------------------------- the command line

def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def answer(capsys, *args):
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    return json.loads(out)


def without_source(data, path, options=""):
    """The answer without what names the file: the command, the echo of the source and its notes (and the
    options of the reading that a close call's command repeats)."""
    kept = {k: v for k, v in data.items() if k not in ("source", "command", "notes")}
    text = json.dumps(kept).replace(str(path), "STENCIL")
    return json.loads(text.replace(options, "") if options else text)


@pytest.fixture
def kernels(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "txt").mkdir()
    (tmp_path / "c" / "jacobi.c").write_text(JACOBI)
    (tmp_path / "txt" / "jacobi.txt").write_text("0 0 : 0.5\n0 -1 : 0.125\n0 1 : 0.125\n-1 0 : 0.125\n1 0 : 0.125\n")
    return tmp_path


def test_cli_c_file_answers_as_the_offsets_file(kernels, capsys):
    c = kernels / "c" / "jacobi.c"
    txt = kernels / "txt" / "jacobi.txt"
    from_c = answer(capsys, "advise", c, "--gpu", "h100", "--set", "c0=0.5", "--set", "c1=0.125", "--json")
    from_txt = answer(capsys, "advise", txt, "--gpu", "h100", "--dtype", "double", "--json")
    assert from_c["dtype"] == "double" and from_c["stencil"] == from_txt["stencil"] == "jacobi"
    assert without_source(from_c, c, " --set c0=0.5 --set c1=0.125") == without_source(from_txt, txt)
    assert from_c["source"]["read_from"] == f"{c} line 4 (the update of b from a, double)"
    assert from_c["source"]["dtype_used"] is True and from_c["source"]["notes"] == []
    assert sorted(zip(map(tuple, from_c["source"]["offsets"]), from_c["source"]["weights"])) == [
        ((-1, 0), 0.125), ((0, -1), 0.125), ((0, 0), 0.5), ((0, 1), 0.125), ((1, 0), 0.125)]
    assert "--set c0=0.5 --set c1=0.125" in from_c["command"]


def test_cli_generic_weights_field_and_bad_files(kernels, capsys):
    c = kernels / "c" / "jacobi.c"
    generic = answer(capsys, "advise", c, "--gpu", "h100", "--json")
    assert generic["source"]["weights"] is None or generic["source"]["weights"] == []
    assert any("c0, c1 left symbolic" in n for n in generic["source"]["notes"])
    two = kernels / "c" / "two.c"
    two.write_text("double a[9], b[9];\nfor (int t = 0; t < 9; t++) {\n"
                   "  for (int i = 1; i < 8; i++) b[i] = 0.5 * (a[i-1] + a[i+1]);\n"
                   "  for (int i = 1; i < 8; i++) a[i] = b[i];\n}\n")
    code, out, err = cli(capsys, "advise", two, "--gpu", "h100")
    assert code == 2 and out == "" and err.count("\n") == 1 and "2 loop-nest updates" in err
    data = answer(capsys, "advise", two, "--field", "a", "--gpu", "h100", "--json")
    assert sorted(map(tuple, data["source"]["offsets"])) == [(-1,), (1,)] and data["source"]["weights"] == [0.5, 0.5]
    assert "--field a" in data["command"]
    for args, match in [([c, "--set", "dt=1"], "values gives dt = 1, but the update does not use it"),
                        ([kernels / "c" / "missing.c"], "does not exist"),
                        ([c, "--flip"], r"flip= \(--flip\) does not apply to a C file")]:
        code, out, err = cli(capsys, "advise", *args, "--gpu", "h100")
        assert code == 2 and out == "" and err.count("\n") == 1 and re.search(match, err), err
        assert "Traceback" not in err
    bad = kernels / "c" / "bad.cu"
    bad.write_text("__global__ void k(double *a, double *b) {\n  int i = threadIdx.x;\n  b[i] = a[i] * a[i];\n}\n")
    code, out, err = cli(capsys, "advise", bad, "--gpu", "h100")
    assert code == 2 and out == "" and err.count("\n") == 1 and "line 3: the product" in err
