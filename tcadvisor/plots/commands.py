"""CLI subcommands for figures (``map``, ``roofline``, ``figures``).

Only argparse lives at the top of this module: ``tcadvisor advise`` imports it
to build the parser and must not pay for plotly or pandas, so the figure
modules are imported inside the handlers.
"""
from __future__ import annotations

import re
import sys

from ..errors import TcAdvisorError
from ..arguments import parse_int_list
from ..queryargs import DEFAULT_FUSES, DEFAULT_RADII, add_model_argument, add_query_arguments, range_text

#: Shared with the Python API, which checks its arguments the same way.
__all__ = ["parse_int_list", "gpus_from_arg", "impls_from_args", "register"]


def gpus_from_arg(text: str | None):
    """``--gpu a100,h100``: each name through :func:`~tcadvisor.hardware.find_spec`; none: the detected GPU."""
    from ..hardware import find_spec, resolve_gpu

    if not text:
        resolved = resolve_gpu(None)
        return [resolved.spec], resolved.note
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    if not names:
        raise TcAdvisorError(f"--gpu {text!r} names no GPU; expected names such as a100,h100 (see 'tcadvisor gpus')")
    return [find_spec(n) for n in names], None


def impls_from_args(names: list[str]) -> dict:
    """Repeated ``--impl NAME``: one profile per unit, replacing that unit's default."""
    from ..arguments import as_impls

    return as_impls(list(names))


def _wrote(path, what: str) -> None:
    print(f"wrote {path} ({what})")


# --------------------------------------------------------------------------- handlers


def cmd_map(args) -> int:
    from ..alpha_policy import AlphaChoice
    from ..dtypes import parse_dtype
    from ..stencil import check_fuse, check_radius
    from .output import check_output_files, write_csv, write_figure

    dtype = parse_dtype(args.dtype)
    radii = parse_int_list(args.radii, "--radii", check_radius)
    fuses = parse_int_list(args.fuse, "--fuse", check_fuse)
    gpus, note = gpus_from_arg(args.gpu)
    impls = impls_from_args(args.impl)
    alpha_choice = AlphaChoice.parse(args.alpha)
    measured = _measured(args.measured, gpus)  # a wrong file is refused before the sweep
    out = args.output or f"map-{args.shape}{args.dims}d-{'-'.join(g.short for g in gpus)}-{dtype}.html"
    # every output before any work: its format and exporter, a writable place, no two options on one file
    check_output_files([("-o", out), ("--csv", args.csv)], figure_options=("-o",))

    from ..progress import Progress, wanted
    from .maps import map_data, map_figure

    with Progress("map", enabled=wanted(quiet=args.quiet)) as progress:
        data = map_data(args.shape, args.dims, dtype, gpus, radii=radii, fuses=fuses, impls=impls,
                        alpha_choice=alpha_choice, model=args.model, progress=progress.update, measured=measured)
        progress.done(f"{len(gpus) * len(radii)} configurations ({len(gpus)} GPU{'s' if len(gpus) > 1 else ''} "
                      f"× {len(radii)} radii × {len(fuses)} depths)")
    if note:
        print(f"tcadvisor: {note}", file=sys.stderr)
    fig = map_figure(data, title=args.title)
    path = write_figure(fig, out)
    _wrote(path, f"sweet-spot map, {len(gpus)} GPU{'s' if len(gpus) > 1 else ''}, "
                 f"{len(radii)} radii × {len(fuses)} depths")
    if args.csv:
        _wrote(write_csv(data, args.csv), f"map data, {len(data)} rows")
    return 0


def _measured(path: str | None, gpus):
    """``--measured FILE`` read and matched to the GPUs drawn (one-line refusals), or None; a note on stderr
    names the GPU rows it is drawn on when the file matches only some of several."""
    if not path:
        return None
    from .measured import load_measured, runs_for_gpus

    measured = load_measured(path)
    matched = runs_for_gpus(measured, gpus)
    if len(matched) < len(gpus):
        rows = ", ".join(gpus[i].name for i in matched)
        devices = ", ".join(dict.fromkeys(device for device, _ in matched.values()))
        print(f"tcadvisor: --measured {path}: runs of {devices} drawn on the {rows} row"
              + ("s" if len(matched) > 1 else "") + " only", file=sys.stderr)
    return measured


def cmd_roofline(args) -> int:
    from ..queryargs import advice_from_args
    from .output import check_output_files, write_figure

    out = args.output or f"roofline-{re.sub(r'[^A-Za-z0-9]+', '', str(args.stencil))}.html"
    check_output_files([("-o", out)], figure_options=("-o",))
    measured = None
    if args.measured:  # an unreadable or malformed file is refused before the advice is computed
        from .measured import load_measured

        measured = load_measured(args.measured)
    advice = advice_from_args(args)

    from .roofline import roofline_figure

    path = write_figure(roofline_figure(advice, measured=measured), out)
    _wrote(path, f"roofline of {advice.stencil.name} on {advice.gpu.name}")
    return 0


def cmd_figures(args) -> int:
    """Write every figure that can be drawn; see the ``figures`` help for the exit status."""
    from pathlib import Path

    from ..hardware import find_spec
    from .output import FORMATS, check_exporter, check_writable_directory

    formats = [f.strip().lower().lstrip(".") for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise TcAdvisorError(f"--format {args.format!r}: expected a list drawn from {', '.join(FORMATS)}")
    formats = list(dict.fromkeys(formats))
    for fmt in formats:  # before anything is drawn or written: no partial directory
        check_exporter(fmt)
    check_writable_directory(args.output, f"the figures into {args.output!r}")
    gpu = find_spec(args.gpu)

    from .paper_figures import FIGURES, write_figures

    if args.only:
        unknown = [n for n in args.only.split(",") if n.strip() and n.strip() not in FIGURES]
        if unknown:
            raise TcAdvisorError(f"--only {', '.join(unknown)}: unknown figure; expected some of {', '.join(FIGURES)}")
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else list(FIGURES)
    from ..progress import Progress, wanted

    with Progress("figures", enabled=wanted(quiet=args.quiet)) as progress:
        result = write_figures(Path(args.output), gpu, names=names, formats=formats,
                               self_contained=args.self_contained, progress=progress.update)
        progress.done(f"{len(names) - len(result.skipped) - len(result.failed)} of {len(names)} figures drawn")
    for path, title in result.written:
        _wrote(path, title)
    for name, reason in result.skipped:
        print(f"tcadvisor: skipped {name}: {reason}", file=sys.stderr)
    for name, exc in result.failed:
        print(f"tcadvisor: {name} failed with an internal error (a bug in tcadvisor, please report it): "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
    if result.failed:  # every other page and the index are written; now show the bug's traceback (exit 1)
        raise result.failed[0][1]
    return 0


# --------------------------------------------------------------------------- parser

FIGURES_EPILOG = """Every figure that can be drawn for the GPU is written; one that cannot (a GPU
without Sparse Tensor Cores has no Fig. 13) is skipped with one line on stderr
saying why, and index.html lists the pages written and those skipped.

Exit status: 0 when at least one figure was written (skipped ones are not
errors); 2, with one line, when no figure can be drawn for this GPU or an
argument is wrong or a file cannot be written (a file being replaced is kept
intact); 1 only for an internal error in tcadvisor, after every other page and
the index are written.

HTML pages share one copy of Plotly's JavaScript, plotly-<version>.min.js,
written next to them (offline, about 4.8 MB once instead of once per page);
keep it with the pages, or pass --self-contained for pages that each embed it.
A missing output directory (and its missing parents) is created and named on
stderr."""

MEASURED_HELP = ("recorded runs to draw on the prediction: the results.json of 'tcadvisor validate' or a corpus.csv "
                 "(benchmarks/record_corpus.py, calibrate --fit), of the GPU drawn;")
QUIET_HELP = "no progress line on stderr (there is one only when stderr is a terminal)"

OUTPUT_NOTE = ("Files are replaced atomically (a full disk keeps the previous file); missing parent directories "
               "are created and named on stderr.")


def register(sub, commands: dict) -> None:
    import argparse

    p = sub.add_parser("map", help="sweet-spot map: speedup of dense and sparse Tensor Cores over CUDA cores "
                                   "across radius x fusion depth (HTML, PNG, SVG; --csv for the data)",
                       epilog=OUTPUT_NOTE)
    p.add_argument("--gpu", help="GPU spec, or several separated by commas (a100,h100,h200,b200) drawn side by "
                                 "side on one colour scale; default: the detected GPU, else the A100 80GB PCIe")
    p.add_argument("--dtype", default="double", help="double, float, half or bfloat16 (default double)")
    p.add_argument("--shape", default="box", choices=("box", "star"), help="stencil shape (default box)")
    p.add_argument("--dims", default=2, type=int, choices=(1, 2, 3), help="dimensionality (default 2)")
    p.add_argument("--radii", default=range_text(DEFAULT_RADII), metavar="RANGE",
                   help=f"radii r, a range or list (default {range_text(DEFAULT_RADII)})")
    p.add_argument("--fuse", "-t", default=range_text(DEFAULT_FUSES), metavar="RANGE",
                   help=f"fusion depths t, a range or list (default {range_text(DEFAULT_FUSES)})")
    p.add_argument("--impl", action="append", default=[], metavar="NAME",
                   help="implementation profile for its unit (repeatable; see 'tcadvisor impls')")
    p.add_argument("--alpha", help="α for Tensor Core units: 'paper', 'constructed', or a number in (0, 1] "
                                   "(default: the advisor's; hover a cell for α and its source)")
    add_model_argument(p, None)
    p.add_argument("--title", help="figure title (default: describes the map)")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="output file: .html (self-contained: Plotly's JavaScript embedded, opens offline, one "
                        "file to mail), .png or .svg (default map-<shape><dims>d-<gpus>-<dtype>.html); missing "
                        "parent directories are created and named on stderr")
    p.add_argument("--csv", metavar="FILE", help="also write the map's data (one row per GPU, r, t and unit, "
                                                 "with α, its source and the MMA instruction)")
    p.add_argument("--measured", metavar="FILE", help=MEASURED_HELP + " in each cell: the measured fastest unit "
                                                      "beside the predicted one, mismatches ringed")
    commands["map"] = cmd_map

    p = sub.add_parser("roofline", help="roofline of one GPU with the CUDA-core, Tensor Core and Sparse Tensor "
                                        "Core ceilings and the stencil's operating points", epilog=OUTPUT_NOTE)
    add_query_arguments(p, model_default="base")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="output file: .html (self-contained, opens offline), .png or .svg "
                        "(default roofline-<stencil>.html); missing parent directories are created and named "
                        "on stderr")
    p.add_argument("--measured", metavar="FILE", help=MEASURED_HELP + " the measured operating points of this "
                                                      "stencil, dtype and depth beside the predicted ones")
    commands["roofline"] = cmd_roofline

    p = sub.add_parser("figures", help="every figure of the paper, regenerated from the model",
                       epilog=FIGURES_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", default="figures", metavar="DIR",
                   help="directory to write (default figures/); created, with its missing parents, if needed")
    p.add_argument("--gpu", default="a100-80gb-pcie", help="GPU spec (default: the paper's A100 80GB PCIe)")
    p.add_argument("--format", default="html", help="comma-separated formats: html, png, svg (default html)")
    p.add_argument("--only", metavar="NAMES", help="comma-separated figure names (default: all)")
    p.add_argument("--self-contained", action="store_true",
                   help="embed Plotly's JavaScript in every HTML page (about 4.8 MB each) instead of sharing "
                        "one plotly-<version>.min.js in the directory")
    p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    commands["figures"] = cmd_figures
