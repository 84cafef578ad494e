"""Measured winners on a sweet-spot map: the columns :func:`attach` adds and the marks drawn from them.

Why columns: a map is drawn from :func:`~tcadvisor.plots.maps.map_data`'s DataFrame
alone (and ``--csv`` writes it), so the measurements join it as columns, one
value per (GPU, radius, depth, unit) row and the cell's verdict repeated on each
of its rows; :func:`~tcadvisor.plots.maps.map_figure` draws them where they are.
A cell no run measured keeps empty columns and is drawn exactly as without
``--measured``.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..advisor import TIE_TOLERANCE
from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, UNITS
from . import style
from .measured import Measured, cell_results, load_measured, runs_for_gpus, verdict

#: Columns :func:`attach` adds (``measured_source`` names the file on the rows of a GPU it matched).
COLUMNS = ("measured_gstencils", "measured_runs", "measured_why", "measured_winner", "measured_check",
           "measured_ahead", "measured_missing", "measured_text", "measured_source")
MISMATCH_RING = dict(symbol="circle-open", size=21, color="#d62728", line=dict(width=3))
TIE_RING = dict(symbol="diamond-open", size=19, color="#555", line=dict(width=1.5))


def attach(data: pd.DataFrame, measured, gpus) -> pd.DataFrame:
    """``data`` (of :func:`~tcadvisor.plots.maps.map_data` for ``gpus``, in order) with the measured columns.

    ``measured`` is a :class:`~tcadvisor.plots.measured.Measured` or the path of one.  Refused in one
    line: a file of another GPU than every one drawn, or one that measured no cell of the map.
    """
    measured = measured if isinstance(measured, Measured) else load_measured(measured)
    chosen = runs_for_gpus(measured, list(gpus))
    out = data.copy()
    out["measured_gstencils"] = np.nan
    out["measured_runs"] = 0
    out["measured_ahead"] = np.nan
    for column in ("measured_why", "measured_winner", "measured_check", "measured_missing", "measured_text",
                   "measured_source"):
        out[column] = ""
    cells = 0
    for order, (device, runs) in chosen.items():
        index: dict[tuple, list] = {}
        for r in runs:
            index.setdefault((r.stencil, r.dtype, r.fuse), []).append(r)
        mine = out[out["gpu_order"] == order]
        out.loc[mine.index, "measured_source"] = measured.label(device)
        for (_, fuse), group in mine.groupby(["radius", "fuse"]):
            found = index.get((group["stencil"].iloc[0], group["dtype"].iloc[0], int(fuse)))
            if not found:
                continue
            results = cell_results(found)
            runnable = group[group["available"].astype(bool) & ~group["bound_only"].astype(bool)]
            winner = runnable[runnable["winner"].astype(bool)]
            top = float(winner["gstencils"].iloc[0]) if len(winner) else math.nan
            tied = runnable[runnable["gstencils"].astype(float) >= top * (1 - TIE_TOLERANCE)]["unit"]
            v = verdict(winner["unit"].iloc[0] if len(winner) else None, runnable["unit"], results, measured.band,
                        tied)
            if v.measured is None and not v.text:
                continue
            cells += v.measured is not None
            for i, unit in zip(group.index, group["unit"]):
                r = results.get(unit)
                if r is not None:
                    out.loc[i, ["measured_gstencils", "measured_runs", "measured_why"]] = [
                        np.nan if r.gstencils is None else r.gstencils, r.runs, r.why]
            out.loc[group.index, ["measured_winner", "measured_check", "measured_missing", "measured_text"]] = [
                v.measured or "", v.state, ",".join(v.missing), v.text]
            out.loc[group.index, "measured_ahead"] = np.nan if v.ahead is None else v.ahead
    if not cells:
        raise TcAdvisorError(_nothing_measured(measured, out, chosen))
    return out


def _nothing_measured(measured: Measured, data: pd.DataFrame, chosen: dict) -> str:
    held = sorted({f"{r.stencil} {r.dtype}" for _, runs in chosen.values() for r in runs if r.ok})
    shown = ", ".join(held[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
    names = list(dict.fromkeys(data["stencil"]))
    fuses = sorted({int(t) for t in data["fuse"]})
    span = names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"
    return (f"--measured {str(measured.path)!r}: no run measured a cell of this map ({span} in "
            f"{data['dtype'].iloc[0]}, t = {fuses[0]}–{fuses[-1]}); it holds " + (shown or "no successful run")
            + "; expected runs of the map's stencils and dtype (--shape, --dims, --dtype)")


def has_measurements(data: pd.DataFrame) -> bool:
    return "measured_check" in data.columns and bool((data["measured_winner"].fillna("") != "").any())


# --------------------------------------------------------------------------- hover text


def _cells(rows: pd.DataFrame, grid: dict, column: str, fill) -> np.ndarray:
    """``column`` of ``rows`` (one row per cell) as a radius × fuse array."""
    table = rows.pivot(index="radius", columns="fuse", values=column).reindex(index=grid["radii"],
                                                                              columns=grid["fuses"])
    out = table.to_numpy(dtype=object)
    return np.where(pd.isna(out), fill, out)


def _gst(x) -> str:
    return "–" if x is None or not math.isfinite(float(x)) else f"{float(x):.4g}"


def _per_unit(rows: pd.DataFrame) -> dict:
    """(radius, fuse) → {unit: (GStencils/s or NaN, runs, why)} of the measured columns."""
    out: dict = {}
    for r in rows.itertuples(index=False):
        out.setdefault((r.radius, r.fuse), {})[r.unit] = (float(r.measured_gstencils), int(r.measured_runs),
                                                          r.measured_why)
    return out


def _measured_line(units: dict) -> str:
    parts = []
    for u in UNITS:
        g, n, why = units.get(u, (math.nan, 0, ""))
        if math.isfinite(g):
            parts.append(f"{style.UNIT_SHORT[u]} {_gst(g)}" + (f" ({n} runs)" if n > 1 else ""))
    return "measured GStencils/s — " + ", ".join(parts) if parts else ""


def winner_hover(rows: pd.DataFrame, grid: dict) -> np.ndarray:
    """The fastest-unit panel's hover line per cell: '' where nothing was measured."""
    shape = (len(grid["radii"]), len(grid["fuses"]))
    if "measured_check" not in rows.columns:
        return np.full(shape, "", dtype=object)
    cells = rows.drop_duplicates(["radius", "fuse"])
    units = _per_unit(rows)
    text = {(r.radius, r.fuse): r.measured_text for r in cells.itertuples(index=False)}
    out = np.full(shape, "", dtype=object)
    for i, radius in enumerate(grid["radii"]):
        for j, fuse in enumerate(grid["fuses"]):
            said = text.get((radius, fuse), "")
            if said:
                line = _measured_line(units.get((radius, fuse), {}))
                out[i, j] = f"<br><b>measured</b>: {said}" + (f"<br>{line}" if line else "")
    return out


def speedup_hover(rows: pd.DataFrame, unit: str, grid: dict) -> np.ndarray:
    """A speedup panel's hover line per cell: the measured R where both units were measured."""
    shape = (len(grid["radii"]), len(grid["fuses"]))
    out = np.full(shape, "", dtype=object)
    if "measured_check" not in rows.columns:
        return out
    units = _per_unit(rows)
    for i, radius in enumerate(grid["radii"]):
        for j, fuse in enumerate(grid["fuses"]):
            here = units.get((radius, fuse), {})
            tc, cc = here.get(unit, (math.nan, 0, ""))[0], here.get("cuda_core", (math.nan, 0, ""))[0]
            if math.isfinite(tc) and math.isfinite(cc):
                out[i, j] = (f"<br><b>measured</b>: R = {tc / cc:.3g}× ({UNIT_LABELS[unit]} {_gst(tc)} vs CUDA "
                             f"cores {_gst(cc)} GStencils/s)")
            elif math.isfinite(tc) or math.isfinite(cc):
                have, lack = (unit, "cuda_core") if math.isfinite(tc) else ("cuda_core", unit)
                out[i, j] = (f"<br><b>measured</b>: {UNIT_LABELS[have]} {_gst(tc if have == unit else cc)} "
                             f"GStencils/s; {UNIT_LABELS[lack]} not measured")
    return out


# --------------------------------------------------------------------------- marks


def draw_winner_marks(fig: go.Figure, rows: pd.DataFrame, grid: dict, row_i: int, legend: set) -> None:
    """On the fastest-unit panel of ``row_i``: a small square of the measured winner's colour in the corner
    of each measured cell (hollow where some unit was not measured), a red ring where another unit was
    measured fastest beyond the tie band, a grey diamond where within it.  ``legend`` holds the entries
    already shown (one legend for every GPU row)."""
    if "measured_check" not in rows.columns:
        return
    cells = rows.drop_duplicates(["radius", "fuse"])
    cells = cells[cells["measured_winner"].fillna("") != ""]
    if cells.empty:
        return
    xs = {t: j for j, t in enumerate(grid["fuses"])}
    ys = {r: i for i, r in enumerate(grid["radii"])}
    hover = winner_hover(rows, grid)
    names = grid["names"]
    for unit in UNITS:
        mine = cells[cells["measured_winner"] == unit]
        if mine.empty:
            continue
        partial = [bool(m) for m in mine["measured_missing"].fillna("")]
        color = style.UNIT_COLORS[unit]
        fig.add_trace(go.Scatter(
            x=[xs[t] + 0.3 for t in mine["fuse"]], y=[ys[r] + 0.27 for r in mine["radius"]], mode="markers",
            marker=dict(symbol=["square-open" if p else "square" for p in partial], size=8, color=color,
                        line=dict(color=[color if p else "white" for p in partial],
                                  width=[2 if p else 1 for p in partial])),
            name=f"measured fastest: {UNIT_LABELS[unit]}", legendgroup="measured", showlegend=False,
            customdata=[f"<b>{names[ys[r], xs[t]]}, t = {t}</b>{hover[ys[r], xs[t]]}"
                        for r, t in zip(mine["radius"], mine["fuse"])],
            hovertemplate="%{customdata}<extra>measured</extra>"), row=row_i, col=3)
    if "measured" not in legend:  # one entry for the squares of every unit: their colour is the unit's
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="measured fastest (corner square)",
                                 legendgroup="measured", marker=dict(symbol="square", size=8, color="#999")),
                      row=row_i, col=3)
        legend.add("measured")
    for state, ring, label in (("mismatch", MISMATCH_RING, "measured ≠ predicted"),
                               ("tie", TIE_RING, "measured ≠ predicted, within the tie band")):
        mine = cells[cells["measured_check"] == state]
        if mine.empty:
            continue
        fig.add_trace(go.Scatter(
            x=[xs[t] for t in mine["fuse"]], y=[ys[r] for r in mine["radius"]], mode="markers", marker=ring,
            name=label, legendgroup=f"measured-{state}", showlegend=f"measured-{state}" not in legend,
            customdata=[f"<b>{names[ys[r], xs[t]]}, t = {t}</b>{hover[ys[r], xs[t]]}"
                        for r, t in zip(mine["radius"], mine["fuse"])],
            hovertemplate="%{customdata}<extra>" + state + "</extra>"), row=row_i, col=3)
        legend.add(f"measured-{state}")


def finish_legend(fig: go.Figure, data: pd.DataFrame, legend: set) -> None:
    """Say in the legend that no measured cell disagrees, rather than leave the ring unexplained."""
    if has_measurements(data) and "measured-mismatch" not in legend:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=MISMATCH_RING,
                                 name="measured ≠ predicted: none here"), row=1, col=3)


def caption(data: pd.DataFrame) -> str | None:
    """One line under the map: the source and how many measured cells agree, tie, mismatch."""
    if not has_measurements(data):
        return None
    cells = data.drop_duplicates(["gpu_order", "radius", "fuse"])
    cells = cells[cells["measured_winner"].fillna("") != ""]
    count = cells["measured_check"].value_counts()
    sources = " and ".join(dict.fromkeys(s for s in cells["measured_source"] if s))
    parts = [f"the predicted unit in {count.get('agree', 0)}"]
    if count.get("tie", 0):
        parts.append(f"another within the tie band in {count['tie']} (grey diamonds)")
    parts.append(f"another beyond it in {count.get('mismatch', 0)} (red rings)")
    if count.get("unknown", 0):
        parts.append(f"the predicted unit not measured in {count['unknown']}")
    return (f"<b>Measured</b>, {sources}: {len(cells)} cells; the measured fastest unit (small square in the "
            f"corner; hollow where some unit was not measured) is " + ", ".join(parts) + ".")
