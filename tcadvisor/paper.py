"""The paper's Tables 2, 3 and 4 (analytical columns), and the model's values next to them.

The printed values are data transcribed from "Do We Need Tensor Cores for
Stencil Computations?"; the model's values are computed by the base model
(:func:`tcadvisor.model.evaluate`, the paper's own) on the paper's GPU: always the bundled A100
80GB PCIe spec, even where a user's spec file of the same key overrides it
elsewhere, because the paper's numbers belong to the paper's hardware.  A computed value *matches* a printed one when it rounds to it at the
printed number of decimals (either rounding convention: the paper rounds
6.125 down in Table 2 and 10.125 up in Table 3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from . import model
from .dtypes import BYTES
from .hardware import GpuSpec, bundled_spec
from .stencil import parse_stencil

PAPER_GPU = "a100-80gb-pcie"

#: Unit and precision of each implementation in the paper's experiments.
IMPL_UNIT = {
    "EBISU": ("cuda_core", {"double": "fp64", "float": "fp32"}),
    "ConvStencil": ("tensor_core", {"double": "fp64", "float": "tf32"}),
    "SPIDER": ("sparse_tensor_core", {"float": "tf32"}),
    "SPIDER-Dense": ("tensor_core", {"float": "tf32"}),
}
ALPHA = {"ConvStencil": Fraction(1, 2), "SPIDER": Fraction(15, 32), "SPIDER-Dense": Fraction(15, 32)}


def matches(value: float, printed: str) -> bool:
    """True if ``value`` rounds to ``printed`` at its number of decimals (ties either way)."""
    dec = Decimal(printed)
    places = -dec.as_tuple().exponent if dec.as_tuple().exponent < 0 else 0
    half = Decimal(5) / Decimal(10) ** (places + 1)
    return abs(Decimal(repr(float(value))) - dec) <= half + Decimal("1e-12")


@dataclass
class Cell:
    name: str
    printed: str | None
    value: float | str
    note: str = ""

    @property
    def ok(self) -> bool | None:
        if self.printed is None:
            return None
        if isinstance(self.value, str):
            return self.value.lower() == self.printed.lower()
        return matches(self.value, self.printed)


@dataclass
class Row:
    label: str
    cells: list[Cell] = field(default_factory=list)
    note: str = ""


def _evaluate(impl: str, stencil_name: str, fuse: int, dtype: str, gpu: GpuSpec, alpha: Fraction | None = None):
    stencil = parse_stencil(stencil_name)
    unit, precisions = IMPL_UNIT[impl]
    precision = precisions[dtype]
    a = alpha if alpha is not None else ALPHA.get(impl, Fraction(1))
    b = stencil.beta(fuse) if unit != "cuda_core" else Fraction(1)
    p_cc = gpu.peak("cuda_core", {"double": "fp64", "float": "fp32"}[dtype])
    p_unit = gpu.peak(unit, precision)
    out = model.evaluate(K=stencil.K, t=fuse, beta=float(b), alpha=float(a), S=BYTES[dtype], B=gpu.bandwidth.value,
                         P_cc=p_cc, P_tc=p_unit, variant="base")
    tc = unit != "cuda_core"
    return {
        "beta": float(stencil.beta(fuse)),
        "alpha": float(a),
        "C": float(out["C_tc" if tc else "C_cc"]),
        "M": float(out["M_tc" if tc else "M"]),
        "I": float(out["I_tc" if tc else "I_cc"]),
        "ridge": float(out["rho_tc" if tc else "rho_cc"]),
        "bound": ("memory", "compute")[int(out["bound_tc" if tc else "bound_cc"])],
        "gstencils": float(out["gstencils_tc" if tc else "gstencils_cc"]),
        "R": float(out["R"]),
        "scenario": int(out["scenario"]),
        "threshold": float(out["beta_threshold"]),
    }


# impl, stencil, t, β printed, α printed, dtype, C, M, I
TABLE2 = [
    ("EBISU", "Box-2D1R", 3, None, None, "double", "54", "16", "3.38"),
    ("EBISU", "Box-2D3R", 1, None, None, "double", "98", "16", "6.12"),
    ("EBISU", "Box-2D1R", 7, None, None, "float", "126", "8", "15.75"),
    ("EBISU", "Box-2D7R", 1, None, None, "float", "450", "8", "56.25"),
    ("ConvStencil", "Box-2D1R", 3, "1.81", "0.5", "double", "196", "16", "12.25"),
    ("ConvStencil", "Box-2D3R", 1, "1", "0.5", "double", "196", "16", "12.25"),
    ("ConvStencil", "Box-2D1R", 7, "3.57", "0.5", "float", "900", "8", "112.50"),
    ("ConvStencil", "Box-2D7R", 1, "1", "0.5", "float", "900", "8", "112.50"),
    ("SPIDER", "Box-2D1R", 7, "3.57", "15/32", "float", "960", "8", "120.00"),
    ("SPIDER", "Box-2D7R", 1, "1", "15/32", "float", "960", "8", "120.00"),
]

# case, stencil, t, dtype, (CC impl, I, ridge, bound, measured), (TC impl, I, ridge, bound, measured, α), scenario
TABLE3 = [
    (1, "Box-2D1R", 3, "double", ("EBISU", "3.38", "5", "memory", 260.90),
     ("ConvStencil", "12.25", "10", "compute", 190.14, None), 2),
    (2, "Box-2D3R", 1, "double", ("EBISU", "6.13", "5", "compute", 64.05),
     ("ConvStencil", "12.25", "10", "compute", 63.33, None), 4),
    (3, "Box-2D1R", 7, "float", ("EBISU", "15.75", "10", "compute", 318.31),
     ("SPIDER", "120.00", "161", "memory", 1002.94, None), 3),
    (4, "Box-2D7R", 1, "float", ("EBISU", "21.58", "10", "compute", 50.35),
     ("SPIDER", "120.00", "161", "memory", 143.28, None), 3),
    (5, "Box-3D1R", 3, "double", ("EBISU", "10.13", "5", "compute", 37.74),
     ("ConvStencil", "85.75", "10", "compute", 24.63, None), 4),
    (6, "Box-3D1R", 7, "float", ("EBISU", "47.25", "10", "compute", 71.23),
     ("SPIDER", "1795.21", "161", "compute", 51.13, Fraction(47, 100)), 4),
]
#: The one printed value that contradicts the paper's own eq. 8 (225·1/4 = 56.25).
INCONSISTENT = {("table3", 4, "I_cc"): "printed 21.58, but eq. 8 gives K·t/S = 225·1/4 = 56.25"}

# impl, stencil, t, dtype, I, ridge, bound, measured
TABLE4 = [
    ("SPIDER-Dense", "Box-2D1R", 7, "float", "120", "81", "compute", 327.39),
    ("SPIDER", "Box-2D1R", 7, "float", "120", "161", "memory", 1002.94),
]


def table2(gpu: GpuSpec) -> list[Row]:
    rows = []
    for impl, st, t, beta_p, alpha_p, dtype, c_p, m_p, i_p in TABLE2:
        v = _evaluate(impl, st, t, dtype, gpu)
        row = Row(f"{impl} {st} t={t} {dtype}")
        if beta_p is not None:
            row.cells.append(Cell("β", beta_p, v["beta"]))
            alpha_cell = Cell("α", alpha_p, v["alpha"])
            if "/" in alpha_p:
                alpha_cell = Cell("α", alpha_p, str(Fraction(v["alpha"]).limit_denominator(64)))
            row.cells.append(alpha_cell)
        row.cells += [Cell("C", c_p, v["C"]), Cell("M", m_p, v["M"]), Cell("I", i_p, v["I"])]
        rows.append(row)
    return rows


def table3(gpu: GpuSpec) -> list[Row]:
    rows = []
    for case, st, t, dtype, cc, tc, scen in TABLE3:
        cc_impl, cc_i, cc_ridge, cc_bound, cc_meas = cc
        tc_impl, tc_i, tc_ridge, tc_bound, tc_meas, tc_alpha = tc
        vc = _evaluate(cc_impl, st, t, dtype, gpu)
        vt = _evaluate(tc_impl, st, t, dtype, gpu, tc_alpha)
        row = Row(f"case {case}: {st} t={t} {dtype}, {cc_impl} vs {tc_impl}")
        note = INCONSISTENT.get(("table3", case, "I_cc"), "")
        row.cells += [
            Cell(f"{cc_impl} I", cc_i, vc["I"], note),
            Cell(f"{cc_impl} ridge", cc_ridge, vc["ridge"]),
            Cell(f"{cc_impl} bound", cc_bound, vc["bound"]),
            Cell(f"{tc_impl} I", tc_i, vt["I"]),
            Cell(f"{tc_impl} ridge", tc_ridge, vt["ridge"]),
            Cell(f"{tc_impl} bound", tc_bound, vt["bound"]),
            Cell("scenario", str(scen), str(vt["scenario"])),
        ]
        measured_ratio = tc_meas / cc_meas
        row.note = (f"model bound {vc['gstencils']:.1f} vs {vt['gstencils']:.1f} GStencils/s, R = {vt['R']:.3f}; "
                    f"paper measured {cc_meas} vs {tc_meas} (ratio {measured_ratio:.2f})")
        if vt["scenario"] == 4:
            row.note += f"; β = {vt['beta']:.3f} vs α·P_tc/P_cc = {vt['threshold']:.3f}"
        if tc_alpha is not None:
            row.note += f"; α = {float(tc_alpha)} as printed (15/32 gives I = {_evaluate(tc_impl, st, t, dtype, gpu)['I']:.2f})"
        rows.append(row)
    return rows


def table4(gpu: GpuSpec) -> list[Row]:
    rows = []
    for impl, st, t, dtype, i_p, ridge_p, bound_p, meas in TABLE4:
        v = _evaluate(impl, st, t, dtype, gpu)
        row = Row(f"{impl} {st} t={t} {dtype}")
        row.cells += [Cell("I", i_p, v["I"]), Cell("ridge", ridge_p, v["ridge"]), Cell("bound", bound_p, v["bound"])]
        row.note = f"model bound {v['gstencils']:.1f} GStencils/s; paper measured {meas}"
        rows.append(row)
    return rows


def paper_gpu() -> GpuSpec:
    """The paper's GPU, from the bundled spec file (never a user's override)."""
    return bundled_spec(PAPER_GPU)


def all_tables(gpu: GpuSpec | None = None) -> dict[str, list[Row]]:
    gpu = gpu or paper_gpu()
    return {"Table 2": table2(gpu), "Table 3": table3(gpu), "Table 4": table4(gpu)}


def _shown(cell: Cell) -> str:
    if isinstance(cell.value, str):
        return cell.value
    if float(cell.value).is_integer():
        return str(int(cell.value))
    decimals = max(len(cell.printed.split(".")[1]) if cell.printed and "." in cell.printed else 0, 2)
    return f"{cell.value:.{decimals}f}"


def format_tables(tables: dict[str, list[Row]], gpu: GpuSpec | None = None) -> str:
    """The tables as text; ``gpu`` is the spec they were computed on (default: the paper's)."""
    gpu = gpu or paper_gpu()
    origin = "bundled" if gpu.bundled else "user"
    out = [f"Model (tcadvisor, on the {origin} {gpu.name} spec, {gpu.path}) next to the paper's printed values.",
           "A cell matches when the model's value rounds to the printed one.", ""]
    mismatches = 0
    for title, rows in tables.items():
        out.append(title)
        for row in rows:
            out.append(f"  {row.label}")
            cells = []
            for cell in row.cells:
                mark = "✓" if cell.ok else ("✗" if cell.ok is False else " ")
                if cell.ok is False:
                    mismatches += 1
                text = f"{cell.name} {_shown(cell)} [paper {cell.printed}] {mark}"
                if cell.note:
                    text += f" ({cell.note})"
                cells.append(text)
            out.append("    " + "; ".join(cells))
            if row.note:
                out.append(f"    {row.note}")
        out.append("")
    expected = len(INCONSISTENT)
    out.append(f"{mismatches} printed value(s) differ from the model; {expected} of them flagged as the paper's own "
               "inconsistency (explained beside the value).")
    return "\n".join(out)
