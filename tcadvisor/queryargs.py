"""What a query is made of, once: its command-line arguments and the default ranges it searches.

``advise``, ``explain``, ``roofline`` (and any command that answers one query)
share :func:`add_query_arguments` and :func:`advice_from_args`; ``map`` and the
Python API share the default depth and radius ranges.  Keeping them here, rather
than in :mod:`tcadvisor.cli`, lets the modules that add subcommands
(:mod:`tcadvisor.plots.commands`, ...) use them without importing the CLI that
imports them.  Only the standard library and :mod:`tcadvisor.errors` are
imported at the top (and :mod:`tcadvisor.search`, the default ranges, which is standard library only): the
parser is built for every command.
"""
from __future__ import annotations

import argparse
import sys

from .search import DEFAULT_FUSES, DEFAULT_MAX_FUSE, DEFAULT_RADII  # noqa: F401 (the query's default ranges)

#: Model variants ``--model`` accepts (:data:`tcadvisor.model.VARIANTS`, repeated here so that
#: building the parser does not import SymPy; a test keeps the two equal).
MODELS = ("base", "refined")


def range_text(values: range) -> str:
    """``range(1, 17)`` as the CLI writes it: ``1-16``."""
    return f"{values.start}-{values.stop - 1}"


def integer(name: str):
    """An argparse type: an integer, or a one-line usage error naming the option."""
    def convert(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer") from None
    return convert


def add_model_argument(p: argparse.ArgumentParser, default: str | None = "base") -> None:
    """``--model``.  ``default`` None: the advisor's own default (refined for the bundled kernels, base with
    ``--alpha paper``: :func:`tcadvisor.advisor.advise`)."""
    if default is None:
        text = ("refined (the default): the bundled kernels tcadvisor-cc, -tc and -sptc where they run this stencil "
                "here, with the terms of their launch plans (tile halos and loads, achievable ceilings, on-chip "
                "capacity), beside each unit's bound; base: the paper's roofline model with the published "
                "implementations (EBISU, ConvStencil, SPIDER, ...), the default with --alpha paper")
    else:
        text = ("base: the paper's roofline model with α and β (default); refined: adds the tile halos, "
                "tile loads, achievable ceilings, overlap and on-chip capacity of implementations that "
                "declare their tiling (the bundled kernels); others use the base model and the answer says so")
    p.add_argument("--model", default=default, type=str.lower, choices=MODELS, help=text)


def add_query_arguments(p: argparse.ArgumentParser, fuse_default: int | None = None,
                        model_default: str | None = None) -> None:
    """The arguments of one query: stencil, depth, dtype, GPU, implementations, α, depth search, model, grid, steps.

    ``model_default`` None is the advisor's default (the bundled kernels, refined);
    ``roofline`` draws the paper's roofs and keeps ``base``.
    """
    p.add_argument("stencil", help="stencil name (Box-3D1R, Star-2D2R, Heat-2D, Box-2D9P, 1D5P, ...), a file of "
                                   "offsets (.txt, .yaml, .json), a weight array (.npy) or a loop nest (.c, .h, .cpp, "
                                   ".cc, .cu); see docs/sources.md")
    p.add_argument("--fuse", "-t", type=integer("--fuse"), default=fuse_default,
                   help="fusion depth t (time steps per sweep); default: each unit at its best depth"
                   if fuse_default is None else f"fusion depth t (default {fuse_default})")
    p.add_argument("--dtype", default=None, help="double, float, half or bfloat16 (default: the element type of a "
                                                 ".npy stencil or a C file where it has one, else double)")
    add_source_arguments(p)
    p.add_argument("--gpu", help="GPU spec: a name or alias from 'tcadvisor gpus', or a YAML file; "
                                 "default: the detected GPU, else the embedded A100 80GB PCIe")
    p.add_argument("--impl", action="append", default=[], metavar="NAME",
                   help="implementation profile for its unit (repeatable; see 'tcadvisor impls')")
    p.add_argument("--alpha", help="α for Tensor Core options: default: constructed for this fused stencil and "
                                   "instruction wherever the implementation has a construction, else its published "
                                   "constant (and the answer says so); 'paper' (the published constants, as the "
                                   "paper's tables use them), 'constructed', or a number in [1e-6, 1]")
    p.add_argument("--max-fuse", type=integer("--max-fuse"), default=None,
                   help=f"deepest fusion searched for the best depth (default {DEFAULT_MAX_FUSE}; a --fuse beyond "
                        "it is searched too)")
    add_model_argument(p, model_default)
    p.add_argument("--grid", default=None, metavar="NxM[xK]",
                   help="the domain the refined model sizes the kernels' launches for, e.g. 10240x10240 or "
                        "512x512x512 (default: the bundled kernels' default grid, as 'tcadvisor run')")
    p.add_argument("--steps", type=integer("--steps"), default=None,
                   help="time steps in all: sweeps of t steps and a shallower sweep for the remainder, no depth "
                        "beyond it (default: one sweep of t steps at each depth, as 'tcadvisor run')")


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    """How a stencil is read from a ``.npy`` weight array or a C loop nest (:mod:`tcadvisor.sources`)."""
    p.add_argument("--field", metavar="NAME", help="C file: the array whose update is the stencil, where the loop "
                                                   "nest writes or reads several")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="set_values",
                   help="C file: a number for a symbolic coefficient (repeatable, e.g. --set dt=0.1); others are "
                        "generic non-zero weights and the answer says so")
    p.add_argument("--origin", metavar="I[,J[,K]]",
                   help=".npy: the index of the centre as SciPy's origin (n // 2 + origin along each axis; one "
                        "integer for all axes or one per axis, e.g. --origin=-1,0); needed for an even extent")
    p.add_argument("--flip", action="store_true",
                   help=".npy: the array is a convolution kernel (flipped along every axis); default: a correlation "
                        "kernel, as scipy.ndimage.correlate and PyTorch's conv2d take it")


def source_options(args) -> dict:
    """``--origin``, ``--flip``, ``--field`` and ``--set`` as :func:`tcadvisor.sources.read_path` takes them."""
    from .errors import TcAdvisorError

    values: dict[str, float] = {}
    for item in getattr(args, "set_values", None) or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        try:
            value = float(text) if sep and name else None
        except ValueError:
            value = None
        if value is None or value != value or value in (float("inf"), float("-inf")):
            raise TcAdvisorError(f"--set {item!r} is not NAME=VALUE with a finite number; expected e.g. --set dt=0.1")
        if name in values:
            raise TcAdvisorError(f"--set {name} is given twice ({values[name]:g} and {value:g}); give each once")
        values[name] = value
    origin = getattr(args, "origin", None)
    if origin is not None:
        try:
            parts = [int(v) for v in origin.split(",")]
        except ValueError:
            raise TcAdvisorError(f"--origin {origin!r} is not a list of integers; expected e.g. --origin=-1 or "
                                 "--origin=0,-1 (one per axis)") from None
        origin = parts[0] if len(parts) == 1 else tuple(parts)
    return {"origin": origin, "flip": bool(getattr(args, "flip", False)), "field": getattr(args, "field", None),
            "values": values or None}


def source_from_args(args):
    """The :class:`~tcadvisor.sources.StencilSource` of the stencil argument where it is a ``.npy`` or C file (or
    any source option was given, which a name refuses); None for a name or an offsets file."""
    from .sources import is_source_path, read_path

    options = source_options(args)
    if is_source_path(args.stencil) or any(v is not None and v is not False for v in options.values()):
        return read_path(args.stencil, **options)
    return None


def stencil_from_args(args):
    """The stencil argument as a :class:`~tcadvisor.stencil.Stencil`, read with the source options."""
    from .stencil import parse_stencil

    source = source_from_args(args)
    return source.stencil if source is not None else parse_stencil(args.stencil)


def advice_from_args(args):
    """The :class:`~tcadvisor.advisor.Advice` for parsed query arguments (a note on stderr if the GPU was guessed)."""
    from .advisor import advise
    from .alpha_policy import AlphaChoice
    from .arguments import as_impls
    from .dtypes import parse_dtype
    from .hardware import resolve_gpu
    from .stencil import parse_stencil

    source = source_from_args(args)
    stencil = source if source is not None else parse_stencil(args.stencil)
    dtype = parse_dtype(args.dtype) if args.dtype is not None else None  # None: the source's, else double
    alpha_choice = AlphaChoice.parse(args.alpha)
    resolved = resolve_gpu(args.gpu)
    impls = as_impls(args.impl)
    adv = advise(stencil, dtype, resolved.spec, fuse=args.fuse, impls=impls, alpha_choice=alpha_choice,
                 max_fuse=args.max_fuse, model=getattr(args, "model", None), grid=getattr(args, "grid", None),
                 steps=getattr(args, "steps", None))
    if args.dtype is None:
        args.dtype = adv.dtype  # the command repeated (a close call's '--run', 'advise --run') keeps it
    adv.command = command_of(args)
    from .wording import verdict_sentence

    adv.verdict_text = verdict_sentence(adv)  # a close call names the command as the user wrote it
    if resolved.note:  # said only once the query is valid, so an error stays a single line
        print(f"tcadvisor: {resolved.note}", file=sys.stderr)
    return adv


def command_of(args) -> str:
    """The query's ``tcadvisor advise`` command with the arguments as the user wrote them (a close verdict names it)."""
    from .advisor import command_line

    import shlex

    line = command_line(args.stencil, args.fuse, args.dtype, args.gpu, list(args.impl), args.alpha, args.max_fuse,
                        getattr(args, "model", None), getattr(args, "grid", None), getattr(args, "steps", None))
    words = [] if getattr(args, "field", None) is None else ["--field", args.field]
    for item in getattr(args, "set_values", None) or []:
        words += ["--set", item]
    if getattr(args, "origin", None) is not None:
        words.append(f"--origin={args.origin}")
    if getattr(args, "flip", False):
        words.append("--flip")
    return " ".join([line, *(shlex.quote(w) for w in words)])
