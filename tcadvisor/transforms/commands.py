"""CLI subcommand ``alpha``: α by construction for one stencil, or the table over the papers' stencils.

Only argparse lives at the top of this module (``tcadvisor advise`` builds the
parser from it); the transformations are imported inside the handler.

    tcadvisor alpha Box-2D49P --impl LoRAStencil
    tcadvisor alpha Star-2D13P --fuse 3 --impl SparStencil --dtype half --json
    tcadvisor alpha --table
"""
from __future__ import annotations

import json

from ..errors import TcAdvisorError
from ..queryargs import add_source_arguments

#: The papers' standard stencils (the SparStencil, SPIDER and ConvStencil benchmark sets).
TABLE_STENCILS = ("Heat-1D", "1D5P", "Heat-2D", "Box-2D9P", "Star-2D13P", "Box-2D25P", "Box-2D49P",
                  "Heat-3D", "Box-3D27P")
#: Precision of each dtype for a bare transformation name (profiles say it themselves).
DTYPE_PRECISION = {"double": "fp64", "float": "tf32", "half": "fp16", "bfloat16": "bf16"}
#: The MMA instructions that exist (PTX ``mma``/``wmma``, and ``mma.sp`` with 2:4 or 1:2 structured sparsity)
#: at each precision, by unit: ``--mma`` names one of these for the transformation's unit.
INSTRUCTIONS = {
    "tensor_core": {"fp64": ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"),
                    "tf32": ("m16n8k4", "m16n8k8", "m16n16k8"),
                    "fp16": ("m8n8k4", "m16n8k8", "m16n8k16", "m16n16k16", "m32n8k16", "m8n32k16"),
                    "bf16": ("m16n8k8", "m16n8k16", "m16n16k16", "m32n8k16", "m8n32k16")},
    "sparse_tensor_core": {"tf32": ("m16n8k8", "m16n8k16"), "fp16": ("m16n8k16", "m16n8k32"),
                           "bf16": ("m16n8k16", "m16n8k32")},
}
#: Most fusion depths ``alpha --table`` covers at once (each depth is ~50 constructions; 128 take about 2 s).
MAX_TABLE_DEPTHS = 128
#: Instruction for a bare transformation name at each precision (dense, sparse).
DEFAULT_SHAPE = {"fp64": ("m8n8k4", None), "tf32": ("m16n8k8", "m16n8k16"), "fp16": ("m16n8k16", "m16n8k32"),
                 "bf16": ("m16n8k16", "m16n8k32")}


def _targets(impl_name: str | None, dtype: str | None) -> list[dict]:
    """(label, transformation, precision, candidate shapes, paper α) for --impl or every profile with a construction."""
    from ..dtypes import parse_dtype
    from ..impls import catalog, find_impl
    from . import PAPER_SETTING, module, names

    dtype = parse_dtype(dtype) if dtype else None
    profile_names = {p.name.lower() for p in catalog().values()} | {p.key.lower() for p in catalog().values()}
    bare = impl_name is not None and impl_name.strip().lower() not in profile_names
    if bare and impl_name.strip().lower() in names():
        key = impl_name.strip().lower()
        mod = module(key)
        if dtype is None:
            precision, shape = PAPER_SETTING[key]
            return [{"label": mod.TITLE, "transform": key, "precision": precision, "shapes": [shape], "paper": None}]
        precision = DTYPE_PRECISION[dtype]
        dense, sparse = DEFAULT_SHAPE[precision]
        shape = sparse if mod.SPARSE and precision != "fp64" else dense
        return [{"label": mod.TITLE, "transform": key, "precision": precision, "shapes": [shape], "paper": None}]
    profiles = [find_impl(impl_name)] if impl_name is not None else \
        [p for p in catalog().values() if p.alpha is not None and p.alpha.construction]
    out = []
    for prof in profiles:
        if prof.alpha is None or not prof.alpha.construction:
            raise TcAdvisorError(f"{prof.name} runs on CUDA cores or has no α construction; "
                                 f"expected a Tensor Core implementation (see 'tcadvisor impls')")
        wanted = dtype or next(iter(prof.precisions))
        if wanted not in prof.precisions:
            if impl_name is None:
                continue
            raise TcAdvisorError(f"{prof.name} has no {wanted} variant (it supports: {', '.join(prof.precisions)})")
        precision = prof.precisions[wanted][0]
        shapes = list(prof.mma.get(precision, ()))
        if not shapes:
            raise TcAdvisorError(f"{prof.name} names no MMA instruction for {precision}")
        out.append({"label": prof.name, "transform": prof.alpha.construction, "precision": precision,
                    "shapes": shapes, "paper": prof.alpha.paper,
                    "options": dict(prof.alpha.construction_options)})
    if not out:
        raise TcAdvisorError(f"no implementation with an α construction runs {dtype}")
    return out


def _unit(target: dict) -> str:
    from . import module

    return "sparse_tensor_core" if module(target["transform"]).SPARSE else "tensor_core"


def _instruction_problem(target: dict, mma: str) -> str | None:
    """Why ``--mma`` is no instruction of the target's unit at its precision (None: it is one)."""
    unit, precision = _unit(target), target["precision"]
    accepted = INSTRUCTIONS[unit].get(precision, ())
    if mma in accepted:
        return None
    kind = "mma.sp (sparse Tensor Core)" if unit == "sparse_tensor_core" else "dense Tensor Core"
    return (f"--mma {mma} is not a {kind} instruction at {precision.upper()} for {target['label']}; accepted: "
            f"{', '.join(accepted) if accepted else 'none'}")


def _count(target: dict, stencil, fuse: int, mma: str | None):
    from . import alpha_for, least_padding_shape

    shapes = [mma] if mma else target["shapes"]
    shape = shapes[0] if len(shapes) == 1 else least_padding_shape(
        target["transform"], stencil, shapes, fuse=fuse, precision=target["precision"])
    return alpha_for(target["transform"], stencil, fuse, shape, target["precision"], **target.get("options", {}))


def _fmt_frac(x) -> str:
    return f"{x} = {float(x):.4f}" if x.denominator != 1 else str(x)


def _describe(target: dict, res, stencil, fuse: int) -> list[str]:
    d = dict(res.details)
    lines = [f"{target['label']} on {stencil.name}" + (f" fused x{fuse}" if fuse > 1 else "") +
             f": α = {_fmt_frac(res.alpha)}",
             f"  fused support: {d.pop('support')}",
             f"  instruction: {res.shape} at {res.precision} ({res.shape.macs} MACs each)",
             f"  per output point: {_fmt_frac(res.useful)} useful MACs, {_fmt_frac(res.executed)} executed, "
             f"{_fmt_frac(res.mma_per_point)} MMA instructions",
             f"  operands: {d.pop('matrices')}"]
    for key in ("stencil", "fuse"):
        d.pop(key, None)
    rest = ", ".join(f"{k} {_fmt_frac(v) if hasattr(v, 'denominator') and not isinstance(v, (int, bool)) else v}"
                     for k, v in d.items())
    lines.append(f"  details: {rest}")
    if target["paper"] is not None:
        lines.append(f"  paper constant: {_fmt_frac(target['paper'])} (alpha.paper of the {target['label']} profile)")
    return lines


def cmd_alpha(args) -> int:
    from ..queryargs import stencil_from_args
    from ..stencil import check_fuse

    if args.table:
        return _table(args)
    if not args.stencil:
        raise TcAdvisorError("alpha needs a stencil (e.g. 'tcadvisor alpha Box-2D49P') or --table")
    stencil = stencil_from_args(args)
    try:
        fuse = int(args.fuse) if args.fuse is not None else 1
    except ValueError:
        raise TcAdvisorError(f"--fuse {args.fuse!r} is not an integer (a range is for --table only)") from None
    fuse = check_fuse(fuse)
    targets = _targets(args.impl, args.dtype)
    if args.mma:
        from ..mma import MmaShape

        args.mma = str(MmaShape.parse(args.mma))
        why = {id(t): _instruction_problem(t, args.mma) for t in targets}
        if any(why.values()) and (args.impl is not None or all(why.values())):
            raise TcAdvisorError(next(w for w in why.values() if w))
    results = []
    for target in targets:
        if args.mma and why[id(target)]:
            results.append((target, None, why[id(target)]))
            continue
        try:
            results.append((target, _count(target, stencil, fuse, args.mma), None))
        except TcAdvisorError as exc:
            if args.impl is not None:
                raise
            results.append((target, None, str(exc)))
    if args.json:
        out = []
        for target, res, err in results:
            entry = {"impl": target["label"], "stencil": stencil.name, "fuse": fuse,
                     "paper_alpha": None if target["paper"] is None else str(target["paper"])}
            entry.update(res.as_dict() if res is not None else {"transform": target["transform"], "error": err})
            out.append(entry)
        print(json.dumps(out[0] if args.impl is not None else out, indent=2))
        return 0
    for target, res, err in results:
        print("\n".join(_describe(target, res, stencil, fuse)) if res is not None else
              f"{target['label']} on {stencil.name}: no construction ({err})")
    return 0


def _table(args) -> int:
    from ..plots.commands import parse_int_list
    from ..report import text_table
    from ..stencil import check_fuse, parse_stencil
    from . import PAPER_SETTING, alpha_for, module, names

    ignored = [name for name, given in (("a stencil", args.stencil), ("--impl", args.impl), ("--dtype", args.dtype),
                                        ("--mma", args.mma), ("--field", args.field), ("--origin", args.origin),
                                        ("--set", args.set_values or None), ("--flip", args.flip or None))
               if given is not None]
    if ignored:
        raise TcAdvisorError(f"--table takes no stencil, --impl, --dtype or --mma (it covers the papers' stencils "
                             f"with every transformation at its paper's precision and instruction); got "
                             f"{', '.join(ignored)}: drop {'them' if len(ignored) > 1 else 'it'} or --table")
    fuse_text = args.fuse if args.fuse is not None else "1-4"
    _check_table_depths(fuse_text)
    fuses = parse_int_list(fuse_text, "--fuse", check_fuse)
    if len(fuses) > MAX_TABLE_DEPTHS:
        raise TcAdvisorError(f"--fuse {fuse_text!r} names {len(fuses)} depths; --table covers at most "
                             f"{MAX_TABLE_DEPTHS} at once (e.g. 1-{MAX_TABLE_DEPTHS})")
    order = ["convstencil", "spider", "sparstencil", "lorastencil", "tcstencil", "rowband"]
    order = [n for n in order if n in names()] + [n for n in names() if n not in order]
    rows, data = [], []
    for name in TABLE_STENCILS:
        stencil = parse_stencil(name)
        for t in fuses:
            row = [name, str(t)]
            for key in order:
                precision, shape = PAPER_SETTING[key]
                try:
                    res = alpha_for(key, stencil, t, shape, precision)
                except TcAdvisorError as exc:
                    row.append("–")
                    data.append({"stencil": name, "fuse": t, "transform": key, "error": str(exc)})
                    continue
                row.append(f"{float(res.alpha):.3f}")
                data.append({"stencil": name, "fuse": t, "transform": key, "alpha": str(res.alpha),
                             "alpha_value": float(res.alpha), "shape": str(res.shape), "precision": precision,
                             "mma_per_point": str(res.mma_per_point)})
            rows.append(row)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    headers = ["stencil", "t"] + [f"{module(k).TITLE} {PAPER_SETTING[k][0]} {PAPER_SETTING[k][1]}" for k in order]
    print("α by construction (useful / executed MACs) for each transformation at its paper's precision and "
          "instruction; – = no construction (TCStencil: 2R < 16 only, no 1D; LoRAStencil: no 1D)")
    print("\n".join(text_table(headers, rows, "lr" + "r" * len(order))))
    return 0


def _check_table_depths(text: str) -> None:
    """Refuse more than :data:`MAX_TABLE_DEPTHS` depths from the text alone (before any list is built)."""
    import re

    count = 0
    for part in str(text).split(","):
        m = re.match(r"^\s*(\d+)\s*(?:-|\.\.|:)\s*(\d+)\s*$", part)
        count += max(int(m.group(2)) - int(m.group(1)) + 1, 0) if m else 1
        if count > MAX_TABLE_DEPTHS:
            raise TcAdvisorError(f"--fuse {text!r} names more than {MAX_TABLE_DEPTHS} depths; --table covers at most "
                                 f"{MAX_TABLE_DEPTHS} at once (e.g. 1-{MAX_TABLE_DEPTHS})")


def register(sub, commands: dict) -> None:
    p = sub.add_parser("alpha", help="α by construction: how each transformation maps a (fused) stencil onto "
                                     "Tensor Core instructions, with matrix sizes, padding and MMAs per point")
    p.add_argument("stencil", nargs="?", help="stencil name, file of offsets (with optional weights), weight array "
                                              "(.npy) or loop nest (.c, .cu, ...); see docs/sources.md")
    p.add_argument("--fuse", "-t", help="fusion depth t (default 1; with --table a range, default 1-4)")
    p.add_argument("--impl", metavar="NAME", help="implementation profile (ConvStencil, SPIDER, SparStencil, "
                   "LoRAStencil, TCStencil, tcadvisor-tc) or transformation name; default: every profile "
                   "with a construction")
    p.add_argument("--dtype", help="double, float, half or bfloat16 (default: each implementation's first)")
    p.add_argument("--mma", metavar="SHAPE", help="MMA instruction, e.g. m8n8k4 (default: the profile's, the "
                                                  "least padding one where it lists several)")
    p.add_argument("--table", action="store_true", help="α of every transformation for the papers' standard "
                                                        "stencils at t = 1..4 (--fuse: up to 128 depths)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_source_arguments(p)
    commands["alpha"] = cmd_alpha
