"""Turning an :class:`~tcadvisor.advisor.Advice` into text tables and JSON."""
from __future__ import annotations

import math
from fractions import Fraction

from .advisor import TIE_TOLERANCE, Advice, Option
from .errors import TcAdvisorError
from .hardware import UNITS


def fnum(x: float | None, digits: int = 4) -> str:
    """A number for a table: ``digits`` significant digits, no exponent for ordinary sizes."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    x = float(f"{x:.12g}")  # drop floating-point noise such as 960.0000000000001
    if float(x).is_integer() and abs(x) < 10 ** (digits + 2):
        return str(int(x))
    mag = math.floor(math.log10(abs(x)))
    if mag >= digits + 2 or mag < -3:
        return f"{x:.{digits - 1}e}"
    decimals = max(digits - 1 - mag, 0)
    return f"{x:.{decimals}f}"


def falpha(a: Fraction) -> str:
    if a.denominator == 1:
        return str(a.numerator)
    approx = float(a)
    short = f"{approx:.4g}"
    return short if Fraction(short) == a else f"{a} ≈ {approx:.3f}"


def text_table(headers: list[str], rows: list[list[str]], align: str) -> list[str]:
    full = [r for r in rows if len(r) == len(headers)]
    widths = [max([len(h)] + [len(r[i]) for r in full]) for i, h in enumerate(headers)]
    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "  ".join(out).rstrip()
    return [line(headers), line(["-" * w for w in widths])] + [line(r) if len(r) == len(headers) else "  ".join(r) for r in rows]


def gstencils_cell(opt: Option) -> str:
    """GStencils/s, with the refined prediction's interval where one is known: ``412 (350–470)``."""
    rng = opt.interval_range()
    if rng is None:
        return fnum(opt.gstencils)
    return f"{fnum(opt.gstencils)} ({fnum(rng[0], 3)}–{fnum(rng[1], 3)})"


def option_row(opt: Option, show_fuse: bool, reference: Option | None = None, roofline: bool = False) -> list[str]:
    """One table row; ``reference`` (best-depth mode): the CUDA-core row the ratio column compares with;
    ``roofline``: with the column of the base model's bound."""
    label = opt.label
    if not opt.available:
        return [label, f"not available: {opt.reason}"]
    prec = opt.precision.upper() + (f" {opt.mma_shape}" if opt.mma_shape else "")
    cells = [label, opt.impl.name, prec]
    if show_fuse:
        cells.append(str(opt.fuse))
    if reference is not None:
        ratio = opt.gstencils / reference.gstencils if reference.available else None
    else:
        ratio = opt.speedup
    cells += [
        (falpha(opt.alpha) + SOURCE_MARK.get(opt.alpha_source, "")) if opt.is_tensor else "1",
        fnum(float(opt.beta)) if opt.is_tensor else "1",
        fnum(opt.flops_per_point),
        fnum(opt.bytes_per_point),
        fnum(opt.intensity),
        fnum(opt.ridge),
        opt.bound,
        gstencils_cell(opt),
    ] + ([fnum(opt.bound_gstencils)] if roofline else []) + [
        fnum(ratio, 3) if ratio is not None else "–",
        str(opt.scenario) if opt.scenario else "–",
    ]
    return cells


#: Marks after α in the table: where each value came from (explained under the table).
SOURCE_MARK = {"constructed": "", "paper": " (p)", "user": " (u)"}


def format_advice(adv: Advice) -> str:
    """The answer as ``advise`` prints it; ``adv`` an :class:`Advice` or a stencil name."""
    from .arguments import as_advice
    from .wording import depth_range

    adv = as_advice(adv)
    st = adv.stencil
    gpu = adv.gpu
    head = f"{st.name} (K = {st.K}"
    if adv.fuse is not None:
        head += f"), fused t = {adv.fuse} (K_t = {st.fused_points(adv.fuse)}, β = {fnum(float(st.beta(adv.fuse)))})"
    else:
        head += "), each unit at its best fusion depth"
    head += f", {adv.dtype}, on {gpu.name} (B = {gpu.bandwidth.value / 1e9:g} GB/s)"
    show_fuse = adv.fuse is None
    cc_row = adv.options[0] if show_fuse else None
    ratio_header = "x CC row" if show_fuse else "speedup"
    # The bound column only where it says something: some row is a refined prediction (under the base model
    # every row's GStencils/s is its bound, and the answer stays what it always was).
    roofline = any(o.available and o.model == "refined" for o in adv.options)
    headers = ["unit", "impl", "precision"] + (["t"] if show_fuse else []) + [
        "α", "β", "FLOP/pt", "B/pt", "I [FLOP/B]", "ridge", "bound", "GStencils/s"] + (
        ["roofline"] if roofline else []) + [ratio_header, "scenario"]
    align = "lll" + ("r" if show_fuse else "") + "rrrrrrlr" + ("r" if roofline else "") + "rr"
    rows = [option_row(o, show_fuse, cc_row, roofline) for o in adv.options]
    lines = [head] + source_lines(adv, notes=False)  # the source's notes are among the answer's notes below
    assumed = assumptions(adv)
    if assumed:
        lines.append(assumed)
    lines += [""] + text_table(headers, rows, align) + [""]
    lines.append("FLOP/pt counts what the unit executes per output point and sweep (padding and fusion redundancy "
                 "included); GStencils/s counts useful point updates, every time step included.")
    if roofline:
        lines.append("GStencils/s of a refined row is what the bundled kernel is predicted to reach; 'roofline' is the "
                     "paper's model at that row's own α, β and instruction peak: what a perfect implementation of the "
                     "transformation could reach.")
    with_interval = [o for o in adv.options if o.interval_range() is not None]
    if with_interval:
        levels = ", ".join(sorted({f"{o.interval.level:.0%}" for o in with_interval}))
        lines.append(f"GStencils/s (low–high): where {levels} of held-out measurements fell around such predictions "
                     "(cross-validated residuals of the refined model for that unit and precision).")
    if show_fuse:
        lines.append("'x CC row' is each row's throughput over the CUDA-core row above (its best depth); the scenario "
                     "compares a Tensor Core row with CUDA cores at that row's own t.")
    else:
        lines.append("speedup: R of eq. 13, over CUDA cores at the same t.")
    marks = {o.alpha_source for o in adv.options if o.available and o.is_tensor} & {"paper", "user"}
    if marks:
        lines.append("α marked (p) is the implementation's published constant (it has no construction), (u) was "
                     "given with --alpha; unmarked α is constructed for this fused stencil and instruction.")
    for opt in adv.options:
        if opt.available and opt.is_tensor:
            peak = f"{fnum(opt.peak / 1e12)} TFLOP/s ({opt.peak_note})"
            lines.append(f"{opt.label} ({opt.impl.name}): α = {falpha(opt.alpha)} [{opt.alpha_source}], "
                         f"{opt.alpha_note}; peak {peak}.")
    for opt in adv.options:
        if opt.available and opt.decision:
            lines.append(f"{opt.label} vs CUDA cores at t = {opt.fuse}: {opt.decision}.")
    if adv.model != "base" and model_line(adv):
        lines.append(model_line(adv))
    lines += fallback_lines(adv)
    lines += [f"Note: {note}." for note in adv.notes]
    if adv.unit_skipped:
        lines.append("Not searched, the bundled kernel cannot run them: " + skipped_text(adv) + ".")
    accuracy = accuracy_line(adv)
    if accuracy:
        lines.append(accuracy)
    best = []
    for unit in UNITS:
        b = adv.best[unit]
        best.append(f"{b.label} t = {b.fuse} ({fnum(b.gstencils)} GStencils/s)" if b.available else f"{b.label} n/a")
    lines.append(f"Best fusion depth per unit (t = {depth_range(adv.searched)}): " + "; ".join(best) + ".")
    lines += ["", "Verdict: " + adv.verdict_text]
    return "\n".join(lines)


def option_steps(adv: Advice, opt: Option) -> int:
    """Time steps the accuracy of ``opt`` is stated for: the run's (--steps), else one sweep of its depth."""
    return adv.steps if adv.steps is not None else opt.fuse


def expected_error(adv: Advice, opt: Option) -> tuple[float, str] | None:
    """The bound on ``opt``'s relative error over the run and its one-line note (None: not a bundled kernel's
    option, or the kernel's rounding model cannot be built for it).

    A faster FP16 or TF32 answer is never given without its accuracy: this is the checker's own rounding
    bound (tcadvisor.accuracy), the one every corpus run was checked against."""
    from .accuracy import expected_error_note, expected_relative_error

    if not opt.available or opt.impl is None or not opt.impl.kernel:
        return None
    steps = option_steps(adv, opt)
    try:
        value = expected_relative_error(adv.stencil, opt.unit, adv.dtype, opt.precision, opt.fuse, steps,
                                        mma=opt.mma_shape)
        note = expected_error_note(adv.stencil, opt.unit, adv.dtype, opt.precision, opt.fuse, steps, mma=opt.mma_shape)
    except TcAdvisorError:
        return None
    return value, note


def accuracy_line(adv: Advice) -> str:
    """One line: per option of a bundled kernel, its precision's error bound over the run ('' if none)."""
    parts, bounds = [], {}
    for opt in adv.options:
        found = expected_error(adv, opt)
        if found is not None:
            parts.append(f"{opt.label} (t = {opt.fuse}) {found[1]}")
            bounds[opt.unit, opt.fuse] = found[0]
    if not parts:
        return ""
    return ("Accuracy (the kernels' rounding bound for random convex weights and data in [1, 2]): "
            + "; ".join(parts) + "." + accuracy_caveat(adv, bounds))


#: A recommendation whose rounding bound is this many times another unit's is said so beside the accuracy line.
ACCURACY_CAVEAT_RATIO = 10


def accuracy_caveat(adv: Advice, bounds: dict | None = None) -> str:
    """' The recommended ...' when the recommended option's error bound is at least :data:`ACCURACY_CAVEAT_RATIO`
    times that of the best-bounded other unit ('' otherwise).

    Why: CUDA cores in FP16/BF16 round every one of a step's 2K multiply-adds to 16 bits, where the Tensor Core
    kernels accumulate in FP32; the faster answer can carry a hundred times the error, which a user choosing by
    speed alone would not see.  ``bounds``: (unit, depth) -> bound of the options already computed
    (:func:`accuracy_line`'s), computed here where missing."""
    bounds = {} if bounds is None else bounds

    def bound(opt):
        if (opt.unit, opt.fuse) not in bounds:
            found = expected_error(adv, opt)
            bounds[opt.unit, opt.fuse] = None if found is None else found[0]
        return bounds[opt.unit, opt.fuse]

    rec = adv.at_fuse if adv.fuse is not None and adv.at_fuse is not None else adv.verdict
    if rec is None:
        return ""
    mine = bound(rec)
    others = [(b, opt) for opt in adv.options if opt.unit != rec.unit and (b := bound(opt)) is not None]
    if mine is None or not others:
        return ""
    low, opt = min(others, key=lambda x: x[0])
    if not low > 0 or mine < ACCURACY_CAVEAT_RATIO * low:
        return ""
    why = (f" ({rec.label} round every {rec.precision.upper()} multiply-add; {opt.label} accumulate in FP32)"
           if rec.unit == "cuda_core" and rec.precision in ("fp16", "bf16") and opt.unit != "cuda_core" else "")
    return (f" The recommended {rec.label} (t = {rec.fuse}) have {mine / low:.0f}x the error bound of {opt.label} "
            f"(t = {opt.fuse}){why}: where accuracy matters more than speed, choose by it.")


def fallback_lines(adv: Advice) -> list[str]:
    """One line per reason: the units that keep the published implementations and the base model, and why."""
    from .hardware import UNIT_LABELS

    by_reason: dict[str, list[str]] = {}
    for unit, why in adv.fallback.items():
        by_reason.setdefault(why, []).append(unit)
    out = []
    for why, units in by_reason.items():
        names = [UNIT_LABELS[u] for u in units]
        impls = ", ".join(dict.fromkeys(adv.best[u].impl.name for u in units if adv.best[u].impl is not None))
        which = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        what = "implementation" if "," not in impls else "implementations"
        kernels = "its bundled kernel" if len(units) == 1 else "their bundled kernels"
        out.append(f"{which}: the published {what} ({impls}) with the base model, since {kernels} "
                   f"cannot run here: {why}.")
    return out


def source_lines(adv: Advice, notes: bool) -> list[str]:
    """Where a stencil read from the user's code came from (and, with ``notes``, the dtype it gave and the
    reading's notes); nothing for a stencil given by name or as a Stencil."""
    if adv.source is None:
        return []
    lines = [f"Stencil read from {adv.source.read_from}."]
    if notes and adv.dtype_from is not None:
        lines.append(f"dtype {adv.dtype}, from {adv.dtype_from} (--dtype to change).")
    return lines + ([f"Note: {n.rstrip('.')}." for n in adv.source.notes] if notes else [])


def assumptions(adv: Advice) -> str:
    """One line: the dtype where the stencil's source gave it, the grid and the time steps the answer assumed
    ('' for the base model with none of them)."""
    parts = []
    if adv.dtype_from is not None:
        parts.append(f"dtype {adv.dtype}, from {adv.dtype_from} (--dtype to change)")
    if adv.grid is not None:
        grid = "x".join(map(str, adv.grid))
        parts.append(f"grid {grid}" + ("" if adv.grid_given else " (the bundled kernels' default, as 'tcadvisor run'; "
                                                                  "--grid to change)"))
    if adv.steps is not None:
        parts.append(f"{adv.steps} time steps: sweeps of t steps and a shallower sweep for the remainder, depths "
                     f"beyond {adv.steps} not searched")
    elif adv.grid is not None:
        parts.append("one sweep of t steps at each depth, as 'tcadvisor run' (--steps for a run's length)")
    return ("Assumed: " + "; ".join(parts) + ".") if parts else ""


def _runs(depths: dict[int, str]) -> list[tuple[list[int], str]]:
    """Consecutive depths whose reasons differ only in their numbers, with the first depth's reason."""
    import re

    out: list[tuple[list[int], str]] = []
    for t in sorted(depths):
        kind = re.sub(r"\d+", "#", depths[t])
        if out and out[-1][0][-1] == t - 1 and re.sub(r"\d+", "#", out[-1][1]) == kind:
            out[-1][0].append(t)
        else:
            out.append(([t], depths[t]))
    return out


def skipped_text(adv: Advice) -> str:
    """Per unit, the depths its bundled kernel cannot run, each run of depths with the reason at its first."""
    from .hardware import UNIT_LABELS
    from .wording import depth_range

    parts = []
    for unit, depths in adv.unit_skipped.items():
        runs = [f"t = {depth_range(ts)} ({'at t = %d: ' % ts[0] if len(ts) > 1 else ''}{why})"
                for ts, why in _runs(depths)]
        parts.append(f"{UNIT_LABELS[unit]} " + ", ".join(runs))
    return "; ".join(parts)


def model_line(adv: Advice) -> str:
    """One line: which options the refined model applies to, and why the others use the base model."""
    refined = [o for o in adv.options if o.available and o.model == "refined"]
    base = [o for o in adv.options if o.available and o.model != "refined" and o.unit not in adv.fallback]
    parts = []
    if refined:
        parts.append("refined for " + ", ".join(f"{o.label} ({o.model_note})" for o in refined))
    if base:
        from .impls import catalog

        names = ", ".join(dict.fromkeys(o.impl.name for o in base))
        tiled = ", ".join(p.name for p in catalog().values() if p.tiling is not None and p.unit in {o.unit for o in base})
        parts.append(f"base for {names} (no tiling declared, so the base model with {adv.gpu.name}'s ceilings"
                     + (f"; implementations that declare theirs: {tiled}, chosen with --impl" if tiled else "") + ")")
    return (f"Model {adv.model}: " + "; ".join(parts) + ".") if parts else ""


def _clean(x):
    if isinstance(x, Fraction):
        return float(x)
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    return x


def option_dict(opt: Option) -> dict:
    out = {"unit": opt.unit, "available": opt.available, "fuse": opt.fuse, "model": opt.model}
    if not opt.available:
        out["reason"] = opt.reason
        out["skipped"] = opt.skipped
        if opt.impl is not None:
            out["impl"] = opt.impl.name
        return out
    out.update({
        "impl": opt.impl.name,
        "precision": opt.precision,
        "mma": str(opt.mma_shape) if opt.mma_shape is not None else None,
        "peak": opt.peak,
        "peak_note": opt.peak_note,
        "peak_source": opt.peak_source,
        "alpha": float(opt.alpha),
        "alpha_exact": str(opt.alpha),
        "alpha_source": opt.alpha_source,
        "alpha_note": opt.alpha_note or None,
        "beta": float(opt.beta),
        "beta_exact": str(opt.beta),
        "flops_per_point": opt.flops_per_point,
        "useful_flops_per_point": opt.useful_flops_per_point,
        "bytes_per_point": opt.bytes_per_point,
        "intensity": opt.intensity,
        "ridge": opt.ridge,
        "bound": opt.bound,
        "attainable_flops": opt.attainable_flops,
        "executed_flops": opt.executed_flops,
        "gstencils": opt.gstencils,
        "speedup": opt.speedup,
        "bound_gstencils": opt.bound_gstencils,
        "model_note": opt.model_note or None,
    })
    rng = opt.interval_range()
    if rng is not None:
        out["interval"] = {"low": rng[0], "high": rng[1], "level": opt.interval.level, "n": opt.interval.n,
                           "source": opt.interval.source}
    if opt.sweeps:
        out["sweeps"] = list(opt.sweeps)
    if opt.terms:
        out["terms"] = {name: {"value": _clean(value), "note": opt.term_notes.get(name, "")}
                        for name, value in opt.terms.items()}
    if opt.is_tensor:
        out["scenario"] = opt.scenario
        out["decision"] = opt.decision
        out["beta_threshold"] = opt.values.get("beta_threshold")
    return {k: _clean(v) for k, v in out.items()}


def _with_accuracy(adv: Advice, opt: Option) -> dict:
    """:func:`option_dict` plus the precision's error bound over the run (``expected_relative_error``, its
    ``expected_error_steps`` and ``expected_error_note``) where the option is a bundled kernel's."""
    out = option_dict(opt)
    found = expected_error(adv, opt)
    if found is not None:
        out.update({"expected_relative_error": found[0], "expected_error_steps": option_steps(adv, opt),
                    "expected_error_note": found[1]})
    return out


def _close(adv: Advice, among: list[Option], winner: Option) -> dict:
    """``too_close`` (the winner's interval overlaps the runner-up's) and, if so, the command that settles it."""
    from .wording import too_close

    other = adv.runner_up(among, winner)
    close = other is not None and too_close(winner, other)
    return {"too_close": close, "settle": f"{adv.command} --run" if close else None}


def advice_dict(adv: Advice) -> dict:
    """The answer as JSON-ready data (``advise --json``); ``adv`` an :class:`Advice` or a stencil name."""
    from .arguments import as_advice

    adv = as_advice(adv)
    st = adv.stencil
    v = adv.verdict
    verdict = {"sentence": adv.verdict_text}
    if v is not None:
        cc = adv.best.get("cuda_core")
        verdict.update({
            "unit": v.unit, "impl": v.impl.name, "fuse": v.fuse, "precision": v.precision,
            "mma": str(v.mma_shape) if v.mma_shape is not None else None,
            "gstencils": v.gstencils, "bound": v.bound,
            "speedup_over_best_cuda_core": (v.gstencils / cc.gstencils) if cc is not None and cc.available else None,
            "model": v.model, "bound_gstencils": v.bound_gstencils,
        })
        verdict.update(_close(adv, [o for o in adv.best.values() if o.available], v))
    if adv.at_fuse is not None:
        verdict["at_requested_fuse"] = {"unit": adv.at_fuse.unit, "impl": adv.at_fuse.impl.name,
                                        "fuse": adv.at_fuse.fuse, "gstencils": adv.at_fuse.gstencils,
                                        "model": adv.at_fuse.model, **_close(adv, adv.options, adv.at_fuse)}
    return {
        "stencil": st.name,
        "shape": st.shape,
        "dims": st.dims,
        "radius": st.radius,
        "points": st.K,
        "fuse": adv.fuse,
        "fused_points": st.fused_points(adv.fuse) if adv.fuse else None,
        "dtype": adv.dtype,
        "model": adv.model,
        "gpu": adv.gpu.name,
        "gpu_key": adv.gpu.key,
        "bandwidth": adv.gpu.bandwidth.value,
        "grid": "x".join(map(str, adv.grid)) if adv.grid is not None else None,
        "grid_default": (not adv.grid_given) if adv.grid is not None else None,
        "steps": adv.steps,
        "searched_fuse": adv.searched,
        "skipped_fuse": {str(t): why for t, why in adv.skipped.items()},
        "skipped_fuse_per_unit": {u: {str(t): why for t, why in d.items()} for u, d in adv.unit_skipped.items()},
        "fallback": dict(adv.fallback),
        "notes": list(adv.notes),
        "command": adv.command,
        "tie_tolerance": TIE_TOLERANCE,
        "options": [_with_accuracy(adv, o) for o in adv.options],
        "best": {u: option_dict(o) for u, o in adv.best.items()},
        "verdict": {k: _clean(x) for k, x in verdict.items()},
        **({"source": source_dict(adv)} if adv.source is not None else {}),
    }


def source_dict(adv: Advice) -> dict:
    """The stencil as read from the user's code: where from, its offsets and weights, the dtype and the notes."""
    src, st = adv.source, adv.stencil
    return {"read_from": src.read_from, "dtype": src.dtype, "dtype_used": adv.dtype_from is not None,
            "offsets": [list(o) for o in st.offsets],
            "weights": None if st.weights is None else list(st.weights), "notes": list(src.notes)}
