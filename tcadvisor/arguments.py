"""Arguments of the public Python API, checked and normalised the way the CLI checks its options.

Why one module: ``map_data("box", 2, "fp32", ["h100"])`` in a notebook must mean
what ``tcadvisor map --dtype fp32 --gpu h100`` means on the command line, and a
bad value must fail with the same one-line :class:`~tcadvisor.errors.TcAdvisorError`,
never an ``AttributeError`` deep inside pandas or an all-NaN map.  So every
public function (advise, sweep, the maps and rooflines) passes its arguments through these helpers, which
accept names where objects are expected (a GPU key, a stencil name, an
implementation name, ``"constructed"`` for α) and delegate to the functions the
CLI itself uses (:func:`~tcadvisor.dtypes.parse_dtype`,
:func:`~tcadvisor.hardware.find_spec`, :func:`~tcadvisor.stencil.parse_stencil`,
:func:`~tcadvisor.impls.find_impl`, :meth:`~tcadvisor.advisor.AlphaChoice.parse`).

Only :mod:`tcadvisor.errors` is imported at the top: the CLI parser imports
this module for every command.
"""
from __future__ import annotations

import re
from typing import Any

from .bounded import short_repr as _short
from .bounded import take
from .errors import TcAdvisorError

_RANGE = re.compile(r"^\s*(-?\d+)\s*(?:-|\.\.|:)\s*(-?\d+)\s*$")
#: Longest range one argument may name (a map of more would not be readable anyway).
MAX_RANGE = 4096
SHAPES = ("box", "star")


def parse_int_list(text: str, what: str, check) -> list[int]:
    """'1-8', '1..8', '1,2,4' or '3' as a sorted list, each value validated by ``check``."""
    values: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        m = _RANGE.match(part)
        try:
            lo, hi = (int(m.group(1)), int(m.group(2))) if m else (int(part), int(part))
        except ValueError:
            raise TcAdvisorError(f"{what} {text!r} is not understood; expected a range such as 1-8 "
                                 "or a list such as 1,2,4") from None
        if lo > hi:
            raise TcAdvisorError(f"{what} {text!r}: the range {part} runs backwards; write low-high")
        if hi - lo > MAX_RANGE:
            raise TcAdvisorError(f"{what} {text!r}: the range {part} is too long")
        values.update(range(lo, hi + 1))
    if not values:
        raise TcAdvisorError(f"{what} {text!r} names no values; expected a range such as 1-8 or a list such as 1,2,4")
    return [check(v) for v in sorted(values)]


_EXPECTED = "expected an integer, a range such as range(1, 9) or '1-8', or a list such as [1, 2, 4]"


def int_list(values: Any, what: str, check, limit: int = MAX_RANGE) -> list[int]:
    """Radii or depths: an int, a range string ('1-8', '1,2,4'), or an iterable of ints; sorted, unique, checked.

    Nothing proportional to the argument is built before it is checked: a
    ``range`` is checked from its bounds and length, a sized collection from its
    ``len``, and an iterator is read at most ``limit`` + 1 items (so
    ``itertools.count()`` is refused at once, as unbounded).
    """
    import numpy as np

    if isinstance(values, str):
        return parse_int_list(values, what, check)
    if isinstance(values, (int, np.integer)) and not isinstance(values, (bool, np.bool_)):
        return [check(values)]
    if values is None or isinstance(values, (bytes, bytearray, dict, float, bool, np.bool_, np.floating)):
        raise TcAdvisorError(f"{what} {_short(values)} ({type(values).__name__}) is not understood; {_EXPECTED}")
    if isinstance(values, range):
        if len(values) == 0:
            raise TcAdvisorError(f"{what} {values!r} names no values; expected e.g. range(1, 9) or [1, 2, 4]")
        lo, hi = min(values[0], values[-1]), max(values[0], values[-1])
        check(lo), check(hi)  # every value lies between the two
        return [check(v) for v in sorted(values)]
    try:
        items, over = take(values, limit)
    except TypeError:
        raise TcAdvisorError(f"{what} {_short(values)} ({type(values).__name__}) is not understood; "
                             f"{_EXPECTED}") from None
    if items is None and over is not None:
        raise TcAdvisorError(f"{what}: {over} values are too many (at most {limit}); {_EXPECTED}")
    if items is None:
        raise TcAdvisorError(f"{what}: more than {limit} values (an unbounded iterator?); at most {limit}, "
                             "e.g. range(1, 9)")
    if not items:
        raise TcAdvisorError(f"{what} names no values; expected e.g. range(1, 9) or [1, 2, 4]")
    return sorted({check(v) for v in items})


#: Most GPUs one map draws, and most implementation profiles one query takes (one per unit, a few more to
#: say which two collide); an iterator is read no further.
MAX_GPUS = 64
MAX_IMPLS = 16


def _bounded(values: Any, what: str, limit: int) -> list:
    """At most ``limit`` items of an iterable (TypeError: not iterable); more is a one-line error."""
    items, over = take(values, limit)
    if items is None and over is not None:
        raise TcAdvisorError(f"{what}: {over} given, at most {limit}")
    if items is None:
        raise TcAdvisorError(f"{what}: more than {limit} given (an unbounded iterator?); at most {limit}")
    return items


def as_dtype(dtype: Any) -> str:
    """'double', 'float', 'half' or 'bfloat16' from any alias the CLI accepts ('fp32', 'float64', ...)."""
    from .dtypes import parse_dtype

    return parse_dtype(dtype)


def as_shape(shape: Any) -> str:
    """'box' or 'star' (a map sweeps one of the two named families)."""
    key = str(shape).strip().lower() if isinstance(shape, str) else None
    if key not in SHAPES:
        raise TcAdvisorError(f"shape {shape!r} is not supported for maps; expected box or star")
    return key


def as_dims(dims: Any) -> int:
    """1, 2 or 3, with the stencil module's own message otherwise."""
    from .stencil import check_dims as _check_dims

    if isinstance(dims, str) and dims.strip().isdigit():
        dims = int(dims)
    return _check_dims(dims)


def as_gpu(gpu: Any):
    """A :class:`~tcadvisor.hardware.GpuSpec`, from a spec, a key, an alias, a full name or a YAML path.

    ``None`` means what no ``--gpu`` means on the command line: the detected
    GPU, else the embedded default.
    """
    from .hardware import as_spec, resolve_gpu

    return resolve_gpu(None).spec if gpu is None else as_spec(gpu)


def as_gpus(gpus: Any) -> list:
    """Several GPUs: one spec or name, 'a100,h100' as on the command line, or a list of specs and names."""
    from .hardware import GpuSpec

    if gpus is None or isinstance(gpus, GpuSpec) or hasattr(gpus, "__fspath__"):
        return [as_gpu(gpus)]
    if isinstance(gpus, str):
        names = [n.strip() for n in gpus.split(",") if n.strip()]
        if not names:
            raise TcAdvisorError(f"GPU {gpus!r} names no GPU; expected names such as a100,h100 (see 'tcadvisor gpus')")
        return [as_gpu(n) for n in names]
    try:
        items = _bounded(gpus, "GPUs", MAX_GPUS)
    except TypeError:
        return [as_gpu(gpus)]  # reports what it is not
    if not items:
        raise TcAdvisorError("no GPU given; expected at least one GPU spec or name such as 'h100'")
    return [as_gpu(g) for g in items]


def as_stencil(stencil: Any):
    """A :class:`~tcadvisor.stencil.Stencil`, from a stencil, a :class:`~tcadvisor.sources.StencilSource`, a name
    ('Box-2D1R', 'Heat-2D') or a file (offsets, a ``.npy`` weight array, a C loop nest)."""
    from .sources.result import StencilSource
    from .stencil import Stencil, parse_stencil

    if isinstance(stencil, Stencil):
        return stencil
    if isinstance(stencil, StencilSource):
        return stencil.stencil
    if isinstance(stencil, str) or hasattr(stencil, "__fspath__"):
        return parse_stencil(str(stencil))
    raise TcAdvisorError(f"stencil {_short(stencil)} is neither a Stencil nor a stencil name "
                         f"({type(stencil).__name__}); expected e.g. 'Box-2D1R', or tcadvisor.stencil_from(...) for "
                         "a weight array, a mapping, an update function or an expression")


def as_alpha(alpha: Any):
    """An :class:`~tcadvisor.advisor.AlphaChoice` (``None``: the advisor's default) from a choice, mode or number."""
    from .alpha_policy import AlphaChoice

    if alpha is None or isinstance(alpha, AlphaChoice):
        return alpha
    return AlphaChoice.parse(alpha)


def as_impl(value: Any):
    """One implementation profile, from a profile or its name."""
    from .impls import ImplProfile, find_impl

    if isinstance(value, ImplProfile):
        return value
    if isinstance(value, str):
        return find_impl(value)
    raise TcAdvisorError(f"implementation {value!r} is neither a profile nor a name (see 'tcadvisor impls')")


def as_impls(impls: Any) -> dict:
    """Implementation profiles by unit, from ``{unit: profile or name}`` or a list of profiles and names.

    A list is read like repeated ``--impl``: each profile replaces the default
    of its own unit, and two for one unit are an error.
    """
    from .hardware import UNITS
    from .impls import ImplProfile

    profile = as_impl

    if impls is None:
        return {}
    if isinstance(impls, dict):
        out = {}
        for unit, value in impls.items():
            prof = profile(value)
            if unit not in UNITS:
                raise TcAdvisorError(f"unit {unit!r} is not an execution unit; expected one of {', '.join(UNITS)}")
            if prof.unit != unit:
                raise TcAdvisorError(f"{prof.name} runs on {prof.unit}, not on {unit}")
            out[unit] = prof
        return out
    try:
        items = [impls] if isinstance(impls, (str, ImplProfile)) else _bounded(impls, "implementations", MAX_IMPLS)
    except TypeError:
        items = [impls]  # reported by profile() as what it is not
    out = {}
    for value in items:
        prof = profile(value)
        if prof.unit in out:
            raise TcAdvisorError(f"--impl {prof.name}: {out[prof.unit].name} was already chosen for {prof.unit}")
        out[prof.unit] = prof
    return out


def as_advice(advice: Any, what: str = "advice"):
    """An :class:`~tcadvisor.advisor.Advice`: one itself, or a stencil (a Stencil, a name such as
    'Box-2D1R' or an offsets file) answered by :func:`~tcadvisor.advisor.advise` with its defaults."""
    from .advisor import Advice, advise
    from .sources.result import StencilSource
    from .stencil import Stencil

    if isinstance(advice, Advice):
        return advice
    if isinstance(advice, (str, Stencil, StencilSource)) or hasattr(advice, "__fspath__"):
        return advise(advice)
    raise TcAdvisorError(f"{what} {_short(advice)} ({type(advice).__name__}) is neither an Advice nor a stencil; "
                         "expected tcadvisor.advise(...)'s answer or a stencil name such as 'Box-2D1R'")
