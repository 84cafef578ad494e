"""The model over a radius × fusion-depth grid, as a pandas DataFrame (what maps draw).

Each radius is one vectorised model call per unit through
:func:`tcadvisor.advisor.evaluate_unit`, with the implementations, model and α
policy :func:`~tcadvisor.advisor.advise` uses (by default the bundled kernels with
the refined model, :func:`tcadvisor.advisor.unit_choices`), so every cell a kernel
runs is exactly what ``advise`` reports for that configuration.  A cell at a depth
the unit's bundled kernel cannot run, which ``advise`` reports as not available,
shows the unit's bound there instead (the base model at the kernel's own α, β and
peak), with ``bound_only`` set so that a map marks it and never recommends it.
"""
from __future__ import annotations

from .advisor import AlphaChoice, cuda_core_peak, evaluate_unit, unit_choices, _unavailable
from .hardware import UNITS, GpuSpec
from .search import DEFAULT_FUSES, DEFAULT_RADII
from .stencil import SHAPES, Stencil, check_fuse

#: Columns of :func:`sweep`'s DataFrame.
COLUMNS = ["gpu", "gpu_name", "stencil", "shape", "dims", "radius", "fuse", "unit", "impl", "precision", "mma",
           "peak", "available", "reason", "alpha", "alpha_source", "beta", "flops_per_point", "bytes_per_point",
           "intensity", "ridge", "bound", "gstencils", "speedup", "scenario", "model", "bound_gstencils",
           "bound_only"]


def sweep(shape: str, dims: int, dtype: str, gpu: "GpuSpec | str", radii=DEFAULT_RADII, fuses=DEFAULT_FUSES,
          impls=None, alpha_choice: "AlphaChoice | str | float | None" = None, model: str | None = None, *,
          alpha: "AlphaChoice | str | float | None" = None, progress=None):
    """One row per (radius, t, unit); columns :data:`COLUMNS`.

    ``alpha_source`` is ``constructed``, ``paper`` or ``user`` for Tensor Core rows
    and empty for CUDA cores; ``mma`` is the instruction executed and ``peak`` its
    FLOP/s; ``model`` is the variant the row was evaluated with (``refined`` only
    where the implementation declares its tiling); ``bound_gstencils`` the base
    model's bound at the row's α, β and peak; ``bound_only`` marks a row showing
    that bound at a depth the unit's bundled kernel cannot run (``reason`` says
    why).  ``model`` None is :func:`~tcadvisor.advisor.advise`'s default (the
    bundled kernels, refined; ``base`` with ``alpha="paper"``).  ``alpha=`` is
    ``alpha_choice`` as ``--alpha`` spells it.  Depths beyond the work budget come
    back unavailable with the reason.  ``progress``, a callable, is told ``(i, n, what)`` before each
    radius, the unit of work (every unit at every depth): the ``map`` command's progress line.
    """
    import pandas as pd

    from .arguments import as_dims, as_dtype, as_gpu, as_impls, as_shape, int_list
    from .errors import TcAdvisorError
    from .stencil import check_radius

    shape, dims, dtype = as_shape(shape), as_dims(dims), as_dtype(dtype)
    # radii and depths as map_data reads them (an int, '1-8', a range, a list), checked before anything is built
    radii = int_list(radii, "radii", check_radius)
    fuses = int_list(fuses, "fusion depths", check_fuse)
    gpu = as_gpu(gpu)
    chosen = as_impls(impls)
    if alpha is not None and alpha_choice is not None:
        raise TcAdvisorError("give α once: alpha_choice or alpha (the same argument), not both")
    choice = AlphaChoice.parse(alpha if alpha is not None else alpha_choice)
    if progress is not None and not callable(progress):
        raise TcAdvisorError(f"progress is called with (i, n, what); got {type(progress).__name__}")
    from .model import get_variant

    if model is None:
        variant = "base" if choice.mode == "paper" else "refined"
    else:
        variant = get_variant(model).name
    rows = []
    for k, radius in enumerate(radii, 1):
        if progress is not None:
            progress(k, len(radii), f"r={radius}")
        stencil = getattr(Stencil, shape)(dims, radius)
        used = unit_choices(stencil, dtype, gpu, chosen, variant)
        cc = used["cuda_core"]
        cc_peak = None if cc.why else cuda_core_peak(cc.impl, stencil, dtype, gpu)
        per_unit = {}
        for unit in UNITS:
            impl, why = used[unit].impl, used[unit].why
            options = ([_unavailable(unit, t, why, impl) for t in fuses] if why is not None
                       else evaluate_unit(unit, impl, stencil, dtype, gpu, fuses, choice, cc_peak,
                                          model=used[unit].model, cc_impl=None if cc.why else cc.impl))
            bound_only = [False] * len(options)
            refused = [i for i, o in enumerate(options) if o.kernel_refused]
            if refused:  # the unit's bound where its kernel cannot run: shown, marked, never recommended
                bounds = evaluate_unit(unit, impl, stencil, dtype, gpu, [options[i].fuse for i in refused], choice,
                                       cc_peak, model="base", cc_impl=None if cc.why else cc.impl)
                for i, b in zip(refused, bounds):
                    if b.available:
                        b.reason, options[i], bound_only[i] = options[i].reason, b, True
            per_unit[unit] = (options, bound_only)
        cc_options, cc_bound = per_unit["cuda_core"]
        for unit in UNITS[1:]:  # as advise: no R for a kernel's cell where the CUDA-core kernel cannot run t
            for i, opt in enumerate(per_unit[unit][0]):
                if opt.available and not per_unit[unit][1][i] and (cc_bound[i] or cc_options[i].kernel_refused):
                    opt.scenario, opt.decision = None, None
                    opt.values["R"] = float("nan")
        for unit in UNITS:
            options, bound_only = per_unit[unit]
            for opt, only in zip(options, bound_only):
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
                    "bound_gstencils": opt.bound_gstencils,
                    "bound_only": only,
                })
    return pd.DataFrame(rows, columns=COLUMNS)
