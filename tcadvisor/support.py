"""What a bundled kernel runs, asked of the kernel itself.

The advisor's default answer is about the three bundled kernels (``tcadvisor-cc``,
``tcadvisor-tc``, ``tcadvisor-sptc``), so what it says one of them runs must be what
that kernel accepts, not what a list elsewhere claims.  One source of truth:

* which dtypes and precisions: the kernel class's :meth:`~tcadvisor.gpu.kernel.BundledKernel.field_dtypes`,
  in the order the profile prefers them;
* which stencils and depths: the class's own
  :meth:`~tcadvisor.gpu.kernel.BundledKernel.unsupported` (shape, fused radius, row
  masks, precision, and with the spec's compute capability the instructions the GPU
  lacks), then the launch plan's limits on the GPU's multiprocessors
  (:func:`tcadvisor.refinement.cannot_run`: halos wider than the tile, shared memory
  beyond what a block may have, a block never resident);
* whether the GPU can run the kernel at all (:func:`gpu_refusal`): an NVIDIA GPU whose
  spec has a ``multiprocessors`` section (the plan's occupancy needs it), an
  instruction of the kernel's for this precision that the GPU executes, and no
  architecture refusal by the kernel.  Where that fails the advisor falls back to the
  published implementations and the base model for that unit, and says why.

Nothing here imports CuPy: the checks are the kernels' class-level ones.
"""
from __future__ import annotations

from .dtypes import BYTES
from .hardware import UNIT_LABELS, GpuSpec
from .impls import ImplProfile
from .mma import MmaShape
from .stencil import Stencil


def kernel_class(profile: ImplProfile):
    from .gpu import registry

    return registry.kernel_class(profile.kernel)


def _label(profile: ImplProfile) -> str:
    unit = "CUDA-core" if profile.unit == "cuda_core" else UNIT_LABELS[profile.unit][:-1]
    return f"the bundled {unit} kernel ({profile.name})"


def kernel_precision(profile: ImplProfile, dtype: str) -> tuple[str | None, str | None]:
    """The precision ``profile``'s kernel computes ``dtype`` in, or why it runs no such fields.

    The profile says which precision it prefers for a dtype (float: FP32 on CUDA cores,
    TF32 on Tensor Cores); the kernel class says which it implements on which fields.
    """
    fields = kernel_class(profile).field_dtypes()
    for precision in profile.precisions.get(dtype, ()):
        if fields.get(precision) == dtype:
            return precision, None
    runs = sorted(set(fields.values()), key=list(BYTES).index)
    return None, f"{_label(profile)} runs {', '.join(runs)} fields, not {dtype}"


def device_of(gpu: GpuSpec) -> dict | None:
    """What the kernels' device checks read, from the spec (None: the spec gives no compute capability)."""
    return {"cc": gpu.compute_capability} if gpu.compute_capability is not None else None


def instruction(profile: ImplProfile, gpu: GpuSpec, precision: str) -> MmaShape | None:
    """The first of the profile's instructions for ``precision`` that the GPU executes (None: none, or CUDA cores)."""
    listed = gpu.shapes(profile.unit, precision)
    return next((s for s in profile.mma.get(precision, ()) if s in listed), None)


def gpu_refusal(profile: ImplProfile, gpu: GpuSpec, precision: str | None) -> str | None:
    """Why ``gpu`` cannot run ``profile``'s kernel at all (None: it can, as far as its spec tells).

    ``precision`` None (the kernel runs no field of the dtype asked) checks only what
    does not depend on it.
    """
    if gpu.vendor and gpu.vendor.strip().upper() != "NVIDIA":
        return f"{gpu.name} is an {gpu.vendor} GPU and the bundled kernels are CUDA"
    if gpu.multiprocessors is None:
        return (f"{gpu.name}'s spec has no multiprocessors section, so the bundled kernels' launch plans "
                "cannot be sized on it")
    if precision is None or not gpu.has(profile.unit, precision):
        return None  # the unit is not available here either way; said per option
    if profile.unit != "cuda_core" and instruction(profile, gpu, precision) is None:
        listed = gpu.shapes(profile.unit, precision)
        mine = ", ".join(map(str, profile.mma.get(precision, ()))) or "none listed"
        return (f"{gpu.name} executes none of {profile.name}'s {precision.upper()} instructions ({mine}; its spec "
                f"lists {', '.join(map(str, listed)) or 'none'})")
    device = device_of(gpu)
    if device is not None:
        return kernel_class(profile).device_reason(precision, device)
    return None


def depth_refusal(profile: ImplProfile, stencil: Stencil, fuse: int, dtype: str, precision: str, gpu: GpuSpec,
                  mma: MmaShape | None = None, grid: tuple[int, int, int] | None = None) -> str | None:
    """Why ``profile``'s kernel cannot run ``stencil`` fused ``fuse`` times in ``dtype`` on ``gpu`` (None: it can).

    The kernel class's refusal (with the spec's compute capability where known), then
    its launch plan's on the GPU's multiprocessors.  ``mma`` defaults to the first
    instruction of the profile the GPU executes (the plan's fit does not depend on it).
    """
    from .refinement import Context, cannot_run

    why = kernel_class(profile).unsupported(stencil, fuse, dtype, precision, device_of(gpu))
    if why:
        return why
    if gpu.multiprocessors is None:
        return None  # gpu_refusal says so; no plan can be sized
    if mma is None and profile.unit != "cuda_core":
        mma = instruction(profile, gpu, precision)
        if mma is None:
            return gpu_refusal(profile, gpu, precision)
    ctx = Context(profile, profile.tiling, profile.unit, stencil, fuse, dtype, precision, mma, gpu, grid)
    return cannot_run(ctx, fuse)


def stencil_refusal(profile: ImplProfile, stencil: Stencil, dtype: str) -> str | None:
    """Why ``profile``'s kernel runs ``stencil`` in ``dtype`` at no depth, whatever the GPU (None: at t = 1 it may).

    The class's refusals grow with the depth (fused radius r·t, rows of the fused
    mask), so one refused at t = 1 is refused at every depth.
    """
    precision, why = kernel_precision(profile, dtype)
    if why:
        return why
    return kernel_class(profile).unsupported(stencil, 1, dtype, precision)
