"""Transformations that map a (fused) stencil onto Tensor Core MMA instructions.

Each transformation *constructs* the operand matrices it would feed to the
Tensor Cores, padded to the instruction shape (permuted and 2:4-structured where
sparse), and α is counted from them:

    α = useful MACs / executed MACs   (per output point)

so α is never a free constant: it follows from the transformation, the fused
stencil and the MMA shape.  The NumPy emulations multiply the constructed
operands MMA by MMA to prove they compute the stencil; the bundled kernels
upload the same constructions.  For large fused kernels the same counts come
from compact descriptions of the support (:mod:`.support`), never from masks.

One entry point for everything that needs α: :func:`alpha_for`.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType

import numpy as np

from ..errors import TcAdvisorError, WorkBudgetExceeded
from ..mma import MmaShape
from .base import PRECISIONS, AlphaCount, Construction, check_precision

_REGISTRY: dict[str, str] = {
    "convstencil": "tcadvisor.transforms.convstencil",
    "spider": "tcadvisor.transforms.spider",
    "rowband": "tcadvisor.transforms.rowband",
    "tcstencil": "tcadvisor.transforms.tcstencil",
    "lorastencil": "tcadvisor.transforms.lorastencil",
    "sparstencil": "tcadvisor.transforms.sparstencil",
}

#: The instruction and precision each transformation's paper used (``alpha --table`` defaults).
PAPER_SETTING = {
    "convstencil": ("fp64", "m8n8k4"),
    "spider": ("fp16", "m16n8k32"),
    "rowband": ("fp64", "m16n8k8"),
    "tcstencil": ("fp16", "m16n8k16"),
    "lorastencil": ("fp64", "m8n8k4"),
    "sparstencil": ("fp16", "m16n8k32"),
}


def names() -> list[str]:
    return sorted(_REGISTRY)


def module(name: str) -> ModuleType:
    """The module of transformation ``name`` (``construct``, ``count``, ``emulate``, ``DIMS``, ``SPARSE``)."""
    key = str(name).strip().lower()
    if key not in _REGISTRY:
        raise TcAdvisorError(f"unknown transformation {name!r}; known: {', '.join(names())}")
    return importlib.import_module(_REGISTRY[key])


def construction(name: str):
    """The ``construct(weights, shape, ...)`` function of transformation ``name``."""
    return module(name).construct


def _shape(shape) -> MmaShape:
    return shape if isinstance(shape, MmaShape) else MmaShape.parse(shape)


def _check(mod: ModuleType, dims: int) -> None:
    if dims not in mod.DIMS:
        raise TcAdvisorError(f"{mod.TITLE} has no construction for {dims}D stencils "
                             f"(it handles {'/'.join(f'{d}D' for d in mod.DIMS)})")


def construct(name: str, weights, shape, precision: str = "fp64", **options) -> Construction:
    """Build transformation ``name``'s operands for a weight array (small kernels; see :func:`alpha_for`)."""
    from .base import check_weights

    mod = module(name)
    w = check_weights(weights)
    _check(mod, w.ndim)
    return mod.construct(w, _shape(shape), precision=check_precision(precision), **options)


def emulate(name: str, x, weights, shape, precision: str = "fp64", **options) -> np.ndarray:
    """One periodic stencil step on ``x`` through transformation ``name``'s Tensor Core dataflow (NumPy)."""
    mod = module(name)
    return mod.emulate(x, weights, _shape(shape), precision=check_precision(precision), **options)


def count_support(name: str, support, shape, precision: str = "fp64", **options) -> AlphaCount:
    """α of transformation ``name`` for a support descriptor (:mod:`.support`)."""
    mod = module(name)
    _check(mod, support.dims)
    return mod.count(support, _shape(shape), precision=check_precision(precision), **options)


@lru_cache(maxsize=8192)
def _alpha_for(name: str, stencil, fuse: int, shape: MmaShape, precision: str, options: tuple) -> AlphaCount:
    from ..stencil import check_fuse
    from .support import fused_support

    mod = module(name)
    _check(mod, stencil.dims)
    support = fused_support(stencil, check_fuse(fuse))
    try:
        result = mod.count(support, shape, precision=check_precision(precision), **dict(options))
    except WorkBudgetExceeded as exc:
        raise _with_depth(exc, mod, stencil, fuse) from None
    details = {"stencil": stencil.name, "fuse": fuse, "support": support.describe(), **result.details}
    return AlphaCount(result.transform, result.shape, result.precision, result.useful, result.executed, details)


def _extents(stencil, fuse: int) -> tuple[int, ...]:
    """Bounding-box sides of the fused support (exact: the box of t·S is t times the box of S)."""
    if stencil.shape in ("box", "star"):
        return (2 * stencil.radius * fuse + 1,) * stencil.dims
    pts = np.array(stencil.offsets)
    return tuple(int(span) * fuse + 1 for span in pts.max(axis=0) - pts.min(axis=0))


def _with_depth(exc: WorkBudgetExceeded, mod: ModuleType, stencil, fuse: int) -> WorkBudgetExceeded:
    """The transformation's budget error, naming the stencil, the depth and the deepest depth within budget."""
    if "deepest depth within budget" in str(exc):  # already complete (the fused weights' own budget)
        return exc
    deepest = 0
    cost = getattr(mod, "mask_cost", None)
    if cost is not None:
        deepest = next((t for t in range(fuse - 1, 0, -1) if cost(_extents(stencil, t)) <= mod.MASK_COST_BUDGET), 0)
    return WorkBudgetExceeded(f"{stencil.name} fused x{fuse}: {exc}; the deepest depth within budget is "
                              f"t = {deepest}", deepest=deepest)


def alpha_for(transform: str, stencil, fuse: int, shape, precision: str, **options) -> AlphaCount:
    """α of ``transform`` for the ``fuse``-step fused ``stencil`` on instruction ``shape`` at ``precision``.

    Cached; box and star stencils are counted in closed form at any radius and
    depth, custom stencils within the work budget (beyond it
    :class:`~tcadvisor.errors.WorkBudgetExceeded`, raised before working).
    ``options`` are the transformation's own (SPIDER's ``L``, SparStencil's
    ``r1``/``r2``, TCStencil's ``L``).
    """
    from ..arguments import as_stencil
    from ..stencil import check_fuse

    if not isinstance(transform, str):
        raise TcAdvisorError(f"transformation {transform!r} is not a name; known: {', '.join(names())}")
    key = transform.strip().lower()
    mod = module(key)
    stencil = as_stencil(stencil)  # a Stencil, or a name such as 'Box-2D1R' as advise() takes
    fuse = check_fuse(fuse)
    if not isinstance(precision, str):
        raise TcAdvisorError(f"precision {precision!r} is not known; expected one of {', '.join(PRECISIONS)}")
    check_precision(precision)
    _check_options(mod, options)
    return _alpha_for(key, stencil, fuse, _shape(shape), precision, tuple(sorted(options.items())))


def check_options(transform: str, options: dict) -> None:
    """``options`` are options of ``transform``'s construction (a one-line error otherwise)."""
    _check_options(module(transform.strip().lower()), options)


def _check_options(mod: ModuleType, options: dict) -> None:
    """The transformation's own options (SPIDER's ``L``, ...): known names, integer values (or None)."""
    import inspect

    known = [n for n in inspect.signature(mod.count).parameters if n not in ("support", "shape", "precision")]
    for name, value in options.items():
        if name not in known:
            raise TcAdvisorError(f"{mod.TITLE} has no option {name!r}; its options: "
                                 f"{', '.join(known) if known else 'none'}")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise TcAdvisorError(f"{mod.TITLE} option {name}={value!r} ({type(value).__name__}) is not an "
                                 "integer; expected a positive integer or None")


def least_padding_shape(name: str, stencil_or_support, candidates, fuse: int = 1, precision: str | None = None):
    """Of ``candidates`` (preferred first), the instruction whose padded operands waste least.

    An implementation that can issue several MMA shapes picks the one giving the
    highest α for this fused kernel (ties: the earlier candidate).  The bundled
    Tensor Core kernel and the model both call this, so they agree on the shape.
    ``stencil_or_support`` is a :class:`~tcadvisor.stencil.Stencil` (fused
    ``fuse`` times), a support descriptor, or a kernel mask array.
    """
    from ..stencil import Stencil
    from .support import MaskSupport, Support

    mod = module(name)
    prec = precision or ("fp16" if mod.SPARSE else "fp64")
    best, best_alpha = None, None
    for shape in candidates:
        shape = _shape(shape)
        if isinstance(stencil_or_support, Stencil):
            alpha = alpha_for(name, stencil_or_support, fuse, shape, prec).alpha
        else:
            support = stencil_or_support if isinstance(stencil_or_support, Support) \
                else MaskSupport(np.asarray(stencil_or_support) != 0)
            alpha = count_support(name, support, shape, prec).alpha
        if best_alpha is None or alpha > best_alpha:
            best, best_alpha = shape, alpha
    return best


__all__ = ["AlphaCount", "Construction", "PAPER_SETTING", "alpha_for", "construct", "construction", "count_support",
           "emulate", "least_padding_shape", "module", "names"]
