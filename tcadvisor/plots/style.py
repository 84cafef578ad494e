"""Shared look of every figure: colours, the speedup colour scale, axis titles.

Why one module: a reader compares figures with each other (a map of the A100
next to one of the H100, the roofline next to the map), so a unit has the same
colour everywhere, the speedup scale means the same thing everywhere, and axis
titles always carry their units.  Only this module knows colours; the figure
modules ask it.
"""
from __future__ import annotations

import math

#: One colour per execution unit, the same in every figure.
UNIT_COLORS = {
    "cuda_core": "#4d4d4d",
    "tensor_core": "#1f77b4",
    "sparse_tensor_core": "#d95f02",
}
UNIT_SHORT = {"cuda_core": "CC", "tensor_core": "TC", "sparse_tensor_core": "SpTC"}

#: How each source of α is named in figures.  The advisor says ``constructed``
#: (counted from the operands the transformation builds for this fused stencil,
#: MMA shape and precision), ``paper`` (a published constant) or ``user`` (given
#: with ``--alpha``); older advisors said ``constructed (m16n8k8)`` and
#: ``given by --alpha``, which read the same here.
ALPHA_SOURCES = {"constructed": "constructed", "paper": "paper", "user": "user", "given by --alpha": "user"}


def alpha_source_label(source) -> str:
    """'constructed', 'paper' or 'user' for the advisor's ``alpha_source`` ('' for none: CUDA cores)."""
    if source is None or (isinstance(source, float) and math.isnan(source)):
        return ""
    text = str(source).strip()
    head = text.split(" (", 1)[0].strip()
    return ALPHA_SOURCES.get(text, ALPHA_SOURCES.get(head, text))


#: Scenario colours of the paper's Figures 8–9 (green: the sweet spot).
SCENARIO_COLORS = {
    "1": "#d9d9d9",        # memory-bound on both, R = 1
    "2": "#f4a582",        # Tensor Cores lose
    "3": "#a6dba0",        # Tensor Cores win
    "4win": "#1b7837",     # compute-bound on both, β below the threshold
    "4lose": "#d6604d",    # compute-bound on both, β above the threshold
}
SCENARIO_NAMES = {
    1: "memory-bound on both (R = 1)",
    2: "memory-bound on CC only: Tensor Cores lose",
    3: "compute-bound on CC only: Tensor Cores win",
    4: "compute-bound on both: win iff β < α·P_tc/P_cc",
}

#: Diverging scale for log2 R: pink where Tensor Cores lose, white at R = 1, green where they win.
SPEEDUP_COLORSCALE = "PiYG"
SWEET_SPOT_LINE = dict(color="black", width=2.5)

FONT = dict(family="DejaVu Sans, Arial, sans-serif", size=13)

AXIS_INTENSITY = "arithmetic intensity I [FLOP/byte]"
AXIS_ATTAINABLE = "attainable [TFLOP/s]"
AXIS_FUSE = "fusion depth t [time steps per sweep]"
AXIS_RADIUS = "radius r"


#: The colour scale stops at 16× either way: beyond, colours would squash the 0.5×–2× range where the
#: decisions are made (hover still gives the exact R).
MAX_LOG2 = 4.0


def speedup_range(log2_values) -> float:
    """Half-width of the symmetric log2 colour range: covers every value, 2×..16× each way."""
    finite = [abs(v) for v in log2_values if v is not None and math.isfinite(v)]
    top = max(finite, default=1.0)
    return float(min(MAX_LOG2, max(1.0, math.ceil(top * 2) / 2)))


def times_label(log2_value: float) -> str:
    """Tick label of the speedup colour bar: ``2^k`` written as a factor (0.25×, 1×, 4×)."""
    value = 2.0 ** log2_value
    if value >= 1:
        return f"{value:g}×"
    return f"{value:.3g}×" if value >= 0.01 else f"1/{1 / value:.0f}×"


def speedup_ticks(half_width: float, clipped: bool = False) -> tuple[list[float], list[str]]:
    """Tick positions (log2 R) and labels (×) for a colour bar spanning ±``half_width``.

    With ``clipped`` (values lie beyond the range) the end labels read "≤" and "≥".
    """
    top = int(math.floor(half_width))
    values = [float(k) for k in range(-top, top + 1)]
    labels = [times_label(v) for v in values]
    if clipped and values and values[-1] == half_width:
        labels[0], labels[-1] = "≤" + labels[0], "≥" + labels[-1]
    return values, labels


def base_layout(**extra) -> dict:
    """Layout settings shared by every figure (white background, readable font)."""
    layout = dict(template="plotly_white", font=FONT, hoverlabel=dict(font_size=12),
                  margin=dict(l=80, r=40, t=90, b=80))
    layout.update(extra)
    return layout
