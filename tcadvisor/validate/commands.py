"""CLI subcommands ``calibrate`` and ``validate`` (registered through ``cli.EXTENSIONS``).

Only argparse lives at the top: the handlers import CuPy, Plotly and the runner when they run.
"""
from __future__ import annotations

import math
import sys

from ..errors import TcAdvisorError


def register(sub, commands: dict) -> None:
    p = sub.add_parser("calibrate", help="measure this GPU's ceilings (bandwidth, FMA and MMA rates) as a spec YAML")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="spec file to write, '-' for stdout (default: your cache, $TCADVISOR_CACHE_DIR/specs or "
                        "~/.cache/tcadvisor/specs, from where it is used on this GPU model whenever no --gpu is given)")
    p.add_argument("--quick", action="store_true",
                   help="the instruction shapes the bundled kernels use only, shorter runs (about 15 s)")
    p.add_argument("--repeats", type=int, metavar="N", help="timed repeats per benchmark (default 5, --quick 3)")
    p.add_argument("--fit", action="store_true",
                   help="then fit the refined model's constants on this GPU: a short design of the bundled kernels, "
                        "checked and timed (a few minutes), written into the spec as refined_constants, the runs "
                        "beside it as <spec>.corpus.csv")
    p.add_argument("--fit-configs", type=int, metavar="N",
                   help="configurations in the --fit design (default 120, at least 20)")
    p.add_argument("--fit-minutes", type=float, metavar="M",
                   help="time budget of the --fit runs in minutes (default 5); what ran by then is fitted")
    commands["calibrate"] = cmd_calibrate

    p = sub.add_parser("validate", help="run suites of bundled-kernel cases on this GPU and compare with the model")
    p.add_argument("--suite", action="append", default=[], metavar="NAME|FILE",
                   help="a bundled suite (paper, quick, depth-sweep) or a suite YAML file; repeatable")
    p.add_argument("--gpu", help="spec the predictions use: a name, an alias or a YAML file such as the output of "
                                 "'tcadvisor calibrate' (default: the detected GPU's spec)")
    p.add_argument("--profile", action="store_true",
                   help="measure C, M and I of each run with Nsight Compute (ncu, --clock-control none)")
    p.add_argument("--ncu", metavar="PATH", help="the ncu executable for --profile (default: ncu on PATH)")
    p.add_argument("-o", "--output", metavar="DIR", default="validation-results",
                   help="directory for results.csv, comparisons.csv, results.json, report.html "
                        "(default validation-results)")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="stop starting runs after this long; the rest are recorded as skipped")
    p.add_argument("--tie-band", type=float, metavar="FRACTION",
                   help="two units tie when their throughputs differ by at most this fraction (default: the suite's, 0.1)")
    p.add_argument("--list", action="store_true", help="list the configurations the suites hold, run nothing")
    p.add_argument("--report-from", metavar="RESULTS_JSON",
                   help="rebuild the CSV files and the HTML report from a results.json (no GPU needed)")
    commands["validate"] = cmd_validate


def cmd_calibrate(args) -> int:
    from pathlib import Path

    import yaml

    from ..gpu.backend import cupy
    from ..hardware import parse_spec
    from .calibrate import Settings, calibrate, spec_text, stderr_progress
    from .records import write_atomic

    settings = Settings.make(args.quick, args.repeats)
    fit = _fit_options(args)  # wrong options are refused before minutes of measuring
    cupy()
    cache = None
    if not args.output:  # the cache must be writable before two minutes of measuring, not after
        from ..hardware import calibrated_specs_dir

        cache = calibrated_specs_dir()
        if cache is None:
            raise TcAdvisorError("no cache directory for the calibrated spec (no home directory); set "
                                 "TCADVISOR_CACHE_DIR or pass -o FILE")
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TcAdvisorError(f"cannot create the calibrated-spec cache {str(cache)!r} ({exc.strerror or exc}); "
                                 "set TCADVISOR_CACHE_DIR or pass -o FILE") from None
    cal = calibrate(settings, stderr_progress)
    names: tuple[str, ...] = ()
    if cache is None:
        target = Path("calibrated.yaml") if args.output == "-" else Path(args.output)
    else:
        from ..hardware import calibrated_spec_path

        names = (cal.device,)  # names its GPU: picked there when no --gpu is given
        target = calibrated_spec_path(cal.device, cal.date)
    text = spec_text(cal, names)
    spec = parse_spec(yaml.safe_load(text), target)  # the file must load like any spec
    if fit is not None:
        from ..progress import wanted
        from .calibrate_fit import fit_on_this_gpu

        try:
            refined = fit_on_this_gpu(spec, target, cal.device, configs=fit[0], minutes=fit[1], say=stderr_progress,
                                      progress=stderr_progress if wanted() else None, date=cal.date)
        except TcAdvisorError as exc:  # the ceilings are measured: keep them, then say why there are no constants
            write_atomic(target, text)
            raise TcAdvisorError(f"{exc}; wrote {target} with the measured ceilings only (the bundled constants "
                                 "apply)") from None
        except KeyboardInterrupt:
            write_atomic(target, text)
            stderr_progress(f"fit interrupted: wrote {target} with the measured ceilings only")
            raise
        text = spec_text(cal, names, refined)
        parse_spec(yaml.safe_load(text), target)
    if args.output == "-":
        sys.stdout.write(text)
    elif args.output:
        write_atomic(target, text)
        stderr_progress(f"wrote {target} (use it with --gpu {target})")
    else:
        write_atomic(target, text)
        stderr_progress(f"wrote {target}: used for {cal.device} whenever no --gpu is given (--gpu {target} "
                        "names it elsewhere)")
    return 0


def _fit_options(args) -> tuple[int, float] | None:
    """(configurations, minutes) of ``--fit``, or None without it; one-line errors for values it cannot use."""
    from .calibrate_fit import FIT_CONFIGS, FIT_MINUTES, MIN_CONFIGS

    configs, minutes = getattr(args, "fit_configs", None), getattr(args, "fit_minutes", None)
    if not getattr(args, "fit", False):
        given = "--fit-configs" if configs is not None else "--fit-minutes" if minutes is not None else None
        if given:
            raise TcAdvisorError(f"{given} sizes the refined model's fit; add --fit")
        return None
    if args.output == "-":
        raise TcAdvisorError("--fit keeps its runs beside the spec file (<spec>.corpus.csv); with -o - there is "
                             "none: give -o FILE, or no -o for your cache")
    if configs is not None and configs < MIN_CONFIGS:
        raise TcAdvisorError(f"--fit-configs {configs}: expected at least {MIN_CONFIGS} configurations "
                             f"(default {FIT_CONFIGS})")
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise TcAdvisorError(f"--fit-minutes {minutes:g}: expected a positive number of minutes (default "
                             f"{FIT_MINUTES:g})")
    return (FIT_CONFIGS if configs is None else configs, FIT_MINUTES if minutes is None else minutes)


def cmd_validate(args) -> int:
    from .report import write_results

    if args.report_from:
        from .report import report_from

        return report_from(args)
    if not args.suite:
        raise TcAdvisorError("validate needs --suite NAME|FILE (bundled: paper, quick, depth-sweep) "
                             "or --report-from RESULTS_JSON")
    if args.tie_band is not None and not 0 <= args.tie_band < 1:
        raise TcAdvisorError(f"--tie-band {args.tie_band}: expected a fraction in [0, 1) such as 0.1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise TcAdvisorError(f"--time-limit {args.time_limit}: expected a positive number of seconds")
    if args.ncu and not args.profile:
        raise TcAdvisorError("--ncu names the profiler for --profile; add --profile")
    from .suites import load_suite

    suites = [load_suite(s) for s in args.suite]
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        raise TcAdvisorError(f"--suite names the suite {max(names, key=names.count)!r} twice")
    if args.list:
        for s in suites:
            configs = s.configs()
            print(f"{s.name} ({s.path}): {len(s.cases)} cases, {len(configs)} configurations; {s.description}")
            for c in configs:
                print(f"  {c.case}: {c.stencil.name} {c.dtype} t={c.fuse} {c.unit} grid {c.grid}"
                      + (f" {c.mma}" if c.mma else "") + (f"  [{c.paper}]" if c.paper else ""))
        return 0

    from ..plots.output import check_writable_directory

    # -o must take the results before the first run, not after minutes on the GPU
    check_writable_directory(args.output, f"the results into -o {args.output!r}")
    from ..gpu.backend import cupy
    from ..hardware import resolve_gpu
    from . import ncu
    from .runner import run_suites

    cupy()
    exe = ncu.find_ncu(args.ncu) if args.profile else None
    from .report import NO_PLOTLY, plotly_available

    if not plotly_available():  # said before the runs; the report says it again where its figures would be
        print(f"validate: {NO_PLOTLY}", file=sys.stderr, flush=True)
    resolved = resolve_gpu(args.gpu)
    if resolved.note:
        print(f"tcadvisor: {resolved.note}", file=sys.stderr)

    def say(text: str) -> None:
        print(f"validate: {text}", file=sys.stderr, flush=True)

    def checkpoint(partial) -> None:
        write_results(partial, args.output)
        say(f"timing done; results so far in {args.output}/ (profiling next)")

    results = run_suites(suites, gpu=args.gpu, profile_with=exe, time_limit=args.time_limit, band=args.tie_band,
                         say=say, checkpoint=checkpoint)
    for path in write_results(results, args.output):
        print(f"wrote {path}")
    s = results.summary
    tp = s["throughput"]
    print(f"{s['runs']} runs, {s['correct']} correct, {s['skipped']} skipped; outcomes agree in "
          f"{s['outcomes_agree']} of {s['outcomes_n']}; throughput error median "
          + (f"{100 * tp['median_abs']:.0f}%" if tp["median_abs"] is not None else "–"))
    return 1 if s["failed"] or s["errors"] else 0
