"""Arguments of the public Python API, checked exactly as the command line checks them.

Each ``as_*`` function accepts the object itself or its name (a stencil name or
offsets file, a dtype alias, a GPU key/alias/spec file, an implementation name)
and returns the object, or raises :class:`~tcadvisor.errors.TcAdvisorError` with
the same one-line message the CLI prints.  A wrong *type* (a list where a
stencil is expected, say) is a user error too, not an AttributeError deep inside.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from .errors import TcAdvisorError


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def as_stencil(value: Any):
    from .stencil import Stencil, parse_stencil

    if isinstance(value, Stencil):
        return value
    if isinstance(value, str):
        return parse_stencil(value)
    raise TcAdvisorError(f"stencil {_describe(value)} is neither a Stencil nor a stencil name such as 'Box-3D1R'")


def as_dtype(value: Any) -> str:
    from .dtypes import parse_dtype

    if not isinstance(value, str):
        raise TcAdvisorError(f"dtype {_describe(value)} is not a name; expected double, float, half or bfloat16")
    return parse_dtype(value)


def as_gpu(value: Any):
    """A GpuSpec, a GPU key/alias/name or spec path; ``None`` means the embedded default spec."""
    from .hardware import as_spec, default_spec

    return default_spec() if value is None else as_spec(value)


def as_impl(value: Any):
    from .impls import ImplProfile, find_impl

    if isinstance(value, ImplProfile):
        return value
    if isinstance(value, str):
        return find_impl(value)
    raise TcAdvisorError(f"implementation {_describe(value)} is neither a profile nor a name (see 'tcadvisor impls')")


def as_impls(value: Any) -> dict:
    """``None``, a mapping unit -> profile/name, or an iterable of profiles/names (one per unit)."""
    from .hardware import UNITS

    if value is None:
        return {}
    items: Iterable
    if isinstance(value, Mapping):
        items = value.values()
        for unit in value:
            if unit not in UNITS:
                raise TcAdvisorError(f"unit {unit!r} is not one of {', '.join(UNITS)}")
    elif isinstance(value, str):
        items = [value]
    else:
        try:
            items = list(value)
        except TypeError:
            raise TcAdvisorError(f"impls {_describe(value)} must be a name, a list of names or a unit -> name mapping") from None
    chosen = {}
    for item in items:
        prof = as_impl(item)
        if prof.unit in chosen:
            raise TcAdvisorError(f"--impl {prof.name}: {chosen[prof.unit].name} was already chosen for {prof.unit}")
        chosen[prof.unit] = prof
    if isinstance(value, Mapping):
        for unit, prof in zip(value, chosen.values()):
            if prof.unit != unit:
                raise TcAdvisorError(f"implementation {prof.name} runs on {prof.unit}, not {unit}")
    return chosen
