"""``tcadvisor advise ... --run``: run the recommendation and the best other unit on this GPU.

The advice is a prediction; this runs it.  The recommended configuration (the unit and depth the
verdict names, or the winner at ``--fuse``) and the best configuration of another unit are run
with the bundled kernels (checked, then timed like ``tcadvisor validate``), and each measurement
is printed beside two predictions: the model for the bundled kernel that ran (its own α,
counted from the operands it uploads), and the advice's (the implementation profile the advice
compared, e.g. ConvStencil's α).  The two differ when the advice's implementation is not the
bundled one; the measured winner is set against the predicted one either way.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..hardware import UNIT_LABELS
from .compare import derive, outcome
from .records import Measurement
from .suites import DEFAULT_TIE_BAND, Config

DEFAULT_REPEATS = 5
DEFAULT_SWEEPS = 4


@dataclass
class AdviceRun:
    role: str  # "recommended" or "alternative"
    option: object  # the advice's Option
    measurement: Measurement


def choices(advice) -> list[tuple[str, object]]:
    """(role, Option): the recommendation, and the best available option of another unit."""
    rec = advice.at_fuse if advice.fuse is not None and advice.at_fuse is not None else advice.verdict
    if rec is None:
        return []
    pool = advice.options if advice.fuse is not None else list(advice.best.values())
    others = [o for o in pool if o.available and o.unit != rec.unit]
    out = [("recommended", rec)]
    if others:
        out.append(("alternative", max(others, key=lambda o: o.gstencils)))
    return out


def run_advice(advice, gpu: str | None = None, grid: str | None = None, repeats: int = DEFAULT_REPEATS,
               sweeps: int = DEFAULT_SWEEPS, seed: int = 1) -> list[AdviceRun]:
    """Check and time each of :func:`choices` with the bundled kernels (needs CuPy and a GPU)."""
    from ..gpu.backend import cupy
    from .runner import _free_memory, l2_bytes, run_config

    cupy()
    l2 = l2_bytes()
    runs = []
    for role, opt in choices(advice):
        cfg = Config(role, advice.stencil, advice.dtype, opt.fuse, opt.unit, grid or "auto", repeats, sweeps, seed,
                     stencil_text=advice.stencil.name)
        m = run_config("advise", cfg, advice.gpu, gpu, l2)
        derive(m)
        _free_memory()
        runs.append(AdviceRun(role, opt, m))
    return runs


def verdict_line(runs: list[AdviceRun], band: float = DEFAULT_TIE_BAND) -> str:
    ok = [r for r in runs if r.measurement.ok]
    if len(ok) < 2:
        return "Only one configuration ran here, so the advice's ranking is not tested."
    rec, alt = ok[0], ok[1]
    measured = outcome(rec.measurement.gstencils / alt.measurement.gstencils, band)
    predicted = outcome(rec.option.gstencils / alt.option.gstencils, band)
    names = f"{UNIT_LABELS[rec.option.unit]} (t = {rec.option.fuse}) against {UNIT_LABELS[alt.option.unit]} " \
            f"(t = {alt.option.fuse})"
    agree = "as the advice predicts" if measured == predicted else f"the advice predicted it {predicted}"
    return (f"Measured: {names}: the recommendation {measured} ({rec.measurement.gstencils:.4g} vs "
            f"{alt.measurement.gstencils:.4g} GStencils/s, ties within ±{100 * band:.0f}%), {agree}.")


def format_runs(runs: list[AdviceRun]) -> str:
    from ..report import text_table

    if not runs:
        return "Nothing to run: no unit can run this configuration."
    device = next((r.measurement.device for r in runs if r.measurement.device), "this GPU")
    rows = []
    for r in runs:
        m, o = r.measurement, r.option
        head = [r.role, UNIT_LABELS[o.unit], str(o.fuse)]
        if m.status not in ("ok", "failed"):
            rows.append(head + [f"{m.status}: {m.reason}"])
            continue
        frac = f" ({100 * m.gstencils / m.pred_gstencils:.0f}%)" if m.pred_gstencils else ""
        rows.append(head + [
            f"{m.impl}" + (f" {m.mma}" if m.mma else ""), f"{m.gstencils:.4g}",
            f"{m.pred_gstencils:.4g}{frac}" if m.pred_gstencils else "–",
            f"{o.gstencils:.4g} ({o.impl.name})",
            "yes" if m.correct else ("not checked" if m.correct is None else "NO"),
        ])
    grid = next((r.measurement.grid for r in runs if r.measurement.grid), "")
    lines = [f"Run on {device} with the bundled kernels (grid {grid}, median of {runs[0].measurement.repeats} "
             "repeats, output checked against a float64 reference first):", ""]
    lines += text_table(["role", "unit", "t", "kernel", "GStencils/s", "model, bundled kernel", "model, advice",
                         "correct"], rows, "llrlrrrl")
    lines += ["", verdict_line(runs)]
    return "\n".join(lines)


def runs_json(runs: list[AdviceRun]) -> list[dict]:
    out = []
    for r in runs:
        d = {"role": r.role, "advice_impl": r.option.impl.name if r.option.impl else None,
             "advice_gstencils": r.option.gstencils}
        d.update(asdict(r.measurement))
        out.append(d)
    return out


def advise_and_run(args, make_advice) -> int:
    """``advise --run``: the advice (``make_advice(args)``), then the measurements, or one JSON object
    with both.  Without CuPy or a GPU: one line, before anything else is said."""
    import json

    from ..gpu.backend import cupy
    from ..report import advice_dict, format_advice

    cupy()
    advice = make_advice(args)
    runs = run_advice(advice, gpu=getattr(args, "gpu", None))
    if getattr(args, "json", False):
        out = advice_dict(advice)
        out["measurements"] = runs_json(runs)
        print(json.dumps(out, indent=2, default=str))
    else:
        print(format_advice(advice))
        print()
        print(format_runs(runs))
    return 1 if any(r.measurement.status == "failed" for r in runs) else 0
