"""Turning an :class:`~tcadvisor.advisor.Advice` into text tables and JSON."""
from __future__ import annotations

import math
from fractions import Fraction

from .advisor import TIE_TOLERANCE, Advice, Option
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


def option_row(opt: Option, show_fuse: bool, reference: Option | None = None) -> list[str]:
    """One table row; ``reference`` (best-depth mode): the CUDA-core row the ratio column compares with."""
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
        fnum(opt.gstencils),
        fnum(ratio, 3) if ratio is not None else "–",
        str(opt.scenario) if opt.scenario else "–",
    ]
    return cells


#: Marks after α in the table: where each value came from (explained under the table).
SOURCE_MARK = {"constructed": "", "paper": " (p)", "user": " (u)"}


def format_advice(adv: Advice) -> str:
    from .wording import depth_range

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
    headers = ["unit", "impl", "precision"] + (["t"] if show_fuse else []) + [
        "α", "β", "FLOP/pt", "B/pt", "I [FLOP/B]", "ridge", "bound", "GStencils/s", ratio_header, "scenario"]
    align = "lll" + ("r" if show_fuse else "") + "rrrrrrlrrr"
    rows = [option_row(o, show_fuse, cc_row) for o in adv.options]
    lines = [head, ""] + text_table(headers, rows, align) + [""]
    lines.append("FLOP/pt counts what the unit executes per output point and sweep (padding and fusion redundancy "
                 "included); GStencils/s counts useful point updates, every time step included.")
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
    if adv.model != "base":
        lines.append(model_line(adv))
    best = []
    for unit in UNITS:
        b = adv.best[unit]
        best.append(f"{b.label} t = {b.fuse} ({fnum(b.gstencils)} GStencils/s)" if b.available else f"{b.label} n/a")
    lines.append(f"Best fusion depth per unit (t = {depth_range(adv.searched)}): " + "; ".join(best) + ".")
    lines += ["", "Verdict: " + adv.verdict_text]
    return "\n".join(lines)


def model_line(adv: Advice) -> str:
    """One line: which options the refined model applies to, and why the others use the base model."""
    refined = [o for o in adv.options if o.available and o.model == "refined"]
    base = [o for o in adv.options if o.available and o.model != "refined"]
    parts = []
    if refined:
        parts.append("refined for " + ", ".join(f"{o.label} ({o.model_note})" for o in refined))
    if base:
        from .impls import catalog

        names = ", ".join(dict.fromkeys(o.impl.name for o in base))
        tiled = ", ".join(p.name for p in catalog().values() if p.tiling is not None and p.unit in {o.unit for o in base})
        parts.append(f"base for {names} (no tiling declared, so the base model with {adv.gpu.name}'s ceilings"
                     + (f"; implementations that declare theirs: {tiled}, chosen with --impl" if tiled else "") + ")")
    return f"Model {adv.model}: " + "; ".join(parts) + "."


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
        "model_note": opt.model_note or None,
    })
    if opt.terms:
        out["terms"] = {name: {"value": _clean(value), "note": opt.term_notes.get(name, "")}
                        for name, value in opt.terms.items()}
    if opt.is_tensor:
        out["scenario"] = opt.scenario
        out["decision"] = opt.decision
        out["beta_threshold"] = opt.values.get("beta_threshold")
    return {k: _clean(v) for k, v in out.items()}


def advice_dict(adv: Advice) -> dict:
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
        })
    if adv.at_fuse is not None:
        verdict["at_requested_fuse"] = {"unit": adv.at_fuse.unit, "impl": adv.at_fuse.impl.name,
                                        "fuse": adv.at_fuse.fuse, "gstencils": adv.at_fuse.gstencils}
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
        "searched_fuse": adv.searched,
        "skipped_fuse": {str(t): why for t, why in adv.skipped.items()},
        "tie_tolerance": TIE_TOLERANCE,
        "options": [option_dict(o) for o in adv.options],
        "best": {u: option_dict(o) for u, o in adv.best.items()},
        "verdict": {k: _clean(x) for k, x in verdict.items()},
    }
