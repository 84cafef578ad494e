"""``tcadvisor explain``: the model's chain of equations for one query, symbolic and with numbers.

Each step is an equation of :mod:`tcadvisor.model` written in terms of the
previous steps (I_CC = C_CC/M_CC, P_CC = Min(P_cc, B·I_CC), ...), then the same
with numbers in place of the symbols, then the value.  The value is the full
model expression evaluated at the query's inputs, so it is the number ``advise``
reports; the short form only shows how it is built.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from . import model as m
from .advisor import Advice, Option
from .dtypes import BYTES
from .report import falpha, fnum

# Names of the intermediate results, used in the short form of later steps.
C_CC, M_CC, I_CC, P_CC = sp.symbols("C_CC M_CC I_CC P_CC", positive=True)
C_TC, M_TC, I_TC, P_TC_raw, P_TC = sp.symbols("C_TC M_TC I_TC P_TC_raw P_TC", positive=True)


def _number(v, latex: bool) -> str:
    if isinstance(v, sp.Rational) and not isinstance(v, sp.Integer):
        return rf"\frac{{{v.p}}}{{{v.q}}}" if latex else f"({v})"
    f = float(v)
    if f.is_integer() and abs(f) < 1e6:
        return str(int(f))
    text = f"{f:.4g}"
    if "e" in text and latex:
        mant, exp = text.split("e")
        return rf"{mant} \times 10^{{{int(exp)}}}"
    return text


class _NumberStr(StrPrinter):
    def __init__(self, values):
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr):
        return _number(self._values[expr], False) if expr in self._values else super()._print_Symbol(expr)


#: LaTeX for the model's multi-letter names (SymPy would print ``P_TC_raw`` as ``P_{TC raw}``).
LATEX_NAMES = {
    "P_TC_raw": r"P_{\mathrm{TC}}^{\mathrm{raw}}", "P_TC": r"P_{\mathrm{TC}}", "P_CC": r"P_{\mathrm{CC}}",
    "C_CC": r"C_{\mathrm{CC}}", "M_CC": r"M_{\mathrm{CC}}", "I_CC": r"I_{\mathrm{CC}}",
    "C_TC": r"C_{\mathrm{TC}}", "M_TC": r"M_{\mathrm{TC}}", "I_TC": r"I_{\mathrm{TC}}",
    "G_CC": r"G_{\mathrm{CC}}", "G_TC": r"G_{\mathrm{TC}}", "P_cc": r"P_{\mathrm{cc}}", "P_tc": r"P_{\mathrm{tc}}",
    "rho_cc": r"\rho_{\mathrm{cc}}", "rho_tc": r"\rho_{\mathrm{tc}}", "beta_max": r"\beta_{\max}",
    "K_t": "K_{t}",
}


class _NumberLatex(LatexPrinter):
    def __init__(self, values):
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr, style="plain"):
        if expr in self._values:
            return _number(self._values[expr], True)
        return LATEX_NAMES.get(expr.name) or super()._print_Symbol(expr)


def latex_name(symbol: sp.Symbol) -> str:
    return _NumberLatex({}).doprint(symbol)


#: Characters of the text lines and their LaTeX (text mode).
_TEXT_LATEX = {"α": r"$\alpha$", "β": r"$\beta$", "ρ": r"$\rho$", "≥": r"$\geq$", "≤": r"$\leq$", "≈": r"$\approx$",
               "·": r"$\cdot$", "–": "--", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "^": r"\^{}",
               "×": r"$\times$", "{": r"\{", "}": r"\}", "\\": r"\textbackslash{}", "$": r"\$", "~": r"\~{}"}


def latex_text(text: str) -> str:
    """A line of prose as LaTeX text: specials escaped, Greek and relations in math mode."""
    return "".join(_TEXT_LATEX.get(ch, ch) for ch in text)


def latex_document(lines: list[tuple[str, str]]) -> str:
    """Text and equation lines as a LaTeX fragment: prose as paragraphs, equations in ``align*``."""
    out, in_align = [], False
    for kind, content in lines:
        if kind == "eq":
            if not in_align:
                out.append(r"\begin{align*}")
                in_align = True
            out.append(content + r" \\")
            continue
        if in_align:
            out[-1] = out[-1][: -len(r" \\")]
            out.append(r"\end{align*}")
            in_align = False
        if content:
            out += [r"\noindent " + latex_text(content), ""]  # one paragraph per line of prose
        elif out and out[-1] != "":
            out.append("")
    if in_align:
        out[-1] = out[-1][: -len(r" \\")]
        out.append(r"\end{align*}")
    return "\n".join(out)


@dataclass
class Step:
    name: sp.Symbol | str
    short: sp.Expr  # in terms of earlier steps
    full: sp.Expr  # in terms of the model's inputs
    equation: str = ""
    unit: str = ""
    scale: float = 1.0


def _cc_steps() -> list[Step]:
    return [
        Step(C_CC, 2 * m.K * m.t, m.C_CC, "8", "FLOP/point"),
        Step(M_CC, 2 * m.S, m.M_CC, "8", "B/point"),
        Step(I_CC, C_CC / M_CC, m.I_CC, "8", "FLOP/B"),
        Step(sp.Symbol("rho_cc"), m.P_cc / m.B, m.rho_cc, "5", "FLOP/B"),
        Step(P_CC, sp.Min(m.P_cc, m.B * I_CC), m.P_CC, "8", "TFLOP/s", 1e-12),
        Step(sp.Symbol("G_CC"), P_CC / (2 * m.K), m.P_CC / (2 * m.K), "", "GStencils/s", 1e-9),
    ]


def _tc_steps(with_cc: bool) -> list[Step]:
    steps = [
        Step(C_TC, 2 * m.K * m.t * m.beta / m.alpha, m.C_TC, "11", "FLOP/point"),
        Step(M_TC, 2 * m.S, m.M_TC, "11", "B/point"),
        Step(I_TC, C_TC / M_TC, m.I_TC, "11", "FLOP/B"),
        Step(sp.Symbol("rho_tc"), m.P_tc / m.B, m.rho_tc, "5", "FLOP/B"),
        Step(P_TC_raw, sp.Min(m.P_tc, m.B * I_TC), m.P_TC_raw, "11", "TFLOP/s", 1e-12),
        Step(P_TC, m.alpha / m.beta * P_TC_raw, m.P_TC, "12", "TFLOP/s", 1e-12),
        Step(sp.Symbol("G_TC"), P_TC / (2 * m.K), m.P_TC / (2 * m.K), "", "GStencils/s", 1e-9),
    ]
    if with_cc:
        steps.append(Step(sp.Symbol("R"), P_TC / P_CC, m.R, "13"))
    return steps


def _inputs(adv: Advice, opt: Option | None, cc: Option) -> dict:
    st = adv.stencil
    t = opt.fuse if opt is not None else cc.fuse
    vals = {m.d: st.dims, m.r: st.radius, m.t: t, m.K: st.K, m.K_t: st.fused_points(t),
            m.S: BYTES[adv.dtype], m.B: adv.gpu.bandwidth.value,
            m.beta: sp.Rational(st.fused_points(t), t * st.K)}
    if cc.available:
        vals[m.P_cc] = cc.peak
    if opt is not None and opt.available:
        vals[m.alpha] = sp.Rational(opt.alpha.numerator, opt.alpha.denominator)
        vals[m.beta] = sp.Rational(opt.beta.numerator, opt.beta.denominator)
        vals[m.P_tc] = opt.peak
    return vals


def _line(step: Step, vals: dict, latex: bool) -> str:
    value = sp.sympify(step.full).subs(vals).doit()
    result = float(value)
    vals[step.name if isinstance(step.name, sp.Symbol) else sp.Symbol(step.name)] = sp.Float(result)
    shown = fnum(result * step.scale) + (f" {step.unit}" if step.unit else "")
    eq = f"  (eq. {step.equation})" if step.equation else ""
    name = step.name if isinstance(step.name, sp.Symbol) else sp.Symbol(step.name)
    if latex:
        unit = rf"\ \text{{{step.unit}}}" if step.unit else ""
        tag = rf" && \text{{(eq. {step.equation})}}" if step.equation else ""
        return (f"{latex_name(name)} &= {_NumberLatex({}).doprint(step.short)} = {_NumberLatex(vals).doprint(step.short)}"
                f" = {fnum(result * step.scale)}{unit}{tag}")
    short = sp.sstr(step.short).replace("**", "^").replace("*", "·")
    numbers = _NumberStr(vals).doprint(step.short).replace("**", "^").replace("*", "·")
    return f"{str(name):<9} = {short:<22} = {numbers:<34} = {shown}{eq}"


def explain(adv: Advice, latex: bool = False) -> str:
    """The symbolic chain of the model with this query's numbers, as text or a LaTeX fragment."""
    st = adv.stencil
    cc = next(o for o in adv.options if o.unit == "cuda_core")
    lines: list[tuple[str, str]] = []

    def text(line: str = "") -> None:
        lines.append(("text", line))

    def eq(step: Step, vals: dict) -> None:
        lines.append(("eq", _line(step, vals, latex)))

    text(f"{st.name}, t = {cc.fuse}, {adv.dtype}, on {adv.gpu.name}")
    text()
    base = _inputs(adv, None, cc)
    if st.shape in ("box", "star"):
        text(f"Stencil ({st.shape}, d = {st.dims}, r = {st.radius})")
        eq(Step(m.K, m.K_closed(st.shape), m.K_closed(st.shape), "", "points"), dict(base))
        eq(Step(m.K_t, m.K_t_closed(st.shape), m.K_t_closed(st.shape), "", "points"), dict(base))
    else:
        text(f"Stencil (custom: K = {st.K} offsets, K_t = {st.fused_points(cc.fuse)} counted as the "
             f"{cc.fuse}-fold Minkowski sum)")
    eq(Step(m.beta, m.beta_def, m.beta_def, "9"), dict(base))
    text()
    if cc.available:
        text(f"CUDA cores with temporal fusion ({cc.impl.name}, {cc.precision.upper()}, "
             f"P_cc = {fnum(cc.peak / 1e12)} TFLOP/s, B = {fnum(adv.gpu.bandwidth.value / 1e9)} GB/s)")
        for step in _cc_steps():
            eq(step, base)
    else:
        text(f"CUDA cores: not available ({cc.reason})")
    for opt in adv.options:
        if not opt.is_tensor:
            continue
        text()
        if not opt.available:
            text(f"{opt.label}: not available ({opt.reason})")
            continue
        vals = _inputs(adv, opt, cc)
        vals.update({k: v for k, v in base.items() if k in (C_CC, M_CC, I_CC, P_CC)})
        inst = f" {opt.mma_shape}" if opt.mma_shape is not None else ""
        text(f"{opt.label} with kernel fusion ({opt.impl.name}, {opt.precision.upper()}{inst}, "
             f"P_tc = {fnum(opt.peak / 1e12)} TFLOP/s: {opt.peak_note})")
        text(f"α = {falpha(opt.alpha)} [{opt.alpha_source}]: {opt.alpha_note}")
        for step in _tc_steps(cc.available):
            eq(step, vals)
        if opt.scenario:
            _, r_expr, meaning = m.SCENARIOS[opt.scenario]
            number = {1: "14", 2: "15", 3: "17", 4: "18"}[opt.scenario]
            text(f"scenario {opt.scenario}: {meaning}")
            eq(Step(sp.Symbol(f"R_{opt.scenario}"), r_expr, r_expr, number), vals)
            if opt.scenario == 4:
                thr = opt.values["beta_threshold"]
                wins = float(opt.beta) < thr
                eq(Step(sp.Symbol("beta_max"), m.BETA_THRESHOLD, m.BETA_THRESHOLD, "19"), vals)
                text(f"β = {fnum(float(opt.beta))} {'<' if wins else '≥'} β_max = {fnum(thr)}, so "
                     f"{opt.label} {'win' if wins else 'lose'}")
    if latex:
        return latex_document(lines)
    return "\n".join(("  " + content if kind == "eq" else content) for kind, content in lines)
