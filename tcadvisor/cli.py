"""The ``tcadvisor`` command line.

Every problem with the user's input is a :class:`~tcadvisor.errors.TcAdvisorError`,
printed as one line on stderr with exit status 2 — never a traceback.  Heavy
modules (plotting, GPU code) are imported inside the subcommands that need them
so that ``tcadvisor advise`` starts fast.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Sequence

from . import __version__
from .errors import TcAdvisorError


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line, exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _positive_int(name: str):
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
        return value
    return convert


def add_query_arguments(p: argparse.ArgumentParser, fuse_default=None) -> None:
    p.add_argument("stencil", help="stencil name (Box-3D1R, Star-2D2R, Heat-2D, Box-2D9P, 1D5P, ...) "
                                   "or a file of offsets (.txt, .yaml, .json)")
    p.add_argument("--fuse", "-t", type=_positive_int("--fuse"), default=fuse_default,
                   help="fusion depth t (time steps per sweep); default: each unit at its best depth"
                   if fuse_default is None else f"fusion depth t (default {fuse_default})")
    p.add_argument("--dtype", default="double", help="double, float, half or bfloat16 (default double)")
    p.add_argument("--gpu", help="GPU spec: a name or alias from 'tcadvisor gpus', or a YAML file; "
                                 "default: the detected GPU, else the embedded A100 80GB PCIe")
    p.add_argument("--impl", action="append", default=[], metavar="NAME",
                   help="implementation profile for its unit (repeatable; see 'tcadvisor impls')")
    p.add_argument("--alpha", help="α for Tensor Core options: 'paper' (default where published), "
                                   "'constructed' (counted from the transformation's operands), or a number in (0, 1]")
    p.add_argument("--max-fuse", type=_positive_int("--max-fuse"), default=16,
                   help="deepest fusion searched for the best depth (default 16)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tcadvisor", description="Should this stencil run on CUDA cores, dense Tensor Cores or "
                     "Sparse Tensor Cores, and with what fusion depth?")
    parser.add_argument("--version", action="version", version=f"tcadvisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("advise", help="compare the execution units for one stencil and recommend one")
    add_query_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")

    p = sub.add_parser("explain", help="show the model's equations for a query, symbolically and with numbers")
    add_query_arguments(p, fuse_default=1)
    p.add_argument("--latex", action="store_true", help="print the equations as LaTeX")

    p = sub.add_parser("gpus", help="list the bundled GPU specs")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("impls", help="list the implementation profiles")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("reproduce-paper", help="the paper's Tables 2-4 computed by the model, beside the printed values")
    p.add_argument("--json", action="store_true")

    for module in EXTENSIONS:
        importlib.import_module(module).register(sub, COMMANDS)
    return parser


def advice_from_args(args):
    from .advisor import AlphaChoice, advise
    from .dtypes import parse_dtype
    from .hardware import resolve_gpu
    from .impls import find_impl
    from .stencil import parse_stencil

    stencil = parse_stencil(args.stencil)
    dtype = parse_dtype(args.dtype)
    resolved = resolve_gpu(args.gpu)
    impls = {}
    for name in args.impl:
        prof = find_impl(name)
        if prof.unit in impls:
            raise TcAdvisorError(f"--impl {name}: {impls[prof.unit].name} was already chosen for {prof.unit}")
        impls[prof.unit] = prof
    adv = advise(stencil, dtype, resolved.spec, fuse=args.fuse, impls=impls,
                 alpha=AlphaChoice.parse(args.alpha), max_fuse=args.max_fuse)
    if resolved.note:  # said only once the query is valid, so an error stays a single line
        print(f"tcadvisor: {resolved.note}", file=sys.stderr)
    return adv


def cmd_advise(args) -> int:
    from .report import advice_dict, format_advice

    adv = advice_from_args(args)
    print(json.dumps(advice_dict(adv), indent=2) if args.json else format_advice(adv))
    return 0


def cmd_explain(args) -> int:
    from .explain import explain

    print(explain(advice_from_args(args), latex=args.latex))
    return 0


def cmd_gpus(args) -> int:
    from .hardware import PRECISIONS, UNITS, catalog
    from .report import text_table, fnum

    specs = sorted(catalog().values(), key=lambda s: (not s.default, s.vendor != "NVIDIA", s.key))
    if args.json:
        out = [{"key": s.key, "name": s.name, "vendor": s.vendor, "aliases": list(s.aliases),
                "default": s.default, "bandwidth_gbs": s.bandwidth.value / 1e9,
                "peak_tflops": {u: {p: r.value / 1e12 for p, r in s.peaks.get(u, {}).items()} for u in UNITS}}
               for s in specs]
        print(json.dumps(out, indent=2))
        return 0
    headers = ["key", "aliases", "GB/s", "CC fp64", "CC fp32", "TC fp64", "TC tf32", "TC fp16", "SpTC tf32", "SpTC fp16"]
    cols = [("cuda_core", "fp64"), ("cuda_core", "fp32"), ("tensor_core", "fp64"), ("tensor_core", "tf32"),
            ("tensor_core", "fp16"), ("sparse_tensor_core", "tf32"), ("sparse_tensor_core", "fp16")]
    rows = []
    for s in specs:
        row = [s.key + (" *" if s.default else ""), ",".join(s.aliases[:3]), fnum(s.bandwidth.value / 1e9)]
        row += [fnum(s.peak(u, p) / 1e12) if s.has(u, p) else "–" for u, p in cols]
        rows.append(row)
    print("\n".join(text_table(headers, rows, "llrrrrrrrr")))
    print("\nPeaks in TFLOP/s (sparse: the vendor's dense-equivalent 'with sparsity' rate); * = embedded default.")
    print(f"Precisions a spec may list: {', '.join(PRECISIONS)}. Every number's source is in its YAML file.")
    return 0


def cmd_impls(args) -> int:
    from .impls import DEFAULT_IMPLS, catalog
    from .report import text_table, falpha

    profs = sorted(catalog().values(), key=lambda p: (["cuda_core", "tensor_core", "sparse_tensor_core"].index(p.unit), p.name))
    if args.json:
        out = [{"name": p.name, "unit": p.unit, "fusion": p.fusion, "precisions": {k: list(v) for k, v in p.precisions.items()},
                "mma": {k: [str(x) for x in v] for k, v in p.mma.items()},
                "alpha_paper": str(p.alpha.paper) if p.alpha and p.alpha.paper is not None else None,
                "alpha_construction": p.alpha.construction if p.alpha else None,
                "default": DEFAULT_IMPLS[p.unit] == p.name, "reference": p.reference, "summary": p.summary}
               for p in profs]
        print(json.dumps(out, indent=2))
        return 0
    rows = []
    for p in profs:
        precs = ", ".join(f"{d}:{'/'.join(v)}" for d, v in p.precisions.items())
        a_paper = falpha(p.alpha.paper) if p.alpha and p.alpha.paper is not None else "–"
        a_con = p.alpha.construction if p.alpha and p.alpha.construction else "–"
        name = p.name + (" *" if DEFAULT_IMPLS[p.unit] == p.name else "")
        rows.append([name, p.unit, p.fusion, precs, a_paper if p.alpha else "1", a_con if p.alpha else "–"])
    print("\n".join(text_table(["impl", "unit", "fusion", "precisions", "α paper", "α construction"], rows, "llllll")))
    print("\n* = the default for its unit. References and how each α is obtained:")
    for p in profs:
        print(f"  {p.name}: {p.reference}")
        if p.alpha and p.alpha.paper_note:
            print(f"    α paper: {p.alpha.paper_note}")
        if p.alpha and p.alpha.construction_note:
            print(f"    α constructed: {p.alpha.construction_note}")
    return 0


def cmd_reproduce(args) -> int:
    from .paper import all_tables, format_tables

    tables = all_tables()
    if args.json:
        out = {title: [{"row": r.label, "note": r.note,
                        "cells": [{"name": c.name, "printed": c.printed, "model": c.value, "match": c.ok,
                                   "note": c.note} for c in r.cells]} for r in rows]
               for title, rows in tables.items()}
        print(json.dumps(out, indent=2))
    else:
        print(format_tables(tables))
    return 0


#: Modules that add subcommands: ``register(subparsers, COMMANDS)``.  They must
#: import their heavy dependencies (plotly, CuPy) inside the handlers only.
EXTENSIONS = ("tcadvisor.plots.commands", "tcadvisor.gpu.commands", "tcadvisor.transforms.commands")

COMMANDS = {
    "advise": cmd_advise,
    "explain": cmd_explain,
    "gpus": cmd_gpus,
    "impls": cmd_impls,
    "reproduce-paper": cmd_reproduce,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TcAdvisorError as exc:
        print(f"tcadvisor: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
