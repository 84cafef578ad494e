"""``tcadvisor validate``: run suites through the bundled kernels, profile them, compare with the model.

For each configuration (case, depth, unit) of each suite, in file order:

1. the bundled kernel's runner (:func:`tcadvisor.gpu.runner.run`) times the sweeps -- a warm-up,
   CUDA events, the median of the suite's repeats (at least 5), on a grid whose working set exceeds
   the L2 cache (``grid: auto``) -- then checks the same sweeps against the float64 reference;
   a kernel that refuses the configuration is recorded as skipped, with why;
2. with ``--profile``, Nsight Compute measures one sweep of each configuration that ran
   (:mod:`.ncu`, :mod:`.profile_driver`), in chunks, so a profile that runs out of time loses
   one chunk and not the session;
3. :mod:`.compare` derives measured C, M, I, the errors, the bottleneck and the outcomes.

``time_limit`` bounds the whole command: configurations not started in time are recorded as
skipped ("time limit"), and the results are written all the same.
"""
from __future__ import annotations

import datetime
import inspect
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Callable

from .. import __version__
from ..dtypes import BYTES
from ..errors import TcAdvisorError
from ..hardware import GpuSpec, resolve_gpu
from . import compare, ncu
from .records import Measurement, Results
from .suites import Config, Suite

#: Configurations profiled per Nsight Compute process.
PROFILE_CHUNK = 16
#: Share of the time limit the timing phase may use when a profile follows.
TIMING_SHARE = 0.6
#: Grids used when the runner offers no ``default_grid`` (working sets of 400 MiB and more).
FALLBACK_GRIDS = {1: "67108864", 2: "10240x10240", 3: "512x512x512"}
#: CUDA functions of today's kernels, where a run result does not name its own.
FALLBACK_FUNCTIONS = {("cuda_core", 1): "cc_stream2d", ("cuda_core", 2): "cc_stream2d",
                      ("cuda_core", 3): "cc_stream3d", ("tensor_core", 1): "tc_stream",
                      ("tensor_core", 2): "tc_stream", ("tensor_core", 3): "tc_stream"}
_SHAPE = re.compile(r"\bm\d+n\d+k\d+\b")


def call_run(stencil, **kwargs):
    """:func:`tcadvisor.gpu.runner.run` with the keyword arguments it accepts (the bundled-kernel
    interface adds ``warmup``; an older runner without it still runs)."""
    from ..gpu import runner

    accepted = inspect.signature(runner.run).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in accepted.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
    return runner.run(stencil, **kwargs)


def default_grid(stencil, dtype: str) -> str:
    from ..gpu import runner

    if hasattr(runner, "default_grid"):
        grid = runner.default_grid(stencil, dtype)
        return grid if isinstance(grid, str) else "x".join(map(str, grid))
    return FALLBACK_GRIDS[stencil.dims]


def l2_bytes() -> int:
    from ..gpu.backend import cupy

    try:
        return int(cupy().cuda.Device().attributes.get("L2CacheSize", 0))
    except Exception:  # noqa: BLE001 - only used for a note
        return 0


# --------------------------------------------------------------------------- one configuration


def base_measurement(suite: str, cfg: Config) -> Measurement:
    st = cfg.stencil
    return Measurement(suite=suite, case=cfg.case, stencil=st.name, dims=st.dims, points_per_stencil=st.K,
                       dtype=cfg.dtype, fuse=cfg.fuse, unit=cfg.unit, mma=cfg.mma, repeats=cfg.repeats,
                       paper=cfg.paper, beta=float(st.beta(cfg.fuse)) if cfg.unit != "cuda_core" else None)


def fill_from_result(m: Measurement, res, spec: GpuSpec, stencil) -> None:
    """Copy a RunResult (the bundled-kernel interface's fields) into ``m`` and add the prediction."""
    m.impl = getattr(res, "impl", "") or ""
    m.kernel_name = getattr(res, "kernel_name", "") or ""
    m.cuda_function = getattr(res, "cuda_function", "") or FALLBACK_FUNCTIONS.get((m.unit, m.dims), "")
    m.precision = res.precision
    mma = getattr(res, "mma", None)
    if mma is None and m.unit != "cuda_core":
        found = _SHAPE.search(res.kernel or "")
        mma = found.group(0) if found else None
    m.mma = str(mma) if mma else None
    alpha = getattr(res, "alpha", None)
    if alpha is not None:
        exact = alpha if isinstance(alpha, Fraction) else Fraction(alpha).limit_denominator(10**6)
        m.alpha, m.alpha_exact = float(alpha), str(exact)
    m.grid = "x".join(map(str, res.grid))
    m.points = math.prod(res.grid)
    m.steps = res.steps
    m.sweeps = len(res.sweeps)
    m.device = res.device
    m.kernel = res.kernel
    m.checked = bool(res.checked)
    m.correct = res.passed if res.checked else None
    m.max_rel_error, m.tolerance = res.max_rel_error, res.tolerance
    m.status = "ok" if res.passed in (True, None) else "failed"
    if m.status == "failed":
        m.reason = f"output wrong: max relative error {res.max_rel_error} > tolerance {res.tolerance}" + (
            f", {res.unwritten} points unwritten" if getattr(res, "unwritten", 0) else "")
    m.seconds = res.seconds
    m.seconds_all = [float(s) for s in (getattr(res, "seconds_all", None) or [])]
    m.gstencils, m.useful_tflops, m.executed_tflops = res.gstencils, res.useful_tflops, res.executed_tflops
    per_point = getattr(res, "executed_flops_per_point", None)
    if per_point is None and m.points and m.sweeps:
        per_point = res.executed_tflops * 1e12 * res.seconds / (m.points * m.sweeps)
    m.executed_flops_per_point = per_point
    option = getattr(res, "prediction", None)
    if option is None:
        try:
            option = compare.predict(stencil, m.dtype, m.unit, m.fuse, spec, alpha, mma=m.mma)
        except TcAdvisorError as exc:  # e.g. no profile for the unit: the measurement stands without it
            m.note = compare._join(m.note, f"no prediction: {exc}")
    compare.apply_prediction(m, option, spec)


def run_config(suite: str, cfg: Config, spec: GpuSpec, gpu: str | None, l2: int) -> Measurement:
    """Check and time one configuration; a refusal is ``skipped``, a crash ``error``, never raised."""
    m = base_measurement(suite, cfg)
    grid = cfg.grid if cfg.grid != "auto" else default_grid(cfg.stencil, cfg.dtype)
    try:
        res = call_run(cfg.stencil, dtype=cfg.dtype, unit=cfg.unit, fuse=cfg.fuse, grid=grid,
                       steps=cfg.sweeps * cfg.fuse, seed=cfg.seed, check=True, gpu=gpu, mma=cfg.mma,
                       repeats=cfg.repeats, warmup=1)
    except TcAdvisorError as exc:  # the kernel refuses this configuration: why, in one line
        m.status, m.reason, m.grid = "skipped", str(exc), grid
        return m
    except Exception as exc:  # noqa: BLE001 - one failed run does not end the suite
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        m.status, m.reason, m.grid = "error", f"{type(exc).__name__}: {first}"[:500], grid
        return m
    fill_from_result(m, res, spec, cfg.stencil)
    del res
    working_set = 2 * m.points * BYTES[m.dtype]
    if l2 and working_set <= 2 * l2:
        m.note = compare._join(m.note, f"working set {working_set / 2**20:.0f} MiB is not larger than twice the "
                                       f"L2 cache ({l2 / 2**20:.0f} MiB): DRAM traffic is understated")
    return m


def _free_memory() -> None:
    from ..gpu.backend import cupy

    cupy().get_default_memory_pool().free_all_blocks()


# --------------------------------------------------------------------------- profiling


def profile(pairs: list[tuple[Measurement, Config]], exe: str, gpu: str | None, deadline: float | None,
            say: Callable[[str], None], clock: Callable[[], float] = time.monotonic) -> dict:
    """Fill the ``ncu_*`` fields of every measurement that ran; returns what the profile used."""
    available = ncu.query_metrics(exe)
    metrics = ncu.resolve(available)
    info = {"ncu": exe, "version": ncu.version(exe), "metrics": metrics,
            "metrics_listed": available is not None, "problems": []}
    todo = [(i, m, c) for i, (m, c) in enumerate(pairs) if m.ok and m.cuda_function]
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
    for start in range(0, len(todo), PROFILE_CHUNK):
        chunk = todo[start:start + PROFILE_CHUNK]
        remaining = None if deadline is None else deadline - clock()
        if remaining is not None and remaining < 20:
            for _, m, _ in chunk:
                m.profile_note = "not profiled: time limit"
            continue
        say(f"profiling {start + 1}-{start + len(chunk)} of {len(todo)} with Nsight Compute")
        problem, launches = _profile_chunk(chunk, exe, metrics, gpu, env, remaining)
        if problem:
            info["problems"].append(problem)
            say(f"profile: {problem}")
            if not launches and problem != TIMED_OUT:  # ncu itself fails (permissions, metric names): stop
                for _, m, _ in todo[start + len(chunk):]:
                    m.profile_note = problem
                break
    return info


TIMED_OUT = "Nsight Compute ran out of time on this chunk"


def _run_group(cmd: list[str], timeout: float | None, env: dict) -> tuple[str, bool]:
    """Run ``cmd`` in its own process group; on timeout end the whole group (ncu and the program it
    profiles).  Returns (stdout + stderr, timed out)."""
    import signal

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return out + err, False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = proc.communicate()
        return (out or "") + (err or ""), True


def _profile_chunk(chunk, exe: str, metrics: dict, gpu: str | None, env: dict,
                   remaining: float | None) -> tuple[str, int]:
    """Profile one chunk; returns (problem or "", number of launches ncu reported)."""
    with tempfile.TemporaryDirectory(prefix="tcadvisor-ncu-") as tmp:
        tmp = Path(tmp)
        status, log, manifest = tmp / "status.jsonl", tmp / "ncu.csv", tmp / "manifest.json"
        entries = [{"index": i, "stencil": c.stencil_text or c.stencil.name, "dtype": c.dtype, "unit": c.unit,
                    "fuse": c.fuse, "grid": m.grid, "mma": m.mma if c.unit != "cuda_core" else None, "seed": c.seed}
                   for i, m, c in chunk]
        manifest.write_text(json.dumps({"gpu": gpu, "status": str(status), "entries": entries}), encoding="utf-8")
        program = [sys.executable, "-m", "tcadvisor.validate.profile_driver", str(manifest)]
        cmd = ncu.command(exe, list(metrics.values()), ncu.kernel_regex([m.cuda_function for _, m, _ in chunk]),
                          8 * len(chunk) + 8, log, program)
        timeout = None if remaining is None else max(10.0, remaining)
        problem = ""
        try:
            output, timed_out = _run_group(cmd, timeout, env)
            problem = TIMED_OUT if timed_out else ""
        except OSError as exc:
            output, problem = "", f"cannot start ncu ({exc})"
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        launches = ncu.parse_csv(text) or ncu.parse_csv(output)  # the CSV goes to --log-file; else stdout
        if not launches and not problem:
            problem = ncu.explain_failure(text + "\n" + output)
        done = {}
        if status.is_file():
            for line in status.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                done[rec["index"]] = rec
        by_index = ncu.assign_launches(launches)
        for i, m, c in chunk:
            rec = done.get(i)
            if rec is None:
                m.profile_note = problem or "not reached by the profiled run"
            elif not rec["ok"]:
                m.profile_note = f"the profiled run failed: {rec['error']}"
            else:
                k, note = ncu.pick_launch(by_index.get(i, []), m.cuda_function)
                if k is None:
                    m.profile_note = problem or note
                else:
                    fill_profile(m, k, metrics)
                    m.profile_note = note
        return problem, len(launches)


def fill_profile(m: Measurement, k: ncu.KernelProfile, metrics: dict[str, str]) -> None:
    family = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}[m.dtype]
    m.profiled = True
    m.ncu_kernel, m.ncu_id = k.name, k.id
    m.ncu_dram_read_bytes = k.get(metrics.get("dram_read"))
    m.ncu_dram_write_bytes = k.get(metrics.get("dram_write"))
    m.ncu_duration_s = k.get(metrics.get("duration"))
    m.ncu_cc_flops = ncu.cuda_core_flops(k, metrics, family)
    if m.unit != "cuda_core" and m.precision in ncu.TENSOR_INST:
        m.ncu_tensor_inst = k.get(metrics.get(ncu.TENSOR_INST[m.precision]))
        m.ncu_tensor_ops = ncu.tensor_ops(k, metrics, m.precision, m.unit == "sparse_tensor_core")


# --------------------------------------------------------------------------- the whole run


def spec_record(spec: GpuSpec) -> dict:
    return {"name": spec.name, "key": spec.key, "path": str(spec.path), "bandwidth_gbs": spec.bandwidth.value / 1e9,
            "peak_tflops": {u: {p: r.value / 1e12 for p, r in per.items()} for u, per in spec.peaks.items()}}


def run_suites(suites: list[Suite], gpu: str | None = None, profile_with: str | None = None,
               time_limit: float | None = None, band: float | None = None,
               say: Callable[[str], None] = lambda s: None,
               checkpoint: Callable[[Results], None] | None = None,
               clock: Callable[[], float] = time.monotonic) -> Results:
    """Run every configuration of ``suites`` (needs CuPy and a GPU); ``profile_with``: path of ncu.

    ``checkpoint`` receives the results of the timing phase before the profile starts, so that a
    session cut short still leaves them behind.
    """
    from ..gpu.backend import cupy, device_info

    cupy()
    started = clock()
    deadline = None if time_limit is None else started + time_limit
    timing_deadline = None if deadline is None else started + time_limit * (TIMING_SHARE if profile_with else 1.0)
    spec = resolve_gpu(gpu).spec
    device = device_info()["name"]
    l2 = l2_bytes()
    plan = [(s, c) for s in suites for c in s.configs()]
    pairs: list[tuple[Measurement, Config]] = []
    for n, (suite, cfg) in enumerate(plan, 1):
        if timing_deadline is not None and clock() > timing_deadline:
            m = base_measurement(suite.name, cfg)
            m.status, m.reason = "skipped", "time limit"
        else:
            m = run_config(suite.name, cfg, spec, gpu, l2)
            _free_memory()
        pairs.append((m, cfg))
        say(progress_line(n, len(plan), m))
    measurements = [m for m, _ in pairs]
    results = Results(tool=f"tcadvisor {__version__}", date=datetime.date.today().isoformat(), device=device,
                      spec=spec_record(spec), suites=[s.name for s in suites],
                      band=suites[0].tie_band if band is None else band, measurements=measurements)
    if profile_with and checkpoint is not None:
        checkpoint(finish(results, suites, band))
    if profile_with:
        results.profile = profile(pairs, profile_with, gpu, deadline, say, clock)
    return finish(results, suites, band)


def finish(results: Results, suites: list[Suite], band: float | None) -> Results:
    """Derived quantities, comparisons (each suite with its tie band) and the summary."""
    for m in results.measurements:
        compare.derive(m)
    results.comparisons = []
    for s in suites:
        results.comparisons += compare.comparisons([m for m in results.measurements if m.suite == s.name],
                                                   s.tie_band if band is None else band)
    results.summary = compare.summarize(results.measurements, results.comparisons)
    return results


def progress_line(n: int, total: int, m: Measurement) -> str:
    head = f"[{n}/{total}] {m.suite}: {m.stencil} {m.dtype} t={m.fuse} {m.unit}"
    if m.status in ("ok", "failed"):
        pred = f" (model {m.pred_gstencils:.4g})" if m.pred_gstencils else ""
        verdict = "correct" if m.correct else ("not checked" if m.correct is None else "WRONG OUTPUT")
        return f"{head}: {m.gstencils:.4g} GStencils/s{pred}, {verdict}"
    return f"{head}: {m.status}: {m.reason}"
