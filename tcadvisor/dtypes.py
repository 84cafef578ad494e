"""Data types a stencil is computed in, and what each costs in bytes."""
from __future__ import annotations

from .errors import TcAdvisorError

#: Canonical dtype -> bytes per element (S in the model).
BYTES = {"double": 8, "float": 4, "half": 2, "bfloat16": 2}

_ALIASES = {
    "double": "double", "float64": "double", "fp64": "double", "f64": "double",
    "float": "float", "float32": "float", "fp32": "float", "f32": "float", "single": "float",
    "half": "half", "float16": "half", "fp16": "half", "f16": "half",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
}


def parse_dtype(text: str) -> str:
    if text is None or isinstance(text, (bool, int, float, bytes, list, tuple, dict, set, frozenset)):
        shown = " ".join(repr(text).split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TcAdvisorError(f"dtype {shown} ({type(text).__name__}) is not a name; expected one of double, float, "
                             "half, bfloat16 (or fp64, fp32, fp16, bf16)")
    key = str(text).strip().lower()
    if key not in _ALIASES:
        raise TcAdvisorError(
            f"unknown dtype {text!r}; expected one of double, float, half, bfloat16 "
            "(or fp64, fp32, fp16, bf16)"
        )
    return _ALIASES[key]
