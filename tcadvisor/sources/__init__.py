"""Stencils from where users already write them: one way in, :func:`stencil_from`.

Every form gives back one :class:`~tcadvisor.sources.result.StencilSource` (the
stencil, the dtype where the source states one, where it was read, and the notes
of what the reading assumed), so the advisor, the command line and ``--json``
treat them alike.  The forms and their readers:

====================================================  =======================================
a :class:`~tcadvisor.stencil.Stencil`, a name, an      passed through (no dtype)
offsets file (``.txt``, ``.yaml``, ``.json``, ...)
a weight array (NumPy, CuPy, PyTorch, JAX, DLPack)     :mod:`tcadvisor.sources.arrays`
or a ``.npy`` file
a mapping ``{offset: coefficient}`` (findiff's)        :mod:`tcadvisor.sources.arrays`
a linear update function ``step(u) -> u_new``          :mod:`tcadvisor.sources.probe`
pystencils, Devito or SymPy expressions                :mod:`tcadvisor.sources.symbolic`
a C/C++/CUDA loop nest (``.c .h .cpp .cc .cu``)        :mod:`tcadvisor.sources.cloop`
====================================================  =======================================

Files are read, never run: a ``.npy`` with ``allow_pickle=False`` after a bounded
size check, a C file as text; a ``.py`` file is refused (import it and pass the
function).  Options that do not apply to a form are refused, never ignored.
The conventions (axis order, correlation, SciPy's origin) are those of
:mod:`tcadvisor.sources.arrays`; ``docs/sources.md`` states them for users.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..bounded import short_repr
from ..errors import TcAdvisorError
from .result import StencilSource

#: Suffixes of C, C++ and CUDA files, read as loop nests by :mod:`tcadvisor.sources.cloop`.
C_SUFFIXES = (".c", ".h", ".cpp", ".cc", ".cu")
#: Suffixes of weight arrays (NumPy's own format, read without pickles).
ARRAY_SUFFIXES = (".npy",)
#: Suffixes of Python files: refused, never imported.
PYTHON_SUFFIXES = (".py",)
#: Every suffix a path is read by this package for (others are names or offsets files: :func:`parse_stencil`).
PATH_SUFFIXES = C_SUFFIXES + ARRAY_SUFFIXES + PYTHON_SUFFIXES

#: Each option, as the API and the command line spell it, and the forms it applies to.
_OPTIONS = {
    "origin": ("origin= (--origin)", "weight arrays"),
    "flip": ("flip= (--flip)", "weight arrays and mappings"),
    "field": ("field= (--field)", "C files and pystencils, Devito or SymPy expressions"),
    "values": ("values= (--set)", "mappings, C files and pystencils, Devito or SymPy expressions"),
    "dims": ("dims=", "update functions"),
}


def _only(form: str, given: dict[str, Any], allowed: tuple[str, ...]) -> None:
    """Refuse, in one line, an option given for a form it does not apply to."""
    for key, value in given.items():
        if key not in allowed and value is not None and value is not False:  # origin=0 is given (0 == False)
            spelled, applies = _OPTIONS[key]
            raise TcAdvisorError(f"{spelled} does not apply to {form}; it applies to {applies}")


def _check_flip(flip: Any) -> None:
    """``flip`` is True or False: a convolution kernel is flipped only when the caller says so, never guessed from
    a truthy value such as 'no'."""
    import numpy as np

    if not isinstance(flip, (bool, np.bool_)):
        raise TcAdvisorError(f"flip {short_repr(flip)} ({type(flip).__name__}) is not True or False; expected "
                             "flip=True for a convolution kernel")


def is_source_path(value: Any) -> bool:
    """Whether ``value`` is a path this package reads (a ``.npy``, a C file; a ``.py`` to refuse)."""
    if not isinstance(value, (str, Path)) and not hasattr(value, "__fspath__"):
        return False
    return Path(os.fspath(value).strip()).suffix.lower() in PATH_SUFFIXES


def _named(source: StencilSource, name: str | None) -> StencilSource:
    return source if name is None else replace(source, stencil=replace(source.stencil, name=str(name)))


def read_path(path: str | os.PathLike, *, origin: Any = None, flip: bool = False, field: str | None = None,
              values: Mapping | None = None, name: str | None = None) -> StencilSource:
    """The stencil in a file: a ``.npy`` weight array, a C loop nest, or (anything else) a name or offsets file.

    The stencil of a ``.npy`` or offsets file is named after the file's stem.
    """
    from ..stencil import parse_stencil

    text = os.fspath(path).strip()
    suffix = Path(text).suffix.lower()
    _check_flip(flip)
    given = {"origin": origin, "flip": flip, "field": field, "values": values}
    if suffix in PYTHON_SUFFIXES:
        raise TcAdvisorError(f"stencil {text!r} is a Python file, which tcadvisor never imports; import it yourself "
                             "and pass the update function (tcadvisor.stencil_from(step, dims=2)), or save its "
                             "weights with numpy.save and pass the .npy")
    if suffix in ARRAY_SUFFIXES:
        _only(f"a .npy file ({text})", given, ("origin", "flip"))
        return from_npy(text, origin=origin, flip=flip, name=name)
    if suffix in C_SUFFIXES:
        _only(f"a C file ({text})", given, ("field", "values"))
        cloop = _reader("cloop", "C loop nests")
        return _named(cloop.from_c_file(text, field=field, values=values), name)
    _only(f"the stencil {text!r} (a name or an offsets file)", given, ())
    stencil = parse_stencil(text)
    if name is not None:
        stencil = replace(stencil, name=str(name))
    is_file = Path(text).is_file()
    return StencilSource(stencil, None, f"{text} (offsets file)" if is_file else f"the name {text}")


def from_npy(path: str | os.PathLike, *, origin: Any = None, flip: bool = False,
             name: str | None = None) -> StencilSource:
    """A ``.npy`` weight array: at most :data:`tcadvisor.files.MAX_WEIGHTS_BYTES`, read with
    ``allow_pickle=False`` (an object array is refused), then :func:`~tcadvisor.sources.arrays.from_array`."""
    import numpy as np

    from ..files import MAX_WEIGHTS_BYTES, load_npy
    from .arrays import from_array

    text = os.fspath(path)
    data = load_npy(text, "weights file", MAX_WEIGHTS_BYTES)
    if not isinstance(data, np.ndarray):  # a .npz archive read through its name: several arrays
        raise TcAdvisorError(f"weights file {text!r} is a .npz archive of several arrays, not one .npy array; save "
                             "the weights alone with numpy.save")
    return from_array(data, origin=origin, flip=flip, name=Path(text).stem if name is None else name,
                      read_from=text)


def _reader(module: str, what: str):
    """A reader module of this package, imported when first used."""
    import importlib

    try:
        return importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{module}":
            raise
        raise TcAdvisorError(f"reading {what} needs tcadvisor.sources.{module}, which this installation "
                             "lacks") from None


_LIBRARY_NAMES = {"pystencils": "pystencils", "devito": "Devito", "sympy": "SymPy"}


def _symbolic_kind(obj: Any) -> str | None:
    """'pystencils', 'devito' or 'sympy' for such an object, or a list or tuple of them (decided from the type's
    module, nothing imported), else None."""
    if isinstance(obj, (list, tuple)) and obj:
        obj = obj[0]
    top = (type(obj).__module__ or "").split(".")[0]
    return top if top in ("pystencils", "devito", "sympy") else None


def stencil_from(obj: Any, *, origin: Any = None, flip: bool = False, field: str | None = None,
                 values: Mapping | None = None, dims: int | None = None, name: str | None = None) -> StencilSource:
    """The stencil of ``obj``, wherever the user wrote it; a :class:`StencilSource`.

    ``obj`` may be a :class:`~tcadvisor.stencil.Stencil` or a :class:`StencilSource`
    (passed through), a stencil name or a path (``.npy``, a C file, an offsets file),
    a weight array of any library (``origin``: SciPy's, for an even extent;
    ``flip=True``: a convolution kernel), a mapping ``{offset: coefficient}``, a
    pystencils, Devito or SymPy expression (``field``: the field to model where it
    reads several; ``values``: numbers for its symbolic coefficients), or a linear
    update function of one array (``dims``: its dimensionality).  ``name`` names
    the stencil.  Options that do not apply to the form are refused.
    """
    from ..stencil import Stencil
    from . import arrays

    given = {"origin": origin, "flip": flip, "field": field, "values": values, "dims": dims}
    _check_flip(flip)
    if values is not None and not isinstance(values, Mapping):
        raise TcAdvisorError(f"values {short_repr(values)} ({type(values).__name__}) is not a mapping; expected "
                             "{symbol name: number}, e.g. {'dt': 0.1}")
    if isinstance(obj, StencilSource):
        _only("a StencilSource", given, ())
        return _named(obj, name)
    if isinstance(obj, Stencil):
        _only(f"the Stencil {obj.name}", given, ())
        return _named(StencilSource(obj, None, f"the Stencil {obj.name}"), name)
    if isinstance(obj, (str, Path)) or hasattr(obj, "__fspath__"):
        _only("a path or name", {"dims": dims}, ())
        return read_path(obj, origin=origin, flip=flip, field=field, values=values, name=name)
    kind = _symbolic_kind(obj)
    if kind is not None:
        symbolic = _reader("symbolic", f"{_LIBRARY_NAMES[kind]} expressions")
        if kind == "sympy":  # pystencils' assignments and Devito's expressions are SymPy types: whose reads?
            kind = "pystencils" if symbolic.is_pystencils(obj) else "devito" if symbolic.is_devito(obj) else kind
        _only(f"a {_LIBRARY_NAMES[kind]} expression", given, ("field", "values"))
        read = {"pystencils": symbolic.from_pystencils, "devito": symbolic.from_devito,
                "sympy": symbolic.from_sympy}[kind]
        return _named(read(obj, field=field, values=values), name)
    if isinstance(obj, Mapping):
        _only("a mapping", given, ("flip", "values"))
        return arrays.from_mapping(obj, flip=flip, name=name, values=values)
    if arrays.is_array_like(obj):
        _only("a weight array", given, ("origin", "flip"))
        return arrays.from_array(obj, origin=origin, flip=flip, name=name)
    if isinstance(obj, (list, tuple)):
        raise TcAdvisorError(f"stencil {short_repr(obj)} is a {type(obj).__name__}, which could be weights or "
                             "offsets; pass numpy.array(...) for weights, a mapping {offset: weight}, or "
                             "Stencil.from_offsets(...) for offsets")
    if callable(obj):
        _only("an update function", given, ("dims",))
        from .probe import from_function

        return from_function(obj, dims=dims, name=name)
    raise TcAdvisorError(f"stencil {short_repr(obj)} ({type(obj).__name__}) is not a form tcadvisor reads; expected "
                         "a Stencil, a name or file, a weight array, a mapping {offset: weight}, a linear update "
                         "function, or a pystencils, Devito or SymPy expression")


def source_of(value: Any) -> StencilSource | None:
    """For the functions that take a stencil: ``value`` itself if a :class:`StencilSource`, the reading of a
    ``.npy`` or C path with its defaults, else None (a Stencil, a name or an offsets file)."""
    if isinstance(value, StencilSource):
        return value
    if is_source_path(value):
        return read_path(value)
    return None


__all__ = ["StencilSource", "stencil_from", "read_path", "from_npy", "source_of", "is_source_path",
           "C_SUFFIXES", "ARRAY_SUFFIXES", "PATH_SUFFIXES"]
