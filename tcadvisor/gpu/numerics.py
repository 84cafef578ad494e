"""Number formats of the bundled kernels: storage types, rounding as the kernels round, unit roundoffs.

Everything here works on NumPy arrays and, unchanged, on CuPy arrays (the array
module is taken from the argument), so the correctness checker and the CPU
emulations share one definition of each rounding with the GPU runner.

Storage: ``double`` fields are float64, ``float`` float32, ``half`` float16.
CuPy has no bfloat16 type, so ``bfloat16`` fields are stored as the raw 16-bit
patterns in uint16 arrays; :func:`to_bf16_bits` and :func:`bf16_bits_to_float`
convert (round to nearest even, as ``cvt.rn.bf16.f32`` does).
"""
from __future__ import annotations

import numpy as np

#: dtype -> element type of the fields on the GPU.
STORAGE = {"double": np.float64, "float": np.float32, "half": np.float16, "bfloat16": np.uint16}

#: Unit roundoff u (half an ulp at 1) of each precision; round-to-nearest errors are at most u·|x|.
UNIT_ROUNDOFF = {"fp64": 2.0**-53, "fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}

#: Largest finite value of each 16-bit storage format (overflow guard for the checks).
FINITE_MAX = {"half": 65504.0, "bfloat16": 3.3895313892515355e38}


def array_module(x):
    """``cupy`` for CuPy arrays, else ``numpy``."""
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def round_tf32(x):
    """Round to TF32 (10-bit mantissa, nearest, ties away from zero) as ``cvt.rna.tf32.f32`` does.

    The input is first converted to float32 (what the kernel loads); the result
    is float32 with the low 13 mantissa bits cleared.
    """
    xp = array_module(x)
    bits = xp.asarray(x, dtype=xp.float32).view(xp.uint32).astype(xp.uint64)
    bits = (bits + 0x1000) & 0xFFFFE000
    return bits.astype(xp.uint32).view(xp.float32)


def to_bf16_bits(x):
    """bfloat16 bit patterns (uint16) of ``x``: float32 first, then round to nearest even."""
    xp = array_module(x)
    bits = xp.asarray(x, dtype=xp.float32).view(xp.uint32).astype(xp.uint64)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16).astype(xp.uint16)


def bf16_bits_to_float(bits):
    """float32 values of bfloat16 bit patterns (exact)."""
    xp = array_module(bits)
    return (xp.asarray(bits, dtype=xp.uint16).astype(xp.uint32) << 16).view(xp.float32)


def to_storage(x, dtype: str):
    """``x`` rounded into the storage array of ``dtype`` (bfloat16: uint16 bit patterns)."""
    xp = array_module(x)
    if dtype == "bfloat16":
        return to_bf16_bits(x)
    return xp.asarray(x).astype(STORAGE[dtype])


def from_storage(a, dtype: str):
    """float64 values of a storage array of ``dtype``."""
    xp = array_module(a)
    if dtype == "bfloat16":
        return bf16_bits_to_float(a).astype(xp.float64)
    return xp.asarray(a).astype(xp.float64)


def round_storage(x, dtype: str):
    """float64 ``x`` rounded to the values ``dtype`` can store (round to nearest even; via float32 for
    half and bfloat16, which is what a kernel storing its float32 accumulator does)."""
    xp = array_module(x)
    if dtype == "double":
        return xp.asarray(x, dtype=xp.float64)
    if dtype == "float":
        return xp.asarray(x).astype(xp.float32).astype(xp.float64)
    return from_storage(to_storage(xp.asarray(x).astype(xp.float32), dtype), dtype)


def round_operand(x, precision: str):
    """Values as the Tensor Cores consume them at ``precision`` (float64 in, float64 out).

    TF32 operands are rounded with cvt.rna from float32; FP16/BF16 operands are
    the stored 16-bit values themselves; FP64/FP32 are used as they are.
    """
    xp = array_module(x)
    if precision == "tf32":
        return round_tf32(x).astype(xp.float64)
    if precision == "fp16":
        return xp.asarray(x).astype(xp.float16).astype(xp.float64)
    if precision == "bf16":
        return bf16_bits_to_float(to_bf16_bits(x)).astype(xp.float64)
    if precision == "fp32":
        return xp.asarray(x).astype(xp.float32).astype(xp.float64)
    return xp.asarray(x, dtype=xp.float64)
