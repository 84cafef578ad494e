"""tcadvisor: should this stencil run on CUDA cores, dense Tensor Cores or Sparse Tensor Cores?

The package is organised by what a reader looks for:

* :mod:`tcadvisor.model`      — the roofline model with α and β, in SymPy (the one source of the equations)
* :mod:`tcadvisor.stencil`    — stencils (optionally weighted), their fused supports, K, K_t and β
* :mod:`tcadvisor.minkowski`  — exact Minkowski sums of custom stencils within a work budget
* :mod:`tcadvisor.hardware`   — GPU specs from ``hwspecs/*.yaml``
* :mod:`tcadvisor.impls`      — implementation profiles from ``models/*.yaml``
* :mod:`tcadvisor.transforms` — α by construction (ConvStencil, SPIDER, SparStencil, LoRAStencil, TCStencil,
  the bundled row band) with NumPy emulations; :func:`tcadvisor.transforms.alpha_for` counts it
* :mod:`tcadvisor.advisor`    — scenarios, best fusion depth, verdict
* :mod:`tcadvisor.cli`        — the ``tcadvisor`` command
"""
__version__ = "0.1.0"
