"""tcadvisor: should this stencil run on CUDA cores, dense Tensor Cores or Sparse Tensor Cores?

The package is organised by what a reader looks for:

* :mod:`tcadvisor.model`      — the roofline model with α and β, in SymPy (the one source of the equations)
* :mod:`tcadvisor.stencil`    — stencils, their fused supports, K, K_t and β
* :mod:`tcadvisor.hardware`   — GPU specs from ``hwspecs/*.yaml`` (file format: ``docs/hwspec-format.md``)
* :mod:`tcadvisor.impls`      — implementation profiles from ``models/*.yaml``
* :mod:`tcadvisor.transforms` — α by construction (ConvStencil, SPIDER) with NumPy emulations
* :mod:`tcadvisor.advisor`    — scenarios, best fusion depth, verdict
* :mod:`tcadvisor.cli`        — the ``tcadvisor`` command
"""
__version__ = "0.1.0"
