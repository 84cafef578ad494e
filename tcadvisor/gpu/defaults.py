"""The bundled kernels' measured defaults: kernels/defaults.yaml, read once and checked.

The launch planner (:mod:`tcadvisor.gpu.plans`) decides a kernel's shape by rules, except where a scan on a GPU
measured something better: those measured choices live in ``kernels/defaults.yaml``, beside the kernels they
configure, each entry with the results folder it came from (``source:``).  :func:`measured` reads the file once
(the bounded reader, :func:`tcadvisor.files.load_yaml`), checks every value, and returns them in the shapes the
planner looks them up in (:class:`MeasuredDefaults`).

Provenance is checked where it can be: run from a checkout (``validation/results/`` beside ``kernels/``), every
``source`` must be a folder there; an installed wheel ships no recorded runs, and the check is skipped.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import TcAdvisorError

FILE = "defaults.yaml"
#: Where every ``source`` must lie (relative to the repository root).
RESULTS = PurePosixPath("validation/results")
_PRECISIONS = ("fp64", "fp32", "tf32", "fp16")
_CC_PRECISIONS = ("fp64", "fp32")
_SHAPES = ("box", "star")
#: The knobs a dense Tensor Core entry may name, and what each must be.
_TC_KNOBS = {"weights_shared": bool, "shared_words": bool, "prefetch": int, "l2_prefetch": int, "warps": int,
             "x_tiles": int, "inner_rows": int}
#: The knobs a Sparse Tensor Core entry may name, and what each must be.
_SPTC_KNOBS = {"weights_shared": bool, "inner_rows": int, "x_tiles": int, "prefetch": int, "l2_prefetch": int,
               "stages": int, "fixed_alignment": bool, "whole_windows": bool, "min_blocks": int}
#: Entry name -> what its value holds (for the messages).
ENTRIES = {
    "tile1d_threads": "threads per block",
    "tile1d_points_per_thread": "points per thread by precision",
    "tile1d_max_points_per_thread": "points per thread at most",
    "tile1d_staged": "true or false",
    "tile1d_deep": "precision -> radius -> from depth -> [points per thread, threads] or null",
    "pending_words_2d": "32-bit registers",
    "one_row_from": "a depth by precision",
    "async_from_fp64_r1": "a depth",
    "rows_ahead_2d_r1": "precision -> [from depth, iterations of input rows in flight]",
    "rows_ahead_2d": "precision -> radius -> depth -> iterations of input rows in flight",
    "wide_strips_fp64_box_r1": "a list of depths",
    "direct_store_depths": "precision -> shape -> radius -> depths",
    "keep_columns_depths": "precision -> shape -> radius -> depths",
    "cc3d_radius1": "precision -> depth -> [v, cols, rows, rows per thread, planes in flight]",
    "cc3d_radius1_few_points": "precision -> depth -> {points: at most, tile: [v, cols, rows, rows per thread, "
                               "planes in flight]}",
    "cc3d_vector_loads": "precision -> radius -> depths",
    "pairs_strips_2d": "from depth -> [columns per thread, strip columns]",
    "pairs_copies_2d": "radius -> from depth -> [columns per thread, strip columns, iterations ahead] or null",
    "tensor_cores": "dimensions -> precision -> fused radius -> {mma, knobs}",
    "sparse_tensor_cores_l2_prefetch": "dimensions -> precision -> fused radius -> slices",
    "sparse_tensor_cores": "dimensions -> precision -> fused radius -> {knobs}",
    "sparse_tensor_cores_half_accumulators": "dimensions -> fp16 -> fused radius -> {knobs}",
    "tensor_cores_1d_rows": "kernel (dense, sparse) -> precision -> the fused radius from which a 1D line runs as rows",
    "tensor_cores_1d_x_tiles": "precision -> the fused radius from which the knobs hold -> {x_tiles, l2_prefetch}",
    "tensor_cores_1d_stages": "precision -> the fused radius from which the count holds -> stages (0 or 2-8)",
    "tensor_cores_stages": "dimensions (2, 3) -> precision -> the fused radius from which the count holds -> stages "
                           "(0 or 2-8), or {stages, warps}",
}


@dataclass(frozen=True)
class MeasuredDefaults:
    """kernels/defaults.yaml in the planner's terms (keys as plans.py looks them up)."""

    tile1d_threads: int
    tile1d_v: dict  # precision -> points per thread
    tile1d_max_v: int
    tile1d_stage: bool
    tile1d_deep: dict  # (precision, radius) -> ((from depth, (points per thread, threads) or None), ...) by depth
    pend_words_2d: int
    one_row_from: dict  # precision -> depth
    async_from_fp64_r1: int
    rows_ahead_2d_r1: dict  # precision -> (from depth, iterations of input rows in flight)
    rows_ahead_2d: dict  # (precision, radius) -> {depth: iterations of input rows in flight}, radius 2 and more
    wide_strips_fp64_box_r1: tuple
    direct_store_depths: dict  # (precision, shape, radius) -> depths
    keep_columns_depths: dict  # (precision, shape, radius) -> depths
    cc3d: dict  # (precision, depth) -> (v, cols, rows, rows per thread, planes in flight)
    cc3d_few_points: dict  # (precision, depth) -> (most points, (v, cols, rows, rows per thread, planes in flight))
    cc3d_vector_loads: dict  # (precision, radius) -> depths where the 3D kernel reads its shared rows as vectors
    pairs_strips_2d: tuple  # ((from depth, columns per thread, strip columns), ...) by depth, FP16/BF16 pairs
    pairs_copies_2d: dict  # radius -> ((from depth, (v, strip columns, iterations ahead) or None), ...) by depth
    tc: dict  # (dims, precision, fused radius) -> (mma, {knob: value})
    sptc_l2: dict  # (dims, precision, fused radius) -> slices
    sptc: dict  # (dims, precision, fused radius) -> {knob: value}, the whole configuration where measured
    sptc_half: dict  # (dims, "fp16", fused radius) -> {knob: value} over sptc's, where FP16 accumulators measured best
    line_rows_from: dict  # (kernel, precision) -> fused radius from which a 1D line runs as rows (plans.block_row_points)
    tc_1d_x_tiles: dict  # precision -> ((from fused radius, {knob: value}), ...) by radius, the dense kernel in 1D
    tc_1d_stages: dict  # precision -> ((from fused radius, stages), ...) by radius, the dense kernel in 1D
    tc_stages: dict  # (dims, precision) -> ((from fused radius, stages or (stages, warps)), ...) by radius, 2D/3D
    sources: dict  # entry -> tuple of results folders


class _Reader:
    """Checks of one file's values, each failure one line naming the file and the entry."""

    def __init__(self, path):
        self.path = path

    def fail(self, where: str, expected: str, got) -> TcAdvisorError:
        return TcAdvisorError(f"kernel defaults {self.path}: {where} is {got!r}; expected {expected}")

    def int_(self, value, where: str, lo: int = 0, hi: int = 4096) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(where, f"a whole number from {lo} to {hi}", value)
        return value

    def mapping(self, value, where: str, keys=None) -> dict:
        if not isinstance(value, dict) or not value:
            raise self.fail(where, "a non-empty mapping", value)
        if keys is not None:
            for k in value:
                if k not in keys:
                    raise self.fail(f"{where} key {k!r}", "one of " + ", ".join(map(str, keys)), k)
        return value

    def depths(self, value, where: str) -> tuple:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "a non-empty list of depths", value)
        return tuple(self.int_(t, f"{where} depth", 1, 64) for t in value)

    def by_stencil(self, value, where: str) -> dict:
        out = {}
        for p, shapes in self.mapping(value, where, _CC_PRECISIONS).items():
            for s, radii in self.mapping(shapes, f"{where}.{p}", _SHAPES).items():
                for r, ts in self.mapping(radii, f"{where}.{p}.{s}").items():
                    out[p, s, self.int_(r, f"{where}.{p}.{s} radius", 1, 64)] = self.depths(ts, f"{where}.{p}.{s}.{r}")
        return out

    def from_depths(self, value, where: str, leaf) -> tuple:
        """``from depth -> entry or null`` as ((depth, leaf(entry, where) or None), ...) by depth: each entry holds
        from its depth up to the next one's."""
        steps = []
        for t, entry in self.mapping(value, where).items():
            at = f"{where}.{t}"
            steps.append((self.int_(t, f"{at} depth", 1, 64), None if entry is None else leaf(entry, at)))
        return tuple(sorted(steps, key=lambda c: c[0]))

    def by_fused_radius(self, value, where: str, leaf) -> dict:
        out = {}
        for d, precisions in self.mapping(value, where, (1, 2, 3)).items():
            for p, radii in self.mapping(precisions, f"{where}.{d}", _PRECISIONS).items():
                for R, v in self.mapping(radii, f"{where}.{d}.{p}").items():
                    out[d, p, self.int_(R, f"{where}.{d}.{p} fused radius", 1, 64)] = leaf(v, f"{where}.{d}.{p}.{R}")
        return out

    def tc_entry(self, value, where: str) -> tuple:
        from ..mma import MmaShape

        entry = self.mapping(value, where, ("mma", *_TC_KNOBS))
        try:
            mma = str(MmaShape.parse(str(entry.get("mma"))))
        except (TcAdvisorError, ValueError):
            raise self.fail(f"{where}.mma", "an MMA instruction such as m16n8k8", entry.get("mma")) from None
        return mma, self._knob_values({k: v for k, v in entry.items() if k != "mma"}, where, _TC_KNOBS)

    def knobs(self, value, where: str, allowed: dict) -> dict:
        return self._knob_values(self.mapping(value, where, tuple(allowed)), where, allowed)

    def _knob_values(self, entry: dict, where: str, allowed: dict) -> dict:
        """Each knob of ``entry`` checked as ``allowed`` says: true or false, or a whole number from 0 to 32."""
        knobs = {}
        for k, v in entry.items():
            if allowed[k] is bool:
                if not isinstance(v, bool):
                    raise self.fail(f"{where}.{k}", "true or false", v)
                knobs[k] = v
            else:
                knobs[k] = self.int_(v, f"{where}.{k}", 0, 32)
        return knobs

    def sources(self, value, where: str, root: Path | None) -> tuple:
        folders = value if isinstance(value, list) else [value]
        out = []
        for folder in folders:
            rel = PurePosixPath(folder) if isinstance(folder, str) else None
            if rel is None or rel.is_absolute() or ".." in rel.parts or rel.parts[:2] != RESULTS.parts:
                raise self.fail(f"{where}.source", f"a results folder under {RESULTS}/ (or a list of them)", folder)
            if root is not None and not (root / rel).is_dir():
                raise TcAdvisorError(f"kernel defaults {self.path}: {where}.source names {rel}, which is not a "
                                     f"folder of this checkout ({root}); name the results the values came from")
            out.append(str(rel))
        return tuple(out)


def checkout_root(kernels: Path) -> Path | None:
    """The repository root when ``kernels`` lies in a checkout with its recorded runs; None in a wheel."""
    root = kernels.resolve().parent
    return root if (root / RESULTS).is_dir() else None


def load(path: str | Path, root: Path | None = None) -> MeasuredDefaults:
    """``path`` read and checked; with ``root``, every ``source`` must be a folder under it."""
    from ..files import load_yaml

    raw = load_yaml(path, "kernel defaults")
    rd = _Reader(path)
    rd.mapping(raw, "the file", tuple(ENTRIES))
    missing = [k for k in ENTRIES if k not in raw]
    if missing:
        raise TcAdvisorError(f"kernel defaults {path}: no {', '.join(missing)}; expected every one of "
                             + ", ".join(ENTRIES))
    values, sources = {}, {}
    for name, entry in raw.items():
        rd.mapping(entry, name, ("source", "value"))
        if "source" not in entry or "value" not in entry:
            raise rd.fail(name, "a mapping of source: and value:", entry)
        sources[name] = rd.sources(entry["source"], name, root)
        values[name] = entry["value"]
    v = values
    staged = v["tile1d_staged"]
    if not isinstance(staged, bool):
        raise rd.fail("tile1d_staged.value", "true or false", staged)
    line_rows = {}
    for kernel, by_precision in rd.mapping(v["tensor_cores_1d_rows"], "tensor_cores_1d_rows.value",
                                           ("dense", "sparse")).items():
        for p, radius in rd.mapping(by_precision, f"tensor_cores_1d_rows.value.{kernel}", _PRECISIONS).items():
            line_rows[kernel, p] = rd.int_(radius, f"tensor_cores_1d_rows.value.{kernel}.{p}", 1, 64)
    x_tiles_1d = {}
    for p, ranges in rd.mapping(v["tensor_cores_1d_x_tiles"], "tensor_cores_1d_x_tiles.value", _PRECISIONS).items():
        where = f"tensor_cores_1d_x_tiles.value.{p}"
        steps = sorted((rd.int_(R, f"{where} fused radius", 1, 64),
                        rd.knobs(k, f"{where}.{R}", {"x_tiles": int, "l2_prefetch": int}))
                       for R, k in rd.mapping(ranges, where).items())
        if not steps or steps[0][0] != 1:
            raise rd.fail(where, "entries from fused radius 1 on", ranges)
        x_tiles_1d[p] = tuple(steps)
    def stage_count(count, where):
        count = rd.int_(count, where, 0, 8)
        if count == 1:
            raise rd.fail(where, "0 (no stages) or 2-8 stages", count)
        return count

    def stage_steps(ranges, where, with_warps=False):
        """(from fused radius, stages) by radius; ``with_warps`` (2D/3D): an entry may also be {stages, warps},
        the warps per block the stages were measured with, as (from fused radius, (stages, warps))."""
        steps = []
        for R, count in rd.mapping(ranges, where).items():
            at = f"{where}.{R}"
            if with_warps and isinstance(count, dict):
                entry = rd.mapping(count, at, ("stages", "warps"))
                if "stages" not in entry or "warps" not in entry:
                    raise rd.fail(at, "a stage count, or {stages: 2-8, warps: 1-32}", count)
                value = (stage_count(entry["stages"], f"{at}.stages"), rd.int_(entry["warps"], f"{at}.warps", 1, 32))
            else:
                value = stage_count(count, at)
            steps.append((rd.int_(R, f"{where} fused radius", 1, 64), value))
        return tuple(sorted(steps))

    stages_1d = {p: stage_steps(ranges, f"tensor_cores_1d_stages.value.{p}") for p, ranges in
                 rd.mapping(v["tensor_cores_1d_stages"], "tensor_cores_1d_stages.value", _PRECISIONS).items()}
    stages = {}
    for d, by_precision in rd.mapping(v["tensor_cores_stages"], "tensor_cores_stages.value", (2, 3)).items():
        for p, ranges in rd.mapping(by_precision, f"tensor_cores_stages.value.{d}", _PRECISIONS).items():
            stages[d, p] = stage_steps(ranges, f"tensor_cores_stages.value.{d}.{p}", with_warps=True)
    cc3d = {}
    # fp16: the FP16/BF16 pairs' own tiles where they were measured (else they take FP32's)
    for p, depths in rd.mapping(v["cc3d_radius1"], "cc3d_radius1.value", _CC_PRECISIONS + ("fp16",)).items():
        for t, tile in rd.mapping(depths, f"cc3d_radius1.value.{p}").items():
            where = f"cc3d_radius1.value.{p}.{t}"
            if not isinstance(tile, list) or len(tile) != 5:
                raise rd.fail(where, "[v, cols, rows, rows per thread, planes in flight]", tile)
            cc3d[p, rd.int_(t, f"{where} depth", 1, 64)] = tuple(rd.int_(x, where, 1, 1024) for x in tile)
    few_points = {}
    for p, depths in rd.mapping(v["cc3d_radius1_few_points"], "cc3d_radius1_few_points.value",
                                _CC_PRECISIONS + ("fp16",)).items():
        for t, entry in rd.mapping(depths, f"cc3d_radius1_few_points.value.{p}").items():
            where = f"cc3d_radius1_few_points.value.{p}.{t}"
            entry = rd.mapping(entry, where, ("points", "tile"))
            tile = entry.get("tile")
            if "points" not in entry or not isinstance(tile, list) or len(tile) != 5:
                raise rd.fail(where, "{points: at most, tile: [v, cols, rows, rows per thread, planes in flight]}",
                              entry)
            few_points[p, rd.int_(t, f"{where} depth", 1, 64)] = (
                rd.int_(entry["points"], f"{where}.points", 1, 27),
                tuple(rd.int_(x, f"{where}.tile", 1, 1024) for x in tile))
    vector_loads = {}
    for p, radii in rd.mapping(v["cc3d_vector_loads"], "cc3d_vector_loads.value", _CC_PRECISIONS + ("fp16",)).items():
        for r, ts in rd.mapping(radii, f"cc3d_vector_loads.value.{p}").items():
            where = f"cc3d_vector_loads.value.{p}"
            vector_loads[p, rd.int_(r, f"{where} radius", 1, 64)] = rd.depths(ts, f"{where}.{r}")
    strips = []
    for t, pair in rd.mapping(v["pairs_strips_2d"], "pairs_strips_2d.value").items():
        where = f"pairs_strips_2d.value.{t}"
        if not isinstance(pair, list) or len(pair) != 2:
            raise rd.fail(where, "[columns per thread, strip columns]", pair)
        strips.append((rd.int_(t, f"{where} depth", 1, 64), rd.int_(pair[0], where, 1, 32), rd.int_(pair[1], where, 32, 4096)))
    if not strips or min(strips)[0] != 1:
        raise rd.fail("pairs_strips_2d.value", "entries from depth 1 on", v["pairs_strips_2d"])
    def pair_copies(entry, where):
        if not isinstance(entry, list) or len(entry) != 3:
            raise rd.fail(where, "[columns per thread, strip columns, iterations ahead] or null", entry)
        entry = (rd.int_(entry[0], where, 2, 32), rd.int_(entry[1], where, 32, 4096), rd.int_(entry[2], where, 1, 8))
        if entry[0] % 2:
            raise rd.fail(where, "an even number of columns per thread (copied two at a time)", entry[0])
        return entry

    copies = {}
    for radius, by_depth in rd.mapping(v["pairs_copies_2d"], "pairs_copies_2d.value").items():
        radius = rd.int_(radius, "pairs_copies_2d.value radius", 1, 64)
        copies[radius] = rd.from_depths(by_depth, f"pairs_copies_2d.value.{radius}", pair_copies)
        if copies[radius][0][0] != 1:
            raise rd.fail(f"pairs_copies_2d.value.{radius}", "entries from depth 1 on", by_depth)
    rows_ahead = {}
    for p, pair in rd.mapping(v["rows_ahead_2d_r1"], "rows_ahead_2d_r1.value", ("fp64", "fp32")).items():
        where = f"rows_ahead_2d_r1.value.{p}"
        if not isinstance(pair, list) or len(pair) != 2:
            raise rd.fail(where, "[from depth, iterations of input rows in flight]", pair)
        rows_ahead[p] = (rd.int_(pair[0], f"{where} depth", 1, 64), rd.int_(pair[1], f"{where} iterations", 1, 8))
    def deep_tile(entry, where):
        if not isinstance(entry, list) or len(entry) != 2:
            raise rd.fail(where, "[points per thread, threads] or null", entry)
        return rd.int_(entry[0], where, 1, 64), rd.int_(entry[1], where, 32, 1024)

    deep_1d = {}
    for p, radii in rd.mapping(v["tile1d_deep"], "tile1d_deep.value", _CC_PRECISIONS + ("fp16",)).items():
        for r, by_depth in rd.mapping(radii, f"tile1d_deep.value.{p}").items():
            r = rd.int_(r, f"tile1d_deep.value.{p} radius", 1, 31)
            deep_1d[p, r] = rd.from_depths(by_depth, f"tile1d_deep.value.{p}.{r}", deep_tile)
    ahead_2d = {}
    for p, radii in rd.mapping(v["rows_ahead_2d"], "rows_ahead_2d.value", ("fp64", "fp32")).items():
        for r, by_depth in rd.mapping(radii, f"rows_ahead_2d.value.{p}").items():
            r = rd.int_(r, f"rows_ahead_2d.value.{p} radius", 2, 64)
            where = f"rows_ahead_2d.value.{p}.{r}"
            ahead_2d[p, r] = {rd.int_(t, f"{where} depth", 1, 64): rd.int_(n, f"{where}.{t}", 2, 8)
                              for t, n in rd.mapping(by_depth, where).items()}
    return MeasuredDefaults(
        tile1d_threads=rd.int_(v["tile1d_threads"], "tile1d_threads.value", 32, 1024),
        tile1d_v={p: rd.int_(x, f"tile1d_points_per_thread.value.{p}", 1, 64) for p, x in
                  rd.mapping(v["tile1d_points_per_thread"], "tile1d_points_per_thread.value", _CC_PRECISIONS).items()},
        tile1d_max_v=rd.int_(v["tile1d_max_points_per_thread"], "tile1d_max_points_per_thread.value", 1, 64),
        tile1d_stage=staged,
        tile1d_deep=deep_1d,
        pend_words_2d=rd.int_(v["pending_words_2d"], "pending_words_2d.value", 1, 255),
        one_row_from={p: rd.int_(x, f"one_row_from.value.{p}", 1, 64) for p, x in
                      rd.mapping(v["one_row_from"], "one_row_from.value", _CC_PRECISIONS).items()},
        async_from_fp64_r1=rd.int_(v["async_from_fp64_r1"], "async_from_fp64_r1.value", 1, 64),
        rows_ahead_2d_r1=rows_ahead,
        rows_ahead_2d=ahead_2d,
        wide_strips_fp64_box_r1=rd.depths(v["wide_strips_fp64_box_r1"], "wide_strips_fp64_box_r1.value"),
        direct_store_depths=rd.by_stencil(v["direct_store_depths"], "direct_store_depths.value"),
        keep_columns_depths=rd.by_stencil(v["keep_columns_depths"], "keep_columns_depths.value"),
        cc3d=cc3d,
        cc3d_few_points=few_points,
        cc3d_vector_loads=vector_loads,
        pairs_strips_2d=tuple(sorted(strips)),
        pairs_copies_2d=copies,
        tc=rd.by_fused_radius(v["tensor_cores"], "tensor_cores.value", rd.tc_entry),
        sptc_l2=rd.by_fused_radius(v["sparse_tensor_cores_l2_prefetch"], "sparse_tensor_cores_l2_prefetch.value",
                                   lambda x, where: rd.int_(x, where, 0, 32)),
        sptc=rd.by_fused_radius(v["sparse_tensor_cores"], "sparse_tensor_cores.value",
                                lambda x, where: rd.knobs(x, where, _SPTC_KNOBS)),
        sptc_half=rd.by_fused_radius(v["sparse_tensor_cores_half_accumulators"],
                                     "sparse_tensor_cores_half_accumulators.value",
                                     lambda x, where: rd.knobs(x, where, _SPTC_KNOBS)),
        line_rows_from=line_rows,
        tc_1d_x_tiles=x_tiles_1d,
        tc_1d_stages=stages_1d,
        tc_stages=stages,
        sources=sources,
    )


@functools.lru_cache(maxsize=1)
def measured() -> MeasuredDefaults:
    """The bundled kernels' measured defaults (kernels/defaults.yaml), read once."""
    from ..data import data_dir

    kernels = data_dir("kernels")
    return load(kernels / FILE, checkout_root(kernels))
