"""``tcadvisor explain``: the model's own chain of equations for one query, symbolically and with numbers.

Nothing here states an equation: every line is an :class:`~tcadvisor.model.Equation`
of the variant the query was answered with (:func:`tcadvisor.model.get_variant`),
printed as ``symbol = short form = the same with numbers = value``.  The short form
is written in terms of the previous steps (I_CC = C_CC/M_CC, ...); the value is the
equation's *full* form (in the query's inputs only) evaluated at the query's
numbers, so it is the number ``advise`` reports.  Under ``--model refined`` the
refined terms appear in the equations, and their values and origins are listed.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from . import model as m
from .advisor import Advice, Option
from .dtypes import BYTES
from .errors import TcAdvisorError
from .report import falpha, fnum, source_lines

#: How a quantity in SI units is shown: FLOP/s as TFLOP/s, stencil updates as GStencils/s.
DISPLAY = {"FLOP/s": ("TFLOP/s", 1e-12), "stencils/s": ("GStencils/s", 1e-9)}


def _number(v, latex: bool) -> str:
    if isinstance(v, sp.Rational) and not isinstance(v, sp.Integer):
        return rf"\frac{{{v.p}}}{{{v.q}}}" if latex else f"({v})"
    if v in (sp.oo, float("inf")):
        return r"\infty" if latex else "inf"
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


class _NumberLatex(LatexPrinter):
    def __init__(self, values):
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr, style="plain"):
        if expr in self._values:
            return _number(self._values[expr], True)
        return m.LATEX.get(expr.name) or super()._print_Symbol(expr)


def latex_name(symbol: sp.Symbol) -> str:
    return _NumberLatex({}).doprint(symbol)


#: Characters of the text lines and their LaTeX (text mode).
_TEXT_LATEX = {"α": r"$\alpha$", "β": r"$\beta$", "ρ": r"$\rho$", "η": r"$\eta$", "ω": r"$\omega$",
               "≥": r"$\geq$", "≤": r"$\leq$", "−": r"$-$", "≈": r"$\approx$", "·": r"$\cdot$", "–": "--", "—": "---",
               "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "^": r"\^{}", "×": r"$\times$", "{": r"\{", "}": r"\}",
               "\\": r"\textbackslash{}", "$": r"\$", "~": r"\~{}", "∞": r"$\infty$"}


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
        if kind == "math":
            out += [r"\noindent " + content, ""]
        elif content:
            out += [r"\noindent " + latex_text(content), ""]  # one paragraph per line of prose
        elif out and out[-1] != "":
            out.append("")
    if in_align:
        out[-1] = out[-1][: -len(r" \\")]
        out.append(r"\end{align*}")
    return "\n".join(out)


def _tag(eq: m.Equation, variant: m.Variant) -> str:
    """'eq. 8', 'eq. 8, refined', 'refined' or '' for an equation of ``variant``."""
    parts = [f"eq. {eq.number}"] if eq.number else []
    if variant.terms and eq.refined:
        parts.append("refined")
    return ", ".join(parts)


def _line(eq: m.Equation, vals: dict, variant: m.Variant, latex: bool) -> str:
    """One equation with numbers; its value (from the full form) is added to ``vals`` for later steps."""
    value = sp.sympify(eq.full).subs(vals).doit()
    result = float(value)
    vals[eq.symbol] = sp.Float(result)
    unit, scale = DISPLAY.get(eq.unit, (eq.unit, 1.0))
    tag = _tag(eq, variant)
    if latex:
        shown_unit = rf"\ \text{{{unit}}}" if unit else ""
        shown_tag = rf" && \text{{({tag})}}" if tag else ""
        return (f"{latex_name(eq.symbol)} &= {_NumberLatex({}).doprint(eq.short)} = "
                f"{_NumberLatex(vals).doprint(eq.short)} = {fnum(result * scale)}{shown_unit}{shown_tag}")
    short = sp.sstr(eq.short).replace("**", "^").replace("*", "·")
    numbers = _NumberStr(vals).doprint(eq.short).replace("**", "^").replace("*", "·")
    shown = fnum(result * scale) + (f" {unit}" if unit else "")
    return f"{eq.name:<9} = {short:<22} = {numbers:<34} = {shown}" + (f"  ({tag})" if tag else "")


def _term_values(opt: Option | None, unit: str) -> dict:
    """Values of a unit's refined terms for this option (the defaults where none were computed)."""
    from .refinement import unit_terms

    given = opt.terms if opt is not None else {}
    out = {}
    for term in unit_terms(unit):
        value = given.get(term.name)
        if value is None:
            out[term.symbol] = term.default
        elif value == float("inf"):
            out[term.symbol] = sp.oo
        else:
            out[term.symbol] = sp.Integer(int(value)) if float(value).is_integer() else sp.Float(value)
    return out


def _inputs(adv: Advice, cc: Option, opt: Option | None, variant: m.Variant) -> dict:
    st = adv.stencil
    t = opt.fuse if opt is not None else cc.fuse
    vals = {m.d: st.dims, m.r: st.radius, m.t: t, m.K: st.K, m.K_t: st.fused_points(t),
            m.S: BYTES[adv.dtype], m.B: adv.gpu.bandwidth.value,
            m.beta: sp.Rational(st.fused_points(t), t * st.K)}
    if cc.available:
        vals[m.P_cc] = cc.peak
    if variant.terms:
        vals.update(_term_values(cc if cc.available else None, "cuda_core"))
    if opt is not None and opt.available:
        vals[m.alpha] = sp.Rational(opt.alpha.numerator, opt.alpha.denominator)
        vals[m.beta] = sp.Rational(opt.beta.numerator, opt.beta.denominator)
        vals[m.P_tc] = opt.peak
        if variant.terms:
            vals.update(_term_values(opt, opt.unit))
    return vals


def _symbol_lines(used: set, latex: bool) -> list[tuple[str, str]]:
    """What each input symbol of the printed equations means (the model's SYMBOLS)."""
    out = []
    for symbol, meaning in m.SYMBOLS.items():
        if symbol in used:
            if latex:
                out.append(("math", f"${latex_name(symbol)}$: " + latex_text(meaning)))
            else:
                out.append(("text", f"  {symbol.name:<9} {meaning}"))
    return out


def explain(adv: Advice, latex: bool = False) -> str:
    """The model's chain for this query with its numbers, as text or a LaTeX fragment.

    ``adv`` is an :class:`~tcadvisor.advisor.Advice` or, as :func:`~tcadvisor.advisor.advise` takes, a
    stencil (a name such as 'Box-2D1R'), answered with the advisor's defaults."""
    from .arguments import as_advice

    adv = as_advice(adv)
    if not isinstance(latex, (bool, int)) or isinstance(latex, float):
        raise TcAdvisorError(f"latex {latex!r} is not understood; expected True or False")
    variant = m.get_variant(adv.model)
    st = adv.stencil
    cc = next(o for o in adv.options if o.unit == "cuda_core")
    lines: list[tuple[str, str]] = []
    used: set = set()

    def text(line: str = "") -> None:
        lines.append(("text", line))

    def eq(equation: m.Equation, vals: dict) -> None:
        used.update(equation.short.free_symbols)
        lines.append(("eq", _line(equation, vals, variant, latex)))

    def terms_of(opt: Option) -> None:
        if variant.terms and opt.available:
            text(f"Model: {opt.model} ({opt.model_note})")
            for name, value in opt.terms.items():
                text(f"{name} = {fnum(value)}: {m.TERM_BY_NAME[name].meaning} [{opt.term_notes[name]}]")
            if opt.term_inputs:  # each derived term from the launch plan, with its numbers
                text("Terms from the launch plan (docs/model.md, \"The refined terms\"):")
                vals = dict(opt.term_inputs)
                for step in m.TERM_CHAINS["cuda_core" if opt.unit == "cuda_core" else "tensor_core"]:
                    eq(step, vals)

    text(f"{st.name}, t = {cc.fuse}, {adv.dtype}, on {adv.gpu.name}")
    for line in source_lines(adv, notes=True):
        text(line)
    text(f"Model: {variant.name}, {variant.summary}")
    text()
    base = _inputs(adv, cc, None, variant)
    stencil_steps = m.stencil_equations(st.shape)
    if st.shape in ("box", "star"):
        text(f"Stencil ({st.shape}, d = {st.dims}, r = {st.radius})")
    else:
        text(f"Stencil (custom: K = {st.K} offsets, K_t = {st.fused_points(cc.fuse)} counted as the "
             f"{cc.fuse}-fold Minkowski sum)")
    for step in stencil_steps:
        eq(step, dict(base))
    text()
    if cc.available:
        text(f"CUDA cores with temporal fusion ({cc.impl.name}, {cc.precision.upper()}, "
             f"P_cc = {fnum(cc.peak / 1e12)} TFLOP/s, B = {fnum(adv.gpu.bandwidth.value / 1e9)} GB/s)")
        terms_of(cc)
        for step in variant.group("cuda_core"):
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
        vals = _inputs(adv, cc, opt, variant)
        vals.update({step.symbol: base[step.symbol] for step in variant.group("cuda_core") if step.symbol in base})
        inst = f" {opt.mma_shape}" if opt.mma_shape is not None else ""
        sparse = "; eq. 20: the sparse peak as P_tc" if opt.unit == "sparse_tensor_core" else ""
        text(f"{opt.label} with kernel fusion ({opt.impl.name}, {opt.precision.upper()}{inst}, "
             f"P_tc = {fnum(opt.peak / 1e12)} TFLOP/s: {opt.peak_note}{sparse})")
        text(f"α = {falpha(opt.alpha)} [{opt.alpha_source}]: {opt.alpha_note}")
        terms_of(opt)
        steps = variant.group("tensor_core") + (variant.group("comparison") if cc.available else [])
        for step in steps:
            eq(step, vals)
        if opt.scenario:
            scenario = variant.group(f"scenario {opt.scenario}")
            text(f"scenario {opt.scenario}: {m.SCENARIOS[opt.scenario][2]}")
            for step in scenario:
                eq(step, vals)
            if opt.scenario == 4:
                thr = opt.values["beta_threshold"]
                wins = float(opt.beta) < thr
                text(f"β = {fnum(float(opt.beta))} {'<' if wins else '≥'} β_max = {fnum(thr)}, so "
                     f"{opt.label} {'win' if wins else 'lose'}")
    inputs = ({m.d, m.r, m.t, m.K, m.K_t, m.alpha, m.beta, m.S, m.B, m.P_cc, m.P_tc} | {x.symbol for x in m.TERMS}
              | set(m.TERM_SYMBOLS))
    meanings = _symbol_lines(used & inputs, latex)
    if meanings:
        text()
        text("Symbols:")
        lines.extend(meanings)
    if latex:
        return latex_document(lines)
    return "\n".join(("  " + content if kind == "eq" else content) for kind, content in lines)
