"""Direct stencil evaluation in float64: the reference every transformation and kernel is checked against.

Convention (used everywhere in tcadvisor): a stencil of radius R in d dimensions
has a weight array ``w`` of side 2R+1, and one step computes

    y[i] = Σ_b w[b] · x[i + b − R]        (correlation form, periodic domain)

so that fusing t steps is the t-fold *full convolution* of ``w`` with itself.
"""
from __future__ import annotations

import numpy as np


def radius_of(weights: np.ndarray) -> int:
    sides = set(weights.shape)
    if len(sides) != 1 or weights.shape[0] % 2 == 0:
        raise ValueError(f"weights must be a cube of odd side, got shape {weights.shape}")
    return (weights.shape[0] - 1) // 2


def apply_periodic(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One stencil step on a periodic domain, in float64."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if x.ndim != w.ndim:
        raise ValueError(f"input has {x.ndim} dims but weights have {w.ndim}")
    R = radius_of(w)
    out = np.zeros_like(x)
    for idx in zip(*np.nonzero(w)):
        shift = tuple(R - b for b in idx)  # x[i + b - R] == roll(x, R - b)[i]
        out += w[idx] * np.roll(x, shift, axis=tuple(range(x.ndim)))
    return out


def apply_steps(x: np.ndarray, weights: np.ndarray, steps: int) -> np.ndarray:
    """``steps`` applications of the base stencil (the ground truth of fusion)."""
    for _ in range(steps):
        x = apply_periodic(x, weights)
    return x


def fused_weights(weights: np.ndarray, fuse: int) -> np.ndarray:
    """Weights of the t-step fused stencil: the t-fold full self-convolution.

    Computed by direct summation in float64 (no FFT), so zeros of the fused
    support stay exactly zero.
    """
    w = np.asarray(weights, dtype=np.float64)
    out = w
    for _ in range(fuse - 1):
        out = _full_convolve(out, w)
    return out


def _full_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    shape = tuple(sa + sb - 1 for sa, sb in zip(a.shape, b.shape))
    out = np.zeros(shape, dtype=np.float64)
    for idx in zip(*np.nonzero(b)):
        sl = tuple(slice(i, i + sa) for i, sa in zip(idx, a.shape))
        out[sl] += b[idx] * a
    return out


def random_weights(mask: np.ndarray, rng: np.random.Generator, normalise: bool = True) -> np.ndarray:
    """Random weights on ``mask``; normalised to sum 1 so repeated steps stay bounded."""
    w = np.where(mask, rng.uniform(0.5, 1.5, mask.shape), 0.0)
    return w / w.sum() if normalise else w
