"""Fit the refined model's constants on recorded bundled-kernel runs, and judge it on runs it never saw.

The refined model derives every term from the kernels' launch plans except a few
constants no datasheet gives (latencies, an achievable bandwidth fraction;
:data:`tcadvisor.model.FITTED`).  This module fits them by robust least squares on
log(predicted / measured GStencils/s) and measures the model where it was *not*
fitted:

* **leave-one-shape-out** (the headline): for each shape (dimensions, pattern,
  radius; :func:`tcadvisor.validate.corpus.shape_of`), fit on every other shape's
  runs (all units, dtypes and depths) and predict that shape;
* **leave-one-GPU-out**: fit on one GPU's corpus, predict the other's.

From the held-out residuals come the prediction intervals per unit and precision
(:func:`intervals`) that ``advise`` prints, and the three targets: throughput
error, the winning unit, the best depth.  Every prediction goes through the
model's own code: the plans, :data:`tcadvisor.model.TERM_CHAINS` and
:func:`tcadvisor.model.evaluate`.

A constant the data cannot identify is not fitted: :func:`identifiability` reports
each constant's profile (how much the held-out loss changes when it is pinned at
a tenth or ten times its fitted value), and :data:`PINNED` holds the ones fixed
for that reason, with the reason.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from .. import model, refinement
from ..hardware import GpuSpec
from ..impls import find_impl
from ..mma import MmaShape
from .corpus import PROFILES, load_corpus, stencil_from_row

#: Start values and bounds of the fit (units: cycles, instructions, cycles, cycles, cycles, fraction, seconds).
START = {"lambda_c": 1.0, "o_c": 8.0, "L_it": 1000.0, "lambda_0": 10.0, "lambda_1": 2.0, "eta_B0": 0.9,
         "L_mem": 5e-7}
BOUNDS = {"lambda_c": (0, 100), "o_c": (0, 100), "L_it": (0, 2e4), "lambda_0": (0, 500), "lambda_1": (0, 50),
          "eta_B0": (0.3, 1.2), "L_mem": (0, 5e-6)}
UNITS_OF = {"lambda_c": "cycles per instruction and 32-bit word", "o_c": "instructions per point update",
            "L_it": "cycles per iteration", "lambda_0": "cycles per instruction issued per MMA", "lambda_1": "cycles per MMA and unit of k",
            "eta_B0": "fraction of the copy bandwidth", "L_mem": "seconds"}
#: Robust loss: residuals beyond about 10 % weigh linearly, so one odd run cannot pull every constant.
LOSS, F_SCALE = "soft_l1", 0.1
#: Constants held fixed rather than fitted, with why (filled where the data cannot identify one).  o_c was
#: pinned at 0 from 2026-11-25 until the corpora of the 3D Tensor Core kernels of 2026-11-26, on which removing it
#: raises the robust loss by 3.7 % (H100) and 4.1 % (H200), above the 1 % that identifies a constant.
PINNED: dict[str, tuple[float, str]] = {}
#: Constants ``calibrate --fit`` holds at the bundled value on a user's GPU, with why.
CALIBRATE_PINNED_BUNDLED = {
    "o_c": "identified only on the project's corpora of 988 runs per GPU (validation/results/refined-fit-2026-11-27/"
           "crossval.md, identifiability); a calibration corpus is a few hundred runs",
}
#: A constant whose removal (value 0) raises the robust loss by less than this share is not identified by the data.
IDENTIFIABLE = 0.01
#: A measured leader ahead by more than this is a "clear" winner; the predicted best depth is right when it
#: measured within BEST_DEPTH_BAND of the measured best.
TIE_BAND = 0.10
BEST_DEPTH_BAND = 0.05
#: Coverage of the intervals advise prints.
INTERVAL_LEVEL = 0.80


@dataclass
class Run:
    """One recorded run with the model's inputs derived from its own launch configuration."""

    row: dict
    gpu: str
    shape: str
    stencil: object
    chain: str  # cuda_core | tensor_core (dense and sparse share the chain)
    inputs: dict
    alpha: float
    beta: float

    @property
    def measured(self) -> float:
        return float(self.row["gstencils"])

    @property
    def unit(self) -> str:
        return self.row["unit"]

    @property
    def precision(self) -> str:
        return self.row["precision"]

    @property
    def fuse(self) -> int:
        return int(self.row["fuse"])

    @property
    def config(self) -> tuple:
        """What the winner comparison groups by: one stencil, dtype, depth and grid on several units."""
        r = self.row
        return (self.gpu, r["stencil"], r["offsets"], r["dtype"], self.fuse, r["grid"])

    @property
    def curve(self) -> tuple:
        """What the best-depth comparison groups by: one stencil, dtype, unit and grid over depths."""
        r = self.row
        return (self.gpu, r["stencil"], r["offsets"], r["dtype"], r["unit"], r["grid"])


def grid3(text: str, dims: int) -> tuple[int, int, int]:
    extents = tuple(int(v) for v in str(text).replace("×", "x").split("x"))
    return (1,) * (3 - dims) + extents


def runs_from_rows(rows: list[dict], spec: GpuSpec, gpu: str) -> list[Run]:
    """Runs of the rows that ran correctly, each with the inputs of the plan its kernel description records."""
    out = []
    for row in rows:
        if row.get("status") != "ok" or not (row.get("gstencils") or 0) > 0:
            continue
        stencil = stencil_from_row(row["stencil"], row.get("offsets", ""))
        impl = find_impl(PROFILES[row["unit"]])
        mma = MmaShape.parse(row["mma"]) if row.get("mma") else None
        ctx = refinement.Context(impl, impl.tiling, row["unit"], stencil, int(row["fuse"]), row["dtype"],
                                 row["precision"], mma, spec, grid3(row["grid"], stencil.dims))
        inputs, *_ = refinement.plan_inputs(ctx, plan=refinement.recorded_plan(ctx, row.get("kernel", "")))
        alpha = float(Fraction(row["alpha"])) if row.get("alpha") else 1.0
        chain = "cuda_core" if row["unit"] == "cuda_core" else "tensor_core"
        beta = float(stencil.beta(int(row["fuse"]))) if chain == "tensor_core" else 1.0
        from .corpus import shape_of

        out.append(Run(row, gpu, shape_of(stencil), stencil, chain, inputs, alpha, beta))
    return out


def load_runs(folder: Path, spec: GpuSpec, gpu: str) -> list[Run]:
    _, rows = load_corpus(folder)
    return runs_from_rows(rows, spec, gpu)


# --------------------------------------------------------------------------- the model, vectorised over runs


def predict(runs: list[Run], fitted: dict) -> np.ndarray:
    """Refined GStencils/s of every run at the constants ``fitted`` (symbol -> value)."""
    out = np.empty(len(runs))
    for chain in ("cuda_core", "tensor_core"):
        idx = [i for i, r in enumerate(runs) if r.chain == chain]
        if not idx:
            continue
        names = runs[idx[0]].inputs.keys()
        values = {**{s: np.array([runs[i].inputs[s] for i in idx], dtype=float) for s in names}, **fitted}
        terms = {}
        for term in refinement.unit_terms(runs[idx[0]].unit):
            if term.hook in ("overlap", "depth_limit"):
                continue  # ω = 1 and the kernel's own limit (every recorded run ran)
            fn, args = model.term_function(chain, term.name)
            terms[term.name] = fn(*(values[a] for a in args))
        peak = values[model.P_cc] if chain == "cuda_core" else values[model.P_tc]
        got = model.evaluate(K=np.array([runs[i].stencil.K for i in idx], dtype=float),
                             t=np.array([runs[i].fuse for i in idx], dtype=float),
                             beta=np.array([runs[i].beta for i in idx]), alpha=np.array([runs[i].alpha for i in idx]),
                             S=values[model.S], B=values[model.B], P_cc=peak, P_tc=peak, variant="refined", **terms)
        out[idx] = got["gstencils_cc" if chain == "cuda_core" else "gstencils_tc"]
    return out


def fit(runs: list[Run], pinned: dict[str, tuple[float, str]] | None = None) -> dict:
    """The constants that minimise the robust loss on ``runs`` (those in ``pinned`` held at their value)."""
    from scipy.optimize import least_squares

    pinned = PINNED if pinned is None else pinned
    free = [s for s in model.FITTED if s.name not in pinned]
    fixed = {s: pinned[s.name][0] for s in model.FITTED if s.name in pinned}
    measured = np.array([r.measured for r in runs])
    scale = np.array([START[s.name] for s in free])

    def residuals(x):
        return np.log(predict(runs, {**fixed, **dict(zip(free, x * scale))}) / measured)

    lo = np.array([BOUNDS[s.name][0] for s in free]) / scale
    hi = np.array([BOUNDS[s.name][1] for s in free]) / scale
    res = least_squares(residuals, np.ones(len(free)), bounds=(lo, hi), loss=LOSS, f_scale=F_SCALE)
    # five significant digits: what the YAML keeps, so every number reported is the shipped model's
    return {**fixed, **{s: float(f"{v:.5g}") for s, v in zip(free, res.x * scale)}}


def leave_one_out(runs: list[Run], group, pinned=None) -> np.ndarray:
    """Held-out predictions: for each value of ``group(run)``, fit on the other runs and predict these."""
    keys = sorted({group(r) for r in runs})
    out = np.empty(len(runs))
    for key in keys:
        test = [i for i, r in enumerate(runs) if group(r) == key]
        train = [r for r in runs if group(r) != key]
        fitted = fit(train, pinned)
        out[test] = predict([runs[i] for i in test], fitted)
    return out


# --------------------------------------------------------------------------- how good


def errors(pred: np.ndarray, runs: list[Run]) -> np.ndarray:
    """predicted / measured − 1 (positive: the model promised more than the kernel delivered)."""
    return np.array([p / r.measured - 1 for p, r in zip(pred, runs)])


def throughput_stats(pred: np.ndarray, runs: list[Run]) -> dict:
    e = np.abs(errors(pred, runs))
    if not len(e):
        return {"runs": 0}
    i = int(e.argmax())
    r = runs[i]
    return {"runs": len(runs), "median": float(np.median(e)), "p90": float(np.quantile(e, 0.9)),
            "worst": float(e.max()), "within_15": float(np.mean(e <= 0.15)),
            "worst_run": f"{r.row['stencil']} {r.row['dtype']} {r.unit} t={r.fuse} {r.row['grid']}: "
                         f"predicted {pred[i]:.0f}, measured {r.measured:.0f}"}


def _groups(runs: list[Run], key) -> list[tuple[tuple, list[int]]]:
    """Indices of ``runs`` grouped by ``key(run)``, groups in a stable order."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault(key(r), []).append(i)
    return sorted(groups.items(), key=lambda kv: str(kv[0]))


def _clear_cases(runs: list[Run]):
    """(configuration, its runs' indices, the measured leader's index) of every configuration run on several
    units whose measured leader is ahead of the next by more than :data:`TIE_BAND`."""
    for key, idx in _groups(runs, lambda r: r.config):
        if len({runs[i].unit for i in idx}) < 2:
            continue
        by_meas = sorted(idx, key=lambda i: -runs[i].measured)
        if runs[by_meas[1]].measured >= (1 - TIE_BAND) * runs[by_meas[0]].measured:
            continue
        yield key, idx, by_meas[0]


def _miss(key: tuple, runs: list[Run], leader: int, win: int) -> str:
    return (f"{key[1]} {key[3]} t={key[4]} {key[5]}: measured {runs[leader].unit} {runs[leader].measured:.0f}, "
            f"predicted {runs[win].unit} (measured {runs[win].measured:.0f})")


def winners(pred: np.ndarray, runs: list[Run]) -> tuple[int, int, list[str]]:
    """Configurations run on several units whose measured leader is ahead by more than :data:`TIE_BAND`:
    how many the model names the leader of."""
    ok = n = 0
    misses = []
    for key, idx, leader in _clear_cases(runs):
        n += 1
        win = max(idx, key=lambda i: pred[i])
        if runs[win].unit == runs[leader].unit:
            ok += 1
        else:
            misses.append(_miss(key, runs, leader, win))
    return ok, n, misses


def best_depths(pred: np.ndarray, runs: list[Run]) -> tuple[int, int, list[str]]:
    """Curves of at least two depths whose predicted best depth measured within :data:`BEST_DEPTH_BAND` of the
    measured best."""
    ok = n = 0
    misses = []
    for key, idx in _groups(runs, lambda r: r.curve):
        if len(idx) < 2:
            continue
        n += 1
        meas = max(idx, key=lambda i: runs[i].measured)
        guess = max(idx, key=lambda i: pred[i])
        good = runs[guess].measured >= (1 - BEST_DEPTH_BAND) * runs[meas].measured
        ok += good
        if not good:
            misses.append(f"{key[1]} {key[3]} {key[4]} {key[5]}: predicted t={runs[guess].fuse}, measured best "
                          f"t={runs[meas].fuse} (the predicted depth measured "
                          f"{runs[guess].measured / runs[meas].measured:.0%} of the best)")
    return ok, n, misses


def intervals(pred: np.ndarray, runs: list[Run], level: float = INTERVAL_LEVEL) -> dict[str, dict]:
    """Per ``unit/precision``: quantiles of measured/predicted over held-out runs, so that ``level`` of them
    fall inside [low·p, high·p]."""
    out = {}
    keys = sorted({(r.unit, r.precision) for r in runs})
    q = (1 - level) / 2
    for unit, precision in keys:
        ratio = np.array([r.measured / p for p, r in zip(pred, runs) if (r.unit, r.precision) == (unit, precision)])
        if len(ratio) < 10:
            continue
        out[f"{unit}/{precision}"] = {"low": round(float(np.quantile(ratio, q)), 4),
                                      "high": round(float(np.quantile(ratio, 1 - q)), 4),
                                      "level": level, "n": int(len(ratio))}
    return out


def coverage(pred: np.ndarray, runs: list[Run], table: dict[str, dict]) -> float:
    """Share of ``runs`` whose measurement lies inside the interval ``table`` gives its prediction."""
    inside = []
    for p, r in zip(pred, runs):
        entry = table.get(f"{r.unit}/{r.precision}")
        if entry is not None:
            inside.append(entry["low"] * p <= r.measured <= entry["high"] * p)
    return float(np.mean(inside)) if inside else math.nan


def report(pred: np.ndarray, runs: list[Run]) -> dict:
    """Throughput error overall and per unit/precision, winners and best depths."""
    by = {}
    for key in sorted({(r.unit, r.precision) for r in runs}):
        idx = [i for i, r in enumerate(runs) if (r.unit, r.precision) == key]
        by["/".join(key)] = throughput_stats(pred[idx], [runs[i] for i in idx])
    w, bd = winners(pred, runs), best_depths(pred, runs)
    return {"all": throughput_stats(pred, runs), "by_unit": by, "winners": [w[0], w[1]], "winner_misses": w[2],
            "best_depth": [bd[0], bd[1]], "best_depth_misses": bd[2]}


def robust_loss(pred: np.ndarray, runs: list[Run]) -> float:
    """The fit's loss per run (soft-L1 of the log ratio), to compare pinned and free fits."""
    r = np.log(pred / np.array([x.measured for x in runs]))
    return float(np.mean(2 * F_SCALE**2 * (np.sqrt(1 + (r / F_SCALE) ** 2) - 1)))


def identifiability(runs: list[Run]) -> list[dict]:
    """Per constant: the loss with every constant free, and with this one removed (0), at a tenth and at ten times
    its value (the others refitted each time).  A constant whose removal costs under :data:`IDENTIFIABLE` of the
    loss is one the data cannot identify."""
    free = fit(runs, pinned={})
    base = robust_loss(predict(runs, free), runs)
    out = []
    for s in model.FITTED:
        row = {"constant": s.name, "fitted": free[s], "loss": base}
        for label, factor in (("removed", 0.0), ("tenth", 0.1), ("tenfold", 10.0)):
            value = free[s] * factor
            lo, hi = BOUNDS[s.name]
            if not lo <= value <= hi:
                row[label] = None
                continue
            refit = fit(runs, pinned={s.name: (value, "")})
            row[label] = robust_loss(predict(runs, refit), runs) / base - 1
        out.append(row)
    return out


def flagged_winners(pred: np.ndarray, runs: list[Run], table: dict[str, dict]) -> dict:
    """How the advisor's verdict fares on clear cases once it states its intervals (``table``, as
    :func:`intervals` gives them): right (``right_but_flagged`` of them said too close to call all the same),
    wrong but flagged too close to call (the predicted winner's interval overlaps the predicted runner-up's),
    or wrong without a flag (confidently wrong)."""
    out = {"right": 0, "right_but_flagged": 0, "flagged": 0, "confidently_wrong": 0, "confidently_wrong_cases": []}
    for key, idx, leader in _clear_cases(runs):
        by_pred = sorted(idx, key=lambda i: -pred[i])
        win, second = by_pred[0], by_pred[1]

        def span(i):
            entry = table.get(f"{runs[i].unit}/{runs[i].precision}")
            return (entry["low"] * pred[i], entry["high"] * pred[i]) if entry else (pred[i], pred[i])

        overlap = span(win)[0] <= span(second)[1]
        if runs[win].unit == runs[leader].unit:
            out["right"] += 1
            out["right_but_flagged"] += int(overlap)
        elif overlap:
            out["flagged"] += 1
        else:
            out["confidently_wrong"] += 1
            out["confidently_wrong_cases"].append(_miss(key, runs, leader, win))
    return out
