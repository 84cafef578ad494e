"""Measured operating points on a roofline, beside the predicted ones (``roofline --measured``).

Why: the roofline places each unit where the model puts it; a recorded run says
where the bundled kernel actually got.  Each measured point sits at the
measured intensity where Nsight Compute recorded one (validate ``--profile``),
else at the model's, and at the measured useful throughput: the predicted
point's useful FLOP/s scaled by measured over predicted GStencils/s, so that
both points count the same useful work per stencil update.  Marked: the unit
measured fastest where the model predicted another (beyond the file's tie
band), and a measured bottleneck that is not the model's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import plotly.graph_objects as go

from ..advisor import TIE_TOLERANCE, Advice, Option, best_index
from ..errors import TcAdvisorError
from . import style
from .measured import Measured, UnitResult, Verdict, cell_results, load_measured, pct, runs_for_gpus, \
    stencil_matches, verdict
from .measured_map import MISMATCH_RING, TIE_RING

TERA = 1e12
BOUND_RING = dict(symbol="square-open", size=22, color="#7b3294", line=dict(width=2))


@dataclass(frozen=True)
class MeasuredPoint:
    """One option's measurement, placed on the roofline."""

    option: Option
    result: UnitResult
    intensity: float  # measured where recorded, else the model's
    intensity_measured: bool
    tflops: float  # useful TFLOP/s at the measured throughput

    @property
    def fraction(self) -> float:
        return self.result.gstencils / self.option.gstencils

    @property
    def bound_differs(self) -> bool:
        return bool(self.result.bound and self.option.bound and self.result.bound != self.option.bound)


@dataclass(frozen=True)
class Overlay:
    points: list[MeasuredPoint]
    verdict: Verdict
    source: str  # 'results.json (NVIDIA H100 80GB HBM3, 2026-11-23)'


def overlay(advice: Advice, measured) -> Overlay:
    """The measured points of ``advice``'s available options: the runs of its stencil, dtype and GPU at each
    option's depth.  Refused in one line: a file of another GPU, or one with no run at the depths drawn."""
    measured = measured if isinstance(measured, Measured) else load_measured(measured)
    device, runs = runs_for_gpus(measured, [advice.gpu])[0]
    mine = [r for r in runs if r.dtype == advice.dtype and stencil_matches(r, advice.stencil)]
    avail = [o for o in advice.options if o.available]
    results: dict[str, UnitResult] = {}
    points = []
    for opt in avail:
        found = cell_results([r for r in mine if r.fuse == opt.fuse]).get(opt.unit)
        if found is None:
            continue
        results[opt.unit] = found
        if found.gstencils is None or not (opt.gstencils and math.isfinite(opt.gstencils)):
            continue
        x = found.intensity if found.intensity is not None else opt.intensity
        points.append(MeasuredPoint(opt, found, x, found.intensity is not None,
                                    opt.attainable_flops / TERA * found.gstencils / opt.gstencils))
    if not points:
        raise TcAdvisorError(_nothing_measured(measured, advice, device, mine, avail))
    i = best_index([o.gstencils for o in avail], [o.fuse for o in avail], [o.unit for o in avail])
    tied = [] if i is None else [o.unit for o in avail if o.gstencils >= avail[i].gstencils * (1 - TIE_TOLERANCE)]
    judged = verdict(None if i is None else avail[i].unit, [o.unit for o in avail], results, measured.band, tied)
    return Overlay(points, judged, measured.label(device))


def _nothing_measured(measured: Measured, advice: Advice, device: str, mine: list, avail: list[Option]) -> str:
    drawn = ", ".join(f"{style.UNIT_SHORT[o.unit]} t = {o.fuse}" for o in avail)
    what = f"{advice.stencil.name} in {advice.dtype} on {device}"
    depths = sorted({r.fuse for r in mine if r.ok})
    if depths:
        return (f"--measured {str(measured.path)!r}: no run of {what} at the depths drawn ({drawn}); it measured "
                f"t = {', '.join(map(str, depths))}: pass --fuse T with one of them")
    return f"--measured {str(measured.path)!r} holds no successful run of {what}; expected runs of the stencil drawn"


def _hover(p: MeasuredPoint, judged: Verdict) -> str:
    o, r = p.option, p.result
    lines = [f"<b>measured: {o.label}</b> — {r.impl or 'implementation not recorded'}, t = {o.fuse}"
             + (f", grid {r.grid}" if r.grid else "")
             + (f" ({r.runs} runs, median)" if r.runs > 1 else ""),
             f"{r.gstencils:.4g} GStencils/s, {pct(p.fraction)} of the model's {o.gstencils:.4g} ({o.impl.name})",
             f"I = {p.intensity:.4g} FLOP/byte " + ("(Nsight Compute; model " + f"{o.intensity:.4g})"
                                                   if p.intensity_measured else "(the model's: not profiled)"),
             f"useful {p.tflops:.4g} TFLOP/s"]
    if r.bound:
        lines.append(f"bottleneck: measured {r.bound}, model {o.bound}" + (" ✗" if p.bound_differs else " ✓"))
    if judged.measured == o.unit or judged.predicted == o.unit:
        lines.append(judged.text)
    return "<br>".join(lines) + "<extra>measured</extra>"


def draw(fig: go.Figure, over: Overlay) -> None:
    """Each measured point (diamond where the intensity was measured, × where it is the model's), a dotted
    line from the predicted useful point, and the rings of what does not match."""
    judged = over.verdict
    for p in over.points:
        o = p.option
        color = style.UNIT_COLORS[o.unit]
        fig.add_trace(go.Scatter(x=[o.intensity, p.intensity], y=[o.attainable_flops / TERA, p.tflops],
                                 mode="lines", line=dict(color=color, width=1.5, dash="dot"), hoverinfo="skip",
                                 showlegend=False))
        fig.add_trace(go.Scatter(
            x=[p.intensity], y=[p.tflops], mode="markers",
            marker=dict(symbol="diamond" if p.intensity_measured else "x", size=14, color=color,
                        line=dict(color="#222", width=1.5)),
            name=f"measured: {o.label}, t = {o.fuse}" + ("" if p.intensity_measured else " (at the model's I)"),
            hovertemplate=_hover(p, judged)))
    rings = [("mismatch", MISMATCH_RING, "measured ≠ predicted"),
             ("tie", TIE_RING, "measured ≠ predicted, within the tie band")]
    for state, ring, label in rings:
        if judged.state != state:
            continue
        p = next(p for p in over.points if p.option.unit == judged.measured)
        fig.add_trace(go.Scatter(x=[p.intensity], y=[p.tflops], mode="markers", marker=ring, name=label,
                                 hovertemplate=judged.text + "<extra>" + state + "</extra>"))
    differs = [p for p in over.points if p.bound_differs]
    if differs:
        fig.add_trace(go.Scatter(
            x=[p.intensity for p in differs], y=[p.tflops for p in differs], mode="markers", marker=BOUND_RING,
            name="measured bottleneck ≠ model's",
            hovertemplate=[f"{p.option.label}: measured {p.result.bound}-bound, model {p.option.bound}-bound"
                           "<extra>bottleneck</extra>" for p in differs]))


def notes(over: Overlay) -> list[str]:
    """The line under the figure: the source, the verdict (with the units not measured), each point's
    fraction of the model."""
    each = "; ".join(f"{style.UNIT_SHORT[p.option.unit]} t = {p.option.fuse}: {p.result.gstencils:.4g} GStencils/s "
                     f"({pct(p.fraction)} of the model)" for p in over.points)
    other = [p for p in over.points if p.result.impl and p.result.impl != p.option.impl.name]
    line = (f"<b>Measured</b>, {over.source}: {over.verdict.text}. {each}. Diamonds: at the intensity Nsight "
            "Compute measured; ×: at the model's (not profiled).")
    if other:  # the base model draws the published implementations: say what the runs are
        ran = "/".join(dict.fromkeys(p.result.impl for p in other))
        drawn = "/".join(dict.fromkeys(p.option.impl.name for p in other))
        line += (f" The runs are of {ran}, the model's points of {drawn}: --model refined predicts the kernels "
                 "that ran.")
    return [line]
