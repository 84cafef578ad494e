"""``tcadvisor run``: a bundled kernel on this GPU, checked, timed and set against the model."""
from __future__ import annotations

import argparse
import json

RUN_EPILOG = """\
precisions: the unit's bundled profile maps the dtype to a precision: double -> FP64;
float -> FP32 on CUDA cores, TF32 on (sparse) Tensor Cores; half -> FP16 and bfloat16 -> BF16
(Tensor Cores, FP32 accumulation).  Sparse Tensor Cores run half, bfloat16 and float.

correctness: every sweep is checked against a float64 reference computed from the same input,
rounded exactly as the kernel rounds it (operands, uploaded weights, stored output), with a
tolerance derived from the precision's unit roundoff and the accumulation length; the result
is also compared with the exact float64 base-stencil reference under a looser derived bound.
Both hold for any number of steps.

data: by default the weights are random, positive and sum to 1, and the initial values are
uniform in [1, 2]: every step is a convex combination, so values stay in [1, 2] and long
FP16/BF16 runs neither overflow nor underflow.  Weights of your own (--weights) with a sum
of absolute values above 1 grow the solution geometrically.
"""


def register(sub, commands: dict) -> None:
    p = sub.add_parser("run", help="run a bundled kernel on the GPU: correctness, GStencils/s, fraction of the model's bound",
                       epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stencil", help="Box-2D1R, Star-3D1R, Heat-1D, ... (box and star stencils), or a file of "
                                   "offsets, a weight array (.npy) or a loop nest (.c, .cu, ...) of such a stencil")
    p.add_argument("--fuse", "-t", type=int, default=1, help="time steps per sweep (default 1)")
    p.add_argument("--dtype", default="double", help="double, float, half or bfloat16 (default double)")
    p.add_argument("--unit", default=None,
                   help="cuda_core, tensor_core or sparse_tensor_core: the unit's bundled kernel (default cuda_core)")
    p.add_argument("--impl", default=None, help="a bundled implementation profile by name (tcadvisor-cc, "
                                                "tcadvisor-tc, tcadvisor-sptc), instead of --unit")
    p.add_argument("--grid", default=None, help="domain size, e.g. 10240x10240 (default 10240^2 in 2D, 512^3 in 3D, "
                                                "2^27 in 1D: larger than the L2 cache)")
    p.add_argument("--steps", type=int, default=None, help="time steps in total (default: one sweep)")
    p.add_argument("--gpu", help="GPU spec for the model's bound (default: the detected GPU's spec)")
    p.add_argument("--mma", help="MMA shape for the Tensor Core kernels (default: the one that pads the fused "
                                 "kernel least among the shapes the GPU has)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights and input")
    p.add_argument("--weights", help="weights of the base stencil: a .npy file or a text file (whitespace-"
                                     "separated, one kernel row per line; 3D: planes separated by blank lines); "
                                     "default: random positive weights summing to 1")
    p.add_argument("--repeats", type=int, default=5, help="timed repetitions (median reported, default 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions first (default 1)")
    p.add_argument("--no-check", action="store_true", help="skip the correctness checks")
    p.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                   help="a tuning knob of the bundled kernel, repeatable (e.g. --knob stages=3 --knob x_tiles=2; "
                        "true/false, integers, or a word for layout): what docs/kernels.md scans; without one, the "
                        "measured defaults of kernels/defaults.yaml")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress line on stderr (there is one only when stderr is a terminal)")
    from ..queryargs import add_source_arguments

    add_source_arguments(p)
    commands["run"] = cmd_run


def cmd_run(args) -> int:
    from ..dtypes import parse_dtype
    from ..errors import TcAdvisorError
    from ..queryargs import stencil_from_args
    from . import registry, runner

    stencil = stencil_from_args(args)
    dtype = parse_dtype(args.dtype)
    if args.unit is not None and args.unit not in registry.units():
        raise TcAdvisorError(f"--unit {args.unit!r}: the bundled kernels run on {', '.join(registry.units())}")
    knobs = parse_knobs(args.knob, registry.resolve(args.unit, args.impl))  # clear errors before CuPy is needed
    if args.repeats < 1:
        raise TcAdvisorError(f"--repeats {args.repeats}: expected at least 1")
    if args.warmup < 0:
        raise TcAdvisorError(f"--warmup {args.warmup}: expected 0 or more")
    weights = load_weights(args.weights, stencil) if args.weights else None
    if weights is not None:  # on the CPU, before CuPy: the user's weights as they are, in the dtype's range
        weights = runner.check_weights(stencil, weights)
        from ..stencil import check_fuse

        fuse = check_fuse(args.fuse)
        steps = args.steps if args.steps is not None and args.steps >= 1 else fuse
        depths = ({fuse} if steps >= fuse else set()) | ({steps % fuse} if steps % fuse else set())
        check_weights_range(stencil, weights, dtype, depths)
    from ..progress import Progress, wanted

    with Progress("run", enabled=wanted(json=args.json, quiet=args.quiet)) as progress:
        res = runner.run(stencil, dtype, args.unit, impl=args.impl, fuse=args.fuse,
                         grid=args.grid or runner.default_grid(stencil, dtype), steps=args.steps, weights=weights,
                         seed=args.seed, check=not args.no_check, gpu=args.gpu, mma=args.mma, repeats=args.repeats,
                         warmup=args.warmup, kernel_options=knobs or None, progress=progress)
        progress.done(f"{res.steps} steps in {len(res.sweeps)} sweeps checked and timed" if res.checked
                      else f"{res.steps} steps timed")
    if args.json:
        print(json.dumps(result_dict(res), indent=2))
    else:
        print(format_result(res))
    return 0 if res.passed in (True, None) else 1


#: Constructor arguments of a bundled kernel that are the configuration, not knobs.
_NOT_KNOBS = {"self", "stencil", "fuse", "dtype", "precision", "weights", "mma"}


def kernel_knobs(profile) -> dict[str, type]:
    """The knobs the bundled kernel of ``profile`` accepts, and the type of each: its constructor's keyword
    arguments (what the kernel takes is what ``--knob`` offers; the planner checks the values)."""
    import inspect

    from . import registry

    cls = registry.kernel_class(profile.kernel)
    knobs = {}
    for name, par in inspect.signature(cls.__init__).parameters.items():
        if name in _NOT_KNOBS or par.kind not in (par.KEYWORD_ONLY, par.POSITIONAL_OR_KEYWORD):
            continue
        ann = str(par.annotation)
        knobs[name] = bool if "bool" in ann else int if "int" in ann else str
    return knobs


def parse_knobs(items: list[str], profile) -> dict:
    """``--knob NAME=VALUE`` items as the kernel's keyword arguments, each name one the kernel takes and each value
    of its type (true/false, an integer, a word); refused in one line otherwise."""
    from ..errors import TcAdvisorError

    accepted = kernel_knobs(profile)
    out: dict = {}
    for item in items:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise TcAdvisorError(f"--knob {item!r}: expected NAME=VALUE, e.g. --knob stages=3")
        if name not in accepted:
            raise TcAdvisorError(f"--knob {name}: {profile.name}'s kernel takes {', '.join(sorted(accepted))}")
        if name in out:
            raise TcAdvisorError(f"--knob {name} given twice")
        kind = accepted[name]
        if kind is bool:
            if text.lower() not in ("true", "false"):
                raise TcAdvisorError(f"--knob {name}={text}: expected true or false")
            out[name] = text.lower() == "true"
        elif kind is int:
            try:
                out[name] = int(text)
            except ValueError:
                raise TcAdvisorError(f"--knob {name}={text}: expected an integer") from None
        else:
            out[name] = text
    return out


def load_weights(path: str, stencil):
    """Weights from a .npy file or text (rows of numbers; blank lines between the planes of a 3D kernel)."""
    import numpy as np

    from ..errors import TcAdvisorError

    from ..files import MAX_WEIGHTS_BYTES, load_npy, read_text

    try:
        if path.endswith(".npy"):
            w = np.asarray(load_npy(path, "weights file"), dtype=float)
        else:
            text = read_text(path, "weights file", MAX_WEIGHTS_BYTES).replace("\r\n", "\n")
            blocks = [b for b in text.split("\n\n") if b.strip()]
            if not blocks:
                raise TcAdvisorError(f"weights file {path!r} is empty; expected rows of numbers, e.g. "
                                     "'0.1 0.2 0.1' per line (3D: planes separated by blank lines)")
            planes = [np.array([[float(v) for v in line.split()] for line in b.strip().splitlines()]) for b in blocks]
            w = np.stack(planes) if stencil.dims == 3 else planes[0]
            if stencil.dims == 1:
                w = w.reshape(-1)
    except (OSError, ValueError, IndexError, OverflowError) as exc:
        if isinstance(exc, TcAdvisorError):
            raise
        raise TcAdvisorError(f"weights file {path!r} cannot be read as numbers ({str(exc).splitlines()[0]})") from None
    if w.size == 0:
        raise TcAdvisorError(f"weights file {path!r} holds no numbers; expected one weight per point of {stencil.name}")
    return w


#: Largest finite value and smallest normal value of each dtype's storage (bfloat16: float32's exponent range).
DTYPE_RANGE = {"double": (1.7976931348623157e308, 2.2250738585072014e-308),
               "float": (3.4028234663852886e38, 1.1754943508222875e-38),
               "half": (65504.0, 6.103515625e-05),
               "bfloat16": (3.3895313892515355e38, 1.1754943508222875e-38)}
#: Most cells of fused weights computed for the check (beyond it only the base weights are checked).
MAX_FUSED_CHECK_CELLS = 1 << 20


def check_weights_range(stencil, weights, dtype: str, depths) -> None:
    """Refuse (one line) weights that overflow or vanish in ``dtype``: the base weights, and the fused weights
    of every depth run (their largest magnitude), computed on the CPU from the weights' ratios and scale so that
    the check itself neither overflows nor underflows."""
    import math

    import numpy as np

    from ..errors import TcAdvisorError
    from ..reference import fused_weights

    biggest, smallest = DTYPE_RANGE[dtype]
    w = np.asarray(weights, dtype=np.float64)
    nonzero = np.abs(w[w != 0])
    if nonzero.size == 0:
        raise TcAdvisorError("every weight is zero; at least one must be non-zero")
    scale = float(nonzero.max())
    if scale > biggest:
        raise TcAdvisorError(f"weight {scale:.4g} overflows {dtype} (largest finite value {biggest:.4g}); "
                             "scale the weights down")
    if scale < smallest:
        raise TcAdvisorError(f"every weight vanishes in {dtype} (the largest, {scale:.4g}, is below its smallest "
                             f"normal value {smallest:.4g}); scale the weights up")
    unit = w / scale
    for t in sorted(set(depths)):
        if t <= 1 or (2 * stencil.radius * t + 1) ** stencil.dims > MAX_FUSED_CHECK_CELLS:
            continue
        with np.errstate(all="ignore"):
            fused = float(np.max(np.abs(fused_weights(unit, t))))
        if not fused or not math.isfinite(fused):
            continue
        log_top = t * math.log(scale) + math.log(fused)  # log of the largest fused weight, never overflowing
        if log_top > math.log(biggest):
            raise TcAdvisorError(f"the weights fused x{t} reach about 1e{log_top / math.log(10):.0f}, which overflows "
                                 f"{dtype} (largest finite value {biggest:.4g}); scale the weights down or fuse less")
        if log_top < math.log(smallest):
            raise TcAdvisorError(f"the weights fused x{t} vanish in {dtype} (the largest is about "
                                 f"1e{log_top / math.log(10):.0f}, below its smallest normal value {smallest:.4g}); "
                                 "scale the weights up or fuse less")


def result_dict(res) -> dict:
    chk = res.check
    return {
        "stencil": res.stencil.name, "unit": res.unit, "impl": res.impl, "kernel_name": res.kernel_name,
        "cuda_function": res.cuda_function, "dtype": res.dtype, "precision": res.precision, "mma": res.mma,
        "fuse": res.fuse, "grid": "x".join(map(str, res.grid)), "steps": res.steps, "sweeps": len(res.sweeps),
        "device": res.device, "kernel": res.kernel, "seconds": res.seconds, "seconds_all": res.seconds_all,
        "gstencils": res.gstencils, "useful_tflops": res.useful_tflops, "executed_tflops": res.executed_tflops,
        "executed_flops_per_point": res.executed_flops_per_point,
        "alpha": float(res.alpha) if res.alpha is not None else None,
        "bound_gpu_spec": res.bound_gpu, "bound_gstencils": res.bound_gstencils, "bound": res.bound,
        "bound_unavailable": (res.prediction.reason if res.prediction is not None and not res.prediction.available
                              else None),
        "fraction_of_bound": res.fraction_of_bound, "refresh_seconds_per_sweep": res.refresh_seconds,
        "refresh_share": res.refresh_share, "checked": res.checked, "passed": res.passed,
        "max_rel_error": res.max_rel_error, "tolerance": res.tolerance, "unwritten": res.unwritten,
        "sweep_violations": chk.sweep.violations if chk else None,
        "sweep_worst_excess": chk.sweep.worst if chk else None,
    }


def format_result(res) -> str:
    alpha = f", α = {res.alpha} ({float(res.alpha):.3f})" if res.alpha is not None else ""
    mma = f" {res.mma}" if res.mma else ""
    lines = [
        f"{res.stencil.name}, t = {res.fuse}, {res.dtype}, {res.unit} ({res.impl}, {res.precision.upper()}{mma}{alpha}) "
        f"on {res.device}",
        f"  kernel: {res.kernel}",
        f"  grid {'x'.join(map(str, res.grid))}, {res.steps} steps in {len(res.sweeps)} sweep(s): {res.seconds:.4f} s "
        f"(median of {len(res.seconds_all)})",
    ]
    chk = res.check
    if chk is None:
        lines.append("  correctness: not checked (--no-check)")
    else:
        verdict = "passed" if chk.passed else "FAILED"
        sw = chk.sweep
        per_sweep = (f"every output of {sw.sweeps} sweep(s) within its rounding interval" if sw.passed else
                     f"{sw.violations} output(s) outside their rounding interval (worst by {sw.worst:.2e} relative)")
        extra = f"; {chk.unwritten} unwritten points" if chk.unwritten else ""
        lines.append(f"  correctness: {verdict}: {per_sweep}; max relative error {chk.max_rel_error:.2e} vs the "
                     f"float64 base reference (bound {chk.tolerance:.1e}){extra}")
    lines.append(f"  throughput: {res.gstencils:.1f} GStencils/s; useful {res.useful_tflops:.2f} TFLOP/s, "
                 f"executed {res.executed_tflops:.2f} TFLOP/s")
    if res.refresh_seconds is not None:
        lines.append(f"  periodic ghost refresh: {res.refresh_seconds * 1e6:.1f} µs before each sweep, "
                     f"{100 * res.refresh_share:.1f} % of the time above (timed alone; the model's bound leaves it out)")
    if res.bound_gstencils:
        lines.append(f"  model bound on {res.bound_gpu}: {res.bound_gstencils:.1f} GStencils/s ({res.bound}-bound); "
                     f"achieved {100 * res.fraction_of_bound:.1f} %")
    else:
        reason = res.prediction.reason if res.prediction is not None else "no option"
        lines.append(f"  model bound on {res.bound_gpu}: not available ({reason})")
    return "\n".join(lines)
