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
# Shared with the modules that add subcommands; importable from here for older callers.
from .queryargs import add_query_arguments, advice_from_args  # noqa: F401


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line, exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tcadvisor", description="Should this stencil run on CUDA cores, dense Tensor Cores or "
                     "Sparse Tensor Cores, and with what fusion depth?")
    parser.add_argument("--version", action="version", version=f"tcadvisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("advise", help="compare the execution units for one stencil and recommend one")
    add_query_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--run", action="store_true", help="then run the recommendation and the best other unit on this "
                                                      "GPU with the bundled kernels: measured vs predicted")

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


def cmd_advise(args) -> int:
    from .report import advice_dict, format_advice

    if args.run:  # advise, then measure on this GPU (tcadvisor/validate/advise_run.py)
        from .validate.advise_run import advise_and_run

        return advise_and_run(args, advice_from_args)
    adv = advice_from_args(args)
    print(json.dumps(advice_dict(adv), indent=2) if args.json else format_advice(adv))
    return 0


def cmd_explain(args) -> int:
    from .explanation import explain

    print(explain(advice_from_args(args), latex=args.latex))
    return 0


def _instruction_rates(spec) -> dict:
    """unit -> precision -> [{shape, tflops, own, source}] for every shape the spec lists."""
    out = {}
    for unit, per in spec.mma_shapes.items():
        for precision, shapes in per.items():
            rates = [(shape, spec.instruction_peak(unit, precision, shape)) for shape in shapes]
            out.setdefault(unit, {})[precision] = [
                {"shape": str(shape), "tflops": rate.value / 1e12, "own": not rate.inherited, "source": rate.source}
                for shape, rate in rates]
    return out


def cmd_gpus(args) -> int:
    from .hardware import PRECISIONS, UNITS, catalog
    from .report import text_table, fnum

    specs = sorted(catalog().values(), key=lambda s: (not s.default, s.vendor != "NVIDIA", s.key))
    if args.json:
        out = [{"key": s.key, "name": s.name, "vendor": s.vendor, "aliases": list(s.aliases),
                "default": s.default, "bundled": s.bundled, "path": str(s.path), "schema": s.schema,
                "compute_capability": ".".join(map(str, s.compute_capability)) if s.compute_capability else None,
                "bandwidth_gbs": s.bandwidth.value / 1e9,
                "peak_tflops": {u: {p: r.value / 1e12 for p, r in s.peaks.get(u, {}).items()} for u in UNITS},
                "instructions": _instruction_rates(s),
                "warpgroup_mma": {u: {p: [{"shape": str(sh), "tflops": r.value / 1e12, "source": r.source}
                                          for sh, r in sorted(per_shape.items(), key=lambda kv: kv[0].n)]
                                      for p, per_shape in per.items()}
                                  for u, per in s.warpgroup_rates.items()}}
               for s in specs]
        print(json.dumps(out, indent=2))
        return 0
    headers = ["key", "aliases", "GB/s", "CC fp64", "CC fp32", "TC fp64", "TC tf32", "TC fp16", "SpTC tf32", "SpTC fp16"]
    cols = [("cuda_core", "fp64"), ("cuda_core", "fp32"), ("tensor_core", "fp64"), ("tensor_core", "tf32"),
            ("tensor_core", "fp16"), ("sparse_tensor_core", "tf32"), ("sparse_tensor_core", "fp16")]
    rows = []
    for s in specs:
        mark = (" *" if s.default else "") + ("" if s.bundled else " †")
        row = [s.key + mark, ",".join(s.aliases[:3]), fnum(s.bandwidth.value / 1e9)]
        row += [fnum(s.peak(u, p) / 1e12) if s.has(u, p) else "–" for u, p in cols]
        rows.append(row)
    print("\n".join(text_table(headers, rows, "llrrrrrrrr")))
    print("\nPeaks in TFLOP/s (sparse: the vendor's dense-equivalent 'with sparsity' rate); * = embedded default.")
    user = [s for s in specs if not s.bundled]
    if user:
        print("† = the user's spec file: " + "; ".join(f"{s.key} {s.path}" for s in user))
    short = {"tensor_core": "TC", "sparse_tensor_core": "SpTC"}
    per_shape = []
    for s in specs:
        for unit, per in _instruction_rates(s).items():
            for precision, rates in per.items():
                if any(r["own"] for r in rates):  # only where the spec says more than one rate per precision
                    listed = ", ".join(f"{r['shape']} {r['tflops']:.6g}{'' if r['own'] else '='}" for r in rates)
                    per_shape.append([s.key, f"{short[unit]} {precision}", listed])
    if per_shape:
        print("\nPer-instruction peaks in TFLOP/s (= : no rate of its own in the spec; the precision's rate applies):")
        print("\n".join(text_table(["key", "unit", "instruction peaks"], per_shape, "lll")))
    warpgroup = [[s.key, f"{short[unit]} {precision}",
                  ", ".join(f"{shape} {rate.value / 1e12:.4g}" for shape, rate in sorted(per_shape.items(),
                                                                                      key=lambda kv: kv[0].n))]
                 for s in specs for unit, per in s.warpgroup_rates.items() for precision, per_shape in per.items()]
    if warpgroup:
        print("\nwgmma (warpgroup, sm_90a) in TFLOP/s, measured beside the mma above; no bundled kernel issues it, so "
              "the model never counts these as an executed rate:")
        print("\n".join(text_table(["key", "unit", "wgmma rates by tile width N"], warpgroup, "lll")))
    print(f"\nPrecisions a spec may list: {', '.join(PRECISIONS)}. Every number's source is in its YAML file "
          "('tcadvisor gpus --json' shows each instruction's).")
    return 0


def _tiling_dict(tiling) -> dict | None:
    """A profile's tiling section as JSON (``None``: not declared, so the refined model does not apply)."""
    if tiling is None:
        return None
    out = {"tile": dict(tiling.tile), "stream": tiling.stream, "threads": tiling.threads,
           "shared_memory": tiling.shared_memory, "registers": tiling.registers, "launch": tiling.launch}
    return {k: v for k, v in out.items() if v not in (None, {})}


def cmd_impls(args) -> int:
    from .impls import catalog, is_default
    from .report import text_table, falpha

    profs = sorted(catalog().values(), key=lambda p: (["cuda_core", "tensor_core", "sparse_tensor_core"].index(p.unit), p.name))
    if args.json:
        out = [{"name": p.name, "unit": p.unit, "fusion": p.fusion, "precisions": {k: list(v) for k, v in p.precisions.items()},
                "mma": {k: [str(x) for x in v] for k, v in p.mma.items()},
                "alpha_paper": str(p.alpha.paper) if p.alpha and p.alpha.paper is not None else None,
                "alpha_construction": p.alpha.construction if p.alpha else None,
                "default": bool(p.kernel), "default_base": is_default(p), "kernel": p.kernel,
                "reference": p.reference, "summary": p.summary,
                "tiling": _tiling_dict(p.tiling)}
               for p in profs]
        print(json.dumps(out, indent=2))
        return 0
    rows = []
    for p in profs:
        precs = ", ".join(f"{d}:{'/'.join(v)}" for d, v in p.precisions.items())
        a_paper = falpha(p.alpha.paper) if p.alpha and p.alpha.paper is not None else "–"
        a_con = p.alpha.construction if p.alpha and p.alpha.construction else "–"
        name = p.name + (" *" if p.kernel else "") + (" +" if is_default(p) else "")
        rows.append([name, p.unit, p.fusion, precs, a_paper if p.alpha else "1", a_con if p.alpha else "–"])
    print("\n".join(text_table(["impl", "unit", "fusion", "precisions", "α paper", "α construction"], rows, "llllll")))
    print("\n* = a bundled kernel, its unit's default ('advise' evaluates it with the refined model wherever it "
          "runs the stencil here); + = a default under --model base (the first that runs the dtype and stencil, "
          "in the order EBISU, Temporal-blocking; ConvStencil, TCStencil, tcadvisor-tc; SPIDER, SparStencil, "
          "tcadvisor-sptc). References and how each α is obtained:")
    for p in profs:
        print(f"  {p.name}: {p.reference}")
        if p.alpha and p.alpha.paper_note:
            print(f"    α paper: {p.alpha.paper_note}")
        if p.alpha and p.alpha.construction_note:
            print(f"    α constructed: {p.alpha.construction_note}")
    return 0


def cmd_reproduce(args) -> int:
    from .hardware import catalog
    from .paper import PAPER_GPU, all_tables, format_tables, paper_gpu

    gpu = paper_gpu()  # the bundled spec, whatever the user's spec directories hold
    override = catalog().get(PAPER_GPU)
    if override is not None and not override.bundled:
        print(f"tcadvisor: note: reproduce-paper uses the bundled spec {gpu.path} (the paper's GPU), "
              f"not {override.path}", file=sys.stderr)
    tables = all_tables(gpu)
    if args.json:
        out = {title: [{"row": r.label, "note": r.note,
                        "cells": [{"name": c.name, "printed": c.printed, "model": c.value, "match": c.ok,
                                   "note": c.note} for c in r.cells]} for r in rows]
               for title, rows in tables.items()}
        out["spec"] = {"key": gpu.key, "name": gpu.name, "path": str(gpu.path), "bundled": gpu.bundled}
        print(json.dumps(out, indent=2))
    else:
        print(format_tables(tables, gpu))
    return 0


#: Modules that add subcommands: ``register(subparsers, COMMANDS)``.  They must
#: import their heavy dependencies (plotly, CuPy) inside the handlers only.
EXTENSIONS = ("tcadvisor.plots.commands", "tcadvisor.gpu.commands", "tcadvisor.validate.commands",
              "tcadvisor.transforms.commands")

COMMANDS = {
    "advise": cmd_advise,
    "explain": cmd_explain,
    "gpus": cmd_gpus,
    "impls": cmd_impls,
    "reproduce-paper": cmd_reproduce,
}


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` runs (atomic writers remove their
    temporary files) before the CLI exits with status 143."""


def _on_sigterm(signum, frame):  # noqa: ARG001 - the signal handler's signature
    raise Terminated()


def _install_sigterm():
    """The SIGTERM handler (main thread only); returns what to restore, or None."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        return None


#: The packages pyproject.toml requires, by the name they are imported as: a command that finds one missing (a
#: Python set up by hand, a GPU machine that cannot fetch it) says so in one line instead of a traceback.
REQUIRED_PACKAGES = {"sympy": "sympy", "numpy": "numpy", "scipy": "scipy", "pandas": "pandas", "plotly": "plotly",
                     "yaml": "pyyaml", "pycparser": "pycparser"}


def main(argv: Sequence[str] | None = None) -> int:
    import signal

    from .files import safe_stdio

    safe_stdio()  # 'α' on an ASCII terminal (PYTHONIOENCODING=ascii, LANG=C) is escaped, never a crash
    previous = _install_sigterm()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return COMMANDS[args.command](args)
    except TcAdvisorError as exc:
        print(f"tcadvisor: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in REQUIRED_PACKAGES:
            raise  # one of tcadvisor's own modules: a bug, shown whole
        print(f"tcadvisor: error: this command needs the Python package {REQUIRED_PACKAGES[missing]!r}, which is "
              f"not installed here (pip install {REQUIRED_PACKAGES[missing]})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tcadvisor: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("tcadvisor: terminated (SIGTERM); no file was left half-written", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
