"""The model over a radius × fusion-depth grid, as a pandas DataFrame (what maps draw).

Each radius is one vectorised model call per unit through
:func:`tcadvisor.advisor.evaluate_unit`, with the implementations and α policy
:func:`~tcadvisor.advisor.advise` uses, so every cell is exactly what ``advise``
reports for that configuration.
"""
from __future__ import annotations

from .advisor import AlphaChoice, cuda_core_peak, evaluate_unit, implementations, _unavailable
from .hardware import UNITS, GpuSpec
from .queryargs import DEFAULT_FUSES, DEFAULT_RADII
from .stencil import SHAPES, Stencil, check_fuse

#: Columns of :func:`sweep`'s DataFrame.
COLUMNS = ["gpu", "gpu_name", "stencil", "shape", "dims", "radius", "fuse", "unit", "impl", "precision", "mma",
           "peak", "available", "reason", "alpha", "alpha_source", "beta", "flops_per_point", "bytes_per_point",
           "intensity", "ridge", "bound", "gstencils", "speedup", "scenario", "model"]


def sweep(shape: str, dims: int, dtype: str, gpu: "GpuSpec | str", radii=DEFAULT_RADII, fuses=DEFAULT_FUSES,
          impls=None, alpha_choice: "AlphaChoice | str | float | None" = None, model: str = "base", *,
          alpha: "AlphaChoice | str | float | None" = None):
    """One row per (radius, t, unit); columns :data:`COLUMNS`.

    ``alpha_source`` is ``constructed``, ``paper`` or ``user`` for Tensor Core rows
    and empty for CUDA cores; ``mma`` is the instruction executed and ``peak`` its
    FLOP/s; ``model`` is the variant the row was evaluated with (``refined`` only
    where the implementation declares its tiling).  ``alpha=`` is ``alpha_choice``
    as ``--alpha`` spells it.  Depths beyond the work budget come back unavailable
    with the reason.
    """
    import pandas as pd

    from .arguments import as_dtype, as_gpu, as_impls
    from .errors import TcAdvisorError
    from .stencil import check_dims, check_radius

    if shape not in SHAPES:
        raise TcAdvisorError(f"shape {shape!r} is not one of {', '.join(SHAPES)}")
    dims, dtype, gpu = check_dims(dims), as_dtype(dtype), as_gpu(gpu)
    chosen = as_impls(impls)
    if alpha is not None and alpha_choice is not None:
        raise TcAdvisorError("give α once: alpha_choice or alpha (the same argument), not both")
    choice = AlphaChoice.parse(alpha if alpha is not None else alpha_choice)
    from .model import get_variant

    variant = get_variant(model).name
    radii = [check_radius(r) for r in radii]
    fuses = [check_fuse(t) for t in fuses]
    rows = []
    for radius in radii:
        stencil = getattr(Stencil, shape)(dims, radius)
        used = implementations(stencil, dtype, gpu, chosen)
        cc_impl, cc_why = used["cuda_core"]
        cc_peak = None if cc_why else cuda_core_peak(cc_impl, stencil, dtype, gpu)
        for unit in UNITS:
            impl, why = used[unit]
            options = ([_unavailable(unit, t, why, impl) for t in fuses] if why is not None
                       else evaluate_unit(unit, impl, stencil, dtype, gpu, fuses, choice, cc_peak, model=variant,
                                          cc_impl=None if cc_why else cc_impl))
            for opt in options:
                rows.append({
                    "gpu": gpu.short, "gpu_name": gpu.name, "stencil": stencil.name, "shape": shape, "dims": dims,
                    "radius": radius, "fuse": opt.fuse, "unit": unit,
                    "impl": opt.impl.name if opt.impl else None, "precision": opt.precision,
                    "mma": str(opt.mma_shape) if opt.mma_shape is not None else None,
                    "peak": opt.peak if opt.available else float("nan"),
                    "available": opt.available, "reason": opt.reason,
                    "alpha": float(opt.alpha) if opt.available else float("nan"),
                    "alpha_source": opt.alpha_source or "",
                    "beta": float(opt.beta) if opt.available else float("nan"),
                    "flops_per_point": opt.flops_per_point, "bytes_per_point": opt.bytes_per_point,
                    "intensity": opt.intensity, "ridge": opt.ridge,
                    "bound": opt.bound,
                    "gstencils": opt.gstencils,
                    "speedup": opt.speedup if opt.speedup is not None else float("nan"),
                    "scenario": opt.scenario if opt.scenario is not None else 0,
                    "model": opt.model if opt.available else variant,
                })
    return pd.DataFrame(rows, columns=COLUMNS)
