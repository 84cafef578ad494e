"""Stencils from C loop nests: the update statement of a ``for`` nest (or a CUDA kernel) read as a stencil.

The file is C99, as kerncraft reads it::

    #define N 1000
    double a[N][N], b[N][N]; double c0, c1;
    for (int j = 1; j < N-1; ++j) for (int i = 1; i < N-1; ++i)
        b[j][i] = c0*a[j][i] + c1*(a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]);

Statements at file scope (kerncraft's kernel snippets) are read as the body of one
function; whole programs and functions are read as they are.  Nothing is compiled
or run, and no preprocessor binary is called: the text is parsed by pycparser
after this module's own bounded preprocessing:

* comments are stripped and continued lines (``\\``) joined, keeping line numbers;
* object-like ``#define NAME value`` constants are expanded (at most
  :data:`MAX_DEFINE_DEPTH` levels, :data:`MAX_EXPANDED_CHARS` characters in all);
  ``#undef``, ``#ifdef``, ``#ifndef``, ``#else``, ``#endif`` and ``#if 0``/``#if 1``
  are followed; ``#include``, ``#pragma`` and ``#line`` are dropped; a
  function-like macro that the code uses, any other ``#if`` and any other
  directive are refused, naming the line;
* C++ and CUDA files are read where their loop is C: ``__global__``, ``__device__``,
  ``__host__``, ``__forceinline__``, ``__restrict__``, ``__restrict``,
  ``__launch_bounds__(...)``, ``__attribute__((...))`` and ``extern "C"`` are
  dropped, ``constexpr`` is read as ``const``, and CUDA's ``half``, ``__half`` and
  ``__nv_bfloat16`` are known type names.  Anything else of C++ is refused: the
  file's loop does not parse as C.

What is read:

* **The update**: the one assignment ``out[...] = expression`` of an array element
  inside a loop nest.  The variables of the enclosing ``for`` loops index the
  points; so do CUDA thread indices (``int i = blockIdx.x*blockDim.x +
  threadIdx.x;``, a grid-stride ``for``), and ``if`` guards around the update are
  read as "where the guard holds" (a note says so).  A loop not used in an index
  (a time loop) is ignored.
* **Offsets**: each read ``a[...]`` of the source array, along each axis its
  subscript minus the written element's subscript (``a[j][i-1]`` for ``b[j][i]``:
  (0, -1)), in the array's subscript order (z, y, x for ``a[k][j][i]``).
* **Weights**: the expression is linear in the reads: each read is a symbol, and
  its coefficient (a SymPy expression) is made of literals, ``#define`` constants,
  ``const`` scalars with initialisers, arithmetic of those (``1.0/6``; C's integer
  division is kept, and said where it truncates) and sqrt, exp, log, sin, cos,
  tan, pow, fabs of them.  Several reads of one point sum their coefficients.
  Other scalars (``dt``, ``c1``, a non-const parameter) take their numbers from
  ``values``; any left symbolic make the weights generic (the support only), and
  a note says so, as for a mapping's symbolic coefficients.  A term without a
  read (a constant source) is left out, with a note.
* **Dtype**: the element type of the source array's declaration (a parameter, a
  local or a global; typedefs followed): double, float, ``half``/``__half``/
  ``_Float16`` (half), ``__nv_bfloat16``/``__bf16`` (bfloat16).  Without a
  declaration the dtype is None, with a note; an integer array is refused.
* **field**: names the *source* array, the array whose reads make the stencil.  It
  chooses among several loop-nest updates (the one that reads it) and among the
  arrays one update reads (the others' reads are left out, with a note).  Without
  it, a file with several updates, or an update reading several arrays, is refused.

Refused, in one line naming the file's line and the construct: no loop; a loop
that assigns no array element; several updates or statements in the innermost
body; a compound assignment (``+=``: it also reads the output); a read of the
output array (an in-place update); a product of two reads, a division by a read, a
read inside a function call; non-affine (``a[i*i]``, ``a[idx[i]]``), non-unit-stride
(``a[2*i]``, a loop stepping by 2), transposed or axis-mixing (``a[i+j]``)
indices; flattened indices (``a[j*n + i]``) are non-unit-stride and so refused.

Bounds: at most :data:`MAX_C_BYTES` read, :data:`MAX_TOKENS` tokens handed to the
parser after expansion (pycparser's speed makes this a few seconds), brackets
:data:`MAX_NESTING` deep, :data:`MAX_EXPRESSION_NODES` parts in the update; constants
are exact rationals up to :data:`MAX_RATIONAL_BITS` bits and floats beyond, literals
with exponents past :data:`MAX_LITERAL_EXPONENT` and math calls of numbers are
computed in floating point, so no number of a billion digits is ever built.
"""
from __future__ import annotations

import fractions
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field as dc_field
from pathlib import Path
from typing import Any

from ..bounded import short_repr
from ..errors import TcAdvisorError
from ..stencil import MAX_DIMS, Stencil
from .result import StencilSource

#: Largest C file read (a loop nest is a few hundred bytes; a whole program a few tens of kilobytes).
MAX_C_BYTES = 1 << 20
#: Deepest chain of ``#define`` constants expanded (N defined by M defined by ...).
MAX_DEFINE_DEPTH = 32
#: Most characters all ``#define`` expansions together may produce (a macro "billion laughs" stops here).
MAX_EXPANDED_CHARS = 4 << 20
#: Deepest nesting of brackets ( [ { in the file (pycparser parses recursively).
MAX_NESTING = 64
#: Most C tokens handed to the parser, after #define expansion: pycparser reads some 40,000 a second, so this
#: bounds the parse to a few seconds; an update of the largest expression read (MAX_EXPRESSION_NODES) fits.
MAX_TOKENS = 100_000
#: Largest decimal exponent of a floating-point literal read exactly (beyond double's range it would be inf or 0).
MAX_LITERAL_EXPONENT = 400
#: Most bits of an exact rational coefficient (numerator and denominator) before it is read as a float instead.
MAX_RATIONAL_BITS = 4096
#: Most AST nodes in the update's right-hand side, and most reads in it.
MAX_EXPRESSION_NODES = 50_000
#: Deepest nesting of the update's expression once sums and products are flattened.
MAX_EXPRESSION_DEPTH = 200

#: Element types of the source array, as C, CUDA and compilers spell them, and the dtype each is.
ELEMENT_DTYPES = {"double": "double", "float": "float", "half": "half", "__half": "half", "_Float16": "half",
                  "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16", "__bf16": "bfloat16"}
#: Type names a C parser does not know without headers, declared for it (only where the file uses them).
_PRELUDE_TYPES = {"half": "float", "__half": "float", "_Float16": "float", "__nv_bfloat16": "float",
                  "nv_bfloat16": "float", "__bf16": "float", "bool": "int", "size_t": "unsigned long",
                  "ptrdiff_t": "long", "int64_t": "long", "uint64_t": "unsigned long", "int32_t": "int",
                  "uint32_t": "unsigned int", "dim3": "int"}
#: CUDA and compiler qualifiers dropped before parsing (they do not change what the loop computes).
_DROPPED_WORDS = ("__global__", "__device__", "__host__", "__forceinline__", "__noinline__", "__restrict__",
                  "__restrict", "__inline__", "__inline")
_INT_TYPES = {"int", "long", "short", "char", "unsigned", "signed", "size_t", "ptrdiff_t", "int64_t", "uint64_t",
              "int32_t", "uint32_t", "bool", "_Bool"}
_MATH = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan", "pow": "Pow",
         "fabs": "Abs"}

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|\.?\d(?:[eEpP][+-]|[\w.])*|[A-Za-z_]\w*')
_IDENT = re.compile(r"[A-Za-z_]\w*")
_ANY_TOKEN = re.compile(r"[A-Za-z_]\w*|\.?\d[\w.]*|\S")  # a C token, roughly: enough to count them
_DIRECTIVE = re.compile(r"\s*#\s*(\w*)(.*)$", re.S)


class _Where:
    """The file being read, for messages: '<file> line <n>: ...'."""

    def __init__(self, filename: str):
        self.filename = filename

    def error(self, line: int | None, message: str) -> TcAdvisorError:
        at = f"{self.filename} line {line}" if line else self.filename
        return TcAdvisorError(" ".join(f"{at}: {message}".split()))


def _shown(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --------------------------------------------------------------------------- preprocessing (no preprocessor run)

def _splice(text: str) -> str:
    """Lines ending in a backslash joined with the next; the lines joined away come back empty after, so every
    later line keeps its number."""
    out, pending, carried = [], "", 0
    for line in text.split("\n"):
        if line.endswith("\\"):
            pending += line[:-1]
            carried += 1
            continue
        out.append(pending + line)
        out.extend([""] * carried)
        pending, carried = "", 0
    if pending or carried:
        out.append(pending)
        out.extend([""] * (carried - 1))
    return "\n".join(out)


def _strip_comments(text: str, where: _Where) -> str:
    """``/* */`` and ``//`` comments replaced by a space (newlines inside kept); strings and characters kept."""
    out, i, n = [], 0, len(text)
    pattern = re.compile(r'/\*|//|"|\'')
    while i < n:
        m = pattern.search(text, i)
        if m is None:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        token = m.group(0)
        if token == "/*":
            end = text.find("*/", m.end())
            if end < 0:
                raise where.error(text.count("\n", 0, m.start()) + 1, "a /* comment is never closed; expected */")
            out.append(" " + "\n" * text.count("\n", m.start(), end))
            i = end + 2
        elif token == "//":
            end = text.find("\n", m.end())
            i = n if end < 0 else end
            out.append(" ")
        else:
            lit = re.compile(r'"(?:[^"\\\n]|\\.)*"' if token == '"' else r"'(?:[^'\\\n]|\\.)*'").match(text, m.start())
            if lit is None:  # an unclosed quote: kept for the parser to name
                out.append(token)
                i = m.end()
            else:
                out.append(lit.group(0))
                i = lit.end()
    return "".join(out)


@dataclass
class _Macros:
    objects: dict[str, tuple[str, int]] = dc_field(default_factory=dict)  # name -> (body, line defined)
    functions: dict[str, int] = dc_field(default_factory=dict)  # name -> line defined
    budget: int = MAX_EXPANDED_CHARS


def _expand(text: str, macros: _Macros, where: _Where, line: int, active: tuple[str, ...] = ()) -> str:
    """``text`` with every object-like macro expanded (C's rule: a macro is not expanded inside itself)."""
    def one(m: re.Match) -> str:
        word = m.group(0)
        if not _IDENT.fullmatch(word):
            return word  # a number, a string or a character
        if word in macros.functions:
            raise where.error(line, f"the function-like macro {word}(...) (#define on line {macros.functions[word]}) "
                                    "is used; tcadvisor expands only object-like #define constants (it runs no "
                                    "preprocessor); write the expression out")
        if word not in macros.objects or word in active:
            return word
        if len(active) >= MAX_DEFINE_DEPTH:
            raise where.error(line, f"#define {active[0]} expands through more than {MAX_DEFINE_DEPTH} levels of "
                                    f"#define ({' -> '.join(active[:4])} -> ...); expected constants at most "
                                    f"{MAX_DEFINE_DEPTH} deep")
        body, _ = macros.objects[word]
        out = _expand(body, macros, where, line, active + (word,))
        macros.budget -= len(out)
        if macros.budget < 0:
            raise where.error(line, f"the #define expansions grow past {MAX_EXPANDED_CHARS >> 20} MiB (at {word}); "
                                    "expected #define constants of ordinary size")
        return out
    return _TOKEN.sub(one, text)


_PP_IF = re.compile(r"^\s*(!)?\s*(?:defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|(\d+)[uUlL]*)\s*$")


def _preprocess(text: str, where: _Where) -> tuple[str, _Macros]:
    """The code of ``text`` with its directives followed or refused and its #define constants expanded; the
    same number of lines."""
    lines = _strip_comments(_splice(text.replace("\r\n", "\n").replace("\r", "\n")), where).split("\n")
    macros = _Macros()
    for word in _DROPPED_WORDS:
        macros.objects[word] = ("", 0)
    macros.objects["constexpr"] = ("const", 0)
    stack: list[tuple[bool, bool, int]] = []  # (this branch active, some branch taken, line of its #if)
    out = []
    for number, line in enumerate(lines, 1):
        active = all(s[0] for s in stack)
        m = _DIRECTIVE.match(line)
        if m is None:
            out.append(_expand(_cxx_free(line), macros, where, number) if active else "")
            continue
        out.append("")
        name, rest = m.group(1), m.group(2).strip()
        if name in ("if", "ifdef", "ifndef", "elif"):
            if name == "elif":
                if not stack:
                    raise where.error(number, "#elif without #if")
                _, taken, start = stack.pop()
                parent = all(s[0] for s in stack)
            else:
                taken, start, parent = False, number, active
            if name == "if" or name == "elif":
                cond = _pp_condition(rest, macros, where, number, f"#{name} {rest}") if parent and not taken else False
            else:
                ident = rest.split()[0] if rest.split() else ""
                if not _IDENT.fullmatch(ident):
                    raise where.error(number, f"#{name} {_shown(rest)!r} does not name a macro; expected #{name} NAME")
                cond = (ident in macros.objects or ident in macros.functions) == (name == "ifdef")
            stack.append((cond and not taken, taken or cond, start))
        elif name == "else":
            if not stack:
                raise where.error(number, "#else without #if")
            _, taken, start = stack.pop()
            stack.append((not taken, True, start))
        elif name == "endif":
            if not stack:
                raise where.error(number, "#endif without #if")
            stack.pop()
        elif not active:
            continue
        elif name == "define":
            d = re.match(r"([A-Za-z_]\w*)(\()?(.*)$", rest, re.S)
            if d is None:
                raise where.error(number, f"#define {_shown(rest)!r} does not name a macro; expected #define NAME value")
            macro, is_function, body = d.group(1), d.group(2), d.group(3).strip()
            macros.objects.pop(macro, None)
            macros.functions.pop(macro, None)
            if is_function:
                macros.functions[macro] = number
            else:
                macros.objects[macro] = (body, number)
        elif name == "undef":
            ident = rest.split()[0] if rest.split() else ""
            macros.objects.pop(ident, None)
            macros.functions.pop(ident, None)
        elif name in ("include", "pragma", "line", "") or name.isdigit():
            continue  # harmless to what the loop computes (an #include's declarations are not read)
        else:
            raise where.error(number, f"the directive #{name} is not read; tcadvisor follows #define, #undef, "
                                      "#ifdef, #ifndef, #if 0/1, #else and #endif, and drops #include and #pragma")
    if stack:
        raise where.error(stack[-1][2], "this #if is never closed; expected #endif")
    return "\n".join(out), macros


def _pp_condition(rest: str, macros: _Macros, where: _Where, number: int, shown: str) -> bool:
    m = _PP_IF.match(rest)
    if m and m.group(4) is None:  # defined(X) is judged before X is expanded
        name = m.group(2) or m.group(3)
        return (name in macros.objects or name in macros.functions) != bool(m.group(1))
    m = _PP_IF.match(_expand(rest, macros, where, number))
    if m and m.group(4) is not None:
        return (int(m.group(4)) != 0) != bool(m.group(1))
    raise where.error(number, f"{_shown(shown)!r} is not read; tcadvisor evaluates #if 0, #if 1, #if defined(NAME), "
                              "#ifdef and #ifndef (it runs no preprocessor)")


_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
_EXTERN_C = re.compile(r'\bextern\s+"C"\s*(?!\{)')


def _cxx_free(line: str) -> str:
    """A code line without the CUDA and compiler decorations that do not change what the loop computes."""
    if "__" in line:
        line = _ATTRIBUTE.sub(" ", _LAUNCH_BOUNDS.sub(" ", line))
    return _EXTERN_C.sub(" ", line) if "extern" in line else line


# --------------------------------------------------------------------------- parsing

def _nesting(code: str, where: _Where) -> None:
    depth = 0
    for number, line in enumerate(code.split("\n"), 1):
        for ch in line:
            if ch in "([{":
                depth += 1
                if depth > MAX_NESTING:
                    raise where.error(number, f"brackets nest more than {MAX_NESTING} deep; expected an ordinary "
                                              "loop nest")
            elif ch in ")]}":
                depth -= 1


def _parse_error_line(exc: Exception, parser: Any) -> int | None:
    m = re.search(r":(\d+)(?::\d+)?:", str(exc))
    if m:
        return int(m.group(1))
    try:  # pycparser 3 names no line for some errors: the token it stopped at does
        tok = parser._tokens.peek()  # noqa: SLF001
        return int(tok.lineno) if tok is not None else None
    except Exception:  # noqa: BLE001 - only a better message is lost
        return None


def _loop_at_file_scope(code: str) -> bool:
    """Whether a loop keyword stands outside every brace (a kerncraft snippet), so the wrapped reading goes first."""
    depth = 0
    for m in re.finditer(r"[{}]|\b(?:for|while|do)\b", code):
        token = m.group(0)
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif depth <= 0:
            return True
    return False


def _parse(code: str, where: _Where, cxx: bool):
    """The pycparser AST of ``code``: as it is, or else its statements read as one function's body (kerncraft's
    kernel snippets have loops at file scope)."""
    from pycparser import c_parser

    _nesting(code, where)
    declared = set(re.findall(r"\btypedef\b[^;]*?\b(\w+)\s*;", code))
    used = set(_IDENT.findall(code))
    prelude = " ".join(f"typedef {base} {name};" for name, base in _PRELUDE_TYPES.items()
                       if name in used and name not in declared)
    failures = []
    for wrap in ((True, False) if _loop_at_file_scope(code) else (False, True)):
        parser = c_parser.CParser()
        text = f"{prelude} void __tcadvisor_kernel(void) {{ {code}\n}}" if wrap else f"{prelude} {code}"
        try:
            return parser.parse(text, where.filename), wrap
        except RecursionError:
            raise where.error(None, f"the code nests too deeply to parse; expected an ordinary loop nest") from None
        except Exception as exc:  # noqa: BLE001 - pycparser's ParseError (and its lexer's errors)
            line = _parse_error_line(exc, parser)
            message = re.sub(r"^.*?:\d+(?::\d+)?:\s*", "", str(exc)) or type(exc).__name__
            message = re.sub(rf"^{re.escape(where.filename)}:\s*", "", message)
            failures.append((line or 0, message))
    line, message = max(failures, key=lambda f: f[0])  # the reading that got further
    kind = "C++/CUDA file" if cxx else "file"
    raise where.error(line or None, f"the {kind}'s loop does not parse as C ({_shown(message, 80)}); tcadvisor reads "
                                    "C99 loop nests" + (" (CUDA's __global__, __device__ and __restrict__ are "
                                                        "dropped; other C++ is not read)" if cxx else ""))


# --------------------------------------------------------------------------- finding the update

@dataclass(frozen=True)
class _Loop:
    var: str | None
    step: int | None  # ±1 unit stride; None: not recognised
    line: int
    step_text: str
    thread: bool = False  # a CUDA thread index (unit stride across threads)


@dataclass
class _Context:
    loops: tuple = ()
    index: dict = dc_field(default_factory=dict)  # CUDA thread-index variables -> _Loop
    guards: tuple = ()
    body: Any = None  # the innermost loop (or kernel function) whose body holds a statement
    func: Any = None

    def inside(self, **changes) -> "_Context":
        new = _Context(self.loops, dict(self.index), self.guards, self.body, self.func)
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    @property
    def in_loop(self) -> bool:
        return bool(self.loops) or bool(self.index)


@dataclass
class _Update:
    node: Any
    ctx: _Context
    out: str
    reads: set


def _line(node) -> int | None:
    coord = getattr(node, "coord", None)
    return getattr(coord, "line", None)


def _text(node) -> str:
    from pycparser import c_generator

    try:
        return _shown(c_generator.CGenerator().visit(node))
    except Exception:  # noqa: BLE001 - only the message's quote is lost
        return type(node).__name__


def _mentions_thread_index(node) -> bool:
    from pycparser import c_ast

    for n in _nodes(node):
        if isinstance(n, c_ast.StructRef) and isinstance(n.name, c_ast.ID) and n.name.name == "threadIdx":
            return True
    return False


def _nodes(node, limit: int = MAX_EXPRESSION_NODES * 4):
    """Every node under ``node`` (iterative, bounded)."""
    stack, seen = [node], 0
    while stack:
        n = stack.pop()
        if n is None:
            continue
        seen += 1
        if seen > limit:
            return
        yield n
        stack.extend(child for _, child in n.children())


def _array_base(node):
    """``a`` and the subscript nodes (outermost first) of ``a[j][i]``; None for a base that is not a name."""
    from pycparser import c_ast

    subs = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    if not isinstance(node, c_ast.ID):
        return None, list(reversed(subs))
    return node.name, list(reversed(subs))


def _top_reads(node) -> set:
    """The names of the arrays an expression reads (outermost array references)."""
    from pycparser import c_ast

    names, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ArrayRef):
            name, _ = _array_base(n)
            if name is not None:
                names.add(name)
            continue
        if n is not None:
            stack.extend(child for _, child in n.children())
    return names


def _loop_of(node, where: _Where) -> _Loop:
    """The variable and step of a ``for`` header."""
    from pycparser import c_ast

    var, thread = None, False
    init = node.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        var, thread = init.decls[0].name, _mentions_thread_index(init.decls[0].init)
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        var, thread = init.lvalue.name, _mentions_thread_index(init.rvalue)
    nxt, step = node.next, None
    target = None
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("p++", "++", "p--", "--") and isinstance(nxt.expr, c_ast.ID):
        target, step = nxt.expr.name, 1 if "++" in nxt.op else -1
    elif isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID):
        target = nxt.lvalue.name
        value = _int_constant(nxt.rvalue)
        if nxt.op in ("+=", "-=") and value is not None:
            step = value if nxt.op == "+=" else -value
        elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in ("+", "-"):
            left, right = nxt.rvalue.left, nxt.rvalue.right
            if isinstance(left, c_ast.ID) and left.name == target and _int_constant(right) is not None:
                step = _int_constant(right) * (1 if nxt.rvalue.op == "+" else -1)
            elif nxt.rvalue.op == "+" and isinstance(right, c_ast.ID) and right.name == target:
                step = _int_constant(left)
    if var is None:
        var = target
    elif target is not None and target != var:
        step = None
    return _Loop(var, step, _line(node) or 0, _text(nxt) if nxt is not None else "no step", thread)


def _int_constant(node) -> int | None:
    from pycparser import c_ast

    if isinstance(node, c_ast.Constant) and node.type == "int":
        try:
            return _c_int(node.value)
        except ValueError:
            return None
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        inner = _int_constant(node.expr)
        return None if inner is None else -inner
    return None


def _c_int(text: str) -> int:
    digits = text.rstrip("uUlL")
    if digits.lower().startswith(("0x", "0b")):
        return int(digits, 0)
    if len(digits) > 1 and digits.startswith("0"):
        return int(digits, 8)
    return int(digits)


class _Finder:
    """Walks the AST: every array-element assignment inside a loop (or a CUDA thread-indexed function), and
    the statements of every innermost body."""

    def __init__(self, where: _Where):
        self.where = where
        self.updates: list[_Update] = []
        self.statements: dict[int, list] = {}  # id(body) -> [(line, text)]
        self.loops: list[_Loop] = []

    def statement(self, ctx: _Context, node) -> None:
        if ctx.in_loop:
            self.statements.setdefault(id(ctx.body), []).append((_line(node), _text(node)))

    def walk(self, node, ctx: _Context) -> None:
        from pycparser import c_ast

        if node is None:
            return
        if isinstance(node, c_ast.FileAST):
            for item in node.ext:
                self.walk(item, ctx)
        elif isinstance(node, c_ast.FuncDef):
            self.walk(node.body, _Context(func=node, body=node))
        elif isinstance(node, c_ast.For):
            loop = _loop_of(node, self.where)
            self.loops.append(loop)
            inner = ctx.inside(loops=ctx.loops + (loop,), body=node)
            if loop.thread and loop.var:
                inner.index[loop.var] = loop
            self.walk(node.stmt, inner)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            loop = _Loop(None, None, _line(node) or 0, "while")
            self.loops.append(loop)
            self.walk(node.stmt, ctx.inside(loops=ctx.loops + (loop,), body=node))
        elif isinstance(node, c_ast.Compound):
            scope = ctx.inside()  # thread indices declared here hold for the statements after them
            for item in node.block_items or []:
                self.walk(item, scope)
        elif isinstance(node, c_ast.If):
            guarded = ctx.inside(guards=ctx.guards + (_line(node),))
            self.walk(node.iftrue, guarded)
            self.walk(node.iffalse, guarded)
        elif isinstance(node, c_ast.DeclList):
            for decl in node.decls:
                self.walk(decl, ctx)
        elif isinstance(node, c_ast.Decl):
            if node.init is not None and not isinstance(node.type, c_ast.FuncDecl):
                if _mentions_thread_index(node.init):
                    self.thread_index(node.name, node.init, node, ctx)
                elif ctx.in_loop and _top_reads(node.init):
                    self.statement(ctx, node)  # a temporary computed from the arrays: a statement of the body
        elif isinstance(node, c_ast.ExprList):
            for expr in node.exprs:
                self.walk(expr, ctx)
        elif isinstance(node, c_ast.Assignment):
            if isinstance(node.lvalue, c_ast.ID) and _mentions_thread_index(node.rvalue):
                self.thread_index(node.lvalue.name, node.rvalue, node, ctx)
                return
            self.statement(ctx, node)
            if isinstance(node.lvalue, c_ast.ArrayRef) and ctx.in_loop:
                out, _ = _array_base(node.lvalue)
                if out is not None:
                    self.updates.append(_Update(node, ctx, out, _top_reads(node.rvalue)))
        elif isinstance(node, (c_ast.UnaryOp, c_ast.FuncCall)):
            self.statement(ctx, node)
        elif isinstance(node, (c_ast.Label, c_ast.Case, c_ast.Default)):
            self.walk(node.stmt, ctx)
        elif isinstance(node, c_ast.Switch):
            self.walk(node.stmt, ctx)

    def thread_index(self, name: str, init, node, ctx: _Context) -> None:
        loop = _Loop(name, 1, _line(node) or 0, _text(init), thread=True)
        self.loops.append(loop)
        ctx.index[name] = loop
        if ctx.body is None or not ctx.loops:
            ctx.body = ctx.func


# --------------------------------------------------------------------------- declarations

class _Declarations:
    """Every declaration of the file by name: arrays (their element type), scalars (const, initialiser, type)."""

    def __init__(self, ast):
        from pycparser import c_ast

        self.by_name: dict[str, list] = {}
        self.typedefs: dict[str, Any] = {}
        stack = [(ast, None)]
        while stack:
            node, func = stack.pop()
            if isinstance(node, c_ast.FuncDef):
                func = node
            if isinstance(node, c_ast.Typedef):
                self.typedefs[node.name] = node.type
            elif isinstance(node, c_ast.Decl) and node.name and not isinstance(node.type, c_ast.FuncDecl):
                self.by_name.setdefault(node.name, []).append((node, func))
            stack.extend((child, func) for _, child in node.children())

    def find(self, name: str, func) -> Any:
        """The declaration of ``name`` seen from inside ``func``: its own (parameters, locals), else the file's."""
        found = self.by_name.get(name, [])
        for decl, owner in found:
            if owner is func and func is not None:
                return decl
        for decl, owner in found:
            if owner is None or getattr(getattr(owner, "decl", None), "name", "") == "__tcadvisor_kernel":
                return decl
        return found[0][0] if found else None

    def base_type(self, decl) -> tuple[list[str], bool]:
        """The element type's names of a declaration (typedefs followed) and whether it is an array or pointer."""
        from pycparser import c_ast

        node, indexed, seen = decl.type, False, 0
        while seen < 64:
            seen += 1
            if isinstance(node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                indexed = True
                node = node.type
            elif isinstance(node, c_ast.TypeDecl):
                node = node.type
            elif isinstance(node, c_ast.IdentifierType):
                names = [n for n in node.names]
                if len(names) == 1 and names[0] in self.typedefs and names[0] not in ELEMENT_DTYPES:
                    node = self.typedefs[names[0]]
                    continue
                return names, indexed
            else:
                return [type(node).__name__], indexed
        return ["?"], indexed

    def is_const(self, decl) -> bool:
        return "const" in (decl.quals or []) or "const" in (getattr(decl.type, "quals", None) or [])


# --------------------------------------------------------------------------- the right-hand side: linear in reads

@dataclass
class _Linear:
    """An expression linear in the reads: {(array, offset): coefficient} plus a constant; coefficients SymPy."""

    terms: dict
    const: Any
    is_int: bool = False


class _Reader:
    """The update's right-hand side as a :class:`_Linear` form (the reads are its symbols)."""

    def __init__(self, where: _Where, line: int, decls: _Declarations, func, axes: list, out: str, ndims: int):
        import sympy

        self.sp = sympy
        self.where, self.line, self.decls, self.func = where, line, decls, func
        self.axes, self.out, self.ndims = axes, out, ndims
        self.index_vars = {var for var, _ in axes}
        self.loop_vars: set = set()
        self.symbols: set = set()  # scalar names left symbolic
        self.notes: list[str] = []
        self.shown: dict = {}  # (array, offset) -> the first read as written
        self.consts_seen: set = set()
        self.variables: set = set()  # names read as plain symbols (the loop variables, inside an index)

    def fail(self, node, message: str) -> TcAdvisorError:
        return self.where.error(_line(node) or self.line, message)

    def number(self, value, is_int=False) -> _Linear:
        return _Linear({}, value, is_int)

    def convert(self, node, depth: int = 0) -> _Linear:
        from pycparser import c_ast

        if depth > MAX_EXPRESSION_DEPTH:
            raise self.fail(node, f"the update's expression nests more than {MAX_EXPRESSION_DEPTH} deep; expected "
                                  "an ordinary stencil expression")
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
            chain = []
            while isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
                chain.append((node.op, node.right))
                node = node.left
            total = self.convert(node, depth + 1)
            for op, operand in reversed(chain):
                part = self.convert(operand, depth + 1)
                total = self.add(total, part, -1 if op == "-" else 1)
            return total
        if isinstance(node, c_ast.BinaryOp) and node.op in ("*", "/"):
            chain = []
            top = node
            while isinstance(node, c_ast.BinaryOp) and node.op in ("*", "/"):
                chain.append((node.op, node.right, node))
                node = node.left
            total = self.convert(node, depth + 1)
            for op, operand, whole in reversed(chain):
                part = self.convert(operand, depth + 1)
                total = self.multiply(total, part, whole) if op == "*" else self.divide(total, part, whole)
            return total
        if isinstance(node, c_ast.BinaryOp):
            raise self.fail(node, f"the operator {node.op} in {_text(node)!r} is not read; expected a linear "
                                  "expression of the reads (+, -, *, / by constants)")
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("-", "+"):
                inner = self.convert(node.expr, depth + 1)
                return self.scale(inner, -1) if node.op == "-" else inner
            raise self.fail(node, f"the operator {node.op} in {_text(node)!r} is not read; expected a linear "
                                  "expression of the reads")
        if isinstance(node, c_ast.Constant):
            return self.constant(node)
        if isinstance(node, c_ast.ID):
            return self.scalar(node, depth)
        if isinstance(node, c_ast.ArrayRef):
            return self.read(node)
        if isinstance(node, c_ast.Cast):
            return self.cast(node, depth)
        if isinstance(node, c_ast.FuncCall):
            return self.call(node, depth)
        kind = {"TernaryOp": "a conditional (?:)", "StructRef": "a member access", "Assignment": "an assignment",
                "ExprList": "a comma expression"}.get(type(node).__name__, type(node).__name__)
        raise self.fail(node, f"{kind} {_text(node)!r} in the update is not read; expected a linear expression of "
                              "the reads with constant or scalar coefficients")

    # arithmetic -----------------------------------------------------------
    def add(self, a: _Linear, b: _Linear, sign: int) -> _Linear:
        terms = dict(a.terms)
        for key, c in b.terms.items():
            terms[key] = terms.get(key, 0) + sign * c
        return _Linear(terms, a.const + sign * b.const, a.is_int and b.is_int)

    def scale(self, a: _Linear, factor) -> _Linear:
        return _Linear({k: self.bounded(c * factor) for k, c in a.terms.items()}, self.bounded(a.const * factor),
                       a.is_int)

    def bounded(self, value):
        """An exact rational kept exact up to :data:`MAX_RATIONAL_BITS`, else read as a float (1e300 multiplied by
        itself a thousand times is not carried as a 300,000-digit integer); one beyond a double is refused."""
        sp = self.sp
        if isinstance(value, sp.Rational):  # Integers too
            p, q = int(value.p), int(value.q)
            if p.bit_length() + q.bit_length() > MAX_RATIONAL_BITS:
                try:
                    number = p / q
                except OverflowError:
                    number = math.inf
                if not math.isfinite(number):
                    raise self.fail(None, "a coefficient overflows a double; expected finite coefficients")
                return sp.Float(number)
        return value

    def multiply(self, a: _Linear, b: _Linear, node) -> _Linear:
        if a.terms and b.terms:
            raise self.fail(node, f"the product {_text(node)!r} multiplies two reads; the update must be linear in "
                                  "the reads (a weighted sum, each read times a coefficient)")
        if b.terms:
            a, b = b, a
        out = self.scale(a, b.const)
        out.is_int = a.is_int and b.is_int
        return out

    def divide(self, a: _Linear, b: _Linear, node) -> _Linear:
        sp = self.sp
        if b.terms:
            raise self.fail(node, f"the division {_text(node)!r} divides by a read; the update must be linear in "
                                  "the reads (divide only by constants or scalars)")
        if b.const == 0:
            raise self.fail(node, f"the division {_text(node)!r} divides by zero")
        if a.is_int and b.is_int:
            if a.terms or a.const.free_symbols or b.const.free_symbols:
                raise self.fail(node, f"{_text(node)!r} is C's integer division of non-constants; write "
                                      "a floating-point constant (e.g. 1.0/n)")
            p, q = int(a.const), int(b.const)
            quotient = abs(p) // abs(q) * (1 if (p >= 0) == (q > 0) else -1)
            if quotient * q != p:
                self.notes.append(f"{_text(node)} on line {_line(node) or self.line} is C's integer division "
                                  f"(= {quotient}), read as C computes it")
            return _Linear({}, sp.Integer(quotient), True)
        out = self.scale(a, 1 / b.const)
        out.is_int = False
        return out

    # leaves ---------------------------------------------------------------
    def constant(self, node) -> _Linear:
        sp = self.sp
        text = node.value
        try:
            if node.type in ("int", "unsigned int", "long int", "unsigned long int", "long long int",
                             "unsigned long long int"):
                return self.number(sp.Integer(_c_int(text)), True)
            if node.type in ("double", "float", "long double"):
                digits = text.rstrip("fFlL")
                if digits.lower().startswith("0x"):
                    value = fractions.Fraction(float.fromhex(digits))
                else:
                    exponent = re.search(r"[eE]([+-]?\d+)$", digits)
                    if exponent and abs(int(exponent.group(1))) > MAX_LITERAL_EXPONENT:  # 10**1e9 is never built
                        as_float = float(digits)
                        if not math.isfinite(as_float):
                            raise self.fail(node, f"the constant {_shown(text)!r} overflows a double; expected a "
                                                  "finite coefficient")
                        value = fractions.Fraction(as_float)
                    else:
                        value = fractions.Fraction(digits)
                return self.number(sp.Rational(value.numerator, value.denominator))
        except (ValueError, ZeroDivisionError, OverflowError):
            pass
        raise self.fail(node, f"the constant {_shown(text)!r} in the update is not a number tcadvisor reads; "
                              "expected an integer or floating-point literal")

    def scalar(self, node, depth: int) -> _Linear:
        sp = self.sp
        name = node.name
        if name in self.variables:  # a loop variable or CUDA thread index (const int i = ... is not a coefficient)
            return _Linear({}, sp.Symbol(name), True)
        if name in self.index_vars or name in self.loop_vars:
            raise self.fail(node, f"the loop variable {name} is used as a value in the update (a coefficient that "
                                  "varies with the point); expected coefficients that are the same at every point")
        decl = self.decls.find(name, self.func)
        if decl is not None:
            names, indexed = self.decls.base_type(decl)
            if indexed:
                raise self.fail(node, f"the array {name} is used without an index in the update; expected its "
                                      f"elements, e.g. {name}[i]")
            if self.decls.is_const(decl) and decl.init is not None and name not in self.consts_seen:
                self.consts_seen.add(name)
                try:
                    value = self.convert(decl.init, depth + 1)
                finally:
                    self.consts_seen.discard(name)
                if value.terms:
                    raise self.fail(decl, f"the const {name} = {_text(decl.init)!r} reads an array; expected a "
                                          "constant coefficient")
                return value
            is_int = bool(set(names) & _INT_TYPES) and not {"float", "double"} & set(names)
        else:
            is_int = False
        self.symbols.add(name)
        return _Linear({}, sp.Symbol(name), is_int)

    def cast(self, node, depth: int) -> _Linear:
        inner = self.convert(node.expr, depth + 1)
        names = []
        for n in _nodes(node.to_type):
            names.extend(getattr(n, "names", None) or [])
        if set(names) & _INT_TYPES and not {"float", "double"} & set(names):
            if inner.terms or inner.const.free_symbols:
                raise self.fail(node, f"the cast {_text(node)!r} truncates a non-constant to an integer; expected "
                                      "a floating-point coefficient")
            return self.number(self.sp.Integer(int(inner.const)), True)
        return _Linear(inner.terms, inner.const, False)

    def call(self, node, depth: int) -> _Linear:
        sp = self.sp
        name = node.name.name if hasattr(node.name, "name") and isinstance(node.name.name, str) else _text(node.name)
        args = node.args.exprs if node.args is not None else []
        base = name[:-1] if name.endswith("f") and name[:-1] in _MATH else name
        values = [self.convert(a, depth + 1) for a in args]
        if any(v.terms for v in values):
            raise self.fail(node, f"the call {_text(node)!r} takes a read of an array; the update must be linear "
                                  "in the reads (functions only of constants and scalars)")
        if base not in _MATH or len(values) != (2 if base == "pow" else 1):
            raise self.fail(node, f"the call {_text(node)!r} is not read; expected constants, scalars and "
                                  f"{', '.join(sorted(_MATH))} of them")
        args = [v.const for v in values]
        if not any(a.free_symbols for a in args):  # numbers: computed in floating point, as C would (bounded)
            try:
                numbers = [float(a) for a in args]
                result = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos,
                          "tan": math.tan, "pow": math.pow, "fabs": math.fabs}[base](*numbers)
            except (OverflowError, ValueError, ZeroDivisionError):
                result = math.nan
            if not math.isfinite(result):
                raise self.fail(node, f"the call {_text(node)!r} is not a finite number; expected finite "
                                      "coefficients")
            return self.number(sp.Float(result))
        function = getattr(sp, _MATH[base])
        return self.number(function(*args))

    def read(self, node) -> _Linear:
        name, subs = _array_base(node)
        if name is None:
            raise self.fail(node, f"the array access {_text(node)!r} is not of a named array; expected e.g. a[j][i]")
        if name == self.out:
            raise self.fail(node, f"the update of {self.out} reads {self.out} itself ({_text(node)}): an in-place "
                                  "update, whose reads see values already updated; write the result to another "
                                  "array")
        if len(subs) != self.ndims:
            raise self.fail(node, f"{_text(node)} has {len(subs)} subscript{'s' if len(subs) != 1 else ''} while "
                                  f"{self.out} is written with {self.ndims}; expected one per axis")
        offset = tuple(self.offset(node, axis, sub) for axis, sub in enumerate(subs))
        key = (name, offset)
        self.shown.setdefault(key, _text(node))
        return _Linear({key: self.sp.Integer(1)}, self.sp.Integer(0), False)

    def offset(self, node, axis: int, sub) -> int:
        var, rest = self.axes[axis]
        poly = _affine(sub, self, node)
        coeffs, constant = poly
        used = {v: c for v, c in coeffs.items() if c != 0}
        if var not in used:
            if not used:
                raise self.fail(node, f"{_text(node)} reads a fixed index along axis {axis} (not moving with the "
                                      f"written point, {self.out}'s {var}); expected {var} plus a constant")
            other = next(iter(used))
            raise self.fail(node, f"{_text(node)} indexes axis {axis} with {other}, but {self.out} is written with "
                                  f"{var} along that axis (a transposed read); each axis must be read with the loop "
                                  "variable it is written with, plus a constant")
        if len(used) > 1:
            raise self.fail(node, f"the index {_text(sub)} of {_text(node)} mixes axes ({', '.join(sorted(used))}); "
                                  f"each axis is indexed by its own loop variable plus a constant")
        if used[var] != 1:
            raise self.fail(node, f"the index {_text(sub)} of {_text(node)} has stride {used[var]} along axis {axis}; "
                                  f"tcadvisor reads unit-stride indices ({var} plus a constant)")
        diff = self.sp.simplify(constant - rest)
        if not diff.is_Integer:
            raise self.fail(node, f"the offset {diff} of {_text(node)} along axis {axis} is not a constant; expected "
                                  f"{var} plus an integer constant")
        return int(diff)


def _affine(sub, reader: _Reader, node) -> tuple[dict, Any]:
    """An index as ({loop variable: coefficient}, the rest), or a one-line refusal for a non-affine index."""
    from pycparser import c_ast

    sp = reader.sp
    count = sum(1 for _ in _nodes(sub, 1000))
    if count >= 1000:
        raise reader.fail(node, f"the index of {_text(node)} is too long; expected a loop variable plus a constant")
    for n in _nodes(sub):
        if isinstance(n, c_ast.ArrayRef):
            raise reader.fail(node, f"the index {_text(sub)} of {_text(node)} reads an array (indirect access); "
                                    "expected a loop variable plus a constant")
        if not isinstance(n, (c_ast.BinaryOp, c_ast.UnaryOp, c_ast.ID, c_ast.Constant, c_ast.Cast, c_ast.Typename,
                              c_ast.TypeDecl, c_ast.IdentifierType)) or (
                isinstance(n, c_ast.BinaryOp) and n.op not in ("+", "-", "*", "/")) or (
                isinstance(n, c_ast.UnaryOp) and n.op not in ("+", "-")):
            raise reader.fail(node, f"the index {_text(sub)} of {_text(node)} is not affine; expected a loop "
                                    "variable plus a constant")
    variables = sorted(reader.index_vars | reader.loop_vars)
    saved = (reader.index_vars, reader.loop_vars, set(reader.symbols), reader.variables)
    reader.index_vars, reader.loop_vars, reader.variables = set(), set(), set(variables)
    try:
        value = reader.convert(sub)
    finally:
        reader.index_vars, reader.loop_vars, reader.symbols, reader.variables = saved
    expr = sp.expand(value.const)
    symbols = [sp.Symbol(v) for v in variables]
    try:
        poly = sp.Poly(expr, *symbols) if symbols else None
    except sp.PolynomialError:
        poly = None
    if symbols and (poly is None or poly.total_degree() > 1 or any(
            sp.Poly(expr, *symbols).coeff_monomial(s).free_symbols & set(symbols) for s in symbols)):
        raise reader.fail(node, f"the index {_text(sub)} of {_text(node)} is not affine in the loop variables; "
                                "expected a loop variable plus a constant")
    coeffs = {v: poly.coeff_monomial(s) for v, s in zip(variables, symbols)} if symbols else {}
    for v, c in coeffs.items():
        if c.free_symbols:
            raise reader.fail(node, f"the index {_text(sub)} of {_text(node)} has stride {c} along {v}; tcadvisor "
                                    f"reads unit-stride indices ({v} plus a constant); flattened indices such as "
                                    "a[j*n + i] are not read, declare the array with one subscript per axis")
    rest = expr - sum((c * s for c, s in zip(coeffs.values(), symbols)), sp.Integer(0))
    return {v: int(c) if c.is_Integer else c for v, c in coeffs.items()}, sp.expand(rest)


# --------------------------------------------------------------------------- the reader

def _check_values(values: Any) -> dict[str, float]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise TcAdvisorError(f"values {short_repr(values)} ({type(values).__name__}) is not a mapping; expected "
                             "{name: number}, e.g. {'dt': 0.1}")
    out = {}
    for key, value in values.items():
        if not isinstance(key, str) or not _IDENT.fullmatch(key):
            raise TcAdvisorError(f"values names {short_repr(key)}, which is not a C identifier; expected "
                                 "{name: number}, e.g. {'dt': 0.1}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            try:
                import numpy as np

                ok = isinstance(value, (np.integer, np.floating)) and math.isfinite(float(value))
            except Exception:  # noqa: BLE001
                ok = False
            if not ok:
                raise TcAdvisorError(f"values gives {key} = {short_repr(value)}; expected a finite number")
        out[key] = float(value)
    return out


def _describe(update: _Update) -> str:
    reads = ", ".join(sorted(update.reads)) or "no array"
    return f"line {_line(update.node)} ({update.out} from {reads})"


def _choose(finder: _Finder, where: _Where, field: str | None) -> _Update:
    """The one update the stencil is read from, or a one-line refusal."""
    if not finder.loops:
        raise where.error(None, "no loop found; expected a for loop nest (or a CUDA kernel indexed by threadIdx) "
                                "whose innermost statement updates an array, e.g. b[i] = a[i-1] + a[i+1]")
    if not finder.updates:
        line = min(loop.line for loop in finder.loops)
        raise where.error(line, "the loop's body assigns no array element; expected an update such as "
                                "b[j][i] = c0*a[j][i] + c1*(a[j][i-1] + a[j][i+1])")
    if field is not None:
        chosen = [u for u in finder.updates if field in u.reads]
        if not chosen:
            written = [u for u in finder.updates if u.out == field]
            if written:
                raise where.error(_line(written[0].node), f"field {field!r} names the array written here; field= "
                                  f"(--field) names the source array, the one the update reads "
                                  f"({', '.join(sorted(written[0].reads)) or 'none'})")
            read = sorted({a for u in finder.updates for a in u.reads})
            raise where.error(None, f"field {field!r} is not read by any loop-nest update; the updates read "
                                    f"{', '.join(read) or 'no array'}")
    else:
        chosen = [u for u in finder.updates if u.reads or u.node.op != "="]
        if not chosen:
            u = finder.updates[0]
            _one_statement(finder, u, where)  # b[i] = 0.5*t after double t = a[i-1] + a[i+1]: a temporary
            raise where.error(_line(u.node), f"the loop's update {_text(u.node)!r} reads no array; expected an "
                                             "update that reads the source array, e.g. b[i] = a[i-1] + a[i+1]")
    bodies = []
    for u in chosen:
        if not any(u.ctx.body is b for b in bodies):
            bodies.append(u.ctx.body)
    if len(bodies) > 1:
        shown = "; ".join(_describe(u) for u in chosen[:4]) + ("; ..." if len(chosen) > 4 else "")
        hint = (f"each reads {field}; tcadvisor reads one update" if field is not None else
                "field= (--field) names the source array of the one to model")
        raise where.error(None, f"{len(chosen)} loop-nest updates: {shown}; {hint}")
    update = chosen[0]
    _one_statement(finder, update, where)
    return update


def _one_statement(finder: _Finder, update: _Update, where: _Where) -> None:
    """Refuse, naming them, the statements beside the update in its innermost body (a temporary, a second
    update): tcadvisor reads a body of one assignment."""
    statements = finder.statements.get(id(update.ctx.body), [])
    if len(statements) > 1:
        shown = ", ".join(f"line {line}: {text}" for line, text in statements[:3])
        raise where.error(statements[1][0] or _line(update.node),
                          f"the innermost loop body holds {len(statements)} statements ({_shown(shown, 140)}); "
                          "tcadvisor reads a body of one assignment (one update per loop nest)")


def from_c_text(text: str, *, filename: str = "<string>", field: str | None = None, values: Mapping | None = None,
                name: str | None = None) -> StencilSource:
    """The stencil of the C loop nest in ``text`` (rules in the module docstring).

    ``filename`` names the text in messages and in ``read_from`` (and, where it is
    a file's name, names the stencil after its stem unless ``name`` is given);
    ``field`` names the source array (the array whose reads make the stencil) where
    the file has several loop-nest updates or the update reads several arrays;
    ``values`` gives numbers ``{name: number}`` for the update's symbolic scalar
    coefficients.  Nothing is compiled or run.
    """
    if not isinstance(text, str):
        raise TcAdvisorError(f"C text {short_repr(text)} ({type(text).__name__}) is not a string")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_C_BYTES:
        raise TcAdvisorError(f"C text {filename} is too large: more than {MAX_C_BYTES >> 20} MiB; expected a loop "
                             "nest (a few kilobytes)")
    if field is not None and (not isinstance(field, str) or not _IDENT.fullmatch(field)):
        raise TcAdvisorError(f"field {short_repr(field)} is not a C identifier; expected the name of the array "
                             "the update reads, e.g. field='a' (--field a)")
    given = _check_values(values)
    where = _Where(filename)
    cxx = Path(filename).suffix.lower() in (".cpp", ".cc", ".cu", ".h", ".hpp", ".cuh")
    code, macros = _preprocess(text, where)
    tokens = sum(1 for _ in zip(range(MAX_TOKENS + 1), _ANY_TOKEN.finditer(code)))
    if tokens > MAX_TOKENS:
        raise where.error(None, f"the code has more than {MAX_TOKENS} tokens after #define expansion; tcadvisor "
                                "reads loop nests of ordinary size (a stencil update of at most a few thousand reads)")
    ast, _wrapped = _parse(code, where, cxx)
    finder = _Finder(where)
    finder.walk(ast, _Context())
    update = _choose(finder, where, field)
    return _read_update(update, ast, where, field, given, macros,
                        name if name is not None else (Path(filename).stem if filename != "<string>" else None))


def _read_update(update: _Update, ast, where: _Where, field: str | None, given: dict, macros: _Macros,
                 name: str | None) -> StencilSource:
    import sympy as sp

    from .arrays import _coefficient

    node, ctx = update.node, update.ctx
    line = _line(node) or 0
    if node.op != "=":
        raise where.error(line, f"the compound assignment {_text(node)!r} ({node.op}) also reads {update.out}, an "
                                f"accumulation into the output; write the whole update, {update.out}[...] = ..., "
                                "which tcadvisor reads")
    decls = _Declarations(ast)
    out, subs = _array_base(node.lvalue)
    loops = {loop.var: loop for loop in ctx.loops if loop.var}
    loops.update(ctx.index)
    if len(subs) > MAX_DIMS:
        raise where.error(line, f"{_text(node.lvalue)} has {len(subs)} subscripts; a stencil has 1 to {MAX_DIMS} axes")
    reader = _Reader(where, line, decls, ctx.func, [], out, len(subs))
    reader.loop_vars = set(loops)
    axes = []
    for axis, sub in enumerate(subs):
        coeffs, rest = _affine(sub, reader, node.lvalue)
        used = {v: c for v, c in coeffs.items() if c != 0}
        if len(used) != 1:
            what = "no loop variable" if not used else f"several loop variables ({', '.join(sorted(used))})"
            raise where.error(line, f"the written element {_text(node.lvalue)} has {what} along axis {axis}; "
                                    "expected each axis written at its own loop variable (plus a constant)")
        var, coefficient = next(iter(used.items()))
        if coefficient != 1:
            raise where.error(line, f"the written element {_text(node.lvalue)} has stride {coefficient} along axis "
                                    f"{axis}; tcadvisor reads unit-stride updates ({var} plus a constant)")
        if any(var == v for v, _ in axes):
            raise where.error(line, f"the written element {_text(node.lvalue)} uses {var} along two axes; expected "
                                    "one loop variable per axis")
        loop = loops[var]
        if not loop.thread and loop.step not in (1, -1):
            step = f"step {loop.step}" if loop.step is not None else "a step tcadvisor does not read"
            raise where.error(loop.line, f"the loop variable {var} runs with {step} ({loop.step_text}); tcadvisor "
                                         f"reads unit-stride loops ({var}++, {var} += 1), which update every point")
        axes.append((var, rest))
    reader.axes = axes
    reader.index_vars = {v for v, _ in axes}
    rhs = node.rvalue
    nodes = sum(1 for _ in _nodes(rhs, MAX_EXPRESSION_NODES + 1))
    if nodes > MAX_EXPRESSION_NODES:
        raise where.error(line, f"the update's expression has more than {MAX_EXPRESSION_NODES} parts; expected a "
                                "stencil of at most a few thousand reads")
    try:
        form = reader.convert(rhs)
    except RecursionError:
        raise where.error(line, "the update's expression nests too deeply; expected an ordinary stencil "
                                "expression") from None
    arrays = sorted({array for array, _ in form.terms})
    if not arrays:
        raise where.error(line, f"the update {_text(node)!r} reads no array; expected an update that reads the "
                                "source array, e.g. b[i] = a[i-1] + a[i+1]")
    notes = []
    if field is None:
        if len(arrays) > 1:
            raise where.error(line, f"the update of {out} reads several arrays ({', '.join(arrays)}); field= "
                                    "(--field) names the one whose stencil to model")
        source = arrays[0]
    else:
        source = field
        others = [a for a in arrays if a != field]
        for other in others:
            count = sum(1 for array, _ in form.terms if array == other)
            notes.append(f"the {count} read{'s' if count != 1 else ''} of {other} on line {line} "
                         f"{'are' if count != 1 else 'is'} not part of the stencil, which is the update's "
                         f"dependence on {field} (field={field})")
    # values: only for the update's symbolic scalars
    unused = sorted(set(given) - reader.symbols)
    if unused:
        bad = unused[0]
        symbolic = ", ".join(sorted(reader.symbols))
        accepts = (f"its symbolic coefficients are {symbolic}" if symbolic else
                   "it has no symbolic coefficient")
        if bad in macros.objects:
            how = f"{where.filename} #defines it on line {macros.objects[bad][1]}"
        elif any(decls.is_const(d) and d.init is not None for d, _ in decls.by_name.get(bad, [])):
            how = f"{where.filename} declares it const with a value"
        else:
            how = "the update does not use it"
        raise TcAdvisorError(f"values gives {bad} = {given[bad]:g}, but {how}; values= (--set NAME=VALUE) gives "
                             f"numbers to the update on {where.filename} line {line}: {accepts}")
    offsets, weights, symbolic = [], [], []
    for (array, offset), coefficient in form.terms.items():
        if array != source:
            continue
        try:
            number = _coefficient(offset, coefficient, given)
        except TcAdvisorError as exc:
            raise where.error(line, f"{reader.shown[(array, offset)]}: {exc}") from None
        if number is None:
            free = coefficient.subs({sp.Symbol(k): v for k, v in given.items()}).free_symbols
            symbolic.extend(sorted(s.name for s in free))
        elif number == 0.0:
            continue
        offsets.append(offset)
        weights.append(number)
    truncated = "".join(f" (note: {n})" for n in reader.notes if "integer division" in n)
    if not offsets:
        raise where.error(line, f"every coefficient of the reads of {source} cancels to zero; at least one must be "
                                f"non-zero{truncated}")
    if form.const != 0:
        notes.append(f"the term {_shown(str(form.const))} of the update on line {line} reads no array (a source "
                     "term, the same at every point) and is not part of the stencil")
    if symbolic:
        names = sorted(set(symbolic))
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        notes.append(f"coefficient{'s' if len(names) > 1 else ''} {shown} left symbolic: the stencil keeps its "
                     "support with generic non-zero weights (values= or --set NAME=VALUE gives numbers)")
    if ctx.guards:
        lines = ", ".join(str(g) for g in ctx.guards)
        notes.append(f"the update is guarded by the if on line{'s' if len(ctx.guards) > 1 else ''} {lines}; read as "
                     "the stencil where the guard holds")
    notes.extend(reader.notes)
    dtype, dtype_note = _dtype(source, decls, ctx.func, where)
    if dtype_note:
        notes.append(dtype_note)
    try:
        stencil = Stencil.from_offsets(offsets, name=name, weights=None if symbolic else weights)
    except TcAdvisorError as exc:
        raise where.error(line, f"the update of {out} from {source}: {exc}{truncated}") from None
    read_from = f"{where.filename} line {line} (the update of {out} from {source}{', ' + dtype if dtype else ''})"
    return StencilSource(stencil, dtype, read_from, tuple(notes))


def _dtype(source: str, decls: _Declarations, func, where: _Where) -> tuple[str | None, str | None]:
    decl = decls.find(source, func)
    if decl is None:
        return None, (f"{where.filename} does not declare {source}, so its element type is not known: the answer "
                      "takes the dtype given (dtype=, --dtype), else its default")
    names, _ = decls.base_type(decl)
    for n in names:
        if n in ELEMENT_DTYPES and n not in ("double", "float"):
            return ELEMENT_DTYPES[n], None
    core = [n for n in names if n not in ("const", "volatile", "restrict")]
    if core == ["double"]:
        return "double", None
    if core == ["float"]:
        return "float", None
    if set(core) & _INT_TYPES and not {"double", "float"} & set(core):
        raise where.error(_line(decl), f"{source} is declared {' '.join(names)} (integer); expected a floating-point "
                                       "element type (double, float, half/__half, __nv_bfloat16), as the kernels "
                                       "compute in floating point")
    return None, (f"{source} is declared {' '.join(names)} on line {_line(decl)}, an element type tcadvisor does not "
                  "model (double, float, half, bfloat16): the answer takes the dtype given (dtype=, --dtype), else "
                  "its default")


def from_c_file(path: str | os.PathLike, *, field: str | None = None, values: Mapping | None = None,
                name: str | None = None) -> StencilSource:
    """The stencil of the C, C++ or CUDA loop nest in the file ``path`` (at most :data:`MAX_C_BYTES`, read as
    UTF-8 text, never compiled or run), named after the file's stem; see :func:`from_c_text`."""
    from ..files import read_text

    text = os.fspath(path)
    content = read_text(text, "C file", MAX_C_BYTES)
    return from_c_text(content, filename=text, field=field, values=values,
                       name=Path(text).stem if name is None else name)


__all__ = ["from_c_file", "from_c_text", "MAX_C_BYTES", "MAX_DEFINE_DEPTH", "MAX_EXPANDED_CHARS", "MAX_TOKENS",
           "MAX_EXPRESSION_NODES", "ELEMENT_DTYPES"]
