"""Roofline figures: one GPU's ceilings and a stencil's operating points (the paper's Figs. 7–9).

Why a picture of the advisor's answer: the four scenarios are statements about
which side of its ridge point each unit's intensity lies, and the useful
throughput of Tensor Cores is their executed throughput scaled by α/β.  Both
are immediate on a log-log roofline: the executed point sits on the Tensor
Core roof, the useful point α/β lower, the CUDA-core point on its own roof.

Every curve is the model's eq. 5 at an intensity (:func:`tcadvisor.model.roof`),
and every point is an :class:`~tcadvisor.advisor.Option` of an
:class:`~tcadvisor.advisor.Advice`; nothing here re-states the model.
"""
from __future__ import annotations

import math
import textwrap
from fractions import Fraction

import numpy as np
import plotly.graph_objects as go

from .. import model
from ..advisor import Advice, Option
from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, GpuSpec
from . import style

TERA = 1e12
#: Shading of the intensity bands, left (everything memory-bound) to right (everything compute-bound).
#: Where each unit's point label goes, so that the labels of one configuration do not collide.
TEXT_POSITION = {"cuda_core": "bottom right", "tensor_core": "middle right", "sparse_tensor_core": "top right"}
BAND_COLORS = ("rgba(120,120,120,0.10)", "rgba(27,120,55,0.10)", "rgba(31,119,180,0.08)", "rgba(217,95,2,0.08)")


def roof(bandwidth: float, peak: float, intensity) -> np.ndarray:
    """Attainable FLOP/s at ``intensity`` for a unit of ``peak`` (the model's eq. 5).

    ``peak = inf`` gives the bandwidth line B·I alone.
    """
    intensity = np.asarray(intensity, dtype=float)
    out = model.roof(intensity, bandwidth, peak)
    return np.broadcast_to(np.asarray(out, dtype=float), intensity.shape)


def ridge_point(bandwidth: float, peak: float) -> float:
    """The ridge point ρ = P/B of a unit of ``peak`` (the model's ρ_CC with that peak)."""
    return float(model.ridge(bandwidth, peak))


def option_mma(opt: Option) -> str | None:
    """The MMA instruction shape an option executes ('m16n8k8'), or ``None`` (CUDA cores, or not known)."""
    shape = getattr(opt, "mma", None) or getattr(opt, "mma_shape", None)
    return str(shape) if shape else None


def option_alpha(opt: Option) -> str:
    """'α = 15/32 ≈ 0.4688 (paper)' for a Tensor Core option: the value, and where it came from."""
    alpha = opt.alpha
    exact = f"{alpha} ≈ " if isinstance(alpha, Fraction) and 1 < alpha.denominator <= 4096 else ""
    source = style.alpha_source_label(opt.alpha_source)
    return f"α = {exact}{_fmt(float(alpha))}" + (f" ({source})" if source else "")


def ceilings_of(options: list[Option]) -> list[tuple[str, str, float, str | None]]:
    """The distinct roofs of ``options``: (unit, precision, peak FLOP/s, MMA shape or None), in order."""
    out = []
    for opt in options:
        if not opt.available:
            continue
        key = (opt.unit, opt.precision, opt.peak, option_mma(opt))
        if key not in out:
            out.append(key)
    return out


def intensity_grid(points, ridges) -> np.ndarray:
    """Log-spaced intensities covering every point and ridge with a margin (a factor 8 either way)."""
    values = [v for v in list(points) + list(ridges) if v and math.isfinite(v) and v > 0]
    lo = min(v / 8 for v in values) if values else 0.1
    hi = max(v * 8 for v in values) if values else 100.0
    return np.logspace(math.log10(lo), math.log10(hi), 400)


def _fmt(x: float, digits: int = 4) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def add_ceilings(fig: go.Figure, gpu: GpuSpec, ceilings: list[tuple[str, str, float]], grid: np.ndarray,
                 row=None, col=None, showlegend: bool = True, dash_extension: bool = True,
                 label_ridges: bool = True, generic_names: bool = False) -> None:
    """Roofs of ``ceilings`` (unit, precision, peak FLOP/s[, MMA shape]) and their ridge points, on log-log axes.

    The ridge point is that of the roof's own peak (a roof per instruction where
    the peaks differ by instruction), not the precision's.
    """
    B = gpu.bandwidth.value
    kw = dict(row=row, col=col) if row is not None else {}
    if dash_extension:
        fig.add_trace(go.Scatter(
            x=grid, y=roof(B, math.inf, grid) / TERA, mode="lines",
            name="B·I: memory roof" + ("" if generic_names else f" ({B / 1e9:.4g} GB/s)"),
            line=dict(color="#999", dash="dot", width=1.5), hoverinfo="skip", showlegend=showlegend,
            legendgroup="bw"), **kw)
    for ceiling in ceilings:
        unit, precision, peak = ceiling[:3]
        mma = ceiling[3] if len(ceiling) > 3 else None
        what = f"{UNIT_LABELS[unit]} {precision.upper()}"
        color = style.UNIT_COLORS[unit]
        fig.add_trace(go.Scatter(
            x=grid, y=roof(B, peak, grid) / TERA, mode="lines", line=dict(color=color, width=3),
            name=(f"{UNIT_LABELS[unit]} roof" if generic_names
                  else f"{what}: {peak / TERA:.4g} TFLOP/s" + (f" ({mma})" if mma else "")),
            legendgroup=f"roof-{unit}-{precision}-{mma}", showlegend=showlegend,
            hovertemplate=f"{what}" + (f" {mma}" if mma else "") + "<br>I = %{x:.3g} FLOP/byte<br>"
                          "attainable %{y:.4g} TFLOP/s<extra></extra>"), **kw)
        ridge = ridge_point(B, peak)
        fig.add_trace(go.Scatter(
            x=[ridge], y=[peak / TERA], mode="markers+text" if label_ridges else "markers",
            marker=dict(symbol="diamond", size=10, color=color, line=dict(color="white", width=1)),
            text=[f"ρ = {ridge:.3g}"], textposition="top left", textfont=dict(color=color, size=12),
            name=f"ridge point of {UNIT_LABELS[unit]} {precision.upper()}", showlegend=False,
            hovertemplate=f"ridge point of {UNIT_LABELS[unit]} {precision.upper()}: ρ = P/B = {ridge:.4g} FLOP/byte"
                          "<extra></extra>"), **kw)


def option_hover(opt: Option) -> str:
    """Hover text of an operating point: implementation, α and its source, instruction, intensity, throughput."""
    mma = option_mma(opt)
    lines = [f"<b>{opt.label}</b> — {opt.impl.name}, {opt.precision.upper()}, t = {opt.fuse}"]
    if opt.is_tensor:
        lines.append(f"{option_alpha(opt)}, β = {_fmt(float(opt.beta))}")
        lines.append(f"instruction {mma or '(shape not given)'}: peak {_fmt(opt.peak / TERA)} TFLOP/s")
    else:
        lines.append(f"α = 1, β = 1 (temporal fusion); peak {_fmt(opt.peak / TERA)} TFLOP/s")
    lines += [f"I = {_fmt(opt.intensity)} FLOP/byte, ridge {_fmt(opt.ridge)} → {opt.bound}-bound",
             f"executed {_fmt(opt.executed_flops / TERA)} TFLOP/s, useful {_fmt(opt.attainable_flops / TERA)} TFLOP/s",
             f"{_fmt(opt.gstencils)} GStencils/s"]
    if opt.is_tensor and opt.speedup is not None:
        lines.append(f"R = {_fmt(opt.speedup, 3)} over CUDA cores (scenario {opt.scenario})")
    return "<br>".join(lines)


def add_operating_points(fig: go.Figure, options: list[Option], row=None, col=None, label: str = "",
                         showlegend: bool = True, text: bool = True, names: dict[str, str] | None = None) -> None:
    """Each option's point: CUDA cores on their roof; Tensor Cores executed (hollow) and useful (filled).

    ``names`` overrides the legend name of a unit's point (e.g. when α is not the implementation's own).
    """
    kw = dict(row=row, col=col) if row is not None else {}
    for opt in options:
        if not opt.available:
            continue
        color = style.UNIT_COLORS[opt.unit]
        hover = option_hover(opt) + "<extra></extra>"
        name = (names or {}).get(opt.unit) or f"{label}{opt.label}, {opt.impl.name}, t = {opt.fuse}"
        useful = opt.attainable_flops / TERA
        if opt.is_tensor:
            executed = opt.executed_flops / TERA
            fig.add_trace(go.Scatter(
                x=[opt.intensity, opt.intensity], y=[executed, useful], mode="lines",
                line=dict(color=color, width=1.5, dash="dash"), hoverinfo="skip", showlegend=False,
                legendgroup=name), **kw)
            fig.add_trace(go.Scatter(
                x=[opt.intensity], y=[executed], mode="markers",
                marker=dict(symbol="circle-open", size=13, color=color, line=dict(width=2.5)),
                name=f"{name}: executed", legendgroup=name, showlegend=False, hovertemplate=hover), **kw)
        fig.add_trace(go.Scatter(
            x=[opt.intensity], y=[useful], mode="markers+text" if text else "markers",
            marker=dict(symbol="circle", size=13, color=color, line=dict(color="white", width=1.5)),
            text=[point_label(opt)],
            textposition=TEXT_POSITION[opt.unit],
            textfont=dict(color=color, size=12),
            name=name,
            legendgroup=name, showlegend=showlegend, hovertemplate=hover), **kw)


def point_label(opt: Option) -> str:
    """'TC m16n8k8: 123 GSt/s, R = 1.21, α = 0.4688 (paper)': what a point's text says next to it."""
    mma = option_mma(opt)
    text = f"{style.UNIT_SHORT[opt.unit]}{' ' + mma if mma else ''}: {_fmt(opt.gstencils, 4)} GSt/s"
    if opt.is_tensor:
        if opt.speedup is not None:
            text += f", R = {opt.speedup:.3g}"
        source = style.alpha_source_label(opt.alpha_source)
        text += f", α = {_fmt(float(opt.alpha), 3)}" + (f" ({source})" if source else "")
    return text


def add_bands(fig: go.Figure, ridges: list[tuple[str, float]], x_lo: float, x_hi: float, row=None, col=None,
              labels: bool = True) -> None:
    """Shade the intensity bands between ridge points and name which units are compute-bound there."""
    kw = dict(row=row, col=col) if row is not None else {}
    edges = sorted({r for _, r in ridges})
    bounds = [x_lo] + edges + [x_hi]
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        compute = [name for name, r in ridges if r <= lo]
        if len(ridges) == 1:
            text = "compute-bound region" if compute else "memory-bound region"
        else:
            text = ("memory-bound<br>on every unit" if not compute
                    else "compute-bound on<br>" + ", ".join(compute) if len(compute) < len(ridges)
                    else "compute-bound<br>on every unit")
        fig.add_vrect(x0=lo, x1=hi, fillcolor=BAND_COLORS[min(i, len(BAND_COLORS) - 1)], line_width=0,
                      layer="below", exclude_empty_subplots=False, **kw)
        if labels:  # annotations on a log axis take log10 positions
            fig.add_annotation(x=math.log10(lo), y=1 - 0.09 * (i % 2), xref=_ref(fig, "x", row, col),
                               yref=_domain(fig, "y", row, col), text=text, showarrow=False, xanchor="left",
                               yanchor="top", align="left", font=dict(size=11, color="#555"), xshift=3, yshift=-3)


def _ref(fig: go.Figure, which: str, row, col) -> str:
    if row is None:
        return which
    axis = getattr(fig.get_subplot(row, col), f"{which}axis").plotly_name
    return which + axis[5:]


def _domain(fig: go.Figure, which: str, row, col) -> str:
    return _ref(fig, which, row, col) + " domain"


def roofline_of(stencil, dtype="double", gpu=None, fuse: int | None = None, max_fuse: int | None = None,
                impls=None, alpha=None, title: str | None = None, measured=None) -> go.Figure:
    """The roofline of one query, from names or objects: what ``tcadvisor roofline`` draws.

    ``stencil``: a :class:`~tcadvisor.stencil.Stencil` or a name ('Box-2D1R') or
    offsets file; ``dtype``: any alias the CLI accepts ('fp32'); ``gpu``: a spec,
    a key or a YAML path (``None``: the detected GPU, else the default spec);
    ``impls``: profiles or names; ``alpha``: 'paper', 'constructed', a number or
    an :class:`~tcadvisor.advisor.AlphaChoice`.  Bad values raise the CLI's
    one-line :class:`~tcadvisor.errors.TcAdvisorError`.  The options and the
    verdict are :func:`~tcadvisor.advisor.advise`'s; ``measured`` as :func:`roofline_figure` takes it.
    """
    from ..advisor import DEFAULT_MAX_FUSE, advise
    from ..stencil import check_fuse
    from ..arguments import as_alpha, as_dtype, as_gpu, as_impls, as_stencil

    stencil, dtype, gpu = as_stencil(stencil), as_dtype(dtype), as_gpu(gpu)
    fuse = None if fuse is None else check_fuse(int(fuse) if isinstance(fuse, str) and fuse.isdigit() else fuse)
    max_fuse = check_fuse(DEFAULT_MAX_FUSE if max_fuse is None else max_fuse)
    advice = advise(stencil, dtype, gpu, fuse=fuse, impls=as_impls(impls), alpha=as_alpha(alpha), max_fuse=max_fuse,
                    model="base")  # the roofs are the paper's model's
    return roofline_figure(advice, title=title, measured=measured)


def roofline_figure(advice: Advice, title: str | None = None, measured=None) -> go.Figure:
    """Roofline of ``advice.gpu`` with the stencil's operating points and scenarios (``tcadvisor roofline``).

    ``advice`` is an :class:`~tcadvisor.advisor.Advice`; to start from a stencil
    name, a dtype and a GPU name use :func:`roofline_of`.  ``measured``, a recorded
    run (validate's ``results.json``, a corpus CSV, or a
    :class:`~tcadvisor.plots.measured.Measured`), adds its operating points of this
    stencil, dtype, GPU and depths beside the predicted ones (``--measured``).
    """
    if not isinstance(advice, Advice):
        raise TcAdvisorError(f"roofline_figure expects the Advice of tcadvisor.advisor.advise(...), not "
                             f"{type(advice).__name__} {advice!r:.60}; roofline_of(stencil, dtype, gpu) takes names")
    gpu = advice.gpu
    options = advice.options
    avail = [o for o in options if o.available]
    if not avail:
        raise TcAdvisorError(f"no execution unit can run {advice.stencil.name} in {advice.dtype} on {gpu.name}, so "
                             "there is no roofline to draw: " + "; ".join(o.reason for o in options if o.reason))
    over = None
    if measured is not None:
        from . import measured_roofline

        over = measured_roofline.overlay(advice, measured)
    shown = [o.intensity for o in avail] + ([p.intensity for p in over.points] if over else [])
    ceilings = ceilings_of(avail)
    B = gpu.bandwidth.value
    grid = intensity_grid(shown, [ridge_point(B, c[2]) for c in ceilings])
    fig = go.Figure()
    ridges = [(style.UNIT_SHORT[c[0]] if len(ceilings) > 1 else UNIT_LABELS[c[0]], ridge_point(B, c[2]))
              for c in ceilings]
    add_bands(fig, ridges, grid[0], grid[-1])
    add_ceilings(fig, gpu, ceilings, grid)
    add_operating_points(fig, options)
    if over is not None:
        measured_roofline.draw(fig, over)

    notes = []
    for opt in options:
        if not opt.available:
            notes.append(f"<b>{opt.label}</b>: not available on this GPU/precision ({opt.reason})")
        elif opt.is_tensor and opt.decision:
            notes.append(f"<b>{opt.label}</b> (t = {opt.fuse}): {opt.decision}")
    verdict = advice.verdict
    if verdict is not None:
        notes.append(f"<b>Best</b> over t = 1..{advice.max_fuse}: {verdict.label} ({verdict.impl.name}) at "
                     f"t = {verdict.fuse}, {_fmt(verdict.gstencils)} GStencils/s")
    if over is not None:
        notes += measured_roofline.notes(over)
    fuse = f"t = {advice.fuse}" if advice.fuse is not None else "each unit at its best t"
    head = title or f"Roofline of {gpu.name}: {advice.stencil.name}, {fuse}, {advice.dtype}"
    ymax = max(c[2] for c in ceilings) / TERA
    ymin = float(roof(gpu.bandwidth.value, math.inf, grid[0])) / TERA
    if over is not None:  # a measured point far below its roof stays in the picture
        ymin = min([ymin] + [p.tflops / 2 for p in over.points])
    notes = ["<br>    ".join(textwrap.wrap(n, 150)) for n in notes]
    lines = sum(n.count("<br>") + 1 for n in notes)
    height = 640 + 22 * lines
    fig.update_layout(**style.base_layout(
        title=dict(text=head + "<br><sup>filled: useful throughput (α/β of what Tensor Cores execute), "
                   "hollow: executed; diamonds: ridge points ρ = P/B; shaded: which units are compute-bound "
                   "at that intensity</sup>", x=0.01, xanchor="left", font=dict(size=17)),
        width=1250, height=height,
        xaxis=dict(type="log", title=style.AXIS_INTENSITY, dtick="D2",
                   range=[math.log10(grid[0]), math.log10(grid[-1])],
                   showline=True, linecolor="#444", mirror=True),
        yaxis=dict(type="log", title=style.AXIS_ATTAINABLE, dtick="D2", showline=True, linecolor="#444", mirror=True,
                   range=[math.log10(ymin), math.log10(ymax * 3)]),
        legend=dict(x=1.02, xanchor="left", y=1, yanchor="top", font=dict(size=12),
                    bgcolor="rgba(255,255,255,0.85)", bordercolor="#ccc", borderwidth=1),
        margin=dict(l=80, r=40, t=90, b=90 + 22 * lines),
    ))
    fig.add_annotation(text="<br>".join(notes), xref="paper", yref="paper", x=0, y=-0.12, xanchor="left",
                       yanchor="top", showarrow=False, align="left", font=dict(size=12, color="#222"))
    return fig
