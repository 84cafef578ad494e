"""The validation report: CSV and JSON of every measurement, and one self-contained HTML page.

The HTML page (Plotly's JavaScript embedded once, so it opens offline) rebuilds the paper's
Table 2 (C, M, I analytical against measured) and Table 3 (bottleneck, throughput and the
outcome of each unit comparison, predicted against measured) from the measurements, and draws
a roofline with each measured point beside its prediction, predicted-against-measured
throughput and intensity, and intensity against fusion depth (the paper's Fig. 15).  Everything
comes from a :class:`~tcadvisor.validate.records.Results`, so a report can be rebuilt from a
``results.json`` on any machine.
"""
from __future__ import annotations

import csv
import html
import json
import math
from pathlib import Path

from ..errors import TcAdvisorError
from ..hardware import UNIT_LABELS, UNITS
from .records import (COMPARISON_COLUMNS, MEASUREMENT_COLUMNS, Comparison, Measurement, Results, to_dict,
                      write_atomic)

TERA = 1e12
FILES = ("results.csv", "comparisons.csv", "results.json", "report.html")


# --------------------------------------------------------------------------- CSV and JSON


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(value)
    if isinstance(value, list):
        return ";".join(_cell(v) for v in value)
    return str(value)


def csv_text(rows: list, columns: list[str]) -> str:
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_cell(getattr(r, c)) for c in columns])
    return buf.getvalue()


def write_results(results: Results, out: str | Path) -> list[Path]:
    """results.csv, comparisons.csv, results.json and report.html in ``out``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise TcAdvisorError(f"-o {str(out)!r} is a file; expected a directory for the results")
    # every text first: a failure while building one leaves no directory written in part
    texts = {"results.csv": csv_text(results.measurements, MEASUREMENT_COLUMNS),
             "comparisons.csv": csv_text(results.comparisons, COMPARISON_COLUMNS),
             "results.json": json.dumps(to_dict(results), indent=1) + "\n",
             "report.html": html_report(results)}
    return [write_atomic(out / name, text) for name, text in texts.items()]


def report_from(args) -> int:
    """``validate --report-from RESULTS_JSON``: the CSV files and the report rebuilt from recorded results.

    Options of a run are never ignored in silence: ``--tie-band`` (checked like a run's) re-derives the
    comparisons with that band; the others (``--gpu``, ``--profile``, ...) are refused, an unknown
    ``--gpu`` with the catalogue's own error.
    """
    from .compare import comparisons, summarize
    from .records import load_results

    if getattr(args, "suite", None):
        raise TcAdvisorError("--report-from rebuilds a report from recorded results; it takes no --suite")
    band = getattr(args, "tie_band", None)
    if band is not None and not (math.isfinite(band) and 0 <= band < 1):
        raise TcAdvisorError(f"--tie-band {band}: expected a fraction in [0, 1) such as 0.1")
    if getattr(args, "gpu", None):
        from ..hardware import find_spec

        spec = find_spec(args.gpu)  # an unknown GPU is an error of its own
        raise TcAdvisorError(f"--gpu {args.gpu!r} ({spec.name}): --report-from rebuilds the report from the "
                             "predictions recorded in the results file; --gpu applies when running suites")
    for flag, attr in (("--list", "list"), ("--profile", "profile"), ("--ncu", "ncu"),
                       ("--time-limit", "time_limit")):
        if getattr(args, attr, None) not in (None, False):
            raise TcAdvisorError(f"{flag} applies when running suites; --report-from rebuilds a report from "
                                 "recorded results and takes only -o and --tie-band")
    results = load_results(args.report_from)
    if band is not None and band != results.band:
        results.band = float(band)
        results.comparisons = comparisons(results.measurements, results.band)
        results.summary = summarize(results.measurements, results.comparisons)
    for path in write_results(results, args.output):
        print(f"wrote {path}")
    return 0


# --------------------------------------------------------------------------- formatting


def num(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    x = float(x)
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    if mag >= digits + 2 or mag < -3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{max(digits - 1 - mag, 0)}f}"


def pct(x) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:+.1f}%"


def _esc(x) -> str:
    return html.escape(str(x))


def measured_cell(value, err) -> str:
    if value is None:
        return "–"
    cls = "" if err is None else (" class='bad'" if abs(err) > 0.25 else (" class='ok'" if abs(err) <= 0.1 else ""))
    return f"<span{cls}>{num(value)} ({pct(err)})</span>"


def table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def executed_flops(m: Measurement) -> float | None:
    """Measured executed FLOP/s: profiled C times points per second of one sweep, else the host count."""
    if not m.seconds or not m.sweeps or not m.points:
        return None
    per_sweep = m.seconds / m.sweeps
    c = m.meas_flops_per_point if m.meas_flops_per_point is not None else m.executed_flops_per_point
    return None if c is None else c * m.points / per_sweep


# --------------------------------------------------------------------------- tables


def table2(results: Results) -> str:
    """The paper's Table 2: C, M, I per output point and sweep, analytical against measured."""
    rows = []
    for m in results.measurements:
        if not m.ok:
            continue
        rows.append([_esc(m.suite + " / " + m.case), _esc(m.paper or ""), _esc(UNIT_LABELS.get(m.unit, m.unit)),
                     _esc(m.impl), _esc(m.stencil), str(m.fuse),
                     num(m.beta, 3) if m.beta is not None else "/", _esc(m.alpha_exact or "/"),
                     _esc(m.dtype), _esc((m.precision or "").upper() + (f" {m.mma}" if m.mma else "")),
                     num(m.pred_flops_per_point), num(m.pred_bytes_per_point), num(m.pred_intensity),
                     measured_cell(m.meas_flops_per_point, m.err_flops),
                     measured_cell(m.meas_bytes_per_point, m.err_bytes),
                     measured_cell(m.meas_intensity, m.err_intensity)])
    headers = ["suite / case", "paper", "unit", "impl", "stencil", "t", "β", "α", "dtype", "instruction",
               "C model", "M model", "I model", "C measured (err)", "M measured (err)", "I measured (err)"]
    return table(headers, rows, "t2")


def table3(results: Results) -> str:
    """The paper's Table 3: per configuration and unit, intensity, ridge, bottleneck and throughput;
    then the outcome of each unit comparison, predicted against measured."""
    rows = []
    comps: dict[tuple, list[Comparison]] = {}
    for c in results.comparisons:
        comps.setdefault((c.suite, c.case, c.stencil, c.dtype, c.fuse), []).append(c)
    groups: dict[tuple, list[Measurement]] = {}
    for m in results.measurements:
        if m.status in ("ok", "failed"):
            groups.setdefault((m.suite, m.case, m.stencil, m.dtype, m.fuse), []).append(m)
    for key, ms in groups.items():
        outcome = "<br>".join(
            f"{_short(c.unit_b)} vs {_short(c.unit_a)}: model {_esc(c.pred_outcome)} ({num(c.pred_ratio, 3)}×), "
            f"measured {_esc(c.meas_outcome)} ({num(c.meas_ratio, 3)}×) "
            + ("<span class='ok'>✓</span>" if c.agree else "<span class='bad'>✗</span>" if c.agree is False else "")
            for c in comps.get(key, []))
        for i, m in enumerate(sorted(ms, key=lambda m: UNITS.index(m.unit) if m.unit in UNITS else 9)):
            bound = _esc(m.pred_bound or "–") + " / " + _esc(m.meas_bound or "–")
            if m.pred_bound and m.meas_bound:
                bound += " <span class='ok'>✓</span>" if m.pred_bound == m.meas_bound else " <span class='bad'>✗</span>"
            first = i == 0
            rows.append([
                _esc(f"{key[0]} / {key[1]}") if first else "", _esc(m.paper) if first else "",
                _esc(m.stencil) if first else "", str(m.fuse) if first else "", _esc(m.dtype) if first else "",
                _esc(f"{UNIT_LABELS.get(m.unit, m.unit)} ({m.impl})"),
                num(m.pred_intensity) + " / " + (num(m.meas_intensity) if m.meas_intensity is not None else "–"),
                num(m.pred_ridge, 3), bound,
                num(m.pred_gstencils) + " / " + measured_cell(m.gstencils, m.err_gstencils)
                + ("" if m.ok else " <span class='bad'>wrong output</span>"),
                str(m.pred_scenario or "–"), outcome if first else "",
            ])
    headers = ["suite / case", "paper", "stencil", "t", "dtype", "unit", "I model / measured", "ridge",
               "bottleneck model / measured", "GStencils/s model / measured (err)", "scenario",
               f"outcome (tie band ±{100 * results.band:.0f}%)"]
    return table(headers, rows, "t3")


def _short(unit: str) -> str:
    return {"cuda_core": "CC", "tensor_core": "TC", "sparse_tensor_core": "SpTC"}.get(unit, unit)


def summary_html(results: Results) -> str:
    s = results.summary

    def stat(name: str, key: str) -> list[str]:
        e = s.get(key, {})
        return [name, str(e.get("n", 0)), pct(e.get("median_abs")).lstrip("+"), pct(e.get("median")),
                pct(e.get("worst"))]

    rows = [stat("throughput (GStencils/s)", "throughput"), stat("C (FLOPs per point)", "flops"),
            stat("M (DRAM bytes per point)", "bytes"), stat("I (intensity)", "intensity")]
    counts = (f"{s.get('runs', 0)} runs: {s.get('correct', 0)} with correct output, {s.get('failed', 0)} wrong, "
              f"{s.get('errors', 0)} errors; {s.get('skipped', 0)} configurations skipped (the bundled kernel "
              f"refused them, or the time limit); {s.get('profiled', 0)} profiled with Nsight Compute.")
    agree = (f"Bottleneck: the measured one matches the model's in {s.get('bottleneck_agree', 0)} of "
             f"{s.get('bottleneck_n', 0)} runs. Outcome of unit comparisons at the same stencil and depth "
             f"(wins / loses / ties within ±{100 * results.band:.0f}%): the measured one matches the predicted one "
             f"in {s.get('outcomes_agree', 0)} of {s.get('outcomes_n', 0)}.")
    return (f"<p>{_esc(counts)}</p><p>{_esc(agree)}</p>"
            + table(["quantity", "n", "median |error|", "median error", "worst error"], rows, "sum")
            + "<p class='note'>error = measured / model − 1. The model's throughput is a roofline bound, so "
              "measured throughput is expected below it (negative errors).</p>")


def skipped_html(results: Results) -> str:
    rows = [[_esc(m.suite), _esc(m.case), _esc(m.stencil), _esc(m.dtype), str(m.fuse), _esc(m.unit),
             _esc(m.status), _esc(m.reason)]
            for m in results.measurements if m.status not in ("ok",)]
    if not rows:
        return "<p>Every configuration ran and produced correct output.</p>"
    return table(["suite", "case", "stencil", "dtype", "t", "unit", "status", "why"], rows, "skip")


# --------------------------------------------------------------------------- figures

#: What the report and ``validate`` say where plotly cannot be imported: the measurements are kept (a GPU machine's
#: Python may lack a package it cannot fetch), and the figures can be drawn from them later.
NO_PLOTLY = ("No figures: plotly is not installed here (pip install plotly); the tables and the CSV and JSON files "
             "are complete, and `tcadvisor validate --report-from results.json` draws the figures where it is.")


def plotly_available() -> bool:
    """Whether plotly can be imported (looked up, not imported: the figures import it when they are drawn)."""
    import importlib.util

    try:
        return importlib.util.find_spec("plotly") is not None
    except (ImportError, ValueError):
        return False


def _figures(results: Results) -> list[tuple[str, str, object]]:
    """(anchor, heading, figure) of every figure the measurements allow."""
    import plotly.graph_objects as go

    from ..plots import style
    from ..plots.roofline import intensity_grid, roof

    ok = [m for m in results.measurements if m.ok and m.pred_gstencils]
    figs = []
    if not ok:
        return figs
    base = style.base_layout(width=1100, height=620, margin=dict(l=80, r=40, t=30, b=80))

    # Roofline: the spec's roofs of every (unit, precision) measured, each run's prediction (hollow)
    # and measurement (filled), joined.
    bw = results.spec.get("bandwidth_gbs", 0) * 1e9
    peaks = results.spec.get("peak_tflops", {})
    ceilings = sorted({(m.unit, m.precision) for m in ok if peaks.get(m.unit, {}).get(m.precision)},
                      key=lambda up: (UNITS.index(up[0]) if up[0] in UNITS else 9, up[1]))
    points = [m.pred_intensity for m in ok] + [m.meas_intensity for m in ok if m.meas_intensity]
    ridges = [peaks[u][p] * TERA / bw for u, p in ceilings] if bw else []
    fig = go.Figure()
    if bw:
        grid = intensity_grid([p for p in points if p], ridges)
        fig.add_trace(go.Scatter(x=grid, y=roof(bw, math.inf, grid) / TERA, mode="lines", name=f"B·I ({bw / 1e9:.4g} GB/s)",
                                 line=dict(color="#999", dash="dot"), hoverinfo="skip"))
        for u, p in ceilings:
            peak = peaks[u][p] * TERA
            fig.add_trace(go.Scatter(x=grid, y=roof(bw, peak, grid) / TERA, mode="lines",
                                     name=f"{UNIT_LABELS[u]} {p.upper()} roof ({peak / TERA:.4g} TFLOP/s)",
                                     line=dict(color=style.UNIT_COLORS[u], width=2.5), hoverinfo="skip"))
    for unit in UNITS:
        ms = [m for m in ok if m.unit == unit]
        if not ms:
            continue
        color = style.UNIT_COLORS[unit]
        xs, ys = [], []
        for m in ms:
            meas_i = m.meas_intensity if m.meas_intensity is not None else m.pred_intensity
            flops = executed_flops(m)
            if flops is None or m.pred_executed_tflops is None:
                continue
            xs += [m.pred_intensity, meas_i, None]
            ys += [m.pred_executed_tflops, flops / TERA, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=1), showlegend=False,
                                 hoverinfo="skip"))
        fig.add_trace(go.Scatter(
            x=[m.pred_intensity for m in ms], y=[m.pred_executed_tflops for m in ms], mode="markers",
            marker=dict(symbol="circle-open", size=10, color=color, line=dict(width=2)),
            name=f"{UNIT_LABELS[unit]}: model", text=[_hover(m) for m in ms], hovertemplate="%{text}<extra>model</extra>"))
        fig.add_trace(go.Scatter(
            x=[m.meas_intensity if m.meas_intensity is not None else m.pred_intensity for m in ms],
            y=[(executed_flops(m) or float("nan")) / TERA for m in ms], mode="markers",
            marker=dict(symbol=["circle" if m.meas_intensity is not None else "x" for m in ms], size=9, color=color),
            name=f"{UNIT_LABELS[unit]}: measured", text=[_hover(m) for m in ms],
            hovertemplate="%{text}<extra>measured</extra>"))
    fig.update_layout(**base, xaxis=dict(type="log", title=style.AXIS_INTENSITY),
                      yaxis=dict(type="log", title="executed [TFLOP/s]"))
    figs.append(("roofline", "Roofline: each run's prediction (hollow) and measurement (filled; × where not "
                 "profiled, placed at the model's intensity), joined by a line", fig))

    # Predicted against measured throughput and intensity.
    for key, title, xf, yf, axis in (
            ("throughput", "Throughput: measured against the model's bound", lambda m: m.pred_gstencils,
             lambda m: m.gstencils, "GStencils/s"),
            ("intensity", "Intensity I = C/M: Nsight Compute against the model", lambda m: m.pred_intensity,
             lambda m: m.meas_intensity, "FLOP/byte")):
        pts = [m for m in ok if xf(m) and yf(m)]
        if not pts:
            continue
        fig = go.Figure()
        lo = min(min(xf(m), yf(m)) for m in pts) / 1.5
        hi = max(max(xf(m), yf(m)) for m in pts) * 1.5
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="measured = model",
                                 line=dict(color="#444", dash="dash"), hoverinfo="skip"))
        b = results.band
        fig.add_trace(go.Scatter(x=[lo, hi, None, lo, hi], y=[lo * (1 + b), hi * (1 + b), None, lo * (1 - b), hi * (1 - b)],
                                 mode="lines", name=f"±{100 * b:.0f}%", line=dict(color="#bbb", dash="dot"),
                                 hoverinfo="skip"))
        for unit in UNITS:
            us = [m for m in pts if m.unit == unit]
            if us:
                fig.add_trace(go.Scatter(x=[xf(m) for m in us], y=[yf(m) for m in us], mode="markers",
                                         marker=dict(size=9, color=style.UNIT_COLORS[unit]), name=UNIT_LABELS[unit],
                                         text=[_hover(m) for m in us], hovertemplate="%{text}<extra></extra>"))
        fig.update_layout(**style.base_layout(width=800, height=640, margin=dict(l=80, r=40, t=30, b=80)),
                          xaxis=dict(type="log", title=f"model [{axis}]"), yaxis=dict(type="log", title=f"measured [{axis}]"))
        figs.append((key, title, fig))

    # Intensity and throughput against the fusion depth (the paper's Fig. 15), for series of 3+ depths.
    series: dict[tuple, list[Measurement]] = {}
    for m in ok:
        series.setdefault((m.suite, m.case, m.unit), []).append(m)
    series = {k: sorted(v, key=lambda m: m.fuse) for k, v in series.items() if len({m.fuse for m in v}) >= 3}
    if series:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=1, cols=2, subplot_titles=("intensity I against t", "GStencils/s against t"))
        cases = list(dict.fromkeys((suite, case) for suite, case, _ in series))
        symbols = ("circle", "square", "diamond", "triangle-up", "cross", "star", "x", "pentagon")
        for (suite, case, unit), ms in series.items():
            color = style.UNIT_COLORS.get(unit, "#000")
            symbol = symbols[cases.index((suite, case)) % len(symbols)]
            name = f"{case}, {_short(unit)}"
            t = [m.fuse for m in ms]
            model = dict(mode="lines+markers", line=dict(color=color, dash="dash", width=1.5),
                         marker=dict(symbol=symbol + "-open", size=8, color=color), legendgroup=name)
            measured = dict(mode="lines+markers", line=dict(color=color, width=2),
                            marker=dict(symbol=symbol, size=8, color=color), legendgroup=name)
            fig.add_trace(go.Scatter(x=t, y=[m.pred_intensity for m in ms], name=f"{name}: model", **model), row=1, col=1)
            fig.add_trace(go.Scatter(x=t, y=[m.meas_intensity for m in ms], name=f"{name}: measured", **measured),
                          row=1, col=1)
            fig.add_trace(go.Scatter(x=t, y=[m.pred_gstencils for m in ms], showlegend=False, **model), row=1, col=2)
            fig.add_trace(go.Scatter(x=t, y=[m.gstencils for m in ms], showlegend=False, **measured), row=1, col=2)
        fig.update_layout(**style.base_layout(width=1250, height=600))
        fig.update_xaxes(title=style.AXIS_FUSE)
        fig.update_yaxes(title="I [FLOP/byte]", type="log", row=1, col=1)
        fig.update_yaxes(title="GStencils/s", type="log", row=1, col=2)
        figs.append(("depth", "Fusion depth sweeps (the paper's Fig. 15): the model dashed, measured solid", fig))
    return figs


def _hover(m: Measurement) -> str:
    return (f"{_esc(m.case)}<br>{_esc(m.stencil)} {_esc(m.dtype)} t={m.fuse} {_esc(UNIT_LABELS.get(m.unit, m.unit))} "
            f"{_esc(m.mma or '')}<br>GStencils/s {num(m.gstencils)} (model {num(m.pred_gstencils)})<br>"
            f"I {num(m.meas_intensity)} (model {num(m.pred_intensity)})")


# --------------------------------------------------------------------------- the page

CSS = """
body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12.5px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.ok{color:#1b7837}.bad{color:#b2182b;font-weight:bold}.note{color:#555;font-size:12.5px}
"""


def html_report(results: Results) -> str:
    """One self-contained page (Plotly embedded once; opens offline)."""
    spec = results.spec
    head = (f"<h1>tcadvisor validation: {_esc(results.device or 'unknown GPU')}, {_esc(results.date)}</h1>"
            f"<p>Suites: {_esc(', '.join(results.suites))}. Predictions on the spec <b>{_esc(spec.get('name', ''))}</b> "
            f"(B = {num(spec.get('bandwidth_gbs'))} GB/s; {_esc(spec.get('path', ''))}). {_esc(results.tool)}.</p>")
    prof = results.profile
    if prof:
        metrics = ", ".join(f"{k}: {v}" for k, v in prof.get("metrics", {}).items())
        head += (f"<p class='note'>Nsight Compute {_esc(prof.get('version', ''))}, --clock-control none, one launch "
                 f"per configuration. Metrics: {_esc(metrics)}.</p>")
        for p in prof.get("problems", []):
            head += f"<p class='bad'>Profile: {_esc(p)}</p>"
    else:
        head += "<p class='note'>Not profiled (run with --profile for measured C, M and I).</p>"
    parts = [head, "<h2>Summary</h2>", summary_html(results),
             "<h2>Table 2: C, M and I per output point and sweep, model against Nsight Compute</h2>",
             "<p class='note'>C: FLOPs the unit executes (Tensor Cores: tensor instructions × 2·m·n·k, padding "
             "included); M: DRAM bytes read + written; both per output point and sweep of t steps. "
             "Green: within 10%, red: off by more than 25%.</p>", table2(results),
             "<h2>Table 3: bottleneck, throughput and outcome, model against measurement</h2>",
             "<p class='note'>Measured bottleneck: the roof the run came closer to (fraction of bandwidth moved "
             "against fraction of the unit's peak executed).</p>", table3(results)]
    first = True
    drawable = plotly_available()
    if not drawable:
        parts.append(f"<p class='bad'>{_esc(NO_PLOTLY)}</p>")
    for key, heading, fig in (_figures(results) if drawable else ()):
        parts.append(f"<h2 id='{key}'>{_esc(heading)}</h2>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs=True if first else False,
                                 config={"displaylogo": False}))
        first = False
    parts += ["<h2>Skipped, failed and wrong runs</h2>", skipped_html(results)]
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>tcadvisor validation</title>"
            f"<style>{CSS}</style></head><body>" + "\n".join(parts) + "</body></html>\n")
