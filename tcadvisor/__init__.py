"""tcadvisor: should this stencil run on CUDA cores, dense Tensor Cores or Sparse Tensor Cores?

The package is organised by what a reader looks for:

* :mod:`tcadvisor.model`        — the roofline model with α and β, in SymPy (the one source of the equations;
  variants ``base``, the paper's, and ``refined``; written out in ``docs/model.md``)
* :mod:`tcadvisor.refinement`   — the refined variant's terms for an implementation whose tiling is known
* :mod:`tcadvisor.stencil`      — stencils (optionally weighted), their fused supports, K, K_t and β
* :mod:`tcadvisor.minkowski`    — exact Minkowski sums of custom stencils within a work budget
* :mod:`tcadvisor.sources`      — stencils from the user's code: weight arrays, mappings, update functions,
  pystencils/Devito/SymPy expressions, C loop nests (:func:`stencil_from`; ``docs/sources.md``)
* :mod:`tcadvisor.hardware`     — GPU specs from ``hwspecs/*.yaml`` (format: ``docs/hwspec-format.md``)
* :mod:`tcadvisor.impls`        — implementation profiles from ``models/*.yaml``
* :mod:`tcadvisor.transforms`   — α by construction (ConvStencil, SPIDER, SparStencil, LoRAStencil, TCStencil,
  the bundled row band) with NumPy emulations; :func:`tcadvisor.transforms.alpha_for` counts it
* :mod:`tcadvisor.alpha_policy` — which α an option uses and where it came from
* :mod:`tcadvisor.advisor`      — scenarios, best fusion depth, verdict (:mod:`tcadvisor.wording` words it)
* :mod:`tcadvisor.sweeps`       — the model over radius × depth grids (what maps draw)
* :mod:`tcadvisor.plots`        — sweet-spot maps, rooflines, the paper's figures
* :mod:`tcadvisor.gpu`          — bundled kernels run through CuPy (imported only when used);
  :func:`apply` runs the advised configuration on the user's own array
* :mod:`tcadvisor.explanation`  — ``tcadvisor explain``: the model's chain of equations with numbers
* :mod:`tcadvisor.queryargs`    — the arguments of one query and the default ranges, shared by the commands
* :mod:`tcadvisor.cli`          — the ``tcadvisor`` command

The public Python API is importable from here (lazily, so ``import tcadvisor`` stays
light); every function checks its arguments as the command line does, accepts names
where objects are expected, and raises :class:`TcAdvisorError` with the CLI's
one-line messages.
"""
__version__ = "0.1.0"

#: Public names and the modules that define them (imported on first use).
_PUBLIC = {
    "advise": "tcadvisor.advisor",
    "Advice": "tcadvisor.advisor",
    "Option": "tcadvisor.advisor",
    "AlphaChoice": "tcadvisor.alpha_policy",
    "sweep": "tcadvisor.sweeps",
    "explain": "tcadvisor.explanation",
    "apply": "tcadvisor.gpu.applying",
    "Applied": "tcadvisor.gpu.applying",
    "Stencil": "tcadvisor.stencil",
    "parse_stencil": "tcadvisor.stencil",
    "stencil_from": "tcadvisor.sources",
    "StencilSource": "tcadvisor.sources",
    "GpuSpec": "tcadvisor.hardware",
    "find_spec": "tcadvisor.hardware",
    "find_impl": "tcadvisor.impls",
    "parse_dtype": "tcadvisor.dtypes",
    "advice_dict": "tcadvisor.report",
    "format_advice": "tcadvisor.report",
    "TcAdvisorError": "tcadvisor.errors",
    "WorkBudgetExceeded": "tcadvisor.errors",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str):
    if name in _PUBLIC:
        import importlib

        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'tcadvisor' has no attribute {name!r}")
