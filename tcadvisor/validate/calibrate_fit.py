"""``tcadvisor calibrate --fit``: the refined model's constants fitted on the user's own GPU.

Why: the refined model derives its terms from the bundled kernels' launch plans and the spec's
ceilings, except a few constants no datasheet gives (latencies, the bandwidth fraction a
streaming kernel reaches; :data:`tcadvisor.model.FITTED`).  The bundled constants
(``models/fitted/refined-terms.yaml``) are fitted on the project's H100 and H200; on a GPU the
project never measured (an A100, L40S, B200) they are an extrapolation.  A few minutes of the
bundled kernels on that GPU fit them there.

What runs, after the ceilings are measured:

1. a short design (:func:`plan`): :func:`tcadvisor.validate.corpus.design` on the spec just
   measured, trimmed to about ``n`` configurations (see :func:`trim` for how and why);
2. :func:`tcadvisor.validate.corpus.record`: each configuration checked against the reference
   and timed, until the time budget is spent, each row appended to ``<spec stem>.corpus.csv``
   beside the spec file as it completes (kept, so the runs can be fitted again);
3. :func:`tcadvisor.validate.fitting.fit` on the runs that checked correct, the same fit as the
   bundled constants' (constants it pins stay pinned);
4. the ``refined_constants`` section (:func:`section`), which the refined model uses for this
   spec while the kernels' fingerprint is the one recorded in it
   (:func:`tcadvisor.refinement.constants`).
"""
from __future__ import annotations

import datetime
import math
import random
import time
from pathlib import Path
from typing import Callable

from ..errors import TcAdvisorError
from ..hardware import GpuSpec
from ..progress import clock
from . import corpus

#: Default size of the design and time budget: a few minutes on one GPU.
FIT_CONFIGS = 120
FIT_MINUTES = 5.0
#: Fewer configurations than this cannot fit six constants with any confidence.
MIN_CONFIGS = 20
#: Runs of a term chain (CUDA cores; Tensor Cores, dense and sparse) below which its own constants are not fitted.
MIN_CHAIN_RUNS = 8
#: Depths kept per curve: the first, the deepest and one between (the latency terms move with the depth).
DEPTHS_PER_CURVE = 3


def corpus_path(spec_path: Path) -> Path:
    """Where the recorded runs of a spec are kept: beside it, ``<stem>.corpus.csv`` (not a ``*.yaml``, so the
    catalogue and the cache never read it as a spec)."""
    spec_path = Path(spec_path)
    return spec_path.with_name(spec_path.stem + ".corpus.csv")


def trim(configs: list[corpus.CorpusConfig], n: int, seed: int = 1) -> list[corpus.CorpusConfig]:
    """About ``n`` of ``design``'s configurations, as whole curves, every unit and precision in turn.

    ``design`` keeps every curve (shape x unit x dtype: about 200 on an H100) at two depths or more,
    some 360 configurations whatever ``n``: a corpus for the project's fit.  Five minutes hold a
    third of that, and what a fit of the latency constants needs is every unit and precision and,
    along each curve, how the throughput moves with depth.  So: curves on the default grid only, up
    to :data:`DEPTHS_PER_CURVE` depths each (first, deepest, middle), taken one curve per unit and
    precision in turn (shapes shuffled with ``seed``, dimensions alternating) until ``n`` is reached.
    The order is that of the run: a budget cut short keeps whole curves of every stratum.
    """
    rng = random.Random(seed)
    curves: dict[tuple, list[corpus.CorpusConfig]] = {}
    for c in configs:
        if c.stratum == "curve":
            curves.setdefault(c.curve, []).append(c)
    strata: dict[tuple[str, str], list[list[corpus.CorpusConfig]]] = {}
    for confs in curves.values():
        confs = sorted(confs, key=lambda c: c.fuse)
        if len(confs) > DEPTHS_PER_CURVE:
            confs = [confs[0], confs[len(confs) // 2], confs[-1]]
        strata.setdefault((confs[0].unit, confs[0].precision), []).append(confs)
    for key, listed in strata.items():
        rng.shuffle(listed)
        first: dict[int, list] = {}
        for confs in listed:  # one curve of each dimension first, then the others as shuffled
            first.setdefault(confs[0].stencil_obj().dims, confs)
        lead = [first[d] for d in sorted(first, reverse=True)]
        strata[key] = lead + [confs for confs in listed if not any(confs is c for c in lead)]
    out: list[corpus.CorpusConfig] = []
    queues = [strata[key] for key in sorted(strata)]
    while len(out) < n and any(queues):
        for queue in queues:
            if queue and len(out) < n:
                out += queue.pop(0)
    return out


def plan(spec: GpuSpec, n: int = FIT_CONFIGS, seed: int = 1) -> list[corpus.CorpusConfig]:
    """The configurations ``calibrate --fit`` runs on ``spec``'s GPU (:func:`trim` of ``corpus.design``), of the
    units and precisions the spec has a rate for: the model of any other has no ceiling to be fitted against."""
    return trim([c for c in corpus.design(spec, n, seed) if spec.has(c.unit, c.precision)], n, seed)


def record(configs: list[corpus.CorpusConfig], csv_path: Path, budget_s: float,
           progress: Callable[[str], None] | None = None) -> list[dict]:
    """Check and time ``configs`` on this GPU until ``budget_s`` has passed (:func:`corpus.record`), into a fresh
    ``csv_path``; ``progress`` gets one line per configuration (i of n, elapsed, the configuration, its result)."""
    from ..hardware import UNIT_LABELS

    csv_path = Path(csv_path)
    try:
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        csv_path.open("w").close()  # writable here, not after minutes of runs (corpus.record appends to it)
        csv_path.unlink()  # a calibration of the same day replaces the spec, and its runs with it
    except OSError as exc:
        raise TcAdvisorError(f"calibrate --fit: cannot write its runs to {str(csv_path)!r} "
                             f"({exc.strerror or exc})") from None
    start = time.monotonic()

    def line(i: int, n: int, row: dict, seconds: float) -> None:
        if row.get("status") == "ok":
            got = f"{float(row['gstencils']):.4g} GStencils/s"
        else:
            got = f"{row.get('status')}: {str(row.get('reason', ''))[:80]}"
        progress(f"fit [{i}/{n}, {clock(time.monotonic() - start)}] {row['stencil']} {row['dtype']} "
                 f"{UNIT_LABELS.get(row['unit'], row['unit'])} t={row['fuse']}: {got} ({seconds:.1f} s)")

    return corpus.record(configs, csv_path, budget_s=budget_s, progress=line if progress else None)


def read_rows(csv_path: Path) -> list[dict]:
    """The runs kept beside a spec (``<stem>.corpus.csv``), numbers parsed as :func:`corpus.load_corpus` does, for
    :func:`section` to fit them again (after a change of the fit, not of the kernels: those need new runs)."""
    import csv

    with Path(csv_path).open(newline="", encoding="utf-8") as f:
        return [corpus.parse_row(row) for row in csv.DictReader(f)]


def _chain_constants() -> dict[str, list]:
    """The fitted constants that only one term chain uses (the others, eta_B0 and L_mem, every run informs)."""
    from .. import model

    used = {chain: {s for eq in eqs for s in eq.full.free_symbols} & set(model.FITTED)
            for chain, eqs in model.TERM_CHAINS.items()}
    return {chain: [s for s in model.FITTED if s in mine and not any(s in other for c, other in used.items()
                                                                      if c != chain)]
            for chain, mine in used.items()}


def section(rows: list[dict], spec: GpuSpec, device: str, configs: list[corpus.CorpusConfig],
            corpus_name: str = "", today: str | None = None) -> dict:
    """The ``refined_constants`` section fitted on the recorded ``rows`` (one-line error where they cannot fit).

    A term chain whose kernels the design held no configuration of (this GPU runs none of them) keeps
    the bundled constants of that chain, pinned, and the section's ``source`` says so; one whose runs
    the budget cut below :data:`MIN_CHAIN_RUNS` is an error: its constants would be guesses.
    """
    import numpy as np

    from .. import model, refinement
    from ..fingerprint import kernel_fingerprint
    from . import fitting

    runs = [r for r in fitting.runs_from_rows(rows, spec, device) if spec.has(r.unit, r.precision)]
    bad = len(rows) - len(runs)
    if len(runs) < MIN_CONFIGS:
        raise TcAdvisorError(f"calibrate --fit: {len(runs)} of {len(rows)} recorded configurations ran correctly, "
                             f"fewer than the {MIN_CONFIGS} a fit needs; give it more --fit-minutes")
    pinned = dict(fitting.PINNED)
    kept = []
    bundled = refinement.constants()  # the file's (no spec given)
    for name, why in fitting.CALIBRATE_PINNED_BUNDLED.items():
        pinned[name] = (bundled[next(s for s in model.FITTED if s.name == name)], f"the bundled value: {why}")
    for chain, own in _chain_constants().items():
        planned = sum(("cuda_core" if c.unit == "cuda_core" else "tensor_core") == chain for c in configs)
        ran = sum(r.chain == chain for r in runs)
        label = "CUDA-core" if chain == "cuda_core" else "Tensor Core"
        if planned == 0:
            for s in own:
                pinned.setdefault(s.name, (bundled[s], f"no {label} kernel runs on this GPU: the bundled value"))
            kept += [s.name for s in own]
        elif ran < MIN_CHAIN_RUNS:
            free = ", ".join(s.name for s in own if s.name not in pinned)
            raise TcAdvisorError(f"calibrate --fit: {ran} {label} runs completed, fewer than the {MIN_CHAIN_RUNS} "
                                 f"that fit {free}; give it more --fit-minutes")
    try:
        fitted = fitting.fit(runs, pinned)
    except ValueError as exc:  # scipy: residuals not finite at the start (a run the model cannot evaluate)
        raise TcAdvisorError(f"calibrate --fit: the fit failed on the recorded runs ({exc})") from None
    pred = fitting.predict(runs, fitted)
    error = float(np.median(np.abs(pred / np.array([r.measured for r in runs]) - 1)))
    if not math.isfinite(error):
        raise TcAdvisorError("calibrate --fit: the fitted model gives no finite prediction for the recorded runs")
    held = [name for name in pinned if name not in kept]
    source = (f"tcadvisor calibrate --fit on {device}: {len(runs)} configurations checked and timed"
              + (f" ({bad} more failed, were refused, were not timed or have no rate in the spec)" if bad else "")
              + "; soft-L1 least squares of log(predicted/measured) as for the bundled constants"
              + (f"; {', '.join(held)} held at the bundled value (identified only on the project's corpora)"
                 if held else "")
              + (f"; {', '.join(kept)} kept at the bundled values (no kernel of theirs runs here)" if kept else ""))
    return {"constants": {s.name: float(v) for s, v in fitted.items()},
            "kernel_fingerprint": kernel_fingerprint(), "runs": len(runs),
            "fitted": today or datetime.date.today().isoformat(),
            "in_sample_median_error": round(error, 4), "corpus": corpus_name, "source": source}


def fit_on_this_gpu(spec: GpuSpec, spec_path: Path, device: str, *, configs: int = FIT_CONFIGS,
                    minutes: float = FIT_MINUTES, say: Callable[[str], None] | None = None,
                    progress: Callable[[str], None] | None = None, date: str | None = None) -> dict:
    """Plan, record and fit on this GPU; the ``refined_constants`` section for the spec written at ``spec_path``.

    ``say`` gets the few lines that frame the run (what runs, how long, what came out); ``progress`` one
    line per configuration (the caller passes it only on a terminal); ``date`` the calibration's (default
    today), so that the spec's name and its constants carry one date.  Needs CuPy and the GPU.
    """
    say = say or (lambda text: None)
    if spec.multiprocessors is None:
        raise TcAdvisorError("calibrate --fit: the device reported no shared-memory, register and warp limits, so "
                             "the bundled kernels' occupancy (and the refined model) cannot be sized on it")
    todo = plan(spec, configs)
    if not todo:
        raise TcAdvisorError(f"calibrate --fit: none of the bundled kernels runs on {device} as its spec says")
    csv_path = corpus_path(spec_path)
    say(f"fit: {len(todo)} configurations of the bundled kernels, checked and timed, for at most {minutes:g} min; "
        f"runs kept in {csv_path}")
    start = time.monotonic()
    rows = record(todo, csv_path, 60 * minutes, progress)
    took = time.monotonic() - start
    cut = f" (the {minutes:g}-minute budget; --fit-minutes for more)" if len(rows) < len(todo) else ""
    say(f"fit: recorded {len(rows)} of {len(todo)} configurations in {clock(took)}{cut}; fitting")
    found = section(rows, spec, device, todo, csv_path.name, date)
    say(f"fit: {found['runs']} runs, in-sample median error {100 * found['in_sample_median_error']:.1f} %")
    return found
