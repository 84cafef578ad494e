"""Stencils from weight arrays and from ``{offset: coefficient}`` mappings.

Conventions (``docs/sources.md`` states them for users; every reader keeps them):

* **Axis order**: an offset lists one integer per axis of the array, in the array's
  own order (z, y, x for a 3D NumPy array), as tcadvisor's offset files do.
* **Correlation**: a weight array ``w`` is a correlation kernel, as
  ``scipy.ndimage.correlate`` and PyTorch's ``conv1d/2d/3d`` take it::

      out[i] = Σ_k w[k] · in[i + k − c]

  so the entry at index ``k`` is read at offset ``k − c``.  A convolution kernel
  (``scipy.ndimage.convolve``, ``numpy.convolve``) is the same array flipped; it is
  flipped only when the caller says so (``flip=True``): the entry at ``k`` is then
  read at offset ``c − k``.
* **Centre**: ``c`` is the middle of an odd extent, or ``n // 2 + origin`` with
  SciPy's ``origin`` (the same element for ``correlate`` and ``convolve``); an even
  extent needs an origin, since its middle falls between two cells.

Arrays are converted without importing their library: NumPy arrays directly,
anything else through ``__array__``, DLPack (``__dlpack__``) or ``.get()`` (CuPy),
and PyTorch tensors through their own ``detach()``/``cpu()`` (a layer's weight
requires grad and may live on a GPU).  The element type becomes the stencil's
dtype (float64 → double, float32 → float, float16 → half, bfloat16 → bfloat16);
integer and complex arrays are refused, as the kernels compute in floating point.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..bounded import short_repr
from ..errors import TcAdvisorError
from ..stencil import MAX_DIMS, MAX_OFFSETS, MAX_RADIUS, Stencil
from .result import StencilSource

#: Largest extent of an array along one axis: the widest stencil the model takes (2·MAX_RADIUS + 1).
MAX_EXTENT = 2 * MAX_RADIUS + 1
#: Most cells an array may hold: every cell of the largest 3D box, once (the size of the largest stencil).
MAX_CELLS = MAX_OFFSETS
#: Element types that a stencil is computed in, by the name arrays give them.
FLOAT_DTYPES = {"float64": "double", "double": "double", "float32": "float", "float": "float",
                "float16": "half", "half": "half", "bfloat16": "bfloat16"}

_LIBRARIES = {"numpy": "NumPy", "torch": "PyTorch", "cupy": "CuPy", "jax": "JAX", "jaxlib": "JAX",
              "tensorflow": "TensorFlow", "mlx": "MLX"}


def library_of(obj: Any) -> str:
    """The name of the library an object comes from, decided from its type's module (nothing is imported)."""
    top = (type(obj).__module__ or "").split(".")[0]
    return _LIBRARIES.get(top, top or type(obj).__name__)


def _is_torch(obj: Any) -> bool:
    return (type(obj).__module__ or "").split(".")[0] == "torch"


def is_array_like(obj: Any) -> bool:
    """Whether ``obj`` offers one of the ways :func:`host_array` reads (a mapping is not an array)."""
    if isinstance(obj, Mapping):
        return False
    return (isinstance(obj, np.ndarray) or hasattr(obj, "__array__") or hasattr(obj, "__dlpack__")
            or _has_get(obj) or _is_torch(obj))


def _has_get(obj: Any) -> bool:
    """Whether ``obj`` copies itself to the host with ``.get()`` as CuPy's arrays do: a ``.get`` method on an
    object that also declares an array's shape (``.shape`` or ``__cuda_array_interface__``; a mapping's or a
    queue's ``.get`` is not one)."""
    return callable(getattr(obj, "get", None)) and (hasattr(obj, "shape") or _cuda_interface(obj) is not None)


def _cuda_interface(obj: Any) -> dict | None:
    """``obj.__cuda_array_interface__`` where it is a dict (CuPy, Numba, PyTorch on a GPU), else None."""
    try:
        interface = getattr(obj, "__cuda_array_interface__", None)
    except Exception:  # noqa: BLE001 - a property that raises (a CPU tensor): no interface
        return None
    return interface if isinstance(interface, dict) else None


def _dtype_text(obj: Any) -> str:
    """The element type's name as the library writes it, without its prefix ('torch.float32' -> 'float32')."""
    text = str(getattr(obj, "dtype", "") or "")
    return text.rsplit(".", 1)[-1] if text else ""


def _declared_cells(obj: Any, what: str) -> None:
    """Refuse an array whose declared ``shape`` is too large before anything is copied from it."""
    shape = getattr(obj, "shape", None)
    if shape is None:
        shape = (_cuda_interface(obj) or {}).get("shape")
    if shape is None:
        return
    try:
        extents = [int(n) for n in tuple(shape)[:8]]
    except (TypeError, ValueError):
        return  # no usable shape: judged after the conversion
    cells = int(np.prod(extents, dtype=object)) if extents else 1
    if cells > MAX_CELLS:
        raise TcAdvisorError(f"{what} has shape {tuple(shape)}: too large for a stencil's weights (at most "
                             f"{MAX_CELLS} cells, {MAX_EXTENT} along an axis)")


def host_array(obj: Any, what: str) -> tuple[np.ndarray, str]:
    """``obj`` as a NumPy array on the host, and the name of its element type in its own library.

    Tries, in order, what the object offers: a NumPy array as it is; a PyTorch tensor
    detached and moved to the CPU (bfloat16, which NumPy lacks, widened to float32
    exactly); ``.get()`` (CuPy: a device array copied to the host); DLPack; ``__array__``.
    A declared shape is checked first, so a huge device array is refused uncopied.
    """
    if isinstance(obj, np.ndarray):
        return obj, obj.dtype.name
    _declared_cells(obj, what)
    dtype = _dtype_text(obj)
    attempts = []
    if _is_torch(obj):
        def torch_host():
            t = obj.detach() if callable(getattr(obj, "detach", None)) else obj
            t = t.cpu() if callable(getattr(t, "cpu", None)) else t
            if dtype == "bfloat16":
                t = t.float()  # every bfloat16 is a float32, exactly
            return t.numpy() if callable(getattr(t, "numpy", None)) else np.asarray(t)
        attempts.append(("PyTorch's detach().cpu()", torch_host))
    if _has_get(obj):
        attempts.append((".get()", lambda: np.asarray(obj.get())))
    if hasattr(obj, "__dlpack__"):
        attempts.append(("DLPack", lambda: np.from_dlpack(obj)))
    if hasattr(obj, "__array__"):
        attempts.append(("__array__", lambda: np.asarray(obj)))
    failures = []
    for how, convert in attempts:
        try:
            arr = convert()
        except Exception as exc:  # noqa: BLE001 - a library's own refusal; the next way may work
            failures.append(f"{how}: {' '.join(str(exc).split())[:100] or type(exc).__name__}")
            continue
        if isinstance(arr, np.ndarray):
            return arr, dtype or arr.dtype.name
        failures.append(f"{how}: gave {type(arr).__name__}, not an array")
    if not attempts:
        raise TcAdvisorError(f"{what} {short_repr(obj)} ({type(obj).__name__}) is not an array: it offers neither "
                             "__array__, DLPack (__dlpack__) nor .get(); expected e.g. a NumPy, CuPy, PyTorch or "
                             "JAX array")
    raise TcAdvisorError(f"{what} ({library_of(obj)} {type(obj).__name__}) could not be read on the host: "
                         + "; ".join(failures))


def stencil_dtype(dtype: str, what: str) -> str:
    """The canonical dtype of an array's element type, or a one-line refusal (integers, complex, ...)."""
    key = dtype.lower()
    if key in FLOAT_DTYPES:
        return FLOAT_DTYPES[key]
    kind = ("integer" if "int" in key else "complex" if "complex" in key else "boolean" if "bool" in key
            else "a floating-point type the kernels do not compute in" if "float" in key or "double" in key
            else "not floating point")
    raise TcAdvisorError(f"{what} has element type {dtype or 'unknown'} ({kind}); expected floating-point weights "
                         "(float64, float32, float16 or bfloat16), e.g. w.astype(float)")


def _spatial(arr: np.ndarray, torch: bool, what: str) -> tuple[np.ndarray, str | None]:
    """The spatial part of a weight array, and a note where channel axes were dropped.

    A stencil maps one field to one: PyTorch's ``(out, in, *spatial)`` weights are
    taken with ``out = in = 1``.  Four or five axes are always read so; three axes
    are read so for a PyTorch tensor whose first two extents are 1 (a conv1d
    weight), otherwise as a 3D array.
    """
    shape = arr.shape
    layout = len(shape) >= 4 or (torch and len(shape) == 3 and shape[:2] == (1, 1))
    if not layout:
        return arr, None
    if len(shape) > MAX_DIMS + 2:
        raise TcAdvisorError(f"{what} has {len(shape)} axes {shape}; expected 1 to 3 spatial axes, or PyTorch's "
                             "(out, in, ...) layout with 1 to 3 spatial axes")
    out, inp = shape[:2]
    if (out, inp) != (1, 1):
        raise TcAdvisorError(f"{what} has shape {shape}: read as PyTorch's (out, in, ...) layout it has {out} "
                             f"output and {inp} input channels; a stencil maps one field to one "
                             "(out = in = 1), e.g. w[0, 0] for one channel pair")
    conv = f"conv{len(shape) - 2}d"
    return arr.reshape(shape[2:]), (f"the array's shape {shape} was read as a PyTorch {conv} weight "
                                    "(out = in = 1, the spatial axes after them)")


def _centre(shape: tuple[int, ...], origin: Any, what: str) -> tuple[tuple[int, ...], str]:
    """The index of the centre along each axis (SciPy's origin convention) and how it was chosen."""
    if origin is None:
        even = [axis for axis, n in enumerate(shape) if n % 2 == 0]
        if even:
            axis = even[0]
            raise TcAdvisorError(f"{what} has an even extent {shape[axis]} along axis {axis} (shape {shape}): its "
                                 "centre falls between two cells; give origin= (--origin), SciPy's convention: the "
                                 f"centre is the element at index n // 2 + origin, e.g. origin={-1 if shape[axis] > 1 else 0}")
        return tuple(n // 2 for n in shape), "centre at its middle"
    origins = _origins(origin, len(shape), what)
    centre = []
    for axis, (n, o) in enumerate(zip(shape, origins)):
        c = n // 2 + o
        if not 0 <= c < n:
            raise TcAdvisorError(f"origin {tuple(origins)} puts the centre outside {what} along axis {axis}: "
                                 f"n // 2 + origin = {n // 2} + {o} = {c}, not in 0..{n - 1}; for extent {n} the "
                                 f"origin lies in {-(n // 2)}..{(n - 1) // 2} (SciPy's convention)")
        centre.append(c)
    return tuple(centre), f"centre at index {tuple(centre)}, origin {tuple(origins)}"


def _origins(origin: Any, dims: int, what: str) -> list[int]:
    """SciPy's ``origin``: one integer for every axis, or one per axis."""
    def integer(v) -> int:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TcAdvisorError(f"origin {short_repr(origin)} is not an integer or a list of integers (one per "
                                 f"axis of {what}); expected e.g. 0 or (0, -1)")
        return int(v)

    if isinstance(origin, (int, np.integer)) and not isinstance(origin, (bool, np.bool_)):
        return [integer(origin)] * dims
    if isinstance(origin, (str, bytes, Mapping)) or not hasattr(origin, "__len__"):
        integer(origin)  # names the bad value
    if len(origin) != dims:
        raise TcAdvisorError(f"origin {short_repr(origin)} has {len(origin)} entries for the {dims} axes of {what}; "
                             "give one integer per axis, or one for all")
    return [integer(v) for v in origin]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def from_array(obj: Any, *, origin: Any = None, flip: bool = False, name: str | None = None,
               read_from: str | None = None) -> StencilSource:
    """The stencil of a weight array (any library; conventions in the module docstring).

    ``read_from`` names where the array came from (a file); the array's library,
    element type, shape and centre are added to it.
    """
    what = f"the weight array in {read_from}" if read_from else "the weight array"
    arr, dtype_text = host_array(obj, what)
    dtype = stencil_dtype(dtype_text, what)
    library = library_of(obj)
    if arr.ndim == 0:
        raise TcAdvisorError(f"{what} is a single number; expected an array of 1 to 3 dimensions (e.g. [1, -2, 1])")
    spatial, layout_note = _spatial(arr, _is_torch(obj), what)
    if spatial.ndim > MAX_DIMS:
        raise TcAdvisorError(f"{what} has {spatial.ndim} axes {spatial.shape}; a stencil has 1, 2 or 3")
    if spatial.size == 0:
        raise TcAdvisorError(f"{what} is empty (shape {spatial.shape}); expected at least one non-zero weight")
    wide = [axis for axis, n in enumerate(spatial.shape) if n > MAX_EXTENT]
    if wide or spatial.size > MAX_CELLS:
        raise TcAdvisorError(f"{what} has shape {spatial.shape}: too large (at most {MAX_EXTENT} cells along an "
                             f"axis, radius {MAX_RADIUS})")
    centre, centre_text = _centre(spatial.shape, origin, what)
    values = np.asarray(spatial, dtype=np.float64)
    index = np.argwhere(values != 0)  # NaN is non-zero, and refused as a weight below
    sign = -1 if flip else 1
    offsets = [tuple(int(sign * (k - c)) for k, c in zip(idx, centre)) for idx in index]
    weights = [float(values[tuple(idx)]) for idx in index]
    if not offsets:
        raise TcAdvisorError(f"every weight of {what} is zero; at least one must be non-zero")
    try:
        stencil = Stencil.from_offsets(offsets, name=name, weights=weights)
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"{what}: {exc}") from None
    shown = f"{library} {dtype_text} array {_shape_text(arr.shape)}"
    source = f"{read_from or 'a weight array'} ({shown}, {centre_text})"
    notes = [n for n in (layout_note,) if n]
    if flip:
        notes.append("the array was flipped along every axis (flip=True: a convolution kernel), so the entry at "
                     "index k is read at offset c - k")
    zeros = spatial.size - len(offsets)
    if zeros:
        notes.append(f"{zeros} zero {'entry' if zeros == 1 else 'entries'} of the array "
                     f"{'is' if zeros == 1 else 'are'} not read (dropped from the stencil)")
    return StencilSource(stencil, dtype, source, tuple(notes))


# --------------------------------------------------------------------------- mappings

def _mapping_offset(key: Any) -> tuple[int, ...]:
    """A mapping's key as an offset: an integer (1D) or a tuple of integers."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        return (int(key),)
    if isinstance(key, tuple) and key and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                                              for v in key):
        return tuple(int(v) for v in key)
    raise TcAdvisorError(f"the mapping's key {short_repr(key)} ({type(key).__name__}) is not an offset; expected "
                         "an integer (1D) or a tuple of integers such as (0, 1)")


def check_values(values: Any) -> dict[str, float]:
    """``values=`` for symbolic coefficients as ``{name: float}``, or a one-line refusal: names are strings, numbers
    finite and real (a string, None, a complex number or a SymPy symbol would leave the coefficient symbolic, or
    fail inside SymPy, instead of being refused here)."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise TcAdvisorError(f"values {short_repr(values)} ({type(values).__name__}) is not a mapping; expected "
                             "{symbol name: number}, e.g. {'dt': 0.1}")
    out = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key.strip():
            raise TcAdvisorError(f"values has the key {short_repr(key)} ({type(key).__name__}); expected symbol "
                                 "names as strings, e.g. {'dt': 0.1}")
        number = None
        if not isinstance(value, (bool, np.bool_, str, bytes, complex)) and getattr(value, "ndim", 0) == 0:
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError, ArithmeticError):
                number = None
        if number is None or not np.isfinite(number):
            raise TcAdvisorError(f"values gives {key} = {short_repr(value)} ({type(value).__name__}); expected a "
                                 f"finite real number, e.g. {{{key!r}: 0.1}}")
        out[key] = number
    return out


def _coefficient(offset: tuple[int, ...], value: Any, values: Mapping | None) -> float | None:
    """A coefficient as a float; a symbolic one with its symbols given by ``values``; None: still symbolic."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TcAdvisorError(f"the coefficient of offset {offset} is {short_repr(value)} "
                             f"({type(value).__name__}); expected a number")
    if getattr(value, "free_symbols", None):  # a SymPy expression: its symbols from ``values``, else symbolic
        if values:
            value = value.subs({s: values[s.name] for s in value.free_symbols if getattr(s, "name", None) in values})
        if getattr(value, "free_symbols", None):
            return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise TcAdvisorError(f"the coefficient of offset {offset} is {short_repr(value)} "
                             f"({type(value).__name__}); expected a finite number") from None
    if not np.isfinite(number):
        raise TcAdvisorError(f"the coefficient of offset {offset} is {short_repr(value)}; expected a finite number")
    return number


def _findiff_pairs(mapping: Mapping) -> list | None:
    """``{'offsets': [...], 'coefficients': [...]}`` (findiff's ``coefficients(...)['center']``) as pairs."""
    if not {"offsets", "coefficients"} <= set(mapping.keys()):
        return None
    offsets, coefficients = mapping["offsets"], mapping["coefficients"]
    try:
        n_off, n_coef = len(offsets), len(coefficients)
    except TypeError:
        raise TcAdvisorError("the mapping's 'offsets' and 'coefficients' must be lists of equal length") from None
    if n_off != n_coef or n_off > MAX_OFFSETS:
        raise TcAdvisorError(f"the mapping has {n_off} offsets and {n_coef} coefficients; expected equal lengths "
                             f"(at most {MAX_OFFSETS})")
    keys = [tuple(o) if isinstance(o, (list, tuple, np.ndarray)) else o for o in offsets]
    keys = [tuple(int(v) if isinstance(v, np.integer) else v for v in k) if isinstance(k, tuple) else
            (int(k) if isinstance(k, np.integer) else k) for k in keys]
    return list(zip(keys, coefficients))


def from_mapping(mapping: Mapping, *, flip: bool = False, name: str | None = None,
                 values: Mapping | None = None) -> StencilSource:
    """The stencil of ``{offset: coefficient}``: offsets as tuples (or integers in 1D), e.g. findiff's.

    Also findiff's ``coefficients(deriv, acc)['center']`` (``offsets`` and
    ``coefficients`` lists, 1D).  A SymPy coefficient takes its symbols from
    ``values``; one left symbolic makes the stencil's weights generic (its
    support only), and a note says so.  ``flip`` negates every offset.
    """
    if len(mapping) > MAX_OFFSETS:
        raise TcAdvisorError(f"the mapping has {len(mapping)} offsets; at most {MAX_OFFSETS}")
    pairs = _findiff_pairs(mapping)
    form = "findiff's offsets and coefficients" if pairs is not None else "a mapping of offsets to coefficients"
    if pairs is None:
        pairs = list(mapping.items())
    if not pairs:
        raise TcAdvisorError("the mapping is empty; expected {offset: coefficient}, e.g. {(0, 1): 0.25, ...}")
    given = check_values(values)
    sign = -1 if flip else 1
    offsets, weights, symbolic = [], [], []
    names: set[str] = set()  # the symbols of the coefficients, for values=
    for key, value in pairs:
        names |= {getattr(sym, "name", str(sym)) for sym in getattr(value, "free_symbols", None) or ()}
        offset = tuple(sign * v for v in _mapping_offset(key))
        if len(offset) > MAX_DIMS or max(abs(v) for v in offset) > MAX_RADIUS:  # refused before the rest is read
            raise TcAdvisorError(f"the mapping's key {short_repr(key)} is not an offset tcadvisor models: at most "
                                 f"{MAX_DIMS} integers, each within ±{MAX_RADIUS} (radius {MAX_RADIUS})")
        number = _coefficient(offset, value, given)
        if number is None:
            symbolic.append(str(value))
        elif number == 0.0:
            continue
        offsets.append(offset)
        weights.append(number)
    unused = sorted(set(given) - names)
    if unused:
        its = f"its symbols are {', '.join(sorted(names))}" if names else "its coefficients are numbers"
        raise TcAdvisorError(f"values names {', '.join(unused)}, which the mapping's coefficients do not use; {its}")
    if not offsets:
        raise TcAdvisorError("every coefficient of the mapping is zero; at least one must be non-zero")
    notes = []
    if given:
        notes.append("coefficients evaluated with " + ", ".join(f"{k} = {v:g}" for k, v in sorted(given.items())))
    if symbolic:
        shown = ", ".join(sorted(set(symbolic))[:3]) + (", ..." if len(set(symbolic)) > 3 else "")
        notes.append(f"coefficient{'s' if len(symbolic) > 1 else ''} {shown} left symbolic: the stencil keeps its "
                     "support with generic non-zero weights (values= gives numbers)")
    if flip:
        notes.append("every offset was negated (flip=True: a convolution's coefficients)")
    try:
        stencil = Stencil.from_offsets(offsets, name=name, weights=None if symbolic else weights)
    except TcAdvisorError as exc:
        raise TcAdvisorError(f"the mapping: {exc}") from None
    return StencilSource(stencil, None, f"{form} ({len(pairs)} entries)", tuple(notes))
