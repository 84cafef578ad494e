"""Which bundled kernel runs a unit or an implementation profile, at which precision.

The profiles in ``models/`` are the source of truth: a profile with a
``kernel: NAME`` field is run by the class ``KERNEL`` of module
``tcadvisor.gpu.NAME``, at the precision its ``precisions`` list gives for the
dtype (double -> fp64; float -> fp32 on CUDA cores, tf32 on Tensor Cores;
half -> fp16; bfloat16 -> bf16).  Nothing here imports CuPy.
"""
from __future__ import annotations

import importlib

from ..errors import TcAdvisorError
from ..hardware import UNITS
from ..impls import ImplProfile, catalog, find_impl


def _bundled() -> list[ImplProfile]:
    return [p for p in catalog().values() if p.kernel]


def names() -> list[str]:
    """Registry names of the bundled kernels (one per profile that names a kernel)."""
    return sorted({p.kernel for p in _bundled()})


def kernel_class(name: str):
    """The :class:`~tcadvisor.gpu.kernel.BundledKernel` subclass registered as ``name`` (imported lazily)."""
    if name not in names():
        raise TcAdvisorError(f"unknown bundled kernel {name!r}; expected one of {', '.join(names())}")
    module = importlib.import_module(f"tcadvisor.gpu.{name}")
    cls = getattr(module, "KERNEL", None)
    if cls is None or getattr(cls, "name", None) != name:
        raise TcAdvisorError(f"module tcadvisor.gpu.{name} defines no KERNEL class named {name!r}")
    return cls


def units() -> list[str]:
    """Units that have a bundled kernel, in the advisor's order."""
    have = {p.unit for p in _bundled()}
    return [u for u in UNITS if u in have]


def bundled_profile(unit: str) -> ImplProfile:
    """The profile of ``unit``'s bundled kernel."""
    found = [p for p in _bundled() if p.unit == unit]
    if not found:
        raise TcAdvisorError(f"--unit {unit!r}: the bundled kernels run on {', '.join(units())}")
    if len(found) > 1:
        raise TcAdvisorError(f"several bundled profiles run {unit} ({', '.join(p.name for p in found)}); "
                             "name one with --impl")
    return found[0]


def resolve(unit: str | None = None, impl: str | None = None) -> ImplProfile:
    """The profile that ``unit`` or ``impl`` (a profile name) picks; neither: CUDA cores."""
    if impl is not None:
        prof = find_impl(impl)
        if not prof.kernel:
            bundled = ", ".join(p.name for p in _bundled())
            raise TcAdvisorError(f"--impl {impl!r}: {prof.name} has no bundled kernel; "
                                 f"the bundled implementations are {bundled}")
        if unit is not None and unit != prof.unit:
            raise TcAdvisorError(f"--impl {prof.name} runs on {prof.unit}, not on --unit {unit}")
        return prof
    return bundled_profile(unit or "cuda_core")


def precision(profile: ImplProfile, dtype: str) -> str:
    """The precision ``profile``'s kernel computes ``dtype`` in (the first of its list the kernel has)."""
    wanted = profile.precisions.get(dtype)
    if not wanted:
        raise TcAdvisorError(f"{profile.name} has no {dtype} variant; it runs {', '.join(profile.precisions)}")
    have = kernel_class(profile.kernel).precisions
    for p in wanted:
        if p in have:
            return p
    raise TcAdvisorError(f"{profile.name} lists {'/'.join(wanted).upper()} for {dtype}, which its kernel "
                         f"{profile.kernel} does not implement ({', '.join(have)})")
