"""The paper's figures, regenerated from the model (``tcadvisor figures``).

Why regenerate them: the paper's figures are drawings of its equations on its
A100; drawn from :mod:`tcadvisor.model` they check the implementation against
the paper at a glance, and with ``--gpu`` they show the same arguments on
another GPU.  Every number is an :func:`~tcadvisor.advisor.advise` /
:func:`~tcadvisor.advisor.sweep` result or a :func:`~tcadvisor.model.evaluate`
call; the figures only choose what to show:

* Fig. 7  — the roofline: memory- and compute-bound regions and the ridge point;
* Fig. 8  — the four scenarios, one example configuration each, found on the GPU;
* Fig. 9  — the four scenarios as regions of the (I_CC, I_TC) plane, the sweet spot in green;
* Fig. 10 — CUDA-core intensity against fusion depth for box and star stencils, against the ridge points;
* Fig. 13 — Sparse Tensor Cores raise the ceiling (SPIDER, Box-2D1R, t = 7, as in Table 4);
* Fig. 14 — and widen the sweet spot (the plane of Fig. 9, dense and sparse);
* Table 3 — the six criteria cases on the roofline.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import paper
from ..advisor import TIE_TOLERANCE as TIE, Advice, AlphaChoice, advise, sweep
from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, GpuSpec
from ..impls import default_impls, find_impl
from ..stencil import parse_stencil
from . import style
from ..arguments import as_gpu
from .. import model
from .roofline import TERA, add_bands, add_ceilings, add_operating_points, ceilings_of, intensity_grid, ridge_point, roof

PANEL = ("(a)", "(b)", "(c)", "(d)")


def _precisions(dtype: str, gpu: GpuSpec) -> dict[str, str | None]:
    """The precision of each default implementation's unit for ``dtype`` on ``gpu`` (None: unavailable)."""
    return {unit: impl.precision_for(dtype, gpu)[0] for unit, impl in default_impls().items()}


def _advise(name: str, dtype: str, gpu: GpuSpec, fuse: int, alpha: Fraction | None = None,
            impls: dict | None = None) -> Advice:
    """:func:`~tcadvisor.advisor.advise` at one depth, with the paper's published α unless one is given.

    The figures reproduce the paper, so they keep its model, implementations and
    constants (as ``reproduce-paper`` does) whatever the advisor's defaults are.
    """
    choice = AlphaChoice("value", Fraction(alpha)) if alpha is not None else AlphaChoice.parse("paper")
    return advise(parse_stencil(name), dtype, gpu, fuse=fuse, impls=impls, alpha_choice=choice, max_fuse=fuse,
                  model="base")


def _needs(gpu: GpuSpec, figure: str, units: tuple[str, ...], dtypes=("double", "float")) -> list[str]:
    """The dtypes (of ``dtypes``) in which ``gpu`` has every one of ``units``; a one-line error if none."""
    lacking = {d: [UNIT_LABELS[u] for u in units if not _precisions(d, gpu)[u]] for d in dtypes}
    have = [d for d in dtypes if not lacking[d]]
    if not have:
        needs = ", ".join(UNIT_LABELS[u] for u in units)
        gaps = " and ".join(f"no {' or '.join(lacking[d])} for {d}" for d in dtypes)
        raise TcAdvisorError(f"{gpu.name} has {gaps}; {figure} needs {needs} in "
                             + (dtypes[0] if len(dtypes) == 1 else f"one of {', '.join(dtypes)}"))
    return have


def _layout(fig: go.Figure, title: str, subtitle: str, width: int, height: int, **extra) -> go.Figure:
    fig.update_layout(**style.base_layout(
        title=dict(text=f"{title}<br><sup>{subtitle}</sup>", x=0.01, xanchor="left", font=dict(size=17)),
        width=width, height=height, **extra))
    return fig


def _log_axes(fig: go.Figure, x_range, y_range, row=None, col=None, x_title=True, y_title=True) -> None:
    kw = dict(row=row, col=col) if row is not None else {}
    fig.update_xaxes(type="log", dtick="D2", range=[math.log10(x_range[0]), math.log10(x_range[1])],
                     title_text=style.AXIS_INTENSITY if x_title else None, showline=True, linecolor="#444",
                     mirror=True, **kw)
    fig.update_yaxes(type="log", dtick="D2", range=[math.log10(y_range[0]), math.log10(y_range[1])],
                     title_text=style.AXIS_ATTAINABLE if y_title else None, showline=True, linecolor="#444",
                     mirror=True, **kw)


# --------------------------------------------------------------------------- Fig. 7


def fig7_roofline(gpu: GpuSpec) -> go.Figure:
    """Fig. 7: one unit's roofline, its two regions and its ridge point, with one-step stencils placed on it."""
    gpu = as_gpu(gpu)
    dtype = _needs(gpu, "Fig. 7", ("cuda_core",))[0]  # the paper's FP64, else FP32
    examples = ["Star-2D1R", "Box-2D1R", "Star-3D1R", "Box-3D1R", "Box-2D3R", "Box-3D2R"]
    advices = [a for a in (_advise(n, dtype, gpu, 1) for n in examples) if a.options[0].available]
    if not advices:
        raise TcAdvisorError(f"the CUDA-core implementation runs none of {', '.join(examples)} on {gpu.name}; "
                             "Fig. 7 needs one")
    cc = [a.options[0] for a in advices]
    peak = cc[0].peak
    ridge = ridge_point(gpu.bandwidth.value, peak)
    grid = intensity_grid([o.intensity for o in cc], [ridge])
    fig = go.Figure()
    add_bands(fig, [("CUDA cores", ridge)], grid[0], grid[-1])
    add_ceilings(fig, gpu, [("cuda_core", cc[0].precision, peak)], grid)
    fig.add_trace(go.Scatter(
        x=[o.intensity for o in cc], y=[o.attainable_flops / TERA for o in cc], mode="markers+text",
        text=[a.stencil.name for a in advices], textposition="bottom right", textfont=dict(size=11),
        marker=dict(size=10, color=style.UNIT_COLORS["cuda_core"]), name=f"one time step (t = 1), {dtype}",
        customdata=[[o.bound, o.gstencils] for o in cc],
        hovertemplate="%{text}: I = %{x:.4g} FLOP/byte, %{y:.4g} TFLOP/s<br>%{customdata[0]}-bound, "
                      "%{customdata[1]:.4g} GStencils/s<extra></extra>"))
    _log_axes(fig, (grid[0], grid[-1]), (roof(gpu.bandwidth.value, math.inf, grid[0]) / TERA, peak / TERA * 4))
    return _layout(fig, f"Fig. 7 — The roofline model on {gpu.name} ({cc[0].precision.upper()} CUDA cores)",
                   "P = min(P_peak, B·I): memory-bound left of the ridge point ρ = P_peak/B, compute-bound right "
                   "of it; points: one step of each stencil (eq. 6–7)", 1100, 620,
                   legend=dict(x=0.99, xanchor="right", y=0.02, yanchor="bottom", bgcolor="rgba(255,255,255,0.85)"))


# --------------------------------------------------------------------------- Fig. 8


#: Where to look first for each scenario's example: the paper's own configurations.
_EXAMPLES = [("Star-2D1R", 1, "double"), ("Box-2D1R", 3, "double"), ("Box-2D1R", 5, "float"),
             ("Box-2D1R", 7, "float"), ("Box-2D3R", 1, "double"), ("Box-3D1R", 3, "double"),
             ("Box-2D1R", 1, "double"), ("Box-2D1R", 1, "float")]


def find_example(gpu: GpuSpec, scenario: int, win: bool | None = None) -> Advice | None:
    """A configuration whose dense-Tensor-Core option falls in ``scenario`` on ``gpu`` (and wins, if asked)."""
    candidates = list(_EXAMPLES) + [(f"{s}-{d}D{r}R", t, dt) for dt in ("double", "float") for s in ("Box", "Star")
                                    for d in (2, 3) for r in (1, 2, 3) for t in range(1, 9)]
    for name, fuse, dtype in candidates:
        if not all(_precisions(dtype, gpu)[u] for u in ("cuda_core", "tensor_core")):
            continue
        adv = _advise(name, dtype, gpu, fuse)
        tc = adv.options[1]
        if (tc.available and tc.scenario == scenario and tc.speedup is not None
                and (win is None or (tc.speedup > 1 + TIE) == win)):
            return adv
    return None


def _profitable_band(opt_cc, opt_tc, gpu: GpuSpec, grid: np.ndarray) -> tuple[float, float] | None:
    """Intensities I_TC at which Tensor Cores would beat this CUDA-core point (R > 1), from the model."""
    i_cc = opt_cc.intensity
    with np.errstate(invalid="ignore", over="ignore"):
        out = model.compare_at_intensity(i_cc, grid, gpu.bandwidth.value, opt_cc.peak, opt_tc.peak)
    wins = grid[(np.asarray(out["R"]) > 1 + TIE) & (grid >= i_cc)]
    return (float(wins.min()), float(wins.max())) if len(wins) else None


def fig8_scenarios(gpu: GpuSpec) -> go.Figure:
    """Fig. 8 (a)–(d): one configuration in each scenario, CUDA cores against dense Tensor Cores."""
    gpu = as_gpu(gpu)
    _needs(gpu, "Fig. 8", ("cuda_core", "tensor_core"))
    wanted = [(1, None), (2, None), (3, None), (4, True)]
    examples = [find_example(gpu, s, w) for s, w in wanted]
    if not any(examples):
        raise TcAdvisorError(f"no configuration of the search falls in any scenario on {gpu.name}; Fig. 8 has "
                             "nothing to show")
    titles = []
    for (s, _), adv in zip(wanted, examples):
        head = f"{PANEL[s - 1]} scenario {s}: {style.SCENARIO_NAMES[s]}"
        where = f"{adv.stencil.name}, t = {adv.fuse}, {adv.dtype}" if adv else "none on this GPU"
        titles.append(f"{head}<br>{where}")
    fig = make_subplots(rows=2, cols=2, subplot_titles=titles, horizontal_spacing=0.09, vertical_spacing=0.16)
    for i, ((s, _), adv) in enumerate(zip(wanted, examples)):
        row, col = divmod(i, 2)
        row, col = row + 1, col + 1
        if adv is None:
            fig.add_annotation(text="no configuration of the search falls in this scenario on this GPU",
                               xref=f"x{i + 1 if i else ''} domain", yref=f"y{i + 1 if i else ''} domain",
                               x=0.5, y=0.5, showarrow=False)
            continue
        cc, tc = adv.options[0], adv.options[1]
        ceilings = [("cuda_core", cc.precision, cc.peak), ("tensor_core", tc.precision, tc.peak)]
        grid = intensity_grid([cc.intensity, tc.intensity], [cc.ridge, tc.ridge])
        add_bands(fig, [("CC", cc.ridge), ("TC", tc.ridge)], grid[0], grid[-1], row=row, col=col)
        if s == 4:
            band = _profitable_band(cc, tc, gpu, grid)
            if band:
                fig.add_vrect(x0=band[0], x1=band[1], fillcolor=style.SCENARIO_COLORS["4win"], opacity=0.25,
                              line_width=0, layer="below", row=row, col=col, exclude_empty_subplots=False)
                fig.add_annotation(x=math.log10(math.sqrt(band[0] * band[1])), y=0.05,
                                   xref=f"x{i + 1}", yref=f"y{i + 1} domain", showarrow=False,
                                   text="profitable I_TC<br>(R > 1)", font=dict(size=11, color="#1b7837"))
        add_ceilings(fig, gpu, ceilings, grid, row=row, col=col, showlegend=(i == 0), generic_names=True)
        add_operating_points(fig, [cc, tc], row=row, col=col, showlegend=False)
        fig.add_annotation(text=f"R = {tc.speedup:.3g}", xref=f"x{i + 1 if i else ''} domain",
                           yref=f"y{i + 1 if i else ''} domain", x=0.98, y=0.04, xanchor="right", showarrow=False,
                           font=dict(size=14, color="#1b7837" if tc.speedup > 1 + TIE
                                     else "#b2182b" if tc.speedup < 1 - TIE else "#555"),
                           bgcolor="rgba(255,255,255,0.8)")
        ymax = max(tc.peak, cc.peak) / TERA * 4
        _log_axes(fig, (grid[0], grid[-1]), (roof(gpu.bandwidth.value, math.inf, grid[0]) / TERA, ymax),
                  row=row, col=col, x_title=(row == 2), y_title=(col == 1))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="CUDA cores (EBISU), on its roof",
                             marker=dict(size=11, color=style.UNIT_COLORS["cuda_core"])), row=1, col=1)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="Tensor Cores (ConvStencil): executed",
                             marker=dict(size=11, symbol="circle-open", color=style.UNIT_COLORS["tensor_core"],
                                         line=dict(width=2.5))), row=1, col=1)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="Tensor Cores: useful = α/β × executed",
                             marker=dict(size=11, color=style.UNIT_COLORS["tensor_core"])), row=1, col=1)
    fig.update_annotations(selector=dict(font=dict(size=16)), font_size=13)
    return _layout(fig, f"Fig. 8 — The four scenarios on {gpu.name}",
                   "each panel: one configuration found on this GPU; shaded bands: which unit is compute-bound at "
                   "that intensity; R = useful Tensor Core throughput / CUDA-core throughput", 1300, 1000,
                   legend=dict(orientation="h", x=0, y=-0.08, yanchor="top"), margin=dict(l=80, r=40, t=110, b=110))


# --------------------------------------------------------------------------- Figs. 9 and 14


def _plane(gpu: GpuSpec, p_cc: float, p_tc: float, i_cc: np.ndarray, i_tc: np.ndarray) -> dict:
    """The model's comparison over the (I_CC, I_TC) plane (:func:`tcadvisor.model.compare_at_intensity`)."""
    cc, tc = np.meshgrid(i_cc, i_tc)
    with np.errstate(invalid="ignore", over="ignore"):
        out = model.compare_at_intensity(cc, tc, gpu.bandwidth.value, p_cc, p_tc)
    reachable = tc >= cc * (1 - 1e-12)  # β ≥ 1 and α ≤ 1, so I_TC ≥ I_CC
    return {"R": np.where(reachable, np.asarray(out["R"], dtype=float), np.nan),
            "scenario": np.where(reachable, np.asarray(out["scenario"], dtype=float), np.nan)}


def _edges(lo: float, hi: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.logspace(math.log10(lo), math.log10(hi), n + 1)
    return edges, np.sqrt(edges[:-1] * edges[1:])


def _path(adv_by_t: list[Advice], unit: str) -> tuple[list[float], list[float], list[int]]:
    xs, ys, ts = [], [], []
    for adv in adv_by_t:
        opt = next(o for o in adv.options if o.unit == unit)
        if opt.available:
            xs.append(adv.options[0].intensity)
            ys.append(opt.intensity)
            ts.append(opt.fuse)
    return xs, ys, ts


def _impl_alpha(advs: list[Advice], unit: str) -> str:
    """'SPIDER, α = 15/32 (paper)': the implementation of ``unit`` and its α along a path, as the advisor gave it."""
    opts = [o for a in advs for o in a.options if o.unit == unit and o.available]
    if not opts:
        return UNIT_LABELS[unit]
    alphas = sorted({o.alpha for o in opts})
    sources = sorted({style.alpha_source_label(o.alpha_source) for o in opts} - {""})
    value = str(alphas[0]) if len(alphas) == 1 else f"{alphas[0]}–{alphas[-1]}"
    return f"{opts[0].impl.name}, α = {value}" + (f" ({'/'.join(sources)})" if sources else "")


def _discrete(colors: list[str]) -> list:
    n = len(colors)
    scale = []
    for k, c in enumerate(colors):
        scale += [[k / n, c], [(k + 1) / n, c]]
    return scale


def fig9_plane(gpu: GpuSpec) -> go.Figure:
    """Fig. 9: the scenarios as regions of the (I_CC, I_TC) plane, with Box-2D1R's path over t = 1..16."""
    gpu = as_gpu(gpu)
    cols = _needs(gpu, "Fig. 9", ("cuda_core", "tensor_core"))
    titles = []
    for dtype in cols:
        p = _precisions(dtype, gpu)
        titles.append(f"{dtype}: CUDA cores {p['cuda_core'].upper()} vs Tensor Cores {p['tensor_core'].upper()}")
    fig = make_subplots(rows=1, cols=len(cols), subplot_titles=titles, horizontal_spacing=0.08)
    names = ["1: memory-bound on both, R = 1", "2: memory-bound on CC only, R < 1",
             "3: compute-bound on CC only, R > 1", "4, R > 1: compute-bound on both, β < α·P_tc/P_cc",
             "4, R ≤ 1: compute-bound on both, β ≥ α·P_tc/P_cc"]
    colors = [style.SCENARIO_COLORS[k] for k in ("1", "2", "3", "4win", "4lose")]
    for c, dtype in enumerate(cols, start=1):
        p = _precisions(dtype, gpu)
        p_cc, p_tc = gpu.peak("cuda_core", p["cuda_core"]), gpu.peak("tensor_core", p["tensor_core"])
        x_edges, x = _edges(0.25, 400, 260)
        y_edges, y = _edges(0.25, 4000, 300)
        plane = _plane(gpu, p_cc, p_tc, x, y)
        scen = plane["scenario"]
        code = np.where(scen == 4, np.where(plane["R"] > 1 + TIE, 3, 4), scen - 1)
        # float32 codes: the page carries half the bytes (the codes are small integers or NaN)
        fig.add_trace(go.Heatmap(x=x_edges, y=y_edges, z=code.astype(np.float32), zmin=-0.5, zmax=4.5,
                                 colorscale=_discrete(colors),
                                 showscale=False, hoverinfo="skip", name="scenarios"), row=1, col=c)
        advs = [_advise("Box-2D1R", dtype, gpu, t) for t in range(1, 17)]
        xs, ys, ts = _path(advs, "tensor_core")
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines+markers+text", text=[f"t={t}" if t in (1, 2, 4, 8, 16) else "" for t in ts],
            textposition="middle left", line=dict(color="black", width=1.5), marker=dict(size=6, color="black"),
            name="Box-2D1R (ConvStencil), t = 1..16", showlegend=(c == 1),
            customdata=[[t, adv.options[1].scenario, adv.options[1].speedup] for t, adv in zip(ts, advs)],
            hovertemplate="Box-2D1R, t = %{customdata[0]}<br>I_CC = %{x:.4g}, I_TC = %{y:.4g} FLOP/byte<br>"
                          "scenario %{customdata[1]}, R = %{customdata[2]:.3g}<extra></extra>"), row=1, col=c)
        fig.update_xaxes(type="log", dtick="D2", title_text="CUDA-core intensity I_CC [FLOP/byte]",
                         range=[math.log10(0.25), math.log10(400)], row=1, col=c)
        fig.update_yaxes(type="log", dtick="D2",
                         title_text="Tensor Core intensity I_TC [FLOP/byte]" if c == 1 else None,
                         range=[math.log10(0.25), math.log10(4000)], row=1, col=c)
    for name, color in zip(names, colors):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                 marker=dict(symbol="square", size=14, color=color)), row=1, col=1)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="unreachable: I_TC = I_CC·β/α ≥ I_CC",
                             marker=dict(symbol="square", size=14, color="white", line=dict(color="#999", width=1))),
                  row=1, col=1)
    return _layout(fig, f"Fig. 9 — The four scenarios as regions, on {gpu.name}",
                   "sweet spot (green): scenario 3 and the part of scenario 4 where β < α·P_tc/P_cc, i.e. "
                   "I_TC/I_CC < P_tc/P_cc; a stencil moves up and right as t grows", 1300, 700,
                   legend=dict(orientation="h", x=0, y=-0.16, yanchor="top"), margin=dict(l=80, r=40, t=110, b=150))


def fig14_sparse_plane(gpu: GpuSpec, dtype: str = "float") -> go.Figure:
    """Fig. 14: Sparse Tensor Cores widen the sweet spot (regions of the (I_CC, I_TC) plane, dense vs sparse)."""
    gpu = as_gpu(gpu)
    _needs(gpu, "Fig. 14", ("cuda_core", "tensor_core", "sparse_tensor_core"), dtypes=(dtype,))
    p = _precisions(dtype, gpu)
    p_cc = gpu.peak("cuda_core", p["cuda_core"])
    x_edges, x = _edges(0.25, 400, 260)
    y_edges, y = _edges(0.25, 4000, 300)
    dense = _plane(gpu, p_cc, gpu.peak("tensor_core", p["tensor_core"]), x, y)
    sparse = _plane(gpu, p_cc, gpu.peak("sparse_tensor_core", p["sparse_tensor_core"]), x, y)
    d_win, s_win = dense["R"] > 1 + TIE, sparse["R"] > 1 + TIE
    tie = (dense["scenario"] == 1) & (sparse["scenario"] == 1)
    code = np.select([tie, d_win & s_win, s_win & ~d_win, d_win & ~s_win], [0, 3, 2, 4], default=1).astype(float)
    code[np.isnan(dense["R"])] = np.nan
    names = ["R = 1 on both (memory-bound on every unit)", "no gain: R ≤ 1 on dense and on sparse",
             "sweet spot gained with Sparse Tensor Cores", "sweet spot on dense and sparse", "dense only"]
    colors = [style.SCENARIO_COLORS["1"], style.SCENARIO_COLORS["2"], "#a6dba0", style.SCENARIO_COLORS["4win"],
              "#762a83"]
    fig = go.Figure(go.Heatmap(x=x_edges, y=y_edges, z=code.astype(np.float32), zmin=-0.5, zmax=4.5,
                               colorscale=_discrete(colors),
                               showscale=False, hoverinfo="skip"))
    advs = [_advise("Box-2D1R", dtype, gpu, t) for t in range(1, 17)]
    xs, ys, ts = _path(advs, "sparse_tensor_core")
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="lines+markers+text", text=[f"t={t}" if t in (1, 2, 4, 7, 16) else "" for t in ts],
        textposition="middle left", line=dict(color="black", width=1.5), marker=dict(size=6, color="black"),
        name=f"Box-2D1R ({_impl_alpha(advs, 'sparse_tensor_core')}), t = 1..16",
        customdata=[[t, a.options[1].speedup, a.options[2].speedup] for t, a in zip(ts, advs)],
        hovertemplate="Box-2D1R, t = %{customdata[0]}<br>I_CC = %{x:.4g}, I_TC = %{y:.4g} FLOP/byte<br>"
                      "R dense = %{customdata[1]:.3g}, R sparse = %{customdata[2]:.3g}<extra></extra>"))
    present = {int(v) for v in np.unique(code[~np.isnan(code)])}
    for k, (name, color) in enumerate(zip(names, colors)):
        if k in present:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                     marker=dict(symbol="square", size=14, color=color)))
    fig.update_xaxes(type="log", dtick="D2", title_text="CUDA-core intensity I_CC [FLOP/byte]",
                     range=[math.log10(0.25), math.log10(400)])
    fig.update_yaxes(type="log", dtick="D2", title_text="Tensor Core intensity I_TC [FLOP/byte]",
                     range=[math.log10(0.25), math.log10(4000)])
    sp, de = gpu.peak("sparse_tensor_core", p["sparse_tensor_core"]), gpu.peak("tensor_core", p["tensor_core"])
    return _layout(fig, f"Fig. 14 — Sparse Tensor Cores widen the sweet spot, on {gpu.name} ({dtype})",
                   f"P_sptc = {sp / TERA:.4g} vs P_tc = {de / TERA:.4g} TFLOP/s ({p['tensor_core'].upper()}); "
                   "light green: configurations that lose on dense Tensor Cores but win on sparse ones", 1100, 720,
                   legend=dict(x=1.02, xanchor="left", y=1), margin=dict(l=80, r=40, t=110, b=80))


# --------------------------------------------------------------------------- Fig. 10


def fig10_intensity(gpu: GpuSpec, fuses=range(1, 9)) -> go.Figure:
    """Fig. 10: I_CC against t for box and star stencils, 2D/3D, r = 1, 2, float and double, against the ridge."""
    gpu = as_gpu(gpu)
    dtypes = _needs(gpu, "Fig. 10", ("cuda_core",))
    fig = make_subplots(rows=1, cols=len(dtypes), horizontal_spacing=0.08,
                        subplot_titles=[f"{d} ({_precisions(d, gpu)['cuda_core'].upper()} CUDA cores, "
                                        f"S = {8 if d == 'double' else 4} bytes)" for d in dtypes])
    palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]
    top = 0
    for c, dtype in enumerate(dtypes, start=1):
        k = 0
        for shape in ("box", "star"):
            for dims in (2, 3):
                data = sweep(shape, dims, dtype, gpu, radii=(1, 2), fuses=list(fuses), model="base")
                data = data[data["unit"] == "cuda_core"]
                for radius, rows in data.groupby("radius"):
                    name = rows["stencil"].iloc[0]
                    top = max(top, rows["intensity"].max())
                    fig.add_trace(go.Scatter(
                        x=rows["fuse"], y=rows["intensity"], mode="lines+markers", name=name,
                        legendgroup=name, showlegend=(c == 1),
                        line=dict(color=palette[k % len(palette)], dash="solid" if shape == "box" else "dash"),
                        marker=dict(symbol="square" if shape == "box" else "circle", size=7),
                        customdata=rows[["bound", "gstencils"]].to_numpy(),
                        hovertemplate=f"{name}, t = %{{x}}<br>I_CC = %{{y:.4g}} FLOP/byte, %{{customdata[0]}}-bound"
                                      "<br>%{customdata[1]:.4g} GStencils/s<extra></extra>"), row=1, col=c)
                    k += 1
        precision = _precisions(dtype, gpu)["cuda_core"]
        ridge = ridge_point(gpu.bandwidth.value, gpu.peak("cuda_core", precision))
        fig.add_hrect(y0=ridge, y1=top * 10, fillcolor="rgba(27,120,55,0.08)", line_width=0, layer="below",
                      row=1, col=c, exclude_empty_subplots=False)
        fig.add_hline(y=ridge, line=dict(color="black", width=2, dash="dot"), row=1, col=c)
        axis = c if c > 1 else ""
        fig.add_annotation(x=1, xref=f"x{axis} domain", y=math.log10(ridge), yref=f"y{axis}",
                           text=f"ridge point ρ_CC = {ridge:.3g} FLOP/byte: compute-bound above",
                           showarrow=False, xanchor="right", yanchor="bottom", font=dict(size=12),
                           bgcolor="rgba(255,255,255,0.85)")
        fig.update_xaxes(title_text=style.AXIS_FUSE, dtick=1, row=1, col=c)
        fig.update_yaxes(type="log", dtick="D2", title_text="CUDA-core intensity I_CC [FLOP/byte]" if c == 1 else None,
                         row=1, col=c)
    return _layout(fig, f"Fig. 10 — Intensity against fusion depth on {gpu.name}",
                   "I_CC = K·t/S (eq. 8): with enough temporal fusion every stencil becomes compute-bound on CUDA "
                   "cores; solid: box, dashed: star", 1300, 620, legend=dict(x=1.01, y=1))


# --------------------------------------------------------------------------- Fig. 13


def fig13_sparse_ceiling(gpu: GpuSpec) -> go.Figure:
    """Fig. 13: the same kernel (SPIDER's α, Box-2D1R, t = 7, float) on dense and on Sparse Tensor Cores (Table 4)."""
    gpu = as_gpu(gpu)
    _needs(gpu, "Fig. 13", ("cuda_core", "tensor_core", "sparse_tensor_core"), dtypes=("float",))
    alpha = paper.ALPHA["SPIDER"]
    adv = _advise("Box-2D1R", "float", gpu, 7, alpha=alpha)
    cc, dense, sparse = adv.options
    if not (cc.available and dense.available and sparse.available):
        raise TcAdvisorError(f"{gpu.name} cannot run Box-2D1R in float on every unit; Fig. 13 needs all three")
    ceilings = ceilings_of(adv.options)
    grid = intensity_grid([o.intensity for o in adv.options], [o.ridge for o in adv.options])
    fig = go.Figure()
    add_bands(fig, [("CC", cc.ridge), ("TC", dense.ridge), ("SpTC", sparse.ridge)], grid[0], grid[-1])
    add_ceilings(fig, gpu, ceilings, grid)
    add_operating_points(fig, adv.options, names={"tensor_core": "SPIDER's α on dense Tensor Cores, t = 7",
                                                  "sparse_tensor_core": "SPIDER on Sparse Tensor Cores, t = 7"})
    fig.add_annotation(x=math.log10(sparse.intensity), y=math.log10(sparse.attainable_flops / TERA),
                       ax=math.log10(dense.intensity), ay=math.log10(dense.attainable_flops / TERA),
                       xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=3, arrowwidth=2,
                       arrowcolor="#1b7837", text="")
    gain = sparse.gstencils / dense.gstencils
    _log_axes(fig, (grid[0], grid[-1]), (roof(gpu.bandwidth.value, math.inf, grid[0]) / TERA, sparse.peak / TERA * 3))
    return _layout(fig, f"Fig. 13 — Sparse Tensor Cores raise the ceiling, on {gpu.name}",
                   f"SPIDER's α = {alpha} on Box-2D1R, t = 7, float (Table 4): dense TF32 {dense.bound}-bound at "
                   f"{dense.gstencils:.4g} GStencils/s, sparse {sparse.bound}-bound at {sparse.gstencils:.4g} "
                   f"({gain:.2f}×)", 1250, 640, legend=dict(x=1.02, xanchor="left", y=1))


# --------------------------------------------------------------------------- Table 3


CIRCLED = "❶❷❸❹❺❻❼❽❾"


def table3_advice(gpu: GpuSpec) -> list[tuple[int, str, Advice, str, str, float, float, int]]:
    """The six criteria cases of Table 3 on ``gpu``.

    Tuples (case, dtype, advice, CC unit, TC unit, measured CC, measured TC, printed scenario); the
    measurements and the scenario are the paper's data, the advice is the model's.
    """
    gpu = as_gpu(gpu)
    out = []
    for case, name, fuse, dtype, cc, tc, scenario in paper.TABLE3:
        tc_impl = find_impl(tc[0])
        adv = _advise(name, dtype, gpu, fuse, alpha=tc[5], impls={tc_impl.unit: tc_impl})
        out.append((case, dtype, adv, "cuda_core", tc_impl.unit, cc[4], tc[4], scenario))
    return out


def table3_roofline(gpu: GpuSpec) -> go.Figure:
    """Table 3's six cases on the roofline: CUDA-core and Tensor Core points, numbered, per precision."""
    gpu = as_gpu(gpu)
    cases = table3_advice(gpu)

    def drawable(case) -> bool:
        _, _, adv, cc_unit, tc_unit = case[:5]
        return any(o.available for o in adv.options if o.unit in (cc_unit, tc_unit))

    cases = [c for c in cases if drawable(c)]
    if not cases:
        raise TcAdvisorError(f"{gpu.name} can run none of Table 3's cases on CUDA cores or Tensor Cores")
    dtypes = [d for d in ("double", "float") if any(c[1] == d for c in cases)]
    fig = make_subplots(rows=1, cols=len(dtypes), horizontal_spacing=0.07,
                        subplot_titles=[f"{d}: cases " + ", ".join(CIRCLED[c[0] - 1] for c in cases if c[1] == d)
                                        for d in dtypes])
    for col, dtype in enumerate(dtypes, start=1):
        mine = [c for c in cases if c[1] == dtype]
        opts = [o for c in mine for o in c[2].options if o.unit in (c[3], c[4]) and o.available]
        ceilings = sorted(ceilings_of(opts), key=lambda c: c[2])
        B = gpu.bandwidth.value
        grid = intensity_grid([o.intensity for o in opts], [ridge_point(B, c[2]) for c in ceilings])
        add_bands(fig, [(style.UNIT_SHORT[c[0]], ridge_point(B, c[2])) for c in ceilings], grid[0], grid[-1],
                  row=1, col=col)
        add_ceilings(fig, gpu, ceilings, grid, row=1, col=col, showlegend=True)
        for case, _, adv, cc_unit, tc_unit, meas_cc, meas_tc, scenario in mine:
            cc = next(o for o in adv.options if o.unit == cc_unit)
            tc = next(o for o in adv.options if o.unit == tc_unit)
            add_operating_points(fig, [cc, tc], row=1, col=col, showlegend=False, text=False)
            verdict = (f"scenario {tc.scenario} (paper: {scenario}), R = {tc.speedup:.3g}"
                       if tc.available and tc.speedup is not None
                       else f"{tc.label} without CUDA cores to compare with" if tc.available
                       else f"{tc.label}: not available here ({tc.reason})")
            for opt, meas in ((cc, meas_cc), (tc, meas_tc)):
                if not opt.available:
                    continue
                fig.add_trace(go.Scatter(
                    x=[opt.intensity], y=[opt.attainable_flops / TERA], mode="text", text=[CIRCLED[case - 1]],
                    textposition="top center" if opt.unit == "cuda_core" else "middle left",
                    textfont=dict(size=17, color=style.UNIT_COLORS[opt.unit]),
                    showlegend=False, name=f"case {case}", hovertemplate=(
                        f"<b>case {case}</b>: {adv.stencil.name}, t = {adv.fuse}, {dtype}<br>{opt.label} "
                        f"({opt.impl.name}): I = {opt.intensity:.4g}, {opt.bound}-bound<br>model "
                        f"{opt.gstencils:.4g} GStencils/s, paper measured {meas}<br>{verdict}<extra></extra>")),
                    row=1, col=col)
        top = max(c[2] for c in ceilings) / TERA * 3
        _log_axes(fig, (grid[0], grid[-1]), (roof(gpu.bandwidth.value, math.inf, grid[0]) / TERA, top),
                  row=1, col=col, y_title=(col == 1))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="CUDA cores (EBISU)",
                             marker=dict(size=11, color=style.UNIT_COLORS["cuda_core"])))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers",
                             name="(Sparse) Tensor Cores: useful (filled), executed (hollow)",
                             marker=dict(size=11, color=style.UNIT_COLORS["tensor_core"])))
    lines = []
    for case, dtype, adv, _, tc_unit, _, _, _ in cases:
        tc = next(o for o in adv.options if o.unit == tc_unit)
        what = (f"scenario {tc.scenario}, R = {tc.speedup:.3g}" if tc.available and tc.speedup is not None
                else f"no CUDA cores to compare {tc.label} with" if tc.available else f"no {tc.label} here")
        lines.append(f"{CIRCLED[case - 1]} {adv.stencil.name} t={adv.fuse} {dtype}: {what}")
    fig.add_annotation(text="    ".join(lines[:3]) + "<br>" + "    ".join(lines[3:]), xref="paper", yref="paper",
                       x=0, y=-0.17, xanchor="left", yanchor="top", showarrow=False, align="left",
                       font=dict(size=13))
    dedupe_legend(fig)
    return _layout(fig, f"Table 3 — the criteria cases on the roofline of {gpu.name}",
                   "numbered points: CUDA cores (EBISU) and Tensor Cores (ConvStencil for double, SPIDER on Sparse "
                   "Tensor Cores for float; case ❻ with the printed α = 0.47); hover for the paper's measurements",
                   1500, 720, legend=dict(x=1.01, xanchor="left", y=1), margin=dict(l=80, r=40, t=110, b=130))


def dedupe_legend(fig: go.Figure) -> None:
    """Show each legend name once (subplots repeat their roofs)."""
    seen = set()
    for trace in fig.data:
        if trace.showlegend is False or not trace.name:
            continue
        if trace.name in seen:
            trace.showlegend = False
        seen.add(trace.name)


# --------------------------------------------------------------------------- registry and writing


@dataclass(frozen=True)
class PaperFigure:
    title: str
    caption: str
    build: Callable[[GpuSpec], go.Figure]


FIGURES: dict[str, PaperFigure] = {
    "fig07-roofline": PaperFigure("Fig. 7 — the roofline model", "memory- and compute-bound regions, ridge point",
                                  fig7_roofline),
    "fig08-scenarios": PaperFigure("Fig. 8 — the four scenarios", "one configuration per scenario on the roofline",
                                   fig8_scenarios),
    "fig09-scenario-regions": PaperFigure("Fig. 9 — the scenarios as regions", "the sweet spot in the "
                                          "(I_CC, I_TC) plane", fig9_plane),
    "fig10-intensity-vs-depth": PaperFigure("Fig. 10 — intensity against fusion depth", "box and star, 2D/3D, "
                                            "float and double, against the ridge points", fig10_intensity),
    "fig13-sparse-ceiling": PaperFigure("Fig. 13 — Sparse Tensor Cores raise the ceiling", "SPIDER, Box-2D1R, "
                                        "t = 7 on dense and sparse TF32", fig13_sparse_ceiling),
    "fig14-sparse-sweet-spot": PaperFigure("Fig. 14 — Sparse Tensor Cores widen the sweet spot", "dense vs sparse "
                                           "regions of the (I_CC, I_TC) plane", fig14_sparse_plane),
    "table3-criteria": PaperFigure("Table 3 — the criteria cases on the roofline", "six cases, model points "
                                   "and the paper's measurements", table3_roofline),
}


def all_figures(gpu: GpuSpec | str) -> dict[str, go.Figure]:
    """Every figure as a Plotly :class:`~plotly.graph_objects.Figure`, by name (``gpu``: a spec or a name).

    Raises the first figure's :class:`~tcadvisor.errors.TcAdvisorError` if ``gpu``
    cannot show it; :func:`write_figures` draws what it can instead.
    """
    gpu = as_gpu(gpu)
    return {name: entry.build(gpu) for name, entry in FIGURES.items()}


@dataclass
class FigureSet:
    """What :func:`write_figures` did: the files written, the figures skipped (and why), the ones that failed."""

    directory: Path
    written: list[tuple[Path, str]] = field(default_factory=list)  # (file, title): pages, the script, the index
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (figure name, why this GPU cannot show it)
    failed: list[tuple[str, Exception]] = field(default_factory=list)  # (figure name, internal error: a bug)


def write_figures(directory: str | Path, gpu: GpuSpec | str, names=None, formats=("html",),
                  self_contained: bool = False, progress=None) -> FigureSet:
    """Write the figures ``names`` (default all) in ``formats`` into ``directory``, plus an ``index.html``.

    Every figure that can be drawn is written; one that ``gpu`` cannot show
    (its builder raises :class:`~tcadvisor.errors.TcAdvisorError`, e.g. no Sparse
    Tensor Cores) is skipped and listed with the reason, and so is one that
    fails with any other exception (a bug), so that one figure never costs the
    others.  The index is written last and lists what was written and what
    was not.  With no figure drawn at all, nothing is written and a one-line
    :class:`~tcadvisor.errors.TcAdvisorError` says why.  HTML pages share one
    copy of Plotly's JavaScript in ``directory`` unless ``self_contained``.
    Each file is replaced atomically (:func:`~tcadvisor.plots.output.atomic_write`).
    ``progress``, a callable, is told ``(i, n, what)`` before each figure is drawn and each file
    written (a PNG export takes seconds): the ``figures`` command's progress line.
    """
    from .output import (FORMATS, atomic_write, check_exporter, ensure_directory, plotly_js_current, plotly_js_name,
                         write_figure)

    directory = Path(directory)
    gpu = as_gpu(gpu)
    if isinstance(formats, str):
        formats = [f.strip().lower().lstrip(".") for f in formats.split(",") if f.strip()]
    import itertools

    try:
        formats = list(itertools.islice(iter(formats), len(FORMATS) * 2 + 1))
    except TypeError:
        formats = [formats]
    if not formats or len(formats) > len(FORMATS) * 2 or any(not isinstance(f, str) or f not in FORMATS
                                                               for f in formats):
        raise TcAdvisorError(f"formats {str(formats)[:60]}: expected some of {', '.join(FORMATS)}")
    formats = list(dict.fromkeys(formats))
    for fmt in formats:  # an exporter missing for one format is said before any file is written
        check_exporter(fmt)
    names = list(names or FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise TcAdvisorError(f"unknown figure {', '.join(unknown)}; expected some of {', '.join(FIGURES)}")
    if directory.exists() and not directory.is_dir():
        raise TcAdvisorError(f"cannot write the figures into {str(directory)!r}: it is a file, not a directory")
    if progress is not None and not callable(progress):
        raise TcAdvisorError(f"progress is called with (i, n, what); got {type(progress).__name__}")
    step = progress or (lambda i, n, what: None)
    result = FigureSet(directory)
    script = plotly_js_name() if "html" in formats and not self_contained else None
    script_was_there = script is not None and plotly_js_current(directory)
    pages = []
    for i, name in enumerate(names, 1):
        entry = FIGURES[name]
        step(i, len(names), name)
        try:
            fig = entry.build(gpu)
        except TcAdvisorError as exc:  # a figure this GPU cannot show (no sparse units, say): skipped, said why
            result.skipped.append((name, _stale(directory, name, formats, str(exc))))
            continue
        except Exception as exc:  # noqa: BLE001 - a bug in one figure must not cost the others; reported as one
            result.failed.append((name, exc))
            continue
        if not pages:
            ensure_directory(directory)
        files = []
        for fmt in formats:
            step(i, len(names), f"{name}.{fmt}")
            path = write_figure(fig, directory / f"{name}.{fmt}", shared_js=not self_contained)
            result.written.append((path, entry.title))
            files.append(path.name)
        pages.append((entry, files))
    if not pages:
        why = "; ".join(f"{n}: {r}" for n, r in result.skipped) or "; ".join(
            f"{n}: {type(e).__name__}: {e}" for n, e in result.failed)
        raise TcAdvisorError(f"no figure could be drawn for {gpu.name}, nothing was written: {why}")
    if script and not script_was_there:
        result.written.insert(0, (directory / script, "Plotly's JavaScript, shared by the pages"))
    index = directory / "index.html"
    atomic_write(index, _index_page(gpu, pages, result, script))
    result.written.append((index, "index of the figures"))
    return result


def _stale(directory: Path, name: str, formats, reason: str) -> str:
    """``reason``, plus a warning when a page of this name from an earlier run is still in ``directory``."""
    old = [f"{name}.{fmt}" for fmt in formats if (directory / f"{name}.{fmt}").is_file()]
    if old:
        reason += f" (the {', '.join(old)} already in {directory} is from an earlier run and was left as it was)"
    return reason


def _index_page(gpu: GpuSpec, pages, result: FigureSet, script: str | None) -> str:
    """index.html: the pages written, the figures skipped (and why), and where the JavaScript is."""
    items = "\n".join(
        f"<li><b>{html.escape(e.title)}</b> — {html.escape(e.caption)}: "
        + ", ".join(f'<a href="{html.escape(f)}">{html.escape(f)}</a>' for f in files) + "</li>"
        for e, files in pages)
    not_drawn = [f"<li><b>{html.escape(FIGURES[n].title)}</b> ({html.escape(n)}): {html.escape(r)}</li>"
                 for n, r in result.skipped]
    not_drawn += [f"<li><b>{html.escape(FIGURES[n].title)}</b> ({html.escape(n)}): failed with an internal error "
                  f"(a bug in tcadvisor): {html.escape(type(e).__name__)}: {html.escape(str(e))}</li>"
                  for n, e in result.failed]
    js = (f"<p>The pages load Plotly's JavaScript from <code>{html.escape(script)}</code> in this directory: "
          "keep it next to them (they need no network). <code>tcadvisor figures --self-contained</code> writes "
          "pages that each embed it.</p>" if script else "")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>tcadvisor: the paper's figures</title></head>"
            f"<body style='font-family:sans-serif;max-width:60em;margin:2em auto'>"
            f"<h1>“Do We Need Tensor Cores for Stencil Computations?” — figures from the model</h1>"
            f"<p>GPU: {html.escape(gpu.name)} (B = {gpu.bandwidth.value / 1e9:.4g} GB/s). "
            f"Generated by <code>tcadvisor figures</code>.</p><ul id='written'>{items}</ul>"
            + (f"<p>Not drawn for this GPU:</p><ul id='skipped'>{''.join(not_drawn)}</ul>" if not_drawn else "")
            + js + "</body></html>")
