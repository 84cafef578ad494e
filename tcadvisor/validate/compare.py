"""Measured against predicted: relative errors, the bottleneck, and who wins each unit comparison.

The model (:mod:`tcadvisor.model`, through :func:`tcadvisor.advisor.evaluate_unit`) predicts, for a
configuration on a GPU spec, the FLOPs C and DRAM bytes M per output point and sweep, the
intensity I = C/M, the bottleneck (I against the ridge point) and the throughput bound.  A run
measures the throughput; Nsight Compute measures C and M.  This module only sets them side by
side:

* relative error = measured / predicted - 1 (negative: below the prediction);
* measured bottleneck: the roof the kernel came closer to, i.e. the larger of the fraction of the
  bandwidth it moved (bytes per second / B) and the fraction of the unit's peak it executed
  (FLOP/s / P).  With a profile both come from the counters; without, the traffic is the model's
  M (marked ``model traffic``);
* outcome of unit b against unit a (same stencil, dtype and depth): ``wins`` when b's throughput
  exceeds a's by more than the tie band, ``loses`` when it falls short by more, else ``ties``.
  The same band classifies the predicted ratio, so a predicted R = 1.04 is a tie, as a measured
  one would be.
"""
from __future__ import annotations

import math
import statistics
from fractions import Fraction
from itertools import combinations

from ..hardware import UNITS, GpuSpec
from .records import Comparison, Measurement


def rel_error(measured: float | None, predicted: float | None) -> float | None:
    """measured / predicted - 1, or None where either is missing or the prediction is zero."""
    if measured is None or predicted is None:
        return None
    if not (math.isfinite(measured) and math.isfinite(predicted)) or predicted == 0:
        return None
    return measured / predicted - 1


def outcome(ratio: float | None, band: float) -> str | None:
    """``wins`` / ``loses`` / ``ties`` for a throughput ratio b/a with a relative tie band."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return None
    if ratio > 1 + band:
        return "wins"
    if ratio < 1 - band:
        return "loses"
    return "ties"


# --------------------------------------------------------------------------- predictions


def predict(stencil, dtype: str, unit: str, fuse: int, spec: GpuSpec, alpha: Fraction | None = None, impl=None,
            mma=None, model: str = "base", grid: tuple[int, int, int] | None = None, kernel: str = ""):
    """The model's :class:`~tcadvisor.advisor.Option` for a bundled-kernel configuration.

    ``alpha`` is the kernel's own (counted from the operands it uploads); ``impl`` the profile
    (default: the unit's bundled profile); ``model`` the variant, ``grid`` ((nz, ny, nx)) the
    grid the refined terms are derived for, ``kernel`` the run's kernel description (its configuration,
    where the defaults have moved since).  The runner's ``RunResult.prediction`` is the same
    computation; this one serves recorded measurements and ``advise --run``.
    """
    from ..advisor import AlphaChoice, evaluate_unit

    from ..mma import MmaShape

    impl = impl or bundled_profile(unit)
    mma = MmaShape.parse(mma) if isinstance(mma, str) and mma else (mma or None)
    # the instruction the kernel executed, with its rate where the spec lists it
    choice = AlphaChoice("value", alpha, instruction=mma) if alpha is not None else AlphaChoice()
    cc_impl = bundled_profile("cuda_core")
    cc_precision, _ = cc_impl.precision_for(dtype, spec)
    cc_peak = spec.peak("cuda_core", cc_precision) if cc_precision else None
    return evaluate_unit(unit, impl, stencil, dtype, spec, [fuse], choice, cc_peak, model=model,
                         cc_impl=cc_impl if cc_precision else None, grid=grid, kernel=kernel)[0]


#: The bundled profile of each unit, where the registry does not say (see tcadvisor.gpu.registry).
BUNDLED_PROFILES = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc", "sparse_tensor_core": "tcadvisor-sptc"}


def bundled_profile(unit: str):
    try:
        from ..gpu import registry

        return registry.bundled_profile(unit)
    except ImportError:
        from ..impls import find_impl

        return find_impl(BUNDLED_PROFILES[unit])


def apply_prediction(m: Measurement, option, spec: GpuSpec) -> None:
    """Copy the model's numbers for this configuration into ``m``."""
    m.spec = spec.name
    m.pred_bandwidth_gbs = spec.bandwidth.value / 1e9
    if option is None:
        return
    if not option.available:
        m.note = _join(m.note, f"no prediction: {option.reason}")
        return
    m.pred_flops_per_point = option.flops_per_point
    m.pred_bytes_per_point = option.bytes_per_point
    m.pred_intensity = option.intensity
    m.pred_ridge = option.ridge
    m.pred_bound = option.bound
    m.pred_gstencils = option.gstencils
    m.pred_executed_tflops = option.executed_flops / 1e12
    m.pred_peak_tflops = option.peak / 1e12
    m.pred_scenario = option.scenario


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


# --------------------------------------------------------------------------- derived quantities


def derive(m: Measurement) -> None:
    """Measured C, M, I per point from the profile; relative errors; utilisation and bottleneck."""
    if m.profiled and m.points:
        if m.ncu_dram_read_bytes is not None and m.ncu_dram_write_bytes is not None:
            m.meas_bytes_per_point = (m.ncu_dram_read_bytes + m.ncu_dram_write_bytes) / m.points
        work = m.ncu_cc_flops if m.unit == "cuda_core" else _tensor_flops(m)
        if work is not None:
            m.meas_flops_per_point = work / m.points
        if m.meas_flops_per_point is not None and m.meas_bytes_per_point:
            m.meas_intensity = m.meas_flops_per_point / m.meas_bytes_per_point
    m.err_flops = rel_error(m.meas_flops_per_point, m.pred_flops_per_point)
    m.err_bytes = rel_error(m.meas_bytes_per_point, m.pred_bytes_per_point)
    m.err_intensity = rel_error(m.meas_intensity, m.pred_intensity)
    m.err_gstencils = rel_error(m.gstencils, m.pred_gstencils)
    bottleneck(m)


def _tensor_flops(m: Measurement) -> float | None:
    if m.ncu_tensor_inst is None or not m.mma:
        return None
    from .instructions import flops_per_instruction

    return m.ncu_tensor_inst * flops_per_instruction(m.mma)


def bottleneck(m: Measurement) -> None:
    """Fractions of the bandwidth and of the unit's peak reached, and the closer roof."""
    if not m.ok or not m.seconds or not m.sweeps or not m.points:
        return
    per_sweep = m.seconds / m.sweeps
    if m.meas_bytes_per_point is not None and m.meas_flops_per_point is not None:
        bytes_pp, flops_pp, m.meas_bound_basis = m.meas_bytes_per_point, m.meas_flops_per_point, "ncu"
    else:
        bytes_pp, flops_pp = m.pred_bytes_per_point, m.executed_flops_per_point
        m.meas_bound_basis = "model traffic"
    if bytes_pp is None or flops_pp is None or not m.pred_bandwidth_gbs or not m.pred_peak_tflops:
        return
    m.util_bandwidth = bytes_pp * m.points / per_sweep / (m.pred_bandwidth_gbs * 1e9)
    m.util_compute = flops_pp * m.points / per_sweep / (m.pred_peak_tflops * 1e12)
    m.meas_bound = "memory" if m.util_bandwidth >= m.util_compute else "compute"


# --------------------------------------------------------------------------- comparisons


def comparisons(measurements: list[Measurement], band: float) -> list[Comparison]:
    """Every pair of units measured at the same (suite, case, stencil, dtype, depth), in unit order."""
    groups: dict[tuple, dict[str, Measurement]] = {}
    for m in measurements:
        if m.ok:
            groups.setdefault((m.suite, m.case, m.stencil, m.dtype, m.fuse), {})[m.unit] = m
    out = []
    for (suite, case, stencil, dtype, fuse), by_unit in groups.items():
        present = [u for u in UNITS if u in by_unit]
        for ua, ub in combinations(present, 2):
            a, b = by_unit[ua], by_unit[ub]
            pred = _ratio(b.pred_gstencils, a.pred_gstencils)
            meas = _ratio(b.gstencils, a.gstencils)
            po, mo = outcome(pred, band), outcome(meas, band)
            out.append(Comparison(suite, case, stencil, dtype, fuse, ua, ub, pred, meas, po, mo,
                                  None if po is None or mo is None else po == mo, band))
    return out


def _ratio(b: float | None, a: float | None) -> float | None:
    if a is None or b is None or not a:
        return None
    return b / a


# --------------------------------------------------------------------------- summary


def error_stats(values: list[float | None]) -> dict:
    """Count, median of |error|, signed median and the worst (largest |error|, with its sign)."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return {"n": 0, "median_abs": None, "median": None, "worst": None}
    worst = max(vals, key=abs)
    return {"n": len(vals), "median_abs": statistics.median(abs(v) for v in vals),
            "median": statistics.median(vals), "worst": worst}


def summarize(measurements: list[Measurement], comps: list[Comparison]) -> dict:
    ran = [m for m in measurements if m.status in ("ok", "failed")]
    ok = [m for m in measurements if m.ok]
    bounds = [m for m in ok if m.meas_bound and m.pred_bound]
    decided = [c for c in comps if c.agree is not None]
    return {
        "runs": len(ran),
        "correct": sum(1 for m in ran if m.correct),
        "failed": sum(1 for m in measurements if m.status == "failed"),
        "errors": sum(1 for m in measurements if m.status == "error"),
        "skipped": sum(1 for m in measurements if m.status == "skipped"),
        "profiled": sum(1 for m in ok if m.profiled and m.meas_intensity is not None),
        "throughput": error_stats([m.err_gstencils for m in ok]),
        "flops": error_stats([m.err_flops for m in ok]),
        "bytes": error_stats([m.err_bytes for m in ok]),
        "intensity": error_stats([m.err_intensity for m in ok]),
        "bottleneck_agree": sum(1 for m in bounds if m.meas_bound == m.pred_bound),
        "bottleneck_n": len(bounds),
        "outcomes_agree": sum(1 for c in decided if c.agree),
        "outcomes_n": len(decided),
    }
