"""``tcadvisor advise ... --run``: run the recommendation and the best other unit on this GPU.

The advice is a prediction; this runs it.  The recommended configuration (the unit and depth the
verdict names, or the winner at ``--fuse``) and the best configuration of another unit are run
with the bundled kernels (timed, then checked like ``tcadvisor validate``), and each measurement
is printed beside two predictions: the model for the bundled kernel that ran (its own α,
counted from the operands it uploads), and the advice's (the implementation profile the advice
compared, e.g. ConvStencil's α).  The two differ when the advice's implementation is not the
bundled one; the measured winner is set against the predicted one either way.

A configuration the unit's bundled kernel cannot run (the base model's EBISU at t = 12 where the
kernel's shared memory holds t = 7; a depth the device refuses at run time) is replaced by the
nearest one that runs: the same unit at the deepest runnable depth below the one asked, else the
unit's best runnable depth, and the output says so.  The closing sentence says what was tested:
nothing (neither ran), the one that ran (the ranking is then not tested), or the measured ranking.
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
    option: object  # the advice's Option that ran (the one it named, or the nearest runnable of the same unit)
    measurement: Measurement
    asked: object = None  # the Option the advice named (None: the same as ``option``)
    note: str = ""  # what was run instead of ``asked``, and why

    @property
    def substituted(self) -> bool:
        return self.asked is not None and self.asked is not self.option


@dataclass
class Pick:
    """One configuration to run: the advice's option, the depths to try in order, and why each replaces it."""

    role: str
    asked: object  # the Option the advice named
    tries: list  # [(Option to run, note)], the first that runs is measured
    why_not: str = ""  # no depth of this unit runs here: why


def refusal(advice, opt) -> str | None:
    """Why the bundled kernel of ``opt.unit`` cannot run ``opt``'s depth on the advice's GPU (None: it can).

    The kernel's own checks and its plan on the spec (:func:`tcadvisor.support.depth_refusal`), as the
    advice itself reads them; what the device says at run time may still refuse (then the next depth is tried).
    """
    from ..gpu.registry import bundled_profile
    from ..support import depth_refusal, kernel_precision

    profile = bundled_profile(opt.unit)
    precision, why = kernel_precision(profile, advice.dtype)
    if why:
        return why
    if not advice.gpu.has(opt.unit, precision):
        return f"{advice.gpu.name} has no {precision.upper()} on its {UNIT_LABELS[opt.unit]}"
    mma = opt.mma_shape if opt.available and opt.impl is profile else None
    grid = None if advice.grid is None else (1,) * (3 - advice.stencil.dims) + tuple(advice.grid)
    return depth_refusal(profile, advice.stencil, opt.fuse, advice.dtype, precision, advice.gpu, mma, grid)


def _depth_option(advice, unit: str, fuse: int):
    """The advice's option of ``unit`` at ``fuse`` (its prediction there)."""
    return advice.by_depth.get(unit, {}).get(fuse)


def pick(advice, role: str, asked) -> Pick:
    """The depths of ``asked.unit`` to run, in order: the one asked if its kernel runs it; else the deepest
    runnable depth below it, then the unit's best runnable depth (by the advice's predictions)."""
    why = refusal(advice, asked)
    if why is None:
        return Pick(role, asked, [(asked, "")])
    depths = sorted(advice.by_depth.get(asked.unit, {}))
    runnable = {t: o for t in depths if (o := _depth_option(advice, asked.unit, t)) is not None
                and o.available and refusal(advice, o) is None}
    tries = []
    below = [t for t in runnable if t < asked.fuse]
    if below:
        t = max(below)
        tries.append((runnable[t], f"t = {asked.fuse} cannot run ({why}): ran t = {t}, the deepest depth below it "
                                   "that runs"))
    best = max(runnable.values(), key=lambda o: o.gstencils, default=None)
    if best is not None and all(best is not o for o, _ in tries):
        tries.append((best, f"t = {asked.fuse} cannot run ({why}): ran t = {best.fuse}, the unit's best depth "
                            "that runs"))
    rest = [runnable[t] for t in sorted(runnable, reverse=True) if all(runnable[t] is not o for o, _ in tries)]
    tries += [(o, f"t = {asked.fuse} cannot run ({why}): ran t = {o.fuse}, the deepest that ran here") for o in rest]
    return Pick(role, asked, tries, "" if tries else f"{UNIT_LABELS[asked.unit]} cannot run here: {why}")


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


def picks(advice) -> list[Pick]:
    """:func:`choices`, each with the configurations of its unit to try (:func:`pick`)."""
    return [pick(advice, role, opt) for role, opt in choices(advice)]


def _not_run(role: str, asked, why: str) -> AdviceRun:
    m = Measurement(unit=asked.unit, fuse=asked.fuse, status="skipped", reason=why)
    return AdviceRun(role, asked, m, asked)


def run_advice(advice, gpu: str | None = None, grid: str | None = None, repeats: int = DEFAULT_REPEATS,
               sweeps: int = DEFAULT_SWEEPS, seed: int = 1, measure=None) -> list[AdviceRun]:
    """Check and time each of :func:`picks` with the bundled kernels (needs CuPy and a GPU).

    Each pick runs its first configuration the device accepts (a refusal at run time tries the
    next); ``measure(role, option, grid)`` -> Measurement replaces the GPU run (tests).
    """
    if grid is None and advice.grid is not None and advice.grid_given:
        grid = "x".join(map(str, advice.grid))
    if measure is None:
        from ..gpu.backend import cupy
        from .runner import _free_memory, l2_bytes, run_config

        cupy()
        l2 = l2_bytes()

        def measure(role, opt, grid):
            cfg = Config(role, advice.stencil, advice.dtype, opt.fuse, opt.unit, grid or "auto", repeats, sweeps,
                         seed, stencil_text=advice.stencil.name)
            m = run_config("advise", cfg, advice.gpu, gpu, l2)
            derive(m)
            _free_memory()
            return m
    runs = []
    for p in picks(advice):
        if not p.tries:
            runs.append(_not_run(p.role, p.asked, p.why_not))
            continue
        refused = []
        for opt, note in p.tries:
            m = measure(p.role, opt, grid)
            if m.status != "skipped":
                if refused and not note:
                    note = f"t = {p.asked.fuse} was refused here ({refused[0]}): ran t = {opt.fuse}"
                runs.append(AdviceRun(p.role, opt, m, p.asked, note))
                break
            refused.append(m.reason)
        else:
            runs.append(AdviceRun(p.role, p.tries[-1][0], m, p.asked,
                                  f"no depth of {UNIT_LABELS[p.asked.unit]} ran here ({refused[0]})"))
    return runs


def _name(r: AdviceRun) -> str:
    """``CUDA cores (t = 7, run for the recommended t = 12)``."""
    label = f"{UNIT_LABELS[r.option.unit]} (t = {r.option.fuse}"
    return label + (f", run for the advice's t = {r.asked.fuse})" if r.substituted else ")")


def verdict_line(runs: list[AdviceRun], band: float = DEFAULT_TIE_BAND) -> str:
    """The closing sentence: true whether none, one or both of the configurations ran."""
    ok = [r for r in runs if r.measurement.ok]
    failed = [r for r in runs if not r.measurement.ok]
    why = "; ".join(f"{r.role}: {r.measurement.status}" + (f" ({r.measurement.reason})" if r.measurement.reason
                                                             else "") for r in failed)
    if not runs:
        return "Nothing was run: the advice names no configuration that any unit runs."
    if not ok:
        return f"Nothing ran here ({why}), so the advice is not tested."
    if len(ok) == 1:
        one = ok[0]
        if len(runs) == 1:
            return (f"Only {_name(one)} ran: the advice names no other unit to compare it with, so its ranking "
                    "is not tested.")
        return f"Only the {one.role} configuration, {_name(one)}, ran ({why}), so the advice's ranking is not tested."
    rec, alt = ok[0], ok[1]
    measured = outcome(rec.measurement.gstencils / alt.measurement.gstencils, band)
    predicted = outcome(rec.option.gstencils / alt.option.gstencils, band)
    names = f"{_name(rec)} against {_name(alt)}"
    agree = "as the advice predicts" if measured == predicted else f"the advice predicted it {predicted}"
    what = "the configuration run for the recommendation" if rec.substituted else "the recommendation"
    return (f"Measured: {names}: {what} {measured} ({rec.measurement.gstencils:.4g} vs "
            f"{alt.measurement.gstencils:.4g} GStencils/s, ties within ±{100 * band:.0f}%), {agree}.")


def format_runs(runs: list[AdviceRun]) -> str:
    from ..report import text_table

    if not runs:
        return "Nothing to run: no unit can run this configuration.\n\n" + verdict_line(runs)
    device = next((r.measurement.device for r in runs if r.measurement.device), "this GPU")
    rows = []
    for r in runs:
        m, o = r.measurement, r.option
        head = [r.role, UNIT_LABELS[o.unit], str(o.fuse)]
        if m.status not in ("ok", "failed"):
            rows.append(head + [f"{m.status}: {m.reason}"])
            continue
        if not o.available:  # the advice's option is a unit it found unavailable; no prediction to show
            rows.append(head + [f"{m.impl}" + (f" {m.mma}" if m.mma else ""), f"{m.gstencils:.4g}", "–", "–",
                                "yes" if m.correct else ("not checked" if m.correct is None else "NO")])
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
    lines += [f"{r.role}: {r.note}." for r in runs if r.note]
    lines += ["", verdict_line(runs)]
    return "\n".join(lines)


def runs_json(runs: list[AdviceRun]) -> list[dict]:
    out = []
    for r in runs:
        d = {"role": r.role, "advice_impl": r.option.impl.name if r.option.impl else None,
             "advice_gstencils": r.option.gstencils if r.option.available else None,
             "advice_fuse": (r.asked or r.option).fuse, "substituted": r.substituted, "note": r.note or None}
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
