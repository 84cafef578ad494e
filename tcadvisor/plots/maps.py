"""Sweet-spot maps: where, over radius r × fusion depth t, Tensor Cores beat CUDA cores.

The data come from :func:`tcadvisor.advisor.sweep` — the same evaluation
:func:`~tcadvisor.advisor.advise` makes — so a cell of the map *is* the
advisor's answer for that configuration; this module only arranges it.  Why a
map: the advisor answers one stencil at a time, but a user deciding whether to
port a code wants to see the region where Tensor Cores pay off and how it moves
with the radius, the depth and the GPU.

Layout: one row per GPU, three panels per row — dense Tensor Cores vs CUDA
cores, Sparse Tensor Cores vs CUDA cores (colour: log2 of the speedup R on one
diverging scale shared by every panel and GPU, white at R = 1; number: the
scenario; black outline: the sweet spot R > 1), and the fastest unit at each
cell with a star on the best depth of each radius.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..advisor import TIE_TOLERANCE as TIE, AlphaChoice, best_index, sweep
from ..queryargs import DEFAULT_FUSES, DEFAULT_RADII
from ..dtypes import BYTES
from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, UNITS
from . import measured_map, style
from ..arguments import as_alpha, as_dims, as_dtype, as_gpus, as_impls, as_shape, int_list

TENSOR_UNITS = ("tensor_core", "sparse_tensor_core")
#: Columns :func:`map_figure` reads (all made by :func:`map_data`).
MAP_COLUMNS = ("gpu_order", "gpu_name", "stencil", "shape", "dims", "dtype", "radius", "fuse", "unit", "impl",
               "precision", "available", "reason", "alpha", "alpha_source", "beta", "intensity", "bound",
               "gstencils", "speedup", "scenario", "log2_speedup", "winner", "best", "bound_only")
#: Margin above 1 under which a speedup is not counted as a win (the advisor's tie tolerance; R is
#: exactly 1 in scenario 1).
WIN = 1 + TIE


# --------------------------------------------------------------------------- data


def map_data(shape: str, dims: int, dtype: str, gpus, radii: Iterable[int] | str = DEFAULT_RADII,
             fuses: Iterable[int] | str = DEFAULT_FUSES, impls=None, alpha_choice: AlphaChoice | None = None,
             model: str | None = None, *, alpha=None, progress=None, measured=None) -> pd.DataFrame:
    """The map's numbers: :func:`~tcadvisor.advisor.sweep` for each GPU, plus what the map marks.

    Arguments are read as the ``map`` command reads its options, with its
    one-line :class:`~tcadvisor.errors.TcAdvisorError` for a bad one: ``shape``
    'box' or 'star'; ``dims`` 1–3; ``dtype`` any alias ('fp32', 'float64');
    ``gpus`` one spec or name, 'a100,h100', or a list of specs and names;
    ``radii``/``fuses`` ints, ranges ('1-8') or lists; ``impls`` profiles or
    names; ``alpha_choice`` 'paper', 'constructed', a number in [1e-6, 1] or an
    :class:`~tcadvisor.advisor.AlphaChoice` (default: the advisor's; ``alpha=`` is the
    same argument as ``--alpha`` spells it); ``model`` the variant, ``base`` or ``refined``
    (default: the advisor's, the bundled kernels with the refined model; a cell at a
    depth a kernel cannot run shows the unit's bound, ``bound_only``).

    One row per (gpu, radius, fuse, unit) with the sweep's columns (among them
    ``alpha``, ``alpha_source`` and, from advisors that give them, ``mma`` and
    ``peak``), and: ``log2_speedup``; ``sweet_spot`` (a Tensor Core unit with
    R > 1); ``winner`` (the fastest unit of its cell; ties as the advisor breaks
    them); ``best`` (the unit and depth the advisor recommends for its radius
    over the swept depths, by :func:`~tcadvisor.advisor.best_index`); ``dtype``.  A
    ``bound_only`` row is never a winner nor the best: no kernel runs it.

    ``progress``, a callable, is told ``(i, n, what)`` before each GPU and radius (``what`` names
    both): the ``map`` command draws its progress line from it.

    ``measured``, a recorded run (the path of validate's ``results.json`` or of a corpus CSV, or a
    :class:`~tcadvisor.plots.measured.Measured`), adds the measured columns of
    :func:`tcadvisor.plots.measured_map.attach` (``--measured``), which :func:`map_figure` draws.
    """
    from ..stencil import check_fuse, check_radius

    shape, dims, dtype = as_shape(shape), as_dims(dims), as_dtype(dtype)
    gpus = as_gpus(gpus)
    radii = int_list(radii, "radii", check_radius)
    fuses = int_list(fuses, "fusion depths", check_fuse)
    if alpha is not None and alpha_choice is not None:
        raise TcAdvisorError("give α once: alpha_choice or alpha (the same argument), not both")
    impls, choice = as_impls(impls), as_alpha(alpha if alpha is not None else alpha_choice)
    if progress is not None and not callable(progress):
        raise TcAdvisorError(f"progress is called with (i, n, what); got {type(progress).__name__}")
    frames = []
    for order, gpu in enumerate(gpus):
        step = None if progress is None else _step(progress, gpu.short, order * len(radii), len(gpus) * len(radii))
        df = sweep(shape, dims, dtype, gpu, radii=radii, fuses=fuses, impls=impls, alpha_choice=choice, model=model,
                   progress=step)
        df.insert(2, "gpu_order", order)
        frames.append(df)
    data = pd.concat(frames, ignore_index=True)
    if "dtype" not in data.columns:
        data.insert(3, "dtype", dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        data["log2_speedup"] = np.log2(data["speedup"].astype(float))
    data["sweet_spot"] = data["unit"].isin(TENSOR_UNITS) & (data["speedup"] > WIN)
    data["winner"] = False
    data["best"] = False
    if "bound_only" not in data.columns:
        data["bound_only"] = False
    ok = data["available"] & np.isfinite(data["gstencils"].astype(float)) & ~data["bound_only"].astype(bool)
    for _, group in data[ok].groupby(["gpu_order", "radius", "fuse"]):
        data.loc[_pick(group, by_fuse=False), "winner"] = True
    for _, group in data[ok].groupby(["gpu_order", "radius"]):
        data.loc[_pick(group, by_fuse=True), "best"] = True
    if measured is not None:
        data = measured_map.attach(data, measured, gpus)
    return data


def _step(progress, gpu: str, before: int, total: int):
    """One GPU's sweep callback (radius i of its n) as configuration ``before + i`` of all ``total``."""
    return lambda i, n, what: progress(before + i, total, f"{gpu} {what}")


def _pick(group: pd.DataFrame, by_fuse: bool):
    """Index (of ``group``) of the configuration the advisor would recommend, by its own rule."""
    fuses = list(group["fuse"]) if by_fuse else [0] * len(group)
    i = best_index(list(group["gstencils"]), fuses, list(group["unit"]))
    return group.index[i]


# --------------------------------------------------------------------------- figure


def _grid(rows: pd.DataFrame, radii: list[int], fuses: list[int], column: str, fill=None) -> np.ndarray:
    """``column`` of ``rows`` as a radius × fuse array (rows of the map are radii)."""
    table = rows.pivot(index="radius", columns="fuse", values=column).reindex(index=radii, columns=fuses)
    out = table.to_numpy(dtype=object)
    if fill is not None:
        out = np.where(pd.isna(out), fill, out)
    return out


def _fmt(x, digits=4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}g}"


def _outline(mask: np.ndarray) -> tuple[list, list]:
    """Line segments (with None breaks) around the cells where ``mask`` is True, in cell-index coordinates."""
    xs, ys = [], []
    ny, nx = mask.shape
    for i in range(ny):
        for j in range(nx):
            if not mask[i, j]:
                continue
            if i == 0 or not mask[i - 1, j]:
                xs += [j - 0.5, j + 0.5, None]; ys += [i - 0.5, i - 0.5, None]  # noqa: E702
            if i == ny - 1 or not mask[i + 1, j]:
                xs += [j - 0.5, j + 0.5, None]; ys += [i + 0.5, i + 0.5, None]  # noqa: E702
            if j == 0 or not mask[i, j - 1]:
                xs += [j - 0.5, j - 0.5, None]; ys += [i - 0.5, i + 0.5, None]  # noqa: E702
            if j == nx - 1 or not mask[i, j + 1]:
                xs += [j + 0.5, j + 0.5, None]; ys += [i - 0.5, i + 0.5, None]  # noqa: E702
    return xs, ys


def _distinct(values) -> list[str]:
    """The distinct non-empty strings of ``values``, in order of appearance."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == "" or str(v) in out:
            continue
        out.append(str(v))
    return out


def _instruction(row) -> str:
    """'m16n8k8, 156 TFLOP/s' from a row's ``mma`` and ``peak`` (columns of newer advisors), else '–'."""
    mma = row.get("mma")
    peak = row.get("peak")
    parts = []
    if mma is not None and not (isinstance(mma, float) and math.isnan(mma)) and str(mma):
        parts.append(str(mma))
    if peak is not None and isinstance(peak, (int, float, np.floating)) and math.isfinite(peak):
        parts.append(f"{peak / 1e12:.4g} TFLOP/s")
    return ", ".join(parts) if parts else "–"


def _unit_desc(rows: pd.DataFrame, unit: str) -> tuple[str, str | None]:
    """'ConvStencil (TF32 m8n8k4, α: paper)' for an available unit, else (label, why it is not available).

    The MMA instructions and α's sources are listed as they occur in the panel
    (a constructed α may pick a different instruction at different depths).
    """
    avail = rows[(rows["unit"] == unit) & rows["available"]]
    if len(avail):
        first = avail.iloc[0]
        what = str(first["precision"]).upper()
        if "mma" in avail.columns:
            shapes = _distinct(avail["mma"])
            if shapes:
                what += " " + "/".join(shapes)
        if unit in TENSOR_UNITS:
            sources = _distinct(avail["alpha_source"].map(style.alpha_source_label))
            if sources:
                what += f", α: {'/'.join(sources)}"
        return f"{first['impl']} ({what})", None
    reasons = rows[rows["unit"] == unit]["reason"].dropna()
    return UNIT_LABELS[unit], (reasons.iloc[0] if len(reasons) else "no implementation")


def _range_text(values: list[int]) -> str:
    if values == list(range(values[0], values[-1] + 1)) and len(values) > 1:
        return f"{values[0]}–{values[-1]}"
    return ", ".join(str(v) for v in values)


_SPEEDUP_HOVER = (
    "<b>%{customdata[0]}, t = %{customdata[1]}</b><br>"
    "R = %{customdata[2]}× over CUDA cores<br>"
    "scenario %{customdata[3]}: %{customdata[4]}<br>"
    "α = %{customdata[5]} (%{customdata[14]}), β = %{customdata[6]}<br>"
    "instruction: %{customdata[15]}<br>"
    "I_TC = %{customdata[7]} FLOP/byte (%{customdata[8]}-bound)<br>"
    "I_CC = %{customdata[9]} FLOP/byte (%{customdata[10]}-bound)<br>"
    "GStencils/s: %{customdata[11]} here vs %{customdata[12]} on CUDA cores%{customdata[16]}%{customdata[17]}"
    "<extra>%{customdata[13]}</extra>"
)
#: Hover line of a cell that shows a unit's bound because its bundled kernel cannot run the depth.
_BOUND_NOTE = "<br><b>(n): the unit's bound</b>, the paper's model at its α, β and peak: {why}"
_WINNER_HOVER = (
    "<b>%{customdata[0]}, t = %{customdata[1]}</b><br>fastest: %{customdata[2]}%{customdata[3]}<br>"
    "GStencils/s — CUDA cores %{customdata[4]}, Tensor Cores %{customdata[5]}, Sparse TCs %{customdata[6]}"
    "%{customdata[8]}<extra>%{customdata[7]}</extra>"
)


def _speedup_panel(fig: go.Figure, rows: pd.DataFrame, unit: str, grid: dict, row_i: int, col_i: int,
                   gpu_name: str, desc: str, missing: str | None, legend_sweet: bool) -> bool:
    """One speedup panel (colour, scenario labels, hover, sweet-spot outline); returns whether it drew a legend."""
    radii, fuses = grid["radii"], grid["fuses"]
    u = rows[rows["unit"] == unit]
    z = _grid(u, radii, fuses, "log2_speedup").astype(float)
    if missing is not None:
        z = np.full(z.shape, np.nan)
    fig.add_trace(go.Heatmap(x=grid["x"], y=grid["y"], z=z, coloraxis="coloraxis", xgap=1, ygap=1,
                             hoverinfo="skip", name=f"{UNIT_LABELS[unit]}, {gpu_name}"), row=row_i, col=col_i)
    trace = fig.data[-1]
    if missing is not None:  # an empty panel that says why, rather than an error
        fig.add_annotation(text=missing, xref=f"{_axis_ref(fig, row_i, col_i, 'x')} domain",
                           yref=f"{_axis_ref(fig, row_i, col_i, 'y')} domain", x=0.5, y=0.5, showarrow=False,
                           font=dict(size=12, color="#444"), bgcolor="rgba(240,240,240,0.9)", bordercolor="#999",
                           borderpad=6)
        return False
    cc = rows[rows["unit"] == "cuda_core"]
    scen = _grid(u, radii, fuses, "scenario", fill=0)
    speed = _grid(u, radii, fuses, "speedup").astype(float)
    num = np.vectorize(_fmt)
    bound_only = _grid(u, radii, fuses, "bound_only", fill=False).astype(bool)
    labels = np.where(scen > 0, scen.astype(int).astype(str), "")
    labels = np.where(bound_only & (labels != ""), np.char.add(np.char.add("(", labels.astype(str)), ")"), labels)
    why = _grid(u.assign(_why=u["reason"].fillna("")), radii, fuses, "_why", fill="")
    notes = np.where(bound_only, np.vectorize(lambda w: _BOUND_NOTE.format(why=w or "no bundled kernel runs it"))(why),
                     "")
    trace.update(
        text=labels, texttemplate="%{text}", textfont=dict(size=10),
        hovertemplate=_SPEEDUP_HOVER, hoverinfo=None,
        customdata=np.stack([
            grid["names"], grid["t"], np.vectorize(lambda x: _fmt(x, 3))(speed), scen.astype(int),
            np.vectorize(lambda n: style.SCENARIO_NAMES.get(int(n), "–"))(scen),
            num(_grid(u, radii, fuses, "alpha").astype(float)), num(_grid(u, radii, fuses, "beta").astype(float)),
            num(_grid(u, radii, fuses, "intensity").astype(float)), _grid(u, radii, fuses, "bound", fill="–"),
            num(_grid(cc, radii, fuses, "intensity").astype(float)), _grid(cc, radii, fuses, "bound", fill="–"),
            num(_grid(u, radii, fuses, "gstencils").astype(float)),
            num(_grid(cc, radii, fuses, "gstencils").astype(float)),
            np.full(z.shape, f"{UNIT_LABELS[unit]}, {desc}, {gpu_name}", dtype=object),
            _grid(u.assign(_src=u["alpha_source"].map(lambda a: style.alpha_source_label(a) or "–")), radii, fuses,
                  "_src", fill="–"),
            _grid(u.assign(_instr=u.apply(_instruction, axis=1) if len(u) else []), radii, fuses, "_instr",
                  fill="–"),
            notes, measured_map.speedup_hover(rows, unit, grid),
        ], axis=-1))
    xs, ys = _outline(speed > WIN)
    if not xs:
        return False
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=style.SWEET_SPOT_LINE, hoverinfo="skip",
                             name="sweet spot (R > 1)", legendgroup="sweet", showlegend=legend_sweet),
                  row=row_i, col=col_i)
    return True


def _winner_panel(fig: go.Figure, rows: pd.DataFrame, grid: dict, row_i: int, gpu_name: str) -> None:
    """The fastest unit in each cell, and a star on the best depth of each radius."""
    radii, fuses = grid["radii"], grid["fuses"]
    win = rows[rows["winner"]]
    code = _grid(win.assign(code=win["unit"].map({u: i for i, u in enumerate(UNITS)})), radii, fuses,
                 "code").astype(float)
    best = _grid(rows[rows["best"]].assign(star="★"), radii, fuses, "star", fill="")
    def shown(r) -> str:  # a bound (no kernel runs the cell) is said as such
        return _fmt(float(r["gstencils"])) + (" (bound)" if r.get("bound_only", False) else "")

    gst = {}
    for u in UNITS:
        of_unit = rows[rows["unit"] == u]
        gst[u] = _grid(of_unit.assign(_g=of_unit.apply(shown, axis=1) if len(of_unit) else []), radii, fuses, "_g",
                       fill="–")
    win_label = np.vectorize(lambda c: UNIT_LABELS[UNITS[int(c)]] if math.isfinite(c) else "–")(code)
    best_note = np.where(best == "★", " (★ best depth for this radius)", "")
    custom = np.stack([grid["names"], grid["t"], win_label, best_note, gst["cuda_core"], gst["tensor_core"],
                       gst["sparse_tensor_core"], np.full(code.shape, gpu_name, dtype=object),
                       measured_map.winner_hover(rows, grid)], axis=-1)
    colors = [style.UNIT_COLORS[u] for u in UNITS]
    scale = [[0, colors[0]], [1 / 3, colors[0]], [1 / 3, colors[1]], [2 / 3, colors[1]], [2 / 3, colors[2]],
             [1, colors[2]]]
    fig.add_trace(go.Heatmap(
        x=grid["x"], y=grid["y"], z=code, zmin=-0.5, zmax=2.5, colorscale=scale, showscale=False,
        text=best, texttemplate="%{text}", textfont=dict(size=13, color="white"), customdata=custom,
        hovertemplate=_WINNER_HOVER, xgap=1, ygap=1, name=f"fastest unit, {gpu_name}",
    ), row=row_i, col=3)


def map_figure(data: pd.DataFrame, title: str | None = None) -> go.Figure:
    """The sweet-spot map of :func:`map_data`'s DataFrame, one row of three panels per GPU."""
    missing = [c for c in MAP_COLUMNS if not isinstance(data, pd.DataFrame) or c not in data.columns]
    if missing or data.empty:
        got = type(data).__name__ if not isinstance(data, pd.DataFrame) else (
            "an empty DataFrame" if data.empty else f"a DataFrame without {', '.join(missing)}")
        raise TcAdvisorError(f"map_figure draws the DataFrame of map_data(shape, dims, dtype, gpus), not {got}")
    gpu_orders = sorted(data["gpu_order"].unique())
    radii = sorted(int(r) for r in data["radius"].unique())
    fuses = sorted(int(t) for t in data["fuse"].unique())
    shape, dims, dtype = data["shape"].iloc[0], int(data["dims"].iloc[0]), data["dtype"].iloc[0]
    n_rows = len(gpu_orders)

    tensor = data[data["unit"].isin(TENSOR_UNITS) & data["available"]]
    logs = tensor["log2_speedup"].astype(float)
    half = style.speedup_range(logs.tolist())
    tickvals, ticktext = style.speedup_ticks(half, clipped=bool((logs.abs() > half).any()))

    titles, per_gpu = [], []
    for order in gpu_orders:
        rows = data[data["gpu_order"] == order]
        gpu_name = rows["gpu_name"].iloc[0]
        cc_desc, cc_missing = _unit_desc(rows, "cuda_core")
        panels = {}
        for u in TENSOR_UNITS:
            desc, why = _unit_desc(rows, u)
            if why is not None:
                missing = f"<b>{UNIT_LABELS[u]}: not available on this GPU/precision</b><br>{why}"
            elif cc_missing is not None:
                missing = f"<b>No speedup: CUDA cores not available on this GPU/precision</b><br>{cc_missing}"
            else:
                missing = None
            panels[u] = (desc, missing)
            versus = f"{desc} vs {cc_desc}" if missing is None else "not available"
            titles.append(f"<b>{UNIT_LABELS[u]}</b> vs CUDA cores<br>{versus}")
        titles.append("<b>fastest unit</b><br>★ = best depth t for the radius")
        per_gpu.append((rows, gpu_name, panels))

    row_height = max(170, 36 * len(radii))
    plot_h = n_rows * row_height + (n_rows - 1) * 95
    fig = make_subplots(rows=n_rows, cols=3, subplot_titles=titles, horizontal_spacing=0.065,
                        vertical_spacing=95 / plot_h if n_rows > 1 else 0.1)
    stencil_names = {r: data[data["radius"] == r]["stencil"].iloc[0] for r in radii}
    grid = {"radii": radii, "fuses": fuses, "x": list(range(len(fuses))), "y": list(range(len(radii))),
            "names": np.array([[stencil_names[r]] * len(fuses) for r in radii], dtype=object),
            "t": np.array([fuses] * len(radii), dtype=object)}
    legend_sweet, legend_measured = True, set()
    for row_i, (rows, gpu_name, panels) in enumerate(per_gpu, start=1):
        for col_i, unit in enumerate(TENSOR_UNITS, start=1):
            desc, missing = panels[unit]
            if _speedup_panel(fig, rows, unit, grid, row_i, col_i, gpu_name, desc, missing, legend_sweet):
                legend_sweet = False
        _winner_panel(fig, rows, grid, row_i, gpu_name)
        measured_map.draw_winner_marks(fig, rows, grid, row_i, legend_measured)

    if legend_sweet:  # no sweet spot anywhere: say so in the legend rather than leave it unexplained
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=style.SWEET_SPOT_LINE,
                                 name="sweet spot (R > 1): none here"), row=1, col=1)
    measured_map.finish_legend(fig, data, legend_measured)
    for u in UNITS:  # legend entries for the colours of the third panel
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"fastest: {UNIT_LABELS[u]}",
                                 marker=dict(symbol="square", size=14, color=style.UNIT_COLORS[u])),
                      row=1, col=3)
    _finish_layout(fig, grid, n_rows, row_height, plot_h, half, tickvals, ticktext,
                   [name for _, name, _ in per_gpu], title, shape, dims, dtype,
                   bounds=bool(data["bound_only"].astype(bool).any()), measured=measured_map.caption(data))
    return fig


def _finish_layout(fig, grid, n_rows, row_height, plot_h, half, tickvals, ticktext, gpu_names, title,
                   shape, dims, dtype, bounds: bool = False, measured: str | None = None) -> None:
    """Axes, title, shared colour bar, legend, scenario caption, the measured line (with ``--measured``) and
    (with several GPUs) row labels."""
    radii, fuses = grid["radii"], grid["fuses"]
    for row_i in range(1, n_rows + 1):
        for col_i in range(1, 4):
            fig.update_xaxes(tickvals=grid["x"], ticktext=[str(t) for t in fuses], range=[-0.5, len(fuses) - 0.5],
                             showgrid=False, zeroline=False, ticks="", row=row_i, col=col_i,
                             title_text=style.AXIS_FUSE if row_i == n_rows else None, title_standoff=6)
            fig.update_yaxes(tickvals=grid["y"], ticktext=[str(r) for r in radii], range=[-0.5, len(radii) - 0.5],
                             showgrid=False, zeroline=False, ticks="", row=row_i, col=col_i,
                             title_text=style.AXIS_RADIUS if col_i == 1 else None, title_standoff=4)

    shape_name = f"{shape.capitalize()}-{dims}D"
    precision_note = {"float": "float: FP32 on CUDA cores, TF32 on Tensor Cores",
                      "double": "double: FP64 on every unit"}.get(dtype, f"{dtype} ({BYTES[dtype]} bytes)")
    where = f"on {gpu_names[0]}" if n_rows == 1 else f"on {n_rows} GPUs (one colour scale)"
    fig_title = title or (f"Where Tensor Cores pay off {where}: {shape_name} stencils, r = {_range_text(radii)}, "
                          f"t = {_range_text(fuses)} ({precision_note})")
    shift = 30 if measured else 0  # the measured marks' legend entries take a second legend line
    top, bottom, left = 120, 150 + (70 if measured else 0), (70 if n_rows == 1 else 120)
    plot_w = 1500 - left - 110
    height = top + plot_h + bottom
    px = 1 / plot_h  # one pixel in paper coordinates (vertical)
    fig.update_layout(**style.base_layout(
        title=dict(text=fig_title + "<br><sup>colour: speedup R = P_TC/P_CC of useful throughput (white = 1×, "
                   "green: Tensor Cores win, pink: they lose); number in a cell: scenario; black outline: "
                   "the sweet spot R > 1. Hover a cell for α and its source, the MMA instruction, β, I, bound "
                   "and GStencils/s." + (" (n): no bundled kernel runs the cell, so it shows the units' bounds "
                                         "(the paper's model) and is never the fastest." if bounds else "")
                   + "</sup>",
                   x=0.01, xanchor="left", y=1 - 18 / height, yanchor="top", font=dict(size=17)),
        width=1500, height=int(height),
        coloraxis=dict(colorscale=style.SPEEDUP_COLORSCALE, cmin=-half, cmax=half, cmid=0,
                       colorbar=dict(title=dict(text="speedup R<br>over CUDA<br>cores", side="top"),
                                     tickvals=tickvals, ticktext=ticktext, len=min(1.0, max(row_height, 260) * px),
                                     lenmode="fraction", y=1, yanchor="top", x=1.01, thickness=18)),
        legend=dict(orientation="h", x=0, xanchor="left", y=-62 * px, yanchor="top", font=dict(size=13)),
        margin=dict(l=left, r=110, t=top, b=bottom),
    ))
    if n_rows > 1:  # the GPU of each row, left of its first panel
        for row_i, gpu_name in enumerate(gpu_names, start=1):
            lo, hi = fig.get_subplot(row_i, 1).yaxis.domain
            fig.add_annotation(text=f"<b>{gpu_name}</b>", textangle=-90, xref="paper", yref="paper",
                               x=-70 / plot_w, y=(lo + hi) / 2, showarrow=False, font=dict(size=14))
    names = [f"<b>{n}</b> {text}" for n, text in style.SCENARIO_NAMES.items()]
    caption = ("Scenario (the number in a cell):   " + "   ·   ".join(names[:2]) + "<br>"
               + "   ·   ".join(names[2:]))
    fig.add_annotation(text=caption, xref="paper", yref="paper", x=0, y=-(100 + shift) * px, xanchor="left",
                       yanchor="top", showarrow=False, align="left", font=dict(size=13, color="#333"))
    if measured:
        import textwrap

        fig.add_annotation(text="<br>".join(textwrap.wrap(measured, 190)), xref="paper", yref="paper", x=0,
                           y=-(150 + shift) * px, xanchor="left", yanchor="top", showarrow=False, align="left",
                           font=dict(size=13, color="#222"))


def _axis_ref(fig: go.Figure, row: int, col: int, which: str) -> str:
    """'x3' / 'y3' style axis id of a subplot (for annotations placed in its domain)."""
    ref = fig.get_subplot(row, col)
    axis = ref.xaxis if which == "x" else ref.yaxis
    name = axis.plotly_name  # 'xaxis3'
    return which + name[len(which) + 4:]
