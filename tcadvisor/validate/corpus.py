"""The corpus: bundled-kernel runs that span the space the advisor answers about.

The refined model is judged on shapes it was not fitted to (leave-one-shape-out,
:mod:`tcadvisor.validate.crossval`), so its data must span every axis a user can
move along: 1D, 2D and 3D; box, star and custom patterns (asymmetric, with holes,
diagonal only); radius 1 to 3 (4 in 2D); every dtype and unit; depths up to the
deepest each kernel holds; and a few grids other than the default.  A full product
is thousands of configurations, so :func:`design` samples it in strata (one curve
per shape, unit and dtype, a few depths along each) sized to the GPU time at hand.

A *shape* is (dimensions, pattern, radius): Box-2D1R and Box-2D2R are two shapes,
and the upwind stencil is one shape of pattern ``upwind``.  :func:`shape_of` names it.

This module plans on any machine; only :func:`run_config` and :func:`record` need
CuPy and a GPU.  ``benchmarks/record_corpus.py`` records a corpus on a lent GPU and
``tcadvisor calibrate --fit`` records a short one on the user's.
"""
from __future__ import annotations

import csv
import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import TcAdvisorError
from ..hardware import GpuSpec
from ..stencil import Stencil

#: The units and the bundled profile that runs each.
PROFILES = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc", "sparse_tensor_core": "tcadvisor-sptc"}

#: Custom patterns: offsets in the array's axis order (z, y, x).  Chosen for what box and star
#: stencils never show the model: asymmetric support, holes, a support with no axis points.
CUSTOM_PATTERNS: dict[tuple[int, str], tuple[tuple[int, ...], ...]] = {
    # second-order upwind differences along x and along y+x (backward only)
    (1, "upwind"): ((0,), (-1,), (-2,), (-3,), (1,)),
    (2, "upwind"): ((0, 0), (0, -1), (0, -2), (-1, 0), (-2, 0)),
    (3, "upwind"): ((0, 0, 0), (0, 0, -1), (0, 0, -2), (0, -1, 0), (0, -2, 0), (-1, 0, 0), (-2, 0, 0)),
    # a 5x5 box without its four corners and without the inner diagonal ring
    (2, "holes"): tuple((y, x) for y in range(-2, 3) for x in range(-2, 3)
                        if not (abs(y) == 2 and abs(x) == 2) and not (abs(y) == 1 and abs(x) == 1)),
    # the centre and the diagonals only
    (2, "diagonal"): ((0, 0),) + tuple((s * k, u * k) for k in (1, 2) for s in (-1, 1) for u in (-1, 1)),
    (3, "diagonal"): ((0, 0, 0),) + tuple((a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)),
}
#: Box and star radii per dimension (in 1D a star is a box).
RADII = {1: (1, 2, 3), 2: (1, 2, 3, 4), 3: (1, 2, 3)}
#: Grids other than the default, one per dimension: a non-square grid of about the same size.
OTHER_GRIDS = {1: (3 * 2**25,), 2: (4096, 25600), 3: (256, 384, 1024)}
#: Small odd grids the correctness check runs on (fast; odd extents catch edge handling).
CHECK_GRIDS = {1: (100_003,), 2: (517, 1031), 3: (13, 37, 261)}
#: Depths sampled along a curve, besides its first and its deepest.
DEPTH_LADDER = (2, 3, 4, 6, 8, 11, 16)


def corpus_stencils() -> list[Stencil]:
    """Every shape of the corpus as a stencil (custom ones named ``<pattern>-<d>d``)."""
    out = []
    for dims, radii in RADII.items():
        for pattern in ("box",) if dims == 1 else ("box", "star"):
            out += [getattr(Stencil, pattern)(dims, r) for r in radii]
    for (dims, pattern), offsets in CUSTOM_PATTERNS.items():
        out.append(Stencil.from_offsets(offsets, name=f"{pattern}-{dims}d"))
    return out


def shape_of(stencil: Stencil) -> str:
    """The shape a stencil belongs to for cross-validation: ``<d>D-<pattern>-r<radius>``.

    Box and star stencils are patterns of their own; a custom stencil's pattern is its
    name up to the first ``-`` (the corpus names them ``upwind-2d``), else ``custom``
    plus its point count.
    """
    if stencil.shape in ("box", "star"):
        pattern = stencil.shape
    else:
        head = stencil.name.split("-")[0].lower()
        pattern = head if head and not head.startswith("custom") else f"custom{stencil.K}p"
    return f"{stencil.dims}D-{pattern}-r{stencil.radius}"


def offsets_text(stencil: Stencil) -> str:
    """The offsets of a custom stencil as compact JSON (empty for box and star: the name says it)."""
    return "" if stencil.shape in ("box", "star") else json.dumps([list(o) for o in stencil.offsets],
                                                                   separators=(",", ":"))


def stencil_from_row(name: str, offsets: str) -> Stencil:
    """The stencil a corpus row was recorded for (its name, or its offsets for a custom one)."""
    from ..stencil import parse_stencil

    if offsets:
        return Stencil.from_offsets([tuple(o) for o in json.loads(offsets)], name=name)
    return parse_stencil(name)


@dataclass(frozen=True)
class CorpusConfig:
    """One configuration to run: a stencil on one unit, in one dtype, at one depth, on one grid."""

    shape: str
    stencil: str
    offsets: str  # JSON offsets of a custom stencil, "" for box and star
    unit: str
    dtype: str
    precision: str
    fuse: int
    grid: tuple[int, ...]
    stratum: str  # "curve" (default grid) or "grid" (another grid)

    def stencil_obj(self) -> Stencil:
        return stencil_from_row(self.stencil, self.offsets)

    @property
    def curve(self) -> tuple:
        """Configurations of one curve differ only in depth."""
        return (self.shape, self.stencil, self.unit, self.dtype, self.grid)


def _default_grid(dims: int) -> tuple[int, ...]:
    from ..gpu.plans import DEFAULT_GRIDS

    return tuple(DEFAULT_GRIDS[dims])


def runnable_depths(stencil: Stencil, unit: str, dtype: str, spec: GpuSpec, max_fuse: int = 16) -> tuple[
        str | None, list[int], dict[int, str]]:
    """(precision, the depths the bundled kernel of ``unit`` runs, why each other depth cannot) on ``spec``.

    The kernel's own refusals and its plan's limits (:func:`tcadvisor.refinement.cannot_run`),
    the same test the advisor applies; precision None: the kernel has no variant for ``dtype``.
    """
    from .. import refinement
    from ..gpu import registry
    from ..impls import find_impl

    prof = find_impl(PROFILES[unit])
    try:
        precision = registry.precision(prof, dtype)
    except TcAdvisorError:
        return None, [], {}
    ok, why = [], {}
    for t in range(1, max_fuse + 1):
        mma = default_mma(unit, stencil, t, precision, spec)
        ctx = refinement.Context(prof, prof.tiling, unit, stencil, t, dtype, precision, mma, spec)
        try:
            reason = refinement.cannot_run(ctx, t)
        except TcAdvisorError as exc:
            reason = str(exc)
        if reason is None:
            ok.append(t)
        else:
            why[t] = reason
    return precision, ok, why


def default_mma(unit: str, stencil: Stencil, fuse: int, precision: str, spec: GpuSpec):
    """The instruction the dense kernel picks by default on ``spec`` (None on the other units or beyond its
    radius): of the shapes the profile lists, the kernel implements and the spec has, the one that pads the
    fused kernel least, as the kernel's own ``default_shape`` does on the device."""
    if unit != "tensor_core":
        return None
    from ..gpu.tensor_cores import SHAPES, fused_radius_limit
    from ..impls import find_impl
    from ..transforms import least_padding_shape

    if stencil.radius * fuse > fused_radius_limit(stencil.dims):
        return None
    have = {str(s) for s in spec.shapes(unit, precision)}
    shapes = tuple(s for s in find_impl(PROFILES[unit]).mma.get(precision, ())
                   if str(s) in SHAPES[precision] and str(s) in have)
    if not shapes:
        return None
    try:
        return least_padding_shape("rowband", stencil.fused_mask(fuse), shapes)
    except TcAdvisorError:
        return None


def enumerate_space(spec: GpuSpec, max_fuse: int = 16) -> dict[tuple, list[CorpusConfig]]:
    """Every runnable configuration on the default grid, by curve."""
    from ..impls import find_impl

    curves: dict[tuple, list[CorpusConfig]] = {}
    for st in corpus_stencils():
        for unit, name in PROFILES.items():
            for dtype in find_impl(name).precisions:
                precision, depths, _ = runnable_depths(st, unit, dtype, spec, max_fuse)
                grid = _default_grid(st.dims)
                confs = [CorpusConfig(shape_of(st), st.name, offsets_text(st), unit, dtype, precision, t, grid, "curve")
                         for t in depths]
                if confs:
                    curves[confs[0].curve] = confs
    return curves


def _sample_depths(depths: list[int], rng: random.Random, per_curve: int) -> list[int]:
    """First, deepest, and a spread of the ladder between (every depth if the curve is short)."""
    if len(depths) <= per_curve:
        return list(depths)
    keep = {depths[0], depths[-1]}
    ladder = [t for t in DEPTH_LADDER if t in depths and t not in keep]
    while len(keep) < per_curve and ladder:
        keep.add(ladder.pop(rng.randrange(len(ladder)) if len(keep) > 3 else 0))
    return sorted(keep)


def design(spec: GpuSpec, n_target: int = 420, seed: int = 1, max_fuse: int = 16,
           other_grid_share: float = 0.08) -> list[CorpusConfig]:
    """A stratified sample of the runnable space of about ``n_target`` configurations.

    Every curve (shape x unit x dtype) is kept, with up to ``per_curve`` depths (its first,
    its deepest and a spread between, so best depths can be located); ``per_curve`` is
    the largest that fits ``n_target``.  A share of the budget re-runs a few curves on
    another grid (:data:`OTHER_GRIDS`).  Ordered so that a run cut short by its time
    limit still covers every shape: one depth of every curve first, then the next ones.
    """
    rng = random.Random(seed)
    curves = enumerate_space(spec, max_fuse)
    budget = max(len(curves), int(n_target * (1 - other_grid_share)))
    per_curve = 2
    while per_curve < max_fuse and sum(min(len(c), per_curve + 1) for c in curves.values()) <= budget:
        per_curve += 1
    chosen = {key: [c for c in confs if c.fuse in _sample_depths([x.fuse for x in confs], rng, per_curve)]
              for key, confs in curves.items()}
    # other grids: per dimension, a few curves at two depths
    extra: list[CorpusConfig] = []
    n_extra = int(n_target * other_grid_share)
    keys = sorted(curves, key=lambda k: (k[0], k[2], k[3]))
    rng.shuffle(keys)
    for key in keys:
        if len(extra) >= n_extra:
            break
        confs = curves[key]
        dims = confs[0].stencil_obj().dims
        picks = sorted({confs[0].fuse, confs[len(confs) // 2].fuse})
        extra += [CorpusConfig(c.shape, c.stencil, c.offsets, c.unit, c.dtype, c.precision, c.fuse,
                               OTHER_GRIDS[dims], "grid") for c in confs if c.fuse in picks]
    # interleave: round k holds the k-th chosen depth of every curve
    ordered, k = [], 0
    lists = list(chosen.values())
    rng.shuffle(lists)
    while any(k < len(c) for c in lists):
        ordered += [c[k] for c in lists if k < len(c)]
        k += 1
    return ordered + extra


# --------------------------------------------------------------------------- recording (GPU)

#: ``refresh_seconds``: one periodic ghost refresh of the run's fields, timed alone (every timed sweep includes one;
#: the model has no term for it yet); corpora recorded before 2026-11-28 (session 43) lack it.
COLUMNS = ("gpu", "date", "shape", "stencil", "offsets", "unit", "impl", "dtype", "precision", "mma", "fuse",
           "grid", "stratum", "steps", "seconds", "gstencils", "refresh_seconds", "status", "reason", "checked",
           "correct", "max_rel_error", "tolerance", "check_steps", "alpha", "kernel")
#: Columns read as numbers (NaN where a row or an older corpus has none).
NUMERIC_COLUMNS = ("gstencils", "seconds", "refresh_seconds", "max_rel_error", "tolerance")


def make_kernels(cfg: CorpusConfig, seed: int = 1):
    """Compile the configuration's kernel (what a worker process does ahead of the timing loop)."""
    from ..gpu import registry
    from ..gpu.runner import default_weights, make_kernel

    st = cfg.stencil_obj()
    return make_kernel(st, registry.resolve(cfg.unit), cfg.fuse, cfg.dtype, default_weights(st, seed))


def run_config(cfg: CorpusConfig, *, sweeps: int = 4, repeats: int = 5, seed: int = 1, check: bool = True) -> dict:
    """Check one configuration on a small odd grid, then time it on its own grid: one corpus row.

    The check runs two sweeps against the float64 reference (every sweep within its rounding
    interval, NaN-poisoned outputs); the timing ``sweeps`` sweeps, the median of ``repeats``.
    A configuration that fails its check is recorded with its error and never timed.
    """
    from ..gpu.runner import run

    st = cfg.stencil_obj()
    row = {"shape": cfg.shape, "stencil": cfg.stencil, "offsets": cfg.offsets, "unit": cfg.unit,
           "impl": PROFILES[cfg.unit], "dtype": cfg.dtype, "precision": cfg.precision, "fuse": cfg.fuse,
           "grid": "x".join(map(str, cfg.grid)), "stratum": cfg.stratum, "status": "ok", "reason": ""}
    try:
        if check:
            checked = run(st, cfg.dtype, unit=cfg.unit, fuse=cfg.fuse, grid=CHECK_GRIDS[st.dims], steps=2 * cfg.fuse,
                          seed=seed, check=True, repeats=1, warmup=0)
            row.update(checked=True, correct=bool(checked.passed), max_rel_error=checked.max_rel_error,
                       tolerance=checked.tolerance, check_steps=2 * cfg.fuse)
            if not checked.passed:
                row.update(status="failed", reason=f"check failed: {checked.max_rel_error} > {checked.tolerance}")
                return row
        res = run(st, cfg.dtype, unit=cfg.unit, fuse=cfg.fuse, grid=cfg.grid, steps=sweeps * cfg.fuse, seed=seed,
                  check=False, repeats=repeats, warmup=1)
    except TcAdvisorError as exc:
        row.update(status="refused", reason=str(exc))
        return row
    row.update(gpu=res.device, mma=res.mma or "", steps=res.steps, seconds=res.seconds, gstencils=res.gstencils,
               refresh_seconds=res.refresh_seconds, alpha=str(res.alpha) if res.alpha is not None else "",
               kernel=res.kernel)
    return row


def write_header(path: Path, header: dict) -> None:
    path.write_text(json.dumps(header, indent=1, sort_keys=True) + "\n")


def record(configs: list[CorpusConfig], out: Path, *, budget_s: float, sweeps: int = 4, repeats: int = 5,
           progress=None) -> list[dict]:
    """Run ``configs`` in order until ``budget_s`` seconds have passed; append each row to ``out`` (CSV) as it
    completes, so that a run cut short keeps what it measured."""
    import datetime

    start = time.time()
    rows = []
    new = not out.exists()
    with out.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for i, cfg in enumerate(configs):
            if time.time() - start > budget_s:
                break
            t0 = time.time()
            try:
                row = run_config(cfg, sweeps=sweeps, repeats=repeats)
            except Exception as exc:  # noqa: BLE001 - one broken configuration must not lose the corpus
                row = {**asdict(cfg), "grid": "x".join(map(str, cfg.grid)), "impl": PROFILES[cfg.unit],
                       "status": "error", "reason": f"{type(exc).__name__}: {exc}"[:300]}
            row["date"] = datetime.date.today().isoformat()
            writer.writerow(row)
            f.flush()
            rows.append(row)
            if progress is not None:
                progress(i + 1, len(configs), row, time.time() - t0)
    return rows


def load_corpus(folder: Path) -> tuple[dict, list[dict]]:
    """A recorded corpus: its header (corpus.json) and rows (corpus.csv), numbers parsed."""
    folder = Path(folder)
    from ..files import load_json

    header = load_json(folder / "corpus.json", "corpus header")
    superseded = set(header.get("superseded_runs", ())) if isinstance(header, dict) else set()
    rows = []
    with (folder / "corpus.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            row = parse_row(row)
            if row.get("status") == "ok" and run_key(row) in superseded:
                # recorded with a launch today's kernel no longer makes by default (the header's note says why)
                row["status"], row["reason"] = "superseded", "launch no longer today's default plan"
            rows.append(row)
    return header, rows


def run_key(row: dict) -> str:
    """One recorded run, as a corpus header names it (``superseded_runs``)."""
    return f"{row['stencil']} {row['unit']} {row['dtype']} t={row['fuse']} {row['grid']}"


def parse_row(row: dict) -> dict:
    """A corpus row as read from its CSV, with its depth and :data:`NUMERIC_COLUMNS` parsed."""
    row["fuse"] = int(row["fuse"])
    for key in NUMERIC_COLUMNS:
        row[key] = float(row[key]) if row.get(key) not in (None, "") else math.nan
    return row


#: The files that decide a launch and nothing else (the planner, its measured defaults, the compiler reports it
#: picks 3D tiles by): where only these changed since a corpus was recorded, :func:`launches_changed` tells
#: whether its runs are still today's kernels.
PLANNER_FILES = ("kernels/compiled-resources.csv", "kernels/defaults.yaml", "tcadvisor/gpu/defaults.py",
                 "tcadvisor/gpu/plans.py")


def recorded_plan(row: dict):
    """The launch a recorded run made, rebuilt from the kernel's own description of itself, kept in every row
    (:func:`tcadvisor.gpu.plans.recorded_cuda_core_plan` and its Tensor Core siblings)."""
    from ..gpu import plans
    from ..impls import find_impl

    recorded = {"cuda_cores": plans.recorded_cuda_core_plan, "tensor_cores": plans.recorded_tensor_core_plan,
                "sparse_tensor_cores": plans.recorded_sparse_tensor_core_plan}
    kernel = find_impl(PROFILES[row["unit"]]).kernel
    return recorded[kernel](stencil_from_row(row["stencil"], row["offsets"]), int(row["fuse"]), row["precision"],
                            row["kernel"])


def _launch_moved(row: dict) -> bool:
    """Whether today's default plan of a recorded run's configuration launches something else than it did."""
    from .. import refinement
    from ..impls import find_impl
    from ..mma import MmaShape

    then = recorded_plan(row)
    today = refinement.plan_for(find_impl(PROFILES[row["unit"]]).kernel, stencil_from_row(row["stencil"], row["offsets"]),
                                int(row["fuse"]), row["precision"], MmaShape.parse(row["mma"]) if row["mma"] else None)
    return (today.defines, today.smem, today.block) != (then.defines, then.smem, then.block)


def superseded_keys(rows: list[dict]) -> list[str]:
    """:func:`run_key` of every run that :func:`launches_changed` finds (status ok, launch not today's default)."""
    return [run_key(r) for r in rows if r["status"] == "ok" and _launch_moved(r)]


def launches_changed(rows: list[dict]) -> list[str]:
    """The recorded runs whose launch is not today's default plan (empty: every run is what today's code launches).

    A run's launch is read from the kernel's own description of itself (:func:`recorded_plan`) and compared
    with today's default plan (:func:`tcadvisor.refinement.plan_for`) by compile-time constants, shared memory
    and block.  With the CUDA sources unchanged, equal launches mean the run timed today's kernel: a
    change of the planner or of its measured defaults that this finds nothing for did not change what ran.
    Rows that failed are skipped (they timed nothing)."""
    return [f"{r['stencil']} {r['unit']} {r['precision']} t={int(r['fuse'])}" for r in rows
            if r["status"] == "ok" and _launch_moved(r)]
