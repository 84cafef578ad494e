"""Stencils from symbolic updates: pystencils assignments, Devito equations and plain SymPy expressions.

All three are SymPy expressions; one reader serves them.  It finds the *reads*
(pystencils' ``Field.Access``, Devito's function applications such as
``u(t, x + h_x, y, z)``, SymPy's ``Indexed`` such as ``u[i + 1, j]``), picks the
field to model, replaces each of its reads by one unknown per offset, checks that
the update is a weighted sum of those unknowns, and takes each weight from the
coefficients.  Conventions (``docs/sources.md`` states them for users):

* **Axis order**: an offset lists one integer per axis, in the order of the axes of
  the array the field binds to, as everywhere in :mod:`tcadvisor.sources`.
  pystencils: the field's index order (``f[1, 0]`` is +1 along the first axis of the
  NumPy array bound to ``f``).  Devito: the function's space dimensions in the
  grid's order (x, y, z), which is the order of ``u.data[t, x, y, z]`` after its time
  axis.  SymPy: the ``Indexed``'s index order.
* **One field, one time level**: an update that reads several fields, or one field
  at several time levels, is refused unless ``field=`` names the field to model.
  Then the stencil is that field's reads at its most-read time level (the latest
  on a tie); the other reads are left out and a note says which.  Other fields'
  values that multiply the reads become coefficients, one symbol per field.
* **Symbolic coefficients** (``dt``, ``h_x``, a velocity field) take numbers from
  ``values`` (``{'dt': 0.1}``); any left symbolic makes the weights generic (the
  support only), and a note says so.
* **Linear only**: a product of reads of the field (``u**2``, ``u * u[x + 1]``), a
  read inside a function (``sin(u)``) or a division by one is refused, as is an
  offset that is not a constant integer (``f[k, 0]``, a staggered ``x + h_x/2``).

pystencils and Devito are optional extras (``pip install tcadvisor[pystencils]``,
``tcadvisor[devito]``), imported only when such an expression is read; deciding
what an object is (:func:`is_pystencils`, :func:`is_devito`) imports neither.
Expressions are bounded: at most :data:`MAX_NODES` nodes, nested at most
:data:`MAX_DEPTH` deep.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..bounded import short_repr
from ..errors import TcAdvisorError
from ..stencil import MAX_RADIUS, Stencil
from .arrays import FLOAT_DTYPES, _coefficient, check_values
from .result import StencilSource

#: Most nodes an expression may have (counted in SymPy's preorder, before and after Devito's evaluation).
MAX_NODES = 100_000
#: Deepest nesting of an expression's tree that is analysed.
MAX_DEPTH = 200
#: Most equations or assignments a list may hold.
MAX_ITEMS = 1000

_EXTRAS = {"pystencils": ("pystencils", "pystencils"), "devito": ("Devito", "devito")}


@dataclass(frozen=True)
class _Read:
    """One read in an expression: the field's label, its time level (None: no time axis) and the node."""

    label: str
    level: int | None
    level_text: str | None
    node: Any


# --------------------------------------------------------------------------- detection and imports

def _module_top(obj: Any) -> str:
    return (type(obj).__module__ or "").split(".")[0]


def _holds(obj: Any, library: str) -> bool:
    """Whether ``obj`` (or the first items of a list) has a node of ``library``'s types; nothing is imported,
    and a library not yet imported cannot have made any."""
    if sys.modules.get(library) is None:
        return False
    import sympy

    items = list(obj[:MAX_ITEMS]) if isinstance(obj, (list, tuple)) else [obj]
    for item in items:
        if _module_top(item) == library:
            return True
        if isinstance(item, sympy.Basic):
            for count, node in enumerate(sympy.preorder_traversal(item)):
                if count > MAX_NODES:
                    break
                if _module_top(node) == library:
                    return True
    return False


def is_pystencils(obj: Any) -> bool:
    """Whether ``obj`` is a SymPy expression (or list) over pystencils fields (pystencils is not imported)."""
    return _holds(obj, "pystencils")


def is_devito(obj: Any) -> bool:
    """Whether ``obj`` is a SymPy expression (or list) over Devito functions (Devito is not imported)."""
    return _holds(obj, "devito")


def _require(library: str):
    """The optional library, or one line naming the extra that installs it."""
    name, extra = _EXTRAS[library]
    try:
        return importlib.import_module(library)
    except ImportError:
        raise TcAdvisorError(f"reading a {name} expression needs {name}, which is not installed; install the "
                             f"extra: pip install tcadvisor[{extra}]") from None


# --------------------------------------------------------------------------- shared checks

def _count_nodes(expr: Any, what: str) -> None:
    """Refuse an expression of more than :data:`MAX_NODES` nodes (counted without building more)."""
    import sympy

    for count, _ in enumerate(sympy.preorder_traversal(expr), 1):
        if count > MAX_NODES:
            raise TcAdvisorError(f"{what} has more than {MAX_NODES} nodes; tcadvisor reads expressions of at most "
                                 f"{MAX_NODES} (a stencil's update, not a whole program)")


def _values(values: Mapping | None) -> dict[str, Any]:
    return check_values(values)


def _field_name(field: Any) -> str | None:
    if field is None:
        return None
    if isinstance(field, str):
        return field.strip()
    name = getattr(field, "name", None)  # a pystencils Field or a Devito Function
    if isinstance(name, str):
        return name
    raise TcAdvisorError(f"field {short_repr(field)} ({type(field).__name__}) is not a field's name; expected a "
                         "string such as field='u'")


def _names(labels) -> str:
    labels = list(labels)
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else "".join(labels)


def _dtype(label: str, dtype: Any) -> tuple[str | None, str]:
    """The stencil's dtype from a field's element type, and the note that says what was taken."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name in FLOAT_DTYPES:
        return FLOAT_DTYPES[name], f"the dtype {FLOAT_DTYPES[name]} is {label}'s element type ({name})"
    return None, (f"{label} holds {name}, not a floating-point type tcadvisor models, so no dtype was taken from "
                  "it (give dtype=)")


# --------------------------------------------------------------------------- the shared reader

class _Linear:
    """The coefficient of each unknown in an expression, refusing products and functions of unknowns."""

    def __init__(self, unknowns: dict, what: str, field: str):
        self.unknowns, self.what, self.field = unknowns, what, field  # unknowns: {unknown: a read it stands for}
        self.memo: dict = {}
        self.constants: list = []  # terms added to the reads that hold none of them

    def refuse(self, node, why: str):
        shown = short_repr(str(node.xreplace(self.unknowns)))
        raise TcAdvisorError(f"{self.what} is not linear in {self.field}: {why} ({shown}); a "
                             "stencil is a weighted sum of the field's reads")

    def form(self, node, depth: int = 0) -> dict | None:
        """{unknown: coefficient} of ``node``; None when it holds no unknown."""
        import sympy

        if node in self.memo:
            return self.memo[node]
        if depth > MAX_DEPTH:
            raise TcAdvisorError(f"{self.what} is nested more than {MAX_DEPTH} levels deep; tcadvisor reads "
                                 "shallower expressions (expand it first)")
        if node in self.unknowns:
            out = {node: sympy.Integer(1)}
        elif not node.args:
            out = None
        elif isinstance(node, sympy.Derivative):
            raise TcAdvisorError(f"{self.what} holds an unevaluated derivative ({short_repr(str(node))}); write "
                                 "it as differences of reads (Devito: pass the equation, whose .evaluate is taken)")
        elif isinstance(node, sympy.Add):
            out = None
            for arg in node.args:
                part = self.form(arg, depth + 1)
                if part is None:
                    self.constants.append(arg)
                    continue
                out = out or {}
                for key, coef in part.items():
                    out.setdefault(key, []).append(coef)
            if out is not None:
                out = {key: sympy.Add(*coefs) for key, coefs in out.items()}
            else:
                self.constants = self.constants[:len(self.constants) - len(node.args)]
        elif isinstance(node, sympy.Mul):
            forms = [(arg, self.form(arg, depth + 1)) for arg in node.args]
            linear = [f for _, f in forms if f is not None]
            if len(linear) > 1:
                self.refuse(node, "a product of two of its reads")
            if linear:
                factor = sympy.Mul(*[arg for arg, f in forms if f is None])
                out = {key: factor * coef for key, coef in linear[0].items()}
            else:
                out = None
        elif isinstance(node, sympy.Pow):
            base, exponent = self.form(node.base, depth + 1), self.form(node.exp, depth + 1)
            if base is not None or exponent is not None:
                why = ("a read in an exponent" if base is None else "a division by a read"
                       if node.exp.is_negative else "a power of a read")
                self.refuse(node, why)
            out = None
        else:
            if any(self.form(arg, depth + 1) is not None for arg in node.args):
                self.refuse(node, f"a read inside {type(node).__name__}")
            out = None
        self.memo[node] = out
        return out


def _pick(reads: list[_Read], field: str | None, what: str) -> tuple[str, int | None, list[str]]:
    """The field to model, its time level and the reads left out (described), or a one-line refusal."""
    labels = list(dict.fromkeys(r.label for r in reads))
    levels: dict[str, dict] = {label: {} for label in labels}
    for r in reads:
        levels[r.label].setdefault(r.level, (r.level_text, set()))[1].add(r.node)

    def latest_first(label: str) -> list:
        return sorted(levels[label].items(), key=lambda item: -10 ** 9 if item[0] is None else -item[0])

    def described(label: str) -> str:
        texts = [text for _, (text, _) in latest_first(label) if text is not None]
        return f"{label} at {_names(texts)}" if len(texts) > 1 else label

    if not labels:
        raise TcAdvisorError(f"{what} reads no field; expected an update that reads one, e.g. "
                             "0.25*(f[1, 0] + f[-1, 0] + f[0, 1] + f[0, -1])")
    if field is None:
        if len(labels) > 1 or len(levels[labels[0]]) > 1:
            reads_text = _names([described(label) for label in labels])
            raise TcAdvisorError(f"{what} reads {reads_text}; name the field to model with field= (--field), "
                                 f"e.g. field={labels[0]!r}")
        field = labels[0]
    elif field not in levels:
        raise TcAdvisorError(f"field {field!r} is not read by {what}; it reads {_names(labels)}")
    by_level = levels[field]
    # the most-read time level (distinct reads), the latest on a tie
    level = max(by_level, key=lambda lv: (len(by_level[lv][1]), -10 ** 9 if lv is None else lv))
    left_out = []
    others = [text for lv, (text, _) in latest_first(field) if lv != level]
    if others:
        left_out.append(f"of {field} at {_names(others)}")
    left_out += [f"of {label}" for label in labels if label != field]
    return field, level, left_out


def _read(what: str, rhs: Any, reads: list[_Read], field: Any, values: Mapping | None,
          offset_of: Callable[[_Read], tuple[int, ...]]) -> tuple[Stencil, list[str], _Read]:
    """The stencil of ``rhs`` from its reads: the modelled field's offsets and coefficients, and the notes."""
    import sympy

    given = _values(values)
    label, level, left_out = _pick(reads, _field_name(field), what)
    chosen = [r for r in reads if r.label == label and r.level == level]
    level_text = chosen[0].level_text
    offsets: dict[Any, tuple[int, ...]] = {}
    for r in chosen:
        offsets.setdefault(r.node, offset_of(r))
    dims = {len(o) for o in offsets.values()}
    if len(dims) != 1:
        raise TcAdvisorError(f"{what} reads {label} with {' and '.join(map(str, sorted(dims)))} indices; "
                             "expected one count")
    unknown_of = {o: sympy.Dummy(f"{label}{list(o)}") for o in dict.fromkeys(offsets.values())}
    replace = {node: unknown_of[o] for node, o in offsets.items()}
    same_field = set()
    for r in reads:
        if r.node in replace:
            continue
        if r.label == label:  # the field at another time level: a term left out, never a coefficient
            replace[r.node] = sympy.Dummy(f"{label}({r.level_text})")
            same_field.add(replace[r.node])
        else:
            replace[r.node] = sympy.Symbol(r.label)
    expr = rhs.xreplace(replace)
    linear = _Linear({u: next(n for n, o in offsets.items() if o == off) for off, u in unknown_of.items()},
                     what, label)
    form = linear.form(expr) or {}
    at = f" at {level_text}" if level_text else ""
    if not form:
        raise TcAdvisorError(f"{what} does not depend on {label}{at} (its reads cancel); expected a weighted sum "
                             "of reads")
    offset_by_unknown = {u: o for o, u in unknown_of.items()}
    coefficients = {offset_by_unknown[u]: c for u, c in form.items()}
    for offset, coef in coefficients.items():
        if coef.free_symbols & same_field:
            raise TcAdvisorError(f"{what} is not linear in {label}: its read at offset {offset} is multiplied by a "
                                 f"read of {label} at another time level ({short_repr(str(coef))})")
    radius = max(abs(v) for o in coefficients for v in o)
    if radius > MAX_RADIUS:
        raise TcAdvisorError(f"{what} reads {label} {radius} cells away; tcadvisor models radii up to {MAX_RADIUS}")
    known = {s.name for s in expr.free_symbols if s not in same_field and s not in unknown_of.values()}
    unknown = sorted(set(given) - known)
    if unknown:
        raise TcAdvisorError(f"values names {_names(unknown)}, which {what} does not use; its symbols are "
                             f"{_names(sorted(known)) or 'none'}")
    kept, weights, symbolic, zeros = [], [], set(), 0
    for offset, coef in sorted(coefficients.items()):
        number = _coefficient(offset, coef, given)
        if number is None:
            symbolic |= {s.name for s in coef.free_symbols if s.name not in given}
        elif number == 0.0:
            zeros += 1
            continue
        kept.append(offset)
        weights.append(number)
    if not kept:
        raise TcAdvisorError(f"every coefficient of {label}'s reads in {what} is zero with values {given}; at "
                             "least one must be non-zero")
    try:
        stencil = Stencil.from_offsets(kept, weights=None if symbolic else weights)
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"{what}: {exc}") from None
    notes = []
    if left_out:
        notes.append(f"reads {_names(left_out)} are left out: the stencil is {label}'s reads{at}")
    coefficient_fields = sorted({r.label for r in reads if r.label != label}
                                & {s.name for c in coefficients.values() for s in c.free_symbols})
    if coefficient_fields:
        notes.append(f"{_names(coefficient_fields)} multipl{'ies' if len(coefficient_fields) == 1 else 'y'} "
                     f"{label}'s reads, so {'it is' if len(coefficient_fields) == 1 else 'they are'} taken as a "
                     "coefficient (one value per field, from values= or generic)")
    sources = [c for c in linear.constants if not c.free_symbols & set(replace.values())]
    if sources:
        notes.append(f"{'a term' if len(sources) == 1 else f'{len(sources)} terms'} without any read "
                     f"({short_repr(str(sympy.Add(*sources)))}) {'is' if len(sources) == 1 else 'are'} left out: a "
                     "source term is not part of the stencil")
    used = sorted(set(given) & {s.name for c in coefficients.values() for s in c.free_symbols})
    if used:
        notes.append("coefficients evaluated with " + ", ".join(f"{k} = {given[k]:g}" for k in used))
    if symbolic:
        shown = sorted(symbolic)
        notes.append(f"the coefficients hold {_names(shown)} without values, so they are treated as generic "
                     f"non-zero weights: the stencil keeps its support (values= gives numbers, e.g. "
                     f"values={{{shown[0]!r}: 0.1}})")
    if zeros:
        notes.append(f"{zeros} read{'s' if zeros > 1 else ''} of {label} with zero coefficient "
                     f"{'are' if zeros > 1 else 'is'} not part of the stencil")
    return stencil, notes, chosen[0]


def _one(items: list, what: str, writes: Callable[[Any], str]) -> Any:
    if len(items) > MAX_ITEMS:
        raise TcAdvisorError(f"{what} holds {len(items)} items; at most {MAX_ITEMS}")
    if not items:
        raise TcAdvisorError(f"{what} is empty; expected one update")
    if len(items) > 1:
        shown = _names([writes(item) for item in items[:4]] + (["..."] if len(items) > 4 else []))
        raise TcAdvisorError(f"{what} holds {len(items)} updates (of {shown}); a stencil is one update: pass the "
                             "one to model")
    return items[0]


def _nodes(expr: Any, kinds: tuple) -> list:
    """The distinct nodes of ``expr`` of the given types, in SymPy's preorder (a stable order for messages)."""
    import sympy

    return list(dict.fromkeys(n for n in sympy.preorder_traversal(expr) if isinstance(n, kinds)))


def _integer(value: Any) -> int | None:
    import sympy

    try:
        value = sympy.sympify(value)
    except (sympy.SympifyError, TypeError):
        return None
    return int(value) if value.is_Integer else None


# --------------------------------------------------------------------------- pystencils

def from_pystencils(obj: Any, *, field: Any = None, values: Mapping | None = None) -> StencilSource:
    """The stencil of a pystencils update: an ``Assignment``, an ``AssignmentCollection`` with one main
    assignment (its subexpressions inlined), a list of assignments, or an expression over ``Field`` accesses.

    Offsets are ``Field.Access.offsets``: the field's index order, which is the order of
    the axes of the NumPy array bound to it.  The dtype is the modelled field's.
    """
    ps = _require("pystencils")
    import sympy

    Access = ps.Field.Access
    kind = type(obj).__name__
    if isinstance(obj, (list, tuple)):
        _count_nodes(sympy.Tuple(*obj[:MAX_ITEMS + 1]), "the assignments")
        main = [a for a in obj if isinstance(getattr(a, "lhs", None), Access)]
        subs = [a for a in obj if not isinstance(getattr(a, "lhs", None), Access)]
        if any(not isinstance(getattr(a, "lhs", None), sympy.Symbol) for a in subs):
            bad = next(a for a in subs if not isinstance(getattr(a, "lhs", None), sympy.Symbol))
            raise TcAdvisorError(f"the list holds {short_repr(bad)} ({type(bad).__name__}), not a pystencils "
                                 "Assignment; expected assignments to fields or to temporaries")
        obj = ps.AssignmentCollection(main, subexpressions=subs)
        kind = "list of assignments"
    if isinstance(obj, ps.AssignmentCollection):
        inlined = bool(obj.subexpressions)
        if inlined:
            _count_nodes(sympy.Tuple(*obj.all_assignments), f"the pystencils {kind}")
            obj = obj.new_without_subexpressions()
        assignment = _one(list(obj.main_assignments), f"the pystencils {kind}", lambda a: str(a.lhs))
    else:
        inlined = False
        assignment = obj
    lhs, rhs = (assignment.lhs, assignment.rhs) if hasattr(assignment, "rhs") else (None, assignment)
    if not isinstance(rhs, sympy.Basic):
        raise TcAdvisorError(f"{short_repr(obj)} ({type(obj).__name__}) is not a pystencils assignment or "
                             "expression; expected e.g. ps.Assignment(g[0, 0], 0.25*(f[1, 0] + f[-1, 0]))")
    what = f"the pystencils {kind if lhs is not None or kind.startswith('list') else 'expression'}"
    _count_nodes(rhs, what)
    reads = []
    for node in _nodes(rhs, (Access,)):
        index = tuple(node.index)
        label = node.field.name + (f"({', '.join(map(str, index))})" if index else "")
        reads.append(_Read(label, None, None, node))

    def offset_of(r: _Read) -> tuple[int, ...]:
        offsets = tuple(_integer(v) for v in r.node.offsets)
        if any(v is None for v in offsets):
            raise TcAdvisorError(f"{what} reads {r.label} at offset {tuple(r.node.offsets)}, which is not "
                                 "constant integers; expected e.g. f[1, 0]")
        return offsets

    stencil, notes, read = _read(what, rhs, reads, field, values, offset_of)
    f = read.node.field
    numpy_dtype = getattr(f.dtype, "numpy_dtype", None)  # a NumPy dtype is falsy (len 0): test for None
    dtype, dtype_note = _dtype(read.label, str(f.dtype) if numpy_dtype is None else numpy_dtype)
    if inlined:
        notes.insert(0, "the collection's subexpressions were inlined into its main assignment")
    notes.append(dtype_note)
    shown = kind if lhs is not None else "expression"
    element = f.dtype if numpy_dtype is None else numpy_dtype
    read_from = f"a pystencils {shown} on {read.label} ({stencil.dims}D, {element})"
    return StencilSource(stencil, dtype, read_from, tuple(notes))


# --------------------------------------------------------------------------- Devito

def from_devito(obj: Any, *, field: Any = None, values: Mapping | None = None) -> StencilSource:
    """The stencil of a Devito update: an ``Eq`` (or a list of one), or an expression such as ``u.laplace``.

    Derivatives are evaluated (``.evaluate``) into Devito's finite differences, whose
    spacing symbols (``h_x``, ``dt``) are symbolic coefficients.  Offsets are in grid
    cells along the function's space dimensions in the grid's order (x, y, z: the order
    of ``u.data[t, x, y, z]`` after the time axis); time levels are steps of the time
    dimension (``t - dt`` is -1).  The dtype is the modelled function's.
    """
    _require("devito")
    import sympy
    from devito.types.basic import AbstractFunction
    from devito.types.basic import Indexed as DevitoIndexed

    if isinstance(obj, (list, tuple)):
        obj = _one(list(obj), "the list of Devito equations", lambda e: str(getattr(e, "lhs", e)))
    kind = "Eq" if isinstance(obj, sympy.Eq) else "expression"
    what = f"the Devito {kind}"
    if not isinstance(obj, sympy.Basic):
        raise TcAdvisorError(f"{short_repr(obj)} ({type(obj).__name__}) is not a Devito equation or expression; "
                             "expected e.g. Eq(u.forward, u + dt*u.laplace)")
    _count_nodes(obj, what)
    lhs, rhs = (obj.lhs, obj.rhs) if kind == "Eq" else (None, obj)
    evaluated = getattr(rhs, "evaluate", None)  # Devito's derivatives written out as finite differences
    if isinstance(evaluated, sympy.Basic):
        rhs = evaluated
    _count_nodes(rhs, f"{what}, its derivatives evaluated,")
    if lhs is not None and not isinstance(lhs, (AbstractFunction, DevitoIndexed)):
        raise TcAdvisorError(f"{what} has the left side {short_repr(str(lhs))}, not one function; expected an "
                             "update such as Eq(u.forward, ...) (solve the PDE for u.forward first)")

    def parts(node):
        """(function, [(index, dimension, reference)], in cells?) of a function application or an Indexed: a
        read's shift is its index less the reference (a staggered function's own position, x + h_x/2)."""
        fn = node.function
        dims = tuple(fn.dimensions)
        cells = isinstance(node, DevitoIndexed)
        refs = tuple(dims if cells else (getattr(fn, "indices_ref", None) or dims))
        return fn, list(zip(node.indices, dims, refs)), cells

    def time_level(index, dim, ref, cells) -> tuple[int | None, str]:
        step = sympy.simplify(index - ref) if cells else sympy.simplify((index - ref) / dim.spacing)
        level = _integer(step)
        if level is None:
            raise TcAdvisorError(f"{what} reads at time {index}, not a whole number of steps from {dim}")
        return level, str(index)

    reads = []
    nodes = [n for n in _nodes(rhs, (AbstractFunction, DevitoIndexed))
             if getattr(n, "function", None) is not None and getattr(n, "indices", None)]
    for node in nodes:
        fn, pairs, cells = parts(node)
        level, text = None, None
        for index, dim, ref in pairs:
            if getattr(dim, "is_Time", False):
                level, text = time_level(index, dim, ref, cells)
        reads.append(_Read(fn.name, level, text, node))

    def offset_of(r: _Read) -> tuple[int, ...]:
        fn, pairs, cells = parts(r.node)
        out = []
        for index, dim, ref in pairs:
            if getattr(dim, "is_Time", False):
                continue
            shift = sympy.simplify(index - ref)
            if not cells and shift != 0:
                shift = sympy.simplify(shift / dim.spacing)
            value = _integer(shift)
            if value is None:
                raise TcAdvisorError(f"{what} reads {fn.name} at {short_repr(str(r.node))}: its offset along {dim} "
                                     f"({shift}{'' if cells else ' cells'}) is not a constant integer (a staggered "
                                     "or indirect read); expected e.g. x + h_x or x - 2*h_x")
            out.append(value)
        return tuple(out)

    stencil, notes, read = _read(what, rhs, reads, field, values, offset_of)
    fn = read.node.function
    dtype, dtype_note = _dtype(fn.name, fn.dtype)
    notes.append(dtype_note)
    space = [str(d) for d in fn.dimensions if not getattr(d, "is_Time", False)]
    notes.insert(0, f"offsets are along {', '.join(space)} (Devito's order, that of {fn.name}.data after its "
                    "time axis), in grid cells")
    order = getattr(fn, "space_order", None)
    details = ([f"space_order {order}"] if order is not None else []) + [np.dtype(fn.dtype).name]
    return StencilSource(stencil, dtype, f"a Devito {kind} on {fn.name} ({', '.join(details)})", tuple(notes))


# --------------------------------------------------------------------------- plain SymPy

def from_sympy(obj: Any, *, field: Any = None, values: Mapping | None = None) -> StencilSource:
    """The stencil of a SymPy update over ``IndexedBase`` reads such as ``u[i + 1, j]``.

    ``obj`` is an ``Eq``/``Assignment`` (its left side, e.g. ``v[i, j]``, names the loop
    indices) or a bare expression (each axis's loop index is the one ``Idx``, or the one
    symbol, its reads use).  Offsets are in the ``Indexed``'s index order.  No dtype.
    """
    import sympy

    if isinstance(obj, (list, tuple)):
        obj = _one(list(obj), "the list of SymPy updates", lambda e: str(getattr(e, "lhs", e)))
    if not isinstance(obj, sympy.Basic):
        raise TcAdvisorError(f"{short_repr(obj)} ({type(obj).__name__}) is not a SymPy expression; expected e.g. "
                             "u[i - 1] - 2*u[i] + u[i + 1] with u = IndexedBase('u'), i = Idx('i')")
    if isinstance(obj, sympy.core.relational.Relational) and not isinstance(obj, sympy.Eq):
        raise TcAdvisorError(f"{short_repr(str(obj))} is a comparison ({type(obj).__name__}), not an update; expected "
                             "an expression or Eq(v[i, j], ...)")
    has_sides = hasattr(obj, "lhs") and hasattr(obj, "rhs")
    kind = ("Eq" if isinstance(obj, sympy.Eq) else type(obj).__name__) if has_sides else "expression"
    what = f"the SymPy {kind}"
    _count_nodes(obj, what)
    lhs, rhs = (obj.lhs, obj.rhs) if has_sides else (None, obj)
    reads = [_Read(str(node.base.label), None, None, node) for node in _nodes(rhs, (sympy.Indexed,))]
    loops: dict[int, tuple[Any, int]] = {}  # axis -> (loop symbol, its shift on the left side)
    if isinstance(lhs, sympy.Indexed):
        for axis, index in enumerate(lhs.indices):
            symbols = index.free_symbols
            shift = _integer(index - next(iter(symbols))) if len(symbols) == 1 else None
            if shift is None:
                raise TcAdvisorError(f"{what} writes {lhs}, whose index {index} is not one loop index plus a "
                                     "constant; expected e.g. v[i, j]")
            loops[axis] = (next(iter(symbols)), shift)

    def loop(axis: int, label: str) -> tuple[Any, int]:
        if axis in loops:
            return loops[axis]
        used = set().union(*(r.node.indices[axis].free_symbols for r in reads
                             if r.label == label and len(r.node.indices) > axis))
        idx = {s for s in used if isinstance(s, sympy.Idx)}
        candidates = idx or used
        if len(candidates) != 1:
            indexed = _names(sorted(map(str, used))) or "no symbol"
            raise TcAdvisorError(f"{what} indexes axis {axis} of {label} with {indexed}; expected one loop index "
                                 "per axis (a sympy.Idx, or write the update as Eq(v[i, j], ...))")
        loops[axis] = (next(iter(candidates)), 0)
        return loops[axis]

    def offset_of(r: _Read) -> tuple[int, ...]:
        out = []
        for axis, index in enumerate(r.node.indices):
            symbol, shift = loop(axis, r.label)
            value = _integer(index - symbol)
            if value is None:
                raise TcAdvisorError(f"{what} reads {r.node}: its index {index} is not {symbol} plus a constant "
                                     f"integer; expected e.g. {symbol} + 1")
            out.append(value - shift)
        return tuple(out)

    stencil, notes, read = _read(what, rhs, reads, field, values, offset_of)
    return StencilSource(stencil, None, f"a SymPy {kind} on {read.label} ({stencil.dims}D)", tuple(notes))


__all__ = ["is_pystencils", "is_devito", "from_pystencils", "from_devito", "from_sympy", "MAX_NODES"]
