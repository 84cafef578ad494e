"""What a GPU is to the model: bandwidth and peak rates, each with its source.

In the manner of kerncraft's machine files, a GPU is data, not code.  This
module holds that data once it has been read (:class:`GpuSpec`, :class:`Rate`);
:mod:`tcadvisor.hardware_schema` reads and validates the YAML files and
:mod:`tcadvisor.hardware` keeps the catalogue.  The file format is described in
``docs/hwspec-format.md``.

A unit or precision the GPU does not have is simply absent (no GPU has sparse
FP64), which the advisor reports as "not available" rather than as an error.
Rates differ between the MMA instructions of one precision (FP64 ``mma.sync``
m8n8k4 runs at half the m16n8k8 rate on the H100), so a spec may give a rate
per instruction shape; :meth:`GpuSpec.instruction_peak` answers for a shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .data import data_dir
from .mma import MmaShape

#: Execution units, in the order the advisor reports them.
UNITS = ("cuda_core", "tensor_core", "sparse_tensor_core")
UNIT_LABELS = {
    "cuda_core": "CUDA cores",
    "tensor_core": "Tensor Cores",
    "sparse_tensor_core": "Sparse Tensor Cores",
}
#: Units that execute MMA instructions (and so may list instruction shapes).
MMA_UNITS = ("tensor_core", "sparse_tensor_core")
#: Precisions a spec may give rates for.
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16")
TFLOPS = 1e12


@dataclass(frozen=True)
class Rate:
    """One number from a spec file, in SI units (bytes/s or FLOP/s), with where it came from.

    ``inherited`` is true for the rate of an instruction shape that the spec
    lists without a rate of its own: the value is then the precision's rate,
    and ``source`` says so.
    """

    value: float
    source: str
    inherited: bool = False


@dataclass(frozen=True)
class Multiprocessors:
    """What the streaming multiprocessors hold (a spec's optional ``multiprocessors`` section).

    The refined model needs them to know how many blocks of a kernel are resident
    at once (occupancy), and the SM clock to turn cycles into seconds.  Sizes in
    bytes, the clock in Hz.
    """

    count: int  # SMs on the GPU
    clock: float  # SM clock (Hz) the spec's rates correspond to
    shared_memory: int  # bytes of shared memory per SM usable by resident blocks
    shared_memory_per_block: int  # bytes one block may use (opt-in maximum)
    shared_memory_reserved: int  # bytes the system reserves per resident block
    registers: int  # 32-bit registers per SM
    max_warps: int  # resident warps per SM
    max_blocks: int  # resident blocks per SM
    source: str = ""


@dataclass(frozen=True)
class RefinedConstants:
    """The refined model's constants fitted on this very GPU (a spec's optional ``refined_constants`` section).

    ``tcadvisor calibrate --fit`` writes it: the bundled constants are fitted on the project's
    H100 and H200, and latencies and bandwidth fractions differ on other GPUs.  The constants
    describe the bundled kernels as they were when measured, so ``kernel_fingerprint`` records
    which kernels (:func:`tcadvisor.fingerprint.kernel_fingerprint`); the refined model uses them
    only while that is still today's fingerprint (:func:`tcadvisor.refinement.constants`).
    """

    values: Mapping[str, float]  # constant name (tcadvisor.model.FITTED) -> value
    kernel_fingerprint: str
    runs: int  # recorded runs the fit used
    fitted: str  # date of the fit, YYYY-MM-DD
    in_sample_median_error: float  # median |predicted/measured - 1| on those runs
    corpus: str = ""  # the recorded runs (a CSV, relative to the spec file), so that they can be fitted again
    source: str = ""


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    vendor: str
    path: Path
    bandwidth: Rate  # bytes/s
    peaks: Mapping[str, Mapping[str, Rate]]  # unit -> precision -> FLOP/s (the precision's fastest instruction)
    mma_shapes: Mapping[str, Mapping[str, tuple[MmaShape, ...]]] = field(default_factory=dict)
    #: unit -> precision -> shape -> the shape's own rate (schema 2 files only)
    instruction_rates: Mapping[str, Mapping[str, Mapping[MmaShape, Rate]]] = field(default_factory=dict)
    #: unit -> precision -> shape -> where the listing of the shape comes from (e.g. the PTX ISA)
    shape_sources: Mapping[str, Mapping[str, Mapping[MmaShape, str]]] = field(default_factory=dict)
    architecture: str = ""
    aliases: tuple[str, ...] = ()
    device_names: tuple[str, ...] = ()
    default: bool = False
    schema: int = 1
    multiprocessors: Multiprocessors | None = None  # None: not given (the refined model then does not apply)
    #: (major, minor) of an NVIDIA GPU, None where the spec does not say: what decides whether the bundled
    #: kernels' instructions exist on it (FP64 DMMA and mma.sp need 8.0), before any GPU is at hand
    compute_capability: tuple[int, int] | None = None
    compute_capability_source: str = ""
    #: the refined model's constants fitted on this GPU (calibrate --fit); None: the bundled constants apply
    refined_constants: RefinedConstants | None = None
    #: unit -> precision -> shape -> rate of Hopper's warpgroup ``wgmma`` (optional ``warpgroup_mma`` section):
    #: a yardstick beside the executed ``mma``, never used as the rate of a bundled kernel's instruction
    warpgroup_rates: Mapping[str, Mapping[str, Mapping[MmaShape, Rate]]] = field(default_factory=dict)

    def peak(self, unit: str, precision: str) -> float | None:
        """Peak FLOP/s of ``unit`` at ``precision``, or ``None`` where the GPU has none."""
        rate = self.peaks.get(unit, {}).get(precision)
        return None if rate is None else rate.value

    def has(self, unit: str, precision: str) -> bool:
        return self.peak(unit, precision) is not None

    def ridge(self, unit: str, precision: str) -> float | None:
        """Ridge point P/B in FLOP/byte."""
        peak = self.peak(unit, precision)
        return None if peak is None else peak / self.bandwidth.value

    def shapes(self, unit: str, precision: str) -> tuple[MmaShape, ...]:
        """The MMA shapes the GPU executes for ``unit`` and ``precision``, in the file's order."""
        return self.mma_shapes.get(unit, {}).get(precision, ())

    def instruction_peak(self, unit: str, precision: str, shape: MmaShape | str) -> Rate | None:
        """Peak FLOP/s of one MMA instruction shape.

        The shape's own rate where the spec gives one; else, for a shape the
        spec lists, the precision's rate with ``inherited=True``; else ``None``
        (the GPU does not execute that shape, as far as the spec says).
        """
        shape = shape if isinstance(shape, MmaShape) else MmaShape.parse(shape)
        own = self.instruction_rates.get(unit, {}).get(precision, {}).get(shape)
        if own is not None:
            return own
        headline = self.peaks.get(unit, {}).get(precision)
        if headline is None or shape not in self.shapes(unit, precision):
            return None
        listed = self.shape_sources.get(unit, {}).get(precision, {}).get(shape)
        why = f"; listed per {listed}" if listed else ""
        return Rate(headline.value, f"the {precision} rate of the spec ({shape} has no rate of its own{why}): "
                                    f"{headline.source}", inherited=True)

    @property
    def bundled(self) -> bool:
        """True for the specs shipped with tcadvisor (``hwspecs/``), false for the user's files."""
        return self.path.resolve().parent == data_dir("hwspecs").resolve()

    @property
    def short(self) -> str:
        """The name used in tables: the first alias, else the file stem."""
        return self.aliases[0] if self.aliases else self.key
