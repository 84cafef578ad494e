"""``tcadvisor run``: a bundled kernel on this GPU, checked, timed and set against the model."""
from __future__ import annotations

import json


def register(sub, commands: dict) -> None:
    p = sub.add_parser("run", help="run a bundled kernel on the GPU: correctness, GStencils/s, fraction of the model's bound")
    p.add_argument("stencil", help="Box-2D1R, Star-3D1R, Heat-1D, ... (box and star stencils)")
    p.add_argument("--fuse", "-t", type=int, default=1, help="time steps per sweep (default 1)")
    p.add_argument("--dtype", default="double", help="double or float (default double)")
    p.add_argument("--unit", default="cuda_core", help="cuda_core or tensor_core (default cuda_core)")
    p.add_argument("--grid", default=None, help="domain size, e.g. 10240x10240 (default 4096^2 in 2D, 256^3 in 3D, 2^24 in 1D)")
    p.add_argument("--steps", type=int, default=None, help="time steps in total (default: one sweep)")
    p.add_argument("--gpu", help="GPU spec for the model's bound (default: the detected GPU's spec)")
    p.add_argument("--mma", help="MMA shape for the Tensor Core kernel (default: m16n8k8 on Hopper, m8n8k4 on Ampere for FP64)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights and input")
    p.add_argument("--weights", help="weights of the base stencil: a .npy file or a text file (whitespace-"
                                     "separated, one kernel row per line; 3D: planes separated by blank lines); "
                                     "default: random positive weights summing to 1")
    p.add_argument("--repeats", type=int, default=1, help="timed repetitions (median reported)")
    p.add_argument("--no-check", action="store_true", help="skip the float64 reference check")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    commands["run"] = cmd_run


DEFAULT_GRID = {1: "16777216", 2: "4096x4096", 3: "256x256x256"}


def cmd_run(args) -> int:
    from ..dtypes import parse_dtype
    from ..errors import TcAdvisorError
    from ..stencil import parse_stencil
    from . import runner

    stencil = parse_stencil(args.stencil)
    dtype = parse_dtype(args.dtype)
    if args.unit not in runner.UNITS:
        raise TcAdvisorError(f"--unit {args.unit!r}: the bundled kernels run on {' or '.join(runner.UNITS)}")
    if args.repeats < 1:
        raise TcAdvisorError(f"--repeats {args.repeats}: expected at least 1")
    weights = load_weights(args.weights, stencil) if args.weights else None
    res = runner.run(stencil, dtype, args.unit, fuse=args.fuse, grid=args.grid or DEFAULT_GRID[stencil.dims],
                     steps=args.steps, weights=weights, seed=args.seed, check=not args.no_check, gpu=args.gpu,
                     mma=args.mma, repeats=args.repeats)
    if args.json:
        print(json.dumps(result_dict(res), indent=2))
    else:
        print(format_result(res))
    return 0 if res.passed in (True, None) else 1


def load_weights(path: str, stencil):
    """Weights from a .npy file or text (rows of numbers; blank lines between the planes of a 3D kernel)."""
    import numpy as np

    from ..errors import TcAdvisorError

    try:
        if path.endswith(".npy"):
            w = np.load(path)
        else:
            blocks = [b for b in open(path).read().split("\n\n") if b.strip()]
            planes = [np.array([[float(v) for v in line.split()] for line in b.strip().splitlines()]) for b in blocks]
            w = np.stack(planes) if stencil.dims == 3 else planes[0]
            if stencil.dims == 1:
                w = w.reshape(-1)
    except (OSError, ValueError) as exc:
        raise TcAdvisorError(f"weights file {path!r} cannot be read as numbers ({str(exc).splitlines()[0]})") from None
    return w


def result_dict(res) -> dict:
    return {
        "stencil": res.stencil.name, "unit": res.unit, "impl": res.impl, "dtype": res.dtype,
        "precision": res.precision, "fuse": res.fuse, "grid": "x".join(map(str, res.grid)), "steps": res.steps,
        "sweeps": len(res.sweeps), "device": res.device, "kernel": res.kernel, "seconds": res.seconds,
        "gstencils": res.gstencils, "useful_tflops": res.useful_tflops, "executed_tflops": res.executed_tflops,
        "alpha": float(res.alpha) if res.alpha is not None else None,
        "bound_gpu_spec": res.bound_gpu, "bound_gstencils": res.bound_gstencils, "bound": res.bound,
        "fraction_of_bound": res.fraction_of_bound, "checked": res.checked, "passed": res.passed,
        "max_rel_error": res.max_rel_error, "tolerance": res.tolerance, "unwritten": res.unwritten,
    }


def format_result(res) -> str:
    alpha = f", α = {res.alpha} ({float(res.alpha):.3f})" if res.alpha is not None else ""
    lines = [
        f"{res.stencil.name}, t = {res.fuse}, {res.dtype}, {res.unit} ({res.impl}, {res.precision.upper()}{alpha}) "
        f"on {res.device}",
        f"  kernel: {res.kernel}",
        f"  grid {'x'.join(map(str, res.grid))}, {res.steps} steps in {len(res.sweeps)} sweep(s): {res.seconds:.4f} s",
    ]
    if res.checked:
        verdict = "passed" if res.passed else "FAILED"
        extra = f", {res.unwritten} unwritten points" if res.unwritten else ""
        lines.append(f"  correctness: {verdict} (max relative error {res.max_rel_error:.2e} vs the float64 reference, "
                     f"tolerance {res.tolerance:.1e}{extra})")
    else:
        lines.append("  correctness: not checked (--no-check)")
    lines += [
        f"  throughput: {res.gstencils:.1f} GStencils/s; useful {res.useful_tflops:.2f} TFLOP/s, "
        f"executed {res.executed_tflops:.2f} TFLOP/s",
        f"  model bound on {res.bound_gpu}: {res.bound_gstencils:.1f} GStencils/s ({res.bound}-bound); "
        f"achieved {100 * res.fraction_of_bound:.1f} %",
    ]
    return "\n".join(lines)
